//! Independent HTTP load tools, Debian's packages, driven against the same
//! server and settings as `https-load`, their figures read back from their
//! own output: `wrk` (`Requests/sec:`; a new connection per request by
//! sending `Connection: close`, which wrk answers by reconnecting), `siege`
//! (`-b`, kept connections, its `-j` JSON, an rc file of ours) and `h2load` from nghttp2-client, twice: HTTP/1.1 (`--h1`)
//! and HTTP/2 (ALPN `h2`), keep-alive, `finished in ..., N req/s`, its
//! `Application protocol:` checked. Each runs bounded in time; a missing
//! tool is an error saying what to install.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use tls_bench_harness::params::CertChain;

use crate::process;
pub use tls_bench_results::https::{Tool, ToolRun};

/// What to run.
#[derive(Clone, Debug)]
pub struct ToolLoad {
    /// `https://127.0.0.1:PORT/`.
    pub url: String,
    /// Connections (users) at once.
    pub concurrent: u32,
    /// Threads (wrk, h2load).
    pub threads: usize,
    /// How long.
    pub duration: Duration,
    /// Requests per user instead, for siege (`-r`; its `-t` can run past
    /// its time, JoeDog/siege#178): `None` runs it for `duration`.
    pub reps: Option<u32>,
    /// One connection kept alive per user, else a new one per request.
    pub keep_alive: bool,
    /// The server's chain (which tools run new-connection rows depends on it).
    pub cert: CertChain,
    /// Where rc files and outputs go.
    pub dir: PathBuf,
    /// The cores the tool runs on (empty: any).
    pub cores: Vec<usize>,
}

/// The tool's binary. Errors: not installed, saying which package.
fn binary(tool: Tool) -> Result<PathBuf> {
    super::nginx::which(tool.command())
        .with_context(|| format!("{} is not installed: apt-get install {}", tool.command(), tool.package()))
}

/// Runs `tool` with `load`. Errors: not installed, a mode it lacks (wrk and
/// h2load keep connections alive), a core it may not use, it failed, ran past the duration plus
/// 30 s (three times the duration plus 30 s by repetitions), printed nothing we can read (its output quoted), or h2load spoke
/// another protocol than its row's.
pub fn run(tool: Tool, load: &ToolLoad) -> Result<ToolRun> {
    if !load.keep_alive && !tool.new_connections(load.cert) {
        bail!("{} does not run new-connection rows of {} (Tool::new_connections)", tool.name(), load.cert);
    }
    let bin = binary(tool)?;
    super::threads::check_cores(&load.cores)?;
    let secs = load.duration.as_secs().max(1);
    let mut cmd = Command::new(&bin);
    match tool {
        Tool::Wrk => {
            cmd.args(["-t", &load.threads.to_string(), "-c", &load.concurrent.to_string()]);
            if !load.keep_alive {
                cmd.args(["-H", "Connection: close"]);
            }
            cmd.args(["-d", &format!("{secs}s"), &load.url]);
        }
        Tool::Siege => {
            let rc = siege_rc(&load.dir, load.keep_alive, load.concurrent)?;
            cmd.arg(format!("--rc={}", rc.display())).args(["-b", "-j", "-c", &load.concurrent.to_string()]);
            match load.reps {
                Some(reps) => cmd.args(["-r", &reps.to_string()]),
                None => cmd.args(["-t", &format!("{secs}S")]),
            };
            cmd.arg(&load.url);
        }
        Tool::H2load | Tool::H2loadH2 => {
            if tool == Tool::H2load {
                cmd.arg("--h1");
            }
            cmd.args(["-c", &load.concurrent.to_string(), "-t", &load.threads.to_string()]).args([
                "-D",
                &secs.to_string(),
                &load.url,
            ]);
        }
    }
    let command = format!(
        "{} {}",
        tool.command(),
        cmd.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
    );
    super::threads::pin_command(&mut cmd, &load.cores);
    let cpu_before = super::threads::children_cpu_seconds()?;
    let started = Instant::now();
    // By repetitions a tool may read a third of the rate they were sized
    // from and still end.
    let limit = if load.reps.is_some() { load.duration * 3 } else { load.duration } + Duration::from_secs(30);
    let out = output(cmd, limit).with_context(|| format!("running {command}"))?;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_seconds = super::threads::children_cpu_seconds()? - cpu_before;
    let cores = if load.cores.is_empty() { super::threads::allowed_cores()?.len() } else { load.cores.len() };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        bail!("{command}: {} ({})", out.status, last_lines(&format!("{text}{err}")));
    }
    let parsed = match tool {
        Tool::Wrk => parse_wrk(&text),
        Tool::Siege => parse_siege(&text),
        Tool::H2load | Tool::H2loadH2 => parse_h2load(&text),
    };
    if let Some(wanted) = tool.application_protocol() {
        let spoke = word_after(&text, "Application protocol:");
        if spoke != Some(wanted) {
            bail!("{command}: spoke {}, not {wanted}", spoke.unwrap_or("no protocol it names"));
        }
    }
    let (transaction_rate, transactions, failed) = parsed.with_context(|| {
        format!("{command}: output not understood: {}", last_lines(&format!("{text}{err}")))
    })?;
    // Over the process's whole life: its start and connects too.
    let cpu_share = cpu_seconds / (elapsed * cores.max(1) as f64);
    Ok(ToolRun {
        tool,
        command,
        transaction_rate,
        transactions,
        failed,
        cpu_seconds,
        cpu_share,
        server_cpu_share: None,
    })
}

/// A command's output, killed past `limit` (its pipes read on threads).
/// Errors: it cannot start, or ran past `limit`.
pub(crate) fn output(mut cmd: Command, limit: Duration) -> Result<std::process::Output> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = super::interrupt::spawn(&mut cmd)?;
    let started = Instant::now();
    // Read both pipes on threads, so a chatty tool never blocks on a full pipe.
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut stderr = child.stderr.take().context("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut b).map(|_| b)
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut b).map(|_| b)
    });
    let Some(status) = process::wait_for(&mut child, limit.saturating_sub(started.elapsed()))? else {
        let _ = child.kill();
        let _ = child.wait();
        super::interrupt::forget(&child);
        bail!("ran past {limit:?}; killed");
    };
    super::interrupt::forget(&child);
    let stdout = out.join().map_err(|_| anyhow::anyhow!("reading stdout"))?.context("reading stdout")?;
    let stderr = err.join().map_err(|_| anyhow::anyhow!("reading stderr"))?.context("reading stderr")?;
    Ok(std::process::Output { status, stdout, stderr })
}

fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(4)..].join(" | ")
}

/// siege's socket timeout, seconds (its default, 30, would let one stalled
/// connection hold a 1-second run for 30 s): `https-load`'s default.
const SIEGE_TIMEOUT_S: u32 = 10;

/// siege's rc file: a new connection per request (`connection = close`) or
/// keep-alive, no log, no HTML parsing, `limit` at least the users, a
/// socket timeout of [`SIEGE_TIMEOUT_S`] (a stalled connection is then a
/// failed transaction siege reports, not a run past its time).
fn siege_rc(dir: &Path, keep_alive: bool, concurrent: u32) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let rc = dir.join("siegerc");
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let text = format!(
        "connection = {connection}\nprotocol = HTTP/1.1\nlogging = false\nshow-logfile = false\n\
         parser = false\nlimit = {}\nbenchmark = true\ntimeout = {SIEGE_TIMEOUT_S}\n",
        concurrent.max(255)
    );
    std::fs::write(&rc, text).with_context(|| format!("writing {}", rc.display()))?;
    Ok(rc)
}

/// A number after `key` on its line (`Requests/sec:   123.45`).
fn number_after(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)? + key.len();
    text[at..].split_whitespace().next()?.trim_end_matches(',').parse().ok()
}

/// The word after `key` on its line (`Application protocol: h2`).
fn word_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(key)? + key.len();
    text[at..].split_whitespace().next()
}

/// wrk's `Requests/sec:`, `N requests in`, and its socket errors and
/// non-2xx responses as failures.
pub fn parse_wrk(text: &str) -> Option<(f64, u64, u64)> {
    let rate = number_after(text, "Requests/sec:")?;
    let line = text.lines().find(|l| l.contains(" requests in "))?;
    let requests: u64 = line.split_whitespace().next()?.parse().ok()?;
    let mut failed = 0u64;
    if let Some(l) = text.lines().find(|l| l.trim_start().starts_with("Socket errors:")) {
        failed +=
            l.split(',').filter_map(|part| part.split_whitespace().last()?.parse::<u64>().ok()).sum::<u64>();
    }
    if let Some(n) = number_after(text, "Non-2xx or 3xx responses:") {
        failed += n as u64;
    }
    Some((rate, requests, failed))
}

/// siege's `-j` JSON: `transaction_rate`, `successful_transactions`,
/// `failed_transactions`.
pub fn parse_siege(text: &str) -> Option<(f64, u64, u64)> {
    let json = &text[text.find('{')?..=text.rfind('}')?];
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    Some((
        v["transaction_rate"].as_f64()?,
        v["successful_transactions"].as_u64()?,
        v["failed_transactions"].as_u64()?,
    ))
}

/// h2load's `finished in Xs, N req/s` and its `requests:` line
/// (succeeded; failed, which holds the errored and timed-out ones).
pub fn parse_h2load(text: &str) -> Option<(f64, u64, u64)> {
    let finished = text.lines().find(|l| l.starts_with("finished in"))?;
    let rate: f64 = finished.split(", ").nth(1)?.split_whitespace().next()?.parse().ok()?;
    let requests = text.lines().find(|l| l.starts_with("requests:"))?;
    let field = |name: &str| -> Option<u64> {
        requests
            .split(", ")
            .find(|p| p.trim_end().ends_with(name))?
            .split_whitespace()
            .rev()
            .nth(1)?
            .parse()
            .ok()
    };
    Some((rate, field("succeeded")?, field("failed")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_output_reads_back() {
        let text = "Running 10s test @ https://127.0.0.1:4433/\n  2 threads and 100 connections\n  \
                    Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency     5.01ms    1.00ms  20.00ms   90.00%\n  \
                    52345 requests in 10.00s, 60.12MB read\n  Socket errors: connect 0, read 2, write 0, timeout 1\n\
                    Requests/sec:   5234.50\nTransfer/sec:      6.01MB\n";
        assert_eq!(parse_wrk(text), Some((5234.5, 52345, 3)));
        assert_eq!(parse_wrk("nothing"), None);
    }

    #[test]
    fn siege_json_reads_back() {
        let text = "\n{\t\"transactions\":\t\t\t        7180,\n\t\"availability\":\t\t      100.00,\n\
                    \t\"transaction_rate\":\t\t      717.28,\n\t\"successful_transactions\":\t        7180,\n\
                    \t\"failed_transactions\":\t\t           0\n}\n";
        assert_eq!(parse_siege(text), Some((717.28, 7180, 0)));
    }

    #[test]
    fn h2load_output_reads_back() {
        let text = "starting benchmark...\n\nfinished in 10.00s, 4321.70 req/s, 5.10MB/s\n\
                    requests: 43217 total, 43217 started, 43217 done, 43210 succeeded, 7 failed, 7 errored, 0 timeout\n";
        assert_eq!(parse_h2load(text), Some((4321.7, 43210, 7)));
        let head = "TLS Protocol: TLSv1.3\nCipher: TLS_AES_128_GCM_SHA256\nApplication protocol: h2\n";
        assert_eq!(word_after(head, "Application protocol:"), Some("h2"));
    }

    #[test]
    fn siege_rc_says_the_connection_mode() {
        let dir = std::env::temp_dir().join(format!("tls-bench-siegerc-{}", std::process::id()));
        let rc = siege_rc(&dir, false, 1000).unwrap();
        let text = std::fs::read_to_string(&rc).unwrap();
        assert!(text.contains("connection = close") && text.contains("limit = 1000"), "{text}");
        assert!(text.contains("timeout = 10"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
