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

//! The modules, in layers: a module uses only those listed before it
//! (`tests/layers.rs` checks it, and that this list names every module
//! once).
//!
//! - [`errors`]: how a connection failed, by kind ([`ErrorKind`]).
//! - [`process`]: signals, waits with a deadline and `/proc`, through nix,
//!   wait-timeout and procfs.
//! - [`interrupt`]: Ctrl-C and SIGTERM as a flag every loop reads.
//! - [`tcp`]: the TCP stream under a TLS connection, its orderly close.
//! - [`rss`]: a process's resident memory, from /proc.
//! - [`threads`]: the runtime's worker threads and their CPU time.
//! - [`library`]: what a library over sockets is ([`Library`], [`Server`],
//!   [`Client`], [`Stream`], [`Ticket`]) and the server's check.
//! - [`bridge`]: an in-memory stack over a socket, for the libraries
//!   without a tokio adapter.
//! - [`capacity`]: how many connections this machine holds, from memory.
//! - `plaintext`: plaintext TCP, the baseline.
//! - `s2n`: s2n-tls through s2n-tls-tokio.
//! - `rustls`: rustls through tokio-rustls.
//! - `openssl`: OpenSSL, AWS-LC or BoringSSL through tokio-openssl or
//!   tokio-boring.
//! - [`registry`]: every library of this build over sockets, and [`find`].
//! - [`serve`]: the echo server.
//! - [`https`]: the HTTPS server and client (hyper).
//! - [`child`]: a server in a child process, its readiness and its end.
//! - [`cli`]: what the binaries share on their command lines.
//! - `driver`: the load's connections over time, on tokio tasks.
//! - [`load`]: the echo load client.
//! - [`siege`]: the HTTPS load client.
//! - [`attack`]: misbehaving HTTPS clients.
//! - [`nginx`]: nginx as a child server.
//! - [`external`]: the other runtimes' servers as children.
//! - [`runtimes`]: the other runtimes' toolchains and builds.
//! - [`cases`]: the socket cases compare runs.
//! - [`https_compare`]: HTTPS servers compared, interleaved.
//! - [`interop`]: every client against every server.
//! - [`scaling`]: handshakes per second by connections.
//! - [`soak`]: every HTTPS server under load for a long time.

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

pub mod errors;

pub mod process;

pub mod interrupt;

pub mod tcp;

pub mod rss;

pub mod threads;

pub mod library;

pub mod bridge;

pub mod capacity;

mod plaintext;

#[cfg(feature = "s2n-tls")]
mod s2n;

#[cfg(feature = "rustls")]
mod rustls;

#[cfg(any(feature = "openssl", feature = "boring"))]
mod openssl;

pub mod registry;

pub mod serve;

pub mod https;

pub mod child;

pub mod cli;

mod driver;

pub mod load;

pub mod siege;

pub mod attack;

pub mod nginx;

pub mod external;

pub mod runtimes;

pub mod cases;

pub mod https_compare;

pub mod interop;

pub mod scaling;

pub mod soak;

pub use errors::{ErrorKind, Failure};
#[cfg(any(feature = "s2n-tls", feature = "openssl", feature = "boring"))]
pub(crate) use library::identity_base;
#[cfg(feature = "rustls")]
pub(crate) use library::io_failed;
pub use library::{
    Client, Extensions, Handshaking, Library, PLAINTEXT, RESUMPTIONS_PER_CHAIN, Server, Stream, Ticket,
    check_server,
};
pub use registry::{bridged_twins, find, libraries, no_adapter};
