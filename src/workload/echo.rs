//! The socket echo ([`Echo`]): `connections` clients on kept TCP
//! connections, each sending messages of `message` bytes to the library's
//! echo server on 127.0.0.1 and reading them back, through the socket
//! runner ([`crate::sockets`]: each library's tokio adapter, every echoed
//! byte checked). One iteration is one message on every connection; the
//! time is the wall time of the measured window (all clients connected,
//! their handshakes before it). The server for a library and parameter set
//! starts on first use and serves every later slice.
//!
//! Only `compare --sockets` runs it (no Criterion bench): its slices
//! interleave with the other libraries' as every comparison's do.

use std::time::Duration;

use anyhow::Result;

use super::{Both, Kind, Run};
use crate::{
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    params::Params,
    runner::Measured,
    transport::Side,
};

/// The socket echo: clients at once and bytes per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Echo {
    /// Clients at once, each on one kept connection.
    pub connections: u32,
    /// Bytes per message, each way.
    pub message: u32,
}

impl Kind for Echo {
    fn groups(&self) -> [&'static str; 3] {
        ["echo", "echo-client", "echo-server"]
    }

    fn both(&self) -> Both {
        Both::Wall
    }

    fn first_side(&self) -> Side {
        Side::Client
    }

    /// Only [`super::Figure::Both`]: the two ends share the machine's
    /// cores, and their times are not apart.
    fn figures(&self, _sides: bool) -> &'static [super::Figure] {
        &[super::Figure::Both]
    }

    /// A message on every connection, counted once (the same bytes come
    /// back): MB/s is each way's.
    fn bytes_per_iteration(&self) -> Option<u64> {
        Some(u64::from(self.connections) * u64::from(self.message))
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{params},{}conns,{}B", self.connections, self.message)
    }

    /// No Criterion bench runs it (`compare --sockets` does).
    fn bench_target(&self, _params: &Params) -> &'static str {
        "compare --sockets"
    }

    fn in_memory(&self) -> bool {
        false
    }

    /// The library's own, but for the plaintext floor, which is plaintext
    /// TCP here (no handshake to replay).
    fn settings(&self, lib: &dyn TlsLibrary, params: &Params) -> Option<String> {
        if lib.name() == "plaintext" { Some("TCP without TLS".into()) } else { lib.settings(params) }
    }

    /// The in-memory configuration (the same support), then the socket
    /// library's server and client: a combination either cannot do is a
    /// named skip. Errors: [`ConfigureError::Unsupported`] also in a build
    /// without the socket runner (feature `sockets`).
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        let handshaker = Handshaker::new(lib, lib, *params)?;
        sockets_run::supports(&lib.name(), params)?;
        Ok(handshaker)
    }

    /// Not calling `each`: the window is timed as a whole.
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        sockets_run::slice(self, run.library, *run.handshaker.params(), iters)
    }
}

/// A build without the socket runner: every echo case a named skip.
#[cfg(not(feature = "sockets"))]
mod sockets_run {
    use anyhow::{Result, bail};

    use super::Echo;
    use crate::{error::ConfigureError, params::Params, runner::Measured};

    const WHY: &str = "built without the socket runner (feature sockets)";

    pub fn supports(_library: &str, _params: &Params) -> Result<(), ConfigureError> {
        Err(ConfigureError::Unsupported(WHY.into()))
    }

    pub fn slice(_echo: &Echo, _library: &str, _params: Params, _iters: u64) -> Result<Measured> {
        bail!(WHY)
    }
}

/// The socket runner's side of the kind.
#[cfg(feature = "sockets")]
mod sockets_run {
    use std::{cell::RefCell, collections::HashMap, time::Duration};

    use anyhow::{Result, bail};

    use super::Echo;
    use crate::{
        error::ConfigureError,
        params::Params,
        runner::Measured,
        sockets::{
            self, Library,
            load::{self, LoadOptions},
            serve::{self, Running, ServeOptions},
        },
    };

    /// The socket library of an in-memory library's name (the plaintext
    /// floor's is plaintext TCP). Errors: none of that name, as
    /// [`ConfigureError::Failed`].
    pub fn library(name: &str) -> Result<Box<dyn Library>, ConfigureError> {
        let name = if name == "plaintext" { sockets::PLAINTEXT } else { name };
        Ok(sockets::find(name)?)
    }

    /// Whether the socket library named `library` serves and connects with
    /// `params`. Errors: unsupported (a named skip) or failed.
    pub fn supports(library: &str, params: &Params) -> Result<(), ConfigureError> {
        let socket = self::library(library)?;
        socket.server(params)?;
        socket.client(params)?;
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

    /// One slice: `iters` messages on each of the kind's connections to
    /// `library`'s server (started on first use). Errors: the server cannot
    /// start, or any connection or message failed (kind and message).
    pub fn slice(echo: &Echo, library: &str, params: Params, iters: u64) -> Result<Measured> {
        let lib = library_or_fail(library)?;
        let addr = SERVERS.with(|servers| -> Result<_> {
            let mut servers = servers.borrow_mut();
            let key = (library.to_string(), params);
            if !servers.contains_key(&key) {
                let options = ServeOptions {
                    params,
                    listen: "127.0.0.1:0".parse().expect("an address"),
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
            connections: echo.connections as usize,
            requests: Some(iters),
            duration: None,
            message: echo.message as usize,
            new_connection: false,
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
        Ok(Measured { iters, both: Duration::from_secs_f64(report.seconds), ..Measured::default() })
    }

    fn library_or_fail(name: &str) -> Result<Box<dyn Library>> {
        library(name).map_err(|e| anyhow::anyhow!("{e}"))
    }
}
