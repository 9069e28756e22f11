//! This package's binaries (`memory`, `run-case`) on a closed or full
//! stdout (`> /dev/full`, `| head -0`): exit status 1 and `error: writing
//! to stdout: <the OS error>`, never a panic; `--help` the same, and clap's
//! usage errors keep status 2 (tests/stdout.rs does the root's binaries).

#![cfg(feature = "tools")]

#[path = "../../tests/common/support.rs"]
mod common;

use std::{
    fs,
    process::{Command, Stdio},
    time::Duration,
};

/// Longest a case may take: each prints at once.
const TIMEOUT: Duration = Duration::from_secs(60);

/// `exe args...`, a fresh command each call.
fn command<'a>(exe: &'a str, args: &'a [&'a str]) -> impl Fn() -> Command + 'a {
    move || {
        let mut cmd = Command::new(exe);
        cmd.args(args).env("RUST_BACKTRACE", "1");
        cmd
    }
}

#[test]
fn memory_and_run_case_on_a_closed_or_full_stdout_exit_1() {
    let (memory, run_case) = (env!("CARGO_BIN_EXE_memory"), env!("CARGO_BIN_EXE_run-case"));
    common::assert_stdout_write_fails(command(memory, &["list"]), TIMEOUT);
    common::assert_stdout_write_fails(command(run_case, &["--cpu-features"]), TIMEOUT);
    for exe in [memory, run_case] {
        common::assert_stdout_write_fails(command(exe, &["--help"]), TIMEOUT);
        let full = Stdio::from(fs::File::options().write(true).open("/dev/full").unwrap());
        let (code, stderr) = common::run_within(command(exe, &["--no-such-option"])(), full, TIMEOUT);
        assert_eq!(code, Some(2), "{exe} --no-such-option: {stderr}");
        assert!(stderr.contains("--no-such-option") && !stderr.contains("panicked"), "{exe}: {stderr}");
    }
}
