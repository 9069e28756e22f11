//! The socket kinds' runner (`echo`, `socket-handshake`: [`tls_bench_harness::workload::over_sockets`]):
//! a library's echo server on 127.0.0.1, started on first use and kept for
//! the later slices of its library and parameters, and one `load` run
//! against it per slice, every handshake and echoed byte checked.

use std::{cell::RefCell, collections::HashMap, net::SocketAddr, time::Duration};

use anyhow::{Result, bail};

use crate::{
    Extensions, Library,
    load::{self, LoadOptions},
    serve::{self, Running, ServeOptions},
};
use tls_bench_harness::{
    error::ConfigureError,
    params::Params,
    workload::over_sockets::{Done, Load, Slices},
};

/// The socket library of an in-memory library's name (the plaintext
/// floor's is plaintext TCP). Errors: a library of the build without a
/// socket adapter, as [`ConfigureError::Unsupported`] (a named skip); none
/// of that name, as [`ConfigureError::Failed`].
fn library(name: &str) -> Result<Box<dyn Library>, ConfigureError> {
    if let Some(why) = crate::no_adapter(name) {
        return Err(ConfigureError::Unsupported(why));
    }
    let name = if name == "plaintext" { crate::PLAINTEXT } else { name };
    Ok(crate::find(name)?)
}

/// The socket kinds' runner ([`Slices`]): this module's servers and `load`.
pub struct Runner;

/// Installs [`Runner`] as this process's runner of the socket kinds
/// ([`tls_bench_harness::workload::over_sockets::install`]): `compare --sockets`'s
/// workers and the tests call it before running a socket case.
pub fn install() {
    tls_bench_harness::workload::over_sockets::install(&Runner);
}

/// Whether the socket library named `library` serves and connects with
/// `params`. Errors: unsupported (a named skip) or failed.
fn supports(library: &str, params: &Params) -> Result<(), ConfigureError> {
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
    crate::cli::cores()
}

/// One slice: `load` against `library`'s server for `params` (started
/// on first use). Errors: the server cannot start, or any connection,
/// handshake or message failed (kind and message).
fn slice(library: &str, params: Params, load: Load) -> Result<Done> {
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

impl Slices for Runner {
    fn supports(&self, library: &str, params: &Params) -> Result<(), ConfigureError> {
        supports(library, params)
    }

    fn slice(&self, library: &str, params: Params, load: Load) -> Result<Done> {
        slice(library, params, load)
    }
}
