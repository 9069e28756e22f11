//! The libraries over the in-memory transport, one file each, and the list
//! the benchmarks and tests iterate over. A library is in the list when its
//! cargo feature is on.

/// The crypto floor of an implementation, as a library.
#[cfg(all(
    feature = "crypto-floor",
    any(feature = "rustls", aws_lc_rs_floor, openssl_crate, feature = "boring")
))]
pub mod crypto_floor;
#[cfg(any(feature = "openssl", feature = "boring"))]
pub mod openssl;
#[cfg(feature = "plaintext")]
pub mod plaintext;
#[cfg(all(feature = "rustls", not(rustls_0_21)))]
pub mod rustls;
/// rustls 0.21 (historical-perf): the same library through 0.21's API.
#[cfg(all(feature = "rustls", rustls_0_21))]
#[path = "rustls_0_21.rs"]
pub mod rustls;
/// The byte-moving loop every rustls era's stack shares.
#[cfg(feature = "rustls")]
mod rustls_drive;
#[cfg(feature = "s2n-tls")]
pub mod s2n;

use crate::harness::TlsLibrary;

/// Every TLS library built (one entry per rustls provider), in id order.
// One push per library feature: a build with one library pushes once.
#[allow(clippy::vec_init_then_push)]
pub fn tls_libraries() -> Vec<Box<dyn TlsLibrary>> {
    let mut libs: Vec<Box<dyn TlsLibrary>> = Vec::new();
    #[cfg(feature = "s2n-tls")]
    libs.push(Box::new(s2n::S2nTls));
    #[cfg(feature = "rustls")]
    for provider in crate::config::rustls::Provider::ALL {
        libs.push(Box::new(rustls::Rustls { provider }));
    }
    #[cfg(any(feature = "openssl", feature = "boring"))]
    libs.push(Box::new(openssl::OpenSsl));
    libs
}

/// s2n-tls under each security policy that negotiates exactly one of
/// `params` but is not the one the benchmarks choose for it
/// ([`s2n::policies_for`]): what choosing another policy costs. Empty
/// without the `s2n-tls` feature. Errors: probing failed (a broken chain).
#[cfg_attr(not(feature = "s2n-tls"), allow(unused_variables))]
pub fn s2n_policy_alternatives(
    params: &[crate::params::Params],
) -> Result<Vec<Box<dyn TlsLibrary>>, crate::error::ConfigureError> {
    #[allow(unused_mut)]
    let mut policies: Vec<&'static str> = Vec::new();
    #[cfg(feature = "s2n-tls")]
    for p in params {
        for policy in s2n::policies_for(p)?.into_iter().skip(1) {
            if !policies.contains(&policy) {
                policies.push(policy);
            }
        }
    }
    #[cfg(feature = "s2n-tls")]
    return Ok(policies
        .into_iter()
        .map(|policy| Box::new(s2n::S2nTlsPolicy { policy }) as Box<dyn TlsLibrary>)
        .collect());
    #[cfg(not(feature = "s2n-tls"))]
    Ok(Vec::new())
}

/// The crypto floors of this build's crypto implementations
/// ([`crypto_floor`], feature `crypto-floor`): aws-lc-rs (rustls's default
/// provider; s2n-tls's AWS-LC), with `rustls` or `s2n-tls` (build.rs's
/// `aws_lc_rs_floor`), and *ring* (rustls's other provider), with `rustls`
/// (neither in rustls's FIPS configuration); libcrypto through the
/// `openssl` crate, with `openssl`; BoringSSL through the `boring` crate,
/// with `boring`. Not in [`all`]: `compare` and the tests ask for them.
#[allow(clippy::vec_init_then_push, unused_mut)]
pub fn crypto_floors() -> Vec<Box<dyn TlsLibrary>> {
    let mut floors: Vec<Box<dyn TlsLibrary>> = Vec::new();
    // Not under the FIPS configuration (aws-lc-config/rustls.toml): not
    // checked there yet.
    #[cfg(all(aws_lc_rs_floor, not(tls_bench_rustls_fips)))]
    floors.push(Box::new(crypto_floor::CryptoFloor::<crate::floor::aws_lc_rs::AwsLcRs>::default()));
    #[cfg(all(feature = "crypto-floor", feature = "rustls", not(tls_bench_rustls_fips)))]
    floors.push(Box::new(crypto_floor::CryptoFloor::<crate::floor::ring::Ring>::default()));
    #[cfg(all(feature = "crypto-floor", openssl_crate))]
    floors.push(Box::new(crypto_floor::CryptoFloor::<crate::floor::ossl::Ossl>::default()));
    #[cfg(all(feature = "crypto-floor", feature = "boring"))]
    floors.push(Box::new(crypto_floor::CryptoFloor::<crate::floor::boringssl::BoringSsl>::default()));
    floors
}

/// The plaintext floor (feature `plaintext`), replaying the handshake of the first TLS library
/// (of [`tls_libraries`]) that supports the parameters.
#[cfg(feature = "plaintext")]
pub fn plaintext() -> plaintext::Plaintext {
    plaintext::Plaintext { references: tls_libraries() }
}

/// Every TLS library, then the plaintext floor if built: what the
/// benchmarks run.
pub fn all() -> Vec<Box<dyn TlsLibrary>> {
    #[allow(unused_mut)]
    let mut libs = tls_libraries();
    #[cfg(feature = "plaintext")]
    libs.push(Box::new(plaintext()));
    libs
}
