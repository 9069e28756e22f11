//! The worker: one process per build variant, holding that build's
//! libraries configured for every selected case, timing slices on request.
//! It speaks JSON lines on stdin/stdout ([`Request`], [`Reply`]); the
//! parent ([`WorkerHandle`]) sends one request at a time, so no two slices
//! ever run at once.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
};

use anyhow::{Context, Result, bail};
use regex::Regex;
use serde::{Deserialize, Serialize};
use tls_bench_harness::{
    bench::{Case, Figure, Matrix, Workload, cases_of},
    harness::TlsLibrary,
    libs,
    params::Params,
    runner::{Prepared, Runner, prepare},
    select,
};

use crate::model::{CaseInfo, Slice};

/// What the worker prints first: every case the filter and the library
/// selection select, with its skip reason when the library cannot run it.
#[derive(Serialize, Deserialize)]
pub struct Hello {
    /// The cases.
    pub cases: Vec<CaseInfo>,
    /// Every library of the worker's build (crypto floors included),
    /// selected or not: what `--libraries` may name.
    #[serde(default)]
    pub libraries: Vec<String>,
}

/// The error [`WorkerHandle::run`] returns when the worker ran the case and
/// it failed (its message): the worker goes on, and so can the run. Any
/// other error of `run` is the worker's own (it died, or said nothing
/// readable).
#[derive(Debug)]
pub struct CaseFailed(pub String);

impl std::fmt::Display for CaseFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaseFailed {}

/// The error [`WorkerHandle::run`] returns when the worker process died
/// (its exit status or signal): the case it ran fails, and the handle
/// starts another process for the next request.
#[derive(Debug)]
pub struct WorkerDied(pub String);

impl std::fmt::Display for WorkerDied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkerDied {}

/// Whether `e` is a case's own failure ([`CaseFailed`], [`WorkerDied`]),
/// after which the run goes on without the case, not a failure of the run.
pub fn fails_the_case(e: &anyhow::Error) -> bool {
    e.downcast_ref::<CaseFailed>().is_some() || e.downcast_ref::<WorkerDied>().is_some()
}

/// A request: time `iters` iterations of case `id`.
#[derive(Serialize, Deserialize)]
pub struct Request {
    /// The case id.
    pub id: String,
    /// Iterations.
    pub iters: u64,
}

/// The answer to a [`Request`].
#[derive(Serialize, Deserialize)]
pub enum Reply {
    /// The slice (its `round` is set by the parent).
    Ok(Slice),
    /// The iteration failed: the error chain.
    Err(String),
}

/// Options the parent passes to every worker.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The matrix.
    pub matrix: Matrix,
    /// The id filter.
    pub filter: Option<String>,
    /// Add s2n-tls under the alternative security policies.
    pub s2n_policies: bool,
    /// The DTLS benchmarks instead of the matrix's handshakes and
    /// throughput ([`WorkerOptions::workloads`]).
    pub dtls: bool,
    /// The socket workloads instead ([`tls_bench_harness::bench::socket_workloads`]).
    pub sockets: bool,
    /// With `sockets`, the other runtimes whose echo servers join the rows
    /// (names from `tls_bench_sockets::runtimes`), in the default
    /// variant's worker only: its client library loads them.
    pub runtimes: Vec<String>,
    /// The client library loading the runtimes' servers (`None`: the
    /// build's first TLS library).
    pub client: Option<String>,
    /// With `sockets`, the bridge's rows beside the native adapters
    /// (`tls_bench_sockets::cases::bridge_rows`).
    pub bridge: bool,
    /// `--libraries`' selectors (a library's name or family): only their
    /// cases and their crypto floors' are configured, so a library left
    /// out is never set up (empty: every library).
    pub libraries: Vec<String>,
}

impl WorkerOptions {
    /// The worker's command-line arguments.
    pub fn args(&self, variant: &str) -> Vec<String> {
        let matrix = Matrix::ALL.iter().find(|(_, m)| *m == self.matrix).map_or("sweep", |(n, _)| n);
        let mut args =
            vec!["worker".into(), "--variant".into(), variant.into(), "--matrix".into(), matrix.into()];
        if let Some(f) = &self.filter {
            args.extend(["--filter".into(), f.clone()]);
        }
        if self.s2n_policies {
            args.push("--s2n-policies".into());
        }
        if self.dtls {
            args.push("--dtls".into());
        }
        if self.sockets {
            args.push("--sockets".into());
        }
        if self.bridge {
            args.push("--bridge".into());
        }
        if !self.libraries.is_empty() {
            args.extend(["--libraries".into(), self.libraries.join(",")]);
        }
        if variant == "default" && !self.runtimes.is_empty() {
            args.extend(["--runtimes".into(), self.runtimes.join(",")]);
            if let Some(client) = &self.client {
                args.extend(["--client".into(), client.clone()]);
            }
        }
        args
    }

    /// The workloads compared: the matrix's handshakes and throughput, or
    /// with `dtls` its DTLS workloads run in memory (not over UDP, whose
    /// threads a slice cannot interleave), with `sockets` the socket echo.
    pub fn workloads(&self) -> Vec<(Workload, Params)> {
        if self.sockets {
            tls_bench_harness::bench::socket_workloads()
        } else if self.dtls {
            self.matrix.dtls_workloads().into_iter().filter(|(w, _)| w.kind().in_memory()).collect()
        } else {
            self.matrix.workloads()
        }
    }
}

/// Libraries of this build.
pub type Libraries = Vec<Box<dyn TlsLibrary>>;

/// The libraries of this build that `opts` compares (with the crypto
/// floors of the in-memory TLS cases, none over sockets or for DTLS, which
/// they do not run) and the cases its filter selects. Errors: a bad filter,
/// an s2n-tls policy that cannot be made.
pub fn cases(opts: &WorkerOptions) -> Result<(Libraries, Vec<Case>)> {
    let filter = opts.filter.as_deref().map(Regex::new).transpose().context("--filter")?;
    if opts.sockets {
        tls_bench_sockets::cases::install();
    }
    let mut libs = libs::all();
    if opts.sockets && !opts.runtimes.is_empty() {
        libs.extend(tls_bench_sockets::cases::runtime_rows(&opts.runtimes, opts.client.as_deref())?);
    }
    if opts.sockets && opts.bridge {
        libs.extend(tls_bench_sockets::cases::bridge_rows());
    }
    if !opts.sockets && !opts.dtls {
        libs.extend(libs::crypto_floors());
    }
    if opts.s2n_policies {
        let params: Vec<_> = opts.workloads().into_iter().map(|(_, p)| p).collect();
        libs.extend(libs::s2n_policy_alternatives(&params).map_err(|e| anyhow::anyhow!("{e}"))?);
    }
    let chosen =
        |name: &str| opts.libraries.is_empty() || opts.libraries.iter().any(|s| select::matches(name, s));
    let floors: Vec<String> =
        libs.iter().filter(|l| chosen(&l.name())).filter_map(|l| l.crypto_floor()).collect();
    let cases: Vec<Case> = cases_of(opts.workloads(), &libs)
        .into_iter()
        .filter(|c| filter.as_ref().is_none_or(|f| f.is_match(&c.to_string())))
        .filter(|c| chosen(&c.library) || floors.contains(&c.library))
        .collect();
    Ok((libs, cases))
}

/// Runs the worker loop of this process: configures every selected case,
/// prints the [`Hello`], then answers requests until stdin closes.
/// Errors: a configuration failure (not an unsupported case), a bad filter,
/// a broken pipe.
pub fn serve(variant: &str, opts: &WorkerOptions) -> Result<()> {
    let (libs, cases) = cases(opts)?;
    tls_bench_harness::bench::check_unique(&cases)?;
    let mut runners: HashMap<String, Runner> = HashMap::new();
    let mut infos = Vec::new();
    for case in &cases {
        let (skip, settings) = match prepare(case, &libs)? {
            Prepared::Ready { runner, settings } => {
                runners.insert(case.to_string(), *runner);
                (None, settings)
            }
            Prepared::Skipped(why) => (Some(why), None),
        };
        infos.push(CaseInfo {
            id: case.to_string(),
            row: case.row(),
            group: case.workload.group(Figure::Both).to_string(),
            parameters: case.parameters(),
            library: case.library.clone(),
            variant: variant.to_string(),
            bytes_per_iteration: case.workload.bytes_per_iteration(),
            settings,
            skip,
            crypto_floor: libs.iter().find(|l| l.name() == case.library).and_then(|l| l.crypto_floor()),
            plaintext: opts.sockets && tls_bench_sockets::cases::plaintext_row(&case.library),
        });
    }
    let workloads: HashMap<String, _> = cases.iter().map(|c| (c.to_string(), c.workload)).collect();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let libraries = libs.iter().map(|l| l.name()).collect();
    writeln!(out, "{}", serde_json::to_string(&Hello { cases: infos, libraries })?)?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let req: Request = serde_json::from_str(&line?).context("worker request")?;
        let reply = match runners.get_mut(&req.id) {
            None => Reply::Err(format!("no runnable case {}", req.id)),
            Some(r) => match r.run(req.iters) {
                Ok(m) => {
                    let w = workloads[&req.id];
                    let per = |f| m.of(w, f).as_nanos() as f64 / m.iters as f64;
                    Reply::Ok(Slice {
                        round: 0,
                        epoch: 0,
                        iters: m.iters,
                        both_ns: per(Figure::Both),
                        first_ns: per(Figure::First),
                        second_ns: per(Figure::Second),
                    })
                }
                Err(e) => Reply::Err(format!("{e:#}")),
            },
        };
        writeln!(out, "{}", serde_json::to_string(&reply)?)?;
        out.flush()?;
    }
    if opts.sockets {
        tls_bench_sockets::cases::stop_servers()?;
    }
    Ok(())
}

/// A worker seen from the parent: one process at a time, started again
/// after one died (a library that crashed, a signal), so that its other
/// cases go on.
pub struct WorkerHandle {
    /// The build variant.
    pub variant: String,
    exe: PathBuf,
    opts: WorkerOptions,
    /// `None` after the process died: the next request starts another.
    process: Option<Process>,
}

/// One worker process and its pipes.
struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Process {
    /// Starts `exe` as the worker of `variant` and reads its [`Hello`].
    fn start(exe: &Path, variant: &str, opts: &WorkerOptions) -> Result<(Process, Hello)> {
        let mut child = Command::new(exe)
            .args(opts.args(variant))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the {variant} worker {}", exe.display()))?;
        let stdin = child.stdin.take().context("worker stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("worker stdout")?);
        let mut p = Process { child, stdin, stdout };
        let line =
            p.read_line().map_err(|status| anyhow::anyhow!("the {variant} worker exited ({status})"))?;
        let hello: Hello = serde_json::from_str(&line).context("worker hello")?;
        Ok((p, hello))
    }

    /// One line of the worker's stdout. Errors (the exit status, or why
    /// reading failed): the worker ended or its pipe broke.
    fn read_line(&mut self) -> std::result::Result<String, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) | Err(_) => Err(self.ended()),
            Ok(_) => Ok(line),
        }
    }

    /// How the process ended. Its pipe broke or closed, so it is ending:
    /// killed first all the same, so the wait cannot hang on a worker that
    /// closed its stdout and lives on (a process already ended keeps its
    /// own status).
    fn ended(&mut self) -> String {
        let _ = self.child.kill();
        match self.child.wait() {
            Ok(status) => status.to_string(),
            Err(e) => format!("its status unknown: {e}"),
        }
    }
}

impl WorkerHandle {
    /// Starts `exe` as the worker of `variant` and reads its cases.
    /// Errors: the process cannot start, or exits before saying hello (its
    /// stderr, inherited, says why).
    pub fn start(exe: &Path, variant: &str, opts: &WorkerOptions) -> Result<(WorkerHandle, Hello)> {
        let (process, hello) = Process::start(exe, variant, opts)?;
        let handle = WorkerHandle {
            variant: variant.to_string(),
            exe: exe.to_path_buf(),
            opts: opts.clone(),
            process: Some(process),
        };
        Ok((handle, hello))
    }

    /// Times `iters` iterations of case `id`, in a new process if the last
    /// one died. Errors: the iteration failed ([`CaseFailed`], the worker's
    /// message); the worker died while running it ([`WorkerDied`]: the next
    /// request starts another, cold, process); a new process could not
    /// start (the run cannot go on).
    pub fn run(&mut self, id: &str, iters: u64) -> Result<Slice> {
        let process = match &mut self.process {
            Some(p) => p,
            None => {
                let (p, _) = Process::start(&self.exe, &self.variant, &self.opts)
                    .context("starting a worker again after one died")?;
                self.process.insert(p)
            }
        };
        let req = serde_json::to_string(&Request { id: id.to_string(), iters })?;
        let reply = match writeln!(process.stdin, "{req}").and_then(|_| process.stdin.flush()) {
            Ok(()) => process.read_line(),
            Err(_) => Err(process.ended()),
        };
        let line = match reply {
            Ok(line) => line,
            Err(status) => {
                self.process = None;
                return Err(WorkerDied(format!("the {} worker died ({status})", self.variant)).into());
            }
        };
        match serde_json::from_str(&line).context("worker reply")? {
            Reply::Ok(s) => Ok(s),
            Reply::Err(e) => Err(CaseFailed(format!("{} worker: {e}", self.variant)).into()),
        }
    }

    /// Closes stdin and waits for the worker (none: it died, and the case it
    /// was running is a failed row already). Errors: it failed.
    pub fn finish(self) -> Result<()> {
        let Some(Process { mut child, stdin, .. }) = self.process else { return Ok(()) };
        drop(stdin);
        let status = child.wait()?;
        if !status.success() {
            bail!("the {} worker exited with {status}", self.variant);
        }
        Ok(())
    }
}
