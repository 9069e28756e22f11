//! Prints Markdown tables of Criterion results (medians) from
//! `target/criterion`, one per benchmark group: a row per parameter set, a
//! column per library, each TLS figure with its ratio to the row's fastest
//! TLS library, and the plaintext floor beside them.
//!
//! Handshake groups are reported in µs per handshake; throughput groups in
//! MB/s (10^6 bytes per second of application data); send-loop groups in
//! thousands of writes per second (kpps: one datagram each in DTLS) with
//! the MB/s of their payloads. Each table says when
//! its results were written; a result from an earlier run than the group's
//! last one (Criterion keeps every benchmark's newest result, so a filtered
//! run leaves older ones beside it) is marked `*` with its date.
//!
//! With `--instructions`, the same tables of the instruction counts that
//! `cargo bench --bench instructions` wrote
//! ([`tls_bench::results::instructions`]); with `--instructions --noise`,
//! each count's difference from the run before.
//!
//! `report results` writes `results/README.md` from the committed results
//! and the headline block of `README.md`
//! ([`tls_bench::results::readme`]); `report results --check` writes
//! nothing and exits 1, showing the differences, when either differs from
//! what it would write (CI runs it).
//!
//! Usage: `cargo run --release --bin report [-- --criterion-dir DIR]`,
//! `... -- --instructions [--noise] [--gungraun-dir DIR]`,
//! `... -- results [--check] [--root DIR]`.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    process::ExitCode,
    time::{Duration, SystemTime},
};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};
use tls_bench::{
    bench::SEND_LOOP_WRITES,
    criterion_json::{self, Measurement},
    error::exit_code,
    gungraun_json,
    results::{
        check::{self, README, RESULTS_README},
        instructions, readme,
    },
};

#[derive(Parser)]
#[command(about = "Markdown tables of tls-bench Criterion medians", args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Criterion's output directory.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/target/criterion"))]
    criterion_dir: PathBuf,
    /// Report the instruction counts (`cargo bench --bench instructions`)
    /// instead of Criterion's times.
    #[arg(long)]
    instructions: bool,
    /// With --instructions: each count's difference from the run before it
    /// (gungraun keeps one), largest first, against the noise goals.
    #[arg(long, requires = "instructions")]
    noise: bool,
    /// gungraun's output directory (with --instructions).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/target/gungraun"))]
    gungraun_dir: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Writes results/README.md from the committed results, and the
    /// headline between `<!-- headline:start -->` and
    /// `<!-- headline:end -->` in README.md.
    Results {
        /// Write nothing: exit 1, showing the differences, when either file
        /// differs from what the command writes.
        #[arg(long)]
        check: bool,
        /// The repository whose committed results are read.
        #[arg(long, default_value = env!("CARGO_MANIFEST_DIR"))]
        root: PathBuf,
    },
}

/// Results written further apart than this belong to different runs: one
/// benchmark takes seconds (0.5 s warm-up, 2 s measurement, analysis), so a
/// run never goes this long without writing one.
const RUN_GAP: Duration = Duration::from_secs(30 * 60);

/// One table's rows: parameters -> library -> result.
type Rows = BTreeMap<String, BTreeMap<String, Measurement>>;

fn main() -> ExitCode {
    exit_code(run(Args::parse()))
}

fn run(args: Args) -> Result<()> {
    if let Some(Command::Results { check, root }) = &args.command {
        return results(root, *check);
    }
    if args.instructions {
        let dir = &args.gungraun_dir;
        let counts = if dir.is_dir() { gungraun_json::read_all(dir)? } else { Vec::new() };
        if counts.is_empty() {
            bail!(
                "no instruction counts under {}: run `cargo bench --bench instructions` first",
                dir.display()
            );
        }
        print!("{}", if args.noise { instructions::noise(&counts)? } else { instructions::tables(&counts) });
        return Ok(());
    }
    let dir = &args.criterion_dir;
    if !dir.is_dir() {
        bail!("no results under {}: run `cargo bench` first", dir.display());
    }
    let results = criterion_json::read_all(dir)?;
    if results.is_empty() {
        bail!("no tls-bench results under {}: run `cargo bench` first", dir.display());
    }
    let mut groups: BTreeMap<String, Rows> = BTreeMap::new();
    for m in results {
        groups
            .entry(m.group.clone())
            .or_default()
            .entry(m.params.clone())
            .or_default()
            .insert(m.library.clone(), m);
    }
    for (group, rows) in &groups {
        print!("{}", table(group, rows));
    }
    Ok(())
}

/// `report results [--check]`: generates both files under `root`, then
/// writes those that differ or, with `check`, fails naming them with their
/// differences. Errors: a dataset or README.md missing, README.md without
/// its headline markers, a file that cannot be written; with `check`, any
/// difference.
fn results(root: &std::path::Path, check: bool) -> Result<()> {
    let generated = readme::generate(root)?;
    let readme_path = root.join(README);
    let current = std::fs::read_to_string(&readme_path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", readme_path.display()))?;
    let files = [
        (RESULTS_README, generated.results_readme.clone()),
        (README, check::replace_headline(&current, &generated.headline)?),
    ];
    let mut differences = Vec::new();
    for (name, text) in &files {
        let path = root.join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        let Some(diff) = check::difference(name, &committed, text) else { continue };
        if check {
            differences.push((name, diff));
        } else {
            std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            eprintln!("report: wrote {}", path.display());
        }
    }
    if !differences.is_empty() {
        for (_, diff) in &differences {
            eprint!("{diff}");
        }
        let names: Vec<&str> = differences.iter().map(|(n, _)| **n).collect();
        bail!(
            "{} differ{} from what `{}` writes: run it and commit the result",
            names.join(" and "),
            if names.len() == 1 { "s" } else { "" },
            check::COMMAND
        );
    }
    Ok(())
}

/// A UTC date and minute, e.g. `2026-11-22 10:41 UTC`.
fn date(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The start of the group's last run: the earliest time of the newest
/// cluster of results, clusters split where no result was written for
/// [`RUN_GAP`].
fn last_run_start(rows: &Rows) -> SystemTime {
    let mut times: Vec<SystemTime> = rows.values().flat_map(|r| r.values()).map(|m| m.written).collect();
    times.sort();
    let mut start = times[0];
    for pair in times.windows(2) {
        if pair[1].duration_since(pair[0]).unwrap_or_default() > RUN_GAP {
            start = pair[1];
        }
    }
    start
}

/// One group's Markdown table, with its heading and the dates of its
/// results.
fn table(group: &str, rows: &Rows) -> String {
    let mut out = String::new();
    let libs: BTreeSet<&String> =
        rows.values().flat_map(|r| r.keys()).filter(|l| *l != "plaintext").collect();
    let send_loop = group.starts_with("send-loop") || group.starts_with("udp-send-loop");
    let throughput = send_loop || rows.values().flat_map(|r| r.values()).any(|r| r.bytes.is_some());
    let unit = if send_loop {
        "kpps: thousands of writes per second, one datagram each in DTLS; MB/s of payload"
    } else if throughput {
        "MB/s"
    } else {
        "µs"
    };
    let start = last_run_start(rows);
    let newest = rows.values().flat_map(|r| r.values()).map(|m| m.written).max().unwrap_or(start);
    let heading = if libs.is_empty() {
        format!("{group} (median, {unit}; no TLS library)")
    } else {
        format!("{group} (median, {unit}; ratio to the row's best TLS library)")
    };
    out.push_str(&format!("\n### {heading}\n\nResults written {} to {}", date(start), date(newest)));
    let older: Vec<&Measurement> =
        rows.values().flat_map(|r| r.values()).filter(|m| m.written < start).collect();
    if !older.is_empty() {
        out.push_str(&format!("; `*`: {} from earlier runs, dated in the cell", older.len()));
    }
    out.push_str(".\n\n");
    let mut header: Vec<String> = vec!["parameters".into()];
    header.extend(libs.iter().map(|l| l.to_string()));
    header.push("plaintext floor".into());
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for (params, cells) in rows {
        // Higher is better for MB/s and kpps, lower for µs.
        let value = |r: &Measurement| match r.bytes {
            _ if send_loop => SEND_LOOP_WRITES as f64 / r.median_ns * 1e6, // writes/ns * 1e6 = kpps
            Some(b) => b as f64 / r.median_ns * 1e3,                       // bytes/ns * 1e3 = MB/s
            None => r.median_ns / 1e3,
        };
        // The send loop's payload, the id's last parameter (`1024B`).
        let payload: f64 = params
            .rsplit(',')
            .next()
            .and_then(|p| p.strip_suffix('B'))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        let shown = |v: f64| {
            if send_loop { format!("{v:.0} kpps, {:.0} MB/s", v * payload / 1e3) } else { format!("{v:.1}") }
        };
        let mark = |r: &Measurement| {
            if r.written < start { format!(" *{}", date(r.written)) } else { String::new() }
        };
        let tls: Vec<f64> = libs.iter().filter_map(|l| cells.get(*l)).map(value).collect();
        let best = if throughput {
            tls.iter().cloned().reduce(f64::max)
        } else {
            tls.iter().cloned().reduce(f64::min)
        };
        let mut row = vec![params.clone()];
        for l in &libs {
            row.push(match (cells.get(*l), best) {
                (Some(r), Some(best)) => {
                    let v = value(r);
                    let ratio = if throughput { best / v } else { v / best };
                    format!("{} ({ratio:.2}x){}", shown(v), mark(r))
                }
                _ => "skipped".to_string(),
            });
        }
        row.push(match (cells.get("plaintext"), best) {
            (Some(r), Some(best)) if throughput => {
                let v = value(r);
                let text = if send_loop { shown(v) } else { format!("{v:.0}") };
                format!("{text} ({:.1}x the best TLS){}", v / best, mark(r))
            }
            (Some(r), Some(best)) => {
                format!("{:.2} ({:.2}% of the best TLS){}", value(r), value(r) / best * 100.0, mark(r))
            }
            (Some(r), None) => format!("{:.2}{}", value(r), mark(r)),
            (None, _) => "-".to_string(),
        });
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}
