//! The `compare` binary as a user meets it: bad names are errors that list
//! the valid ones (before anything is built or measured), and `diff` fails
//! when a sweep-centre ratio moved more than it accepts. (CI runs a whole
//! `compare --quick` across three build variants.)

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use tls_bench_harness::params::Params;

fn compare(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_compare")).args(args).output().expect("running compare");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn unknown_names_are_errors_listing_the_valid_ones() {
    for (args, bad, listed) in [
        (&["--variants", "boringsl"][..], "boringsl", "boringssl"),
        (&["--matrix", "FULL"][..], "FULL", "sweep, full"),
        (&["--filter", "(unclosed"][..], "--filter", "unclosed"),
    ] {
        let (ok, _, err) = compare(args);
        assert!(!ok, "{args:?} accepted");
        assert!(err.contains(bad) && err.contains(listed), "{args:?}: {err}");
    }
}

#[test]
fn a_bad_out_or_bound_is_refused_before_any_build_or_worker() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare-bad-out");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("with-notes")).unwrap();
    fs::write(dir.join("a-file"), "x").unwrap();
    fs::write(dir.join("with-notes/notes.md"), "mine").unwrap();
    let (file, notes) = (dir.join("a-file"), dir.join("with-notes"));
    let (file, notes) = (file.to_str().unwrap(), notes.to_str().unwrap());
    for (args, wanted) in [
        (&["--out", file][..], "is not a directory"),
        (&["--out", notes][..], "holds notes.md"),
        (&["--epochs", "9", "--rounds", "8"][..], "--epochs 9"),
        (&["--slice-ms", "100000"][..], "--slice-ms 100000: valid are 1 to 5000"),
    ] {
        // Without --no-build: a check after the build would run cargo.
        let (ok, out, err) = compare(args);
        assert!(!ok, "{args:?} accepted");
        assert!(err.contains(wanted), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(
            !err.contains("building") && !err.contains("starting"),
            "{args:?}: work before the check: {err}"
        );
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    assert_eq!(fs::read_to_string(dir.join("a-file")).unwrap(), "x");
    assert_eq!(fs::read_dir(dir.join("with-notes")).unwrap().count(), 1);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "a staging directory was left");
}

/// A results.json with one row at the sweep centre: library `b` at `ratio`.
fn results(dir: &Path, name: &str, ratio: f64) -> PathBuf {
    let row = |lib: &str, r: f64, best: bool| {
        serde_json::json!({
            "library": lib, "variant": "default", "settings": null, "rounds": 10,
            "median_ns": 1000.0 * r, "first_median_ns": 500.0 * r, "second_median_ns": 500.0 * r,
            "mb_per_s": null, "ratio": {"estimate": r, "low": r, "high": r}, "best": best,
        })
    };
    let centre = Params::default().to_string();
    let json = serde_json::json!({ "rows": [{
        "row": format!("handshake/{centre}"), "group": "handshake", "parameters": centre,
        "libraries": [row("a", 1.0, true), row("b", ratio, false)], "floor": null, "skipped": [],
    }]});
    let path = dir.join(name);
    fs::write(&path, json.to_string()).unwrap();
    path
}

#[test]
fn diff_fails_when_a_sweep_centre_ratio_moves_too_far() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare-diff");
    fs::create_dir_all(&dir).unwrap();
    let (a, near, far) =
        (results(&dir, "a.json", 1.50), results(&dir, "b.json", 1.53), results(&dir, "c.json", 1.60));
    let (ok, out, _) = compare(&["diff", a.to_str().unwrap(), near.to_str().unwrap()]);
    assert!(ok && out.contains("2.00% at the sweep centre"), "{out}");
    let (ok, _, err) = compare(&["diff", a.to_str().unwrap(), far.to_str().unwrap()]);
    assert!(!ok && err.contains("6.67%"), "{err}");
    let (ok, _, err) = compare(&["diff", a.to_str().unwrap(), dir.join("missing.json").to_str().unwrap()]);
    assert!(!ok && err.contains("missing.json"), "{err}");
    // A bound that means nothing is refused, naming it.
    for bad in ["nan", "-1", "inf"] {
        let (ok, _, err) =
            compare(&["diff", a.to_str().unwrap(), near.to_str().unwrap(), &format!("--max-percent={bad}")]);
        assert!(!ok && err.contains(&format!("{bad:?}")) && err.contains("0 or more"), "{bad}: {err}");
    }
}

#[test]
fn a_default_never_refuses_the_rounds_given() {
    // 5 rounds, the epochs left to their default (8): at most one epoch a
    // round, so the next check (an --out that is a file) is what refuses.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare-rounds");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("a-file"), "x").unwrap();
    let (ok, _, err) = compare(&["--rounds", "5", "--out", dir.join("a-file").to_str().unwrap()]);
    assert!(!ok && !err.contains("--epochs") && err.contains("is not a directory"), "{err}");
}

#[test]
fn only_the_libraries_selected_are_set_up() {
    // A broken key in one chain: the library asked for names it; the
    // others (s2n-tls, configured first) are never set up.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compare-selected");
    let _ = fs::remove_dir_all(&dir);
    let certs = dir.join("certs");
    for chain in tls_bench_harness::params::CertChain::ALL {
        let from = tls_bench_harness::certs::dir(chain);
        let to = certs.join(from.file_name().unwrap());
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(&from).unwrap().flatten() {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let key = tls_bench_harness::certs::SERVER_KEY;
    let broken =
        certs.join(tls_bench_harness::certs::dir(Params::default().cert).file_name().unwrap()).join(key);
    fs::write(&broken, "not a key").unwrap();
    let centre = format!("^handshake/{}/", Params::default());
    let out = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(["--quick", "--libraries", "openssl", "--filter", &centre, "--out"])
        .arg(dir.join("out"))
        .env("TLS_BENCH_CERTS_DIR", &certs)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("/openssl-") && err.contains(key), "{err}");
    assert!(!err.contains("s2n-tls"), "a library not selected was set up: {err}");
}
