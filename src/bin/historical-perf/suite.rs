//! Which benchmark suite a run measures in each release, and everything
//! that differs between the suites: the targets the generated build keeps,
//! the `cargo bench` arguments and environment, where the raw output and
//! the kept results go, and how the raw output becomes [`Bench`]es. The
//! build, the run loop, the results, the table and the graphs are shared.

use std::path::{Path, PathBuf};

use anyhow::{Result, ensure};
use tls_bench_harness::{bench::FLOORS_ENV, instructions};
use tls_bench_results::{criterion_json, gungraun_json};

use crate::{
    allocations::{self, MEMORY_RUNS, MemoryRun},
    releases::{Library, Release},
    results::Bench,
};

/// A benchmark suite run across releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// Wall time with Criterion: the `handshake` and `throughput` benches
    /// (µs per iteration, MB/s).
    Criterion,
    /// Instructions under Callgrind, through gungraun: the `instructions`
    /// bench, which runs the `run-case` binary once per count (instructions
    /// per handshake, or per byte moved). Needs valgrind and gungraun-runner.
    Instructions,
    /// DTLS, OpenSSL only: the `dtls` bench's send loop with Criterion
    /// (DTLS 1.2 and its TLS 1.2 contrast, 64 writes of 1024 bytes per
    /// iteration: writes per second, MB/s), then the `memory` binary's
    /// allocation calls per write (DTLS 1.2, and TLS 1.2 for contrast; see
    /// [`allocations`]).
    Dtls,
}

/// The settings of a `--quick` Criterion run, after `--`.
const CRITERION_QUICK: [&str; 6] =
    ["--warm-up-time", "0.2", "--measurement-time", "0.5", "--sample-size", "10"];
/// The settings of a full Criterion run, after `--`.
const CRITERION_FULL: [&str; 4] = ["--warm-up-time", "1", "--measurement-time", "3"];

/// The figure groups every release's [`Suite::Dtls`] result must have.
const DTLS_GROUPS: [&str; 5] =
    ["send-loop", "send-loop-send", "send-loop-recv", allocations::SEND_GROUP, allocations::RECV_GROUP];

impl Suite {
    /// The suite a run's or a plot's flags select: `--instructions`,
    /// `--dtls`, or neither (Criterion). The command line refuses both.
    pub fn from_flags(instructions: bool, dtls: bool) -> Suite {
        match (instructions, dtls) {
            (true, _) => Suite::Instructions,
            (false, true) => Suite::Dtls,
            (false, false) => Suite::Criterion,
        }
    }

    /// Refuses libraries the suite cannot measure: [`Suite::Dtls`] takes
    /// OpenSSL only (rustls and s2n-tls have no DTLS). Errors: the
    /// libraries refused and why.
    pub fn check_libraries(self, libraries: &[Library]) -> Result<()> {
        if self != Suite::Dtls {
            return Ok(());
        }
        let refused: Vec<String> =
            libraries.iter().filter(|&&l| l != Library::Openssl).map(Library::to_string).collect();
        ensure!(
            refused.is_empty(),
            "--dtls measures OpenSSL only ({} ha{} no DTLS): run `historical-perf/bench-past.sh openssl --dtls`",
            refused.join(" and "),
            if refused.len() == 1 { "s" } else { "ve" }
        );
        Ok(())
    }

    /// The `[[bench]]` targets the generated manifest keeps (paths made
    /// absolute), each passed to `cargo bench` as `--bench NAME`.
    pub fn benches(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion => &["handshake", "throughput"],
            Suite::Instructions => &["instructions"],
            Suite::Dtls => &["dtls"],
        }
    }

    /// The `[[bin]]` targets the generated manifest keeps (paths made
    /// absolute): none for Criterion, `run-case` (what Callgrind runs) for
    /// the instruction counts, `memory` (allocations per write) for DTLS.
    pub fn bins(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion => &[],
            Suite::Instructions => &["run-case"],
            Suite::Dtls => &["memory"],
        }
    }

    /// The features the suite needs besides the library's and
    /// `historical-perf`: `tools` when it keeps a binary ([`Suite::bins`]:
    /// run-case, memory); for Criterion `crypto-floor` ([`Suite::floors`]).
    pub fn features(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion if self.floors() => &["crypto-floor"],
            Suite::Criterion => &[],
            Suite::Instructions | Suite::Dtls => &["tools"],
        }
    }

    /// Whether the suite builds the library's crypto floor to run beside it
    /// in each release ([`tls_bench_harness::bench::FLOORS_ENV`]): the handshakes'
    /// and records' primitives through the release's own crypto, in the
    /// same Criterion run, so the table and graphs give the protocol cost
    /// across releases. Criterion only, and OpenSSL (the release's own
    /// libcrypto through the `openssl` crate; OpenSSL 1.1.1 through its own
    /// compat module, `tls_bench_harness::libs::openssl::floor::ossl111`), rustls (the floor's
    /// *ring* and aws-lc-rs, run only where the release links those same
    /// crates: [`crate::build::floor_refusal`]) and s2n-tls (the
    /// release's AWS-LC through aws-lc-rs from 0.1; in 0.0 the system's
    /// libcrypto through the `openssl` crate, [`Release::floor_features`]).
    pub fn floors(self) -> bool {
        self == Suite::Criterion
    }

    /// The dev-dependencies the suite needs among those a historical build
    /// otherwise drops (gungraun for the instruction counts).
    pub fn dev_dependencies(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion | Suite::Dtls => &[],
            Suite::Instructions => &["gungraun"],
        }
    }

    /// The name of `release`'s generated build directory under
    /// `<work>/build/`: `<library>-<release>`, with `-instructions` for the
    /// instruction counts (their manifest and lock file hold more) and
    /// `-dtls` for DTLS (other targets).
    pub fn build_dir_name(self, release: &Release) -> String {
        let base = format!("{}-{}", release.library, release.label());
        match self {
            Suite::Criterion => base,
            Suite::Instructions => format!("{base}-instructions"),
            Suite::Dtls => format!("{base}-dtls"),
        }
    }

    /// Where one release's raw output goes (emptied before each run):
    /// `<work>/criterion/<library>/<release>` (`CRITERION_HOME`),
    /// `<work>/gungraun/<library>/<release>` (`GUNGRAUN_HOME`), or for DTLS
    /// `<work>/criterion-dtls/<library>/<release>` (`CRITERION_HOME`, and
    /// the `memory` reports, [`Suite::memory_runs`]).
    pub fn home(self, work: &Path, release: &Release) -> PathBuf {
        let tool = match self {
            Suite::Criterion => "criterion",
            Suite::Instructions => "gungraun",
            Suite::Dtls => "criterion-dtls",
        };
        work.join(tool).join(release.library.to_string()).join(release.label())
    }

    /// The environment of `cargo bench` besides the release's own: where
    /// the raw output goes (`home`), the crypto floor when the suite runs
    /// it ([`Suite::floors`]: [`FLOORS_ENV`] `=1`), and for the
    /// instruction counts their
    /// iterations ([`instructions::MODE_ENV`]: `quick` with `quick`, else
    /// `full`) and the `summary.json` files [`gungraun_json`] reads, set
    /// whatever the caller's environment says.
    pub fn env(self, home: &Path, quick: bool) -> Vec<(&'static str, String)> {
        let home = home.display().to_string();
        match self {
            Suite::Criterion if self.floors() => {
                vec![("CRITERION_HOME", home), (FLOORS_ENV, "1".to_string())]
            }
            Suite::Criterion | Suite::Dtls => vec![("CRITERION_HOME", home)],
            Suite::Instructions => vec![
                ("GUNGRAUN_HOME", home),
                (instructions::MODE_ENV, if quick { "quick" } else { "full" }.to_string()),
                ("GUNGRAUN_SAVE_SUMMARY", "json".to_string()),
            ],
        }
    }

    /// The arguments after `cargo bench ... --`: for Criterion the
    /// historical benchmarks' filter (DTLS: the send loop's three groups,
    /// `^send-loop`), no plots and the run lengths (short with `quick`);
    /// none for the instruction counts (the `historical-perf` feature
    /// already narrows the suite, and `quick` goes through [`Suite::env`]).
    pub fn bench_args(self, quick: bool) -> Vec<&'static str> {
        let filter = match self {
            Suite::Criterion => "^(handshake|throughput)/",
            Suite::Dtls => "^send-loop",
            Suite::Instructions => return Vec::new(),
        };
        let mut args = vec![filter, "--noplot"];
        args.extend(if quick { &CRITERION_QUICK[..] } else { &CRITERION_FULL[..] });
        args
    }

    /// The runs of the release's own `memory` binary after the benches,
    /// each writing its report under `home` ([`MemoryRun::args`]): DTLS's
    /// and TLS 1.2's allocations per write; none for the other suites.
    pub fn memory_runs(self) -> &'static [MemoryRun] {
        match self {
            Suite::Dtls => &MEMORY_RUNS,
            Suite::Criterion | Suite::Instructions => &[],
        }
    }

    /// The figures a run left under `home` ([`Suite::home`]): Criterion's
    /// estimates, or gungraun's counts; for DTLS Criterion's send-loop
    /// rates ([`Bench::from_rate`]), then the allocations per write of each
    /// `memory` report there ([`allocations::read`]). Errors: output that
    /// cannot be read or parsed (none at all is an empty list, for the
    /// caller to judge).
    pub fn read(self, home: &Path) -> Result<Vec<Bench>> {
        if !home.exists() {
            return Ok(Vec::new());
        }
        Ok(match self {
            Suite::Criterion => criterion_json::read_all(home)?.iter().map(Bench::from_measurement).collect(),
            Suite::Instructions => gungraun_json::read_all(home)?.iter().map(Bench::from_count).collect(),
            Suite::Dtls => {
                let mut benches: Vec<Bench> = criterion_json::read_all(home)?
                    .iter()
                    .map(|m| Bench::from_rate(m).unwrap_or_else(|| Bench::from_measurement(m)))
                    .collect();
                benches.sort_by(|a, b| a.key.cmp(&b.key));
                for run in MEMORY_RUNS.iter().filter(|r| r.path(home).exists()) {
                    benches.extend(allocations::read(&run.path(home))?);
                }
                benches
            }
        })
    }

    /// The figure groups `benches` (one release's) lacks among those the
    /// suite needs of every release: for DTLS `send-loop`,
    /// `send-loop-send`, `send-loop-recv` and both sides' allocations per
    /// write; nothing for the other suites (any figure will do).
    pub fn missing_groups(self, benches: &[Bench]) -> Vec<&'static str> {
        if self != Suite::Dtls {
            return Vec::new();
        }
        DTLS_GROUPS
            .into_iter()
            .filter(|g| !benches.iter().any(|b| b.key.split('/').next() == Some(*g)))
            .collect()
    }

    /// Where a run keeps its results by default, `base` being
    /// `target/historical-perf`: `base` (Criterion), `base/instructions` or
    /// `base/dtls`, each with `/quick` for `--quick` runs.
    pub fn out_dir(self, base: &Path, quick: bool) -> PathBuf {
        let dir = match self {
            Suite::Criterion => base.to_path_buf(),
            Suite::Instructions => base.join("instructions"),
            Suite::Dtls => base.join("dtls"),
        };
        if quick { dir.join("quick") } else { dir }
    }
}

#[cfg(test)]
pub mod tests {
    use std::fs;

    use semver::Version;
    use tls_bench_results::historical::Per;

    use super::*;
    use crate::{
        allocations::tests::memory_report,
        results::{Figure, Unit},
    };

    /// Writes a Criterion result as Criterion 0.8 does under `home`:
    /// `<group>/<params>/<library>/new/{benchmark,estimates}.json`, with
    /// `throughput` as in its `benchmark.json` and a mean of `mean_ns`.
    pub fn criterion_result(home: &Path, id: &str, throughput: &str, mean_ns: f64) {
        let parts: Vec<&str> = id.split('/').collect();
        let new = home.join(id.replace(',', "_")).join("new");
        fs::create_dir_all(&new).unwrap();
        let benchmark = format!(
            r#"{{"group_id":"{}","function_id":"{}","value_str":"{}","throughput":{throughput},"full_id":"{id}","directory_name":"x","title":"x"}}"#,
            parts[0], parts[1], parts[2]
        );
        fs::write(new.join("benchmark.json"), benchmark).unwrap();
        let estimate = |v: f64| serde_json::json!({"confidence_interval": {"confidence_level": 0.95, "lower_bound": v - 12_800.0, "upper_bound": v + 12_800.0}, "point_estimate": v, "standard_error": 1.0});
        let estimates = serde_json::json!({"median": estimate(mean_ns * 0.9), "mean": estimate(mean_ns)});
        fs::write(new.join("estimates.json"), estimates.to_string()).unwrap();
    }

    /// A `summary.json` as gungraun-runner 0.20 writes it, reduced to the
    /// fields [`gungraun_json`] reads: `instructions` counted over
    /// `iterations` of `run-case ID`.
    pub fn gungraun_summary(id: &str, iterations: u64, instructions: u64) -> String {
        serde_json::json!({
            "started_at": "2026-11-23T10:00:00Z",
            "profiles": [{"data": {
                "parts": [{"tool_run": {"new": {
                    "command": format!("/t/release/run-case --iterations {iterations} --fixed-random {id}")
                }, "old": null}}],
                "total": {"metrics": {"Ir": {"values": {"new": instructions, "old": null}}}},
            }}],
        })
        .to_string()
    }

    #[test]
    fn the_instruction_counts_read_back_per_handshake_and_per_byte() {
        let home = std::env::temp_dir().join(format!("tls-bench-suite-{}", std::process::id()));
        let rustls = Release { library: Library::Rustls, version: Version::new(0, 23, 46) };
        assert!(Suite::Instructions.read(&home.join("none")).unwrap().is_empty());
        for (dir, id, iterations, count) in [
            ("a", "handshake-client/server-auth,TLSv1.3/rustls-0.23.46+ring", 20, 20 * 1_500_000),
            ("b", "throughput/server-auth,TLSv1.3,1024B/rustls-0.23.46+ring", 4, 4 * 65_536 * 3),
        ] {
            fs::create_dir_all(home.join(dir)).unwrap();
            fs::write(home.join(dir).join("summary.json"), gungraun_summary(id, iterations, count)).unwrap();
        }
        let benches = Suite::Instructions.read(&home).unwrap();
        assert_eq!(benches.len(), 2);
        assert_eq!(benches[0].key, "handshake-client/server-auth,TLSv1.3/rustls+ring");
        assert_eq!(benches[0].library_id, "rustls-0.23.46+ring");
        assert_eq!(
            benches[0].figure,
            Figure::Instructions {
                per_unit: 1_500_000.0,
                per: Per::Handshake,
                instructions: 30_000_000,
                iterations: 20
            }
        );
        assert!(matches!(benches[1].figure, Figure::Instructions { per_unit: 3.0, per: Per::Byte, .. }));
        fs::write(home.join("a/summary.json"), "{").unwrap();
        assert!(Suite::Instructions.read(&home).is_err(), "a broken summary is an error");
        fs::remove_dir_all(&home).unwrap();
        assert!(Suite::Instructions.home(Path::new("/w"), &rustls).ends_with("gungraun/rustls/0.23.46"));
        assert!(Suite::Criterion.home(Path::new("/w"), &rustls).ends_with("criterion/rustls/0.23.46"));
    }

    #[test]
    fn each_suite_has_its_own_targets_settings_and_directories() {
        let rustls = Release { library: Library::Rustls, version: Version::new(0, 21, 12) };
        assert_eq!(Suite::Criterion.build_dir_name(&rustls), "rustls-0.21.12");
        assert_eq!(Suite::Instructions.build_dir_name(&rustls), "rustls-0.21.12-instructions");
        let base = Path::new("/r/target/historical-perf");
        assert_eq!(Suite::Criterion.out_dir(base, false), base);
        assert_eq!(Suite::Criterion.out_dir(base, true), base.join("quick"));
        assert_eq!(Suite::Instructions.out_dir(base, false), base.join("instructions"));
        assert_eq!(Suite::Instructions.out_dir(base, true), base.join("instructions/quick"));
        assert_eq!(Suite::Dtls.out_dir(base, false), base.join("dtls"));
        assert_eq!(Suite::Dtls.out_dir(base, true), base.join("dtls/quick"));
        assert!(Suite::Criterion.memory_runs().is_empty() && Suite::Instructions.memory_runs().is_empty());
        let env = Suite::Instructions.env(Path::new("/h"), true);
        assert!(env.contains(&("GUNGRAUN_HOME", "/h".into())), "{env:?}");
        assert!(env.contains(&("TLS_BENCH_INSTRUCTIONS", "quick".into())), "{env:?}");
        assert!(
            Suite::Instructions
                .env(Path::new("/h"), false)
                .contains(&("TLS_BENCH_INSTRUCTIONS", "full".into()))
        );
        assert_eq!(
            Suite::Criterion.env(Path::new("/h"), true),
            [("CRITERION_HOME", "/h".to_string()), ("TLS_BENCH_FLOORS", "1".to_string())]
        );
        assert!(Suite::Criterion.floors() && !Suite::Dtls.floors() && !Suite::Instructions.floors());
        assert!(Suite::Instructions.bench_args(true).is_empty());
        assert_eq!(
            Suite::Criterion.bench_args(true),
            [
                "^(handshake|throughput)/",
                "--noplot",
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.5",
                "--sample-size",
                "10"
            ]
        );
        assert_eq!(
            Suite::Criterion.bench_args(false),
            ["^(handshake|throughput)/", "--noplot", "--warm-up-time", "1", "--measurement-time", "3"]
        );
    }

    #[test]
    fn the_dtls_suite_runs_the_send_loop_and_memory_of_openssl_only() {
        assert_eq!(
            (Suite::from_flags(false, false), Suite::from_flags(true, false), Suite::from_flags(false, true)),
            (Suite::Criterion, Suite::Instructions, Suite::Dtls)
        );
        let openssl =
            Release { library: Library::Openssl, version: Version::parse("300.2.3+3.2.1").unwrap() };
        assert_eq!(Suite::Dtls.build_dir_name(&openssl), "openssl-3.2.1-dtls");
        assert_eq!((Suite::Dtls.benches(), Suite::Dtls.bins()), (&["dtls"][..], &["memory"][..]));
        assert!(Suite::Dtls.dev_dependencies().is_empty());
        let home = Suite::Dtls.home(Path::new("/w"), &openssl);
        assert_eq!(home, Path::new("/w/criterion-dtls/openssl/3.2.1"));
        assert_eq!(
            Suite::Dtls.env(&home, true),
            [("CRITERION_HOME", "/w/criterion-dtls/openssl/3.2.1".into())]
        );
        assert_eq!(Suite::Dtls.env(&home, false), Suite::Dtls.env(&home, true));
        // The Criterion suite's run lengths, the send loop's groups.
        for quick in [true, false] {
            let (dtls, criterion) = (Suite::Dtls.bench_args(quick), Suite::Criterion.bench_args(quick));
            assert_eq!(dtls[..2], ["^send-loop", "--noplot"]);
            assert_eq!(dtls[1..], criterion[1..]);
        }
        let runs = Suite::Dtls.memory_runs();
        assert_eq!(
            runs.iter().map(|r| (r.report, r.protocol)).collect::<Vec<_>>(),
            [("memory.json", "DTLSv1.2"), ("memory-tls.json", "TLSv1.2")]
        );
        assert!(Suite::Dtls.check_libraries(&[Library::Openssl]).is_ok());
        let err = Suite::Dtls.check_libraries(&Library::ALL).unwrap_err().to_string();
        assert!(err.contains("OpenSSL only (s2n-tls and rustls have no DTLS)"), "{err}");
        let err = Suite::Dtls.check_libraries(&[Library::Rustls]).unwrap_err().to_string();
        assert!(err.contains("(rustls has no DTLS)"), "{err}");
        assert!(Suite::Criterion.check_libraries(&Library::ALL).is_ok());
        assert!(Suite::Instructions.check_libraries(&Library::ALL).is_ok());
    }

    #[test]
    fn the_dtls_figures_read_back_as_writes_per_second_and_allocations_per_write() {
        let home = std::env::temp_dir().join(format!("tls-bench-suite-dtls-{}", std::process::id()));
        assert!(Suite::Dtls.read(&home).unwrap().is_empty());
        let dtls = "DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B";
        let tls = "TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B";
        // 64 writes in 640 µs: 100000 writes/s, 102.4 MB/s.
        for (group, params, mean_ns) in [
            ("send-loop", dtls, 640_000.0),
            ("send-loop-send", dtls, 320_000.0),
            ("send-loop-recv", dtls, 320_000.0),
            ("send-loop", tls, 320_000.0),
        ] {
            criterion_result(
                &home,
                &format!("{group}/{params}/openssl-3.2.1"),
                r#"{"Elements":64}"#,
                mean_ns,
            );
        }
        let benches = Suite::Dtls.read(&home).unwrap();
        assert_eq!(benches.len(), 4, "{benches:?}");
        let find =
            |key: &str| benches.iter().find(|b| b.key == key).unwrap_or_else(|| panic!("{key}: {benches:?}"));
        let send_loop = find(&format!("send-loop/{dtls}/openssl"));
        assert_eq!(send_loop.library_id, "openssl-3.2.1");
        assert_eq!(
            send_loop.figure,
            Figure::Rate {
                mean_ns: 640_000.0,
                mean_lower_ns: 627_200.0,
                mean_upper_ns: 652_800.0,
                elements: 64,
                element_bytes: Some(1024)
            }
        );
        let shown = send_loop.shown();
        assert_eq!(shown.unit, Unit::WritesPerSecond);
        assert!((shown.value - 100_000.0).abs() < 1e-6, "{shown:?}");
        assert!(shown.low < shown.value && shown.value < shown.high, "{shown:?}");
        assert!((send_loop.megabytes_per_second().unwrap() - 102.4).abs() < 1e-9);
        assert_eq!(send_loop.cell(), "100000 writes/s (102.4 MB/s)");
        assert_eq!(find(&format!("send-loop/{tls}/openssl")).cell(), "200000 writes/s (204.8 MB/s)");
        let missing = Suite::Dtls.missing_groups(&benches);
        assert_eq!(missing, ["allocations-per-write-send", "allocations-per-write-recv"]);
        assert!(Suite::Criterion.missing_groups(&[]).is_empty());
        let dtls_row = "server-auth,DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,x25519,ECDSA-P256";
        fs::write(home.join("memory.json"), memory_report("openssl-3.2.1", &[(dtls_row, 1.0, 2.0)])).unwrap();
        let tls_row = "server-auth,TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,x25519,ECDSA-P256";
        fs::write(home.join("memory-tls.json"), memory_report("openssl-3.2.1", &[(tls_row, 0.0, 0.25)]))
            .unwrap();
        let benches = Suite::Dtls.read(&home).unwrap();
        assert!(Suite::Dtls.missing_groups(&benches).is_empty());
        let allocations: Vec<(&str, String)> =
            benches[4..].iter().map(|b| (b.key.as_str(), b.cell())).collect();
        assert_eq!(
            allocations,
            [
                (
                    "allocations-per-write-send/DTLSv1.2,1024B/openssl",
                    "1.00 allocations per write".to_string()
                ),
                (
                    "allocations-per-write-recv/DTLSv1.2,1024B/openssl",
                    "2.00 allocations per write".to_string()
                ),
                (
                    "allocations-per-write-send/TLSv1.2,1024B/openssl",
                    "0.00 allocations per write".to_string()
                ),
                (
                    "allocations-per-write-recv/TLSv1.2,1024B/openssl",
                    "0.25 allocations per write".to_string()
                ),
            ]
        );
        fs::write(home.join("memory-tls.json"), "[").unwrap();
        assert!(Suite::Dtls.read(&home).is_err(), "a broken memory report is an error");
        fs::remove_dir_all(&home).unwrap();
    }
}
