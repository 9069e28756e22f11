//! What every package's integration tests share (the root's through
//! `tests/common/mod.rs`, crates/benches's through a `#[path]` module).

use std::{fs, path::PathBuf, process::Command};

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

/// A library of this build that measures x25519 in every build variant and
/// aws-lc-config build: the plaintext floor when built, else rustls on
/// *ring*, OpenSSL, BoringSSL, GnuTLS, wolfSSL or Mbed TLS (FIPS builds of the others refuse x25519).
#[allow(dead_code)] // not every test file that shares this module uses it
pub fn small_library() -> String {
    let names: Vec<String> = libs::all().iter().map(|l| l.name()).collect();
    let fits = [
        |n: &str| n == "plaintext",
        |n: &str| n.starts_with("rustls-") && n.ends_with("+ring"),
        |n: &str| n.starts_with("openssl-"),
        |n: &str| n.starts_with("boring-"),
        |n: &str| n.starts_with("gnutls-"),
        |n: &str| n.starts_with("wolfssl-"),
        |n: &str| n.starts_with("mbedtls-"),
    ];
    fits.iter()
        .find_map(|fit| names.iter().find(|n| fit(n)))
        .unwrap_or_else(|| panic!("no library of {names:?} fits"))
        .clone()
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
