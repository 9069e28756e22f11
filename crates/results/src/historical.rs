//! `historical-perf`'s results: one release's results (kept as
//! `<out>/<library>/<release>.json`, committed under
//! `historical-perf/data/`), the
//! table of figures with the change against the previous release, and the
//! units shown: Criterion's times (µs, MB/s), Callgrind's instruction
//! counts (per handshake, per byte), or the DTLS suite's send-loop rates
//! (writes per second, with MB/s) and allocations per write.

use std::{collections::BTreeSet, fmt, fs, path::Path};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::{
    criterion_json::Measurement,
    gungraun_json::Count,
    table::{Align, Table},
};
use tls_bench_harness::bench::library_family;

/// A library followed across its releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    /// The `s2n-tls` crate (and the s2n-tls C library it builds).
    S2nTls,
    /// OpenSSL, from the releases `openssl-src` carries.
    Openssl,
    /// The `rustls` crate.
    Rustls,
}

impl Library {
    /// Every library, in report order.
    pub const ALL: [Library; 3] = [Library::S2nTls, Library::Openssl, Library::Rustls];

    /// The crate whose releases are the library's releases.
    pub fn crate_name(self) -> &'static str {
        match self {
            Library::S2nTls => "s2n-tls",
            Library::Openssl => "openssl-src",
            Library::Rustls => "rustls",
        }
    }

    /// The tls-bench cargo feature that builds it.
    pub fn feature(self) -> &'static str {
        match self {
            Library::S2nTls => "s2n-tls",
            Library::Openssl => "openssl",
            Library::Rustls => "rustls",
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Library::S2nTls => "s2n-tls",
            Library::Openssl => "openssl",
            Library::Rustls => "rustls",
        })
    }
}

/// One benchmark of one release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bench {
    /// The id without the library's version: `group/params/family`, e.g.
    /// `handshake/server-auth,...,ECDSA-P256/rustls+ring`; the same across
    /// releases.
    pub key: String,
    /// The full benchmark id's library component, e.g. `openssl-3.0.8`.
    pub library_id: String,
    /// The series of the library's crypto floor measured in the same run
    /// (e.g. `crypto-floor-openssl`; its figure is the benchmark keyed
    /// `group/params/<this>`, [`ReleaseResult::floor_of`]), when the run
    /// recorded one ([`Measurement::crypto_floor`]); `None` for a floor
    /// itself and in results kept before the floors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypto_floor: Option<String>,
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
            crypto_floor: m.crypto_floor.as_deref().map(series),
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
            crypto_floor: None,
            figure: Figure::Rate { mean_ns, mean_lower_ns, mean_upper_ns, elements, element_bytes },
        })
    }

    /// From a gungraun count, per handshake or per byte as
    /// [`Count::per_unit`] gives it.
    pub fn from_count(c: &Count) -> Bench {
        Bench {
            key: format!("{}/{}/{}", c.group(), c.parameters(), series(c.library())),
            library_id: c.library().to_string(),
            crypto_floor: None,
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
    /// The library.
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
    /// Its benchmarks (none when it failed).
    pub benchmarks: Vec<Bench>,
    /// Why the release has no results (build or run failure), if so.
    pub failure: Option<String>,
}

fn one_round() -> u32 {
    1
}

impl ReleaseResult {
    /// The figure of `b`'s crypto floor in this release: the benchmark of
    /// the same group and parameters whose series is `b.crypto_floor`;
    /// `None` when `b` has no floor or the floor has no figure here.
    pub fn floor_of(&self, b: &Bench) -> Option<&Bench> {
        let floor = b.crypto_floor.as_deref()?;
        let head = b.key.rsplit_once('/')?.0;
        self.benchmarks.iter().find(|f| f.key.rsplit_once('/').is_some_and(|(h, s)| h == head && s == floor))
    }

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

    /// One kept result, its benchmark keys recomputed with [`series`]
    /// (results kept before it named s2n-tls's crypto library in the key).
    /// Errors: the file cannot be read or parsed (naming it).
    pub fn read(path: &Path) -> Result<ReleaseResult> {
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
/// in crate version order ([`version_order`]); none when `out` has no
/// directory for it. Errors: a file that [`ReleaseResult::read`] rejects.
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
    results.sort_by_cached_key(|r| version_order(&r.crate_version));
    Ok(results)
}

/// Benchmark keys present in any of `results`, sorted.
pub fn keys(results: &[ReleaseResult]) -> Vec<String> {
    let set: BTreeSet<&String> = results.iter().flat_map(|r| r.benchmarks.iter().map(|b| &b.key)).collect();
    set.into_iter().cloned().collect()
}

/// The Markdown table of `results` (in version order) under a `###`
/// heading naming `library`: see [`table_body`].
pub fn table(library: Library, results: &[ReleaseResult]) -> String {
    format!("\n### {library}\n\n{}", table_body(results))
}

/// Per benchmark and release of `results` (in version order), the median
/// (or, for instruction counts, the count per unit; for rates, writes per
/// second) and its change against the previous release that has the
/// benchmark; when a run measured crypto floors ([`Bench::crypto_floor`]),
/// two more columns beside each library's row (the floor's figure, and the
/// protocol cost or the fraction of the floor: [`floor_cells`]) and no row
/// of the floor's own; then the failed releases with their reasons.
pub fn table_body(results: &[ReleaseResult]) -> String {
    let units: Vec<Unit> = results.iter().flat_map(|r| &r.benchmarks).map(|b| b.shown().unit).collect();
    let figure = if units.iter().any(|u| u.is_count()) {
        "instructions"
    } else if units.iter().all(|u| matches!(u, Unit::Micros | Unit::MegabytesPerSecond)) {
        "median"
    } else {
        "figure"
    };
    let floor_keys = floor_keys(results);
    let mut header = vec!["benchmark", "release", figure, "change vs previous"];
    if !floor_keys.is_empty() {
        header.extend(["crypto floor", "protocol cost"]);
    }
    let mut table = Table::new(&header).align(2.., Align::Right);
    for key in keys(results).into_iter().filter(|k| !floor_keys.contains(k)) {
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
            let floor = if floor_keys.is_empty() { Vec::new() } else { floor_cells(r, b).to_vec() };
            table.row([key.clone(), r.release.clone(), cell, change].into_iter().chain(floor));
            previous = Some(v);
        }
    }
    let mut s = table.markdown();
    let failed: Vec<&ReleaseResult> = results.iter().filter(|r| r.failure.is_some()).collect();
    if !failed.is_empty() {
        s += "\nFailed releases:\n\n";
        for r in failed {
            s += &format!("- {} {}: {}\n", r.library, r.release, r.failure.as_deref().unwrap_or(""));
        }
    }
    s
}

/// The keys of the crypto floors some benchmark of `results` names
/// ([`Bench::crypto_floor`]): shown beside their library, not as rows.
pub fn floor_keys(results: &[ReleaseResult]) -> BTreeSet<String> {
    results
        .iter()
        .flat_map(|r| r.benchmarks.iter().filter_map(|b| r.floor_of(b)))
        .map(|f| f.key.clone())
        .collect()
}

/// The crypto floor's two cells of `b`'s row in `r`: the floor's figure,
/// and for a time the protocol
/// cost (the library's median less the floor's, µs, and its share of the
/// library's), for throughput the fraction of the floor's MB/s the library
/// reaches; `-` where the release has no floor figure. The two medians come
/// from one Criterion run, measured one after the other (not interleaved
/// as `compare` does): a floor above its library says so rather than
/// showing a negative cost.
fn floor_cells(r: &ReleaseResult, b: &Bench) -> [String; 2] {
    let Some(f) = r.floor_of(b) else { return ["-".to_string(), "-".to_string()] };
    let (lib, floor) = (b.shown(), f.shown());
    let cost = match lib.unit {
        Unit::Micros if floor.value > lib.value => "floor above its library".to_string(),
        Unit::Micros => {
            let cost = lib.value - floor.value;
            format!("{cost:.1} µs ({:.0}%)", cost / lib.value * 100.0)
        }
        Unit::MegabytesPerSecond => format!("{:.2} of the floor", lib.value / floor.value),
        _ => "-".to_string(),
    };
    [f.cell(), cost]
}

/// A crate version's place in version order, as semver orders versions
/// (the `semver` crate): `major.minor.patch` as numbers, a pre-release
/// before its release and pre-releases by their dot-separated parts
/// (`-rc.2` before `-rc.10`), build metadata (`+3.0.8`, `openssl-src`'s
/// OpenSSL version) last, only to break ties. A version semver cannot
/// parse sorts before every one it can, by its text.
pub fn version_order(version: &str) -> (Option<semver::Version>, String) {
    (semver::Version::parse(version).ok(), version.to_string())
}

/// One row per release of `results` (in their order): release, crate
/// version, the crypto library linked, the run's date, rounds joined,
/// benchmarks measured, and the failure's reason or `-`.
pub fn releases_table(results: &[ReleaseResult]) -> String {
    let mut table =
        Table::new(&["release", "crate", "crypto linked", "run", "rounds", "benchmarks", "failure"])
            .align(4..6, Align::Right);
    for r in results {
        table.row([
            r.release.clone(),
            r.crate_version.clone(),
            r.libcrypto.clone(),
            format!("{}{}", r.date, if r.quick { ", --quick" } else { "" }),
            r.rounds.to_string(),
            r.benchmarks.len().to_string(),
            r.failure.as_deref().unwrap_or("-").to_string(),
        ]);
    }
    table.markdown()
}

/// The figure of the benchmark of `r` whose key starts with `prefix` (a
/// group and the first parameters, e.g. `send-loop-send/DTLSv1.2,`), if
/// exactly one has it.
pub fn figure(r: &ReleaseResult, prefix: &str) -> Option<Shown> {
    let mut found = r.benchmarks.iter().filter(|b| b.key.starts_with(prefix));
    match (found.next(), found.next()) {
        (Some(b), None) => Some(b.shown()),
        _ => None,
    }
}

/// The DTLS suite's results (`bench-past.sh openssl --dtls`) pivoted: a row
/// per release of `results` (in their order), with the DTLS 1.2 and TLS 1.2
/// send loops' writes per second (thousands, `k`), the sender's alone and
/// sender plus receiver, and each protocol's allocation calls per write
/// (sender / receiver); `-` where a release has no such figure.
pub fn dtls_releases_table(results: &[ReleaseResult]) -> String {
    let mut table = Table::new(&[
        "release",
        "DTLS 1.2: sender only",
        "DTLS 1.2: sender + receiver",
        "TLS 1.2: sender only",
        "TLS 1.2: sender + receiver",
        "DTLS 1.2 allocations per write (sender / receiver)",
        "TLS 1.2 allocations per write (sender / receiver)",
    ])
    .align(1.., Align::Right);
    for r in results {
        let rate = |prefix: &str| figure(r, prefix).map_or("-".to_string(), |f| kilo(f.value));
        let allocs = |protocol: &str| {
            let one = |side: &str| {
                figure(r, &format!("allocations-per-write-{side}/{protocol},"))
                    .map_or("-".to_string(), |f| count(f.value))
            };
            format!("{} / {}", one("send"), one("recv"))
        };
        table.row([
            r.release.clone(),
            rate("send-loop-send/DTLSv1.2,"),
            rate("send-loop/DTLSv1.2,"),
            rate("send-loop-send/TLSv1.2,"),
            rate("send-loop/TLSv1.2,"),
            allocs("DTLSv1.2"),
            allocs("TLSv1.2"),
        ]);
    }
    table.markdown()
}

/// A rate in thousands with commas, e.g. `2,164k` for 2,163,747 per second.
pub fn kilo(v: f64) -> String {
    super::thousands((v / 1e3).round() as u64) + "k"
}

/// A count that is usually whole (allocations per write): `2`, or `1.50`
/// when it is not.
pub fn count(v: f64) -> String {
    if (v - v.round()).abs() < 0.005 { format!("{v:.0}") } else { format!("{v:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(release: &str, crate_version: &str, benchmarks: Vec<Bench>) -> ReleaseResult {
        ReleaseResult {
            library: Library::Openssl,
            release: release.into(),
            crate_version: crate_version.into(),
            libcrypto: format!("OpenSSL {release}"),
            date: "2026-11-23".into(),
            cpu: "c".into(),
            quick: false,
            rounds: 3,
            benchmarks,
            failure: None,
        }
    }

    fn rate(key: &str, mean_ns: f64) -> Bench {
        Bench {
            key: key.into(),
            library_id: "openssl-x".into(),
            crypto_floor: None,
            figure: Figure::Rate {
                mean_ns,
                mean_lower_ns: mean_ns,
                mean_upper_ns: mean_ns,
                elements: 64,
                element_bytes: Some(1024),
            },
        }
    }

    fn allocs(key: &str, v: f64) -> Bench {
        Bench {
            key: key.into(),
            library_id: "openssl-x".into(),
            crypto_floor: None,
            figure: Figure::Allocations {
                allocs_per_write: v,
                allocs_stddev: 0.0,
                allocs_min: v,
                allocs_max: v,
                write_size: 1024,
                connections: 10,
            },
        }
    }

    #[test]
    fn versions_order_as_semver_does() {
        let mut v = [
            "300.2.3+3.2.1",
            "111.28.2+1.1.1w",
            "300.10.0+3.10.0",
            "0.3.10",
            "0.3.9",
            "1.0.0-rc.10",
            "1.0.0",
            "1.0.0-rc.2",
        ];
        v.sort_by_key(|s| version_order(s));
        assert_eq!(
            v,
            [
                "0.3.9",
                "0.3.10",
                "1.0.0-rc.2",
                "1.0.0-rc.10",
                "1.0.0",
                "111.28.2+1.1.1w",
                "300.2.3+3.2.1",
                "300.10.0+3.10.0"
            ]
        );
    }

    #[test]
    fn the_dtls_table_pivots_rates_and_allocations_by_release() {
        // 64 writes in 32 µs: 2,000k writes per second.
        let r = release(
            "3.2.1",
            "300.2.3+3.2.1",
            vec![
                rate(
                    "send-loop-send/DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B/openssl",
                    32_000.0,
                ),
                rate("send-loop/DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B/openssl", 128_000.0),
                allocs("allocations-per-write-send/DTLSv1.2,1024B/openssl", 2.0),
                allocs("allocations-per-write-recv/DTLSv1.2,1024B/openssl", 0.5),
            ],
        );
        let t = dtls_releases_table(&[r]);
        assert!(t.ends_with("| 3.2.1 | 2,000k | 500k | - | - | 2 / 0.50 | - / - |\n"), "{t}");
    }

    #[test]
    fn the_releases_table_names_failures() {
        let mut failed = release("3.1.4", "300.1.6+3.1.4", Vec::new());
        failed.failure = Some("build failed".into());
        let t = releases_table(&[failed]);
        assert!(
            t.contains("| 3.1.4 | 300.1.6+3.1.4 | OpenSSL 3.1.4 | 2026-11-23 | 3 | 0 | build failed |"),
            "{t}"
        );
    }
}

#[cfg(test)]
mod floor_tests {
    use super::*;

    fn time(key: &str, floor: Option<&str>, median_ns: f64, bytes: Option<u64>) -> Bench {
        Bench {
            key: key.into(),
            library_id: "openssl-x".into(),
            crypto_floor: floor.map(str::to_string),
            figure: Figure::Time { median_ns, lower_ns: median_ns, upper_ns: median_ns, bytes },
        }
    }

    fn release(release: &str, benchmarks: Vec<Bench>) -> ReleaseResult {
        ReleaseResult {
            library: Library::Openssl,
            release: release.into(),
            crate_version: format!("1.0.0+{release}"),
            libcrypto: format!("OpenSSL {release}"),
            date: "2026-11-26".into(),
            cpu: "c".into(),
            quick: false,
            rounds: 2,
            benchmarks,
            failure: None,
        }
    }

    const F: Option<&str> = Some("crypto-floor-openssl");

    #[test]
    fn floors_sit_beside_their_library_with_the_protocol_cost() {
        let results = [
            release(
                "3.0",
                vec![
                    time("handshake/p/openssl", F, 800_000.0, None),
                    time("handshake/p/crypto-floor-openssl", None, 200_000.0, None),
                    time("throughput/p,16384B/openssl", F, 65_536.0, Some(65_536)),
                    time("throughput/p,16384B/crypto-floor-openssl", None, 32_768.0, Some(65_536)),
                ],
            ),
            // A release whose run had no floor, and one whose floor came out
            // above its library.
            release("3.1", vec![time("handshake/p/openssl", None, 700_000.0, None)]),
            release(
                "3.2",
                vec![
                    time("handshake/p/openssl", F, 100_000.0, None),
                    time("handshake/p/crypto-floor-openssl", None, 120_000.0, None),
                ],
            ),
        ];
        assert_eq!(results[0].floor_of(&results[0].benchmarks[0]), Some(&results[0].benchmarks[1]));
        assert_eq!(results[0].floor_of(&results[0].benchmarks[1]), None, "a floor has no floor");
        let table = table_body(&results);
        assert!(table.starts_with(
            "| benchmark | release | median | change vs previous | crypto floor | protocol cost |\n"
        ));
        assert!(
            table.contains("| handshake/p/openssl | 3.0 | 800.0 µs | - | 200.0 µs | 600.0 µs (75%) |\n"),
            "{table}"
        );
        assert!(table.contains("| handshake/p/openssl | 3.1 | 700.0 µs | -12.5% | - | - |\n"), "{table}");
        assert!(
            table.contains("| 3.2 | 100.0 µs | -85.7% | 120.0 µs | floor above its library |\n"),
            "{table}"
        );
        assert!(
            table.contains(
                "| throughput/p,16384B/openssl | 3.0 | 1000.0 MB/s | - | 2000.0 MB/s | 0.50 of the floor |\n"
            ),
            "{table}"
        );
        assert!(!table.contains("/crypto-floor-openssl |"), "no row of the floor's own: {table}");
    }

    #[test]
    fn a_kept_bench_without_a_floor_reads_and_writes_as_before() {
        let json = r#"{"key":"handshake/p/openssl","library_id":"openssl-3.0.8","median_ns":1.0,"lower_ns":1.0,"upper_ns":1.0,"bytes":null}"#;
        let b: Bench = serde_json::from_str(json).unwrap();
        assert_eq!(b.crypto_floor, None);
        assert_eq!(serde_json::to_string(&b).unwrap(), json);
        let with = Bench { crypto_floor: F.map(str::to_string), ..b };
        let back: Bench = serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(back, with);
    }
}
