//! The `historical-perf` binary as a user meets it, without a build or the
//! network: release lists come from a fixture index (`HISTORICAL_PERF_INDEX`),
//! and `cargo` on its PATH is a stand-in: one that fails at once, so a
//! release's build fails the way a broken one would, or one that plays a
//! successful instruction-count run (writing gungraun summaries). Covered:
//! every subcommand and option in the top-level help; an unsupported release
//! refused with its reason; a failed release failing the run; plot with no
//! committed data; the committed results and graphs replaced only by a
//! complete set, and redrawn from it identically; `--instructions` runs
//! (the cargo command and environment, the counts read back, tabled and
//! drawn in instructions, nothing counted failing, never committed). (CI
//! runs real builds in its smoke run.)

mod common;

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::Command,
};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("historical-cli", name)
}

/// rustls's releases in the sparse index's layout under `dir`; its default
/// selection is then 0.20.9, 0.21.12, 0.22.4 and 0.23.46 (0.22.0 and 0.23.0
/// are only taken when named: tests that run a stand-in build use them, so
/// that what they leave under `target/historical-perf` is theirs).
fn fixture_index(dir: &Path) -> PathBuf {
    let index = dir.join("index");
    fs::create_dir_all(index.join("ru/st")).unwrap();
    let lines: String = ["0.19.1", "0.20.9", "0.21.12", "0.22.0", "0.22.4", "0.23.0", "0.23.46"]
        .iter()
        .map(|v| format!("{{\"name\":\"rustls\",\"vers\":\"{v}\",\"yanked\":false}}\n"))
        .collect();
    fs::write(index.join("ru/st/rustls"), lines).unwrap();
    index
}

/// A directory under `dir` holding a `cargo` that runs `script` (sh), for
/// PATH.
fn stand_in_cargo(dir: &Path, script: &str) -> PathBuf {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    fs::write(&cargo, format!("#!/bin/sh\n{script}")).unwrap();
    fs::set_permissions(&cargo, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// A stand-in `cargo` that fails at once.
const FAILING_CARGO: &str = "echo 'error: stand-in cargo of tests/historical_cli.rs' >&2\nexit 101\n";

/// Runs historical-perf with `args` in the fixture world of `dir`: returns
/// (success, stdout, stderr).
fn historical(dir: &Path, args: &[&str]) -> (bool, String, String) {
    historical_with(dir, FAILING_CARGO, args)
}

/// [`historical`] with `cargo` running `script`.
fn historical_with(dir: &Path, script: &str, args: &[&str]) -> (bool, String, String) {
    let bin = stand_in_cargo(dir, script);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(env!("CARGO_BIN_EXE_historical-perf"))
        .args(args)
        .env("HISTORICAL_PERF_INDEX", fixture_index(dir))
        .env("PATH", path)
        .output()
        .expect("running historical-perf");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `--long` options listed in a help text.
fn options(help: &str) -> Vec<String> {
    help.lines()
        .map(|l| l.trim_start().trim_start_matches("-h, "))
        .filter(|l| l.starts_with("--"))
        .filter_map(|l| l.split([' ', '<', '=']).next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_top_level_help_lists_every_subcommand_and_option() {
    let dir = scratch("help");
    for top in ["--help", "-h"] {
        let (ok, help, _) = historical(&dir, &[top]);
        assert!(ok, "{top}");
        for sub in ["run", "plot", "list"] {
            let (ok, sub_help, _) = historical(&dir, &[sub, "--help"]);
            assert!(ok, "{sub} --help");
            assert!(
                help.contains(&format!("Usage: historical-perf {sub} [OPTIONS]")),
                "{top}: {sub}\n{help}"
            );
            let listed = options(&sub_help);
            assert!(listed.len() > 3, "{sub}: {listed:?}");
            for option in listed {
                assert!(help.contains(&option), "{top} lacks {sub} {option}\n{help}");
            }
        }
        for option in [
            "--versions",
            "--rounds",
            "--add-rounds",
            "--kept",
            "--update-committed",
            "--committed",
            "--instructions",
        ] {
            assert!(help.contains(option), "{top} lacks {option}");
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unsupported_release_is_refused_with_its_reason() {
    let dir = scratch("unsupported");
    let out = dir.join("kept");
    let (ok, _, err) = historical(&dir, &["run", "rustls", "--versions", "0.19.1", "--out", s(&out)]);
    assert!(!ok, "rustls 0.19.1 accepted: {err}");
    assert!(err.contains("rustls 0.19.1") && err.contains("no shim for the rustls 0.19 API"), "{err}");
    assert!(!out.exists(), "something was run or kept");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_release_fails_the_run_and_the_summary_names_it() {
    let dir = scratch("failed");
    let out = dir.join("kept");
    let (ok, _, err) = historical(&dir, &["run", "rustls", "--versions", "0.23.46", "--out", s(&out)]);
    assert!(!ok, "a failed --versions release exited 0: {err}");
    assert!(err.contains("FAILED rustls 0.23.46: ") && err.contains("stand-in cargo"), "{err}");
    assert!(err.contains("asked for with --versions failed"), "{err}");
    // The default selection: every release failed, nothing measured.
    let (ok, _, err) = historical(&dir, &["run", "rustls", "--newest", "2", "--out", s(&out)]);
    assert!(!ok, "a run that measured nothing exited 0: {err}");
    assert!(err.contains("FAILED rustls 0.22.4: ") && err.contains("nothing was measured"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_graphs_directory_that_cannot_be_made_is_named() {
    let dir = scratch("plot-graphs");
    let file = dir.join("a-file");
    fs::write(&file, "x").unwrap();
    let graphs = file.join("graphs");
    let (ok, _, err) = historical(&dir, &["plot", "rustls", "--graphs", s(&graphs)]);
    assert!(!ok, "an unwritable --graphs accepted: {err}");
    assert!(err.contains("creating the graphs directory") && err.contains(s(&graphs)), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_releases_at_all_is_refused() {
    let dir = scratch("newest-0");
    let (ok, out, err) = historical(&dir, &["list", "rustls", "--newest", "0"]);
    assert!(!ok && out.is_empty(), "--newest 0 accepted: {out}");
    assert!(err.contains("--newest") && err.contains("'0'"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_out_or_graphs_path_is_refused_before_any_build() {
    let dir = scratch("bad-paths");
    let file = dir.join("a-file");
    fs::write(&file, "x").unwrap();
    let kept = dir.join("kept");
    for (option, args) in [
        ("--out", ["--out", s(&file), "--graphs", s(&kept)]),
        ("--graphs", ["--out", s(&kept), "--graphs", s(&file)]),
    ] {
        let mut all = vec!["run", "rustls", "--versions", "0.23.46"];
        all.extend(args);
        let (ok, _, err) = historical(&dir, &all);
        assert!(!ok, "{option} on a file accepted: {err}");
        assert!(err.contains(option) && err.contains(s(&file)), "{err}");
        assert!(!err.contains("stand-in cargo"), "{option}: a build ran before the check: {err}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn plot_without_committed_data_says_why_and_fails() {
    let dir = scratch("plot");
    let root = dir.join("historical-perf");
    let graphs = dir.join("graphs");
    let (ok, _, err) = historical(&dir, &["plot", "rustls", "--committed", s(&root), "--graphs", s(&graphs)]);
    assert!(!ok && err.contains("no committed results"), "{err}");
    fs::create_dir_all(root.join("graphs/rustls")).unwrap();
    fs::write(root.join("graphs/rustls/old.svg"), "<svg/>").unwrap();
    let (ok, _, err) = historical(&dir, &["plot", "rustls", "--committed", s(&root), "--graphs", s(&graphs)]);
    assert!(!ok, "{err}");
    assert!(err.contains("predate committed data"), "{err}");
    assert!(err.contains("bench-past.sh rustls --rounds 2 --update-committed"), "{err}");
    assert!(!graphs.exists());
    // --kept with nothing kept: an error too, not "0 graphs".
    let (ok, _, err) = historical(&dir, &["plot", "rustls", "--kept", "--out", s(&dir.join("none"))]);
    assert!(!ok && err.contains("no kept results"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

/// A kept result of rustls `release` (two benchmarks) under `out`.
fn keep(out: &Path, release: &str, quick: bool) {
    let bench = |key: &str, ns: f64, bytes: Option<u64>| {
        serde_json::json!({
            "key": key, "library_id": format!("rustls-{release}+ring"),
            "median_ns": ns, "lower_ns": ns * 0.98, "upper_ns": ns * 1.02, "bytes": bytes,
        })
    };
    let result = serde_json::json!({
        "library": "rustls", "release": release, "crate_version": release, "libcrypto": "ring 0.17.14",
        "date": "2026-11-21", "cpu": "fixture CPU", "quick": quick, "rounds": 2,
        "benchmarks": [
            bench("handshake/server-auth,TLSv1.3/rustls+ring", 430_000.0, None),
            bench("throughput/server-auth,TLSv1.3,1024B/rustls+ring", 88_000.0, Some(65_536)),
        ],
        "failure": null,
    });
    fs::create_dir_all(out.join("rustls")).unwrap();
    fs::write(out.join(format!("rustls/{release}.json")), result.to_string()).unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    names.sort();
    names
}

#[test]
fn committed_results_and_graphs_change_only_to_a_complete_set_and_redraw_identically() {
    let dir = scratch("committed");
    let (kept, root) = (dir.join("kept"), dir.join("historical-perf"));
    fs::create_dir_all(root.join("graphs/rustls")).unwrap();
    fs::write(root.join("graphs/rustls/old.svg"), "<svg/>").unwrap();
    keep(&kept, "0.23.46", false);
    keep(&kept, "0.22.4", true);
    let update =
        ["plot", "rustls", "--kept", "--out", s(&kept), "--update-committed", "--committed", s(&root)];
    let (ok, _, err) = historical(&dir, &update);
    assert!(!ok, "an incomplete set was committed: {err}");
    for gap in ["0.20.9 (no kept result)", "0.21.12 (no kept result)", "0.22.4 (only a --quick result"] {
        assert!(err.contains(gap), "{gap}: {err}");
    }
    assert_eq!(names(&root.join("graphs/rustls")), ["old.svg"]);
    assert!(!root.join("data").exists());
    // A run that cannot complete the set is refused before it runs; a quick one cannot commit.
    let run =
        ["run", "rustls", "--versions", "0.23.46", "--out", s(&kept), "--update-committed", "--committed"];
    let (ok, _, err) = historical(&dir, &[&run[..], &[s(&root)]].concat());
    assert!(!ok && err.contains("Nothing was run") && err.contains("0.20.9 (no kept result)"), "{err}");
    let (ok, _, err) = historical(&dir, &["run", "rustls", "--quick", "--update-committed"]);
    assert!(!ok && err.contains("--quick"), "{err}");

    for release in ["0.20.9", "0.21.12", "0.22.4"] {
        keep(&kept, release, false);
    }
    keep(&kept, "0.22.0", false); // kept, but not in the default selection: not committed
    let (ok, table, err) = historical(&dir, &update);
    assert!(ok, "{err}");
    assert!(table.contains("| handshake/server-auth,TLSv1.3/rustls+ring | 0.23.46 |"), "{table}");
    let committed: Vec<String> =
        ["0.20.9", "0.21.12", "0.22.4", "0.23.46"].iter().map(|r| format!("{r}.json")).collect();
    assert_eq!(names(&root.join("data/rustls")), committed);
    let graphs = names(&root.join("graphs/rustls"));
    assert_eq!(graphs.len(), 2, "{graphs:?}: the stale old.svg is removed");

    // A fresh clone redraws the committed graphs from the committed data, identically.
    let redrawn = dir.join("redrawn");
    let (ok, _, err) =
        historical(&dir, &["plot", "rustls", "--committed", s(&root), "--graphs", s(&redrawn)]);
    assert!(ok, "{err}");
    assert_eq!(names(&redrawn.join("rustls")), graphs);
    for g in &graphs {
        let committed = fs::read(root.join("graphs/rustls").join(g)).unwrap();
        assert!(committed == fs::read(redrawn.join("rustls").join(g)).unwrap(), "{g} differs");
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// A stand-in `cargo` that plays a successful `--instructions` run: `cargo
/// tree` names *ring*; `cargo bench --no-run` builds nothing; `cargo bench`
/// logs its arguments and environment to `<dir>/cargo.log`, fails if its
/// GUNGRAUN_HOME was not emptied, and writes two gungraun summaries there
/// (a handshake and a transfer of the release named by GUNGRAUN_HOME's last
/// component), or with STAND_IN_COUNTS=none only a skip, written where the
/// benchmarks write theirs (`TLS_BENCH_SKIPS`, [`tls_bench_harness::skip`]).
fn counting_cargo(dir: &Path) -> String {
    let summary = |id: &str, instructions: &str| {
        format!(
            r#"{{"started_at":"2026-11-23T10:00:00Z","profiles":[{{"data":{{"parts":[{{"tool_run":{{"new":{{"command":"/t/run-case --iterations 1 --fixed-random {id}"}},"old":null}}}}],"total":{{"metrics":{{"Ir":{{"values":{{"new":{instructions},"old":null}}}}}}}}}}}}]}}"#
        )
    };
    let handshake = summary("handshake-client/server-auth,TLSv1.3/rustls-$release+ring", "$count");
    let transfer = summary("throughput-send/server-auth,TLSv1.3,1024B/rustls-$release+ring", "196608");
    format!(
        r#"log={log}
case "$1" in
  tree) echo "ring v0.17.14"; exit 0 ;;
  bench) ;;
  *) echo "error: stand-in cargo: unexpected $1" >&2; exit 101 ;;
esac
echo "$*" >> "$log"
case " $* " in *" --no-run "*) exit 0 ;; esac
if [ -e "$GUNGRAUN_HOME" ]; then echo "error: $GUNGRAUN_HOME was not emptied" >&2; exit 101; fi
echo "GUNGRAUN_HOME=$GUNGRAUN_HOME TLS_BENCH_INSTRUCTIONS=$TLS_BENCH_INSTRUCTIONS GUNGRAUN_SAVE_SUMMARY=$GUNGRAUN_SAVE_SUMMARY" >> "$log"
if [ "$STAND_IN_COUNTS" = none ]; then
  echo '{{"id":"handshake/x/rustls","reason":"stand-in"}}' >> "$TLS_BENCH_SKIPS"; exit 0
fi
release=$(basename "$GUNGRAUN_HOME")
case "$release" in 0.22.0) count=4000000 ;; *) count=4020000 ;; esac
mkdir -p "$GUNGRAUN_HOME/tls-bench/instructions/a" "$GUNGRAUN_HOME/tls-bench/instructions/b"
cat > "$GUNGRAUN_HOME/tls-bench/instructions/a/summary.json" <<EOF
{handshake}
EOF
cat > "$GUNGRAUN_HOME/tls-bench/instructions/b/summary.json" <<EOF
{transfer}
EOF
"#,
        log = dir.join("cargo.log").display()
    )
}

/// Removes what a stand-in instruction-count run left under the
/// repository's `target/historical-perf` (its build directories and
/// gungraun output), as named by the run's cargo log.
fn remove_stand_in_leftovers(log: &str) {
    for word in log.split_whitespace() {
        let path = word.strip_prefix("GUNGRAUN_HOME=").map(PathBuf::from).or_else(|| {
            word.ends_with("-instructions/Cargo.toml")
                .then(|| Path::new(word).parent().unwrap().to_path_buf())
        });
        if let Some(path) = path.filter(|p| p.exists()) {
            fs::remove_dir_all(&path).unwrap();
        }
    }
}

#[test]
fn an_instructions_run_counts_each_release_and_draws_instructions() {
    let dir = scratch("instructions");
    let out = dir.join("kept");
    let cargo = counting_cargo(&dir);
    let run = ["run", "rustls", "--instructions", "--quick", "--versions", "0.22.0,0.23.0", "--out", s(&out)];
    let (ok, table, err) = historical_with(&dir, &cargo, &run);
    let log = fs::read_to_string(dir.join("cargo.log")).unwrap_or_default();
    assert!(ok, "{err}\n{log}");
    assert!(err.contains("2 of 2 releases measured, 0 with failures"), "{err}");
    // Each release: built, then counted, with the suite's command, features
    // (`tools` for run-case) and environment.
    let bench = "--no-default-features --features rustls,historical-perf,tools --bench instructions";
    assert_eq!(log.matches(&format!("{bench} --no-run")).count(), 2, "{log}");
    assert!(log.contains("build/rustls-0.23.0-instructions/Cargo.toml"), "{log}");
    assert!(!log.contains("--bench handshake") && !log.contains("CRITERION"), "{log}");
    for release in ["0.22.0", "0.23.0"] {
        let env =
            format!("gungraun/rustls/{release} TLS_BENCH_INSTRUCTIONS=quick GUNGRAUN_SAVE_SUMMARY=json");
        assert!(log.contains(&env), "{env}: {log}");
    }
    // The table: counts per handshake and per byte, changes to hundredths.
    let row = "| handshake-client/server-auth,TLSv1.3/rustls+ring |";
    assert!(table.contains("| benchmark | release | instructions | change vs previous |"), "{table}");
    assert!(table.contains(&format!("{row} 0.22.0 | 4000000 instructions per handshake | - |")), "{table}");
    assert!(
        table.contains(&format!("{row} 0.23.0 | 4020000 instructions per handshake | +0.50% |")),
        "{table}"
    );
    let row = "| throughput-send/server-auth,TLSv1.3,1024B/rustls+ring |";
    assert!(table.contains(&format!("{row} 0.23.0 | 3.000 instructions per byte | +0.00% |")), "{table}");
    // Kept results and graphs, in instructions.
    let kept = fs::read_to_string(out.join("rustls/0.23.0.json")).unwrap();
    assert!(kept.contains(r#""per": "handshake""#) && kept.contains(r#""quick": true"#), "{kept}");
    let graphs = names(&out.join("graphs/rustls"));
    assert_eq!(graphs.len(), 2, "{graphs:?}");
    for g in &graphs {
        let svg = fs::read_to_string(out.join("graphs/rustls").join(g)).unwrap();
        let axis =
            if g.starts_with("throughput") { "instructions per byte" } else { "instructions per handshake" };
        assert!(svg.contains(axis) && svg.contains("0.22.0") && svg.contains("0.23.0"), "{g}");
    }
    // Again: each release's gungraun output is emptied first (the stand-in fails otherwise).
    let (ok, _, err) = historical_with(&dir, &cargo, &run);
    assert!(ok, "{err}");
    // plot --kept --instructions redraws the same graphs from the kept counts.
    let redrawn = dir.join("redrawn");
    let plot = ["plot", "rustls", "--kept", "--instructions", "--out", s(&out), "--graphs", s(&redrawn)];
    let (ok, again, err) = historical_with(&dir, &cargo, &plot);
    assert!(ok && again == table, "{err}");
    for g in &graphs {
        let drawn = fs::read(out.join("graphs/rustls").join(g)).unwrap();
        assert!(drawn == fs::read(redrawn.join("rustls").join(g)).unwrap(), "{g} differs");
    }
    remove_stand_in_leftovers(&fs::read_to_string(dir.join("cargo.log")).unwrap());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_instructions_run_that_counted_nothing_fails_and_counts_are_never_committed() {
    let dir = scratch("instructions-none");
    let out = dir.join("kept");
    let cargo = format!("STAND_IN_COUNTS=none\n{}", counting_cargo(&dir));
    // 0.22.4: a release no other test runs (tests run in parallel, and a
    // release's build and gungraun directories are shared).
    let run = ["run", "rustls", "--instructions", "--versions", "0.22.4", "--out", s(&out)];
    let (ok, _, err) = historical_with(&dir, &cargo, &run);
    assert!(!ok, "a run that counted nothing exited 0: {err}");
    assert!(err.contains("FAILED rustls 0.22.4: no benchmark ran; skips: skip handshake/x/rustls"), "{err}");
    assert!(err.contains("nothing was measured"), "{err}");
    let log = fs::read_to_string(dir.join("cargo.log")).unwrap();
    assert!(log.contains("TLS_BENCH_INSTRUCTIONS=full"), "{log}");
    remove_stand_in_leftovers(&log);

    let root = dir.join("historical-perf");
    let commit = ["run", "rustls", "--instructions", "--update-committed", "--committed", s(&root)];
    let (ok, _, err) = historical_with(&dir, &cargo, &commit);
    assert!(!ok && err.contains("--instructions") && err.contains("--update-committed"), "{err}");
    let (ok, _, err) = historical_with(&dir, &cargo, &["plot", "rustls", "--instructions"]);
    assert!(!ok && err.contains("--kept"), "{err}");
    assert!(!root.exists(), "something was committed");
    fs::remove_dir_all(&dir).unwrap();
}
