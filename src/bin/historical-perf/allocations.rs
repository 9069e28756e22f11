//! The DTLS suite's allocation figures ([`crate::suite::Suite::Dtls`]): the
//! runs of the release's own `memory` binary (DTLS 1.2, and TLS 1.2 for
//! contrast, the versions of the Criterion send loop), and their JSON
//! reports, read through `memory`'s own model ([`memory::Report`]), as
//! [`Bench`]es of allocation calls per write.
//!
//! In `memory`'s steady send loop the server writes and the client reads,
//! so `sender` is the server and `receiver` the client (the Criterion send
//! loop writes from client to server; a record layer costs the same either
//! way).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tls_bench_results::memory;

use crate::{
    releases::Library,
    results::{Bench, Figure, series},
};

/// Bytes per write measured: the Criterion send loop's payload
/// (`tls_bench_harness::bench::Matrix::send_loop_payloads` with the
/// `historical-perf` feature).
pub const WRITE_SIZE: usize = 1024;

/// The group of the sender's allocation figures:
/// `allocations-per-write-send/<protocol>,<write size>B/<library>`.
pub const SEND_GROUP: &str = "allocations-per-write-send";
/// The group of the receiver's allocation figures:
/// `allocations-per-write-recv/<protocol>,<write size>B/<library>`.
pub const RECV_GROUP: &str = "allocations-per-write-recv";

/// One run of the `memory` binary: its report's file name under the
/// suite's home and the protocol version it measures (`--protocols`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryRun {
    /// The JSON report's file name under the home (`--json`).
    pub report: &'static str,
    /// `memory measure --protocols <this>`.
    pub protocol: &'static str,
}

/// The DTLS 1.2 report (`memory.json`), then the TLS 1.2 contrast
/// (`memory-tls.json`).
pub const MEMORY_RUNS: [MemoryRun; 2] = [
    MemoryRun { report: "memory.json", protocol: "DTLSv1.2" },
    MemoryRun { report: "memory-tls.json", protocol: "TLSv1.2" },
];

impl MemoryRun {
    /// Where the report goes: `<home>/<report>`.
    pub fn path(self, home: &Path) -> PathBuf {
        home.join(self.report)
    }

    /// The `memory` binary's arguments: `measure --protocols <protocol>
    /// --libraries <library> --kinds server-auth --chains ECDSA-P256
    /// --write-sizes 1024 [--quick] --json <home>/<report>`.
    pub fn args(self, library: Library, home: &Path, quick: bool) -> Vec<String> {
        let mut args = vec!["measure".to_string()];
        for (option, value) in [
            ("--protocols", self.protocol.to_string()),
            ("--libraries", library.to_string()),
            ("--kinds", "server-auth".into()),
            ("--chains", "ECDSA-P256".into()),
            ("--write-sizes", WRITE_SIZE.to_string()),
        ] {
            args.extend([option.to_string(), value]);
        }
        if quick {
            args.push("--quick".into());
        }
        args.extend(["--json".to_string(), self.path(home).display().to_string()]);
        args
    }
}

/// The allocation figures of the report at `path`: per row (one protocol
/// version; a skipped one has none) and write size, the sender's
/// ([`SEND_GROUP`]) and the receiver's ([`RECV_GROUP`]), keyed
/// `<group>/<protocol>,<write size>B/<library>`, e.g.
/// `allocations-per-write-send/DTLSv1.2,1024B/openssl`. Errors: the file
/// cannot be read or parsed, or a row's parameters name no protocol.
pub fn read(path: &Path) -> Result<Vec<Bench>> {
    let report = memory::Report::read_json(path)?;
    let mut out = Vec::new();
    for row in &report.rows {
        let protocol = row
            .params
            .split(',')
            .nth(1)
            .with_context(|| format!("{}: no protocol in parameters {:?}", path.display(), row.params))?;
        for w in &row.writes {
            for (group, s) in [(SEND_GROUP, &w.sender_allocs), (RECV_GROUP, &w.receiver_allocs)] {
                out.push(Bench {
                    key: format!("{group}/{protocol},{}B/{}", w.write_size, series(&row.library)),
                    library_id: row.library.clone(),
                    crypto_floor: None,
                    figure: Figure::Allocations {
                        allocs_per_write: s.mean,
                        allocs_stddev: s.stddev,
                        allocs_min: s.min,
                        allocs_max: s.max,
                        write_size: w.write_size as u64,
                        connections: row.connections as u64,
                    },
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A report as `memory measure --json` writes it (every field, so a
    /// change to its shape shows here too), with one row per `(params,
    /// sender mean, receiver mean)` of `library`, writes of 1024 bytes.
    pub fn memory_report(library: &str, rows: &[(&str, f64, f64)]) -> String {
        let stats = |mean: f64| serde_json::json!({"mean": mean, "stddev": 0.5, "min": mean - 1.0, "max": mean + 1.0});
        let sides =
            |v: f64| serde_json::json!({"client": stats(v), "server": stats(v), "pair": stats(2.0 * v)});
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|&(params, sender, receiver)| {
                serde_json::json!({
                    "library": library,
                    "params": params,
                    "kind": "server-auth",
                    "chain": "ECDSA-P256",
                    "connections": 10,
                    "held": sides(30000.0),
                    "peak_pair": stats(90000.0),
                    "idle": sides(20000.0),
                    "buffer_release": "SSL_MODE_RELEASE_BUFFERS",
                    "handshake_allocs": sides(500.0),
                    "handshake_bytes": sides(60000.0),
                    "writes": [{
                        "write_size": 1024,
                        "sender_allocs": stats(sender),
                        "sender_bytes": stats(100.0),
                        "receiver_allocs": stats(receiver),
                        "receiver_bytes": stats(100.0),
                    }],
                    "cross_check": {
                        "project_bytes_per_pair": 1.0,
                        "glibc_bytes_per_pair": 1.0,
                        "harness_bytes_per_pair": 0.0,
                    },
                })
            })
            .collect();
        serde_json::json!({
            "date": "2026-11-23",
            "cpu": "fixture CPU",
            "allocator": "glibc 2.36 malloc",
            "warmup": 1,
            "writes_per_size": 4,
            "rows": rows,
            "skipped": [{"library": library, "params": "server-auth,DTLSv1.3,x", "reason": "no DTLS 1.3"}],
        })
        .to_string()
    }

    #[test]
    fn the_memory_runs_measure_dtls_then_tls_into_the_home() {
        let home = Path::new("/h");
        assert_eq!(
            MEMORY_RUNS[0].args(Library::Openssl, home, true),
            [
                "measure",
                "--protocols",
                "DTLSv1.2",
                "--libraries",
                "openssl",
                "--kinds",
                "server-auth",
                "--chains",
                "ECDSA-P256",
                "--write-sizes",
                "1024",
                "--quick",
                "--json",
                "/h/memory.json"
            ]
        );
        let tls = MEMORY_RUNS[1].args(Library::Openssl, home, false);
        assert_eq!(tls.first().map(String::as_str), Some("measure"));
        assert_eq!(tls[1..3], ["--protocols", "TLSv1.2"]);
        assert!(!tls.contains(&"--quick".to_string()), "{tls:?}");
        assert_eq!(tls[tls.len() - 2..], ["--json", "/h/memory-tls.json"]);
    }

    #[test]
    fn each_row_gives_the_sender_and_receiver_allocations_per_write() {
        let dir = std::env::temp_dir().join(format!("tls-bench-allocations-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("memory.json");
        let params = "server-auth,DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,x25519,ECDSA-P256";
        std::fs::write(&path, memory_report("openssl-3.1.4", &[(params, 2.0, 3.5)])).unwrap();
        let benches = read(&path).unwrap();
        let keys: Vec<&str> = benches.iter().map(|b| b.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "allocations-per-write-send/DTLSv1.2,1024B/openssl",
                "allocations-per-write-recv/DTLSv1.2,1024B/openssl"
            ]
        );
        assert_eq!(benches[0].library_id, "openssl-3.1.4");
        assert_eq!(
            benches[1].figure,
            Figure::Allocations {
                allocs_per_write: 3.5,
                allocs_stddev: 0.5,
                allocs_min: 2.5,
                allocs_max: 4.5,
                write_size: 1024,
                connections: 10
            }
        );
        std::fs::write(&path, "{").unwrap();
        assert!(read(&path).is_err(), "a broken report is an error");
        assert!(read(&dir.join("none.json")).is_err(), "a missing report is an error");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
