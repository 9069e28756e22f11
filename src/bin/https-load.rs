//! `https-load`: siege-style HTTPS load (siege -b): users of one library
//! sending `GET /` to an HTTPS server (`https-serve`, or nginx), a new
//! connection per request or kept alive, every response checked (200 OK
//! and the exact body) and every handshake for what it negotiated; siege's
//! fields in siege's units, and latency percentiles. See docs/https.md.

use std::{net::SocketAddr, process::ExitCode, time::Duration};

use anyhow::{Result, bail};
use clap::Parser;
use tls_bench_sockets::{
    self as sockets,
    cli::{ClientArgs, ParamsArgs, check_json, cores, duration_arg, print, socket_addr_arg, write_json},
    interrupt::{self, OnSignal, exit_code},
    siege::{SiegeOptions, run},
};

/// Siege-style HTTPS load for one library and parameter set.
#[derive(Parser)]
#[command(name = "https-load", version)]
struct Cli {
    /// The client library (as `https-serve --library`); it may differ from
    /// the server's.
    #[arg(long)]
    library: String,
    #[command(flatten)]
    params: ParamsArgs,
    /// The server's address: an IP address and a port.
    #[arg(long, default_value = "127.0.0.1:4433", value_parser = socket_addr_arg)]
    connect: SocketAddr,
    /// Users at once (siege's -c).
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    concurrent: u32,
    /// Requests per user (siege's -r) [default: 100 unless --time].
    #[arg(short = 'r', long, conflicts_with = "time", value_parser = clap::value_parser!(u64).range(1..))]
    reps: Option<u64>,
    /// Run for this long instead (siege's -t; e.g. 30s, 5m).
    #[arg(short = 't', long, value_parser = duration_arg)]
    time: Option<Duration>,
    /// Bytes of the body the server answers with (checked byte for byte;
    /// `https-serve --body`).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=64 * 1024 * 1024))]
    body: u32,
    /// One connection kept alive per user (default: a new connection per
    /// request, siege's default). With `--kind resumption` and new
    /// connections, each resumes the ticket of the one before.
    #[arg(long)]
    keep_alive: bool,
    #[command(flatten)]
    client: ClientArgs,
}

fn main() -> ExitCode {
    exit_code(run_cli(tls_bench_harness::parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    let library = sockets::find(&cli.library)?;
    let params = cli.params.params()?;
    check_json(cli.client.json.as_ref())?;
    interrupt::install(OnSignal::Report)?;
    let options = SiegeOptions {
        params,
        connect: cli.connect,
        clients: cli.concurrent as usize,
        requests: if cli.time.is_none() { Some(cli.reps.unwrap_or(100)) } else { None },
        duration: cli.time,
        body: cli.body as usize,
        keep_alive: cli.keep_alive,
        threads: cli.client.threads.map_or_else(cores, usize::from),
        cores: cli.client.cores.clone(),
        timeout: cli.client.timeout,
        progress: !cli.client.quiet,
    };
    let report = run(&*library, &options)?;
    let printed = print(&report.to_text());
    write_json(cli.client.json.as_ref(), &report)?;
    printed?;
    if report.interrupted {
        // Exits 130 or 143 (interrupt::exit_code): the report is partial.
        return Ok(());
    }
    let kinds: Vec<String> = report.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    if report.transactions == 0 {
        bail!("no transaction completed ({}): nothing measured", kinds.join(", "));
    }
    if report.failed_transactions > 0 {
        bail!(
            "{} failed transactions ({}): availability {:.2}%",
            report.failed_transactions,
            kinds.join(", "),
            report.availability
        );
    }
    if !report.errors.is_empty() {
        bail!("failures outside the transactions ({}): see the errors above", kinds.join(", "));
    }
    Ok(())
}
