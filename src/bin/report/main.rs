//! Prints Markdown tables of Criterion results (medians) from
//! `target/criterion` (`CRITERION_HOME` or `CARGO_TARGET_DIR` when set), one per benchmark group: a row per parameter set, a
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
//! ([`tls_bench_results::instructions`]); with `--instructions --noise`,
//! each count's difference from the run before.
//!
//! `report results` writes `results/README.md` from the committed results
//! and the headline block of `README.md`
//! ([`tls_bench_results::readme`]); `report results --check` writes
//! nothing and exits 1, showing the differences, when either differs from
//! what it would write (CI runs it).
//!
//! Usage: `cargo run --release --bin report [-- --criterion-dir DIR] [--save FILE]`
//! (`--save`: the figures read, as JSON, for `report results` to table a
//! committed run: [`tls_bench_results::criterion`]),
//! `... -- --instructions [--noise] [--gungraun-dir DIR]`,
//! `... -- results [--check] [--root DIR]`.

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use tls_bench_harness::{error::exit_code, out, parsed_or_exit, paths};
use tls_bench_results::{
    check::{self, README, RESULTS_README},
    criterion, criterion_json, gungraun_json, instructions, readme,
};

#[derive(Parser)]
#[command(about = "Markdown tables of tls-bench Criterion medians", args_conflicts_with_subcommands = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Criterion's output directory, as Criterion finds it: `CRITERION_HOME`,
    /// else `criterion` in the target directory (`CARGO_TARGET_DIR`).
    #[arg(long, default_value_os_t = paths::criterion_home())]
    criterion_dir: PathBuf,
    /// Report the instruction counts (`cargo bench --bench instructions`)
    /// instead of Criterion's times.
    #[arg(long)]
    instructions: bool,
    /// With --instructions: each count's difference from the run before it
    /// (gungraun keeps one), largest first, against the noise goals.
    #[arg(long, requires = "instructions")]
    noise: bool,
    /// Also write the Criterion figures read, as JSON, to this file (to
    /// commit a run: `report results` tables them again from there).
    #[arg(long, conflicts_with = "instructions")]
    save: Option<PathBuf>,
    /// gungraun's output directory (with --instructions), in the target
    /// directory (`CARGO_TARGET_DIR`).
    #[arg(long, default_value_os_t = paths::target_dir().join("gungraun"))]
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

fn main() -> ExitCode {
    exit_code(run(parsed_or_exit!(Args::try_parse())))
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
        out!("{}", if args.noise { instructions::noise(&counts)? } else { instructions::tables(&counts) })?;
        return Ok(());
    }
    if let Some(save) = &args.save {
        check_writable(save)?;
    }
    let dir = &args.criterion_dir;
    if !dir.is_dir() {
        bail!("no results under {}: run `cargo bench` first", dir.display());
    }
    let results = criterion_json::read_all(dir)?;
    if results.is_empty() {
        bail!("no tls-bench results under {}: run `cargo bench` first", dir.display());
    }
    if let Some(save) = &args.save {
        let json = serde_json::to_string_pretty(&results)? + "\n";
        std::fs::write(save, json).map_err(|e| anyhow::anyhow!("writing {}: {e}", save.display()))?;
        eprintln!("report: wrote {} figures to {}", results.len(), save.display());
    }
    out!("{}", criterion::tables(&results))?;
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
        (
            README,
            check::replace_block(
                &check::replace_headline(&current, &generated.headline)?,
                check::SOCKETS_START,
                check::SOCKETS_END,
                &generated.sockets,
            )?,
        ),
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

/// Errors unless `path` can be written: its directory exists and it is not
/// a directory (checked before any work).
fn check_writable(path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        bail!("--save {}: is a directory", path.display());
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        bail!("--save {}: no directory {}", path.display(), parent.display());
    }
    Ok(())
}
