//! Memory over time under load (`https-soak`): each library's HTTPS server
//! in a process of its own (the `https-serve` binary beside this one), and
//! nginx, all under steady siege-style load at once for the soak's
//! duration, their resident set sizes sampled every second from
//! `/proc/PID/statm` ([`super::rss`]). A server whose RSS still grows over
//! the last half of the run, faster than a threshold, is flagged: under a
//! steady load a server's memory should level off.

use std::{
    fs,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, bail};

use super::{
    Library,
    child::{Build, ChildOptions, ChildServer},
    nginx::Nginx,
    process,
    siege::SiegeOptions,
};
use tls_bench_harness::{error::ConfigureError, params::Params};
use tls_bench_results::{
    https::{SoakRun, SoakServer},
    sockets::RssTrace,
};

/// What to soak.
#[derive(Clone, Debug)]
pub struct SoakOptions {
    /// The parameter set every server serves.
    pub params: Params,
    /// Users per server.
    pub concurrent: usize,
    /// How long.
    pub duration: Duration,
    /// Keep-alive (else a new connection per request).
    pub keep_alive: bool,
    /// Body bytes.
    pub body: usize,
    /// Threads of each server and each load.
    pub threads: usize,
    /// Flag a server whose last-half RSS slope is above this, KiB/min.
    pub max_growth_kib_per_min: f64,
    /// Include nginx (loaded by `nginx_client`).
    pub nginx: bool,
    /// Where the servers' logs and nginx's files go.
    pub work: PathBuf,
}

/// Samples a run needs before a server is judged growing or not (20 s).
pub const MIN_SAMPLES: usize = 20;

/// A server process being soaked.
enum Proc {
    Ours(ChildServer),
    Nginx(Nginx),
}

impl Proc {
    fn rss_kib(&self) -> Result<u64> {
        match self {
            Proc::Ours(child) => process::rss_kib(Some(child.pid())),
            Proc::Nginx(n) => n.rss_kib(),
        }
    }

    /// Why it no longer serves, if it does not ([`ChildServer::down`],
    /// [`Nginx::down`]).
    fn down(&mut self) -> Option<String> {
        match self {
            Proc::Ours(child) => child.down(),
            Proc::Nginx(n) => n.down(),
        }
    }

    /// Stops it: SIGINT for ours ([`ChildServer::stop`]), nginx dropped.
    /// Errors: ours did not stop in 15 s, or exited with a failure.
    fn stop(self) -> Result<()> {
        match self {
            Proc::Ours(child) => child.stop().map(|_summary| ()),
            Proc::Nginx(n) => {
                drop(n);
                Ok(())
            }
        }
    }
}

/// Starts `https-serve` (beside this executable) for `library`; returns it
/// and its address once it listens. Errors: the binary is missing (build it
/// with `cargo build --release --bin https-serve`), it exits or says
/// nothing in time ([`ChildServer::start`]).
fn start_ours(library: &str, options: &SoakOptions) -> Result<(Proc, SocketAddr)> {
    let exe = std::env::current_exe().context("finding this executable")?.with_file_name("https-serve");
    if !exe.is_file() {
        bail!("{} not found: build it with `cargo build --release --bin https-serve`", exe.display());
    }
    start_child(&exe, library, options)
}

/// Starts `library` of the server `exe` as a child process (this build's
/// `https-serve`, or another runtime's server).
fn start_child(exe: &Path, library: &str, options: &SoakOptions) -> Result<(Proc, SocketAddr)> {
    let child = ChildServer::start(
        exe,
        library,
        &options.params,
        &ChildOptions {
            threads: options.threads,
            cores: Vec::new(),
            body: options.body,
            echo: false,
            max_connections: 10_000,
            timeouts: None,
            json: options.work.join(format!("{library}.summary.json")),
        },
    )?;
    let addr = child.addr();
    Ok((Proc::Ours(child), addr))
}

/// Runs the soak: every server of `libraries` that serves the parameters,
/// every library of `others` (other runtimes' servers, [`super::runtimes`])
/// that does (a printed skip with its reason if not), and nginx, each
/// loaded at once by its own library's client (plaintext HTTP by
/// plaintext; nginx and the others by `other_client`). A server that dies
/// or stops during the soak, or does not stop well, is said on stderr at
/// once and its row marked failed ([`SoakServer::failure`]); the others
/// go on. Errors: a server cannot start or its probe fails, a load fails
/// to run, a running server's sample cannot be read.
pub fn run(
    libraries: &[Box<dyn Library>],
    others: &[Build],
    other_client: &dyn Library,
    options: &SoakOptions,
) -> Result<SoakRun> {
    fs::create_dir_all(&options.work).with_context(|| format!("creating {}", options.work.display()))?;
    // Each server with its address and the library loading it.
    let mut servers: Vec<(String, Proc, SocketAddr, String)> = Vec::new();
    for lib in libraries {
        if lib.server(&options.params, &super::https::SERVER).is_err()
            || lib.client(&options.params, &super::https::CLIENT).is_err()
        {
            eprintln!("skip {}: it does not serve {}", lib.name(), options.params);
            continue;
        }
        let (proc, addr) = start_ours(&lib.name(), options)?;
        servers.push((lib.name(), proc, addr, lib.name()));
    }
    for build in others {
        for library in &build.libraries {
            match super::child::probe(&build.exe, library, &options.params) {
                Err(ConfigureError::Unsupported(why)) => {
                    eprintln!("skip {library}: {why}");
                    continue;
                }
                Err(ConfigureError::Failed(e)) => {
                    return Err(e.context(format!("{library} {}", options.params)));
                }
                Ok(()) => {}
            }
            let (proc, addr) = start_child(&build.exe, library, options)?;
            servers.push((library.clone(), proc, addr, other_client.name()));
        }
    }
    if options.nginx {
        let n =
            Nginx::start(&options.work.join("nginx"), &options.params, options.body, options.threads, &[])?;
        let addr = n.addr();
        servers.push((super::https_compare::NGINX.to_string(), Proc::Nginx(n), addr, other_client.name()));
    }
    // Every server sampled every second, here, while the loads run; a
    // server found down is said at once, sampled no more, its load stopped
    // (at each user's next transaction), and its row marked failed.
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); servers.len()];
    let mut failed: Vec<Option<String>> = vec![None; servers.len()];
    let stops: Vec<Arc<AtomicBool>> = servers.iter().map(|_| Arc::default()).collect();
    let started = Instant::now();
    let mut sample = |servers: &mut Vec<(String, Proc, SocketAddr, String)>| -> Result<()> {
        for (i, (name, proc, _, _)) in servers.iter_mut().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            if let Some(why) = proc.down() {
                eprintln!(
                    "error: server {name} failed {:.0} s into the soak: {why}; its row is marked failed",
                    started.elapsed().as_secs_f64()
                );
                failed[i] = Some(why);
                stops[i].store(true, Relaxed);
                continue;
            }
            samples[i].push(proc.rss_kib().with_context(|| format!("sampling {name}'s RSS"))?);
        }
        Ok(())
    };
    sample(&mut servers)?;
    let loads: Vec<_> = servers
        .iter()
        .zip(&stops)
        .map(|((_, _, addr, client), stop)| {
            let loader = super::find(client);
            let siege = SiegeOptions {
                params: options.params,
                connect: *addr,
                clients: options.concurrent,
                requests: None,
                duration: Some(options.duration),
                body: options.body,
                keep_alive: options.keep_alive,
                threads: options.threads,
                cores: Vec::new(),
                timeout: Duration::from_secs(10),
                progress: false,
            };
            let stop = stop.clone();
            std::thread::spawn(move || super::siege::run_until(&*loader?, &siege, Some(stop)))
        })
        .collect();
    let mut next = started + Duration::from_secs(1);
    while !loads.iter().all(|l| l.is_finished()) {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next += Duration::from_secs(1);
        sample(&mut servers)?;
    }
    // One last look: a server that died in the last second.
    sample(&mut servers)?;
    let mut results = Vec::new();
    for (((name, proc, _, _), (load, samples)), mut failure) in
        servers.into_iter().zip(loads.into_iter().zip(samples)).zip(failed)
    {
        let load = load.join().map_err(|_| anyhow!("the load of {name} panicked"))??;
        if failure.is_none()
            && let Err(e) = proc.stop()
        {
            let why = format!("stopping it: {e:#}");
            eprintln!("error: server {name} failed: {why}");
            failure = Some(why);
        }
        let rss = RssTrace::of(samples, Duration::from_secs(1));
        let growing = (failure.is_none() && rss.samples_kib.len() >= MIN_SAMPLES)
            .then(|| rss.slope_last_half_kib_per_min.is_some_and(|s| s > options.max_growth_kib_per_min));
        results.push(SoakServer { server: name, rss, growing, load, failure });
    }
    Ok(SoakRun {
        parameters: options.params.to_string(),
        seconds: options.duration.as_secs_f64(),
        concurrent: options.concurrent,
        mode: if options.keep_alive { "keep-alive" } else { "new-connection" }.to_string(),
        max_growth_kib_per_min: options.max_growth_kib_per_min,
        servers: results,
    })
}

/// Draws RSS (MiB) over time (s) of `run`, one line per server, into `path`.
/// Errors: the file cannot be written.
pub fn svg(run: &SoakRun, path: &Path) -> Result<()> {
    use tls_bench_charts::{self as charts, Drawn, LegendPlace, plotters::prelude::ChartBuilder};
    charts::svg(path, (900, 500), |root| {
        let max_s =
            run.servers.iter().map(|s| s.rss.samples_kib.len()).max().unwrap_or(1).max(2) as f64 - 1.0;
        let max_mib = run.servers.iter().map(|s| s.rss.peak_kib).max().unwrap_or(1) as f64 / 1024.0 * 1.1;
        let mut chart = ChartBuilder::on(root)
            .caption(format!("RSS under load, {} {}", run.parameters, run.mode), charts::font(16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(0f64..max_s, 0f64..max_mib)
            .drawn()?;
        chart.configure_mesh().x_desc("seconds").y_desc("RSS, MiB").draw().drawn()?;
        for (i, s) in run.servers.iter().enumerate() {
            let color = charts::palette99(i);
            let points = s.rss.samples_kib.iter().enumerate().map(|(t, &k)| (t as f64, k as f64 / 1024.0));
            let key = charts::line_key(color, 16, charts::LINE_WIDTH);
            charts::line(&mut chart, points, color)?.label(s.server.clone()).legend(key);
        }
        charts::series_legend(&mut chart, LegendPlace::LowerRight)
    })
}

/// The files a run writes into its `--out`.
pub fn owns(name: &str) -> bool {
    matches!(name, "results.json" | "results.md" | "rss.svg")
}
