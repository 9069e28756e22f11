//! Every binary on a closed or full stdout (`> /dev/full`, `| head -0`):
//! exit status 1 and `error: writing to stdout: <the OS error>`, never a
//! panic nor a silent success; `--help` and `--version` the same, while
//! clap's usage errors keep status 2. Each case prints at once, before
//! any measuring (benches/tests/stdout.rs does `memory` and
//! `run-case`). And an error found first prints nothing on stdout before it.

#![cfg(feature = "drivers")]

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, SystemTime},
};

/// Longest a case may take: each prints at once (generate-certs after its
/// keys), on a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Every binary of the root package.
const BINARIES: [&str; 16] = [
    env!("CARGO_BIN_EXE_compare"),
    env!("CARGO_BIN_EXE_crypto-floor"),
    env!("CARGO_BIN_EXE_generate-certs"),
    env!("CARGO_BIN_EXE_handshake-scaling"),
    env!("CARGO_BIN_EXE_historical-perf"),
    env!("CARGO_BIN_EXE_https-attack"),
    env!("CARGO_BIN_EXE_https-compare"),
    env!("CARGO_BIN_EXE_https-load"),
    env!("CARGO_BIN_EXE_https-serve"),
    env!("CARGO_BIN_EXE_https-soak"),
    env!("CARGO_BIN_EXE_interop"),
    env!("CARGO_BIN_EXE_load"),
    env!("CARGO_BIN_EXE_report"),
    env!("CARGO_BIN_EXE_serve"),
    env!("CARGO_BIN_EXE_small-writes"),
    env!("CARGO_BIN_EXE_variants"),
];

fn scratch(test: &str) -> PathBuf {
    common::scratch("stdout", test)
}

/// Runs `cmd` within [`TIMEOUT`], its stdout into a file under `dir`:
/// (exit code, stdout, stderr).
fn run_to_file(cmd: Command, dir: &Path) -> (Option<i32>, String, String) {
    fs::create_dir_all(dir).unwrap();
    let file = dir.join("stdout");
    let (code, stderr) = common::run_within(cmd, Stdio::from(fs::File::create(&file).unwrap()), TIMEOUT);
    (code, fs::read_to_string(&file).unwrap(), stderr)
}

/// `exe args...`, a fresh command each call.
fn command<'a>(exe: &'a str, args: &'a [&'a str]) -> impl Fn() -> Command + 'a {
    move || {
        let mut cmd = Command::new(exe);
        cmd.args(args).env("RUST_BACKTRACE", "1");
        cmd
    }
}

#[test]
fn help_and_version_on_a_closed_or_full_stdout_exit_1_and_usage_errors_keep_2() {
    let dir = scratch("help");
    for exe in BINARIES {
        common::assert_stdout_write_fails(command(exe, &["--help"]), TIMEOUT);
        // Help on a stdout that takes it: status 0, as before.
        let (code, stdout, stderr) = run_to_file(command(exe, &["--help"])(), &dir);
        assert_eq!(code, Some(0), "{exe} --help: {stderr}");
        assert!(stdout.contains("Usage:"), "{exe} --help: {stdout}");
        let (code, stderr) = common::run_within(
            command(exe, &["--no-such-option"])(),
            Stdio::from(fs::File::options().write(true).open("/dev/full").unwrap()),
            TIMEOUT,
        );
        assert_eq!(code, Some(2), "{exe} --no-such-option: {stderr}");
        assert!(stderr.contains("--no-such-option") && !stderr.contains("panicked"), "{exe}: {stderr}");
    }
    for exe in [env!("CARGO_BIN_EXE_serve"), env!("CARGO_BIN_EXE_interop"), env!("CARGO_BIN_EXE_load")] {
        common::assert_stdout_write_fails(command(exe, &["--version"]), TIMEOUT);
    }
}

#[test]
fn listings_on_a_closed_or_full_stdout_are_errors() {
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_variants"), &["list"]), TIMEOUT);
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_crypto-floor"), &["ops"]), TIMEOUT);
    for exe in [env!("CARGO_BIN_EXE_serve"), env!("CARGO_BIN_EXE_https-serve"), env!("CARGO_BIN_EXE_load")] {
        common::assert_stdout_write_fails(command(exe, &["--list"]), TIMEOUT);
    }
    // historical-perf's releases from a fixture index, not crates.io.
    let index = scratch("index");
    fs::create_dir_all(index.join("ru/st")).unwrap();
    fs::write(index.join("ru/st/rustls"), "{\"name\":\"rustls\",\"vers\":\"0.23.46\",\"yanked\":false}\n")
        .unwrap();
    common::assert_stdout_write_fails(
        || {
            let mut cmd = command(env!("CARGO_BIN_EXE_historical-perf"), &["list", "rustls"])();
            cmd.env("HISTORICAL_PERF_INDEX", &index);
            cmd
        },
        TIMEOUT,
    );
}

/// One Criterion result under `dir`, as tests/report.rs writes them.
fn criterion_result(dir: &Path) {
    let new = dir.join("handshake/server-auth,TLSv1.3/plaintext/new");
    fs::create_dir_all(&new).unwrap();
    let bench = serde_json::json!({
        "group_id": "handshake", "function_id": "server-auth,TLSv1.3", "value_str": "plaintext",
        "throughput": null,
    });
    fs::write(new.join("benchmark.json"), bench.to_string()).unwrap();
    let estimate = serde_json::json!({
        "point_estimate": 4000.0,
        "confidence_interval": {"lower_bound": 3990.0, "upper_bound": 4010.0},
    });
    let estimates = new.join("estimates.json");
    fs::write(&estimates, serde_json::json!({ "median": estimate }).to_string()).unwrap();
    fs::File::options().write(true).open(&estimates).unwrap().set_modified(SystemTime::now()).unwrap();
}

#[test]
fn reports_on_a_closed_or_full_stdout_are_errors() {
    let dir = scratch("reports");
    let criterion = dir.join("criterion");
    criterion_result(&criterion);
    let criterion = criterion.to_str().unwrap();
    common::assert_stdout_write_fails(
        command(env!("CARGO_BIN_EXE_report"), &["--criterion-dir", criterion]),
        TIMEOUT,
    );
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/results/compare/2026-11-22/run-b/results.json");
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_compare"), &["diff", run, run]), TIMEOUT);
    // A small measured run: its report comes last, its files are written.
    let out = dir.join("small-writes");
    let library = common::small_library();
    let args = [
        "--library",
        &library,
        "--message",
        "100,50",
        "--strategy",
        "coalesced",
        "--protocol",
        "TLSv1.3",
        "--iterations",
        "20",
        "--warmup",
        "2",
        "--rounds",
        "2",
        "--criterion-dir",
        criterion,
        "--out",
        out.to_str().unwrap(),
    ];
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_small-writes"), &args), TIMEOUT);
    assert!(out.join("results.json").is_file());
    let again = ["--report-only", "--criterion-dir", criterion, "--out", out.to_str().unwrap()];
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_small-writes"), &again), TIMEOUT);
}

#[test]
fn generate_certs_writes_every_chain_then_fails_on_a_full_stdout() {
    let dir = scratch("certs");
    let dir_arg = dir.to_str().unwrap().to_string();
    let args = [dir_arg.as_str(), "--force"];
    common::assert_stdout_write_fails(command(env!("CARGO_BIN_EXE_generate-certs"), &args), TIMEOUT);
    let chains = fs::read_dir(&dir).unwrap().count();
    assert_eq!(chains, tls_bench_harness::params::CertChain::ALL.len());
}

#[test]
fn crypto_floor_count_without_valgrind_prints_nothing_before_its_error() {
    // A PATH without valgrind.
    let dir = scratch("no-valgrind");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crypto-floor"));
    cmd.arg("count").env("PATH", dir.join("bin"));
    let (code, stdout, stderr) = run_to_file(cmd, &dir);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("valgrind is not installed"), "{stderr}");
    assert_eq!(stdout, "", "{stderr}");
}
