//! The `memory` binary, run as a user runs it: a small measurement of every
//! library built, its report's shape and plausibility, its figures against
//! glibc's own accounting (`mallinfo2`), its errors, and its graph.

use std::{path::PathBuf, process::Command, sync::OnceLock};

use serde_json::Value;
use tls_bench_harness::libs;

const BIN: &str = env!("CARGO_BIN_EXE_memory");

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tls-bench-memory-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One run over every built library (3 pairs, 2 writes per size), without
/// glibc's thread cache so that mallinfo2 counts exactly. Shared by the tests.
fn report() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let dir = scratch_dir();
        let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
        let out = Command::new(BIN)
            .args(["measure", "-n", "3", "--writes", "2", "--json"])
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .env("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
            .output()
            .unwrap();
        assert!(out.status.success(), "memory measure failed: {}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let csv = std::fs::read_to_string(&csv).unwrap();
        let rows = report["rows"].as_array().unwrap();
        let figures_per_row = 3 * 4 + 1 + 4 * 2; // held, idle, allocs, bytes by side; peak; 4 per write size
        assert_eq!(csv.lines().count(), 1 + rows.len() * figures_per_row, "CSV lines");
        assert!(csv.starts_with("library,params,figure,unit,mean,stddev,min,max,connections\n"));
        report
    })
}

fn rows() -> &'static Vec<Value> {
    report()["rows"].as_array().unwrap()
}

fn mean(row: &Value, path: &[&str]) -> f64 {
    let v = path.iter().fold(row, |v, k| &v[*k]);
    v["mean"].as_f64().unwrap_or_else(|| panic!("{path:?} missing in {}", row["params"]))
}

#[test]
fn every_built_library_is_measured_or_skipped_for_fips() {
    let report = report();
    assert!(report["allocator"].as_str().unwrap().starts_with("glibc "));
    for lib in libs::all() {
        let name = lib.name();
        let measured = rows().iter().filter(|r| r["library"] == name.as_str()).count();
        let skips: Vec<&str> = report["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["library"] == name.as_str())
            .map(|s| s["reason"].as_str().unwrap())
            .collect();
        // Default run: 3 handshake kinds x 2 chains. FIPS builds may refuse x25519.
        assert_eq!(measured + skips.len(), 6, "{name}");
        assert!(skips.iter().all(|r| r.contains("FIPS")), "{name} skipped: {skips:?}");
    }
}

#[test]
fn figures_are_positive_and_plausible() {
    for r in rows() {
        let id = format!("{}/{}", r["library"], r["params"]);
        assert_eq!(r["connections"], 3, "{id}");
        for what in ["held", "idle"] {
            let (c, s, p) =
                (mean(r, &[what, "client"]), mean(r, &[what, "server"]), mean(r, &[what, "pair"]));
            assert!(c > 0.0 && s > 0.0, "{id}: {what} {c} {s}");
            assert!(p > c && p > s && (p - (c + s)).abs() < 1e-6 * p, "{id}: {what} pair {p} = {c} + {s}");
        }
        assert!(mean(r, &["peak_pair"]) >= mean(r, &["held", "pair"]), "{id}: peak below held");
        assert!(mean(r, &["handshake_allocs", "pair"]) > 0.0, "{id}: no allocations");
        assert!(mean(r, &["handshake_bytes", "pair"]) > 0.0, "{id}: no bytes");
        let writes = r["writes"].as_array().unwrap();
        let sizes: Vec<u64> = writes.iter().map(|w| w["write_size"].as_u64().unwrap()).collect();
        assert_eq!(sizes, [1024, 16384], "{id}");
        for w in writes {
            for side in ["sender", "receiver"] {
                let (allocs, bytes) =
                    (mean(w, &[&format!("{side}_allocs")]), mean(w, &[&format!("{side}_bytes")]));
                // Every allocation asks for at least one byte; a steady write
                // of at most 16 KiB needs a handful of allocations at most.
                assert!(bytes >= allocs, "{id}: {side} {bytes} B in {allocs} allocations per write");
                assert!(allocs < 32.0, "{id}: {side} {allocs} allocations per write");
            }
        }
        assert!(!r["buffer_release"].as_str().unwrap().is_empty(), "{id}: buffer release not described");
    }
}

/// Every TLS library keeps more state after mTLS (the peer's certificate,
/// the verified chain) than after server auth. The plaintext floor is left
/// out: it keeps no TLS state, only a scratch buffer of the largest flight
/// of the recorded handshake, which need not grow with client auth.
#[test]
fn mutual_auth_holds_at_least_as_much_as_server_auth() {
    for r in rows().iter().filter(|r| r["kind"] == "mTLS" && r["library"] != "plaintext") {
        let server_auth = rows()
            .iter()
            .find(|o| o["library"] == r["library"] && o["chain"] == r["chain"] && o["kind"] == "server-auth");
        let Some(server_auth) = server_auth else { continue };
        let (m, s) = (mean(r, &["held", "server"]), mean(server_auth, &["held", "server"]));
        assert!(m >= s, "{} {}: mTLS server holds {m} B < server-auth {s} B", r["library"], r["chain"]);
        let (m, s) = (mean(r, &["held", "pair"]), mean(server_auth, &["held", "pair"]));
        assert!(m >= s, "{} {}: mTLS pair holds {m} B < server-auth {s} B", r["library"], r["chain"]);
    }
}

/// The project's held-per-pair figure (plus glibc's 8-byte chunk headers)
/// against glibc's own count of bytes in use, over the same span: within
/// 5% for every TLS library, C libraries included. A counter that missed
/// the C code's allocations would fall far short of glibc's figure.
#[test]
fn held_bytes_match_glibc_mallinfo2_within_5_percent() {
    for r in rows() {
        let cc = &r["cross_check"];
        let (project, glibc, harness) = (
            cc["project_bytes_per_pair"].as_f64().unwrap(),
            cc["glibc_bytes_per_pair"].as_f64().unwrap(),
            cc["harness_bytes_per_pair"].as_f64().unwrap(),
        );
        let id = format!("{}/{}", r["library"], r["params"]);
        // Everything the counters saw (libraries and harness) is glibc's figure.
        assert!(
            ((project + harness) / glibc - 1.0).abs() < 0.05,
            "{id}: {project} + {harness} vs glibc {glibc}"
        );
        // The libraries' figure alone, where the harness is a small share.
        if r["library"] != "plaintext" {
            assert!(
                (project / glibc - 1.0).abs() < 0.05,
                "{id}: project {project} B vs glibc {glibc} B per pair"
            );
        }
    }
}

#[test]
fn unknown_names_are_errors_listing_the_valid_ones() {
    let json = scratch_dir().join("never.json");
    for (flag, value, listed) in [
        ("--libraries", "nosuchtls", libs::all()[0].name()),
        ("--kinds", "tls13", "server-auth, mTLS, resumption".to_string()),
        ("--chains", "RSA-1024", "ECDSA-P256".to_string()),
    ] {
        let out = Command::new(BIN).args(["measure", flag, value, "--json"]).arg(&json).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} {value} accepted");
        assert!(err.contains(value) && err.contains(&listed), "{flag} {value}: {err}");
        assert!(!json.exists());
    }
}

#[test]
fn plot_draws_every_library() {
    let dir = scratch_dir();
    let (json, svg) = (dir.join("plot.json"), dir.join("plot.svg"));
    std::fs::write(&json, serde_json::to_string(report()).unwrap()).unwrap();
    let out = Command::new(BIN).args(["plot", "--markdown", "--svg"]).arg(&svg).arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&svg).unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    for r in rows() {
        let lib = r["library"].as_str().unwrap();
        assert!(svg.contains(lib) && table.contains(lib), "{lib} missing");
    }
}
