//! The socket runner: each library as servers use it, through its own
//! tokio adapter (tokio-rustls, tokio-openssl, s2n-tls-tokio, tokio-boring),
//! over real TCP sockets: an echo server ([`serve`]) and a load client
//! ([`load`]), an HTTPS server ([`https`]) and a siege-style client
//! ([`siege`]), with plaintext TCP as the baseline.
//!
//! Configurations, per-connection settings and the read-back of what was
//! negotiated come from the same layer as the in-memory stacks'
//! ([`tls_bench_harness::libs`]): a suite or group forced there is forced here, and
//! every connection is checked the same way ([`Negotiated::check`]).
//!
//! Each library is a [`Library`] (one small module each) giving a
//! [`Server`] and a [`Client`] for a parameter set; their handshakes return
//! a [`Stream`], which moves bytes (tokio's `AsyncRead`/`AsyncWrite`) and
//! says what it negotiated.

use std::{any::Any, future::Future, pin::Pin, sync::Arc};

use anyhow::{Result, bail};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};

use tls_bench_harness::{
    bench::library_family,
    error::ConfigureError,
    harness::Negotiated,
    params::{HandshakeKind, Params},
};

/// tokio's `AsyncRead` and `AsyncWrite` for a wrapper `$t`, forwarded to
/// its adapter stream `self.$field`; with `map_err F`, each call's error
/// through `F` (an `io::Error` to an `io::Error`).
macro_rules! forward_io {
    ($t:ty, map_err $map:path, $($field:tt)+) => {
        impl tokio::io::AsyncRead for $t {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.$($field)+).poll_read(cx, buf).map_err($map)
            }
        }
        impl tokio::io::AsyncWrite for $t {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.$($field)+).poll_write(cx, buf).map_err($map)
            }
            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.$($field)+).poll_flush(cx).map_err($map)
            }
            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.$($field)+).poll_shutdown(cx).map_err($map)
            }
        }
    };
    ($t:ty, $($field:tt)+) => {
        forward_io!($t, map_err std::convert::identity, $($field)+);
    };
}

pub mod attack;
pub mod bridge;
pub mod capacity;
pub mod cases;
pub mod child;
pub mod cli;
mod driver;
pub mod errors;
pub mod external;
pub mod https;
pub mod https_compare;
pub mod interop;
pub mod interrupt;
pub mod load;
pub mod nginx;
#[cfg(any(feature = "openssl", feature = "boring"))]
mod openssl;
mod plaintext;
pub mod rss;
pub mod runtimes;
#[cfg(feature = "rustls")]
mod rustls;
#[cfg(feature = "s2n-tls")]
mod s2n;
pub mod scaling;
pub mod serve;
pub mod siege;
pub mod soak;
pub mod tcp;
pub mod threads;

pub use errors::{ErrorKind, Failure};

/// The session a client keeps to resume its next connection: the library's
/// own object (an `SslSession`, s2n-tls's serialised ticket, a rustls
/// client config holding the ticket in its store). Only the library that
/// made it reads it.
pub struct Ticket(pub Box<dyn Any + Send + Sync>);

pub use tls_bench_harness::workload::over_sockets::RESUMPTIONS_PER_CHAIN;

pub use tls_bench_harness::extensions::Extensions;

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

    /// The TCP stream under a TLS connection ([`tcp::Tcp`]), where a client
    /// waits for the server's FIN after its close_notify; `None` for
    /// plaintext TCP.
    fn tcp(&mut self) -> Option<&mut tcp::Tcp> {
        None
    }

    /// Whether the library reads the peer's close_notify after sending its
    /// own. s2n-tls does not in TLS 1.2 (no half-close there, RFC 5246
    /// section 7.2.1: `s2n_shutdown_send` leaves the connection unreadable
    /// unless the peer's close_notify was read before); a client's close
    /// then reads the peer's alert record on TCP ([`tcp::Tcp::until_alert_then_fin`]).
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

/// Every library of this build over sockets, in the registry's order
/// ([`tls_bench_harness::libs::registry`]), then plaintext TCP.
pub fn libraries() -> Vec<Box<dyn Library>> {
    let mut libs: Vec<Box<dyn Library>> =
        tls_bench_harness::libs::registry().iter().flat_map(|e| adapters(e.name)).collect();
    libs.push(Box::new(plaintext::Plaintext));
    libs
}

/// The adapters of the registry's library `name` ([`tls_bench_harness::libs::Entry::name`]):
/// its native ones ([`native`]), else the [`bridge`] over each of its
/// stacks (whose configurations say whether it can drive them:
/// [`tls_bench_harness::harness::TlsLibrary::configure_threaded`]).
fn adapters(name: &str) -> Vec<Box<dyn Library>> {
    native(name).unwrap_or_else(|| bridged(name, false))
}

/// The native tokio adapters of the registry's library `name`: one line
/// per library with an adapter file here; `None` for the others.
fn native(name: &str) -> Option<Vec<Box<dyn Library>>> {
    match name {
        #[cfg(feature = "s2n-tls")]
        "s2n" => Some(vec![Box::new(s2n::S2n)]),
        #[cfg(feature = "rustls")]
        "rustls" => Some(
            tls_bench_harness::libs::rustls::config::Provider::ALL
                .into_iter()
                .map(|provider| Box::new(rustls::Rustls { provider }) as _)
                .collect(),
        ),
        #[cfg(any(feature = "openssl", feature = "boring"))]
        "openssl" => Some(vec![Box::new(openssl::OpenSsl)]),
        _ => None,
    }
}

/// The [`bridge`] over each stack of the registry's library `name`, its
/// name suffixed ([`bridge::SUFFIX`]) when `suffixed`.
fn bridged(name: &str, suffixed: bool) -> Vec<Box<dyn Library>> {
    let entries = tls_bench_harness::libs::registry();
    let stacks = entries.iter().filter(|e| e.name == name).flat_map(|e| (e.stacks)());
    stacks.map(|s| Box::new(bridge::Bridge { name: s.name(), suffixed }) as Box<dyn Library>).collect()
}

/// The [`bridge`] over the stacks of the libraries with a native adapter,
/// named `<library>+bridge`: what the bridge costs beside the native
/// adapter (`serve --library openssl+bridge`, `compare --sockets
/// --bridge`). Not in [`libraries`]; [`find`] finds them.
pub fn bridged_twins() -> Vec<Box<dyn Library>> {
    let entries = tls_bench_harness::libs::registry();
    entries.iter().filter(|e| native(e.name).is_some()).flat_map(|e| bridged(e.name, true)).collect()
}

/// Why the in-memory library `name` has no socket counterpart, if it is
/// one of this build ([`tls_bench_harness::libs::tls_libraries`]) without an adapter
/// ([`adapters`]): the reason of a named skip. `None` for a name no
/// library of the build has, or one with an adapter.
pub fn no_adapter(name: &str) -> Option<String> {
    let built = tls_bench_harness::libs::tls_libraries().iter().any(|l| l.name() == name);
    let adapted = libraries().iter().any(|l| l.name() == name);
    (built && !adapted).then(|| format!("{name} has no socket adapter (src/sockets/)"))
}

/// The library `selector` names: its whole id, the name before the version
/// (`rustls`, which must then be the only one), or that name with the
/// backend (`rustls+ring`); with [`bridge::SUFFIX`], the bridge over a
/// library with a native adapter (`openssl+bridge`, [`bridged_twins`]).
/// Errors: no library or several match; the message lists the valid names.
pub fn find(selector: &str) -> Result<Box<dyn Library>> {
    let mut libs = libraries();
    if selector.ends_with(bridge::SUFFIX) {
        libs.extend(bridged_twins());
    }
    let names: Vec<String> = libs.iter().map(|l| l.name()).collect();
    let matches = |name: &str| {
        let family = library_family(name);
        selector == name
            || selector == family
            || family.split_once('+').is_some_and(|(bare, _)| selector == bare)
    };
    let found: Vec<usize> = (0..libs.len()).filter(|&i| matches(&names[i])).collect();
    let valid =
        || names.iter().map(|n| format!("{} ({n})", library_family(n))).collect::<Vec<_>>().join(", ");
    match found[..] {
        [i] => Ok(libs.into_iter().nth(i).expect("index in range")),
        [] => bail!("unknown library {selector:?}; this build has: {}", valid()),
        _ => bail!("library {selector:?} names several of this build; pick one of: {}", valid()),
    }
}

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
fn identity_base(params: &Params, extensions: &Extensions) -> Params {
    match (extensions.client_identity, params.kind) {
        (Some(_), HandshakeKind::MutualAuth) => Params { kind: HandshakeKind::ServerAuth, ..*params },
        _ => *params,
    }
}

/// An I/O error as a result (tokio-rustls's handshakes return
/// `std::io::Error`).
#[cfg(feature = "rustls")]
fn io_failed<T>(what: &str, r: std::io::Result<T>) -> Result<T> {
    r.map_err(|e| anyhow::Error::new(e).context(what.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_library_of_the_registry_has_its_adapter_here() {
        for lib in tls_bench_harness::libs::tls_libraries() {
            assert_eq!(no_adapter(&lib.name()), None);
            assert!(find(&lib.name()).is_ok(), "{}", lib.name());
        }
        assert_eq!(no_adapter("nosuch-1.0"), None, "not a library of the build: no adapter to miss");
    }
}
