//! `compare`: the comparison tables users act on, from one interleaved run.
//!
//! Every selected case of every build variant runs in interleaved rounds:
//! each round visits every row (a parameter set) in a fresh random order,
//! and within a row every library in a fresh random order, for a slice of
//! about `--slice-ms`. A slow spell of the machine then hits every library
//! of a row alike, and the per-round paired ratios cancel it
//! ([`tls_bench_results::stats`]). Variants that cannot share a process (system
//! OpenSSL, BoringSSL, AWS-LC builds) each run in a worker process of their
//! own build, and take part in the same rounds; only one slice runs at a
//! time.
//!
//! Output: Markdown tables on stdout; `results.json`, `results.csv`,
//! `environment.json` and one SVG chart per group under `--out`
//! (default `target/compare/`).
//!
//! Usage: `cargo run --release --bin compare -- [--filter REGEX] [--quick]
//! [--variants default,boringssl,...|all] [--libraries NAME,...]`.

mod chart;
mod env;
mod model;
mod report;
mod worker;

use std::{
    collections::BTreeMap,
    fs,
    io::ErrorKind,
    path::{Path, PathBuf},
    process::ExitCode,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail, ensure};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use tls_bench_harness::{
    bench::{Case, Matrix},
    error::exit_code,
    out, parsed_or_exit, paths, select,
};
use tls_bench_results::{
    compare as results,
    outdir::RunDir,
    reruns::{self, RunData},
};

use crate::{
    env::{EnvProbe, LibraryInfo},
    model::{CaseInfo, CaseResult, FLOOR},
    worker::{WorkerDied, WorkerHandle, WorkerOptions},
};

#[derive(Parser)]
#[command(about = "Interleaved comparison of TLS libraries, with confidence intervals")]
struct Cli {
    #[command(subcommand)]
    worker: Option<Sub>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Sub {
    /// Internal: serve one build's cases to the parent process.
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        variant: String,
        #[arg(long, default_value = "sweep")]
        matrix: String,
        #[arg(long)]
        filter: Option<String>,
        #[arg(long)]
        s2n_policies: bool,
        #[arg(long)]
        dtls: bool,
        #[arg(long)]
        sockets: bool,
        #[arg(long, value_delimiter = ',')]
        runtimes: Vec<String>,
        #[arg(long)]
        client: Option<String>,
        #[arg(long)]
        bridge: bool,
        #[arg(long, value_delimiter = ',')]
        libraries: Vec<String>,
    },
    /// Compares two runs' results.json, row by row, library against
    /// library (each library's time ratio to the row's fastest library of
    /// run A, in both runs, with its 95% interval over the epochs: the
    /// runs' own best libraries may differ), each change with its interval
    /// and a verdict (`no change` when the interval holds 0); exits
    /// non-zero when a ratio at the centre of the sweep moved more than
    /// `--max-percent` and beyond the noise.
    Diff {
        /// The first run's results.json.
        a: PathBuf,
        /// The second run's results.json.
        b: PathBuf,
        /// Largest accepted difference at the sweep centre, in percent (a
        /// number, 0 or more).
        #[arg(long, default_value_t = 3.0, value_parser = percent_arg)]
        max_percent: f64,
    },
    /// How well the intervals hold on a rerun: over two or more runs of
    /// the same filter (their results.json, or the directories holding
    /// them), the share of (run, other run, cell) triples whose other-run
    /// ratio lies inside the run's 95% interval, per group, beside the
    /// share calibrated intervals give; then each ratio's spread over the
    /// runs beside its interval's width (`scripts/coverage.sh` makes the
    /// runs).
    Coverage {
        /// The runs.
        runs: Vec<PathBuf>,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Run only the benchmark ids (`group/parameters/library`) this regular
    /// expression matches.
    #[arg(long)]
    filter: Option<String>,
    /// Build variants taking part, comma-separated, or `all` (names from
    /// benches/src/variants.rs, `variants list`: default, system-openssl,
    /// boringssl, openssl-aws-lc).
    #[arg(long, default_value = "default", value_delimiter = ',')]
    variants: Vec<String>,
    /// Libraries taking part, comma-separated: a full name
    /// (`rustls-0.23.46+ring`) or a name without version (`rustls+ring`,
    /// `openssl`, `s2n-tls+aws-lc`, `plaintext`). Default: all built.
    #[arg(long, value_delimiter = ',')]
    libraries: Vec<String>,
    /// Parameter sets: `sweep` (the handshake sweep, throughput at 1 KiB and
    /// 16 KiB) or `full`.
    #[arg(long, default_value = "sweep")]
    matrix: String,
    /// Rounds (each library of each row runs once per round), at least 2
    /// [default: 80; --quick 8; --sockets 10, with --quick 3].
    #[arg(long)]
    rounds: Option<u32>,
    /// Target length of one slice, in ms (1 to 5000) [default: 20; --quick
    /// 5; --sockets 300, with --quick 30].
    #[arg(long)]
    slice_ms: Option<u64>,
    /// Worker processes per variant over the run, one after the other (the
    /// rounds are split between them): a process's own layout (code and
    /// heap addresses) moves a library's figures by a few percent, so each
    /// ratio's 95% interval is formed over the epochs (Student's t; over
    /// the rounds when there is one). 1 to --rounds [default: 8; --quick
    /// 4; --sockets 5, with --quick 1; never more than --rounds].
    #[arg(long)]
    epochs: Option<u32>,
    /// A short run: 8 rounds of 5 ms slices, 4 epochs (a smoke test).
    #[arg(long)]
    quick: bool,
    /// Also run s2n-tls under every other security policy that negotiates
    /// exactly a row's parameters (named `s2n-tls-...[policy]`).
    #[arg(long)]
    s2n_policies: bool,
    /// Compare the DTLS benchmarks instead (the `dtls` bench's in-memory
    /// cases: DTLS handshakes and the send loops, of the `--matrix`; not
    /// the UDP ones).
    #[arg(long)]
    dtls: bool,
    /// Compare the libraries over TCP sockets instead, each library's
    /// server on 127.0.0.1 and its clients through its tokio adapter, every
    /// handshake and byte checked: `echo` on kept connections (1, 10 and
    /// 100 clients x 1, 16 and 64 KiB messages x every TLS 1.3 suite) and
    /// `socket-handshake`, full and resumed handshakes on new connections
    /// (10 clients); plaintext TCP as the floor. Default 10 rounds of 300
    /// ms slices, 5 epochs; --quick 3 rounds of 30 ms, 1 epoch.
    #[arg(long, conflicts_with = "dtls")]
    sockets: bool,
    /// With --sockets, the echo servers of other runtimes that join the
    /// rows, comma-separated, `all` or `none` [default: all]: `go`, `node`,
    /// `java`, `jss`, `erlang` (its `ssl`, and `gen_tcp` as its plaintext
    /// floor), as `https-compare --runtimes`; each a child process loaded by
    /// the --client library, every connection checked. A runtime whose
    /// toolchain is missing is an error naming what to install
    /// (scripts/setup-runtimes.sh).
    #[arg(long, value_delimiter = ',', requires = "sockets")]
    runtimes: Vec<String>,
    /// With --sockets, the library whose clients load the other runtimes'
    /// servers (`rustls+aws-lc-rs`) [default: the build's first TLS
    /// library].
    #[arg(long, requires = "sockets")]
    client: Option<String>,
    /// With --sockets, rows `<library>+bridge` beside each library that has
    /// a native tokio adapter and that the bridge can drive too (OpenSSL,
    /// BoringSSL): its in-memory connections over tokio, as GnuTLS runs,
    /// server and clients; what the bridge costs (docs/sockets.md, "The
    /// bridge").
    #[arg(long, requires = "sockets")]
    bridge: bool,
    /// Where JSON, CSV, SVG and the environment go: a new or empty
    /// directory, or one a previous run wrote (checked before any work,
    /// and replaced whole when the run is done).
    #[arg(long, default_value_os_t = paths::target_dir().join("compare"))]
    out: PathBuf,
    /// Use the worker binaries already built under `target/compare-workers/`
    /// instead of building them with cargo.
    #[arg(long)]
    no_build: bool,
}

fn main() -> ExitCode {
    let cli = parsed_or_exit!(Cli::try_parse());
    let worker = matches!(cli.worker, Some(Sub::Worker { .. }));
    let result = run(cli);
    // A worker whose parent is gone (an interrupted run) ends quietly:
    // its "Broken pipe" would read as if compare had failed.
    if worker
        && let Err(e) = &result
        && e.chain()
            .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == ErrorKind::BrokenPipe))
    {
        return ExitCode::FAILURE;
    }
    exit_code(result)
}

fn run(cli: Cli) -> Result<()> {
    match cli.worker {
        Some(Sub::Worker {
            variant,
            matrix,
            filter,
            s2n_policies,
            dtls,
            sockets,
            runtimes,
            client,
            bridge,
            libraries,
        }) => {
            let matrix = Matrix::from_name(&matrix)?;
            let opts = WorkerOptions {
                matrix,
                filter,
                s2n_policies,
                dtls,
                sockets,
                runtimes,
                client,
                bridge,
                libraries,
            };
            worker::serve(&variant, &opts)
        }
        Some(Sub::Diff { a, b, max_percent }) => {
            let changes = reruns::changes(&RunData::read(&a)?, &RunData::read(&b)?);
            ensure!(
                !changes.is_empty(),
                "{} and {} share no row where two libraries were measured in both runs",
                a.display(),
                b.display()
            );
            out!("{}", reruns::changes_markdown(&changes))?;
            let failed: Vec<String> = reruns::gate(&changes, max_percent)
                .iter()
                .map(|c| {
                    format!(
                        "{} {}: {:.2}% {}",
                        c.difference.row,
                        c.difference.library,
                        c.percent(),
                        c.verdict()
                    )
                })
                .collect();
            ensure!(
                failed.is_empty(),
                "sweep-centre ratios moved more than {max_percent}% and beyond the noise:\n  {}",
                failed.join("\n  ")
            );
            Ok(())
        }
        Some(Sub::Coverage { runs }) => {
            ensure!(runs.len() >= 2, "compare coverage needs two runs or more, {} given", runs.len());
            let data: Vec<RunData> = runs.iter().map(|r| RunData::read(r)).collect::<Result<_>>()?;
            let (groups, spreads) = reruns::coverage(&data);
            ensure!(!groups.is_empty(), "the runs share no row with two libraries measured in every run");
            out!("{}", reruns::coverage_markdown(data.len(), &groups, &spreads))?;
            Ok(())
        }
        None => compare(cli.run),
    }
}

/// `--max-percent`'s value: a finite number, 0 or more (NaN and negative
/// values would fail every diff). Errors name the value and what is valid.
fn percent_arg(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("{text:?}: valid values are numbers of percent, 0 or more (3, 0.5)")),
    }
}

/// Rounds and slice length of a default and a `--quick` run.
const DEFAULT_ROUNDS: u32 = 80;
const DEFAULT_SLICE_MS: u64 = 20;
const QUICK_ROUNDS: u32 = 8;
const QUICK_SLICE_MS: u64 = 5;
/// Epochs: the intervals are Student-t intervals over the epochs
/// (`tls_bench_results::stats::epoch_ratio`), which hold only when the
/// epochs' values are independent: an epoch must outlast the machine's
/// slow spells (batch means, docs/method.md). Measured with
/// `scripts/coverage.sh 6` on the 2-core machine of docs/compare.md: 8
/// epochs of 10 rounds covered a rerun's ratio in 92% and 84%, then 76%
/// and 68% of cases (handshake, throughput; calibrated: 86%); 16 epochs of
/// 5 rounds, narrower by t(0.975, 15)/4 against t(0.975, 7)/sqrt(8), in
/// 63% and 69% (calibrated: 85%): no better, so the default stays at 8. A
/// new epoch costs about 0.5 s there (the default sweep's workers started,
/// configured and warmed up).
const DEFAULT_EPOCHS: u32 = 8;
const QUICK_EPOCHS: u32 = 4;
/// The same for `--sockets`: each slice connects its clients first (outside
/// the window), so slices are longer and rounds fewer.
const SOCKET_ROUNDS: u32 = 10;
const SOCKET_SLICE_MS: u64 = 300;
const SOCKET_EPOCHS: u32 = 5;
const SOCKET_QUICK_ROUNDS: u32 = 3;
const SOCKET_QUICK_SLICE_MS: u64 = 30;
const SOCKET_QUICK_EPOCHS: u32 = 1;
/// Longest slice accepted, in ms: a round of a default run's 30-odd cases
/// then takes at most a few minutes.
const MAX_SLICE_MS: u64 = 5_000;

/// The entries a run writes into `--out` (and `workers`, where the worker
/// binaries were kept before `target/compare-workers/`).
fn owns(name: &str) -> bool {
    matches!(name, "results.json" | "results.csv" | "environment.json" | "workers") || name.ends_with(".svg")
}

fn compare(args: RunArgs) -> Result<()> {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let matrix = Matrix::from_name(&args.matrix).context("--matrix")?;
    if let Some(f) = &args.filter {
        regex::Regex::new(f).context("--filter")?;
    }
    let (default_rounds, default_slice_ms, default_epochs) = match (args.sockets, args.quick) {
        (false, false) => (DEFAULT_ROUNDS, DEFAULT_SLICE_MS, DEFAULT_EPOCHS),
        (false, true) => (QUICK_ROUNDS, QUICK_SLICE_MS, QUICK_EPOCHS),
        (true, false) => (SOCKET_ROUNDS, SOCKET_SLICE_MS, SOCKET_EPOCHS),
        (true, true) => (SOCKET_QUICK_ROUNDS, SOCKET_QUICK_SLICE_MS, SOCKET_QUICK_EPOCHS),
    };
    let rounds = args.rounds.unwrap_or(default_rounds);
    let slice = Duration::from_millis(args.slice_ms.unwrap_or(default_slice_ms));
    ensure!(rounds >= 2, "--rounds must be at least 2 (ratios are paired across rounds)");
    ensure!(
        (1..=MAX_SLICE_MS).contains(&(slice.as_millis() as u64)),
        "--slice-ms {}: valid are 1 to {MAX_SLICE_MS} ms",
        slice.as_millis()
    );
    // A default never refuses a --rounds the user gave: at most one epoch a round.
    let epochs = args.epochs.unwrap_or(default_epochs.min(rounds));
    ensure!((1..=rounds).contains(&epochs), "--epochs {epochs}: valid are 1 to --rounds ({rounds})");
    let chosen = tls_bench::variants::select(&args.variants)?;
    let runtimes: Vec<String> = if args.sockets {
        tls_bench_sockets::runtimes::select(&args.runtimes)?.iter().map(|r| r.name.to_string()).collect()
    } else {
        Vec::new()
    };
    ensure!(
        runtimes.is_empty() || chosen.iter().any(|v| v.name == "default"),
        "--runtimes {}: the other runtimes' servers are loaded by the default variant's clients; add \
         default to --variants, or leave them out (--runtimes none)",
        runtimes.join(",")
    );
    if let Some(client) = &args.client {
        tls_bench_sockets::cli::client_library(Some(client)).context("--client")?;
    }
    // The output directory, before any work: a bad --out loses nothing.
    let out = RunDir::prepare(&args.out, owns).context("--out")?;
    let opts = WorkerOptions {
        matrix,
        filter: args.filter.clone(),
        s2n_policies: args.s2n_policies,
        dtls: args.dtls,
        sockets: args.sockets,
        runtimes,
        client: args.client.clone(),
        bridge: args.bridge,
        libraries: args.libraries.clone(),
    };

    // This process is a default build: when it is the only variant, its own
    // cases say before any build whether the filter and the libraries
    // select anything (the workers say the same after their build).
    if chosen.iter().all(|v| v.name == "default") && tls_bench::variants::built_as_default() {
        let (libs, cases) = worker::cases(&opts)?;
        let names: Vec<String> = libs.iter().map(|l| l.name()).collect();
        check_selectors(&names, &args.libraries)?;
        if cases.is_empty() {
            bail!("{}", no_match(&opts, args.filter.as_deref()));
        }
    }

    // Build every worker first: nothing is timed while a compiler runs.
    let workers_dir = paths::target_dir().join("compare-workers");
    let mut exes = Vec::new();
    // Variants share target directories (`target/release/compare` is each
    // one's build in turn): one run at a time builds and installs.
    let building = if args.no_build { None } else { Some(tls_bench::workers::lock_workers(&workers_dir)?) };
    for v in &chosen {
        let exe = workers_dir.join(v.name).join("compare");
        if !args.no_build {
            tls_bench::workers::build_binary(v, "compare", &exe)?;
        }
        ensure!(
            exe.exists(),
            "no worker for variant {} at {} (run without --no-build)",
            v.name,
            exe.display()
        );
        exes.push((v.name.to_string(), exe));
    }
    drop(building);

    let mut workers = Vec::new();
    let mut infos: Vec<(usize, CaseInfo)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (name, exe) in &exes {
        eprintln!("compare: starting the {name} worker (configuring its cases)");
        let (w, hello) = WorkerHandle::start(exe, name, &opts)?;
        infos.extend(hello.cases.into_iter().map(|c| (workers.len(), c)));
        names.extend(hello.libraries);
        workers.push(w);
    }
    check_selectors(&names, &args.libraries)?;
    let infos = select_libraries(infos, &args.libraries)?;
    check_one_worker_per_library(&infos)?;
    for (_, c) in infos.iter().filter(|(_, c)| c.skip.is_some()) {
        eprintln!("skip {}: {}", c.id, c.skip.as_deref().unwrap_or_default());
    }
    let runnable: Vec<&(usize, CaseInfo)> = infos.iter().filter(|(_, c)| c.skip.is_none()).collect();
    if runnable.is_empty() {
        bail!("{}", no_match(&opts, args.filter.as_deref()));
    }

    let rounds_per_epoch = rounds.div_ceil(epochs);
    let probe = EnvProbe::start();
    // Calibration (also the warm-up: one-time library initialisation).
    let mut iters: BTreeMap<&str, u64> = BTreeMap::new();
    let bar = ProgressBar::new(runnable.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} cases calibrated, {eta} left")
            .context("progress template")?,
    );
    let mut results: BTreeMap<&str, CaseResult> = infos
        .iter()
        .map(|(_, c)| (c.id.as_str(), CaseResult { info: c.clone(), slices: Vec::new(), failure: None }))
        .collect();
    for (w, c) in &runnable {
        if results[c.id.as_str()].failure.is_none() {
            match calibrate(&mut workers[*w], &c.id, slice, args.sockets) {
                Ok(n) => {
                    iters.insert(&c.id, n);
                }
                // As in the rounds below: said at once, the case runs no more.
                Err(e) if worker::fails_the_case(&e) => {
                    let died = e.downcast_ref::<WorkerDied>().is_some();
                    fail(&mut results, &c.id, "calibrating", &e, &bar);
                    if died {
                        warm_up(&mut workers[*w], *w, &runnable, &mut results, "calibrating", &bar)?;
                    }
                }
                Err(e) => return Err(e.context(format!("calibrating {}", c.id))),
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut rows: BTreeMap<&str, Vec<&(usize, CaseInfo)>> = BTreeMap::new();
    for r in &runnable {
        rows.entry(r.1.row.as_str()).or_default().push(r);
    }
    let bar = ProgressBar::new(u64::from(rounds) * runnable.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} slices, {eta} left  {msg}")
            .context("progress template")?,
    );
    let mut rng = oorandom::Rand64::new(seed());
    let mut row_order: Vec<&str> = rows.keys().copied().collect();
    for round in 0..rounds {
        bar.set_message(format!("round {}/{rounds}", round + 1));
        if round > 0 && round % rounds_per_epoch == 0 {
            // A new epoch: new worker processes, each case warmed up once.
            bar.suspend(|| {
                eprintln!("compare: new worker processes (epoch {})", round / rounds_per_epoch + 1)
            });
            let old = std::mem::take(&mut workers);
            for w in old {
                w.finish()?;
            }
            for (name, exe) in &exes {
                workers.push(WorkerHandle::start(exe, name, &opts)?.0);
            }
            let when = format!("warming up epoch {}", round / rounds_per_epoch + 1);
            for (w, worker) in workers.iter_mut().enumerate() {
                warm_up(worker, w, &runnable, &mut results, &when, &bar)?;
            }
        }
        shuffle(&mut row_order, &mut rng);
        for row in &row_order {
            let mut cases = rows[row].clone();
            shuffle(&mut cases, &mut rng);
            for (w, c) in cases {
                if results[c.id.as_str()].failure.is_some() {
                    bar.inc(1);
                    continue;
                }
                match workers[*w].run(&c.id, iters[c.id.as_str()]) {
                    Ok(mut s) => {
                        s.round = round;
                        s.epoch = round / rounds_per_epoch;
                        results.get_mut(c.id.as_str()).expect("every case has a result").slices.push(s);
                    }
                    // A case that failed (a check, a server that died, its
                    // worker process that died) is said at once and runs no
                    // more; the others go on, a dead worker's in a new,
                    // warmed-up process.
                    Err(e) if worker::fails_the_case(&e) => {
                        let when = format!("round {}", round + 1);
                        let died = e.downcast_ref::<WorkerDied>().is_some();
                        fail(&mut results, &c.id, &when, &e, &bar);
                        if died {
                            warm_up(&mut workers[*w], *w, &runnable, &mut results, &when, &bar)?;
                        }
                    }
                    Err(e) => return Err(e),
                }
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    let libraries = library_list(&infos);
    let environment = probe.finish(libraries, command);
    for w in workers {
        w.finish()?;
    }

    // Rows in the workers' order (handshakes first), not the map's.
    let ordered: Vec<CaseResult> = infos.iter().map(|(_, c)| results[c.id.as_str()].clone()).collect();
    let summary = model::summarise(&ordered);
    write_outputs(out.path(), &summary, &ordered, &environment, rounds)?;
    out.commit()?;
    out!("{}", results::markdown(&summary, &environment, rounds as usize, results::Intervals::Epochs))?;
    eprintln!("compare: JSON, CSV, SVG and the environment are in {}", args.out.display());
    let failed: Vec<String> = ordered
        .iter()
        .filter_map(|c| c.failure.as_ref().map(|why| format!("{}: {why}", c.info.id)))
        .collect();
    ensure!(
        failed.is_empty(),
        "cases that failed (every other one is in the results):\n  {}",
        failed.join("\n  ")
    );
    Ok(())
}

/// Marks case `id` failed `when` (calibrating, a round) with `e`, said at
/// once on stderr: it runs no more.
fn fail(
    results: &mut BTreeMap<&str, CaseResult>,
    id: &str,
    when: &str,
    e: &anyhow::Error,
    bar: &ProgressBar,
) {
    bar.suspend(|| eprintln!("error: {id} failed ({when}): {e:#}; it runs no more"));
    let result = results.get_mut(id).expect("every case has a result");
    result.failure = Some(format!("{when}: {e:#}"));
}

/// Runs one iteration of each case of worker `w` still running (a new
/// process's one-time initialisation, outside every slice). A case that
/// fails is said and runs no more ([`fail`]); when the process dies, the
/// case it ran fails and the warm-up starts over in the next process.
/// Errors: a new process could not start, or its reply was unreadable.
fn warm_up(
    worker: &mut WorkerHandle,
    w: usize,
    runnable: &[&(usize, CaseInfo)],
    results: &mut BTreeMap<&str, CaseResult>,
    when: &str,
    bar: &ProgressBar,
) -> Result<()> {
    'process: loop {
        for (_, c) in runnable.iter().filter(|(i, _)| *i == w) {
            if results[c.id.as_str()].failure.is_some() {
                continue;
            }
            match worker.run(&c.id, 1) {
                Ok(_) => {}
                Err(e) if worker::fails_the_case(&e) => {
                    fail(results, &c.id, &format!("{when}, warming up"), &e, bar);
                    if e.downcast_ref::<WorkerDied>().is_some() {
                        continue 'process;
                    }
                }
                Err(e) => return Err(e.context(format!("warming up {}", c.id))),
            }
        }
        return Ok(());
    }
}

/// Iterations per slice for case `id`: one untimed-by-the-report warm-up
/// iteration, then doubling runs until one takes a quarter of the slice
/// (with `sockets`, a quarter of the slice's measured window).
fn calibrate(w: &mut WorkerHandle, id: &str, slice: Duration, sockets: bool) -> Result<u64> {
    w.run(id, 1)?;
    let mut n = 1u64;
    loop {
        let started = Instant::now();
        let s = w.run(id, n)?;
        // Over sockets only the measured window counts: connecting the
        // clients (their handshakes, outside the window) would otherwise
        // set the iterations of a server with slow handshakes (a JVM's) to
        // a few, and its slices to the first messages on new connections.
        let took =
            if sockets { Duration::from_nanos((s.both_ns * n as f64) as u64) } else { started.elapsed() };
        if took >= slice / 4 || n >= 1 << 20 {
            let per_iter = (s.both_ns.max(1.0)).max(took.as_nanos() as f64 / n as f64);
            return Ok(((slice.as_nanos() as f64 / per_iter).ceil() as u64).max(1));
        }
        n *= 2;
    }
}

fn seed() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos())
}

/// Fisher-Yates with `rng`.
fn shuffle<T>(v: &mut [T], rng: &mut oorandom::Rand64) {
    for i in (1..v.len()).rev() {
        let j = rng.rand_range(0..(i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// Says that nothing runnable matches `filter`, with the rows of the
/// matrix (whatever the filter: what a filter can match).
fn no_match(opts: &WorkerOptions, filter: Option<&str>) -> String {
    let rows: Vec<String> = opts
        .workloads()
        .into_iter()
        .map(|(workload, params)| Case { workload, params, library: String::new() }.row())
        .collect();
    format!(
        "no runnable benchmark matches --filter {:?} (ids read group/parameters/library); rows:\n  {}",
        filter.unwrap_or(""),
        rows.join("\n  ")
    )
}

/// Errors unless each of `selectors` names one of `libraries`
/// ([`tls_bench_harness::select`]), listing the valid names.
fn check_selectors(libraries: &[String], selectors: &[String]) -> Result<()> {
    select::select(libraries, selectors).map_err(|e| anyhow::anyhow!("--libraries: {e}"))?;
    Ok(())
}

/// Keeps the cases of the libraries `selectors` name (all when empty), and
/// of those libraries' crypto floors (the workers configured no other:
/// [`WorkerOptions::libraries`]; `check_selectors` has checked the names
/// against every worker's libraries). Errors: selectors that name crypto floors
/// only (a floor is measured beside its library, as a share of it: alone
/// its tables would have no library's column).
fn select_libraries(infos: Vec<(usize, CaseInfo)>, selectors: &[String]) -> Result<Vec<(usize, CaseInfo)>> {
    if selectors.is_empty() {
        return Ok(infos);
    }
    let chosen = |c: &CaseInfo| selectors.iter().any(|s| select::matches(&c.library, s));
    // The workers configured only the selection (a floor named alone comes
    // without its library): a floor is known by its name.
    let is_floor = |c: &CaseInfo| tls_bench_results::compare::is_crypto_floor(&c.library);
    if infos.iter().filter(|(_, c)| chosen(c)).all(|(_, c)| is_floor(c)) {
        bail!(
            "--libraries {}: crypto floors only; a floor runs beside its library (name the library: its floor \
             comes with it)",
            selectors.join(",")
        );
    }
    let floors: Vec<String> =
        infos.iter().filter(|(_, c)| chosen(c)).filter_map(|(_, c)| c.crypto_floor.clone()).collect();
    Ok(infos.into_iter().filter(|(_, c)| chosen(c) || floors.contains(&c.library)).collect())
}

/// Errors when two workers offer the same library name: their figures
/// would be mixed in one column.
fn check_one_worker_per_library(infos: &[(usize, CaseInfo)]) -> Result<()> {
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for (_, c) in infos {
        if let Some(other) = owner.insert(&c.library, &c.variant)
            && other != c.variant
        {
            bail!("library {} is built in variants {other} and {}: pick one", c.library, c.variant);
        }
    }
    Ok(())
}

fn library_list(infos: &[(usize, CaseInfo)]) -> Vec<LibraryInfo> {
    let mut seen: Vec<LibraryInfo> = Vec::new();
    for (_, c) in infos {
        if !seen.iter().any(|l| l.library == c.library) {
            seen.push(LibraryInfo { library: c.library.clone(), variant: c.variant.clone() });
        }
    }
    seen
}

fn write_outputs(
    out: &Path,
    summary: &[model::RowSummary],
    results: &[CaseResult],
    environment: &env::Environment,
    rounds: u32,
) -> Result<()> {
    let json = serde_json::json!({
        "environment": environment,
        "rounds": rounds,
        "method": "interleaved rounds in epochs of new worker processes; ratio to the row's best TLS \
                   library (lowest median) = geometric mean over the epochs of each epoch's median \
                   per-round paired time ratio, 95% Student-t interval over the epochs (over the rounds \
                   with one epoch)",
        "rows": summary,
        "cases": results,
    });
    let write = |name: &str, text: String| -> Result<()> {
        let path = out.join(name);
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("results.json", serde_json::to_string_pretty(&json)?)?;
    write("environment.json", serde_json::to_string_pretty(environment)?)?;
    report::write_csv(&out.join("results.csv"), summary)?;
    let mut groups: Vec<&str> = summary.iter().map(|r| r.group.as_str()).collect();
    groups.dedup();
    for g in groups {
        let rows: Vec<model::RowSummary> = summary.iter().filter(|r| r.group == g).cloned().collect();
        if rows.iter().any(|r| r.libraries.len() > 1 || r.libraries.iter().any(|l| l.library != FLOOR)) {
            chart::draw(&out.join(format!("{g}.svg")), g, &rows)?;
        }
    }
    Ok(())
}
