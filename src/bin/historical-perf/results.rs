//! One release's results (kept as `<out>/<library>/<release>.json`), the
//! table of figures with the change against the previous release, and the
//! units shown: Criterion's times (µs, MB/s), Callgrind's instruction
//! counts (per handshake, per byte), or the DTLS suite's send-loop rates
//! (writes per second, with MB/s) and allocations per write.

use std::{collections::BTreeSet, fs, path::Path};

use anyhow::{Context, Result};
use semver::Version;
use serde::{Deserialize, Serialize};
use tls_bench::{bench::library_family, criterion_json::Measurement, gungraun_json::Count};

use crate::releases::{Library, Release};

/// One benchmark of one release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bench {
    /// The id without the library's version: `group/params/family`, e.g.
    /// `handshake/server-auth,...,ECDSA-P256/rustls+ring`; the same across
    /// releases.
    pub key: String,
    /// The full benchmark id's library component, e.g. `openssl-3.0.8`.
    pub library_id: String,
    /// What was measured; its fields sit beside `key` in the kept JSON.
    #[serde(flatten)]
    pub figure: Figure,
}

/// What one benchmark measured: a Criterion time or rate, a Callgrind
/// count, or the `memory` binary's allocations per write. In the kept JSON
/// the fields alone say which (results kept before counts existed are all
/// times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Figure {
    /// Criterion: the median time per iteration and its 95% confidence
    /// interval, in ns.
    Time {
        /// The median, ns per iteration.
        median_ns: f64,
        /// The low end of its 95% confidence interval, ns.
        lower_ns: f64,
        /// The high end of its 95% confidence interval, ns.
        upper_ns: f64,
        /// Application bytes per iteration (throughput benchmarks).
        bytes: Option<u64>,
    },
    /// Callgrind (gungraun): instructions counted over `iterations`.
    Instructions {
        /// Instructions per handshake or per byte moved
        /// ([`Count::per_unit`]).
        per_unit: f64,
        /// What `per_unit` is per.
        per: Per,
        /// The whole count.
        instructions: u64,
        /// Iterations counted together (handshakes, or transfers).
        iterations: u64,
    },
    /// Criterion, a benchmark whose throughput is in elements (the send
    /// loop: `Throughput::Elements(64)`, 64 writes per iteration): the
    /// mean time per iteration and its 95% confidence interval, in ns,
    /// shown as elements per second ([`Bench::shown`]).
    Rate {
        /// Criterion's mean, ns per iteration.
        mean_ns: f64,
        /// The low end of the mean's 95% confidence interval, ns.
        mean_lower_ns: f64,
        /// The high end of that interval, ns.
        mean_upper_ns: f64,
        /// Elements per iteration: writes (DTLS: datagrams).
        elements: u64,
        /// Application bytes per element (the write size, from the id's
        /// `<n>B`), for MB/s; `None` when the id names none.
        element_bytes: Option<u64>,
    },
    /// The `memory` binary: allocation calls per write in a steady send
    /// loop of one side, the mean over connections of each connection's
    /// per-write average.
    Allocations {
        /// The mean, allocation calls per write.
        allocs_per_write: f64,
        /// Their sample standard deviation over connections, calls per write.
        allocs_stddev: f64,
        /// The lowest connection's figure, calls per write.
        allocs_min: f64,
        /// The highest connection's figure, calls per write.
        allocs_max: f64,
        /// Application bytes per write.
        write_size: u64,
        /// Connection pairs measured.
        connections: u64,
    },
}

/// The unit an instruction count is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// One handshake.
    Handshake,
    /// One byte of application data moved.
    Byte,
}

impl Bench {
    /// From a Criterion measurement.
    pub fn from_measurement(m: &Measurement) -> Bench {
        Bench {
            key: format!("{}/{}/{}", m.group, m.params, series(&m.library)),
            library_id: m.library.clone(),
            figure: Figure::Time {
                median_ns: m.median_ns,
                lower_ns: m.lower_ns,
                upper_ns: m.upper_ns,
                bytes: m.bytes,
            },
        }
    }

    /// From a Criterion measurement whose throughput is in elements (the
    /// send loop), as a [`Figure::Rate`] on Criterion's mean; `None`
    /// without an element throughput or a mean.
    pub fn from_rate(m: &Measurement) -> Option<Bench> {
        let (elements, [mean_lower_ns, mean_ns, mean_upper_ns]) = (m.elements?, m.mean_ns?);
        let element_bytes = m.params.rsplit(',').next().and_then(|p| p.strip_suffix('B')?.parse().ok());
        Some(Bench {
            key: format!("{}/{}/{}", m.group, m.params, series(&m.library)),
            library_id: m.library.clone(),
            figure: Figure::Rate { mean_ns, mean_lower_ns, mean_upper_ns, elements, element_bytes },
        })
    }

    /// From a gungraun count, per handshake or per byte as
    /// [`Count::per_unit`] gives it.
    pub fn from_count(c: &Count) -> Bench {
        Bench {
            key: format!("{}/{}/{}", c.group(), c.parameters(), series(c.library())),
            library_id: c.library().to_string(),
            figure: Figure::Instructions {
                per_unit: c.per_unit(),
                per: if c.is_transfer() { Per::Byte } else { Per::Handshake },
                instructions: c.instructions,
                iterations: c.iterations,
            },
        }
    }

    /// What rounds are compared by, lower being better: the median time in
    /// ns, the instructions per unit, the mean time in ns (rates), or the
    /// allocations per write.
    pub fn cost(&self) -> f64 {
        match self.figure {
            Figure::Time { median_ns, .. } => median_ns,
            Figure::Instructions { per_unit, .. } => per_unit,
            Figure::Rate { mean_ns, .. } => mean_ns,
            Figure::Allocations { allocs_per_write, .. } => allocs_per_write,
        }
    }

    /// For a [`Figure::Rate`] whose element size is known: MB/s (10^6
    /// bytes/s), elements per second x bytes per element / 10^6; `None`
    /// otherwise.
    pub fn megabytes_per_second(&self) -> Option<f64> {
        match self.figure {
            Figure::Rate { element_bytes: Some(b), .. } => Some(self.shown().value * b as f64 / 1e6),
            _ => None,
        }
    }

    /// The figure in a table cell ([`Unit::cell`]), a rate with its MB/s
    /// beside it, e.g. `123456 writes/s (126.4 MB/s)`.
    pub fn cell(&self) -> String {
        let shown = self.shown();
        match self.megabytes_per_second() {
            Some(mbs) => format!("{} ({mbs:.1} MB/s)", shown.unit.cell(shown.value)),
            None => shown.unit.cell(shown.value),
        }
    }

    /// The figure shown: MB/s (10^6 bytes/s) for throughput, µs per
    /// iteration otherwise; instructions per handshake or per byte for
    /// counts (no interval: `low` and `high` are the count); writes per
    /// second for rates (elements / mean time, with the interval of the
    /// mean); allocations per write (no interval: `low` and `high` are the
    /// mean).
    pub fn shown(&self) -> Shown {
        match self.figure {
            // elements / ns * 1e9 = per second; the slow end of the time interval is the low end.
            Figure::Rate { mean_ns, mean_lower_ns, mean_upper_ns, elements, .. } => {
                let per_second = |ns: f64| elements as f64 / ns * 1e9;
                Shown {
                    value: per_second(mean_ns),
                    low: per_second(mean_upper_ns),
                    high: per_second(mean_lower_ns),
                    unit: Unit::WritesPerSecond,
                }
            }
            Figure::Allocations { allocs_per_write: v, .. } => {
                Shown { value: v, low: v, high: v, unit: Unit::AllocationsPerWrite }
            }
            // bytes / ns * 1e3 = MB/s; the slow end of the time interval is the low end.
            Figure::Time { median_ns, lower_ns, upper_ns, bytes: Some(b) } => {
                let mbs = |ns: f64| b as f64 / ns * 1e3;
                Shown {
                    value: mbs(median_ns),
                    low: mbs(upper_ns),
                    high: mbs(lower_ns),
                    unit: Unit::MegabytesPerSecond,
                }
            }
            Figure::Time { median_ns, lower_ns, upper_ns, bytes: None } => Shown {
                value: median_ns / 1e3,
                low: lower_ns / 1e3,
                high: upper_ns / 1e3,
                unit: Unit::Micros,
            },
            Figure::Instructions { per_unit, per, .. } => Shown {
                value: per_unit,
                low: per_unit,
                high: per_unit,
                unit: match per {
                    Per::Handshake => Unit::InstructionsPerHandshake,
                    Per::Byte => Unit::InstructionsPerByte,
                },
            },
        }
    }
}

/// A figure as shown in tables and graphs, with its confidence interval
/// (`low` = `high` = `value` for counts, which have none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shown {
    /// The figure, in `unit`.
    pub value: f64,
    /// The lower end of its interval, in `unit`.
    pub low: f64,
    /// The higher end of its interval, in `unit`.
    pub high: f64,
    /// What `value`, `low` and `high` are in.
    pub unit: Unit,
}

/// The unit of a shown figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// µs per iteration (Criterion; lower is better).
    Micros,
    /// MB/s, 10^6 bytes per second (Criterion throughput; higher is better).
    MegabytesPerSecond,
    /// Instructions per handshake (Callgrind; lower is better).
    InstructionsPerHandshake,
    /// Instructions per byte of application data moved (Callgrind; lower is
    /// better).
    InstructionsPerByte,
    /// Writes per second (the send loop; DTLS: datagrams per second;
    /// higher is better).
    WritesPerSecond,
    /// Allocation calls per write (the `memory` binary; lower is better).
    AllocationsPerWrite,
}

impl Unit {
    /// Whether figures in this unit are instruction counts.
    pub fn is_count(self) -> bool {
        matches!(self, Unit::InstructionsPerHandshake | Unit::InstructionsPerByte)
    }

    /// Whether figures in this unit come with a confidence interval (drawn
    /// as error bars): Criterion's times and rates.
    pub fn has_interval(self) -> bool {
        matches!(self, Unit::Micros | Unit::MegabytesPerSecond | Unit::WritesPerSecond)
    }

    /// A figure in this unit in a table cell: `1000.0 µs`, `1000.0 MB/s`,
    /// `4123456 instructions per handshake`, `2.875 instructions per byte`,
    /// `123456 writes/s`, `3.25 allocations per write`.
    pub fn cell(self, v: f64) -> String {
        match self {
            Unit::Micros => format!("{v:.1} µs"),
            Unit::MegabytesPerSecond => format!("{v:.1} MB/s"),
            Unit::InstructionsPerHandshake => format!("{v:.0} instructions per handshake"),
            Unit::InstructionsPerByte => format!("{v:.3} instructions per byte"),
            Unit::WritesPerSecond => format!("{v:.0} writes/s"),
            Unit::AllocationsPerWrite => format!("{v:.2} allocations per write"),
        }
    }

    /// The change from `previous` to `v`, in percent with a sign; to
    /// hundredths for counts (which move by less between runs). Allocations
    /// per write, often zero, change by their difference instead (e.g.
    /// `+1.00`, in allocations per write).
    pub fn change(self, v: f64, previous: f64) -> String {
        if self == Unit::AllocationsPerWrite {
            return format!("{:+.2}", v - previous);
        }
        let pct = (v / previous - 1.0) * 100.0;
        if self.is_count() { format!("{pct:+.2}%") } else { format!("{pct:+.1}%") }
    }

    /// A y-axis tick label for `v` when this unit has its own (`None`:
    /// plotters' default): millions of instructions per handshake, e.g.
    /// `4.5M`, whose full counts would crowd the axis; thousands of writes
    /// per second, e.g. `150k`.
    pub fn tick(self, v: f64) -> Option<String> {
        let short = |v: f64, suffix: &str| {
            let m = format!("{v:.2}");
            format!("{}{suffix}", m.trim_end_matches('0').trim_end_matches('.'))
        };
        match self {
            Unit::InstructionsPerHandshake => Some(short(v / 1e6, "M")),
            Unit::WritesPerSecond => Some(short(v / 1e3, "k")),
            _ => None,
        }
    }

    /// The y axis's description on a graph.
    pub fn axis(self) -> &'static str {
        match self {
            Unit::Micros => "µs per iteration (lower is better)",
            Unit::MegabytesPerSecond => "MB/s (10^6 bytes/s; higher is better)",
            Unit::InstructionsPerHandshake => {
                "instructions per handshake (M = 10^6; Callgrind; lower is better)"
            }
            Unit::InstructionsPerByte => "instructions per byte (Callgrind; lower is better)",
            Unit::WritesPerSecond => "writes/s (DTLS: datagrams/s; k = 10^3; higher is better)",
            Unit::AllocationsPerWrite => "allocation calls per write (lower is better)",
        }
    }
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
    /// A `--quick` run: short Criterion settings, or one iteration per
    /// instruction count.
    pub quick: bool,
    /// Rounds joined (`--rounds`): each benchmark's figure is the lowest
    /// among them ([`Bench::cost`]).
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
    /// lower median (with its interval) or count ([`Bench::cost`]); a
    /// benchmark only one round has is
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
                Some(k) if b.cost() < k.cost() => *k = b,
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
/// release, the median (or, for instruction counts, the count per unit) and
/// its change against the previous release that has the benchmark; then the
/// failed releases with their reasons.
pub fn table(library: Library, results: &[ReleaseResult]) -> String {
    let units: Vec<Unit> = results.iter().flat_map(|r| &r.benchmarks).map(|b| b.shown().unit).collect();
    let figure = if units.iter().any(|u| u.is_count()) {
        "instructions"
    } else if units.iter().all(|u| matches!(u, Unit::Micros | Unit::MegabytesPerSecond)) {
        "median"
    } else {
        "figure"
    };
    let mut s = format!(
        "\n### {library}\n\n| benchmark | release | {figure} | change vs previous |\n|---|---|--:|--:|\n"
    );
    for key in keys(results) {
        let mut previous: Option<f64> = None;
        for r in results {
            let Some(b) = r.benchmarks.iter().find(|b| b.key == key) else { continue };
            let Shown { value: v, unit, .. } = b.shown();
            let cell = b.cell();
            let change = match previous {
                // For MB/s higher is better, for µs lower: a sign that reads
                // as the figure's own change either way.
                Some(p) => unit.change(v, p),
                None => "-".to_string(),
            };
            s += &format!("| {key} | {} | {cell} | {change} |\n", r.release);
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
        let m = tls_bench::criterion_json::read_all(&dir).unwrap();
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
