//! What the socket kinds ([`super::echo`], [`super::socket_handshake`])
//! share: a slice of load against a library's echo server on 127.0.0.1.
//! The socket runner sits above the harness and does the work (each
//! library's tokio adapter, every handshake and echoed byte checked): it
//! installs itself here ([`install`]) in the processes that run these kinds
//! (`compare --sockets`'s workers, the tests). Without it every socket case
//! is a named skip.

use std::sync::OnceLock;

use anyhow::{Result, bail};

use crate::{error::ConfigureError, params::Params};

/// The most resumptions a client of the socket runner makes in a row, each
/// from the ticket the one before received, before it starts a new chain
/// with a full handshake (counted as a full handshake, its request as a
/// request): 255, the longest chain a wolfSSL server allows (its TLS 1.3
/// ticket nonce, one byte carried from ticket to ticket, refuses to pass
/// 255). The in-memory harness renews at the server's own limit
/// ([`crate::harness::Configured::resumption_chain_limit`]), outside the
/// clock; over sockets a client cannot know the server, so every client
/// renews here whatever the server, and each does the same work: one full
/// handshake in 256 of a long resumption run.
pub const RESUMPTIONS_PER_CHAIN: u64 = 255;

/// One slice's load: `connections` clients, `requests` requests each.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Clients at once.
    pub connections: u32,
    /// Requests per client.
    pub requests: u64,
    /// Bytes per message, each way.
    pub message: u32,
    /// A new connection (and handshake) per request.
    pub new_connection: bool,
}

/// What a slice measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Done {
    /// Wall-clock seconds of `load`'s measured window.
    pub seconds: f64,
    /// Requests echoed back intact, all clients.
    pub requests: u64,
    /// Full handshakes checked, all clients (those before the window too).
    pub full: u64,
    /// Resumed handshakes checked, all clients.
    pub resumed: u64,
    /// Whether the connections spoke TLS (not plaintext TCP: the plaintext
    /// floor, or another runtime's plaintext server), so that `full` and
    /// `resumed` must hold every connection's handshake.
    pub tls: bool,
}

/// The socket runner as the socket kinds reach it.
pub trait Slices: Sync {
    /// Whether `library` (an in-memory library's name; the plaintext
    /// floor's is plaintext TCP) serves and connects with `params`. Errors:
    /// unsupported (a named skip) or failed.
    fn supports(&self, library: &str, params: &Params) -> Result<(), ConfigureError>;

    /// One slice of `load` against `library`'s server for `params`. Errors:
    /// the server cannot start, or any connection, handshake or message
    /// failed (kind and message).
    fn slice(&self, library: &str, params: Params, load: Load) -> Result<Done>;
}

static INSTALLED: OnceLock<&'static dyn Slices> = OnceLock::new();

/// Why a socket case cannot run in a process without the socket runner.
const WHY: &str = "no socket runner in this process (built without feature sockets)";

/// Makes `slices` the socket runner of this process's socket kinds; the
/// first call wins, later ones change nothing.
pub fn install(slices: &'static dyn Slices) {
    let _ = INSTALLED.set(slices);
}

/// [`Slices::supports`] of the installed runner. Errors: unsupported when
/// none is installed, naming why.
pub fn supports(library: &str, params: &Params) -> Result<(), ConfigureError> {
    match INSTALLED.get() {
        Some(runner) => runner.supports(library, params),
        None => Err(ConfigureError::Unsupported(WHY.into())),
    }
}

/// [`Slices::slice`] of the installed runner. Errors: as it, or none
/// installed.
pub fn slice(library: &str, params: Params, load: Load) -> Result<Done> {
    match INSTALLED.get() {
        Some(runner) => runner.slice(library, params, load),
        None => bail!(WHY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_runner_a_socket_case_is_a_named_skip() {
        // Nothing in the library's own tests installs the socket runner.
        match supports("openssl", &Params::default()) {
            Err(ConfigureError::Unsupported(why)) => assert!(why.contains("no socket runner"), "{why}"),
            other => panic!("{other:?}"),
        }
        let load = Load { connections: 1, requests: 1, message: 1, new_connection: false };
        assert!(
            slice("openssl", Params::default(), load).unwrap_err().to_string().contains("no socket runner")
        );
    }
}
