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
use crate::{
    harness::TlsLibrary,
    libs::{Entry, Offers, Sockets, TLS_12_13},
    params::Protocol,
};

/// The OpenSSL family in the registry ([`crate::libs::registry`]); not
/// registered when the `openssl` crate is built only for another library's
/// floor (feature `openssl-floor`).
#[cfg(any(feature = "openssl", feature = "boring"))]
pub const ENTRY: Entry = Entry {
    name: "openssl",
    stacks: || vec![Box::new(stack::OpenSsl)],
    floors,
    offers: Offers {
        tls: TLS_12_13,
        dtls: DTLS,
        // No SSL_writev: SslStream::write_vectored writes the first buffer only.
        vectored: false,
        sockets: Sockets::Adapter,
        variant: VARIANT,
        licence: LICENCE,
    },
};

/// BoringSSL has DTLS 1.3; OpenSSL (to 3.6) and AWS-LC DTLS 1.2 only.
#[cfg(feature = "boring")]
const DTLS: &[Protocol] = &[Protocol::Dtls12, Protocol::Dtls13];
#[cfg(all(feature = "openssl", not(feature = "boring")))]
const DTLS: &[Protocol] = &[Protocol::Dtls12];
/// BoringSSL's variant; OpenSSL's own build is the default one (vendored)
/// or `system-openssl`, AWS-LC's the AWS-LC backends' (`openssl-aws-lc`).
/// (Without `openssl` or `boring`, the `openssl` crate is only another
/// library's floor: no entry, none of these.)
#[cfg(feature = "boring")]
const VARIANT: Option<&str> = Some("boringssl");
#[cfg(all(feature = "openssl", not(feature = "boring"), tls_bench_openssl_aws_lc))]
const VARIANT: Option<&str> = Some("openssl-aws-lc");
#[cfg(all(
    feature = "openssl",
    not(feature = "boring"),
    not(tls_bench_openssl_aws_lc),
    feature = "openssl-vendored"
))]
const VARIANT: Option<&str> = None;
#[cfg(all(
    feature = "openssl",
    not(feature = "boring"),
    not(tls_bench_openssl_aws_lc),
    not(feature = "openssl-vendored")
))]
const VARIANT: Option<&str> = Some("system-openssl");
/// OpenSSL 3 and BoringSSL (relicensed in 2024): Apache-2.0; AWS-LC:
/// its LICENSE's mix of ISC and Apache-2.0.
#[cfg(all(any(feature = "openssl", feature = "boring"), not(tls_bench_openssl_aws_lc)))]
const LICENCE: &str = "Apache-2.0";
#[cfg(all(feature = "openssl", tls_bench_openssl_aws_lc))]
const LICENCE: &str = "Apache-2.0 AND ISC";

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
