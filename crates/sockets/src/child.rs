//! Another build's HTTPS server, run as a child process: the libraries
//! one build cannot hold with another (BoringSSL's libssl shadows
//! OpenSSL's; one openssl-sys per build, [`crate::variants`]) served by
//! that build's own `https-serve` ([`crate::workers`] builds it), so
//! `https-compare` loads them in the same rounds as this build's servers.
//! The child checks every connection's negotiated parameters as the
//! in-process servers do, and its summary (its `--json`) comes back at the
//! stop (SIGTERM). Servers of other runtimes ([`crate::runtimes`]) speak the same
//! protocol.

use std::{
    collections::VecDeque,
    io::{BufRead, BufReader, Read, Write},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, ChildStderr, ChildStdout, Command, Stdio},
    sync::{Arc, Mutex, mpsc},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use super::{
    process::{self, Signal},
    serve::Summary,
};
use tls_bench_harness::{error::ConfigureError, params::Params};
use tls_bench_results::sockets::RssTrace;

/// How long a child may take to say it serves, and to stop.
const LIMIT: Duration = Duration::from_secs(15);

/// A build's `https-serve` binary and the libraries it holds.
#[derive(Clone, Debug)]
pub struct Build {
    /// The variant's name (`boringssl`).
    pub variant: String,
    /// Its `https-serve`.
    pub exe: PathBuf,
    /// Its TLS libraries (`https-serve --list`, plaintext left out).
    pub libraries: Vec<String>,
    /// Its own plaintext servers, named rows (`--list` lines `NAME
    /// plaintext`: Erlang's `gen_tcp` echo), which serve `--echo` only.
    /// A build's `plaintext-tcp` is not one: it is this build's plaintext.
    pub plaintext: Vec<String>,
}

impl Build {
    /// Reads the libraries of `exe` (`--list`: a line per server, `NAME`
    /// for a TLS library, `NAME plaintext` for a plaintext one). Errors: it
    /// does not run, or fails.
    pub fn read(variant: &str, exe: &Path) -> Result<Build> {
        let out = Command::new(exe)
            .arg("--list")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {} --list", exe.display()))?;
        if !out.status.success() {
            bail!("{} --list: {}", exe.display(), String::from_utf8_lossy(&out.stderr).trim());
        }
        let (mut libraries, mut plaintext) = (Vec::new(), Vec::new());
        for line in String::from_utf8_lossy(&out.stdout).lines().map(str::trim) {
            match line.split_once(' ') {
                _ if line.is_empty() || line == super::PLAINTEXT => {}
                None => libraries.push(line.to_string()),
                Some((name, "plaintext")) => plaintext.push(name.to_string()),
                Some(_) => bail!("{} --list said {line:?}: not `NAME` or `NAME plaintext`", exe.display()),
            }
        }
        Ok(Build { variant: variant.to_string(), exe: exe.to_path_buf(), libraries, plaintext })
    }
}

/// The parameters as `https-serve`'s (and `load`'s) options.
pub(crate) fn params_args(params: &Params) -> Vec<String> {
    vec![
        "--kind".into(),
        params.kind.to_string(),
        "--suite".into(),
        params.suite.to_string(),
        "--group".into(),
        params.group.to_string(),
        "--cert".into(),
        params.cert.to_string(),
    ]
}

/// Whether `library` of `exe` can serve `params` (`https-serve --probe`).
/// Errors: `Unsupported` with the library's reason; `Failed` when the
/// probe failed or said something else.
pub fn probe(exe: &Path, library: &str, params: &Params) -> Result<(), ConfigureError> {
    let out = Command::new(exe)
        .args(["--library", library, "--probe"])
        .args(params_args(params))
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {} --probe", exe.display()))?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(ConfigureError::Failed(anyhow::anyhow!(
            "{} --library {library} --probe: {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    match said.strip_prefix("unsupported: ") {
        Some(why) => Err(ConfigureError::Unsupported(why.to_string())),
        None if said == "supported" => Ok(()),
        None => Err(ConfigureError::Failed(anyhow::anyhow!("--probe said {said:?}"))),
    }
}

/// What a child server runs with.
#[derive(Clone, Debug)]
pub struct ChildOptions {
    /// Worker threads.
    pub threads: usize,
    /// Their cores (empty: not pinned).
    pub cores: Vec<usize>,
    /// Body bytes.
    pub body: usize,
    /// Echo every byte back (`--echo`: `serve`'s protocol, for `compare
    /// --sockets`) instead of answering HTTP requests.
    pub echo: bool,
    /// Connections at once.
    pub max_connections: usize,
    /// Its handshake and idle timeouts (`--handshake-timeout`,
    /// `--idle-timeout`); `None`: the server's defaults.
    pub timeouts: Option<(Duration, Duration)>,
    /// Where its summary (`--json`) goes.
    pub json: PathBuf,
}

/// A running child server.
pub struct ChildServer {
    child: Child,
    /// The library it serves (`go-crypto-tls-1.26.8`), for messages.
    library: String,
    addr: SocketAddr,
    json: PathBuf,
    /// The rest of its stdout (the summary), read to the end.
    rest: Option<JoinHandle<std::io::Result<String>>>,
    /// The last lines of its stderr (passed on to ours as they come).
    stderr: StderrTail,
    /// Why it is down, once [`ChildServer::down`] found it so.
    down: Option<String>,
}

impl Drop for ChildServer {
    /// A child not stopped (a run that ended on an error, or a server found
    /// down) is killed with its process group and reaped, not left serving.
    fn drop(&mut self) {
        kill(&mut self.child);
    }
}

impl ChildServer {
    /// Starts `library` of `exe` for `params` on a free port of 127.0.0.1
    /// and waits (at most 15 s) for its `serving ... on ADDR` line.
    /// Errors: it does not start, exits, or says no address in time.
    pub fn start(exe: &Path, library: &str, params: &Params, options: &ChildOptions) -> Result<ChildServer> {
        let mut cmd = Command::new(exe);
        cmd.args(["--library", library, "--listen", "127.0.0.1:0"])
            .args(params_args(params))
            .args(["--threads", &options.threads.to_string()])
            .args(["--body", &options.body.to_string()])
            .args(["--max-connections", &options.max_connections.to_string()])
            .arg("--json")
            .arg(&options.json)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if options.echo {
            cmd.arg("--echo");
        }
        if !options.cores.is_empty() {
            let cores: Vec<String> = options.cores.iter().map(|c| c.to_string()).collect();
            cmd.args(["--cores", &cores.join(",")]);
        }
        if let Some((handshake, idle)) = options.timeouts {
            cmd.arg(format!("--handshake-timeout={}ms", handshake.as_millis()))
                .arg(format!("--idle-timeout={}ms", idle.as_millis()));
        }
        let mut child =
            super::interrupt::spawn(&mut cmd).with_context(|| format!("starting {}", exe.display()))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let stderr = StderrTail::follow(child.stderr.take().context("no stderr")?);
        let (first, rest) = read_lines(stdout);
        let line = match first.recv_timeout(LIMIT) {
            Ok(line) => line,
            Err(_) => {
                kill(&mut child);
                bail!(
                    "{} --library {library}: no `serving` line in {LIMIT:?}{}",
                    exe.display(),
                    stderr.said()
                );
            }
        };
        let addr = line.split_whitespace().find_map(|w| w.parse::<SocketAddr>().ok());
        match addr {
            Some(addr) if line.starts_with("serving") => Ok(ChildServer {
                child,
                library: library.to_string(),
                addr,
                json: options.json.clone(),
                rest: Some(rest),
                stderr,
                down: None,
            }),
            _ => {
                // Ended before a word (a key it could not read, a crash):
                // how it ended, and its stderr, say why.
                let ended = if line.is_empty() {
                    let until = Instant::now() + Duration::from_secs(1);
                    let mut how = process_down(&mut child);
                    while how.is_none() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(20));
                        how = process_down(&mut child);
                    }
                    format!(
                        "closed its stdout without a `serving ... on ADDR` line ({})",
                        how.unwrap_or("still running".into())
                    )
                } else {
                    format!("said {line:?}, not `serving ... on ADDR`")
                };
                kill(&mut child);
                bail!("{} --library {library} {ended}{}", exe.display(), stderr.said())
            }
        }
    }

    /// Why the server no longer serves, if it does not: it exited (its
    /// status), or it is stopped (SIGSTOP, a debugger: it answers nothing),
    /// with the last lines of its stderr. Once down, always down (a
    /// stopped server is not loaded again: [`Drop`] kills it). `None`: it
    /// runs. A run calls this between its slices and reports the server as
    /// a failed row at once.
    pub fn down(&mut self) -> Option<String> {
        if self.down.is_none()
            && let Some(why) = process_down(&mut self.child)
        {
            self.down = Some(format!("{why}{}", self.stderr.said()));
        }
        self.down.clone()
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its process id (for `/proc/PID/...`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops it (SIGTERM: every server takes it; SIGINT is the Erlang VM's
    /// break signal), waits at most 15 s, and reads its summary.
    /// Errors: it ran past that (killed), exited with an error, or its
    /// summary cannot be read.
    pub fn stop(mut self) -> Result<Summary> {
        if let Some(why) = self.down() {
            bail!("{} {why}", self.library);
        }
        // Our own child, not yet reaped (down() saw it running).
        process::signal(self.child.id(), Signal::SIGTERM)
            .with_context(|| format!("signalling {}", self.library))?;
        let Some(status) = process::wait_for(&mut self.child, LIMIT)? else {
            kill(&mut self.child);
            bail!("{} did not stop in {LIMIT:?}; killed{}", self.library, self.stderr.said());
        };
        super::interrupt::forget(&self.child);
        let rest = self
            .rest
            .take()
            .context("the child's output was read before")?
            .join()
            .map_err(|_| anyhow::anyhow!("reading the child's output"))??;
        if !status.success() {
            let stdout =
                if rest.trim().is_empty() { String::new() } else { format!("; its stdout: {}", rest.trim()) };
            bail!("{} ended with {status} when asked to stop{stdout}{}", self.library, self.stderr.said());
        }
        let text = std::fs::read_to_string(&self.json)
            .with_context(|| format!("reading the child's summary {}", self.json.display()))?;
        let mut summary: Summary =
            serde_json::from_str(&text).with_context(|| format!("reading {}", self.json.display()))?;
        // The trace's figures from its samples, as every server's: another
        // runtime's server writes only the samples and their interval.
        let interval = summary.rss.interval_s;
        if !(interval > 0.0 && interval.is_finite()) {
            bail!("{}: RSS interval {interval} s", self.json.display());
        }
        summary.rss =
            RssTrace::of(std::mem::take(&mut summary.rss.samples_kib), Duration::from_secs_f64(interval));
        Ok(summary)
    }
}

/// Kills a child (with its process group, [`super::interrupt::spawn`]'s)
/// and reaps it, unless it was reaped before; the error being returned
/// says what went wrong, so a failure here adds nothing.
fn kill(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        // The process group our own unreaped child leads: a failure is
        // a group already gone.
        let _gone = process::signal_group(child.id(), Signal::SIGKILL);
        let _killed = child.kill();
        let _reaped = child.wait();
    }
    super::interrupt::forget(child);
}

/// Why a child process no longer serves, if it does not: it exited
/// (`exited with exit status: 1`, `exited with signal: 9 (SIGKILL)`; then
/// reaped), or it is stopped (`stopped (state T): it answers nothing`,
/// from `/proc/PID/stat`, proc(5)). `None`: it runs (or `/proc` could not
/// be read, which a running child's can).
pub(crate) fn process_down(child: &mut Child) -> Option<String> {
    match child.try_wait() {
        Ok(Some(status)) => return Some(format!("exited with {status}")),
        Err(e) => return Some(format!("cannot be waited for: {e}")),
        Ok(None) => {}
    }
    let state = process::state(child.id())?;
    matches!(state, 'T' | 't')
        .then(|| format!("stopped (state {state}, SIGSTOP or a tracer): it answers nothing"))
}

/// The last lines a child wrote to its stderr, each passed on to this
/// process's stderr as it comes (so a user sees them where they always did).
#[derive(Clone, Default)]
pub(crate) struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Set when the child's stderr closed (it ended).
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    /// Lines kept.
    const LINES: usize = 8;

    /// Reads `stderr` on a thread of its own until it closes.
    pub(crate) fn follow(stderr: ChildStderr) -> StderrTail {
        let tail = StderrTail::default();
        let kept = tail.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // Our stderr gone: nothing to pass it to; it is still kept.
                let _unseen = writeln!(std::io::stderr(), "{line}");
                if let Ok(mut lines) = kept.lines.lock() {
                    if lines.len() == Self::LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            }
            kept.closed.store(true, std::sync::atomic::Ordering::Release);
        });
        tail
    }

    /// `; its last stderr lines: A | B`, or `; nothing on its stderr`,
    /// once its stderr closed (the child ended: its last words are read) or
    /// after at most 500 ms (a child that runs on, or whose own children
    /// hold its stderr).
    pub(crate) fn said(&self) -> String {
        let until = Instant::now() + Duration::from_millis(500);
        while !self.closed.load(std::sync::atomic::Ordering::Acquire) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let lines: Vec<String> = self
            .lines
            .lock()
            .map(|l| l.iter().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect())
            .unwrap_or_default();
        if lines.is_empty() {
            "; nothing on its stderr".to_string()
        } else {
            format!("; its last stderr lines: {}", lines.join(" | "))
        }
    }
}

/// The first line of `stdout` on a channel, the rest on a thread.
fn read_lines(stdout: ChildStdout) -> (mpsc::Receiver<String>, JoinHandle<std::io::Result<String>>) {
    let (tx, rx) = mpsc::channel();
    let rest = std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut first = String::new();
        reader.read_line(&mut first)?;
        // The receiver may have given up (a timeout): the line is then
        // not wanted.
        let _unwanted = tx.send(first.trim_end().to_string());
        let mut rest = String::new();
        reader.read_to_string(&mut rest)?;
        Ok(rest)
    });
    (rx, rest)
}
