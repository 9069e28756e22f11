//! The siege-style comparison (`https-compare`): every library's HTTPS
//! server (`https-serve`'s, in this process), plaintext HTTP and nginx,
//! each loaded by the same client (one library's `https-load`) with the
//! same users, body and duration, in interleaved rounds: each round visits
//! every server of a row in a fresh order, so a slow spell of the machine
//! hits them alike, and each server's figure is the median of its rounds
//! with a bootstrap interval of its ratio to the row's best (paired by
//! round, [`tls_bench_results::stats`]). The independent tools (wrk, siege, h2load;
//! [`super::external`]) load the client library's own server and nginx in
//! the same rounds, so each tool's rate is set beside `https-load`'s on the
//! same server and settings as a ratio paired by round.
//!
//! Libraries of other builds (`--variants`: BoringSSL, the system's
//! OpenSSL, ...) are served by that build's own `https-serve` as a child
//! process ([`super::child`]), loaded in the same rounds by the same client;
//! so are the servers of other runtimes (`--runtimes`: Go's crypto/tls,
//! [`super::runtimes`]).
//!
//! The servers (nginx's workers too) run on one half of the cores and
//! every client (ours and the tools) on the other, so a client never takes
//! a server's core; each client's CPU share is reported, and a client near
//! 100% of its cores, not the server, set that rate (wrk's users check the
//! same of wrk).

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::{Context, Result, bail};

use super::{
    Library,
    child::{Build, ChildOptions, ChildServer},
    external::{Tool, ToolLoad, ToolRun},
    https::Http,
    nginx::Nginx,
    serve::{self, Running, ServeOptions, Summary},
    siege::{self, SiegeOptions, SiegeReport},
    threads::CoreTimes,
};
use tls_bench_harness::{error::ConfigureError, params::Params};
use tls_bench_results::{
    https::{CompareRow, CompareRun, CompareServer, ToolResult},
    stats::{median, paired_ratio},
};

/// The name of nginx's rows.
pub const NGINX: &str = "nginx";

/// What to compare.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// One row per parameter set and mode.
    pub params: Vec<Params>,
    /// Keep-alive (`true`) and new-connection (`false`) rows.
    pub keep_alive: Vec<bool>,
    /// The client library every server is loaded with.
    pub client: String,
    /// Users at once.
    pub concurrent: usize,
    /// Each server's time per round.
    pub duration: Duration,
    /// Rounds.
    pub rounds: usize,
    /// Response body, bytes.
    pub body: usize,
    /// Threads of each server (and nginx's workers) and of the client.
    pub threads: usize,
    /// The cores the servers run on (empty: not pinned).
    pub server_cores: Vec<usize>,
    /// The cores the clients (ours and the tools) run on (empty: not
    /// pinned).
    pub client_cores: Vec<usize>,
    /// Other builds, each library served by its own `https-serve`.
    pub others: Vec<Build>,
    /// Include nginx.
    pub nginx: bool,
    /// Run the independent tools.
    pub external: bool,
    /// Where nginx's files and the tools' rc files go.
    pub work: PathBuf,
}

/// A server of a row: one of ours, another build's, or nginx.
enum Server {
    Ours(Box<Running>),
    Child(ChildServer),
    Nginx(Nginx),
}

impl Server {
    fn addr(&self) -> std::net::SocketAddr {
        match self {
            Server::Ours(r) => r.addr(),
            Server::Child(c) => c.addr(),
            Server::Nginx(n) => n.addr(),
        }
    }

    /// Why it no longer serves, if it does not ([`ChildServer::down`],
    /// [`Nginx::down`]); this process's servers go down only with it.
    fn down(&mut self) -> Option<String> {
        match self {
            Server::Ours(_) => None,
            Server::Child(c) => c.down(),
            Server::Nginx(n) => n.down(),
        }
    }

    /// nginx's CPU seconds so far (`None` for the others, whose summary
    /// holds theirs). Errors: `/proc` not read.
    fn nginx_cpu_seconds(&self) -> Result<Option<f64>> {
        match self {
            Server::Nginx(n) => n.cpu_seconds().map(Some),
            _ => Ok(None),
        }
    }

    /// Stops it; its summary (`None` for nginx, which gives none).
    /// Errors: it did not stop well.
    fn stop(self) -> Result<Option<Summary>> {
        match self {
            Server::Ours(r) => r.stop().map(Some),
            Server::Child(c) => c.stop().map(Some),
            Server::Nginx(n) => {
                drop(n);
                Ok(None)
            }
        }
    }
}

/// Runs the comparison; `progress` is told each slice. A server that
/// dies or stops answering during the run (checked before and after each
/// of its slices: its process exited or is stopped, or it completed no
/// transaction in a slice), does not stop well, or counted a failed check
/// of a connection is said on stderr at once, loaded no more, and its row
/// marked failed ([`CompareServer::failure`], [`CompareRun::failures`]);
/// the other servers' rows are measured and returned. Errors: the client
/// library cannot do a row's parameters, a server cannot start (nginx not
/// installed: named, with what to install), a tool fails against a server
/// that is up.
pub fn run(
    libraries: &[Box<dyn Library>],
    client: &dyn Library,
    options: &CompareOptions,
    progress: &dyn Fn(&str),
) -> Result<CompareRun> {
    if options.rounds == 0 || options.concurrent == 0 {
        bail!("rounds and users must be at least 1");
    }
    let nginx_version = if options.nginx { Some(Nginx::version()?) } else { None };
    let mut rows = Vec::new();
    for params in &options.params {
        for &keep_alive in &options.keep_alive {
            rows.push(row(libraries, client, options, params, keep_alive, progress)?);
        }
    }
    Ok(CompareRun {
        client: client.name(),
        concurrent: options.concurrent,
        seconds: options.duration.as_secs_f64(),
        rounds: options.rounds,
        body: options.body,
        threads: options.threads,
        server_cores: options.server_cores.clone(),
        client_cores: options.client_cores.clone(),
        nginx: nginx_version,
        rows,
    })
}

/// What one slot of a round runs: `https-load` against a server, or a
/// tool against one.
#[derive(Clone, Copy)]
enum Slot {
    Load(usize),
    Tool(usize, Tool),
}

/// The median of `rates` and the index of the round nearest it.
fn at_median(rates: &[f64]) -> (f64, usize) {
    let rate = median(rates).unwrap_or(0.0);
    let k = rates
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - rate).abs().total_cmp(&(b.1 - rate).abs()))
        .map_or(0, |(k, _)| k);
    (rate, k)
}

fn row(
    libraries: &[Box<dyn Library>],
    client: &dyn Library,
    options: &CompareOptions,
    params: &Params,
    keep_alive: bool,
    progress: &dyn Fn(&str),
) -> Result<CompareRow> {
    let mode = if keep_alive { "keep-alive" } else { "new-connection" };
    let serve_options = ServeOptions {
        params: *params,
        listen: "127.0.0.1:0".parse().expect("an address"),
        threads: options.threads,
        handshake_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(60),
        max_connections: 100_000,
        cores: options.server_cores.clone(),
    };
    // Every server of the row, started once; each idles while another runs.
    let mut servers: Vec<(String, Server)> = Vec::new();
    let mut variants: Vec<String> = Vec::new();
    let mut skipped = Vec::new();
    for lib in libraries {
        match lib.server(params, &super::https::SERVER) {
            Err(ConfigureError::Unsupported(why)) => {
                skipped.push((lib.name(), why));
                continue;
            }
            Err(ConfigureError::Failed(e)) => return Err(e.context(format!("{} {params}", lib.name()))),
            Ok(_) => {}
        }
        let running = serve::start_with(&**lib, &serve_options, Arc::new(Http::new(options.body)))?;
        servers.push((lib.name(), Server::Ours(Box::new(running))));
        variants.push("default".to_string());
    }
    for build in &options.others {
        for library in &build.libraries {
            if servers.iter().any(|(n, _)| n == library) {
                bail!("library {library} is in this build and in variant {}: leave one out", build.variant);
            }
            match super::child::probe(&build.exe, library, params) {
                Err(ConfigureError::Unsupported(why)) => {
                    skipped.push((library.clone(), why));
                    continue;
                }
                Err(ConfigureError::Failed(e)) => return Err(e.context(format!("{library} {params}"))),
                Ok(()) => {}
            }
            let child = ChildServer::start(
                &build.exe,
                library,
                params,
                &ChildOptions {
                    threads: options.threads,
                    cores: options.server_cores.clone(),
                    body: options.body,
                    echo: false,
                    max_connections: serve_options.max_connections,
                    timeouts: None,
                    json: options.work.join(format!("{library}.summary.json")),
                },
            )?;
            servers.push((library.clone(), Server::Child(child)));
            variants.push(build.variant.clone());
        }
    }
    if options.nginx {
        let dir = options.work.join("nginx");
        servers.push((
            NGINX.to_string(),
            Server::Nginx(Nginx::start(&dir, params, options.body, options.threads, &options.server_cores)?),
        ));
        variants.push("system".to_string());
    }
    let plaintext = super::find(super::PLAINTEXT)?;
    let siege_options = |addr| SiegeOptions {
        params: *params,
        connect: addr,
        clients: options.concurrent,
        requests: None,
        duration: Some(options.duration),
        body: options.body,
        keep_alive,
        threads: options.threads,
        cores: options.client_cores.clone(),
        timeout: Duration::from_secs(10),
        progress: false,
    };
    // The slots of a round: every server under https-load, then the tools
    // against the client library's own server and nginx.
    let mut slots: Vec<Slot> = (0..servers.len()).map(Slot::Load).collect();
    if options.external {
        for (i, (name, _)) in servers.iter().enumerate() {
            if *name != client.name() && name != NGINX {
                continue;
            }
            for tool in Tool::ALL {
                if keep_alive || tool.new_connections(params.cert) {
                    slots.push(Slot::Tool(i, tool));
                }
            }
        }
    }
    let mut reports: Vec<Vec<SiegeReport>> = vec![Vec::new(); servers.len()];
    // How busy the servers' cores were in each of a server's https-load slices.
    let mut busy: Vec<Vec<Option<f64>>> = vec![Vec::new(); servers.len()];
    let slice_busy = |before: &CoreTimes| -> Result<Option<f64>> {
        Ok(CoreTimes::read()?.busy_since(before, &options.server_cores))
    };
    let mut tool_runs: Vec<Vec<ToolRun>> = vec![Vec::new(); slots.len()];
    // Why each server failed, once it did: it is loaded no more, and its
    // row says so ([`CompareServer::failure`]).
    let mut failed: Vec<Option<String>> = vec![None; servers.len()];
    let mut rng = oorandom::Rand64::new(0x5e1e_9e00 ^ options.rounds as u128);
    for round in 0..options.rounds {
        let mut order: Vec<usize> = (0..slots.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.rand_range(0..(i as u64 + 1)) as usize);
        }
        if round == 0 {
            // Every server's https-load slice first, so a tool run by
            // repetitions (siege) has a rate to size them from.
            order.sort_by_key(|&k| matches!(slots[k], Slot::Tool(..)));
        }
        for k in order {
            let what =
                |name: &str| format!("{params} {mode}, round {} of {}: {name}", round + 1, options.rounds);
            let (Slot::Load(i) | Slot::Tool(i, _)) = slots[k];
            // A server found down (between slices: it died, or it is
            // stopped) is said at once and loaded no more.
            let when = format!("round {} of {} ({params} {mode})", round + 1, options.rounds);
            let check_down = |servers: &mut Vec<(String, Server)>, failed: &mut Vec<Option<String>>| {
                if failed[i].is_none()
                    && let Some(why) = servers[i].1.down()
                {
                    eprintln!("error: server {} failed in {when}: {why}; it is loaded no more", servers[i].0);
                    failed[i] = Some(why);
                }
            };
            check_down(&mut servers, &mut failed);
            if failed[i].is_some() {
                continue;
            }
            match slots[k] {
                Slot::Load(_) => {
                    let (name, server) = &servers[i];
                    progress(&what(name));
                    // Plaintext HTTP is loaded by a plaintext client, the
                    // rest by the client library.
                    let loader: &dyn Library = if name == super::PLAINTEXT { &*plaintext } else { client };
                    let before = CoreTimes::read()?;
                    let report = siege::run(loader, &siege_options(server.addr()))
                        .with_context(|| format!("loading {name}"))?;
                    busy[i].push(slice_busy(&before)?);
                    let answered = report.transactions > 0;
                    reports[i].push(report);
                    check_down(&mut servers, &mut failed);
                    if failed[i].is_none() && !answered {
                        // Alive, but no transaction completed in a whole
                        // slice: not answering (hung, or refusing).
                        let why = format!(
                            "answered no transaction in a {:?} slice ({})",
                            options.duration,
                            reports[i].last().and_then(|r| r.unmeasured()).unwrap_or_default()
                        );
                        eprintln!(
                            "error: server {} failed in {when}: {why}; it is loaded no more",
                            servers[i].0
                        );
                        failed[i] = Some(why);
                    }
                }
                Slot::Tool(_, tool) => {
                    let (name, server) = &servers[i];
                    progress(&what(&format!("{} against {name}", tool.name())));
                    // siege on new connections by repetitions (there its
                    // -t ran past its time, as in JoeDog/siege#178): as
                    // many as https-load's median rate on this server
                    // answers in a slice.
                    let rates: Vec<f64> = reports[i].iter().map(|r| r.transaction_rate).collect();
                    let reps = median(&rates).filter(|_| tool == Tool::Siege && !keep_alive).map(|rate| {
                        (rate * options.duration.as_secs_f64() / options.concurrent as f64).ceil().max(1.0)
                            as u32
                    });
                    let load = ToolLoad {
                        reps,
                        url: format!("https://{}/", server.addr()),
                        concurrent: options.concurrent as u32,
                        threads: options.threads,
                        duration: options.duration,
                        keep_alive,
                        cert: params.cert,
                        dir: options.work.join("tools"),
                        cores: options.client_cores.clone(),
                    };
                    let before = CoreTimes::read()?;
                    let ran = super::external::run(tool, &load);
                    check_down(&mut servers, &mut failed);
                    match ran {
                        // The tool failed because its server went down:
                        // the server's failure, said above.
                        Err(_) if failed[i].is_some() => {}
                        Err(e) => return Err(e),
                        Ok(mut run) => {
                            run.server_cpu_share = slice_busy(&before)?;
                            tool_runs[k].push(run);
                        }
                    }
                }
            }
        }
    }
    // Every server stopped, its own failures read: a server that does not
    // stop well, or counted a failed check, is a failed row.
    let mut names = Vec::new();
    let mut server_errors = Vec::new();
    let mut server_cpu = Vec::new();
    for (i, (name, mut server)) in servers.into_iter().enumerate() {
        if let Some(why) = server.down() {
            failed[i].get_or_insert(why);
        }
        if failed[i].is_some() {
            // Killed with its process group as it is dropped.
            drop(server);
            names.push(name);
            server_errors.push(Default::default());
            server_cpu.push(None);
            continue;
        }
        let nginx_cpu = server.nginx_cpu_seconds()?;
        let summary = match server.stop() {
            Ok(summary) => summary,
            Err(e) => {
                let why = format!("stopping it: {e:#}");
                eprintln!("error: server {name} failed, {params} {mode}: {why}");
                failed[i] = Some(why);
                None
            }
        };
        server_cpu.push(match nginx_cpu {
            // nginx: over every client's transactions, https-load's and the tools'.
            Some(cpu) => {
                let tools: u64 = slots
                    .iter()
                    .zip(&tool_runs)
                    .filter(|(slot, _)| matches!(slot, Slot::Tool(j, _) if *j == i))
                    .flat_map(|(_, runs)| runs.iter().map(|r| r.transactions))
                    .sum();
                let requests = reports[i].iter().map(|r| r.successful_transactions).sum::<u64>() + tools;
                (requests > 0).then(|| cpu * 1e6 / requests as f64)
            }
            None => {
                summary.as_ref().filter(|s| s.requests > 0).map(|s| s.cpu_seconds * 1e6 / s.requests as f64)
            }
        });
        let errors = summary.map(|s| (s.errors, s.error_examples)).unwrap_or_default();
        for kind in [super::ErrorKind::Negotiated, super::ErrorKind::Corrupt] {
            if let Some(n) = errors.0.get(&kind)
                && failed[i].is_none()
            {
                failed[i] = Some(format!(
                    "{n} connections failed the {} check on the server (first: {})",
                    kind.name(),
                    errors.1.first().map_or("-", String::as_str)
                ));
            }
        }
        server_errors.push(errors.0);
        names.push(name);
    }
    let rates: Vec<Vec<f64>> =
        reports.iter().map(|r| r.iter().map(|r| r.transaction_rate).collect()).collect();
    // The row's best: its fastest TLS server (plaintext HTTP is not one,
    // nor a server that failed).
    let best = (0..names.len())
        .filter(|&i| names[i] != super::PLAINTEXT && failed[i].is_none())
        .max_by(|&a, &b| median(&rates[a]).unwrap_or(0.0).total_cmp(&median(&rates[b]).unwrap_or(0.0)));
    let mut results = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let (rate, k) = at_median(&rates[i]);
        results.push(CompareServer {
            server: name.clone(),
            rate,
            slower_than_best: best
                .filter(|_| failed[i].is_none())
                .and_then(|b| paired_ratio(&rates[b], &rates[i])),
            report: reports[i].get(k).cloned().unwrap_or_default(),
            failed: reports[i].iter().map(|r| r.failed_transactions).sum(),
            errors: reports[i].iter().flat_map(|r| r.errors.iter()).fold(
                Default::default(),
                |mut m, (k, n)| {
                    *m.entry(*k).or_default() += n;
                    m
                },
            ),
            first_error: reports[i].iter().find_map(|r| r.error_examples.first().cloned()),
            rates: rates[i].clone(),
            variant: variants[i].clone(),
            server_errors: server_errors[i].clone(),
            server_cpu_us_per_request: server_cpu[i],
            server_cpu_share: busy[i].get(k).copied().flatten(),
            failure: failed[i].clone(),
        });
    }
    // Fastest first, the failed last.
    results.sort_by(|a, b| a.failure.is_some().cmp(&b.failure.is_some()).then(b.rate.total_cmp(&a.rate)));
    let mut external = Vec::new();
    for (k, slot) in slots.iter().enumerate() {
        if let Slot::Tool(i, _) = *slot {
            // A tool against a server that failed: no figure beside it.
            if failed[i].is_some() || tool_runs[k].is_empty() {
                continue;
            }
            let tool_rates: Vec<f64> = tool_runs[k].iter().map(|t| t.transaction_rate).collect();
            let (rate, m) = at_median(&tool_rates);
            external.push(ToolResult {
                server: names[i].clone(),
                over_https_load: paired_ratio(&tool_rates, &rates[i]),
                rates: tool_rates,
                rate,
                run: tool_runs[k][m].clone(),
            });
        }
    }
    Ok(CompareRow {
        parameters: params.to_string(),
        mode: mode.to_string(),
        servers: results,
        skipped,
        external,
    })
}

/// The files a run writes into its `--out` ([`tls_bench_results::outdir::RunDir`]).
pub fn owns(name: &str) -> bool {
    matches!(name, "results.json" | "results.md")
}

/// Writes `run` into `dir`: `results.json` and `results.md`. Errors: a
/// file cannot be written.
pub fn write(run: &CompareRun, dir: &Path) -> Result<()> {
    std::fs::write(dir.join("results.json"), serde_json::to_string_pretty(run)? + "\n")
        .context("writing results.json")?;
    std::fs::write(dir.join("results.md"), run.markdown()).context("writing results.md")?;
    Ok(())
}
