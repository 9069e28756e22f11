//! What every package's integration tests share (the root's through
//! `tests/common/mod.rs`, benches's through a `#[path]` module).

use std::{
    fs,
    io::Read,
    path::PathBuf,
    process::{Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use tls_bench_harness::libs;

/// An empty scratch directory for one test, `<suite>/<test>` under cargo's
/// temporary directory for integration tests (`target/tmp`): removed if a
/// previous run left it, then created.
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(suite).join(test);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A library of this build that measures the default parameters (x25519)
/// in every build variant and aws-lc-config build: the plaintext floor when
/// built, else the first library (in the registry's order) that configures
/// them (FIPS builds refuse x25519).
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn small_library() -> String {
    let all = libs::all();
    let params = tls_bench_harness::params::Params::default();
    let plaintext = all.iter().find(|l| l.name() == "plaintext");
    plaintext
        .or_else(|| all.iter().find(|l| l.configure(&params).is_ok()))
        .map(|l| l.name())
        .unwrap_or_else(|| panic!("no library of this build configures {params}"))
}

/// Runs `exe` with `args` and `TLS_BENCH_VARIANTS` set to `picked` (unset
/// for `None`), as the scripts run `variants bench` and `memory variants`:
/// (exit code, stderr).
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn run_picking(exe: &str, args: &[&str], picked: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    match picked {
        Some(v) => cmd.env("TLS_BENCH_VARIANTS", v),
        None => cmd.env_remove("TLS_BENCH_VARIANTS"),
    };
    let out = cmd.output().expect("running the binary");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into())
}

/// Runs `cmd` (stdin empty, stderr read) with `stdout`, killing it and
/// failing past `timeout`: (exit code, stderr).
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn run_within(mut cmd: Command, stdout: Stdio, timeout: Duration) -> (Option<i32>, String) {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{shown}: {e}"));
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown}: still running after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // A child of its own may hold stderr open: wait for it a while only.
    let stderr = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| "(stderr held open)".into());
    (status.code(), stderr)
}

/// Asserts what a closed or full stdout gives the command `cmd()` makes:
/// run once with stdout `/dev/full` and once into a pipe whose reader is
/// gone before it starts (`| head -0`), each within `timeout`, it exits 1
/// saying `error: writing to stdout: ` with the OS error on stderr, and
/// does not panic.
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn assert_stdout_write_fails(cmd: impl Fn() -> Command, timeout: Duration) {
    let full = || Stdio::from(fs::File::options().write(true).open("/dev/full").expect("/dev/full"));
    let closed = || {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        Stdio::from(writer)
    };
    for (stdout, os_error) in [(full(), "No space left on device"), (closed(), "Broken pipe")] {
        let shown = format!("{:?} > {os_error}", cmd());
        let (code, stderr) = run_within(cmd(), stdout, timeout);
        assert!(
            stderr.contains(&format!("error: writing to stdout: {os_error}")) && !stderr.contains("panicked"),
            "{shown}: {stderr}"
        );
        assert_eq!(code, Some(1), "{shown}: {stderr}");
    }
}
