//! s2n-tls 0.0.8 (historical-perf builds only): its `s2n_tls::raw` API under
//! the module, type and method names of 0.0.9 and later, so that one s2n-tls
//! config and stack serve every release. What 0.0.8 differs in:
//! - modules under `s2n_tls::raw`;
//! - `negotiate`, `send`, `recv`, `flush`, `shutdown` for the later `poll_*`
//!   ([`PollNames`]);
//! - security policies only as the constants `DEFAULT` and `DEFAULT_TLS13`
//!   ([`security::Policy::from_version`]);
//! - `Builder::set_verify_host_handler` for `set_verify_host_callback`
//!   ([`BuilderNames`]);
//! - no `Connection::client_cert_used`: read from s2n-tls's handshake type
//!   name ([`PollNames::client_cert_used`]).
//!
//! Source: the s2n-tls 0.0.8 crate's `raw` module and s2n-tls C 1.3.16's
//! `s2n_handshake_io.c` (handshake type names).

use std::task::Poll;

pub use s2n_tls::raw::{config, connection, enums, error};
use s2n_tls::raw::{config::VerifyClientCertificateHandler, connection::Connection, error::Error};

/// Callback traits under their later names.
pub mod callbacks {
    /// 0.0.8's name for the host-name check of a peer's certificate.
    pub use s2n_tls::raw::config::VerifyClientCertificateHandler as VerifyHostNameCallback;
}

/// Security policies by name.
pub mod security {
    use s2n_tls::raw::{error::Error, security};

    /// Looks policies up by name, as `Policy::from_version` does in later
    /// releases.
    pub struct Policy;

    impl Policy {
        /// The policy named `name`: 0.0.8 offers only `default` and
        /// `default_tls13`. Errors: `Error::InvalidInput` for any other name.
        pub fn from_version(name: &str) -> Result<security::Policy, Error> {
            match name {
                "default" => Ok(security::DEFAULT),
                "default_tls13" => Ok(security::DEFAULT_TLS13),
                _ => Err(Error::InvalidInput),
            }
        }
    }
}

/// `Connection` methods under their later names.
pub trait PollNames {
    /// `negotiate`: drives the handshake.
    fn poll_negotiate(&mut self) -> Poll<Result<&mut Self, Error>>;
    /// `send`: bytes accepted, possibly fewer than `buf`.
    fn poll_send(&mut self, buf: &[u8]) -> Poll<Result<usize, Error>>;
    /// `recv`: bytes read into `buf`; 0 at the end of the stream.
    fn poll_recv(&mut self, buf: &mut [u8]) -> Poll<Result<usize, Error>>;
    /// `flush`: writes buffered records.
    fn poll_flush(&mut self) -> Poll<Result<&mut Self, Error>>;
    /// `shutdown`: sends close_notify, then waits for the peer's.
    fn poll_shutdown(&mut self) -> Poll<Result<&mut Self, Error>>;
    /// Whether the peer sent a certificate: s2n-tls's handshake type has
    /// `CLIENT_AUTH` (a certificate was requested) without `NO_CLIENT_CERT`
    /// (the client sent an empty one). False if the type cannot be read.
    fn client_cert_used(&self) -> bool;
}

impl PollNames for Connection {
    fn poll_negotiate(&mut self) -> Poll<Result<&mut Self, Error>> {
        self.negotiate()
    }
    fn poll_send(&mut self, buf: &[u8]) -> Poll<Result<usize, Error>> {
        self.send(buf)
    }
    fn poll_recv(&mut self, buf: &mut [u8]) -> Poll<Result<usize, Error>> {
        self.recv(buf)
    }
    fn poll_flush(&mut self) -> Poll<Result<&mut Self, Error>> {
        self.flush()
    }
    fn poll_shutdown(&mut self) -> Poll<Result<&mut Self, Error>> {
        self.shutdown()
    }
    fn client_cert_used(&self) -> bool {
        self.handshake_type().is_ok_and(|t| t.contains("CLIENT_AUTH") && !t.contains("NO_CLIENT_CERT"))
    }
}

/// `Builder` methods under their later names.
pub trait BuilderNames {
    /// `set_verify_host_handler`: the host-name check of the peer's
    /// certificate.
    fn set_verify_host_callback<T: 'static + VerifyClientCertificateHandler>(
        &mut self,
        handler: T,
    ) -> Result<&mut Self, Error>;
}

impl BuilderNames for config::Builder {
    fn set_verify_host_callback<T: 'static + VerifyClientCertificateHandler>(
        &mut self,
        handler: T,
    ) -> Result<&mut Self, Error> {
        self.set_verify_host_handler(handler)
    }
}
