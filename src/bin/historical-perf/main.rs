//! `historical-perf`: tls-bench's handshake and throughput benchmarks across
//! past releases of s2n-tls, OpenSSL and rustls (see README, "Historical
//! performance"). `historical-perf/bench-past.sh` runs it.
//!
//! ```text
//! historical-perf run [s2n-tls|openssl|rustls|all] [--quick] [--versions ..] [--all-releases] [--newest N]
//! historical-perf plot [s2n-tls|openssl|rustls|all]     redraw graphs and the table from kept results
//! historical-perf list [s2n-tls|openssl|rustls|all]     the releases a run would take
//! ```
//!
//! Each release is its own build (one s2n-tls-sys / openssl-sys per build):
//! a manifest generated under `target/historical-perf/build/` with only the
//! library under test and the `historical-perf` feature; its Criterion
//! estimates are kept in `<out>/<library>/<release>.json`.

mod build;
mod plot;
mod releases;
mod results;

use std::{
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, ensure};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use tls_bench::criterion_json;

use crate::{
    build::Paths,
    releases::{Library, Release},
    results::{Bench, ReleaseResult},
};

#[derive(Parser)]
#[command(about = "tls-bench's benchmarks across past releases of s2n-tls, OpenSSL and rustls")]
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
    /// up in every library and must exist in one.
    #[arg(long, value_delimiter = ',')]
    versions: Vec<String>,
    /// s2n-tls: every release from 0.0.8 instead of a spread of 12.
    #[arg(long)]
    all_releases: bool,
    /// Only the N newest of the selected releases (CI's smoke run).
    #[arg(long)]
    newest: Option<usize>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Builds and runs the benchmarks for each selected release, then draws
    /// the graphs and prints the table.
    Run {
        #[command(flatten)]
        selection: Selection,
        /// Short Criterion runs (for checking that it works, not for figures).
        #[arg(long)]
        quick: bool,
        /// Run every release this many times, round-robin, and keep for each
        /// benchmark the round with the lowest median: a noisy spell on a
        /// shared machine then spoils one round of a release, not its figure.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        rounds: u32,
        /// Join this run's rounds to the kept results of the same releases
        /// (same crate version, crypto library and Criterion settings)
        /// instead of replacing them: repeated runs keep the lowest median
        /// of all their rounds.
        #[arg(long)]
        add_rounds: bool,
        /// Where results are kept [default: target/historical-perf, or
        /// target/historical-perf/quick with --quick].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where graphs go [default: historical-perf/graphs, or <out>/graphs
        /// with --quick].
        #[arg(long)]
        graphs: Option<PathBuf>,
    },
    /// Redraws the graphs and prints the table from kept results.
    Plot {
        #[arg(value_enum, default_value = "all")]
        library: Which,
        #[arg(long, default_value = "target/historical-perf")]
        out: PathBuf,
        #[arg(long, default_value = "historical-perf/graphs")]
        graphs: PathBuf,
    },
    /// Lists the releases a run would take.
    List {
        #[command(flatten)]
        selection: Selection,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("historical-perf: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::List { selection } => {
            for r in select(&selection)? {
                println!("{} {} (crate {})", r.library, r.label(), r.version);
            }
            Ok(())
        }
        Cmd::Plot { library, out, graphs } => {
            for lib in library.libraries() {
                report(lib, &repo().join(&out), &repo().join(&graphs))?;
            }
            Ok(())
        }
        Cmd::Run { selection, quick, rounds, add_rounds, out, graphs } => {
            let base = repo().join("target/historical-perf");
            let out =
                out.map_or_else(|| if quick { base.join("quick") } else { base.clone() }, |o| repo().join(o));
            let graphs = graphs.map_or_else(
                || if quick { out.join("graphs") } else { repo().join("historical-perf/graphs") },
                |g| repo().join(g),
            );
            let releases = select(&selection)?;
            ensure!(!releases.is_empty(), "no releases selected");
            let target =
                std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo().join("target"), PathBuf::from);
            let paths = Paths { repo: repo(), target, work: base };
            run_releases(&paths, &releases, Rounds { rounds, add_to_kept: add_rounds }, quick, &out)?;
            let mut libs: Vec<Library> = releases.iter().map(|r| r.library).collect();
            libs.dedup();
            for lib in libs {
                report(lib, &out, &graphs)?;
            }
            Ok(())
        }
    }
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

/// Criterion options: short runs with `quick`.
fn criterion_args(quick: bool) -> Vec<&'static str> {
    let mut args = vec!["^(handshake|throughput)/", "--noplot"];
    if quick {
        args.extend(["--warm-up-time", "0.2", "--measurement-time", "0.5", "--sample-size", "10"]);
    } else {
        args.extend(["--warm-up-time", "1", "--measurement-time", "3"]);
    }
    args
}

/// How many times a run measures each release (`--rounds`), and whether
/// its rounds join those already kept (`--add-rounds`).
struct Rounds {
    rounds: u32,
    add_to_kept: bool,
}

/// Builds, runs and keeps each release in turn, `rounds` times over, with
/// progress; a release that fails is kept as failed, not run again, and the
/// others go on. After each round the kept result of a release holds, per
/// benchmark, the lowest median of its rounds so far (with `add_to_kept`,
/// counting the rounds kept before the run).
fn run_releases(paths: &Paths, releases: &[Release], rounds: Rounds, quick: bool, out: &Path) -> Result<()> {
    let Rounds { rounds, add_to_kept } = rounds;
    let runs: Vec<(u32, &Release)> =
        (1..=rounds).flat_map(|round| releases.iter().map(move |r| (round, r))).collect();
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
        let outcome = run_release(paths, release, quick, &stage);
        let (benchmarks, libcrypto, failure) = match outcome {
            Ok((b, l)) => (b, l, None),
            Err(e) => (Vec::new(), String::new(), Some(format!("{e:#}"))),
        };
        let result = ReleaseResult {
            library: release.library,
            release: release.label(),
            crate_version: release.version.to_string(),
            libcrypto,
            date: date.clone(),
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
    Ok(())
}

fn fmt_duration(d: Duration) -> String {
    format!("{}m{:02}s", d.as_secs() / 60, d.as_secs() % 60)
}

/// Prepares, builds and runs one release; returns its benchmarks and the
/// crypto library it linked. Errors: the failing stage and why.
fn run_release(
    paths: &Paths,
    release: &Release,
    quick: bool,
    stage: &dyn Fn(&str),
) -> Result<(Vec<Bench>, String)> {
    release.supported().map_err(anyhow::Error::msg)?;
    stage(if release.library == Library::Openssl { "building OpenSSL" } else { "preparing" });
    let prepared = build::prepare(paths, release)?;
    let criterion_home = paths.work.join("criterion").join(release.library.to_string()).join(release.label());
    if criterion_home.exists() {
        std::fs::remove_dir_all(&criterion_home)?;
    }
    let cargo = |extra: &[&str]| -> Command {
        let mut cmd = Command::new("cargo");
        cmd.args(["bench", "--manifest-path"])
            .arg(&prepared.manifest)
            .args(["--no-default-features", "--features"])
            .arg(format!("{},historical-perf", release.library.feature()))
            .args(["--bench", "handshake", "--bench", "throughput"])
            .args(extra)
            .env("CARGO_TARGET_DIR", &paths.target)
            .env("CRITERION_HOME", &criterion_home)
            .env_remove("RUSTFLAGS");
        for (k, v) in &prepared.env {
            cmd.env(k, v);
        }
        cmd
    };
    stage("building the benchmarks");
    build::run(&mut cargo(&["--no-run"]), "building the benchmarks")?;
    stage("running the benchmarks");
    let mut args = vec!["--"];
    args.extend(criterion_args(quick));
    let out = build::run(&mut cargo(&args), "running the benchmarks")?;
    let skips: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("skip "))
        .map(str::to_string)
        .collect();
    let measured = criterion_json::read_all(&criterion_home)?;
    let benchmarks: Vec<Bench> = measured.iter().map(Bench::from_measurement).collect();
    ensure!(!benchmarks.is_empty(), "no benchmark ran; skips: {}", skips.join("; "));
    let label = release.label();
    for b in &benchmarks {
        ensure!(
            b.library_id.contains(&label),
            "benchmark {} ran {} rather than release {label}",
            b.key,
            b.library_id
        );
    }
    Ok((benchmarks, build::libcrypto_of(paths, &prepared, release.library)?))
}

/// Draws `library`'s graphs from the kept results and prints its table.
fn report(library: Library, out: &Path, graphs: &Path) -> Result<()> {
    let results = results::load(out, library)?;
    if results.is_empty() {
        eprintln!("historical-perf: no kept results for {library} under {}", out.display());
        return Ok(());
    }
    let date = results.iter().map(|r| r.date.as_str()).max().unwrap_or("");
    let measured = || results.iter().filter(|r| r.failure.is_none()).map(|r| r.rounds);
    let (fewest, most) = (measured().min().unwrap_or(1), measured().max().unwrap_or(1));
    let figure = match (fewest, most) {
        (_, 1) => "median and its 95% confidence interval".to_string(),
        (n, m) if n == m => format!("lowest median of {m} rounds and its 95% confidence interval"),
        (n, m) => format!("lowest median of {n}-{m} rounds and its 95% confidence interval"),
    };
    let note = format!(
        "{date} · {} · {figure}{}",
        tls_bench::host::cpu_model(),
        if results.iter().any(|r| r.quick) { " · --quick run" } else { "" }
    );
    let files = plot::draw_all(&results, &graphs.join(library.to_string()), &note)?;
    println!("{}", results::table(library, &results));
    eprintln!("historical-perf: {} graphs in {}", files.len(), graphs.join(library.to_string()).display());
    Ok(())
}
