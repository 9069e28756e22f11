//! The bench binaries on a user's mistakes and long ids (issue 23): each
//! mistake is `error: ...` naming the value and what is valid, exit status
//! 1, no panic and no backtrace, before anything is measured; a filter of
//! the instruction bench that selects nothing is such an error too; a
//! DTLS write larger than the MTU carries is a named skip; `--list` and the
//! console print every id whole.
//!
//! The binaries are found (and built if needed) with `cargo bench --no-run`
//! in this build's features and aws-lc-config files, then run directly with
//! filters that measure nothing (`--list`, or `--test` on one cheap id).

#[path = "../../tests/common/support.rs"]
mod common;

use std::{
    collections::HashMap,
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::{Mutex, OnceLock},
};

use tls_bench_harness::{
    certs,
    filter::CRITERION_TITLE_MAX,
    libs,
    params::{CertChain, Protocol},
};

/// This build's cargo features, for `--features`.
fn features() -> String {
    let mut on = Vec::new();
    macro_rules! feature {
        ($($f:literal),*) => { $(if cfg!(feature = $f) { on.push($f) })* };
    }
    // `default` too: cargo counts it among the features, so a build
    // without it is another build (every bench rebuilt after the tests).
    feature!(
        "default",
        "s2n-tls",
        "rustls",
        "openssl",
        "openssl-vendored",
        "boring",
        "gnutls",
        "wolfssl",
        "mbedtls",
        "plaintext",
        "openssl-aws-lc",
        "s2n-tls-fips",
        "rustls-fips",
        "historical-perf",
        "tools"
    );
    on.join(",")
}

/// Drops from `cmd`'s environment the variables cargo set for this test:
/// build scripts that watch them (ring's `CARGO_MANIFEST_DIR`) would
/// rebuild in a nested cargo, and again in the user's next build.
fn without_cargo_test_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(tls_bench::variants::set_by_cargo_run) {
            cmd.env_remove(key);
        }
    }
}

/// The path of the bench binary `name`, built by `cargo bench --no-run` in
/// the features and aws-lc-config files of this build (once per name).
fn bench_binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(tls_bench::variants::repo())
        .args(["bench", "--no-run", "--message-format=json", "--bench", name, "--no-default-features"])
        .args(["--features", &features()]);
    // A backend's cfg without its feature came from its aws-lc-config file.
    for (on, by_feature, file) in [
        (cfg!(tls_bench_openssl_aws_lc), cfg!(feature = "openssl-aws-lc"), "openssl"),
        (cfg!(tls_bench_s2n_fips), cfg!(feature = "s2n-tls-fips"), "s2n"),
        (cfg!(tls_bench_rustls_fips), cfg!(feature = "rustls-fips"), "rustls"),
    ] {
        if on && !by_feature {
            cmd.args(["--config", &format!("aws-lc-config/{file}.toml")]);
        }
    }
    without_cargo_test_env(&mut cmd);
    let out = cmd.output().expect("running cargo bench --no-run");
    assert!(
        out.status.success(),
        "cargo bench --no-run --bench {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"]["name"] == name && v["target"]["kind"][0] == "bench")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no executable for bench {name}"));
    built.insert(name.to_string(), path.clone());
    path
}

/// Runs bench `name` as `cargo bench` does (`--bench` first) with `args`
/// and the environment `envs`, with backtraces on (a panic would show one).
fn run(name: &str, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(bench_binary(name))
        .current_dir(tls_bench::variants::repo())
        .arg("--bench")
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env_remove("TLS_BENCH_MTU")
        .env_remove("TLS_BENCH_CERTS_DIR")
        .env_remove("GUNGRAUN_FILTER")
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `out` is a user's error: status 1, `error: ` holding every `wanted`, no
/// panic, no backtrace.
fn assert_user_error(out: &Output, wanted: &[&str], what: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked") && !err.contains("stack backtrace"), "{what}: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("{what}: no error line: {err}"));
    for w in wanted {
        assert!(err.contains(w), "{what}: {w:?} not in {line}");
    }
}

/// The sweep centre's handshake of [`common::small_library`] (the plaintext
/// floor when built): the cheapest id of every build to run once.
fn cheap() -> String {
    format!(
        "handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/{}",
        common::small_library()
    )
}

/// A copy of the committed chains under `test`'s scratch directory.
fn copy_of_certs(test: &str) -> PathBuf {
    let root = common::scratch("bench-errors", test);
    for chain in CertChain::ALL {
        let (from, to) = (Path::new(certs::CERTS_DIR).join(chain.dir_name()), root.join(chain.dir_name()));
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    root
}

#[test]
fn criterion_options_it_would_assert_on_are_errors_before_any_work() {
    for (option, value, wanted) in [
        ("--sample-size", "5", "at least 10"),
        ("--warm-up-time", "0", "1 ns"),
        ("--measurement-time", "-1", "1 ns"),
        ("--nresamples", "0", "at least 1"),
        ("--noise-threshold", "0", "above 0"),
        ("--confidence-level", "1", "between 0 and 1"),
        ("--significance-level", "0", "between 0 and 1"),
        ("--profile-time", "NaN", "at least 1"),
    ] {
        let out = run("handshake", &[option, value, "--exact", &cheap()], &[]);
        assert_user_error(&out, &[option, &format!("{value:?}"), wanted], option);
    }
    let out = run("handshake", &["--test", "("], &[]);
    assert_user_error(&out, &["\"(\"", "is not a regular expression", "--list"], "filter");
}

#[test]
fn bad_settings_are_errors_before_any_work() {
    for mtu in ["abc", "100", "70000", ""] {
        let out = run("dtls", &["--test", "--exact", &cheap()], &[("TLS_BENCH_MTU", mtu)]);
        assert_user_error(&out, &[&format!("TLS_BENCH_MTU={mtu:?}"), "576 to 65535"], mtu);
    }
    let missing = common::scratch("bench-errors", "missing").join("nosuch");
    let out = run(
        "handshake",
        &["--test", "--exact", &cheap()],
        &[("TLS_BENCH_CERTS_DIR", missing.to_str().unwrap())],
    );
    assert_user_error(
        &out,
        &[missing.to_str().unwrap(), "no such directory", "ecdsa-p256/"],
        "missing certs",
    );
    let broken = copy_of_certs("broken-ca");
    let ca = broken.join("ecdsa-p256").join(certs::CA_CERT);
    fs::write(&ca, "not a certificate\n").unwrap();
    let out = run(
        "handshake",
        &["--test", "--exact", &cheap()],
        &[("TLS_BENCH_CERTS_DIR", broken.to_str().unwrap())],
    );
    assert_user_error(&out, &[ca.to_str().unwrap(), "expected 1 (the root CA)"], "broken certs");
}

#[test]
fn the_listing_prints_every_id_whole_and_honours_the_filter() {
    let out = run("handshake", &["--list"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let ids: Vec<&str> = listing.lines().map(|l| l.strip_suffix(": benchmark").expect(l)).collect();
    assert!(ids.iter().all(|id| !id.ends_with("...")), "{listing}");
    // GnuTLS's build alone has no handshake id that long; every build with
    // rustls or s2n-tls has.
    let long = ids.iter().find(|id| id.len() > CRITERION_TITLE_MAX);
    assert!(long.is_some() || !(cfg!(feature = "rustls") || cfg!(feature = "s2n-tls")), "{listing}");
    if let Some(long) = long {
        assert!(long.starts_with("handshake/") && long.contains('/'), "{long}");
    }
    let out = run("handshake", &["--list", "TLSv1\\.2"], &[]);
    let some = text(&out.stdout);
    assert!(!some.is_empty() && some.lines().all(|l| l.contains("TLSv1.2")), "{some}");
    // The console gives the whole id of a long one before Criterion's cut title.
    let out = run("throughput", &["--list"], &[]);
    let listing = text(&out.stdout);
    let long =
        listing.lines().map(|l| l.trim_end_matches(": benchmark")).find(|id| id.len() > CRITERION_TITLE_MAX);
    // Only rustls's names (`+aws-lc-rs`) make a throughput id that long: a
    // build without rustls (the system-OpenSSL and BoringSSL variants) has
    // no cut title to check.
    let Some(long) = long else {
        if cfg!(feature = "rustls") {
            panic!("no throughput id longer than {CRITERION_TITLE_MAX}:\n{listing}");
        }
        eprintln!("no throughput id here is longer than {CRITERION_TITLE_MAX} characters: nothing is cut");
        return;
    };
    let out = run("throughput", &["--test", "--exact", long], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("id in full: {long}\n")), "{}", text(&out.stdout));
}

#[test]
fn a_dtls_write_larger_than_the_mtu_carries_is_a_named_skip_not_a_panic() {
    let dtls = |name: &str| libs::offers(name).is_some_and(|o| o.dtls.contains(&Protocol::Dtls12));
    if !libs::all().iter().any(|l| dtls(&l.name())) {
        return;
    }
    // The DTLS 1.2 send loops in memory and over UDP, every one skipped: an
    // error after the reasons, nothing run.
    let out = run("dtls", &["--test", "send-loop/DTLSv1\\.2,"], &[("TLS_BENCH_MTU", "600")]);
    assert_user_error(
        &out,
        &[
            "skip send-loop/DTLSv1.2,",
            "skip udp-send-loop/DTLSv1.2,",
            "a 1024-byte write does not fit one datagram at MTU 600",
            "the smallest MTU that fits 1024 bytes is 1089",
            "every benchmark the filter",
        ],
        "MTU 600",
    );
    assert!(!text(&out.stderr).contains("unexpected EOF"));
    // At that MTU they run.
    let out = run("dtls", &["--list", "send-loop/DTLSv1\\.2,"], &[("TLS_BENCH_MTU", "1089")]);
    assert!(out.status.success() && !text(&out.stdout).is_empty(), "{}", text(&out.stderr));
}

#[test]
fn an_instruction_filter_that_selects_nothing_is_an_error_before_any_work() {
    let out = run("instructions", &["nosuch"], &[]);
    assert_user_error(&out, &["\"nosuch\"", "cargo bench --bench instructions -- --list"], "nosuch");
    let err = text(&out.stderr);
    assert!(!err.lines().any(|l| l.starts_with("skip ")) && !err.contains("Gungraun result"), "{err}");
    let out = run("instructions", &[], &[("GUNGRAUN_FILTER", "nosuch")]);
    assert_user_error(&out, &["\"nosuch\""], "GUNGRAUN_FILTER");
    let missing = common::scratch("bench-errors", "instructions-missing").join("nosuch");
    let out = run("instructions", &["--list"], &[("TLS_BENCH_CERTS_DIR", missing.to_str().unwrap())]);
    assert_user_error(&out, &["no such directory"], "missing certs");
}

#[test]
fn the_instruction_bench_prints_skip_lines_only_for_selected_cases() {
    let libs: Vec<String> = libs::all().iter().map(|l| l.name()).collect();
    let Some(ring) = libs.iter().find(|n| n.ends_with("+ring")) else { return };
    // rustls with ring has no X25519MLKEM768: selecting only that is an
    // error after its skip line, and no other.
    let only = format!("*X25519MLKEM768*{}", ring.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let out = run("instructions", &["--list", &only], &[]);
    assert_user_error(&out, &["is skipped"], &only);
    let skips: Vec<String> =
        text(&out.stderr).lines().filter(|l| l.starts_with("skip ")).map(String::from).collect();
    assert!(
        !skips.is_empty() && skips.iter().all(|l| l.contains("X25519MLKEM768") && l.contains(ring.as_str())),
        "{skips:?}"
    );
    // A filter that excludes it prints none.
    let centre = format!(
        "*::handshake::server_auth_TLSv1_3_TLS_AES_128_GCM_SHA256_x25519_ECDSA_P256_{}",
        common::small_library().replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    let out = run("instructions", &["--list", &centre], &[]);
    let err = text(&out.stderr);
    if err.contains("gungraun-runner is not installed") || err.contains("valgrind is not installed") {
        // A named skip on a machine without them; CI installs both and
        // says so (`TLS_BENCH_REQUIRE_VALGRIND`), so there it is a failure.
        let why = err.lines().find(|l| l.contains("is not installed")).unwrap_or_default();
        assert!(std::env::var_os("TLS_BENCH_REQUIRE_VALGRIND").is_none(), "{err}");
        eprintln!("skip the instruction bench's listing check: {why}");
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(!err.lines().any(|l| l.starts_with("skip ")), "{err}");
    assert_eq!(
        text(&out.stdout).lines().filter(|l| l.ends_with(": benchmark")).count(),
        1,
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn noise_sh_stops_at_a_filter_that_selects_nothing() {
    if !cfg!(feature = "default") {
        return; // noise.sh runs the default build only.
    }
    let mut cmd = Command::new(tls_bench::variants::repo().join("scripts/instructions-noise.sh"));
    without_cargo_test_env(&mut cmd);
    let out = cmd.arg("nosuch").output().unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("error: no instruction count matches the filter \"nosuch\""), "{err}");
    assert!(!err.contains("=== run") && !err.contains("first"), "{err}");
}
