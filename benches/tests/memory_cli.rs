//! The `memory` binary's command line as a user meets it: output paths and
//! bounds checked before any measuring, repeated selectors measured once, a
//! run that measures nothing is a failure, and `plot` writes where it is
//! told and redraws the committed graph from the committed data. Each run
//! measures one small case (one library, one kind, one chain, 2 pairs), so
//! the file takes about a second.

#[path = "../../tests/common/support.rs"]
mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;
use tls_bench_harness::libs;

/// A small, fast selection: [`common::small_library`], one kind, one chain, 2 pairs,
/// 1 write per size, after `--libraries`.
const SMALL: [&str; 9] =
    ["--kinds", "server-auth", "--chains", "ECDSA-P256", "-n", "2", "--writes", "1", "--libraries"];

/// What every measured case prints to stderr (see `measure_all`).
const MEASURED_LINE: &str = "allocations per handshake";

/// Runs `memory` with `args`: (exit status success, stdout, stderr).
fn memory(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memory")).args(args).output().expect("running memory");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// An empty scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    common::scratch("memory-cli", test)
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `memory measure` with `extra` options and a JSON report in `dir`: (exit
/// success, stderr, the report if written).
fn measure(dir: &Path, extra: &[&str]) -> (bool, String, Option<Value>) {
    let json = dir.join("report.json");
    let mut args = vec!["measure", "--json", text(&json)];
    args.extend(extra);
    let (ok, _, err) = memory(&args);
    let report = json.exists().then(|| serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap());
    (ok, err, report)
}

#[test]
fn unwritable_report_paths_fail_before_measuring() {
    let dir = scratch("unwritable");
    let file = dir.join("a-file");
    fs::write(&file, "x").unwrap();
    let under_file = file.join("report.csv");
    let ok_json = dir.join("ok.json");
    let full = Path::new("/dev/full");
    // A directory as the JSON report; a CSV report under a plain file; a
    // device (it takes the open, and refuses the writes at the end).
    for (bad, paths) in [
        (dir.as_path(), ["--json", text(&dir)].as_slice()),
        (under_file.as_path(), ["--json", text(&ok_json), "--csv", text(&under_file)].as_slice()),
        (full, ["--json", "/dev/full"].as_slice()),
        (full, ["--json", text(&ok_json), "--csv", "/dev/full"].as_slice()),
    ] {
        let lib = common::small_library();
        let args: Vec<&str> =
            ["measure"].iter().chain(paths).chain(&SMALL).copied().chain([lib.as_str()]).collect();
        let (ok, _, err) = memory(&args);
        assert!(!ok, "{} accepted", bad.display());
        assert!(err.contains(text(bad)), "the error does not name {}: {err}", bad.display());
        assert!(!err.contains(MEASURED_LINE), "{}: measured before failing: {err}", bad.display());
        assert!(!ok_json.exists(), "{}: a report was written", bad.display());
    }
}

#[test]
fn the_same_file_spelt_two_ways_is_refused_before_measuring() {
    let dir = scratch("same-file");
    let json = dir.join("x.json");
    let name = dir.file_name().unwrap().to_str().unwrap();
    let same = dir.join("..").join(name).join(".").join("x.json");
    let lib = common::small_library();
    let args: Vec<&str> = ["measure", "--json", text(&json), "--csv", text(&same)]
        .iter()
        .chain(&SMALL)
        .copied()
        .chain([lib.as_str()])
        .collect();
    let (ok, _, err) = memory(&args);
    assert!(!ok, "--csv {} accepted beside --json {}", same.display(), json.display());
    assert!(err.contains("are the same file") && err.contains(text(&same)), "{err}");
    assert!(!err.contains(MEASURED_LINE), "measured before failing: {err}");
    assert!(!json.exists(), "a report was written");
}

#[test]
fn counts_above_their_bounds_are_refused_naming_value_and_bound() {
    let json = scratch("bounds").join("r.json");
    for (flag, value, bound) in [
        ("-n", "1000000000000", "10000"),
        ("--writes", "100001", "10000"),
        ("--write-sizes", "1024,99999999", "1048576"),
    ] {
        let lib = common::small_library();
        let mut args = vec!["measure", "--json", text(&json), "--libraries", &lib];
        args.extend([flag, value]);
        let (ok, _, err) = memory(&args);
        assert!(!ok, "{flag} {value} accepted");
        let shown = value.rsplit(',').next().unwrap();
        assert!(err.contains(shown) && err.contains(&format!("from 1 to {bound}")), "{flag} {value}: {err}");
        assert!(!err.contains(MEASURED_LINE), "{flag} {value}: measured: {err}");
    }
}

#[test]
fn repeated_selectors_are_measured_once() {
    let dir = scratch("repeats");
    let lib = common::small_library();
    let twice = format!("{lib},{lib}");
    let (ok, err, report) = measure(
        &dir,
        &[
            "--libraries",
            &twice,
            "--kinds",
            "mTLS,mtls,MTLS",
            "--chains",
            "ECDSA-P256,ecdsa-p256",
            "--write-sizes",
            "1024,1024",
            "-n",
            "2",
            "--writes",
            "1",
        ],
    );
    assert!(ok, "{err}");
    let report = report.unwrap();
    let rows = report["rows"].as_array().unwrap();
    let measured: Vec<_> = rows.iter().map(|r| (&r["library"], &r["kind"], &r["chain"])).collect();
    assert_eq!(rows.len(), 1, "rows: {measured:?}");
    assert_eq!(rows[0]["kind"], "mTLS");
    assert_eq!(rows[0]["writes"].as_array().unwrap().len(), 1, "write sizes");
    assert_eq!(err.matches(MEASURED_LINE).count(), 1, "{err}");
}

/// Every built library alone on one case: exit 0 exactly when it measured
/// something. A library that skips the case (e.g. a FIPS build refusing
/// x25519) must fail, naming the skip's reason.
#[test]
fn a_run_that_measures_nothing_fails_naming_the_skips() {
    for lib in libs::all() {
        let name = lib.name();
        let dir = scratch(&format!("nothing-{}", name.replace(['+', '[', ']'], "_")));
        let (ok, err, report) = measure(
            &dir,
            &[
                "--libraries",
                &name,
                "--kinds",
                "server-auth",
                "--chains",
                "ECDSA-P256",
                "-n",
                "1",
                "--writes",
                "1",
            ],
        );
        let rows = report.as_ref().map_or(0, |r| r["rows"].as_array().unwrap().len());
        if ok {
            assert_eq!(rows, 1, "{name}: exit 0 with {rows} rows: {err}");
        } else {
            assert!(err.contains("nothing measured") && err.contains("skipped"), "{name}: {err}");
            assert!(report.is_none(), "{name}: a report without rows was written");
        }
    }
}

#[test]
fn plot_creates_a_missing_svg_directory() {
    let dir = scratch("plot-dir");
    let lib = common::small_library();
    let (ok, err, _) = measure(&dir, &[SMALL.as_slice(), &[lib.as_str()]].concat());
    assert!(ok, "{err}");
    let svg = dir.join("not/yet/there/memory.svg");
    let (ok, _, err) = memory(&["plot", "--svg", text(&svg), text(&dir.join("report.json"))]);
    assert!(ok, "{err}");
    assert!(fs::read_to_string(&svg).unwrap().contains(&lib));
}

/// `memory plot` without reports reads the committed memory/data/; what it
/// draws is memory/memory.svg as committed (drawing is deterministic: no
/// font is measured). A failure here means the committed graph and data
/// disagree: `memory/bench-memory.sh --update-committed` remakes both, and
/// `cargo run --release --bin memory -- plot` redraws the graph alone.
#[test]
fn the_committed_graph_is_drawn_from_the_committed_data() {
    let root = tls_bench::variants::repo();
    let data: Vec<_> = fs::read_dir(root.join("memory/data")).expect("memory/data/ missing").collect();
    assert!(!data.is_empty(), "memory/data/ is empty");
    let svg = scratch("committed").join("memory.svg");
    let (ok, _, err) = memory(&["plot", "--svg", text(&svg)]);
    assert!(ok, "{err}");
    let (drawn, committed) =
        (fs::read_to_string(&svg).unwrap(), fs::read_to_string(root.join("memory/memory.svg")).unwrap());
    assert!(drawn == committed, "memory/memory.svg is not what memory/data/ draws");
}

#[test]
fn update_committed_refuses_a_partial_memory_run_before_any_work() {
    for (args, picked) in [
        (&["variants", "--update-committed", "--quick"][..], None),
        (&["variants", "--libraries", "plaintext", "--update-committed"][..], None),
        (&["variants", "--update-committed", "-n", "5"][..], None),
        (&["variants", "--update-committed"][..], Some("default")),
    ] {
        let (code, err) = common::run_picking(env!("CARGO_BIN_EXE_memory"), args, picked);
        assert_eq!(code, Some(2), "{args:?} {picked:?}: {err}");
        assert!(err.contains("needs a complete run") && err.contains("refused for: "), "{err}");
        assert!(!err.contains("=== memory"), "a variant ran: {err}");
    }
    let (code, err) =
        common::run_picking(env!("CARGO_BIN_EXE_memory"), &["variants", "--quick"], Some("nonesuch"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("unknown variant \"nonesuch\"") && !err.contains("=== memory"), "{err}");
}

#[test]
fn memory_variants_help_is_the_scripts_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_memory")).args(["variants", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for part in ["memory/bench-memory.sh --update-committed", "--quick", "TLS_BENCH_VARIANTS", "--libraries"]
    {
        assert!(help.contains(part), "{part} missing:\n{help}");
    }
}
