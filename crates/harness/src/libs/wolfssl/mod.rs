//! wolfSSL (feature `wolfssl`, the opt-in `wolfssl` variant: wolfSSL is
//! GPL-3.0-or-later): the `wolfssl-sys` crate, which builds the wolfSSL it vendors
//! (5.9.4) with its x86-64 assembly and AES-NI, ML-KEM and DTLS 1.3, here
//! with ALPN and the OpenSSL compatibility layer (`opensslall`, which
//! turns on session tickets and the peer certificate's getter, as
//! wolfSSL's own nginx and HAProxy builds do). Debian's `libwolfssl-dev`
//! (5.5.4) is built without AES-NI, so its AES-GCM would not be the speed
//! of a deployed wolfSSL.
//!
//! Its configuration from parameters ([`config`]: a context per side with
//! a fixed-version method, the cipher list and groups, the credentials),
//! its stack over the in-memory transport through its I/O callbacks
//! ([`stack`]), and its ALPN and server name ([`extensions`], for the socket
//! runner's bridge), and wolfCrypt's crypto floor (`floor.rs`, with the
//! `crypto-floor` feature). DTLS 1.2 is a named skip: wolfSSL's DTLS server always
//! answers a first ClientHello with a HelloVerifyRequest, a round trip the
//! other libraries' DTLS rows do not make; DTLS 1.3 runs without its
//! cookie (`wolfSSL_disable_hrr_cookie`), as they do.

pub mod config;
pub mod extensions;
/// wolfCrypt's crypto floor (feature `crypto-floor`).
#[cfg(feature = "crypto-floor")]
pub mod floor;
pub mod stack;

use crate::{
    libs::{Entry, Offers, Sockets, TLS_12_13},
    params::Protocol,
};

/// wolfSSL in the registry ([`crate::libs::registry`]), with the floor
/// of its crypto, wolfCrypt (`floor.rs`), when built.
pub const ENTRY: Entry = Entry {
    name: "wolfssl",
    stacks: || vec![Box::new(stack::WolfSsl)],
    floors,
    offers: Offers {
        tls: TLS_12_13,
        // Its DTLS 1.2 server always sends a HelloVerifyRequest, which the
        // others' handshakes do not have: a named skip (stack.rs).
        dtls: &[Protocol::Dtls13],
        vectored: true,
        sockets: Sockets::Bridge,
        variant: Some("wolfssl"),
        // wolfSSL 5.9's LICENSING (wolfssl-sys's vendored source).
        licence: "GPL-3.0-or-later",
    },
};

/// wolfCrypt's floor, with the `crypto-floor` feature.
fn floors() -> Vec<Box<dyn crate::harness::TlsLibrary>> {
    #[cfg(feature = "crypto-floor")]
    return vec![Box::new(crate::floor::library::CryptoFloor::<floor::WolfCrypt>::default())];
    #[cfg(not(feature = "crypto-floor"))]
    Vec::new()
}
