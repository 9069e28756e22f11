//! Mbed TLS (feature `mbedtls`, the `mbedtls` variant): the system's
//! libmbedtls 3.6 LTS, Debian 13's `libmbedtls-dev` (found by pkg-config;
//! on Debian 12 its four packages install beside the system's, as .ci/run
//! does), through bindings bindgen generates from its headers at build time
//! ([`sys`]). Debian's build is upstream's default configuration with
//! threading on: AES-NI and its assembly, TLS 1.3 and DTLS 1.2, PSA Crypto.
//! Debian 12's own 2.28 and the `mbedtls` crate (2.28) have no TLS 1.3; the
//! crates that vendor 3.6 build it for microcontrollers, without AES-NI or
//! assembly.
//!
//! Its configuration from parameters ([`config`]: a configuration per
//! side with the version, the suite and the groups, the credentials, the
//! server's ticket keys) and its stack over the in-memory transport through
//! its BIO callbacks ([`stack`]), with DTLS 1.2; its ALPN and server name
//! ([`extensions`], for the socket runner's bridge). Mbed TLS 3.6 has no
//! ML-KEM group, no DTLS 1.3 and no gather write: each is a named skip. It
//! reports neither the negotiated group nor resumption: the stack reads
//! both from the server's first flight ([`crate::wire::FlightScanner`]).

pub mod config;
pub mod extensions;
#[cfg(feature = "crypto-floor")]
pub mod floor;
pub mod stack;
pub mod sys;

use crate::{
    libs::{Entry, Offers, Sockets, TLS_12_13},
    params::Protocol,
};

/// Mbed TLS in the registry ([`crate::libs::registry`]), with the floor of
/// its crypto, libmbedcrypto (`floor.rs`), when built.
pub const ENTRY: Entry = Entry {
    name: "mbedtls",
    stacks: || vec![Box::new(stack::MbedTls)],
    floors,
    offers: Offers {
        tls: TLS_12_13,
        dtls: &[Protocol::Dtls12],
        vectored: false,
        sockets: Sockets::Bridge,
        variant: Some("mbedtls"),
        licence: "Apache-2.0 OR GPL-2.0-or-later",
    },
};

/// libmbedcrypto's floor, with the `crypto-floor` feature.
fn floors() -> Vec<Box<dyn crate::harness::TlsLibrary>> {
    #[cfg(feature = "crypto-floor")]
    return vec![Box::new(crate::floor::library::CryptoFloor::<floor::MbedCrypto>::default())];
    #[cfg(not(feature = "crypto-floor"))]
    Vec::new()
}
