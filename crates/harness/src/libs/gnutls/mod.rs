//! GnuTLS (feature `gnutls`): the system's libgnutls (Debian's
//! `libgnutls28-dev`, 3.7.x, found by pkg-config) through bindings
//! generated from its headers ([`sys`], `scripts/gnutls-bindings.sh`; the
//! `gnutls` crate on crates.io binds 3.4-era calls and is unmaintained).
//! Its configuration from parameters ([`config`]: a priority string per
//! parameter set, the credentials, the ticket key) and its stack over the
//! in-memory transport through its push and pull functions ([`stack`]),
//! its ALPN and server name ([`extensions`], for the socket runner's
//! bridge),
//! with DTLS 1.2 and its cork as the gather write, and the floor of its
//! crypto ([`floor`], with `crypto-floor`). GnuTLS 3.7 has no ML-KEM group
//! and no DTLS 1.3: both are named skips.

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

/// GnuTLS in the registry ([`crate::libs::registry`]), with the floor of
/// its crypto, nettle and GnuTLS's crypto API (`floor.rs`), when built.
pub const ENTRY: Entry = Entry {
    name: "gnutls",
    stacks: || vec![Box::new(stack::GnuTls)],
    floors,
    offers: Offers {
        tls: TLS_12_13,
        dtls: &[Protocol::Dtls12],
        vectored: true,
        sockets: Sockets::Bridge,
        variant: Some("gnutls"),
        licence: "LGPL-2.1-or-later",
    },
};

/// GnuTLS's crypto floor, with the `crypto-floor` feature.
fn floors() -> Vec<Box<dyn crate::harness::TlsLibrary>> {
    #[cfg(feature = "crypto-floor")]
    return vec![Box::new(crate::floor::library::CryptoFloor::<floor::GnuTlsCrypto>::default())];
    #[cfg(not(feature = "crypto-floor"))]
    Vec::new()
}
