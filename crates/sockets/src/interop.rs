//! Interoperability across builds: every TLS library's client against
//! every TLS library's server, whichever builds hold them. A build holds
//! one OpenSSL and each new C library alone ([`crate::child`]: BoringSSL
//! shadows OpenSSL; GnuTLS, wolfSSL and Mbed TLS are variants of their
//! own), so the in-process tests pair only the libraries of one build;
//! here each side is its own build's binary: the server `https-serve
//! --echo` (as `compare --sockets` runs another build's server), the
//! client `load`, each connection checked by the side that made it, as
//! in every run (version, suite, group, resumption, client
//! authentication; every echoed byte).
//!
//! Each pair is asked first whether it can run (`--probe` of both
//! binaries): an unsupported one is a skip with the library's reason,
//! never run with other parameters.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::{Context, Result, bail};

use super::{
    child::{Build, ChildOptions, ChildServer, probe},
    load::Report,
};
use tls_bench_harness::{
    error::ConfigureError,
    params::{HandshakeKind, Params},
};
use tls_bench_results::table::Table;

/// Longest one pair's client may run.
const LIMIT: Duration = Duration::from_secs(60);

/// One end of a pair: a library of a build.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct End {
    /// The build variant (`gnutls`).
    pub variant: String,
    /// The library as its build names it (`gnutls-3.7.9`).
    pub library: String,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.library, self.variant)
    }
}

/// What one pair did.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every request echoed intact, every handshake as the parameters
    /// say.
    Passed {
        /// Full handshakes, each checked.
        full: u64,
        /// Resumed handshakes, each checked.
        resumed: u64,
    },
    /// A side cannot run the parameters: which side and its reason.
    Skipped(String),
    /// The run failed: what went wrong.
    Failed(String),
}

/// One pair's result.
#[derive(Clone, Debug)]
pub struct Pair {
    /// The parameters both sides were configured for.
    pub params: Params,
    /// The client's library and build.
    pub client: End,
    /// The server's library and build.
    pub server: End,
    /// What the pair did.
    pub outcome: Outcome,
}

/// A build's two binaries for this: its `https-serve` and its `load`.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// The servers (`https-serve --list`).
    pub server: Build,
    /// The clients (`load --list`).
    pub client: Build,
}

impl Binaries {
    /// Reads the libraries of `variant`'s `https_serve` and `load`.
    /// Errors: either does not run.
    pub fn read(variant: &str, https_serve: &Path, load: &Path) -> Result<Binaries> {
        Ok(Binaries { server: Build::read(variant, https_serve)?, client: Build::read(variant, load)? })
    }
}

/// Every client of `builds` against every server of `builds`, for each
/// of `params`: `requests` new connections a pair, each echoing 1 KiB
/// (under resumption, after the one full handshake that fetches the
/// ticket, each resumes the ticket of the one before). Summaries and
/// reports go to `dir`. Errors: a server that does not start or stop
/// cleanly (a pair's own failure is its [`Outcome::Failed`]).
pub fn run(builds: &[Binaries], params: &[Params], requests: u64, dir: &Path) -> Result<Vec<Pair>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pairs = Vec::new();
    for p in params {
        // Whether each client can run `p`, asked once.
        let mut clients = Vec::new();
        for b in builds {
            for library in &b.client.libraries {
                let end = End { variant: b.client.variant.clone(), library: library.clone() };
                clients.push((end, &b.client.exe, probe(&b.client.exe, library, p)));
            }
        }
        for b in builds {
            for library in &b.server.libraries {
                let server = End { variant: b.server.variant.clone(), library: library.clone() };
                let mut served = |client: &End, outcome| {
                    pairs.push(Pair { params: *p, client: client.clone(), server: server.clone(), outcome });
                };
                match probe(&b.server.exe, library, p) {
                    Ok(()) => {}
                    Err(ConfigureError::Unsupported(why)) => {
                        for (client, ..) in &clients {
                            served(client, Outcome::Skipped(format!("server: {why}")));
                        }
                        continue;
                    }
                    Err(ConfigureError::Failed(e)) => return Err(e),
                }
                let options = ChildOptions {
                    threads: 1,
                    cores: Vec::new(),
                    body: 0,
                    echo: true,
                    max_connections: 1000,
                    timeouts: None,
                    json: dir.join(format!("{}-{library}.json", b.server.variant)),
                };
                let child = ChildServer::start(&b.server.exe, library, p, &options)?;
                let mut expected = (0, 0);
                let mut failed = false;
                for (client, exe, probed) in &clients {
                    let outcome = match probed {
                        Err(ConfigureError::Unsupported(why)) => Outcome::Skipped(format!("client: {why}")),
                        Err(ConfigureError::Failed(e)) => bail!("{client}: {e:#}"),
                        Ok(()) => {
                            let json = dir.join(format!("{}-{}.json", client.variant, client.library));
                            let outcome = load(exe, &client.library, p, child.addr(), requests, &json)?;
                            match outcome {
                                Outcome::Passed { full, resumed } => {
                                    expected = (expected.0 + full, expected.1 + resumed);
                                }
                                _ => failed = true,
                            }
                            outcome
                        }
                    };
                    served(client, outcome);
                }
                let summary = child.stop().with_context(|| format!("stopping {server}'s server"))?;
                // A failed pair's server saw its failure too: that pair says it.
                if failed {
                    continue;
                }
                if let Some(first) = summary.error_examples.first() {
                    bail!("{server}'s server counted failures ({:?}), the first: {first}", summary.errors);
                }
                let got = (summary.handshakes_full, summary.handshakes_resumed);
                if got != expected {
                    bail!(
                        "{server}'s server counted {} full and {} resumed handshakes where its clients \
                         counted {} and {}",
                        got.0,
                        got.1,
                        expected.0,
                        expected.1
                    );
                }
            }
        }
    }
    Ok(pairs)
}

/// Runs `exe` (a build's `load`) as `library` against `addr`: `requests`
/// new connections, one client, 1 KiB each, its report to `json`, checked:
/// no failure, every request echoed, the handshakes `params` asks.
/// Errors: its report cannot be read (not starting, running past
/// [`LIMIT`] or failing is the pair's [`Outcome::Failed`]).
fn load(
    exe: &Path,
    library: &str,
    params: &Params,
    addr: std::net::SocketAddr,
    requests: u64,
    json: &PathBuf,
) -> Result<Outcome> {
    // The report of this run, not one left by an earlier pair's.
    if json.exists() {
        std::fs::remove_file(json).with_context(|| format!("removing {}", json.display()))?;
    }
    let mut cmd = Command::new(exe);
    cmd.args(["--library", library, "--connect", &addr.to_string(), "-c", "1", "--threads", "1"])
        .args(["-n", &requests.to_string(), "-s", "1024", "--new-connection", "--quiet", "--timeout", "10s"])
        .args(super::child::params_args(params))
        .arg("--json")
        .arg(json);
    let out = match super::external::output(cmd, LIMIT) {
        Ok(out) => out,
        Err(e) => return Ok(Outcome::Failed(format!("load: {e:#}"))),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        return Ok(Outcome::Failed(format!("load exited with {}: {said}", out.status)));
    }
    let text = std::fs::read_to_string(json).with_context(|| format!("reading {}", json.display()))?;
    let report: Report =
        serde_json::from_str(&text).with_context(|| format!("reading {}", json.display()))?;
    let (full, resumed) = match params.kind {
        HandshakeKind::Resumption => (1, requests),
        _ => (requests, 0),
    };
    let got = (report.handshakes_full, report.handshakes_resumed);
    Ok(if !report.errors.is_empty() {
        Outcome::Failed(format!("{:?}: {}", report.errors, report.error_examples.join("; ")))
    } else if report.requests != requests || got != (full, resumed) {
        Outcome::Failed(format!(
            "{} requests, {} full and {} resumed handshakes, where {requests}, {full} and {resumed} were due",
            report.requests, got.0, got.1
        ))
    } else {
        Outcome::Passed { full, resumed }
    })
}

/// The pairs as Markdown: for each parameter set a table, a row per
/// client and a column per server (`ok`, `skip`, `FAILED`), then the skips'
/// reasons (each once) and every failure.
pub fn to_markdown(pairs: &[Pair]) -> String {
    let mut out = String::new();
    let mut by_params: BTreeMap<String, Vec<&Pair>> = BTreeMap::new();
    for p in pairs {
        by_params.entry(p.params.to_string()).or_default().push(p);
    }
    for (params, pairs) in by_params {
        let mut servers: Vec<&End> = Vec::new();
        let mut clients: Vec<&End> = Vec::new();
        for p in &pairs {
            if !servers.contains(&&p.server) {
                servers.push(&p.server);
            }
            if !clients.contains(&&p.client) {
                clients.push(&p.client);
            }
        }
        let _ = writeln!(out, "## {params}\n");
        let header: Vec<String> = std::iter::once("client \\ server".to_string())
            .chain(servers.iter().map(|s| s.to_string()))
            .collect();
        let mut table = Table::new(&header);
        for c in &clients {
            let cells = servers.iter().map(|s| {
                pairs.iter().find(|p| &&p.client == c && &&p.server == s).map_or("", |p| match p.outcome {
                    Outcome::Passed { .. } => "ok",
                    Outcome::Skipped(_) => "skip",
                    Outcome::Failed(_) => "FAILED",
                })
            });
            table.row(std::iter::once(c.to_string()).chain(cells.map(str::to_string)));
        }
        out.push_str(&table.markdown());
        let mut reasons: Vec<String> = Vec::new();
        for p in &pairs {
            let line = match &p.outcome {
                Outcome::Skipped(why) => {
                    let side = if why.starts_with("server") { &p.server } else { &p.client };
                    format!("- skip, {side}: {why}")
                }
                Outcome::Failed(what) => {
                    format!("- FAILED, {} client, {} server: {what}", p.client, p.server)
                }
                Outcome::Passed { .. } => continue,
            };
            if !reasons.contains(&line) {
                reasons.push(line);
            }
        }
        if !reasons.is_empty() {
            out.push('\n');
            out.push_str(&reasons.join("\n"));
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(variant: &str, library: &str) -> End {
        End { variant: variant.into(), library: library.into() }
    }

    #[test]
    fn the_table_has_a_cell_per_pair_and_each_reason_once() {
        let params = Params::default();
        let pair = |c, s, outcome| Pair { params, client: end("a", c), server: end("b", s), outcome };
        let pairs = vec![
            pair("x", "y", Outcome::Passed { full: 3, resumed: 0 }),
            pair("x", "z", Outcome::Skipped("server: no such group".into())),
            pair("w", "y", Outcome::Failed("reset".into())),
            pair("w", "z", Outcome::Skipped("server: no such group".into())),
        ];
        let md = to_markdown(&pairs);
        assert!(md.contains("| client \\ server | y (b) | z (b) |"), "{md}");
        assert!(md.contains("| x (a) | ok | skip |"), "{md}");
        assert!(md.contains("| w (a) | FAILED | skip |"), "{md}");
        assert_eq!(md.matches("no such group").count(), 1, "{md}");
        assert!(md.contains("- FAILED, w (a) client, y (b) server: reset"), "{md}");
    }
}
