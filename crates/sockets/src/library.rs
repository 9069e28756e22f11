//! What every library over sockets is: a [`Library`] giving a [`Server`]
//! and a [`Client`] for a parameter set, whose handshakes return a
//! [`Stream`]; the resumption [`Ticket`]; the server-side check of what was
//! negotiated; the helpers the adapters share.

use std::{any::Any, future::Future, pin::Pin, sync::Arc};

use anyhow::Result;
use tls_bench_harness::{
    error::ConfigureError,
    harness::Negotiated,
    params::{HandshakeKind, Params},
};
pub use tls_bench_harness::{extensions::Extensions, workload::over_sockets::RESUMPTIONS_PER_CHAIN};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};

/// The session a client keeps to resume its next connection: the library's
/// own object (an `SslSession`, s2n-tls's serialised ticket, a rustls
/// client config holding the ticket in its store). Only the library that
/// made it reads it.
pub struct Ticket(pub Box<dyn Any + Send + Sync>);

/// A connection after its handshake: bytes move through tokio's traits.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {
    /// What the handshake negotiated, read back as the in-memory stacks do
    /// ([`tls_bench_harness::libs`]); `None` for plaintext TCP. Unlike an in-memory
    /// client, a socket client reports client authentication too
    /// (`client_authenticated`: the server sent a CertificateRequest and the
    /// client answered with its certificate, RFC 8446 section 4.4.2), so a
    /// run labelled mTLS against a server that never asked fails its check.
    /// Errors: the read-back failed (an unknown suite or group).
    fn negotiated(&self) -> Result<Option<Negotiated>>;

    /// The ALPN protocol the handshake chose ([`Extensions::alpn`]);
    /// `None`: none (no offer, nothing in common, or plaintext TCP).
    fn alpn(&self) -> Option<&[u8]>;

    /// The session to resume the next connection with, once this client
    /// connection has read a response (which carries the server's TLS 1.3
    /// NewSessionTicket past the handshake). Errors: no ticket received.
    fn ticket(&mut self) -> Result<Ticket>;

    /// The TCP stream under a TLS connection ([`crate::tcp::Tcp`]), where a client
    /// waits for the server's FIN after its close_notify; `None` for
    /// plaintext TCP.
    fn tcp(&mut self) -> Option<&mut crate::tcp::Tcp> {
        None
    }

    /// Whether the library reads the peer's close_notify after sending its
    /// own. s2n-tls does not in TLS 1.2 (no half-close there, RFC 5246
    /// section 7.2.1: `s2n_shutdown_send` leaves the connection unreadable
    /// unless the peer's close_notify was read before); a client's close
    /// then reads the peer's alert record on TCP ([`crate::tcp::Tcp::until_alert_then_fin`]).
    fn reads_after_close_notify(&self) -> bool {
        true
    }
}

/// A handshake under way: the stream when both sides are done.
pub type Handshaking<'a> = Pin<Box<dyn Future<Output = Result<Box<dyn Stream>>> + Send + 'a>>;

/// A library's server side for one parameter set.
pub trait Server: Send + Sync {
    /// Makes the server connection object for an accepted TCP stream and
    /// runs its handshake. Errors: the library's (handshake failed, the
    /// peer closed, an I/O error).
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_>;
}

/// A library's client side for one parameter set.
pub trait Client: Send + Sync {
    /// Makes the client connection object on a connected TCP stream,
    /// resuming `ticket` if given, and runs its handshake. Errors: the
    /// library's.
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_>;
}

/// One library over sockets.
pub trait Library: Send + Sync {
    /// Its id, the same as the in-memory stack's (e.g.
    /// `rustls-0.23.46+aws-lc-rs`), or `plaintext-tcp`.
    fn name(&self) -> String;

    /// The server of `params`, accepting `extensions`. Errors:
    /// [`ConfigureError::Unsupported`] for a combination the library cannot
    /// do (a named skip), [`ConfigureError::Failed`] otherwise.
    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError>;

    /// The client of `params`, offering `extensions` (errors as
    /// [`Library::server`]).
    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError>;

    /// Whether it is plaintext TCP (no handshake, nothing negotiated).
    fn plaintext(&self) -> bool {
        false
    }
}

/// The name of the plaintext TCP baseline.
pub const PLAINTEXT: &str = "plaintext-tcp";

/// Checks what a server connection negotiated against `params`. The server
/// cannot know whether a client meant to resume: under
/// [`HandshakeKind::Resumption`] a full handshake (a client's first, which
/// fetches its ticket) is checked as server authentication. Returns whether
/// the handshake resumed. Errors: a value that differs from `params`.
pub fn check_server(negotiated: &Negotiated, params: &Params) -> Result<bool> {
    let mut wanted = *params;
    if params.kind == HandshakeKind::Resumption && !negotiated.resumed {
        wanted.kind = HandshakeKind::ServerAuth;
    }
    negotiated.check(&wanted)?;
    Ok(negotiated.resumed)
}

/// The parameter set a client's configuration starts from: `params`, less
/// its own client identity when [`Extensions::client_identity`] replaces
/// it under mTLS (the library then presents only the other one).
#[cfg_attr(not(any(feature = "s2n-tls", feature = "openssl", feature = "boring")), allow(dead_code))]
pub(crate) fn identity_base(params: &Params, extensions: &Extensions) -> Params {
    match (extensions.client_identity, params.kind) {
        (Some(_), HandshakeKind::MutualAuth) => Params { kind: HandshakeKind::ServerAuth, ..*params },
        _ => *params,
    }
}

/// An I/O error as a result (tokio-rustls's handshakes return
/// `std::io::Error`).
#[cfg(feature = "rustls")]
pub(crate) fn io_failed<T>(what: &str, r: std::io::Result<T>) -> Result<T> {
    r.map_err(|e| anyhow::Error::new(e).context(what.to_string()))
}
