//! `https-soak`: every library's HTTPS server (each in its own process) and
//! nginx under steady siege-style load at once, their RSS sampled every
//! second; a table of start, peak, end and last-half slope, an SVG of RSS
//! over time, and a flag on any server whose memory keeps growing. See
//! docs/https.md.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result, bail};
use clap::Parser;
use tls_bench_results::outdir::RunDir;
use tls_bench_sockets::{
    self as sockets,
    cli::{ParamsArgs, client_library, cores, duration_arg, print},
    interrupt::{self, OnSignal},
    runtimes,
    soak::{SoakOptions, owns, run},
};

/// RSS over time under steady HTTPS load, every library and nginx.
#[derive(Parser)]
#[command(name = "https-soak", version)]
struct Cli {
    #[command(flatten)]
    params: ParamsArgs,
    /// How long [default: 10m; --quick: 5s].
    #[arg(short = 't', long, value_parser = duration_arg)]
    time: Option<Duration>,
    /// Users per server.
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrent: u32,
    /// Keep connections alive (default: a new connection per request).
    #[arg(long)]
    keep_alive: bool,
    /// Body bytes.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=64 * 1024 * 1024))]
    body: u32,
    /// Threads of each server and each load [default: 1].
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// Flag a server whose RSS grows faster than this over the last half,
    /// KiB per minute.
    #[arg(long, default_value_t = 256.0)]
    max_growth: f64,
    /// The client library loading nginx and the other runtimes' servers
    /// [default: the first TLS library].
    #[arg(long)]
    client: Option<String>,
    /// Other runtimes' servers soaked too, comma-separated, `all` or `none`
    /// [default: all]: `go`, `node`, `java`, `jss`, `erlang` (docs/https.md, "Other
    /// runtimes").
    #[arg(long, value_delimiter = ',')]
    runtimes: Vec<String>,
    /// Leave nginx out.
    #[arg(long)]
    no_nginx: bool,
    /// Seconds, for CI.
    #[arg(long)]
    quick: bool,
    /// Results directory: results.json, results.md, rss.svg.
    #[arg(long, default_value = "target/https-soak/latest")]
    out: PathBuf,
}

fn main() -> ExitCode {
    interrupt::exit_code(run_cli(tls_bench_harness::parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    let params = cli.params.params()?;
    if !(cli.max_growth.is_finite() && cli.max_growth >= 0.0) {
        bail!("--max-growth {}: must be a number of KiB per minute, 0 or more", cli.max_growth);
    }
    let libraries = sockets::libraries();
    let client = client_library(cli.client.as_deref())?;
    runtimes::select(&cli.runtimes)?;
    let out = RunDir::prepare(&cli.out, owns)?;
    // A signal stops every server this run started, removes the staged
    // results directory, then exits.
    interrupt::install(OnSignal::Exit)?;
    interrupt::remove_on_exit(out.path());
    let options = SoakOptions {
        params,
        concurrent: cli.concurrent as usize,
        duration: cli.time.unwrap_or(Duration::from_secs(if cli.quick { 5 } else { 600 })),
        keep_alive: cli.keep_alive,
        body: cli.body as usize,
        threads: usize::from(cli.threads).min(cores().max(1)),
        max_growth_kib_per_min: cli.max_growth,
        nginx: !cli.no_nginx,
        work: cli.out.with_file_name("work"),
    };
    let others = runtimes::servers(&cli.runtimes)?;
    let soak = run(&libraries, &others, &*client, &options)?;
    let md = soak.markdown();
    let printed = print(&md);
    std::fs::write(out.path().join("results.json"), serde_json::to_string_pretty(&soak)? + "\n")
        .context("writing results.json")?;
    std::fs::write(out.path().join("results.md"), &md).context("writing results.md")?;
    tls_bench_sockets::soak::svg(&soak, &out.path().join("rss.svg"))?;
    out.commit()?;
    eprintln!("results in {}", cli.out.display());
    printed?;
    let growing: Vec<&str> =
        soak.servers.iter().filter(|s| s.growing == Some(true)).map(|s| s.server.as_str()).collect();
    let failures = soak.failures();
    if !failures.is_empty() {
        bail!("servers that failed (every other row is in the results):\n  {}", failures.join("\n  "));
    }
    let unmeasured = soak.unmeasured();
    if !unmeasured.is_empty() {
        bail!("rows that did not measure what was asked:\n  {}", unmeasured.join("\n  "));
    }
    if !growing.is_empty() {
        bail!("RSS still growing past {} KiB/min: {}", cli.max_growth, growing.join(", "));
    }
    Ok(())
}
