//! s2n-tls (feature `s2n-tls`): its configuration from parameters
//! ([`config`]; the security policy found by trial handshakes,
//! [`policy`], over the callbacks of [`io`]), its stack over the in-memory
//! transport ([`stack`], with the gather write), its ALPN and SNI
//! ([`extensions`]), and the API it is written against ([`api`]: the crate
//! itself, or for s2n-tls 0.0.8 its `s2n_tls::raw` API under the later
//! names, `raw.rs`). Its crypto floor is aws-lc-rs on its AWS-LC
//! ([`crate::floor::aws_lc_rs`]), or for 0.0.x the system's libcrypto
//! through the `openssl` crate ([`crate::libs::openssl::floor`]).

pub mod config;
#[cfg(feature = "extensions")]
pub mod extensions;
pub mod io;
pub mod policy;
pub mod stack;

/// The s2n-tls API the modules above are written against.
#[cfg(not(s2n_raw_api))]
pub(crate) use s2n_tls as api;
#[cfg(s2n_raw_api)]
#[path = "raw.rs"]
pub(crate) mod api;

use crate::{
    harness::TlsLibrary,
    libs::{Entry, Offers, Sockets, TLS_12_13},
};

/// s2n-tls in the registry ([`crate::libs::registry`]).
pub const ENTRY: Entry = Entry {
    name: "s2n",
    stacks: || vec![Box::new(stack::S2nTls)],
    floors,
    offers: Offers {
        tls: TLS_12_13,
        dtls: &[],
        vectored: true,
        sockets: Sockets::Adapter,
        variant: None,
        licence: "Apache-2.0",
    },
};

/// The floor of the libcrypto it links: AWS-LC through aws-lc-rs (from
/// 0.1), or the system's libcrypto through the `openssl` crate (0.0.x,
/// feature `openssl-floor`).
#[allow(clippy::vec_init_then_push, unused_mut)]
fn floors() -> Vec<Box<dyn TlsLibrary>> {
    let mut floors: Vec<Box<dyn TlsLibrary>> = Vec::new();
    // Not under the FIPS configuration (aws-lc-config/rustls.toml): not
    // checked there yet.
    #[cfg(all(aws_lc_rs_floor, not(tls_bench_rustls_fips)))]
    floors.push(Box::new(crate::floor::library::CryptoFloor::<crate::floor::aws_lc_rs::AwsLcRs>::default()));
    #[cfg(all(feature = "crypto-floor", s2n_system_libcrypto, openssl_crate))]
    floors.push(Box::new(
        crate::floor::library::CryptoFloor::<crate::libs::openssl::floor::ossl::Ossl>::default(),
    ));
    floors
}
