//! `small-writes`: the sender's time per message as latency percentiles
//! (HdrHistogram), and the records and bytes each message puts on the
//! wire, for every library, message and way of writing it
//! ([`tls_bench_harness::writes`]).
//!
//! The cases are those of Criterion's `small-writes` group (same ids, same
//! [`Runner`]), run interleaved: a discarded warm-up per case, then the
//! recorded iterations in rounds, each round visiting every case in an
//! order rotated by one. Writes `results.json`, `results.csv`,
//! `report.md` and one `p50-<version>.svg` per protocol version under
//! `--out` (a new directory, or a previous run's: checked before any
//! work, replaced whole when the run is done), and prints the Markdown tables (with Criterion's mean and
//! interval for the same ids when `cargo bench --bench small-writes` has
//! run).

mod latency;
mod plot;
mod results;

use std::{fs, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result, ensure};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use tls_bench_harness::{
    bench::{Case, Workload, check_unique, small_write_params, small_write_workloads},
    error::exit_code,
    harness::TlsLibrary,
    libs, out,
    params::{Aead, CipherSuite, Params, Protocol},
    parsed_or_exit, paths,
    runner::{Prepared, Runner, prepare},
    select,
    workload::SmallWrites,
    writes::{MESSAGES, Message, Strategy, Wire},
};
use tls_bench_results::{criterion_json, outdir::RunDir};

use latency::Latencies;
use results::{Report, Row};

#[derive(Parser)]
#[command(about = "Small writes: per-message latency percentiles and bytes on the wire, per library")]
struct Args {
    /// Libraries, by name (`openssl-3.6.3`) or without version
    /// (`openssl`, `rustls+ring`, `s2n-tls+aws-lc`, `plaintext`),
    /// comma-separated. Default: every library of this build.
    #[arg(long, value_delimiter = ',')]
    library: Vec<String>,
    /// One message: its buffer sizes in bytes, comma-separated
    /// (`50,300,100`; `50x20` is twenty buffers of 50). Repeat the option
    /// for several messages. Default: the ten standard messages.
    #[arg(long)]
    message: Vec<String>,
    /// Strategies: per-buffer, coalesced, vectored (comma-separated).
    /// Default: all three.
    #[arg(long, value_delimiter = ',')]
    strategy: Vec<String>,
    /// Protocol versions: TLSv1.3, TLSv1.2 (comma-separated). Default:
    /// both, each with its AES-256-GCM suite unless --suite names suites.
    #[arg(long, value_delimiter = ',')]
    protocol: Vec<String>,
    /// Cipher suites by IANA name (comma-separated), e.g.
    /// TLS_CHACHA20_POLY1305_SHA256 or
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 (ECDSA suites only in
    /// TLS 1.2: the chain is ECDSA P-256).
    #[arg(long, value_delimiter = ',')]
    suite: Vec<String>,
    /// Recorded iterations (messages) per case.
    #[arg(long, default_value_t = 200_000)]
    iterations: u64,
    /// Warm-up iterations per case, discarded.
    #[arg(long, default_value_t = 10_000)]
    warmup: u64,
    /// Rounds the recorded iterations are interleaved over (each round
    /// runs a new connection per case).
    #[arg(long, default_value_t = 10)]
    rounds: u64,
    /// A quick check: 2,000 iterations, 200 warm-up, 2 rounds (overrides
    /// those options).
    #[arg(long)]
    quick: bool,
    /// Where the results go: a new or empty directory, or one a previous
    /// run wrote (checked before any work, replaced whole when the run is
    /// done).
    #[arg(long, default_value_os_t = paths::target_dir().join("small-writes"))]
    out: PathBuf,
    /// Criterion's output directory, read for the mean of the same ids, as
    /// Criterion finds it: `CRITERION_HOME`, else `criterion` in the target
    /// directory (`CARGO_TARGET_DIR`).
    #[arg(long, default_value_os_t = paths::criterion_home())]
    criterion_dir: PathBuf,
    /// Print the tables of the run saved in --out (results.json) again,
    /// with Criterion's current results, without running anything.
    #[arg(long)]
    report_only: bool,
}

/// Most iterations (and warm-up iterations) per case.
const MAX_ITERATIONS: u64 = 100_000_000;

fn main() -> ExitCode {
    exit_code(run(parsed_or_exit!(Args::try_parse())))
}

fn run(mut args: Args) -> Result<()> {
    if args.quick {
        (args.iterations, args.warmup, args.rounds) = (2_000, 200, 2);
    }
    let criterion = || -> Result<_> {
        Ok(if args.criterion_dir.is_dir() {
            criterion_json::read_all(&args.criterion_dir)?
        } else {
            Vec::new()
        })
    };
    if args.report_only {
        let json = args.out.join("results.json");
        ensure!(
            json.is_file(),
            "no saved run at {}: run `small-writes` without --report-only first",
            json.display()
        );
        out!("{}", Report::load_json(&json)?.markdown(&criterion()?))?;
        return Ok(());
    }
    // The output directory, before any work: a bad --out loses nothing.
    let out = RunDir::prepare(&args.out, owns).context("--out")?;
    let report = measure(&args)?;
    let dir = out.path();
    report.save_json(&dir.join("results.json"))?;
    results::save_csv(&report, &dir.join("results.csv"))?;
    let mut written = vec!["results.json".to_string(), "results.csv".to_string(), "report.md".to_string()];
    for protocol in report.protocols() {
        if report.rows.iter().any(|r| r.protocol == protocol && r.latency.is_some()) {
            let svg = format!("p50-{protocol}.svg");
            plot::draw(&report, &protocol, &dir.join(&svg))?;
            written.push(svg);
        }
    }
    let markdown = report.markdown(&criterion()?);
    let md = dir.join("report.md");
    fs::write(&md, &markdown).with_context(|| format!("writing {}", md.display()))?;
    out.commit()?;
    eprintln!("small-writes: wrote {} in {}", written.join(", "), args.out.display());
    out!("{markdown}")?;
    Ok(())
}

/// The entries a run writes into `--out`.
fn owns(name: &str) -> bool {
    matches!(name, "results.json" | "results.csv" | "report.md")
        || (name.starts_with("p50-") && name.ends_with(".svg"))
}

/// What the command line selects: the cases, in run order.
fn select(args: &Args, libs: &[Box<dyn TlsLibrary>]) -> Result<Vec<Case>> {
    ensure!((1..=MAX_ITERATIONS).contains(&args.iterations), "--iterations must be 1 to {MAX_ITERATIONS}");
    ensure!(args.warmup <= MAX_ITERATIONS, "--warmup must be 0 to {MAX_ITERATIONS}");
    ensure!(
        (1..=args.iterations).contains(&args.rounds),
        "--rounds must be 1 to --iterations ({})",
        args.iterations
    );
    let chosen = select_libraries(&args.library, libs)?;
    let messages: Vec<Message> = if args.message.is_empty() {
        MESSAGES.to_vec()
    } else {
        args.message.iter().map(|m| Message::parse(m)).collect::<Result<_>>()?
    };
    let strategies: Vec<Strategy> = if args.strategy.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        args.strategy.iter().map(|s| Strategy::from_name(s)).collect::<Result<_>>()?
    };
    let params = select_params(&args.protocol, &args.suite)?;
    let cases: Vec<Case> = small_write_workloads(&params, &messages, &strategies)
        .into_iter()
        .flat_map(|(workload, params)| {
            chosen.iter().map(move |library| Case { workload, params, library: library.clone() })
        })
        .collect();
    check_unique(&cases)?;
    Ok(cases)
}

/// The libraries named in `wanted` (every one when empty;
/// [`tls_bench_harness::select`]). Errors: a name no built library has (the
/// error lists them).
fn select_libraries(wanted: &[String], libs: &[Box<dyn TlsLibrary>]) -> Result<Vec<String>> {
    let names: Vec<String> = libs.iter().map(|l| l.name()).collect();
    Ok(select::select(&names, wanted)
        .map_err(|e| anyhow::anyhow!("--library: {e}"))?
        .into_iter()
        .map(str::to_string)
        .collect())
}

/// The parameter sets of `--protocol` and `--suite`. Errors: an unknown
/// version or suite name, a suite of a version not selected, or one the
/// ECDSA P-256 chain cannot use.
fn select_params(protocols: &[String], suites: &[String]) -> Result<Vec<Params>> {
    let protocols: Vec<Protocol> = if protocols.is_empty() {
        vec![Protocol::Tls13, Protocol::Tls12]
    } else {
        protocols
            .iter()
            .map(|p| {
                Protocol::ALL
                    .into_iter()
                    .find(|v| v.to_string() == *p)
                    .with_context(|| format!("unknown protocol version {p:?}; valid: TLSv1.3, TLSv1.2"))
            })
            .collect::<Result<_>>()?
    };
    if suites.is_empty() {
        return Ok(protocols.into_iter().map(|p| small_write_params(p, Aead::Aes256Gcm)).collect());
    }
    let mut out = Vec::new();
    for name in suites {
        let suite = CipherSuite::from_iana_name(name).with_context(|| {
            let valid: Vec<String> = CipherSuite::ALL.iter().map(ToString::to_string).collect();
            format!("unknown cipher suite {name:?}; valid: {}", valid.join(", "))
        })?;
        ensure!(
            protocols.contains(&suite.protocol()),
            "{suite} is a {} suite, and --protocol does not select {}",
            suite.protocol(),
            suite.protocol()
        );
        let params = Params { suite, ..small_write_params(suite.protocol(), suite.aead()) };
        params.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
        out.push(params);
    }
    Ok(out)
}

/// A case ready to run, with what it has recorded.
struct Running {
    /// Its place in the selection (the report's order).
    index: usize,
    case: Case,
    runner: Runner,
    latencies: Latencies,
    /// The median of each round.
    round_p50: Vec<u64>,
    wire: Option<Wire>,
}

/// Runs the selected cases interleaved and returns the report.
fn measure(args: &Args) -> Result<Report> {
    let libs = libs::all();
    let cases = select(args, &libs)?;
    let mut running = Vec::new();
    let mut skipped = Vec::new();
    for (index, case) in cases.into_iter().enumerate() {
        match prepare(&case, &libs)? {
            Prepared::Ready { runner, settings } => {
                if let Some(s) = settings {
                    eprintln!("note {case}: {s}");
                }
                running.push(Running {
                    index,
                    case,
                    runner: *runner,
                    latencies: Latencies::new()?,
                    round_p50: Vec::new(),
                    wire: None,
                });
            }
            Prepared::Skipped(why) => {
                eprintln!("skip {case}: {why}");
                skipped.push((index, case, why));
            }
        }
    }
    ensure!(!running.is_empty(), "every selected case is skipped (reasons above): nothing to measure");

    let total = (args.warmup + args.iterations) * running.len() as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {percent}%, ~{eta} left: {msg}")
            .context("progress template")?,
    );
    if args.warmup > 0 {
        bar.set_message("warm-up");
        for r in &mut running {
            r.runner.run(args.warmup).with_context(|| format!("{}: warm-up", r.case))?;
            bar.inc(args.warmup);
        }
    }
    let n = running.len();
    for round in 0..args.rounds {
        bar.set_message(format!("round {} of {}", round + 1, args.rounds));
        // This round's share: the remainder goes to the first rounds.
        let iters = args.iterations / args.rounds + u64::from(round < args.iterations % args.rounds);
        for k in 0..n {
            let r = &mut running[(k + round as usize) % n];
            let mut failed = None;
            let latencies = &mut r.latencies;
            let mut this_round = Latencies::new()?;
            let m = r.runner.run_with(iters, &mut |d: Duration| {
                if let Err(e) = latencies.record(d).and_then(|()| this_round.record(d)) {
                    failed.get_or_insert(e);
                }
            });
            r.round_p50.push(this_round.percentiles().p50);
            let m = m.with_context(|| format!("{}", r.case))?;
            if let Some(e) = failed {
                return Err(e.context(format!("{}", r.case)));
            }
            let wire = m.wire.with_context(|| format!("{}: no wire count", r.case))?;
            match r.wire {
                None => r.wire = Some(wire),
                Some(w) => {
                    ensure!(w == wire, "{}: {wire:?} on the wire in one round, {w:?} in another", r.case)
                }
            }
            bar.inc(iters);
        }
    }
    bar.finish_and_clear();

    let row = |case: &Case| {
        let Workload::SmallWrites(SmallWrites { message, strategy }) = case.workload else {
            unreachable!("small-write cases only")
        };
        Row {
            id: case.to_string(),
            library: case.library.clone(),
            protocol: case.params.protocol().to_string(),
            suite: case.params.suite.to_string(),
            strategy: strategy.to_string(),
            buffers: message.sizes().to_vec(),
            message: message.to_string(),
            payload_bytes: message.len(),
            latency: None,
            round_p50: Vec::new(),
            wire: None,
            skipped: None,
        }
    };
    let mut rows: Vec<(usize, Row)> = running
        .iter()
        .map(|r| {
            (
                r.index,
                Row {
                    latency: Some(r.latencies.percentiles()),
                    round_p50: r.round_p50.clone(),
                    wire: r.wire,
                    ..row(&r.case)
                },
            )
        })
        .collect();
    rows.extend(skipped.iter().map(|(i, c, why)| (*i, Row { skipped: Some(why.clone()), ..row(c) })));
    // The selection's order: protocol, message, strategy, library.
    rows.sort_by_key(|(i, _)| *i);
    Ok(Report {
        date: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
        host: tls_bench_results::host::cpu_model(),
        iterations: args.iterations,
        warmup: args.warmup,
        rounds: args.rounds,
        rows: rows.into_iter().map(|(_, r)| r).collect(),
    })
}
