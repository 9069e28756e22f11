//! Where a release's results are kept (`<out>/<library>/<release>.json`):
//! the path, reading the kept result back, saving it. The results
//! themselves, their table and units are
//! [`tls_bench_results::historical`].

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
pub use tls_bench_results::historical::{
    Bench, Figure, ReleaseResult, Shown, Unit, floor_keys, keys, load, series, table,
};

use crate::releases::Release;

/// A release's result as kept under an output directory.
pub trait Kept: Sized {
    /// Where a release's results are kept: `<out>/<library>/<release>.json`.
    fn path(out: &Path, release: &Release) -> PathBuf;

    /// The kept result of `release` under `out`, `None` if there is none.
    /// Errors: a kept file that cannot be read or parsed.
    fn kept(out: &Path, release: &Release) -> Result<Option<Self>>;

    /// Writes to [`Kept::path`]. Errors: the file cannot be written.
    fn save(&self, out: &Path, release: &Release) -> Result<()>;
}

impl Kept for ReleaseResult {
    fn path(out: &Path, release: &Release) -> PathBuf {
        out.join(release.library.to_string()).join(format!("{}.json", release.label()))
    }

    fn kept(out: &Path, release: &Release) -> Result<Option<ReleaseResult>> {
        let path = ReleaseResult::path(out, release);
        if !path.exists() {
            return Ok(None);
        }
        ReleaseResult::read(&path).map(Some)
    }

    fn save(&self, out: &Path, release: &Release) -> Result<()> {
        let path = ReleaseResult::path(out, release);
        fs::create_dir_all(path.parent().context("no parent")?)?;
        fs::write(&path, serde_json::to_string_pretty(self)? + "\n")
            .with_context(|| format!("writing {}", path.display()))
    }
}

#[cfg(test)]
pub mod tests {
    use std::path::PathBuf;

    use semver::Version;
    use tls_bench_results::historical::{Library, Per};

    use super::*;

    pub fn fixture(
        release: &str,
        crate_version: &str,
        handshake_ns: f64,
        failure: Option<&str>,
    ) -> ReleaseResult {
        let benchmarks = if failure.is_some() {
            Vec::new()
        } else {
            vec![
                Bench {
                    key: "handshake/server-auth,x/openssl".into(),
                    library_id: format!("openssl-{release}"),
                    crypto_floor: None,
                    figure: Figure::Time {
                        median_ns: handshake_ns,
                        lower_ns: handshake_ns * 0.98,
                        upper_ns: handshake_ns * 1.03,
                        bytes: None,
                    },
                },
                Bench {
                    key: "throughput/server-auth,x,1024B/openssl".into(),
                    library_id: format!("openssl-{release}"),
                    crypto_floor: None,
                    figure: Figure::Time {
                        median_ns: 65_536.0,
                        lower_ns: 60_000.0,
                        upper_ns: 70_000.0,
                        bytes: Some(65_536),
                    },
                },
            ]
        };
        ReleaseResult {
            library: Library::Openssl,
            release: release.into(),
            crate_version: crate_version.into(),
            libcrypto: "fixture".into(),
            date: "2026-11-21".into(),
            cpu: "fixture CPU".into(),
            quick: true,
            rounds: 1,
            benchmarks,
            failure: failure.map(str::to_string),
        }
    }

    #[test]
    fn criterion_results_are_read_from_disk() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-{}", std::process::id()));
        let bench_dir: PathBuf = dir.join("handshake/p/openssl-3.0.8/new");
        fs::create_dir_all(&bench_dir).unwrap();
        fs::write(
            bench_dir.join("benchmark.json"),
            r#"{"group_id":"handshake","function_id":"server-auth,TLSv1.3","value_str":"openssl-3.0.8","throughput":null,"full_id":"x","directory_name":"x","title":"x"}"#,
        )
        .unwrap();
        fs::write(
            bench_dir.join("estimates.json"),
            r#"{"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":990.0,"upper_bound":1020.0},"point_estimate":1000.0,"standard_error":5.0}}"#,
        )
        .unwrap();
        let m = tls_bench_results::criterion_json::read_all(&dir).unwrap();
        let b = Bench::from_measurement(&m[0]);
        assert_eq!(b.key, "handshake/server-auth,TLSv1.3/openssl");
        assert_eq!(
            b.figure,
            Figure::Time { median_ns: 1000.0, lower_ns: 990.0, upper_ns: 1020.0, bytes: None }
        );
        assert_eq!(b.shown(), Shown { value: 1.0, low: 0.99, high: 1.02, unit: Unit::Micros });
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn s2n_tls_releases_form_one_series_whatever_their_libcrypto() {
        assert_eq!(series("s2n-tls-0.0.35+openssl-libcrypto"), "s2n-tls");
        assert_eq!(series("s2n-tls-0.3.47+aws-lc"), "s2n-tls");
        assert_eq!(series("rustls-0.23.46+ring"), "rustls+ring");
        assert_eq!(series("openssl-3.0.8"), "openssl");
    }

    #[test]
    fn rounds_keep_the_lowest_median_of_each_benchmark() {
        let first = fixture("3.0.8", "300.0.13+3.0.8", 1_000_000.0, None);
        let mut second = fixture("3.0.8", "300.0.13+3.0.8", 900_000.0, None);
        if let Figure::Time { median_ns, .. } = &mut second.benchmarks[1].figure {
            *median_ns *= 2.0; // throughput: slower this round
        }
        let joined = first.clone().lowest_with(second);
        assert_eq!(joined.benchmarks[0].cost(), 900_000.0);
        assert_eq!(joined.benchmarks[1].cost(), first.benchmarks[1].cost());
        assert_eq!(joined.rounds, 2);
        assert_eq!(joined.cpu, "fixture CPU");
        let mut elsewhere = fixture("3.0.8", "300.0.13+3.0.8", 950_000.0, None);
        elsewhere.cpu = "another CPU".into();
        assert_eq!(joined.clone().lowest_with(elsewhere).cpu, "fixture CPU; another CPU");
        let mut unrecorded = fixture("3.0.8", "300.0.13+3.0.8", 950_000.0, None);
        unrecorded.cpu = String::new();
        assert_eq!(joined.clone().lowest_with(unrecorded).cpu, "fixture CPU");
        let failed = fixture("3.0.8", "300.0.13+3.0.8", 0.0, Some("build failed"));
        assert_eq!(first.clone().lowest_with(failed.clone()).benchmarks.len(), first.benchmarks.len());
        assert_eq!(failed.lowest_with(first.clone()).rounds, 1);
    }

    #[test]
    fn kept_results_are_read_back_and_a_broken_file_is_an_error() {
        let out = std::env::temp_dir().join(format!("tls-bench-kept-{}", std::process::id()));
        let release = Release { library: Library::Openssl, version: Version::new(300, 0, 13) };
        assert!(ReleaseResult::kept(&out, &release).unwrap().is_none());
        let result = fixture("3.0.8", "300.0.13+3.0.8", 900_000.0, None);
        result.save(&out, &release).unwrap();
        let back = ReleaseResult::kept(&out, &release).unwrap().unwrap();
        assert_eq!(back.benchmarks[0].cost(), 900_000.0);
        fs::write(ReleaseResult::path(&out, &release), "{").unwrap();
        assert!(ReleaseResult::kept(&out, &release).is_err());
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn rounds_of_another_build_replace_the_kept_ones() {
        let kept = fixture("3.0.8", "300.0.13+3.0.8", 900_000.0, None);
        let mut rebuilt = fixture("3.0.8", "300.0.13+3.0.8", 1_000_000.0, None);
        rebuilt.libcrypto = "another libcrypto".to_string();
        let joined = kept.clone().lowest_with(rebuilt.clone());
        assert_eq!((joined.rounds, joined.benchmarks[0].cost()), (1, 1_000_000.0));
        let mut quick = kept.clone();
        quick.quick = true;
        assert!(kept.lowest_with(quick).quick);
    }

    #[test]
    fn table_gives_changes_against_the_previous_release_and_names_failures() {
        let results = [
            fixture("1.1.1w", "111.28.2+1.1.1w", 1_000_000.0, None),
            fixture("3.0.8", "300.0.13+3.0.8", 2_000_000.0, None),
            fixture("3.1.4", "300.1.6+3.1.4", 0.0, Some("build failed: error[E0425]")),
            fixture("3.2.1", "300.2.3+3.2.1", 1_500_000.0, None),
        ];
        let t = table(Library::Openssl, &results);
        assert!(t.contains("| handshake/server-auth,x/openssl | 1.1.1w | 1000.0 µs | - |"), "{t}");
        assert!(t.contains("| handshake/server-auth,x/openssl | 3.0.8 | 2000.0 µs | +100.0% |"), "{t}");
        assert!(t.contains("| handshake/server-auth,x/openssl | 3.2.1 | 1500.0 µs | -25.0% |"), "{t}");
        assert!(
            t.contains("| throughput/server-auth,x,1024B/openssl | 3.0.8 | 1000.0 MB/s | +0.0% |"),
            "{t}"
        );
        assert!(t.contains("- openssl 3.1.4: build failed: error[E0425]"), "{t}");
    }

    /// A result of instruction counts for rustls `release`: a handshake of
    /// `per_handshake` instructions (20 counted) and a transfer of 3
    /// instructions per byte (4 of 64 KiB counted).
    pub fn counts(release: &str, per_handshake: u64) -> ReleaseResult {
        let count = |key: &str, per: Per, per_unit: u64, units: u64, iterations: u64| Bench {
            key: key.into(),
            library_id: format!("rustls-{release}+ring"),
            crypto_floor: None,
            figure: Figure::Instructions {
                per_unit: per_unit as f64,
                per,
                instructions: per_unit * units,
                iterations,
            },
        };
        ReleaseResult {
            library: Library::Rustls,
            release: release.into(),
            crate_version: release.into(),
            libcrypto: "ring 0.17.14".into(),
            benchmarks: vec![
                count("handshake/server-auth,x/rustls+ring", Per::Handshake, per_handshake, 20, 20),
                count("throughput-send/server-auth,x,1024B/rustls+ring", Per::Byte, 3, 4 * 65_536, 4),
            ],
            ..fixture(release, release, 0.0, None)
        }
    }

    #[test]
    fn times_keep_their_json_and_counts_read_back_as_counts() {
        let time = &fixture("3.0.8", "300.0.13+3.0.8", 1000.0, None).benchmarks[0];
        assert_eq!(
            serde_json::to_string(time).unwrap(),
            r#"{"key":"handshake/server-auth,x/openssl","library_id":"openssl-3.0.8","median_ns":1000.0,"lower_ns":980.0,"upper_ns":1030.0,"bytes":null}"#
        );
        let count = &counts("0.23.46", 4_000_000).benchmarks[1];
        let json = serde_json::to_string(count).unwrap();
        assert!(
            json.contains(r#""per_unit":3.0,"per":"byte","instructions":786432,"iterations":4"#),
            "{json}"
        );
        for b in [time, count] {
            assert_eq!(&serde_json::from_str::<Bench>(&serde_json::to_string(b).unwrap()).unwrap(), b);
        }
        assert_eq!(count.shown(), Shown { value: 3.0, low: 3.0, high: 3.0, unit: Unit::InstructionsPerByte });
        let ticks: Vec<Option<String>> =
            [0.0, 250_000.0, 4_500_000.0, 12e6].map(|v| Unit::InstructionsPerHandshake.tick(v)).into();
        assert_eq!(ticks, [Some("0M".into()), Some("0.25M".into()), Some("4.5M".into()), Some("12M".into())]);
        assert_eq!((Unit::InstructionsPerByte.tick(4.5), Unit::Micros.tick(4.5)), (None, None));
    }

    #[test]
    fn counts_are_tabled_per_handshake_and_per_byte_with_finer_changes() {
        let results = [counts("0.21.12", 4_000_000), counts("0.23.46", 4_020_000)];
        let t = table(Library::Rustls, &results);
        assert!(t.contains("| benchmark | release | instructions | change vs previous |"), "{t}");
        assert!(
            t.contains(
                "| handshake/server-auth,x/rustls+ring | 0.21.12 | 4000000 instructions per handshake | - |"
            ),
            "{t}"
        );
        assert!(
            t.contains("| handshake/server-auth,x/rustls+ring | 0.23.46 | 4020000 instructions per handshake | +0.50% |"),
            "{t}"
        );
        assert!(
            t.contains("| throughput-send/server-auth,x,1024B/rustls+ring | 0.23.46 | 3.000 instructions per byte | +0.00% |"),
            "{t}"
        );
        let joined = results[1].clone().lowest_with(counts("0.23.46", 3_990_000));
        assert_eq!((joined.rounds, joined.benchmarks[0].cost()), (2, 3_990_000.0));
    }
    /// A DTLS suite result of OpenSSL `release`: the send loop of DTLS 1.2
    /// at `dtls_ns` and of TLS 1.2 at half that (mean ns per 64 writes of
    /// 1024 bytes), and the sender's and receiver's allocations per write
    /// over DTLS 1.2 (`dtls_allocs`, and one more) and TLS 1.3 (none).
    pub fn dtls(release: &str, crate_version: &str, dtls_ns: f64, dtls_allocs: f64) -> ReleaseResult {
        let rate = |key: &str, ns: f64| Bench {
            key: key.into(),
            library_id: format!("openssl-{release}"),
            crypto_floor: None,
            figure: Figure::Rate {
                mean_ns: ns,
                mean_lower_ns: ns * 0.95,
                mean_upper_ns: ns * 1.05,
                elements: 64,
                element_bytes: Some(1024),
            },
        };
        let allocs = |key: &str, v: f64| Bench {
            key: key.into(),
            library_id: format!("openssl-{release}"),
            crypto_floor: None,
            figure: Figure::Allocations {
                allocs_per_write: v,
                allocs_stddev: 0.0,
                allocs_min: v,
                allocs_max: v,
                write_size: 1024,
                connections: 10,
            },
        };
        let (d, t) = (
            "DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B",
            "TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B",
        );
        let mut benchmarks = Vec::new();
        for group in ["send-loop", "send-loop-send", "send-loop-recv"] {
            benchmarks.push(rate(&format!("{group}/{d}/openssl"), dtls_ns));
            benchmarks.push(rate(&format!("{group}/{t}/openssl"), dtls_ns / 2.0));
        }
        benchmarks.extend([
            allocs("allocations-per-write-send/DTLSv1.2,1024B/openssl", dtls_allocs),
            allocs("allocations-per-write-recv/DTLSv1.2,1024B/openssl", dtls_allocs + 1.0),
            allocs("allocations-per-write-send/TLSv1.2,1024B/openssl", 0.0),
            allocs("allocations-per-write-recv/TLSv1.2,1024B/openssl", 0.0),
        ]);
        ReleaseResult { benchmarks, ..fixture(release, crate_version, 0.0, None) }
    }

    #[test]
    fn dtls_figures_keep_their_json_and_are_tabled_with_mbs_and_allocation_differences() {
        let results = [
            dtls("3.1.4", "300.1.6+3.1.4", 640_000.0, 2.0),
            dtls("3.2.1", "300.2.3+3.2.1", 1_280_000.0, 5.0),
        ];
        for b in &results[0].benchmarks {
            assert_eq!(&serde_json::from_str::<Bench>(&serde_json::to_string(b).unwrap()).unwrap(), b);
        }
        let json = serde_json::to_string(&results[0].benchmarks[0]).unwrap();
        assert!(
            json.contains(r#""mean_ns":640000.0,"mean_lower_ns":608000.0,"mean_upper_ns":672000.0,"elements":64,"element_bytes":1024"#),
            "{json}"
        );
        let json = serde_json::to_string(&results[0].benchmarks[6]).unwrap();
        assert!(json.contains(r#""allocs_per_write":2.0,"allocs_stddev":0.0"#), "{json}");
        let t = table(Library::Openssl, &results);
        assert!(t.contains("| benchmark | release | figure | change vs previous |"), "{t}");
        let send_loop = "send-loop/DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B/openssl";
        assert!(t.contains(&format!("| {send_loop} | 3.1.4 | 100000 writes/s (102.4 MB/s) | - |")), "{t}");
        assert!(t.contains(&format!("| {send_loop} | 3.2.1 | 50000 writes/s (51.2 MB/s) | -50.0% |")), "{t}");
        assert!(
            t.contains("| allocations-per-write-send/DTLSv1.2,1024B/openssl | 3.2.1 | 5.00 allocations per write | +3.00 |"),
            "{t}"
        );
        assert!(
            t.contains("| allocations-per-write-send/TLSv1.2,1024B/openssl | 3.2.1 | 0.00 allocations per write | +0.00 |"),
            "{t}"
        );
        // Rounds keep the faster send loop (the lower mean time) and the fewer allocations.
        let joined = results[1].clone().lowest_with(dtls("3.2.1", "300.2.3+3.2.1", 1_000_000.0, 6.0));
        assert_eq!((joined.benchmarks[0].cost(), joined.benchmarks[6].cost()), (1_000_000.0, 5.0));
        assert_eq!(Unit::WritesPerSecond.tick(150_000.0).as_deref(), Some("150k"));
        assert!(Unit::WritesPerSecond.has_interval() && !Unit::AllocationsPerWrite.has_interval());
        assert!(!Unit::WritesPerSecond.is_count() && !Unit::AllocationsPerWrite.is_count());
    }
}
