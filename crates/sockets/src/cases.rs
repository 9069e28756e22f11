//! The socket kinds' runner (`echo`, `socket-handshake`: [`tls_bench_harness::workload::over_sockets`]):
//! a library's echo server on 127.0.0.1, started on first use and kept for
//! the later slices of its library and parameters, and one `load` run
//! against it per slice, every handshake and echoed byte checked.
//!
//! The servers of other runtimes ([`crate::runtimes`]) join as rows of
//! their own ([`runtime_rows`]): each is the runtime's echo server
//! (`--echo`, a child process) loaded by one of this build's libraries,
//! whose client reads back and checks all five negotiated parameters of
//! every connection, as for the other rows.

use std::{
    cell::RefCell,
    collections::HashMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Mutex,
    time::Duration,
};

use anyhow::{Context, Result, bail};

use crate::{
    Extensions, Library,
    child::{self, ChildOptions, ChildServer},
    load::{self, LoadOptions},
    serve::{self, Running, ServeOptions},
};
use tls_bench_harness::{
    error::ConfigureError,
    harness::{Configured, TlsLibrary},
    params::Params,
    workload::over_sockets::{Done, Load, Slices},
};

/// A row served by another runtime's echo server.
#[derive(Clone, Debug)]
struct Remote {
    /// The runtime's server.
    exe: PathBuf,
    /// The client library loading it, an in-memory library's name
    /// (`plaintext` for a plaintext server); `None`: for each parameter
    /// set the build's first TLS library whose client runs it
    /// ([`client_of`]).
    client: Option<String>,
}

/// The rows of other runtimes' servers, by row name ([`runtime_rows`]).
static REMOTES: Mutex<Vec<(String, Remote)>> = Mutex::new(Vec::new());

/// The runtime's server of the row `name`, if it is one.
fn remote(name: &str) -> Option<Remote> {
    let remotes = REMOTES.lock().unwrap_or_else(|e| e.into_inner());
    remotes.iter().find(|(n, _)| n == name).map(|(_, r)| r.clone())
}

/// Whether the row `name` is another runtime's plaintext server (Erlang's
/// `gen_tcp`), registered by [`runtime_rows`].
pub fn plaintext_row(name: &str) -> bool {
    remote(name).is_some_and(|r| r.client.as_deref() == Some("plaintext"))
}

/// The client library that loads `remote` for `params`: its own, or the
/// build's first TLS library whose client runs `params`. Errors:
/// unsupported when none does (a named skip).
fn client_of(remote: &Remote, params: &Params) -> Result<String, ConfigureError> {
    if let Some(client) = &remote.client {
        return Ok(client.clone());
    }
    crate::libraries()
        .into_iter()
        .find(|l| !l.plaintext() && l.client(params, &Extensions::NONE).is_ok())
        .map(|l| l.name())
        .ok_or_else(|| ConfigureError::Unsupported(format!("no client library of this build runs {params}")))
}

/// A row of another runtime's server as the harness sees it: its name is
/// the server's library (`go-crypto-tls-1.26.8`), and its in-memory side
/// is its client library's for the parameters ([`client_of`]; the socket
/// kinds configure it to check that the client does the parameters, and
/// time only the sockets). Only the socket kinds run it: [`runtime_rows`]
/// gives it to `compare --sockets`'s worker alone.
struct RuntimeRow {
    name: String,
    /// The runtime, for the settings column.
    runtime: String,
    remote: Remote,
}

impl TlsLibrary for RuntimeRow {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The client library's configuration (see [`RuntimeRow`]). Errors: as
    /// its, or no client library runs `params` (unsupported).
    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let client = client_of(&self.remote, params)?;
        let Some(lib) = tls_bench_harness::libs::all().into_iter().find(|l| l.name() == client) else {
            return Err(anyhow::anyhow!("{client}: no in-memory library of that name in this build").into());
        };
        lib.configure(params)
    }

    fn settings(&self, params: &Params) -> Option<String> {
        let client = client_of(&self.remote, params).ok()?;
        Some(format!("{} echo server (child process), loaded by {client}", self.runtime))
    }
}

/// The rows of the servers of the runtimes `names` selects
/// ([`crate::runtimes::servers`]: built first, under `target/runtimes/`),
/// each TLS server loaded by the client library `client`
/// ([`crate::cli::client_library`]; `None`: per parameter set, the build's
/// first TLS library whose client runs it) and each plaintext one
/// (Erlang's `gen_tcp`) by plaintext TCP; registered in this process for
/// [`Runner`]. Errors: as [`crate::runtimes::servers`] and
/// [`crate::cli::client_library`].
pub fn runtime_rows(names: &[String], client: Option<&str>) -> Result<Vec<Box<dyn TlsLibrary>>> {
    let builds = crate::runtimes::servers(names)?;
    let client = client.map(|c| crate::cli::client_library(Some(c)).map(|l| l.name())).transpose()?;
    let mut rows: Vec<Box<dyn TlsLibrary>> = Vec::new();
    let mut remotes = REMOTES.lock().unwrap_or_else(|e| e.into_inner());
    for build in builds {
        let tls = build.libraries.iter().map(|l| (l, client.clone()));
        for (name, by) in tls.chain(build.plaintext.iter().map(|l| (l, Some("plaintext".to_string())))) {
            let remote = Remote { exe: build.exe.clone(), client: by };
            remotes.push((name.clone(), remote.clone()));
            rows.push(Box::new(RuntimeRow { name: name.clone(), runtime: build.variant.clone(), remote }));
        }
    }
    Ok(rows)
}

/// A row of the bridge beside a native adapter (`openssl-3.6.3+bridge`):
/// its in-memory side is the library's own, which the socket kinds
/// configure to check it does the parameters; over sockets its server and
/// clients are [`crate::bridge`]'s.
struct BridgeRow {
    name: String,
}

impl TlsLibrary for BridgeRow {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The library's own configuration. Errors: as its.
    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let base = self.name.strip_suffix(crate::bridge::SUFFIX).unwrap_or(&self.name);
        let Some(lib) = tls_bench_harness::libs::tls_libraries().into_iter().find(|l| l.name() == base)
        else {
            return Err(anyhow::anyhow!("{base}: no in-memory library of that name in this build").into());
        };
        lib.configure(params)
    }

    fn settings(&self, _params: &Params) -> Option<String> {
        Some("the bridge: its in-memory connections over tokio, beside its native adapter".to_string())
    }
}

/// The bridge's rows ([`BridgeRow`]) of this build: one per library with a
/// native adapter whose stack the bridge can drive
/// ([`TlsLibrary::configure_threaded`] at the default parameters), for
/// `compare --sockets --bridge`.
pub fn bridge_rows() -> Vec<Box<dyn TlsLibrary>> {
    let drivable = |name: &str| {
        tls_bench_harness::libs::tls_libraries()
            .iter()
            .any(|l| l.name() == name && l.configure_threaded(&Params::default(), &Extensions::NONE).is_ok())
    };
    crate::bridged_twins()
        .into_iter()
        .map(|b| b.name())
        .filter(|n| drivable(n.strip_suffix(crate::bridge::SUFFIX).unwrap_or(n)))
        .map(|name| Box::new(BridgeRow { name }) as Box<dyn TlsLibrary>)
        .collect()
}

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

/// Whether the row `library` serves and connects with `params`: one of
/// this build's socket libraries, client and server, or a runtime's
/// server (`--probe`) and its client library. Errors: unsupported (a named
/// skip) or failed.
fn supports(library: &str, params: &Params) -> Result<(), ConfigureError> {
    if let Some(remote) = remote(library) {
        child::probe(&remote.exe, library, params)?;
        self::library(&client_of(&remote, params)?)?.client(params, &Extensions::NONE)?;
        return Ok(());
    }
    let socket = self::library(library)?;
    socket.server(params, &Extensions::NONE)?;
    socket.client(params, &Extensions::NONE)?;
    Ok(())
}

/// A row's server: this build's, in this process, or a runtime's child.
enum Server {
    Ours(Box<Running>),
    Child(ChildServer),
}

thread_local! {
    /// The servers started so far, by row and parameters.
    static SERVERS: RefCell<HashMap<(String, Params), Server>> = RefCell::new(HashMap::new());
    /// The servers found down by a slice, which said so in its error:
    /// [`stop_servers`] does not fail on them again.
    static REPORTED_DOWN: RefCell<std::collections::HashSet<(String, Params)>> = RefCell::default();
}

/// Threads of each server and of the clients' runtime: the cores.
fn threads() -> usize {
    crate::cli::cores()
}

/// Starts the server of row `library` for `params`. Errors: it cannot.
fn start(library: &str, params: Params) -> Result<Server> {
    let Some(remote) = remote(library) else {
        let lib = self::library(library).map_err(|e| anyhow::anyhow!("{e}"))?;
        let options = ServeOptions {
            params,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            threads: threads(),
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            cores: Vec::new(),
        };
        return Ok(Server::Ours(Box::new(serve::start(&*lib, &options)?)));
    };
    let json = summary_path(&remote.exe, library, &params);
    let options = ChildOptions {
        threads: threads(),
        cores: Vec::new(),
        body: 0,
        echo: true,
        max_connections: 10_000,
        timeouts: None,
        json,
    };
    Ok(Server::Child(ChildServer::start(&remote.exe, library, &params, &options)?))
}

/// Where a runtime's echo server writes its summary: beside its build,
/// named by row, parameters and this process (two runs at once do not
/// share one).
fn summary_path(exe: &Path, library: &str, params: &Params) -> PathBuf {
    let name = format!("echo-{library}-{params}-{}.summary.json", std::process::id());
    exe.with_file_name("summaries").join(name.replace(['/', ','], "_"))
}

/// How long a runtime's server is loaded after its start, before its
/// first slice: a JIT (the JVM's, V8's) compiles the hot paths over the
/// first thousands of requests, and the seeds measured servers long warm
/// (80,000 requests a client).
const WARM_UP: Duration = Duration::from_secs(2);

/// One slice: `load` against the server of row `library` for `params`
/// (started on first use; another runtime's then loaded for [`WARM_UP`]
/// first, with the slice's shape, unmeasured). Errors: the server cannot
/// start, or any connection, handshake or message failed (kind and
/// message).
fn slice(library: &str, params: Params, load: Load) -> Result<Done> {
    let remote = remote(library);
    let client = match &remote {
        Some(remote) => client_of(remote, &params).map_err(|e| anyhow::anyhow!("{e}"))?,
        None => library.to_string(),
    };
    let lib = self::library(&client).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (addr, started) = SERVERS.with(|servers| -> Result<(SocketAddr, bool)> {
        let mut servers = servers.borrow_mut();
        let key = (library.to_string(), params);
        let started = !servers.contains_key(&key);
        if started {
            servers.insert(key.clone(), start(library, params)?);
        }
        let addr = match servers.get_mut(&key) {
            Some(Server::Ours(running)) => running.addr(),
            Some(Server::Child(child)) => {
                if let Some(why) = child.down() {
                    REPORTED_DOWN.with(|r| r.borrow_mut().insert(key.clone()));
                    bail!("the server {library} failed: {why}");
                }
                child.addr()
            }
            None => bail!("no server for {library} {params}"),
        };
        Ok((addr, started))
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
    // A load that failed because the server went down says so (its exit
    // status and last stderr lines), not only what the client saw.
    let server_down = |e: anyhow::Error| match down(library, &params) {
        Some(why) => {
            REPORTED_DOWN.with(|r| r.borrow_mut().insert((library.to_string(), params)));
            e.context(format!("the server {library} failed: {why}"))
        }
        None => e,
    };
    if started && remote.is_some() {
        let warm_up = LoadOptions { requests: None, duration: Some(WARM_UP), ..options.clone() };
        load::run(&*lib, &warm_up).and_then(checked).context("warming up").map_err(server_down)?;
    }
    let report = load::run(&*lib, &options).and_then(checked).map_err(server_down)?;
    Ok(Done {
        seconds: report.seconds,
        requests: report.requests,
        full: report.handshakes_full,
        resumed: report.handshakes_resumed,
        tls: !lib.plaintext(),
    })
}

/// Why the child server of row `library` for `params` no longer serves,
/// if it is one and does not ([`ChildServer::down`]).
fn down(library: &str, params: &Params) -> Option<String> {
    SERVERS.with(|servers| match servers.borrow_mut().get_mut(&(library.to_string(), *params)) {
        Some(Server::Child(child)) => child.down(),
        _ => None,
    })
}

/// `report` if no connection, handshake or message failed. Errors: the
/// failures (count and the first).
fn checked(report: load::Report) -> Result<load::Report> {
    if let Some(first) = report.error_examples.first() {
        let failed: u64 = report.errors.values().sum();
        bail!("{failed} failures over sockets, the first: {first}");
    }
    Ok(report)
}

/// Stops the runtimes' servers this thread started, reads their summaries
/// and removes the files (this build's servers stop with the process); a
/// server a slice found down (its error said so) is only killed. Errors:
/// another did not stop well, or counted a failure its client did not see
/// (its message).
pub fn stop_servers() -> Result<()> {
    let servers: Vec<_> = SERVERS.with(|s| s.borrow_mut().drain().collect());
    let reported = REPORTED_DOWN.with(|r| std::mem::take(&mut *r.borrow_mut()));
    for ((library, params), server) in servers {
        // A server a slice found down: its cases failed with the reason
        // (compare's rows say FAILED); killed as it is dropped.
        if reported.contains(&(library.clone(), params)) {
            continue;
        }
        if let Server::Child(child) = server {
            let summary = child.stop().with_context(|| format!("{library} {params}"))?;
            if let Some(remote) = remote(&library) {
                let json = summary_path(&remote.exe, &library, &params);
                std::fs::remove_file(&json).with_context(|| format!("removing {}", json.display()))?;
            }
            if let Some(first) = summary.error_examples.first() {
                let failed: u64 = summary.errors.values().sum();
                bail!("{library} {params}: the server counted {failed} failures, the first: {first}");
            }
            if summary.bytes_received != summary.bytes_sent {
                bail!(
                    "{library} {params}: the server read {} bytes and echoed {}",
                    summary.bytes_received,
                    summary.bytes_sent
                );
            }
        }
    }
    Ok(())
}

impl Slices for Runner {
    fn supports(&self, library: &str, params: &Params) -> Result<(), ConfigureError> {
        supports(library, params)
    }

    fn slice(&self, library: &str, params: Params, load: Load) -> Result<Done> {
        slice(library, params, load)
    }
}
