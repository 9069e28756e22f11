//! The tools' default directories follow the environment as cargo and
//! Criterion do, not the repository's `target/` as built: `CARGO_TARGET_DIR`
//! for the target directory (`interop`'s and `compare`'s workers and
//! outputs, `handshake-scaling --out`, `small-writes --out`, `report
//! --gungraun-dir`), and Criterion's output directory by Criterion's rule,
//! `CRITERION_HOME` else `<target>/criterion` (`report`, `small-writes
//! --report-only`). Each case fails before any work, naming the directory.

#![cfg(feature = "drivers")]

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

/// Longest a case may take: each fails before any work.
const TIMEOUT: Duration = Duration::from_secs(60);

fn scratch(test: &str) -> PathBuf {
    common::scratch("default-dirs", test)
}

/// Runs `exe args...` with `CARGO_TARGET_DIR` and `CRITERION_HOME` as
/// given (unset for `None`), within [`TIMEOUT`]: (exit code, stderr).
fn run(
    exe: &str,
    args: &[&str],
    target: Option<&Path>,
    criterion_home: Option<&Path>,
) -> (Option<i32>, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    for (key, value) in [("CARGO_TARGET_DIR", target), ("CRITERION_HOME", criterion_home)] {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    common::run_within(cmd, Stdio::null(), TIMEOUT)
}

/// A Criterion results directory under `dir` whose one result is not
/// JSON: a reader of it fails naming the file.
fn broken_criterion(dir: &Path) -> PathBuf {
    let new = dir.join("handshake/server-auth,TLSv1.3/plaintext/new");
    fs::create_dir_all(&new).unwrap();
    fs::write(new.join("benchmark.json"), "not JSON").unwrap();
    new.join("benchmark.json")
}

#[test]
fn report_reads_criterion_home_else_the_target_directory() {
    let dir = scratch("report");
    let report = env!("CARGO_BIN_EXE_report");
    let home = dir.join("home");
    let broken = broken_criterion(&home);
    // CRITERION_HOME first, whatever CARGO_TARGET_DIR says.
    let (code, err) = run(report, &[], Some(&dir.join("target")), Some(&home));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("parsing {}", broken.display())), "{err}");
    // Else `criterion` in CARGO_TARGET_DIR.
    let (code, err) = run(report, &[], Some(&dir.join("target")), None);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("no results under {}", dir.join("target/criterion").display())), "{err}");
    // The instruction counts: `gungraun` in CARGO_TARGET_DIR.
    let (code, err) = run(report, &["--instructions"], Some(&dir.join("target")), None);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("no instruction counts under {}", dir.join("target/gungraun").display())),
        "{err}"
    );
}

#[test]
fn small_writes_reads_criterion_home_and_its_out_follows_the_target_directory() {
    let dir = scratch("small-writes");
    let exe = env!("CARGO_BIN_EXE_small-writes");
    // The default --out: `small-writes` in CARGO_TARGET_DIR.
    let (code, err) = run(exe, &["--report-only"], Some(&dir.join("target")), None);
    assert_eq!(code, Some(1), "{err}");
    let saved = dir.join("target/small-writes/results.json");
    assert!(err.contains(&format!("no saved run at {}", saved.display())), "{err}");
    // A saved run (of no rows) is tabled with Criterion's results of
    // CRITERION_HOME: the broken one there is read, and named.
    fs::create_dir_all(saved.parent().unwrap()).unwrap();
    let report = serde_json::json!({
        "date": "2026-01-01T00:00:00Z", "host": "test", "iterations": 20, "warmup": 2, "rounds": 2, "rows": [],
    });
    fs::write(&saved, report.to_string()).unwrap();
    let broken = broken_criterion(&dir.join("home"));
    let (code, err) = run(exe, &["--report-only"], Some(&dir.join("target")), Some(&dir.join("home")));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("parsing {}", broken.display())), "{err}");
}

#[test]
fn the_socket_tools_and_compare_default_under_the_target_directory() {
    let dir = scratch("tools");
    let target = dir.join("target");
    // A file where each default directory would be: refused, named.
    fs::create_dir_all(&target).unwrap();
    for name in ["handshake-scaling", "compare"] {
        fs::write(target.join(name), "a file").unwrap();
    }
    let (code, err) =
        run(env!("CARGO_BIN_EXE_handshake-scaling"), &["--library", "plaintext-tcp"], Some(&target), None);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&target.join("handshake-scaling").display().to_string()), "{err}");
    let (code, err) = run(env!("CARGO_BIN_EXE_compare"), &["--no-build", "--quick"], Some(&target), None);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&target.join("compare").display().to_string()), "{err}");
    // interop's workers: none built under this target directory.
    let (code, err) =
        run(env!("CARGO_BIN_EXE_interop"), &["--no-build", "--variants", "default"], Some(&target), None);
    assert_eq!(code, Some(1), "{err}");
    let worker = target.join("interop-workers/default/https-serve");
    assert!(err.contains(&format!("no binary for variant default at {}", worker.display())), "{err}");
}
