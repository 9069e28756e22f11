//! Reading Criterion's results from disk: for each benchmark, the
//! `new/benchmark.json` (its id, throughput) and `new/estimates.json` (median
//! and mean with confidence intervals, in ns per iteration) that Criterion
//! writes under its output directory (`target/criterion`, or
//! `$CRITERION_HOME`).

use std::{fs, path::Path, time::SystemTime};

use anyhow::{Context, Result};
use serde::Deserialize;

/// One benchmark's median and its confidence interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Benchmark group, e.g. `handshake`.
    pub group: String,
    /// The parameters component of the id.
    pub params: String,
    /// The library component of the id, e.g. `openssl-3.6.3`.
    pub library: String,
    /// Median time per iteration, in ns.
    pub median_ns: f64,
    /// Lower bound of the median's confidence interval (Criterion's
    /// default level, 95%), in ns.
    pub lower_ns: f64,
    /// Upper bound of that interval, in ns.
    pub upper_ns: f64,
    /// Mean time per iteration and its confidence interval (95%), in ns:
    /// `[lower, mean, upper]`; `None` when the file has no mean.
    pub mean_ns: Option<[f64; 3]>,
    /// Bytes per iteration when the benchmark declared a byte throughput.
    pub bytes: Option<u64>,
    /// When Criterion wrote the result (`new/estimates.json`'s modification
    /// time).
    pub written: SystemTime,
}

#[derive(Deserialize)]
struct BenchmarkJson {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    throughput: Option<ThroughputJson>,
}

#[derive(Deserialize)]
enum ThroughputJson {
    Bytes(u64),
    BytesDecimal(u64),
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Estimates {
    median: Estimate,
    mean: Option<Estimate>,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
    confidence_interval: Interval,
}

#[derive(Deserialize)]
struct Interval {
    lower_bound: f64,
    upper_bound: f64,
}

/// Every benchmark result under `dir` whose id has the
/// `group/params/library` shape. Errors: unreadable directories or JSON.
pub fn read_all(dir: &Path) -> Result<Vec<Measurement>> {
    let mut out = Vec::new();
    collect(dir, &mut out)?;
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<Measurement>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        let bench = path.join("new/benchmark.json");
        if !bench.is_file() {
            collect(&path, out)?;
            continue;
        }
        let parse = |file: &Path| -> Result<Vec<u8>> {
            fs::read(file).with_context(|| format!("reading {}", file.display()))
        };
        let b: BenchmarkJson = serde_json::from_slice(&parse(&bench)?)
            .with_context(|| format!("parsing {}", bench.display()))?;
        let estimates = path.join("new/estimates.json");
        let e: Estimates = serde_json::from_slice(&parse(&estimates)?)
            .with_context(|| format!("parsing {}", estimates.display()))?;
        let written = fs::metadata(&estimates)
            .and_then(|m| m.modified())
            .with_context(|| format!("reading the modification time of {}", estimates.display()))?;
        let (Some(params), Some(library)) = (b.function_id, b.value_str) else { continue };
        let bytes = match b.throughput {
            Some(ThroughputJson::Bytes(n) | ThroughputJson::BytesDecimal(n)) => Some(n),
            _ => None,
        };
        out.push(Measurement {
            group: b.group_id,
            params,
            library,
            median_ns: e.median.point_estimate,
            lower_ns: e.median.confidence_interval.lower_bound,
            upper_ns: e.median.confidence_interval.upper_bound,
            mean_ns: e.mean.map(|m| {
                [m.confidence_interval.lower_bound, m.point_estimate, m.confidence_interval.upper_bound]
            }),
            bytes,
            written,
        });
    }
    Ok(())
}
