//! `https-attack`: a library's HTTPS server (or another runtime's,
//! `--runtime`) under good siege-style load,
//! first alone and then beside misbehaving clients of every kind
//! (garbage, a ClientHello then silence, a malformed ClientHello, an
//! oversized record, resets mid-handshake and mid-request, slowloris, a
//! missing client certificate under mTLS, a flood of connections): how
//! each attack ended, what the server counted, and the good clients'
//! availability and latency with and without attackers. See
//! docs/https.md.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc, time::Duration};

use anyhow::{Context, Result, anyhow, bail};
use clap::Parser;
use tls_bench_harness::{error::ConfigureError, params::HandshakeKind};
use tls_bench_sockets::{
    self as sockets,
    attack::{Attack, AttackClients, AttackOptions, run_attackers},
    child::{ChildOptions, ChildServer, probe},
    cli::{ParamsArgs, check_json, cores, duration_arg, print, write_json},
    https::Http,
    interrupt::{self, OnSignal, exit_code},
    runtimes,
    serve::{Running, ServeOptions, Summary, start_with},
    siege::{SiegeOptions, run},
};

/// Good HTTPS load beside misbehaving clients.
#[derive(Parser)]
#[command(name = "https-attack", version)]
struct Cli {
    /// The library of the server and of every client.
    #[arg(long)]
    library: String,
    /// Attack another runtime's server instead (`go`, `node`, `java`, `jss`, `erlang`:
    /// docs/https.md, "Other runtimes"); `--library` then names the good
    /// clients' and the attackers' library.
    #[arg(long)]
    runtime: Option<String>,
    #[command(flatten)]
    params: ParamsArgs,
    /// Good users at once.
    #[arg(short = 'c', long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrent: u32,
    /// Each phase's time (good load alone, then beside the attackers).
    #[arg(short = 't', long, default_value = "10s", value_parser = duration_arg)]
    time: Duration,
    /// The attack kinds (comma-separated) [default: all that apply].
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Attackers per kind, at once.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
    attackers: u32,
    /// Flood: connections opened at once, held silent.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=5000))]
    flood: u32,
    /// Slowloris: a byte every this long.
    #[arg(long, default_value = "500ms", value_parser = duration_arg)]
    interval: Duration,
    /// The server's handshake timeout.
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    handshake_timeout: Duration,
    /// The server's idle (header read) timeout.
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    idle_timeout: Duration,
    /// The server's connection limit.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Good users keep their connections alive (default: a new one per
    /// request).
    #[arg(long)]
    keep_alive: bool,
    /// Body bytes.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=64 * 1024 * 1024))]
    body: u32,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// The server under attack: this build's, in this process, or another
/// runtime's, a child process.
enum Target {
    Ours(Box<Running>),
    Child(ChildServer, String),
}

impl Target {
    /// `name`'s server ([`runtimes::RUNTIMES`]), set up and started with
    /// `serve`'s parameters, limits and timeouts. Errors: no such runtime
    /// (naming the valid ones), its server cannot be set up, cannot serve
    /// the parameters (its reason), or does not start.
    fn runtime(name: &str, serve: &ServeOptions, body: usize) -> Result<Target> {
        let Some(runtime) = runtimes::RUNTIMES.iter().find(|r| r.name == name) else {
            let valid: Vec<&str> = runtimes::RUNTIMES.iter().map(|r| r.name).collect();
            bail!("--runtime {name:?}: valid values are {}", valid.join(", "));
        };
        let build = runtime.build(&runtimes::dir())?;
        let library = build.libraries.first().context("a runtime's server without a library")?;
        match probe(&build.exe, library, &serve.params) {
            Err(ConfigureError::Unsupported(why)) => {
                bail!("{library} does not serve {}: {why}", serve.params)
            }
            Err(ConfigureError::Failed(e)) => return Err(e),
            Ok(()) => {}
        }
        let options = ChildOptions {
            threads: serve.threads,
            cores: Vec::new(),
            body,
            echo: false,
            max_connections: serve.max_connections,
            timeouts: Some((serve.handshake_timeout, serve.idle_timeout)),
            json: runtimes::dir().join(name).join("https-attack.summary.json"),
        };
        Ok(Target::Child(ChildServer::start(&build.exe, library, &serve.params, &options)?, library.clone()))
    }

    fn addr(&self) -> SocketAddr {
        match self {
            Target::Ours(r) => r.addr(),
            Target::Child(c, _) => c.addr(),
        }
    }

    /// The server's library: `ours` for this build's.
    fn name(&self, ours: &str) -> String {
        match self {
            Target::Ours(_) => ours.to_string(),
            Target::Child(_, library) => library.clone(),
        }
    }

    /// Why the server no longer serves, if it does not
    /// ([`ChildServer::down`]); this process's own goes down only with it.
    fn down(&mut self) -> Option<String> {
        match self {
            Target::Ours(_) => None,
            Target::Child(c, _) => c.down(),
        }
    }

    fn stop(self) -> Result<Summary> {
        match self {
            Target::Ours(r) => r.stop(),
            Target::Child(c, _) => c.stop(),
        }
    }
}

fn main() -> ExitCode {
    exit_code(run_cli(tls_bench_harness::parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    let library = sockets::find(&cli.library)?;
    if library.plaintext() {
        bail!("{}: the attacks are on TLS; pick a TLS library", cli.library);
    }
    let params = cli.params.params()?;
    check_json(cli.json.as_ref())?;
    let mut kinds = Vec::new();
    for k in &cli.kinds {
        kinds.push(Attack::ALL.into_iter().find(|a| a.name() == k).ok_or_else(|| {
            let valid: Vec<&str> = Attack::ALL.iter().map(|a| a.name()).collect();
            anyhow!("unknown attack {k:?}; valid: {}", valid.join(", "))
        })?);
    }
    if kinds.is_empty() {
        kinds = Attack::ALL.to_vec();
    }
    let mtls = params.kind == HandshakeKind::MutualAuth;
    if !mtls && let Some(k) = kinds.iter().find(|k| k.needs_mtls()) {
        if !cli.kinds.is_empty() {
            bail!("{} needs an mTLS server: add --kind mTLS", k.name());
        }
        kinds.retain(|k| !k.needs_mtls());
    }
    let threads = cores();
    let serve = ServeOptions {
        params,
        listen: "127.0.0.1:0".parse()?,
        threads,
        handshake_timeout: cli.handshake_timeout,
        idle_timeout: cli.idle_timeout,
        max_connections: cli.max_connections as usize,
        cores: Vec::new(),
    };
    interrupt::install(OnSignal::Report)?;
    let mut running = match &cli.runtime {
        None => {
            Target::Ours(Box::new(start_with(&*library, &serve, Arc::new(Http::new(cli.body as usize)))?))
        }
        Some(name) => Target::runtime(name, &serve, cli.body as usize)?,
    };
    let running_name = running.name(&library.name());
    let addr = running.addr();
    let good = SiegeOptions {
        params,
        connect: addr,
        clients: cli.concurrent as usize,
        requests: None,
        duration: Some(cli.time),
        body: cli.body as usize,
        keep_alive: cli.keep_alive,
        threads,
        cores: Vec::new(),
        timeout: Duration::from_secs(10),
        progress: false,
    };
    // The server dying is the finding: said at once, the phases before
    // kept and written, exit 1.
    let mut failure: Option<String> = None;
    let mut check = |running: &mut Target, phase: &str| {
        if failure.is_none()
            && let Some(why) = running.down()
        {
            eprintln!("error: the server {running_name} failed during {phase}: {why}");
            failure = Some(format!("during {phase}: {why}"));
        }
        failure.is_some()
    };
    eprintln!("good load alone, {:?}", cli.time);
    let alone = run(&*library, &good)?;
    let down = check(&mut running, "the good load alone");
    // A signal in the first phase: its report is kept, the second not run;
    // so for a server that failed.
    let (beside, counts) = if alone.interrupted || down {
        (None, None)
    } else {
        let clients = AttackClients::of(&*library, &params)?;
        let attack_options = AttackOptions {
            kinds,
            attackers: cli.attackers as usize,
            duration: cli.time,
            interval: cli.interval,
            hold: cli.handshake_timeout.max(cli.idle_timeout) + Duration::from_secs(3),
            flood: cli.flood as usize,
            max_attempts: 100_000,
        };
        eprintln!("good load beside the attackers, {:?}", cli.time);
        let attackers = std::thread::spawn(move || run_attackers(addr, clients, &attack_options));
        let beside = run(&*library, &good);
        let counts = attackers.join().map_err(|_| anyhow!("the attackers' thread panicked"))?;
        let down = check(&mut running, "the attacks");
        // The attackers' error against a server that went down is the
        // server's failure, said above.
        let counts = match counts {
            Err(_) if down => None,
            counts => Some(counts?),
        };
        (Some(beside?), counts)
    };
    let summary = if failure.is_some() {
        // Killed with its process group as it is dropped: it gives no summary.
        drop(running);
        Summary::default()
    } else {
        match running.stop() {
            Ok(summary) => summary,
            Err(e) => {
                eprintln!("error: the server {running_name} failed to stop: {e:#}");
                failure = Some(format!("stopping it: {e:#}"));
                Summary::default()
            }
        }
    };
    let interrupted = interrupt::requested().is_some();
    let saved = tls_bench_results::https::AttackRun {
        alone,
        beside,
        attacks: counts.unwrap_or_default().into_iter().map(|(a, c)| (a.name().to_string(), c)).collect(),
        server: summary,
        interrupted,
        server_failure: failure.clone(),
    };
    let printed = print(&format!(
        "{}https-attack: {} {params}, {} good users ({}), {:?} per phase, {} attackers per kind\n\n{}\n{}\nthe server: {}",
        if interrupted { "INTERRUPTED (what was measured until the signal) " } else { "" },
        running_name,
        cli.concurrent,
        if cli.keep_alive { "keep-alive" } else { "new connection per request" },
        cli.time,
        cli.attackers,
        saved.good_markdown(),
        saved.attacks_markdown(),
        match &failure {
            Some(why) => format!("FAILED {running_name}: {why}\n"),
            None => saved.server.to_text(),
        }
    ));
    write_json(cli.json.as_ref(), &saved)?;
    printed?;
    if let Some(why) = failure {
        bail!("the server {running_name} failed {why}");
    }
    Ok(())
}
