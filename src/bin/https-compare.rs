//! `https-compare`: every library's HTTPS server beside plaintext HTTP and
//! nginx under the same siege-style load, in interleaved rounds, and the
//! independent tools (wrk, siege, h2load) beside `https-load` on the same
//! server and settings. See docs/https.md.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result, bail};
use clap::Parser;
use tls_bench::{variants::Variant, workers};
use tls_bench_results::outdir::RunDir;
use tls_bench_sockets::{
    self as sockets,
    child::Build,
    cli::{ParamsArgs, client_library, cores, duration_arg, print},
    https_compare::{CompareOptions, owns, run, write},
    interrupt::{self, OnSignal},
    runtimes,
    threads::{check_cores, split_cores},
};

/// Siege-style HTTPS load on every library's server, nginx and plaintext
/// HTTP, interleaved.
#[derive(Parser)]
#[command(name = "https-compare", version)]
struct Cli {
    #[command(flatten)]
    params: ParamsArgs,
    /// Certificate chains, one row each (comma-separated) [default:
    /// RSA-4096,ECDSA-P256 (RSA-4096 is the reference test's); --quick:
    /// ECDSA-P256]. Overrides --cert.
    #[arg(long, value_delimiter = ',')]
    certs: Vec<String>,
    /// Modes, one row each: new-connection, keep-alive [default: both].
    #[arg(long, value_delimiter = ',')]
    modes: Vec<String>,
    /// The client library every server is loaded with [default: the first
    /// TLS library of the build].
    #[arg(long)]
    client: Option<String>,
    /// Users at once [default: 100; --quick: 10].
    #[arg(short = 'c', long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    concurrent: Option<u32>,
    /// Each server's time per round [default: 10s; --quick: 1s].
    #[arg(short = 't', long, value_parser = duration_arg)]
    time: Option<Duration>,
    /// Rounds [default: 3; --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: Option<u32>,
    /// Body bytes.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=64 * 1024 * 1024))]
    body: u32,
    /// Threads of each server, of nginx's workers and of the client
    /// [default: the client's cores; --no-pin: every core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// The cores the servers (nginx's workers too) run on, comma-separated
    /// [default: the first half of the cores this process may use].
    #[arg(long, value_delimiter = ',', conflicts_with = "no_pin")]
    server_cores: Vec<usize>,
    /// The cores the clients (https-load and the tools) run on [default:
    /// the other half].
    #[arg(long, value_delimiter = ',', conflicts_with = "no_pin")]
    client_cores: Vec<usize>,
    /// Pin nothing: servers and clients share every core.
    #[arg(long)]
    no_pin: bool,
    /// Exit 1 if wrk and https-load differ by more than 10% on a server
    /// and the lower one's client was not saturated (90% of its cores):
    /// checked after the results are written.
    #[arg(long)]
    check_agreement: bool,
    /// Other build variants whose libraries join the rows, comma-separated,
    /// or `all` (`variants list`: system-openssl, boringssl,
    /// openssl-aws-lc; `default` is this build): each variant's
    /// `https-serve` is built (cargo) into target/https-compare-workers/
    /// and serves its libraries as a child process.
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// Servers of other runtimes that join the rows, comma-separated, `all`
    /// or `none` [default: all]: `go` (crypto/tls and net/http, built with
    /// the machine's Go), `node` (Node.js's tls and https), `java` (SunJSSE,
    /// a thread per connection), `jss` (Mozilla JSS's SSLSocket, NSS), `erlang`
    /// (Erlang/OTP's ssl, a process per connection), each set up in target/runtimes/<runtime>/
    /// (scripts/setup-runtimes.sh installs the toolchains).
    /// Each serves as a child process, checked as the others. A runtime
    /// whose toolchain is missing is an error naming what to install.
    #[arg(long, value_delimiter = ',')]
    runtimes: Vec<String>,
    /// This build's servers, comma-separated, as `https-serve --library`
    /// names them (`s2n-tls`, `rustls+ring`, `plaintext-tcp`) [default:
    /// every library of this build]. nginx and other builds' servers have
    /// their own options (--no-nginx, --variants).
    #[arg(long, value_delimiter = ',')]
    servers: Vec<String>,
    /// Leave nginx out.
    #[arg(long)]
    no_nginx: bool,
    /// Leave the independent tools (wrk, siege, h2load) out.
    #[arg(long)]
    no_tools: bool,
    /// A short run (seconds), for CI.
    #[arg(long)]
    quick: bool,
    /// Results directory: results.json and results.md (a whole run, or
    /// the previous one left as it was).
    #[arg(long, default_value = "target/https-compare/latest")]
    out: PathBuf,
}

/// The libraries `--servers` names, in its order (empty: every library of
/// this build). Errors: a name this build has no library for, or one
/// library named twice.
fn servers(names: &[String]) -> Result<Vec<Box<dyn sockets::Library>>> {
    if names.is_empty() {
        return Ok(sockets::libraries());
    }
    let mut chosen: Vec<Box<dyn sockets::Library>> = Vec::new();
    for name in names {
        let library = sockets::find(name).with_context(|| format!("--servers {name}"))?;
        if chosen.iter().any(|l| l.name() == library.name()) {
            bail!("--servers names {} twice", library.name());
        }
        chosen.push(library);
    }
    Ok(chosen)
}

fn main() -> ExitCode {
    interrupt::exit_code(run_cli(tls_bench_harness::parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    cli.params.params()?;
    let certs = match (&cli.certs[..], cli.quick) {
        ([], false) => vec!["RSA-4096".to_string(), "ECDSA-P256".to_string()],
        ([], true) => vec![cli.params.cert.clone()],
        (given, _) => given.to_vec(),
    };
    let mut params = Vec::new();
    for cert in certs {
        params.push(ParamsArgs { cert, ..cli.params.clone() }.params()?);
    }
    let mut keep_alive = Vec::new();
    for m in if cli.modes.is_empty() {
        vec!["new-connection".to_string(), "keep-alive".to_string()]
    } else {
        cli.modes.clone()
    } {
        keep_alive.push(match m.as_str() {
            "new-connection" => false,
            "keep-alive" => true,
            other => bail!("unknown mode {other:?}; valid: new-connection, keep-alive"),
        });
    }
    let (server_cores, client_cores) = if cli.no_pin {
        (Vec::new(), Vec::new())
    } else {
        let (server, client) = split_cores()?;
        (
            if cli.server_cores.is_empty() { server } else { cli.server_cores.clone() },
            if cli.client_cores.is_empty() { client } else { cli.client_cores.clone() },
        )
    };
    check_cores(&server_cores)?;
    check_cores(&client_cores)?;
    // A client never takes a server's core (docs/https.md).
    if let Some(core) = server_cores.iter().find(|c| client_cores.contains(c)) {
        bail!(
            "--server-cores and --client-cores both name core {core}: a client must not take a server's core              (give them apart, or --no-pin)"
        );
    }
    let chosen: Vec<&Variant> =
        tls_bench::variants::select(&cli.variants)?.into_iter().filter(|v| v.name != "default").collect();
    runtimes::select(&cli.runtimes)?;
    let libraries = servers(&cli.servers)?;
    let client = client_library(cli.client.as_deref())?;
    let out = RunDir::prepare(&cli.out, owns)?;
    // A signal stops every server this run started, removes the staged
    // results directory, then exits.
    interrupt::install(OnSignal::Exit)?;
    interrupt::remove_on_exit(out.path());
    // Every other build's server first: nothing is timed while a compiler
    // runs.
    let mut others = runtimes::servers(&cli.runtimes)?;
    if !chosen.is_empty() {
        let dir = tls_bench_harness::paths::target_dir().join("https-compare-workers");
        let _lock = workers::lock_workers(&dir)?;
        for v in &chosen {
            let exe = dir.join(v.name).join("https-serve");
            workers::build_binary(v, "https-serve", &exe)?;
            others.push(Build::read(v.name, &exe)?);
        }
    }
    let options = CompareOptions {
        params,
        keep_alive,
        client: client.name(),
        concurrent: cli.concurrent.map_or(if cli.quick { 10 } else { 100 }, |c| c as usize),
        duration: cli.time.unwrap_or(Duration::from_secs(if cli.quick { 1 } else { 10 })),
        rounds: cli.rounds.map_or(if cli.quick { 2 } else { 3 }, |r| r as usize),
        body: cli.body as usize,
        threads: cli
            .threads
            .map_or_else(|| if client_cores.is_empty() { cores() } else { client_cores.len() }, usize::from),
        server_cores,
        client_cores,
        others,
        nginx: !cli.no_nginx,
        external: !cli.no_tools,
        work: cli.out.with_file_name("work"),
    };
    let result = run(&libraries, &*client, &options, &|what| eprintln!("{what}"))?;
    let printed = print(&result.markdown());
    write(&result, out.path())?;
    out.commit()?;
    eprintln!("results in {}", cli.out.display());
    printed?;
    let failures = result.failures();
    if !failures.is_empty() {
        bail!("servers that failed (every other row is in the results):\n  {}", failures.join("\n  "));
    }
    let unmeasured = result.unmeasured();
    if !unmeasured.is_empty() {
        bail!("rows that did not measure what was asked:\n  {}", unmeasured.join("\n  "));
    }
    if cli.check_agreement {
        let wrong = result.disagreements();
        if !wrong.is_empty() {
            let lines: Vec<String> = wrong.iter().map(|a| format!("{}: {}", a.row, a.line())).collect();
            bail!("the tools and https-load disagree:\n{}", lines.join("\n"));
        }
    }
    Ok(())
}
