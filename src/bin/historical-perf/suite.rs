//! Which benchmark suite a run measures in each release, and everything
//! that differs between the suites: the targets the generated build keeps,
//! the `cargo bench` arguments and environment, where the raw output and
//! the kept results go, and how the raw output becomes [`Bench`]es. The
//! build, the run loop, the results, the table and the graphs are shared.

use std::path::{Path, PathBuf};

use anyhow::Result;
use tls_bench::{criterion_json, gungraun_json, instructions};

use crate::{releases::Release, results::Bench};

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
}

/// The settings of a `--quick` Criterion run, after `--`.
const CRITERION_QUICK: [&str; 6] =
    ["--warm-up-time", "0.2", "--measurement-time", "0.5", "--sample-size", "10"];
/// The settings of a full Criterion run, after `--`.
const CRITERION_FULL: [&str; 4] = ["--warm-up-time", "1", "--measurement-time", "3"];

impl Suite {
    /// The `[[bench]]` targets the generated manifest keeps (paths made
    /// absolute), each passed to `cargo bench` as `--bench NAME`.
    pub fn benches(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion => &["handshake", "throughput"],
            Suite::Instructions => &["instructions"],
        }
    }

    /// The `[[bin]]` targets the generated manifest keeps (paths made
    /// absolute): none for Criterion, `run-case` (what Callgrind runs) for
    /// the instruction counts.
    pub fn bins(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion => &[],
            Suite::Instructions => &["run-case"],
        }
    }

    /// The dev-dependencies the suite needs among those a historical build
    /// otherwise drops (gungraun for the instruction counts).
    pub fn dev_dependencies(self) -> &'static [&'static str] {
        match self {
            Suite::Criterion => &[],
            Suite::Instructions => &["gungraun"],
        }
    }

    /// The name of `release`'s generated build directory under
    /// `<work>/build/`: `<library>-<release>`, with `-instructions` for the
    /// instruction counts (their manifest and lock file hold more).
    pub fn build_dir_name(self, release: &Release) -> String {
        let base = format!("{}-{}", release.library, release.label());
        match self {
            Suite::Criterion => base,
            Suite::Instructions => format!("{base}-instructions"),
        }
    }

    /// Where one release's raw output goes (emptied before each run):
    /// `<work>/criterion/<library>/<release>` (`CRITERION_HOME`) or
    /// `<work>/gungraun/<library>/<release>` (`GUNGRAUN_HOME`).
    pub fn home(self, work: &Path, release: &Release) -> PathBuf {
        let tool = match self {
            Suite::Criterion => "criterion",
            Suite::Instructions => "gungraun",
        };
        work.join(tool).join(release.library.to_string()).join(release.label())
    }

    /// The environment of `cargo bench` besides the release's own: where
    /// the raw output goes (`home`), and for the instruction counts their
    /// iterations ([`instructions::MODE_ENV`]: `quick` with `quick`, else
    /// `full`) and the `summary.json` files [`gungraun_json`] reads, set
    /// whatever the caller's environment says.
    pub fn env(self, home: &Path, quick: bool) -> Vec<(&'static str, String)> {
        let home = home.display().to_string();
        match self {
            Suite::Criterion => vec![("CRITERION_HOME", home)],
            Suite::Instructions => vec![
                ("GUNGRAUN_HOME", home),
                (instructions::MODE_ENV, if quick { "quick" } else { "full" }.to_string()),
                ("GUNGRAUN_SAVE_SUMMARY", "json".to_string()),
            ],
        }
    }

    /// The arguments after `cargo bench ... --`: for Criterion the
    /// historical benchmarks' filter, no plots and the run lengths (short
    /// with `quick`); none for the instruction counts (the `historical-perf`
    /// feature already narrows the suite, and `quick` goes through
    /// [`Suite::env`]).
    pub fn bench_args(self, quick: bool) -> Vec<&'static str> {
        match self {
            Suite::Criterion => {
                let mut args = vec!["^(handshake|throughput)/", "--noplot"];
                args.extend(if quick { &CRITERION_QUICK[..] } else { &CRITERION_FULL[..] });
                args
            }
            Suite::Instructions => Vec::new(),
        }
    }

    /// The figures a run left under `home` ([`Suite::home`]): Criterion's
    /// estimates, or gungraun's counts. Errors: output that cannot be read
    /// or parsed (none at all is an empty list, for the caller to judge).
    pub fn read(self, home: &Path) -> Result<Vec<Bench>> {
        if !home.exists() {
            return Ok(Vec::new());
        }
        Ok(match self {
            Suite::Criterion => criterion_json::read_all(home)?.iter().map(Bench::from_measurement).collect(),
            Suite::Instructions => gungraun_json::read_all(home)?.iter().map(Bench::from_count).collect(),
        })
    }

    /// Where a run keeps its results by default, `base` being
    /// `target/historical-perf`: `base` (Criterion) or `base/instructions`,
    /// each with `/quick` for `--quick` runs.
    pub fn out_dir(self, base: &Path, quick: bool) -> PathBuf {
        let dir = match self {
            Suite::Criterion => base.to_path_buf(),
            Suite::Instructions => base.join("instructions"),
        };
        if quick { dir.join("quick") } else { dir }
    }
}

#[cfg(test)]
pub mod tests {
    use std::fs;

    use semver::Version;

    use super::*;
    use crate::{
        releases::Library,
        results::{Figure, Per},
    };

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
        let env = Suite::Instructions.env(Path::new("/h"), true);
        assert!(env.contains(&("GUNGRAUN_HOME", "/h".into())), "{env:?}");
        assert!(env.contains(&("TLS_BENCH_INSTRUCTIONS", "quick".into())), "{env:?}");
        assert!(
            Suite::Instructions
                .env(Path::new("/h"), false)
                .contains(&("TLS_BENCH_INSTRUCTIONS", "full".into()))
        );
        assert_eq!(Suite::Criterion.env(Path::new("/h"), true), [("CRITERION_HOME", "/h".to_string())]);
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
}
