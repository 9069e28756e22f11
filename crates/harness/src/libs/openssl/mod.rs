//! The OpenSSL family: OpenSSL through the `openssl` crate (feature
//! `openssl`, vendored or the system's; AWS-LC under the crate with
//! aws-lc-config/openssl.toml), and BoringSSL through the `boring` crate
//! (feature `boring`), one code path over their shared API: the
//! configuration from parameters ([`config`], whose aliases name either
//! crate; [`conn`], each new connection), the stack over the in-memory
//! transport ([`stack`]), ALPN and SNI ([`extensions`]), and each one's
//! crypto floor ([`floor`]). Also built alone (feature `openssl-floor`) for
//! the crypto floor of s2n-tls 0.0.x on the system's libcrypto.

pub mod config;
#[cfg(any(feature = "openssl", feature = "boring"))]
pub mod conn;
#[cfg(all(feature = "extensions", any(feature = "openssl", feature = "boring")))]
pub mod extensions;
#[cfg(feature = "crypto-floor")]
pub mod floor;
#[cfg(any(feature = "openssl", feature = "boring"))]
pub mod stack;

#[cfg(any(feature = "openssl", feature = "boring"))]
use crate::{harness::TlsLibrary, libs::Entry};

/// The OpenSSL family in the registry ([`crate::libs::registry`]); not
/// registered when the `openssl` crate is built only for another library's
/// floor (feature `openssl-floor`).
#[cfg(any(feature = "openssl", feature = "boring"))]
pub const ENTRY: Entry = Entry { name: "openssl", stacks: || vec![Box::new(stack::OpenSsl)], floors };

/// Its libcrypto's floor: through the `openssl` crate (OpenSSL, or AWS-LC
/// under it), or BoringSSL's through the `boring` crate.
#[cfg(any(feature = "openssl", feature = "boring"))]
#[allow(clippy::vec_init_then_push, unused_mut)]
fn floors() -> Vec<Box<dyn TlsLibrary>> {
    let mut floors: Vec<Box<dyn TlsLibrary>> = Vec::new();
    #[cfg(all(feature = "crypto-floor", openssl_crate))]
    floors.push(Box::new(crate::floor::library::CryptoFloor::<floor::ossl::Ossl>::default()));
    #[cfg(all(feature = "crypto-floor", feature = "boring"))]
    floors.push(Box::new(crate::floor::library::CryptoFloor::<floor::boringssl::BoringSsl>::default()));
    floors
}
