//! `interop`: every TLS library's client against every TLS library's
//! server over TCP on 127.0.0.1, across the build variants (each side its
//! own build's `load` and `https-serve --echo`), every connection checked;
//! a table per parameter set. See docs/sockets.md, "Interoperability".

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Parser;
use tls_bench::{variants, workers};
use tls_bench_harness::{
    error::exit_code,
    params::{CipherSuite, HandshakeKind, Params},
    parsed_or_exit, paths,
};
use tls_bench_sockets::{
    cli::print,
    interop::{self, Binaries, Outcome},
    interrupt::{self, OnSignal},
};

/// Every library's client against every library's server, across builds.
#[derive(Parser)]
#[command(name = "interop", version)]
struct Cli {
    /// Build variants taking part, comma-separated, or `all` (`variants
    /// list`) [default: every variant but the compare-only ones].
    #[arg(long, value_delimiter = ',')]
    variants: Vec<String>,
    /// New connections a pair, each echoing 1 KiB.
    #[arg(short = 'n', long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=1000))]
    requests: u64,
    /// Use the binaries already built under `target/interop-workers/`
    /// instead of building them with cargo.
    #[arg(long)]
    no_build: bool,
}

fn main() -> ExitCode {
    exit_code(run(parsed_or_exit!(Cli::try_parse())))
}

/// The parameter sets: TLS 1.3 resumption (a full handshake, then each
/// connection resuming the ticket of the one before) and TLS 1.2 mTLS,
/// each at the sweep centre otherwise.
fn params() -> Vec<Params> {
    let tls13 = Params { kind: HandshakeKind::Resumption, ..Params::default() };
    let tls12 = Params {
        kind: HandshakeKind::MutualAuth,
        suite: CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        ..Params::default()
    };
    vec![tls13, tls12]
}

fn run(cli: Cli) -> Result<()> {
    let chosen =
        if cli.variants.is_empty() { variants::pick(None)? } else { variants::select(&cli.variants)? };
    interrupt::install(OnSignal::Exit)?;
    let dir = paths::target_dir().join("interop-workers");
    let mut builds = Vec::new();
    {
        let _lock = if cli.no_build { None } else { Some(workers::lock_workers(&dir)?) };
        // The default variant last: its build leaves this build's
        // target/release binaries as they were.
        let mut order = chosen.clone();
        order.sort_by_key(|v| v.name == "default");
        for v in order {
            let (serve, load) = (dir.join(v.name).join("https-serve"), dir.join(v.name).join("load"));
            if !cli.no_build {
                workers::build_binary(v, "https-serve", &serve)?;
                workers::build_binary(v, "load", &load)?;
            }
            for exe in [&serve, &load] {
                if !exe.exists() {
                    bail!("no binary for variant {} at {} (run without --no-build)", v.name, exe.display());
                }
            }
            builds.push(Binaries::read(v.name, &serve, &load)?);
        }
    }
    // Table order: the variants as given.
    builds.sort_by_key(|b| chosen.iter().position(|v| v.name == b.server.variant));
    let pairs = interop::run(&builds, &params(), cli.requests, &dir.join("work"))?;
    print(&interop::to_markdown(&pairs))?;
    let failed = pairs.iter().filter(|p| matches!(p.outcome, Outcome::Failed(_))).count();
    let passed = pairs.iter().filter(|p| matches!(p.outcome, Outcome::Passed { .. })).count();
    if failed > 0 {
        bail!("{failed} of {} pairs failed", pairs.len());
    }
    if passed == 0 {
        bail!("no pair ran: every one was a skip");
    }
    Ok(())
}
