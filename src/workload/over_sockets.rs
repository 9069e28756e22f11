//! What the socket kinds ([`super::echo`], [`super::socket_handshake`])
//! share: a library's echo server on 127.0.0.1, started on first use and
//! kept for the later slices of its library and parameters, and one
//! `load` run against it per slice ([`crate::sockets`]: each library's
//! tokio adapter, every handshake and echoed byte checked). A build without
//! the socket runner (feature `sockets`) makes every socket case a named
//! skip.

use crate::params::Params;

/// One slice's load: `connections` clients, `requests` requests each.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "sockets"), allow(dead_code))] // read by the socket runner only
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
}

pub use run::{slice, supports};

/// A build without the socket runner: every socket case a named skip.
#[cfg(not(feature = "sockets"))]
mod run {
    use anyhow::{Result, bail};

    use super::{Done, Load, Params};
    use crate::error::ConfigureError;

    const WHY: &str = "built without the socket runner (feature sockets)";

    /// Always unsupported, naming the feature.
    pub fn supports(_library: &str, _params: &Params) -> Result<(), ConfigureError> {
        Err(ConfigureError::Unsupported(WHY.into()))
    }

    /// Always an error, naming the feature.
    pub fn slice(_library: &str, _params: Params, _load: Load) -> Result<Done> {
        bail!(WHY)
    }
}

/// The socket runner's side.
#[cfg(feature = "sockets")]
mod run {
    use std::{cell::RefCell, collections::HashMap, net::SocketAddr, time::Duration};

    use anyhow::{Result, bail};

    use super::{Done, Load, Params};
    use crate::{
        error::ConfigureError,
        sockets::{
            self, Extensions, Library,
            load::{self, LoadOptions},
            serve::{self, Running, ServeOptions},
        },
    };

    /// The socket library of an in-memory library's name (the plaintext
    /// floor's is plaintext TCP). Errors: none of that name, as
    /// [`ConfigureError::Failed`].
    fn library(name: &str) -> Result<Box<dyn Library>, ConfigureError> {
        let name = if name == "plaintext" { sockets::PLAINTEXT } else { name };
        Ok(sockets::find(name)?)
    }

    /// Whether the socket library named `library` serves and connects with
    /// `params`. Errors: unsupported (a named skip) or failed.
    pub fn supports(library: &str, params: &Params) -> Result<(), ConfigureError> {
        let socket = self::library(library)?;
        socket.server(params, &Extensions::NONE)?;
        socket.client(params, &Extensions::NONE)?;
        Ok(())
    }

    thread_local! {
        /// The servers started so far, by library and parameters.
        static SERVERS: RefCell<HashMap<(String, Params), Running>> = RefCell::new(HashMap::new());
    }

    /// Threads of each server and of the clients' runtime: the cores.
    fn threads() -> usize {
        sockets::cli::cores()
    }

    /// One slice: `load` against `library`'s server for `params` (started
    /// on first use). Errors: the server cannot start, or any connection,
    /// handshake or message failed (kind and message).
    pub fn slice(library: &str, params: Params, load: Load) -> Result<Done> {
        let lib = self::library(library).map_err(|e| anyhow::anyhow!("{e}"))?;
        let addr = SERVERS.with(|servers| -> Result<SocketAddr> {
            let mut servers = servers.borrow_mut();
            let key = (library.to_string(), params);
            if !servers.contains_key(&key) {
                let options = ServeOptions {
                    params,
                    listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                    threads: threads(),
                    handshake_timeout: Duration::from_secs(10),
                    idle_timeout: Duration::from_secs(60),
                    max_connections: 10_000,
                    cores: Vec::new(),
                };
                servers.insert(key.clone(), serve::start(&*lib, &options)?);
            }
            Ok(servers[&key].addr())
        })?;
        let options = LoadOptions {
            params,
            connect: addr,
            connections: load.connections as usize,
            requests: Some(load.requests),
            duration: None,
            message: load.message as usize,
            new_connection: load.new_connection,
            rate: None,
            threads: threads(),
            cores: Vec::new(),
            timeout: Duration::from_secs(10),
            progress: false,
        };
        let report = load::run(&*lib, &options)?;
        if let Some(first) = report.error_examples.first() {
            let failed: u64 = report.errors.values().sum();
            bail!("{failed} failures over sockets, the first: {first}");
        }
        Ok(Done {
            seconds: report.seconds,
            requests: report.requests,
            full: report.handshakes_full,
            resumed: report.handshakes_resumed,
        })
    }
}
