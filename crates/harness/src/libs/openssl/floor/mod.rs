//! The crypto floors of the OpenSSL family ([`crate::floor::Backend`]):
//! libcrypto through the `openssl` crate ([`ossl`]: OpenSSL 3, with
//! [`ossl3`]; 1.1.1, with [`ossl111`]; AWS-LC under the crate) and
//! BoringSSL's through the `boring` crate ([`boringssl`]), with the calls
//! they share.

/// Named apart from the `boring` crate it calls.
#[cfg(feature = "boring")]
pub mod boringssl;
#[cfg(all(openssl_crate, not(openssl_awslc)))]
pub mod cipher_ctx;
#[cfg(any(feature = "boring", openssl_awslc, all(openssl_crate, not(ossl300))))]
pub mod ec_key;
#[cfg(any(feature = "boring", openssl_awslc))]
pub mod evp_aead;
#[cfg(any(openssl_crate, feature = "boring"))]
pub mod hmac_ctx;
#[cfg(openssl_crate)]
pub mod ossl;
#[cfg(all(openssl_crate, not(openssl_awslc), not(ossl300)))]
pub mod ossl111;
#[cfg(all(openssl_crate, not(openssl_awslc), ossl300))]
pub mod ossl3;
