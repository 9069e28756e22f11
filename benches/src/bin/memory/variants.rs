//! `memory variants` (what `memory/bench-memory.sh` runs): `memory measure`
//! once per build variant ([`tls_bench::variants`]), each in its own build,
//! then one graph of all their reports. With `--update-committed`, a
//! complete run replaces the committed reports (`memory/data/`) and graph
//! (`memory/memory.svg`); the gate is [`VariantsArgs::refusal`].

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, ensure};
use tls_bench::variants::{self, VARIANTS_ENV};

use crate::{PlotArgs, Selection, committed_data, plot_reports};

/// `memory variants --help` (and so `memory/bench-memory.sh --help`).
pub const LONG_ABOUT: &str = "\
Heap per TLS connection and allocations per handshake and per write, for
every library of every build variant, then the graph. This is what
memory/bench-memory.sh runs.

  memory/bench-memory.sh [memory measure options]
    target/memory/<variant>.{json,csv} and target/memory/memory.svg
  memory/bench-memory.sh --quick [options]
    10 pairs: the same under target/memory/quick/
  memory/bench-memory.sh --update-committed
    a complete run (every variant, no other option, TLS_BENCH_VARIANTS
    unset), then its reports replace memory/data/<variant>.json and
    memory/memory.svg is redrawn from exactly those (refused, before any
    work, for anything less)
  memory/bench-memory.sh -h | --help
    this text, nothing else

Each variant is `cargo run --release <its cargo arguments> --bin memory --
measure --json ... --csv ... [options]` (`cargo run --release --bin variants
-- list` lists them). The options apply to every variant: with
--libraries, pick the variants holding those libraries with
TLS_BENCH_VARIANTS (names, space-separated), e.g.
TLS_BENCH_VARIANTS=default memory/bench-memory.sh --libraries rustls.
`cargo run --release --bin memory -- plot` redraws memory/memory.svg from
memory/data/ without measuring.";

/// What the measuring runs' glibc is told: without its per-thread cache,
/// mallinfo2 (the cross-check in each report) counts exactly; the figures
/// themselves do not depend on it.
const GLIBC_TUNABLES: &str = "glibc.malloc.tcache_count=0";

#[derive(clap::Args)]
pub struct VariantsArgs {
    /// After a complete run (every variant, no other option,
    /// TLS_BENCH_VARIANTS unset), replace memory/data/<variant>.json with
    /// its reports and redraw memory/memory.svg from exactly those.
    /// Refused, before any work, for anything less.
    #[arg(long)]
    update_committed: bool,
    #[command(flatten)]
    selection: Selection,
}

impl VariantsArgs {
    /// Why `--update-committed` is refused, given `TLS_BENCH_VARIANTS`'s
    /// value `picked`: a message naming what makes the run partial (each
    /// option given, and the variable when set and not empty); `None` when
    /// the run is complete or does not update.
    pub fn refusal(&self, picked: Option<&str>) -> Option<String> {
        if !self.update_committed {
            return None;
        }
        let mut partial: Vec<String> = self.selection.given().into_iter().map(str::to_string).collect();
        if let Some(v) = picked.filter(|v| !v.is_empty()) {
            partial.push(format!("{VARIANTS_ENV}={v}"));
        }
        (!partial.is_empty()).then(|| {
            format!(
                "--update-committed needs a complete run (every variant, no other option); refused for: {}",
                partial.join(" ")
            )
        })
    }
}

impl Selection {
    /// The `memory measure` options that give this selection (the inverse
    /// of parsing them). Every field is read, so a new option cannot be
    /// left behind.
    fn to_args(&self) -> Vec<String> {
        let Selection { libraries, kinds, chains, connections, write_sizes, writes, quick, protocols, dtls } =
            self;
        let mut args = Vec::new();
        let mut list = |name: &str, values: Vec<String>| {
            if !values.is_empty() {
                args.extend([name.to_string(), values.join(",")]);
            }
        };
        list("--libraries", libraries.clone());
        list("--kinds", kinds.clone());
        list("--chains", chains.clone());
        list("-n", connections.iter().map(usize::to_string).collect());
        list("--write-sizes", write_sizes.iter().map(usize::to_string).collect());
        list("--writes", writes.iter().map(usize::to_string).collect());
        list("--protocols", protocols.clone());
        if *quick {
            args.push("--quick".to_string());
        }
        if *dtls {
            args.push("--dtls".to_string());
        }
        args
    }
}

/// Runs `memory measure` in each variant `TLS_BENCH_VARIANTS` picks, then
/// draws the graph: beside the reports, or (`--update-committed`, the
/// caller having checked [`VariantsArgs::refusal`]) the committed one from
/// the committed reports, replaced by these. Errors: an unknown variant
/// (before any run), a variant's build or measurement failing (the runs
/// after it are not started), a report or graph that cannot be written.
pub fn run(args: VariantsArgs) -> Result<()> {
    let picked = variants::from_env()?;
    let repo = variants::repo();
    let out = repo.join(if args.selection.quick { "target/memory/quick" } else { "target/memory" });
    let options = args.selection.to_args();
    let mut reports = Vec::new();
    for v in picked {
        let (json, csv) = (out.join(format!("{}.json", v.name)), out.join(format!("{}.csv", v.name)));
        eprintln!("=== memory, variant {}", v.name);
        let mut cmd = v.cargo(&["run", "--release"]);
        cmd.args(["--bin", "memory", "--", "measure", "--json"])
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .args(&options)
            .env("GLIBC_TUNABLES", GLIBC_TUNABLES);
        let status = cmd.status().context("running cargo")?;
        ensure!(status.success(), "variant {}: measuring failed ({status})", v.name);
        reports.push(json);
    }
    if args.update_committed {
        replace_committed(&reports, &committed_data())?;
        plot_reports(PlotArgs { svg: None, markdown: false, inputs: Vec::new() })
    } else {
        plot_reports(PlotArgs { svg: Some(out.join("memory.svg")), markdown: false, inputs: reports })?;
        eprintln!(
            "memory/memory.svg and memory/data/ unchanged (memory/bench-memory.sh --update-committed replaces them)"
        );
        Ok(())
    }
}

/// Makes `data` hold exactly `reports` (by file name): every `*.json` in
/// it is removed first. Errors: a file that cannot be listed, removed or
/// copied, named.
fn replace_committed(reports: &[PathBuf], data: &Path) -> Result<()> {
    fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    for entry in fs::read_dir(data).with_context(|| format!("listing {}", data.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    for report in reports {
        let to = data.join(report.file_name().context("a report path without a file name")?);
        fs::copy(report, &to).with_context(|| format!("copying {} to {}", report.display(), to.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::{Cli, Command};

    fn parse(args: &[&str]) -> VariantsArgs {
        let argv = ["memory", "variants"].iter().chain(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Variants(a) => a,
            _ => panic!("not variants"),
        }
    }

    #[test]
    fn update_committed_takes_only_a_complete_run() {
        assert_eq!(parse(&["--update-committed"]).refusal(None), None);
        assert_eq!(parse(&["--update-committed"]).refusal(Some("")), None);
        assert_eq!(parse(&["--quick", "-n", "5"]).refusal(Some("default")), None, "no update asked");
        for (args, env, named) in [
            (&["--update-committed", "--quick"][..], None, "--quick"),
            (&["--libraries", "plaintext", "--update-committed"][..], None, "--libraries"),
            (&["--update-committed", "-n", "5"][..], None, "-n"),
            (&["--update-committed", "--write-sizes", "1024,16384"][..], None, "--write-sizes"),
            (&["--update-committed"][..], Some("default"), "TLS_BENCH_VARIANTS=default"),
        ] {
            let why = parse(args).refusal(env).unwrap_or_else(|| panic!("{args:?} {env:?} accepted"));
            assert!(why.contains("refused for: ") && why.contains(named), "{why}");
        }
    }

    #[test]
    fn the_options_reach_each_variant_as_given() {
        let given = [
            "--libraries",
            "rustls,openssl",
            "--kinds",
            "mTLS",
            "--chains",
            "ECDSA-P256",
            "-n",
            "5",
            "--write-sizes",
            "1024",
            "--writes",
            "2",
            "--protocols",
            "TLSv1.2",
            "--quick",
        ];
        let args = parse(&given).selection.to_args();
        assert_eq!(args, given);
        assert!(parse(&[]).selection.to_args().is_empty());
        assert_eq!(parse(&["--dtls"]).selection.to_args(), ["--dtls"]);
    }

    #[test]
    fn the_committed_data_becomes_exactly_the_reports() {
        let dir = std::env::temp_dir().join(format!("tls-bench-memory-variants-{}", std::process::id()));
        let (data, out) = (dir.join("data"), dir.join("out"));
        fs::create_dir_all(&data).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::write(data.join("gone.json"), "{}").unwrap();
        fs::write(data.join("README"), "kept").unwrap();
        fs::write(out.join("default.json"), "{\"a\":1}").unwrap();
        replace_committed(&[out.join("default.json")], &data).unwrap();
        let mut names: Vec<String> =
            fs::read_dir(&data).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["README", "default.json"]);
        assert_eq!(fs::read_to_string(data.join("default.json")).unwrap(), "{\"a\":1}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
