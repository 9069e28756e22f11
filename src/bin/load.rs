//! `load`: clients of one library against an echo server (`serve`, or any
//! TLS echo server), each message checked byte for byte and each handshake
//! for what it negotiated; requests/s, MB/s, handshakes/s and latency
//! percentiles. See docs/sockets.md.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result, bail};
use clap::Parser;
use tls_bench_sockets::{
    self as sockets,
    cli::{
        ClientArgs, ParamsArgs, check_json, cores, duration_arg, print, print_libraries, print_probe,
        socket_addr_arg, write_json,
    },
    interrupt::{self, OnSignal, exit_code},
    load::{self, LoadOptions, run},
};

/// A load client for one library and parameter set.
#[derive(Parser)]
#[command(name = "load", version)]
struct Cli {
    /// The client library (as `serve --library`); it may differ from the
    /// server's.
    #[arg(long, required_unless_present_any = ["merge", "list"])]
    library: Option<String>,
    /// List the libraries of this build and exit.
    #[arg(long, conflicts_with = "merge")]
    list: bool,
    /// Configure the client for the parameters, print `supported` or
    /// `unsupported: <why>`, and exit (0 both; 1 if configuring failed):
    /// `interop` asks another build's client this before running it.
    #[arg(long, conflicts_with = "merge")]
    probe: bool,
    /// Instead of a run: merge the `--json` reports of several clients
    /// that ran at once against one server (other hosts, say) into one
    /// report, latencies from their merged histograms.
    #[arg(long, num_args = 1.., value_name = "REPORT.json", conflicts_with = "library")]
    merge: Vec<PathBuf>,
    #[command(flatten)]
    params: ParamsArgs,
    /// The server's address: an IP address and a port.
    #[arg(long, default_value = "127.0.0.1:4433", value_parser = socket_addr_arg)]
    connect: SocketAddr,
    /// Clients at once, each on one connection at a time.
    #[arg(short = 'c', long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    connections: u32,
    /// Requests per client [default: 1000 unless --duration].
    #[arg(short = 'n', long, conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..))]
    requests: Option<u64>,
    /// Run for this long instead (e.g. 10s).
    #[arg(short = 'd', long, value_parser = duration_arg)]
    duration: Option<Duration>,
    /// Bytes per message, each way (0 to 16 MiB); 0: handshakes only, a new
    /// connection each, closed once its handshake is done.
    #[arg(short = 's', long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=16 * 1024 * 1024))]
    message: u32,
    /// A new connection and handshake per request (default: one connection
    /// kept alive per client). With `--kind resumption`, each one resumes
    /// the ticket of the one before.
    #[arg(long)]
    new_connection: bool,
    /// Open loop: this many requests per second in all, each timed from
    /// its intended send time (as wrk2); default: closed loop.
    #[arg(short = 'R', long)]
    rate: Option<f64>,
    #[command(flatten)]
    client: ClientArgs,
}

fn main() -> ExitCode {
    exit_code(run_cli(tls_bench_harness::parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    if !cli.merge.is_empty() {
        let mut seen = Vec::new();
        for p in &cli.merge {
            let resolved = std::fs::canonicalize(p).with_context(|| format!("reading {}", p.display()))?;
            if seen.contains(&resolved) {
                bail!("{} is given twice: give each client's report once", p.display());
            }
            seen.push(resolved);
        }
        check_json(cli.client.json.as_ref())?;
        let reports = cli
            .merge
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
                serde_json::from_str(&text)
                    .with_context(|| format!("{}: not a load report (load --json)", p.display()))
            })
            .collect::<Result<Vec<load::Report>>>()?;
        let merged = load::merge(&reports)?;
        let printed = print(&merged.to_table());
        write_json(cli.client.json.as_ref(), &merged)?;
        return printed;
    }
    if cli.list {
        return print_libraries();
    }
    let library = sockets::find(cli.library.as_deref().unwrap_or_default())?;
    let params = cli.params.params()?;
    if cli.probe {
        return print_probe(
            &*library,
            &params,
            library.client(&params, &sockets::Extensions::NONE).map(|_| ()),
        );
    }
    check_json(cli.client.json.as_ref())?;
    interrupt::install(OnSignal::Report)?;
    let options = LoadOptions {
        params,
        connect: cli.connect,
        connections: cli.connections as usize,
        requests: if cli.duration.is_none() { Some(cli.requests.unwrap_or(1000)) } else { None },
        duration: cli.duration,
        message: cli.message as usize,
        new_connection: cli.new_connection,
        rate: cli.rate,
        threads: cli.client.threads.map_or_else(cores, usize::from),
        cores: cli.client.cores.clone(),
        timeout: cli.client.timeout,
        progress: !cli.client.quiet,
    };
    let report = run(&*library, &options)?;
    let printed = print(&report.to_table());
    write_json(cli.client.json.as_ref(), &report)?;
    printed?;
    if report.interrupted {
        // Exits 130 or 143 (interrupt::exit_code): the report is partial.
        return Ok(());
    }
    let failed: u64 = report.errors.values().sum();
    let kinds: Vec<String> = report.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    if report.requests == 0 {
        bail!("no request was echoed back ({}): nothing measured", kinds.join(", "));
    }
    if failed > 0 {
        bail!("{failed} failures ({}): the figures do not hold every request asked", kinds.join(", "));
    }
    Ok(())
}
