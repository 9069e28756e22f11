//! The `report` binary on what a user may have: no results yet, results of
//! the plaintext floor only, and results of two runs mixed in one group.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
    time::{Duration, SystemTime},
};

fn report(criterion_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_report"))
        .args(["--criterion-dir".as_ref(), criterion_dir.as_os_str()])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap()
}

fn scratch(test: &str) -> PathBuf {
    common::scratch("report", test)
}

/// Writes one benchmark's result as Criterion does, dated `written`.
fn result(dir: &Path, group: &str, params: &str, library: &str, median_ns: f64, written: SystemTime) {
    let new = dir.join(group).join(params).join(library).join("new");
    fs::create_dir_all(&new).unwrap();
    let bench = serde_json::json!({
        "group_id": group, "function_id": params, "value_str": library, "throughput": null,
    });
    fs::write(new.join("benchmark.json"), bench.to_string()).unwrap();
    let estimate = serde_json::json!({
        "point_estimate": median_ns,
        "confidence_interval": {"lower_bound": median_ns * 0.99, "upper_bound": median_ns * 1.01},
    });
    let estimates = new.join("estimates.json");
    fs::write(&estimates, serde_json::json!({ "median": estimate }).to_string()).unwrap();
    fs::File::options().write(true).open(&estimates).unwrap().set_modified(written).unwrap();
}

#[test]
fn no_results_says_run_cargo_bench_without_a_backtrace() {
    let missing = scratch("missing").join("criterion");
    let out = report(&missing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("run `cargo bench` first"), "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
    // An existing directory without results says the same.
    let out = report(missing.parent().unwrap());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `cargo bench` first"));
}

/// Every line of every table has as many cells as its header.
fn assert_well_formed(markdown: &str) {
    let mut columns = None;
    for line in markdown.lines() {
        if !line.starts_with('|') {
            columns = None;
            continue;
        }
        let n = line.matches('|').count();
        assert_eq!(*columns.get_or_insert(n), n, "{markdown}");
    }
}

#[test]
fn plaintext_only_table_is_well_formed() {
    let dir = scratch("plaintext");
    result(&dir, "handshake", "server-auth,TLSv1.3", "plaintext", 4000.0, SystemTime::now());
    let out = report(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_well_formed(&stdout);
    assert!(stdout.contains("| parameters | plaintext floor |"), "{stdout}");
    assert!(stdout.contains("| 4.00 |"), "{stdout}");
}

#[test]
fn results_of_an_earlier_run_are_marked_with_their_date() {
    let dir = scratch("two-runs");
    let now = SystemTime::now();
    let week_ago = now - Duration::from_secs(7 * 24 * 3600);
    result(&dir, "handshake", "p", "libA-1", 500_000.0, now);
    result(&dir, "handshake", "p", "libB-1", 400_000.0, week_ago);
    let out = report(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_well_formed(&stdout);
    let old = chrono::DateTime::<chrono::Utc>::from(week_ago).format("%Y-%m-%d").to_string();
    let row = stdout.lines().find(|l| l.starts_with("| p |")).unwrap();
    assert!(row.contains(&format!("400.0 (1.00x) *{old}")), "{stdout}");
    assert!(!row.contains("500.0 (1.25x) *"), "{stdout}");
    assert!(stdout.contains("1 from earlier runs"), "{stdout}");
}

#[test]
fn saved_figures_table_again_as_printed_and_a_bad_path_is_refused_first() {
    let dir = scratch("save");
    let week_ago = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
    result(&dir, "handshake", "p", "libA-1", 500_000.0, SystemTime::now());
    result(&dir, "handshake", "p", "libB-1", 400_000.0, week_ago);
    let saved = dir.join("figures.json");
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .args(["--criterion-dir".as_ref(), dir.as_os_str(), "--save".as_ref(), saved.as_os_str()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // What `report results` reads back tables exactly as `report` printed.
    let figures: Vec<tls_bench_results::criterion_json::Measurement> =
        serde_json::from_str(&fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(figures.len(), 2);
    assert_eq!(tls_bench_results::criterion::tables(&figures), String::from_utf8_lossy(&out.stdout));
    // A path in no directory: an error before anything is read.
    let bad = dir.join("no-such-dir/figures.json");
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .args(["--criterion-dir".as_ref(), dir.as_os_str(), "--save".as_ref(), bad.as_os_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("no directory"), "{stderr}");
    assert!(out.stdout.is_empty(), "printed tables before refusing");
}
