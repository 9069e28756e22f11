//! The per-library configuration layer: turns [`Params`](crate::params::Params)
//! into each library's own configuration objects (rustls `ClientConfig` /
//! `ServerConfig`, OpenSSL `SslContext`, s2n-tls `Config`), the settings of
//! each new connection, and the read-back of what it negotiated. It works
//! on the libraries' own connection objects, not on the in-memory
//! transport, so a socket-based runner (tokio-rustls, tokio-openssl,
//! s2n-tls-tokio) builds, sets up and checks connections the same way. One
//! exception: s2n-tls's security policy for a parameter set is found by
//! untimed trial handshakes over the in-memory duplex
//! ([`s2n_policy`], with the callbacks of [`s2n_io`]), computed once per
//! process and cached, so every runner gets the same policy without
//! touching the in-memory stack.

/// ALPN and the server name for the runners with an application protocol
/// (the socket runner's HTTPS): not part of any in-memory benchmark.
#[cfg(feature = "sockets")]
pub mod extensions;
#[cfg(any(openssl_crate, feature = "boring"))]
pub mod openssl;
#[cfg(any(feature = "openssl", feature = "boring"))]
pub mod openssl_conn;
#[cfg(all(feature = "rustls", not(rustls_0_21)))]
pub mod rustls;
/// rustls 0.21 (historical-perf): the same items through 0.21's API.
#[cfg(all(feature = "rustls", rustls_0_21))]
#[path = "rustls_0_21.rs"]
pub mod rustls;
#[cfg(all(feature = "rustls", rustls_0_22))]
pub mod rustls_observe;
#[cfg(feature = "s2n-tls")]
pub mod s2n;
#[cfg(feature = "s2n-tls")]
pub mod s2n_io;
#[cfg(feature = "s2n-tls")]
pub mod s2n_policy;
/// The s2n-tls API the s2n-tls modules are written against: the crate
/// itself, or for s2n-tls 0.0.8 (historical-perf) its `s2n_tls::raw` API
/// under the later names.
#[cfg(all(feature = "s2n-tls", not(s2n_raw_api)))]
pub(crate) use s2n_tls as s2n_api;
#[cfg(all(feature = "s2n-tls", s2n_raw_api))]
#[path = "s2n_raw.rs"]
pub(crate) mod s2n_api;
