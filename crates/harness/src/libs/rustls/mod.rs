//! rustls (feature `rustls`), with its aws-lc-rs and *ring* providers: its
//! configuration from parameters ([`config`]; for rustls 0.22 the
//! negotiated values read back through counting wrappers, [`observe`]),
//! its stack over the in-memory transport ([`stack`], one byte-moving loop
//! for every era), its ALPN and SNI ([`extensions`]), and its *ring*
//! provider's crypto floor ([`ring`]; the aws-lc-rs one is shared with
//! s2n-tls, [`crate::floor::aws_lc_rs`]). rustls 0.20 and 0.21
//! (historical-perf, cfg `rustls_0_21`) have their own config and stack
//! modules (`config_0_21.rs`, `stack_0_21.rs`), and *ring* 0.16 its compat
//! module (`ring_0_16.rs`).

#[cfg(not(rustls_0_21))]
pub mod config;
/// rustls 0.21 (historical-perf): the same items through 0.21's API.
#[cfg(rustls_0_21)]
#[path = "config_0_21.rs"]
pub mod config;
/// The byte-moving loop every rustls era's stack shares.
mod drive;
#[cfg(feature = "extensions")]
pub mod extensions;
#[cfg(rustls_0_22)]
pub mod observe;
#[cfg(feature = "crypto-floor")]
pub mod ring;
#[cfg(all(feature = "crypto-floor", ring_0_16))]
mod ring_0_16;
#[cfg(not(rustls_0_21))]
pub mod stack;
/// rustls 0.21 (historical-perf): the same library through 0.21's API.
#[cfg(rustls_0_21)]
#[path = "stack_0_21.rs"]
pub mod stack;

use crate::{
    harness::TlsLibrary,
    libs::{Entry, Offers, Sockets, TLS_12_13},
};

/// rustls in the registry ([`crate::libs::registry`]): one stack per
/// crypto provider.
pub const ENTRY: Entry = Entry {
    name: "rustls",
    stacks: || {
        config::Provider::ALL.into_iter().map(|provider| Box::new(stack::Rustls { provider }) as _).collect()
    },
    floors,
    offers: Offers {
        tls: TLS_12_13,
        dtls: &[],
        vectored: true,
        sockets: Sockets::Adapter,
        variant: None,
        licence: "Apache-2.0 OR ISC OR MIT",
    },
};

/// The floors of its providers, aws-lc-rs (from 0.22) and *ring*; neither
/// under its FIPS configuration (aws-lc-config/rustls.toml), not checked
/// there yet.
#[allow(clippy::vec_init_then_push, unused_mut)]
fn floors() -> Vec<Box<dyn TlsLibrary>> {
    let mut floors: Vec<Box<dyn TlsLibrary>> = Vec::new();
    #[cfg(all(aws_lc_rs_floor, not(tls_bench_rustls_fips)))]
    floors.push(Box::new(crate::floor::library::CryptoFloor::<crate::floor::aws_lc_rs::AwsLcRs>::default()));
    #[cfg(all(feature = "crypto-floor", not(tls_bench_rustls_fips)))]
    floors.push(Box::new(crate::floor::library::CryptoFloor::<ring::Ring>::default()));
    floors
}
