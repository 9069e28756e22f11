//! One release's results (kept as `<out>/<library>/<release>.json`), the
//! table of medians with the change against the previous release, and the
//! units shown.

use std::{collections::BTreeSet, fs, path::Path};

use anyhow::{Context, Result};
use semver::Version;
use serde::{Deserialize, Serialize};
use tls_bench::{bench::library_family, criterion_json::Measurement};

use crate::releases::{Library, Release};

/// One benchmark of one release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bench {
    /// The id without the library's version: `group/params/family`, e.g.
    /// `handshake/server-auth,...,ECDSA-P256/rustls+ring`; the same across
    /// releases.
    pub key: String,
    /// The full Criterion id's library component, e.g. `openssl-3.0.8`.
    pub library_id: String,
    /// Median time per iteration and its confidence interval, in ns.
    pub median_ns: f64,
    pub lower_ns: f64,
    pub upper_ns: f64,
    /// Application bytes per iteration (throughput benchmarks).
    pub bytes: Option<u64>,
}

impl Bench {
    /// From a Criterion measurement.
    pub fn from_measurement(m: &Measurement) -> Bench {
        Bench {
            key: format!("{}/{}/{}", m.group, m.params, series(&m.library)),
            library_id: m.library.clone(),
            median_ns: m.median_ns,
            lower_ns: m.lower_ns,
            upper_ns: m.upper_ns,
            bytes: m.bytes,
        }
    }

    /// The figure shown: MB/s (10^6 bytes/s) for throughput, µs per
    /// iteration otherwise.
    pub fn shown(&self) -> Shown {
        match self.bytes {
            // bytes / ns * 1e3 = MB/s; the slow end of the time interval is the low end.
            Some(b) => {
                let mbs = |ns: f64| b as f64 / ns * 1e3;
                Shown {
                    value: mbs(self.median_ns),
                    low: mbs(self.upper_ns),
                    high: mbs(self.lower_ns),
                    unit: "MB/s",
                }
            }
            None => Shown {
                value: self.median_ns / 1e3,
                low: self.lower_ns / 1e3,
                high: self.upper_ns / 1e3,
                unit: "µs",
            },
        }
    }
}

/// A median as shown in tables and graphs, with its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shown {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// `µs` (per iteration) or `MB/s`.
    pub unit: &'static str,
}

/// One release: its benchmarks, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleaseResult {
    pub library: Library,
    /// The release's name (`3.0.8`, `0.23.46`).
    pub release: String,
    /// The crate version built (`openssl-src`'s for OpenSSL).
    pub crate_version: String,
    /// The crypto library the build linked.
    pub libcrypto: String,
    /// UTC date of the run (of its last round).
    pub date: String,
    /// The CPU model of the machine that ran it (`/proc/cpuinfo`; several,
    /// `; `-separated, when joined rounds ran on different machines); empty
    /// in results kept before it was recorded.
    #[serde(default)]
    pub cpu: String,
    /// Short Criterion settings (`--quick`).
    pub quick: bool,
    /// Rounds joined (`--rounds`): each benchmark's figure is the lowest
    /// median among them.
    #[serde(default = "one_round")]
    pub rounds: u32,
    pub benchmarks: Vec<Bench>,
    /// Why the release has no results (build or run failure), if so.
    pub failure: Option<String>,
}

fn one_round() -> u32 {
    1
}

impl ReleaseResult {
    /// `self` and a later round of the same release joined: per benchmark the
    /// lower median (with its interval); a benchmark only one round has is
    /// kept; a failed round leaves `self` as it is. A later round of another
    /// build (another crate version or crypto library, other Criterion
    /// settings), or any round after a failed `self`, replaces `self`.
    pub fn lowest_with(mut self, later: ReleaseResult) -> ReleaseResult {
        let same_build = (&self.crate_version, &self.libcrypto, self.quick)
            == (&later.crate_version, &later.libcrypto, later.quick);
        if self.failure.is_some() || (later.failure.is_none() && !same_build) {
            return later;
        }
        if later.failure.is_some() {
            return self;
        }
        self.rounds += later.rounds;
        self.date = later.date;
        if !later.cpu.is_empty() && !self.cpu.split("; ").any(|c| c == later.cpu) {
            self.cpu = if self.cpu.is_empty() { later.cpu } else { format!("{}; {}", self.cpu, later.cpu) };
        }
        for b in later.benchmarks {
            match self.benchmarks.iter_mut().find(|k| k.key == b.key) {
                Some(k) if b.median_ns < k.median_ns => *k = b,
                Some(_) => {}
                None => self.benchmarks.push(b),
            }
        }
        self
    }

    /// The crate version, for ordering.
    pub fn version(&self) -> Version {
        Version::parse(&self.crate_version).unwrap_or(Version::new(0, 0, 0))
    }

    /// Where a release's results are kept.
    pub fn path(out: &Path, release: &Release) -> std::path::PathBuf {
        out.join(release.library.to_string()).join(format!("{}.json", release.label()))
    }

    /// The kept result of `release` under `out`, `None` if there is none.
    /// Errors: a kept file that cannot be read or parsed.
    pub fn kept(out: &Path, release: &Release) -> Result<Option<ReleaseResult>> {
        let path = ReleaseResult::path(out, release);
        if !path.exists() {
            return Ok(None);
        }
        ReleaseResult::read(&path).map(Some)
    }

    /// One kept result, its benchmark keys recomputed with [`series`]
    /// (results kept before it named s2n-tls's crypto library in the key).
    fn read(path: &Path) -> Result<ReleaseResult> {
        let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut result = serde_json::from_str::<ReleaseResult>(&text)
            .with_context(|| format!("parsing {}", path.display()))?;
        for b in &mut result.benchmarks {
            if let Some((head, _)) = b.key.rsplit_once('/') {
                b.key = format!("{head}/{}", series(&b.library_id));
            }
        }
        Ok(result)
    }

    /// Writes to [`ReleaseResult::path`].
    pub fn save(&self, out: &Path, release: &Release) -> Result<()> {
        let path = ReleaseResult::path(out, release);
        fs::create_dir_all(path.parent().context("no parent")?)?;
        fs::write(&path, serde_json::to_string_pretty(self)? + "\n")
            .with_context(|| format!("writing {}", path.display()))
    }
}

/// The name a library's figures go by across releases: its id without the
/// version ([`library_family`]), and for s2n-tls without the crypto
/// library too, since that changes with the era (AWS-LC, or the system's
/// libcrypto up to 0.0.41) and is recorded per release instead.
pub fn series(library_id: &str) -> String {
    let family = library_family(library_id);
    match family.split_once('+') {
        Some(("s2n-tls", _)) => "s2n-tls".to_string(),
        _ => family,
    }
}

/// Every kept result of `library` under `out` (see [`ReleaseResult::read`]),
/// in version order.
pub fn load(out: &Path, library: Library) -> Result<Vec<ReleaseResult>> {
    let dir = out.join(library.to_string());
    let mut results = Vec::new();
    if !dir.is_dir() {
        return Ok(results);
    }
    for entry in fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            results.push(ReleaseResult::read(&path)?);
        }
    }
    results.sort_by_key(ReleaseResult::version);
    Ok(results)
}

/// Benchmark keys present in any of `results`, sorted.
pub fn keys(results: &[ReleaseResult]) -> Vec<String> {
    let set: BTreeSet<&String> = results.iter().flat_map(|r| r.benchmarks.iter().map(|b| &b.key)).collect();
    set.into_iter().cloned().collect()
}

/// The Markdown table of `results` (in version order): per benchmark and
/// release, the median and its change against the previous release that
/// has the benchmark; then the failed releases with their reasons.
pub fn table(library: Library, results: &[ReleaseResult]) -> String {
    let mut s = format!(
        "\n### {library}\n\n| benchmark | release | median | change vs previous |\n|---|---|--:|--:|\n"
    );
    for key in keys(results) {
        let mut previous: Option<f64> = None;
        for r in results {
            let Some(b) = r.benchmarks.iter().find(|b| b.key == key) else { continue };
            let Shown { value: v, unit, .. } = b.shown();
            let change = match previous {
                // For MB/s higher is better, for µs lower: a sign that reads
                // as the figure's own change either way.
                Some(p) => format!("{:+.1}%", (v / p - 1.0) * 100.0),
                None => "-".to_string(),
            };
            s += &format!("| {key} | {} | {v:.1} {unit} | {change} |\n", r.release);
            previous = Some(v);
        }
    }
    let failed: Vec<&ReleaseResult> = results.iter().filter(|r| r.failure.is_some()).collect();
    if !failed.is_empty() {
        s += "\nFailed releases:\n\n";
        for r in failed {
            s += &format!("- {} {}: {}\n", library, r.release, r.failure.as_deref().unwrap_or(""));
        }
    }
    s
}

#[cfg(test)]
pub mod tests {
    use std::path::PathBuf;

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
                    median_ns: handshake_ns,
                    lower_ns: handshake_ns * 0.98,
                    upper_ns: handshake_ns * 1.03,
                    bytes: None,
                },
                Bench {
                    key: "throughput/server-auth,x,1024B/openssl".into(),
                    library_id: format!("openssl-{release}"),
                    median_ns: 65_536.0,
                    lower_ns: 60_000.0,
                    upper_ns: 70_000.0,
                    bytes: Some(65_536),
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
        let m = tls_bench::criterion_json::read_all(&dir).unwrap();
        let b = Bench::from_measurement(&m[0]);
        assert_eq!(b.key, "handshake/server-auth,TLSv1.3/openssl");
        assert_eq!((b.median_ns, b.lower_ns, b.upper_ns), (1000.0, 990.0, 1020.0));
        assert_eq!(b.shown(), Shown { value: 1.0, low: 0.99, high: 1.02, unit: "µs" });
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
        second.benchmarks[1].median_ns *= 2.0; // throughput: slower this round
        let joined = first.clone().lowest_with(second);
        assert_eq!(joined.benchmarks[0].median_ns, 900_000.0);
        assert_eq!(joined.benchmarks[1].median_ns, first.benchmarks[1].median_ns);
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
        assert_eq!(back.benchmarks[0].median_ns, 900_000.0);
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
        assert_eq!((joined.rounds, joined.benchmarks[0].median_ns), (1, 1_000_000.0));
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
}
