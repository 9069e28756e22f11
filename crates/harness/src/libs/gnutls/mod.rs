//! GnuTLS (feature `gnutls`): the system's libgnutls (Debian's
//! `libgnutls28-dev`, 3.7.x, found by pkg-config) through bindings
//! generated from its headers ([`sys`], `scripts/gnutls-bindings.sh`; the
//! `gnutls` crate on crates.io binds 3.4-era calls and is unmaintained).
//! Its configuration from parameters ([`config`]: a priority string per
//! parameter set, the credentials, the ticket key) and its stack over the
//! in-memory transport through its push and pull functions ([`stack`]),
//! its ALPN and server name ([`extensions`], for the socket runner's
//! bridge),
//! with DTLS 1.2 and its cork as the gather write. GnuTLS 3.7 has no
//! ML-KEM group and no DTLS 1.3: both are named skips.

pub mod config;
pub mod extensions;
pub mod stack;
pub mod sys;

use crate::libs::Entry;

/// GnuTLS in the registry ([`crate::libs::registry`]). Its crypto (nettle)
/// has no floor here yet.
pub const ENTRY: Entry = Entry { name: "gnutls", stacks: || vec![Box::new(stack::GnuTls)], floors: Vec::new };
