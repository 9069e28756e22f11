//! `historical-perf`: tls-bench's handshake and throughput benchmarks across
//! past releases of s2n-tls, OpenSSL and rustls (see README, "Historical
//! performance"), timed with Criterion or, with `--instructions`, counted in
//! instructions under Callgrind; with `--dtls` (OpenSSL only), the DTLS 1.2
//! send loop against its TLS 1.2 contrast and allocations per write.
//! `historical-perf/bench-past.sh` runs it.
//!
//! ```text
//! historical-perf run [s2n-tls|openssl|rustls|all] [--quick] [--versions ..] [--all-releases] [--newest N]
//!                     [--rounds N] [--add-rounds] [--out DIR] [--graphs DIR] [--update-committed]
//!                     [--instructions | --dtls]
//! historical-perf plot [library] [--kept [--instructions | --dtls] [--out DIR]] [--graphs DIR] [--update-committed]
//! historical-perf list [library] [--versions ..] [--all-releases] [--newest N]
//! ```
//!
//! Each release is its own build (one s2n-tls-sys / openssl-sys per build):
//! a manifest generated under `target/historical-perf/build/` with only the
//! library under test, the `historical-perf` feature and the suite's
//! benchmarks ([`suite`]); its figures (Criterion estimates, or gungraun's
//! instruction counts) are kept in `<out>/<library>/<release>.json` and its
//! graphs drawn into `<out>/graphs/<library>/`, all under `target/`
//! (instruction counts under `target/historical-perf/instructions/`, DTLS
//! figures under `target/historical-perf/dtls/`). The
//! committed results and graphs (`historical-perf/data/`,
//! `historical-perf/graphs/`) are Criterion's and change only with
//! `--update-committed`, from a complete set ([`committed`]). A run exits
//! non-zero when it measured nothing or a release named with `--versions`
//! failed ([`outcome`]).

mod allocations;
mod build;
mod committed;
mod files;
mod outcome;
mod plot;
mod releases;
mod results;
mod suite;

use std::{
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail, ensure};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use tls_bench_harness::{error::exit_code, out::StdoutError, outln, parsed_or_exit, paths, skip};

use crate::{
    build::Paths,
    outcome::Outcome,
    releases::{Library, Release},
    results::{Bench, Kept, ReleaseResult},
    suite::Suite,
};

#[derive(Parser)]
#[command(
    about = "tls-bench's benchmarks across past releases of s2n-tls, OpenSSL and rustls",
    long_about = "tls-bench's benchmarks across past releases of s2n-tls, OpenSSL and rustls.\n\n\
        historical-perf/bench-past.sh passes its arguments here; without a subcommand it means \
        `run` (`bench-past.sh openssl --quick` is `historical-perf run openssl --quick`). Release \
        lists come from the crates.io index, or from a directory laid out as the sparse index when \
        HISTORICAL_PERF_INDEX names one."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    S2nTls,
    Openssl,
    Rustls,
    All,
}

impl Which {
    fn libraries(self) -> Vec<Library> {
        match self {
            Which::S2nTls => vec![Library::S2nTls],
            Which::Openssl => vec![Library::Openssl],
            Which::Rustls => vec![Library::Rustls],
            Which::All => Library::ALL.to_vec(),
        }
    }
}

#[derive(clap::Args)]
struct Selection {
    /// Library to follow.
    #[arg(value_enum, default_value = "all")]
    library: Which,
    /// Releases to take instead of the default ones (names such as 3.0.8,
    /// 1.1.1w, 0.23.46, or crate versions); with `all`, each name is looked
    /// up in every library and must exist in one. A run fails if any of
    /// them fails.
    #[arg(long, value_delimiter = ',', value_name = "V1,V2")]
    versions: Vec<String>,
    /// s2n-tls: every release from 0.0.8 instead of a spread of 12.
    #[arg(long)]
    all_releases: bool,
    /// Only the N newest of the selected releases (CI's smoke run), at
    /// least 1.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    newest: Option<usize>,
}

/// Where the committed results and graphs are, and whether to replace them.
#[derive(clap::Args)]
struct Committed {
    /// Replace the committed results and graphs
    /// (<committed>/data/<library>/*.json, <committed>/graphs/<library>/*.svg)
    /// with the results read: those kept by runs (`run`, `plot --kept`), or
    /// the committed ones themselves (`plot`: a redraw). Only a complete set
    /// is taken (a kept, measured, non-quick result of every release in the
    /// library's default selection); otherwise an error naming what is
    /// missing, before any committed file is touched.
    #[arg(long)]
    update_committed: bool,
    /// The directory of the committed results and graphs.
    #[arg(long, value_name = "DIR", default_value = "historical-perf")]
    committed: PathBuf,
}

#[derive(Subcommand)]
enum Cmd {
    /// Builds and runs the benchmarks for each selected release, then draws
    /// the graphs and prints the table; exits non-zero when nothing was
    /// measured or a release named with --versions failed.
    Run(RunArgs),
    /// Redraws the graphs and prints the table: from the committed results
    /// (a fresh clone's), or with --kept from the results runs kept.
    Plot(PlotArgs),
    /// Lists the releases a run would take.
    List {
        #[command(flatten)]
        selection: Selection,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    selection: Selection,
    /// Short Criterion runs, or one iteration per instruction count (for
    /// checking that it works, not for figures; never committed).
    #[arg(long, conflicts_with = "update_committed")]
    quick: bool,
    /// Count instructions under Callgrind instead of timing with Criterion:
    /// each release's `cargo bench --bench instructions` (gungraun; needs
    /// valgrind and gungraun-runner), in instructions per handshake or per
    /// byte. Kept under target/historical-perf/instructions (never
    /// committed).
    #[arg(long, conflicts_with = "update_committed")]
    instructions: bool,
    /// DTLS instead, OpenSSL only (rustls and s2n-tls have no DTLS): each
    /// release's `cargo bench --bench dtls -- '^send-loop'` (Criterion;
    /// DTLS 1.2 and TLS 1.2, 64 writes of 1024 bytes per iteration, in
    /// writes per second and MB/s from Criterion's mean), then its `memory`
    /// binary's allocation calls per write (DTLS 1.2, and TLS 1.3 for
    /// contrast). Kept under target/historical-perf/dtls (never committed);
    /// three graphs (writes per second of both send loops, and of each
    /// side; allocations per write) and the table.
    #[arg(long, conflicts_with_all = ["update_committed", "instructions"])]
    dtls: bool,
    /// Run every release this many times, round-robin, and keep for each
    /// benchmark the round with the lowest median: a noisy spell on a
    /// shared machine then spoils one round of a release, not its figure.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Join this run's rounds to the kept results of the same releases
    /// (same crate version, crypto library and Criterion settings)
    /// instead of replacing them: repeated runs keep the lowest median
    /// of all their rounds.
    #[arg(long)]
    add_rounds: bool,
    /// Where results are kept [default: target/historical-perf, or
    /// target/historical-perf/instructions with --instructions,
    /// target/historical-perf/dtls with --dtls; each with /quick for
    /// --quick runs].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Where graphs go [default: <out>/graphs].
    #[arg(long, value_name = "DIR")]
    graphs: Option<PathBuf>,
    #[command(flatten)]
    committed: Committed,
}

#[derive(clap::Args)]
struct PlotArgs {
    /// Library to draw.
    #[arg(value_enum, default_value = "all")]
    library: Which,
    /// Plot the results kept by runs (under --out) instead of the
    /// committed ones.
    #[arg(long)]
    kept: bool,
    /// With --kept: the instruction counts kept by `run --instructions`
    /// (--out defaults to target/historical-perf/instructions).
    #[arg(long, requires = "kept", conflicts_with = "update_committed")]
    instructions: bool,
    /// With --kept: the DTLS figures kept by `run --dtls` (OpenSSL only;
    /// --out defaults to target/historical-perf/dtls).
    #[arg(long, requires = "kept", conflicts_with_all = ["update_committed", "instructions"])]
    dtls: bool,
    /// Where the kept results are [default: target/historical-perf, or
    /// target/historical-perf/instructions with --instructions,
    /// target/historical-perf/dtls with --dtls; each with /quick for
    /// --quick runs].
    #[arg(long, value_name = "DIR", requires = "kept")]
    out: Option<PathBuf>,
    /// Where graphs go [default: target/historical-perf/committed-graphs
    /// (the committed graphs, redrawn), or <out>/graphs with --kept].
    #[arg(long, value_name = "DIR", conflicts_with = "update_committed")]
    graphs: Option<PathBuf>,
    #[command(flatten)]
    committed: Committed,
}

/// The command line: [`Cli`] with every subcommand's usage and options after
/// the top-level help, so `-h` (one line per option) and `--help` (in full)
/// list them all.
fn command() -> clap::Command {
    let cli = Cli::command();
    let (mut short, mut long) = (String::new(), String::new());
    for sub in cli.get_subcommands() {
        let mut sub = sub.clone().bin_name(format!("historical-perf {}", sub.get_name()));
        short.push_str(&format!("\n{}", sub.render_help()));
        long.push_str(&format!("\n{}", sub.render_long_help()));
    }
    let head = "Subcommands and their options:\n";
    cli.after_help(format!("{head}{short}")).after_long_help(format!("{head}{long}"))
}

fn main() -> ExitCode {
    let cli =
        parsed_or_exit!(command().try_get_matches().and_then(|matches| Cli::from_arg_matches(&matches)));
    exit_code(run(cli))
}

fn repo() -> PathBuf {
    paths::repo().to_path_buf()
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::List { selection } => {
            for r in select(&selection)? {
                let unsupported =
                    r.supported().err().map_or(String::new(), |why| format!(" [unsupported: {why}]"));
                outln!("{} {} (crate {}){unsupported}", r.library, r.label(), r.version)?;
            }
            Ok(())
        }
        Cmd::Plot(args) => plot(args),
        Cmd::Run(args) => run_and_report(args),
    }
}

/// `plot`: draws each library's graphs (committed results, or kept ones
/// with `--kept`) and prints its table, or with `--update-committed`
/// replaces the committed set. Errors: a library without results (the
/// others are drawn), or an incomplete set.
fn plot(args: PlotArgs) -> Result<()> {
    let PlotArgs { library, kept, instructions, dtls, out, graphs, committed } = args;
    let root = repo().join(&committed.committed);
    let libraries = library.libraries();
    let suite = Suite::from_flags(instructions, dtls);
    suite.check_libraries(&libraries)?;
    let source = if kept {
        out.map_or_else(|| suite.out_dir(&repo().join("target/historical-perf"), false), |o| repo().join(o))
    } else {
        committed::results_dir(&root)
    };
    if committed.update_committed {
        return committed::update(&libraries, &source, &root);
    }
    let graphs = match (graphs, kept) {
        (Some(g), _) => repo().join(g),
        (None, true) => source.join("graphs"),
        (None, false) => repo().join("target/historical-perf/committed-graphs"),
    };
    for_each(&libraries, |lib| {
        let results = if kept { kept_results(lib, &source)? } else { committed::load(lib, &root)? };
        plot::report(suite, lib, &results, &graphs.join(lib.to_string())).map(drop)
    })
}

/// `run`: measures the selected releases (timed, or with `--instructions`
/// counted), draws each library's graphs from its kept results, prints the
/// summary, then (with `--update-committed`) replaces the committed set.
/// Errors: an unsupported release or an incomplete committed set (both
/// before anything runs), nothing measured, a release named with
/// `--versions` failed ([`outcome::verdict`]).
fn run_and_report(args: RunArgs) -> Result<()> {
    let RunArgs { selection, quick, instructions, dtls, rounds, add_rounds, out, graphs, committed } = args;
    let suite = Suite::from_flags(instructions, dtls);
    suite.check_libraries(&selection.library.libraries())?;
    let base = repo().join("target/historical-perf");
    let out = out.map_or_else(|| suite.out_dir(&base, quick), |o| repo().join(o));
    let graphs = graphs.map_or_else(|| out.join("graphs"), |g| repo().join(g));
    let releases = select(&selection)?;
    ensure!(!releases.is_empty(), "no releases selected");
    refuse_unsupported(&releases)?;
    // Where results and graphs go, before any build: a bad path loses nothing.
    tls_bench_results::outdir::ensure_dir(&out, "--out")?;
    tls_bench_results::outdir::ensure_dir(&graphs, "--graphs")?;
    let mut libraries: Vec<Library> = releases.iter().map(|r| r.library).collect();
    libraries.dedup();
    let root = repo().join(&committed.committed);
    if committed.update_committed {
        committed::precheck(&libraries, &out, &releases)?;
    }
    let paths = Paths { repo: repo(), target: paths::target_dir(), work: base };
    let how = How { suite, quick, rounds, add_to_kept: add_rounds };
    let outcomes = run_releases(&paths, &releases, how, &out)?;
    let drawn = for_each(&libraries, |lib| {
        plot::report(suite, lib, &kept_results(lib, &out)?, &graphs.join(lib.to_string())).map(drop)
    });
    eprint!("{}", outcome::summary(&outcomes)?);
    outcome::verdict(&outcomes, !selection.versions.is_empty())?;
    drawn?;
    if committed.update_committed {
        committed::update(&libraries, &out, &root)?;
    }
    Ok(())
}

/// Runs `f` for each of `libraries`, all of them even after an error; the
/// errors are printed as they come. Errors: which libraries failed.
fn for_each(libraries: &[Library], f: impl Fn(Library) -> Result<()>) -> Result<()> {
    let mut failed = Vec::new();
    for &lib in libraries {
        if let Err(e) = f(lib) {
            // A closed or full stdout ends the run at once, as itself.
            if e.chain().any(|c| c.is::<StdoutError>()) {
                return Err(e);
            }
            eprintln!("historical-perf: error: {e:#}");
            failed.push(lib.to_string());
        }
    }
    if !failed.is_empty() {
        bail!("nothing drawn for {}", failed.join(", "));
    }
    Ok(())
}

/// `library`'s kept results under `out`, in version order. Errors: there
/// are none, or one cannot be read.
fn kept_results(library: Library, out: &Path) -> Result<Vec<ReleaseResult>> {
    let results = results::load(out, library)?;
    ensure!(!results.is_empty(), "no kept results for {library} under {}", out.display());
    Ok(results)
}

/// Refuses, before anything is built, releases tls-bench cannot build
/// against ([`Release::supported`]). Errors: each such release and why.
fn refuse_unsupported(releases: &[Release]) -> Result<()> {
    let refused: Vec<String> =
        releases.iter().filter_map(|r| r.supported().err().map(|why| format!("{r}: {why}"))).collect();
    ensure!(refused.is_empty(), "unsupported release(s), nothing was run: {}", refused.join("; "));
    Ok(())
}

/// The releases `selection` names.
fn select(selection: &Selection) -> Result<Vec<Release>> {
    let mut out = Vec::new();
    let libs = selection.library.libraries();
    let mut unmatched: Vec<&String> = selection.versions.iter().collect();
    for lib in libs.iter().copied() {
        let versions = releases::fetch_versions(lib.crate_name())?;
        let mut picked = if selection.versions.is_empty() {
            releases::default_selection(lib, &versions, selection.all_releases)
        } else if libs.len() == 1 {
            releases::named(lib, &versions, &selection.versions)?
        } else {
            // With `all`, a name belongs to whichever library has it.
            let mine: Vec<String> = selection
                .versions
                .iter()
                .filter(|w| releases::named(lib, &versions, std::slice::from_ref(*w)).is_ok())
                .cloned()
                .collect();
            unmatched.retain(|w| !mine.contains(w));
            releases::named(lib, &versions, &mine)?
        };
        if let Some(n) = selection.newest {
            picked = picked.split_off(picked.len().saturating_sub(n));
        }
        out.extend(picked);
    }
    if libs.len() > 1 && !selection.versions.is_empty() {
        ensure!(unmatched.is_empty(), "no library has release(s) {unmatched:?}");
    }
    Ok(out)
}

/// How a run measures each release: which suite (`--instructions`),
/// whether briefly (`--quick`), how many times (`--rounds`), and whether its
/// rounds join those already kept (`--add-rounds`).
struct How {
    suite: Suite,
    quick: bool,
    rounds: u32,
    add_to_kept: bool,
}

/// Builds, runs and keeps each release in turn, `rounds` times over, with
/// progress; a release that fails is kept as failed, not run again, and the
/// others go on. After each round the kept result of a release holds, per
/// benchmark, the lowest median (or count) of its rounds so far (with
/// `add_to_kept`, counting the rounds kept before the run). Returns what
/// this run did to each release, in `releases`' order. Errors: a kept
/// result cannot be read or written (a release's own failure is an outcome,
/// not an error).
fn run_releases(paths: &Paths, releases: &[Release], how: How, out: &Path) -> Result<Vec<Outcome>> {
    let How { suite, quick, rounds, add_to_kept } = how;
    let runs: Vec<(u32, &Release)> =
        (1..=rounds).flat_map(|round| releases.iter().map(move |r| (round, r))).collect();
    let mut outcomes: Vec<Outcome> = releases.iter().map(Outcome::new).collect();
    let mut kept = Vec::with_capacity(releases.len());
    for r in releases {
        let earlier = if add_to_kept { ReleaseResult::kept(out, r)? } else { None };
        // A release kept as failed is tried again.
        kept.push(earlier.filter(|k| k.failure.is_none()));
    }
    let bar = ProgressBar::new(runs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos}/{len} releases, ~{eta} left: {msg}")
            .context("progress template")?,
    );
    // Without a terminal (CI logs) the bar is hidden: print plain lines.
    let say =
        |line: String| if bar.is_hidden() { eprintln!("historical-perf: {line}") } else { bar.println(line) };
    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let cpu = tls_bench_results::host::cpu_model();
    let begun = Instant::now();
    for (i, (round, release)) in runs.iter().copied().enumerate() {
        let slot = i % releases.len();
        if kept[slot].as_ref().is_some_and(|k| k.failure.is_some()) {
            bar.inc(1);
            continue;
        }
        let started = Instant::now();
        let release_round =
            if rounds > 1 { format!("{release} (round {round}/{rounds})") } else { release.to_string() };
        let stage = |what: &str| {
            bar.set_message(format!("{release_round}: {what}"));
            if bar.is_hidden() {
                let left = begun.elapsed().checked_div(i as u32).map(|per| per * (runs.len() - i) as u32);
                let left = left.map_or("unknown".to_string(), fmt_duration);
                eprintln!(
                    "historical-perf: [{}/{}] {release_round}: {what} (about {left} left)",
                    i + 1,
                    runs.len()
                );
            }
        };
        let outcome = run_release(paths, release, suite, quick, &stage);
        let (benchmarks, libcrypto, failure) = match outcome {
            Ok((b, l)) => (b, l, None),
            Err(e) => (Vec::new(), String::new(), Some(format!("{e:#}"))),
        };
        match &failure {
            Some(why) => outcomes[slot].failures.push(why.clone()),
            None => outcomes[slot].measured += 1,
        }
        let result = ReleaseResult {
            library: release.library,
            release: release.label(),
            crate_version: release.version.to_string(),
            libcrypto,
            date: date.clone(),
            cpu: cpu.clone(),
            quick,
            rounds: 1,
            benchmarks,
            failure,
        };
        let status = match &result.failure {
            Some(why) => format!("FAILED ({why})"),
            None => format!("done, {} benchmarks", result.benchmarks.len()),
        };
        let result = match kept[slot].take() {
            Some(earlier) => earlier.lowest_with(result),
            None => result,
        };
        result.save(out, release)?;
        kept[slot] = Some(result);
        say(format!("{release_round}: {status} in {}", fmt_duration(started.elapsed())));
        bar.inc(1);
    }
    bar.finish_with_message("all releases done");
    Ok(outcomes)
}

fn fmt_duration(d: Duration) -> String {
    format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
}

/// Prepares, builds and runs `suite` for one release (then, for DTLS, the
/// release's own `memory` binary, [`Suite::memory_runs`]); returns its
/// benchmarks and the crypto library it linked. Errors: the failing stage
/// and why, or nothing measured (the skips named), a figure the suite needs
/// missing ([`Suite::missing_groups`]), or a benchmark of another
/// release.
fn run_release(
    paths: &Paths,
    release: &Release,
    suite: Suite,
    quick: bool,
    stage: &dyn Fn(&str),
) -> Result<(Vec<Bench>, String)> {
    release.supported().map_err(anyhow::Error::msg)?;
    stage(if release.library == Library::Openssl { "building OpenSSL" } else { "preparing" });
    let prepared = build::prepare(paths, release, suite)?;
    let home = suite.home(&paths.work, release);
    if home.exists() {
        std::fs::remove_dir_all(&home).with_context(|| format!("emptying {}", home.display()))?;
    }
    // The runs append their named skips here (tls_bench_harness::skip), read back as data.
    let skips_file = PathBuf::from(format!("{}.skips.jsonl", home.display()));
    if let Some(dir) = skips_file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if skips_file.exists() {
        std::fs::remove_file(&skips_file).with_context(|| format!("removing {}", skips_file.display()))?;
    }
    let libcrypto = build::libcrypto_of(paths, &prepared, release)?;
    // A floor of another crypto library than the release links is not run
    // (the suite's environment turned it on).
    let refusal = if suite.floors() { build::floor_refusal(&libcrypto, &prepared.floor) } else { None };
    if let Some(why) = &refusal {
        eprintln!("historical-perf: {} {}: no crypto floor: {why}", release.library, release.label());
    }
    let cargo = |extra: &[&str]| -> Command {
        let mut cmd = build::cargo();
        cmd.args(["bench", "--manifest-path"])
            .arg(&prepared.manifest)
            .args(["--no-default-features", "--features"])
            .arg(build::features(release, suite).join(","));
        for bench in suite.benches() {
            cmd.args(["--bench", bench]);
        }
        cmd.args(extra)
            .env("CARGO_TARGET_DIR", &paths.target)
            .env(skip::SKIPS_ENV, &skips_file)
            .envs(suite.env(&home, quick))
            .env_remove("RUSTFLAGS");
        if refusal.is_some() {
            cmd.env(tls_bench_harness::bench::FLOORS_ENV, "0");
        }
        for (k, v) in &prepared.env {
            cmd.env(k, v);
        }
        cmd
    };
    stage("building the benchmarks");
    // Cargo builds the kept binaries with the benches; its messages say where.
    let built = build::run(
        &mut cargo(&["--no-run", "--message-format=json-render-diagnostics"]),
        "building the benchmarks",
    )?;
    stage("running the benchmarks");
    let mut args = vec!["--"];
    args.extend(suite.bench_args(quick));
    build::run(&mut cargo(&args), "running the benchmarks")?;
    if !suite.memory_runs().is_empty() {
        let memory = build::executable(&built.stdout, &build::past_bin("memory"))?;
        for run in suite.memory_runs() {
            let what = format!("measuring allocations (memory --protocols {})", run.protocol);
            stage(&what);
            let mut cmd = Command::new(&memory);
            cmd.args(run.args(release.library, &home, quick)).env(skip::SKIPS_ENV, &skips_file);
            build::run(&mut cmd, &what)?;
        }
    }
    let skips: Vec<String> =
        skip::read(&skips_file)?.into_iter().map(|s| format!("skip {}: {}", s.id, s.reason)).collect();
    let benchmarks = suite.read(&home)?;
    ensure!(!benchmarks.is_empty(), "no benchmark ran; skips: {}", skips.join("; "));
    let missing = suite.missing_groups(&benchmarks);
    ensure!(missing.is_empty(), "no {} figure; skips: {}", missing.join(", "), skips.join("; "));
    let label = release.label();
    // A floor is named by its crypto crate's version (rustls's *ring*),
    // not the release's.
    let floors: Vec<&str> = benchmarks.iter().filter_map(|b| b.crypto_floor.as_deref()).collect();
    let is_floor = |b: &Bench| b.key.rsplit_once('/').is_some_and(|(_, s)| floors.contains(&s));
    for b in benchmarks.iter().filter(|b| !is_floor(b)) {
        ensure!(
            b.library_id.contains(&label),
            "benchmark {} ran {} rather than release {label}",
            b.key,
            b.library_id
        );
    }
    Ok((benchmarks, libcrypto))
}
