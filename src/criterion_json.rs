//! Reading Criterion's results from disk: for each benchmark, the
//! `new/benchmark.json` (its id, its throughput in bytes or elements) and
//! `new/estimates.json` (median and mean with confidence intervals, in ns
//! per iteration) that Criterion writes under its output directory
//! (`target/criterion`, or `$CRITERION_HOME`).

use std::{fs, path::Path, time::SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One benchmark's median and its confidence interval. Serialised by
/// `report --save`, so that a run's figures can be committed and tabled
/// again ([`crate::results::criterion`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Bytes per iteration when the benchmark declared a byte throughput
    /// (`Bytes`, `BytesDecimal`, or `ElementsAndBytes`).
    pub bytes: Option<u64>,
    /// Elements per iteration when the benchmark declared an element
    /// throughput (`Elements` or `ElementsAndBytes`): for the send loop,
    /// writes (DTLS: datagrams) per iteration.
    pub elements: Option<u64>,
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
    /// Bits per iteration: neither bytes nor elements. Named, since
    /// `#[serde(other)]` takes only variants without content.
    Bits(#[expect(dead_code, reason = "read to parse, not used")] u64),
    Bytes(u64),
    BytesDecimal(u64),
    Elements(u64),
    ElementsAndBytes {
        elements: u64,
        bytes: u64,
    },
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
        let (bytes, elements) = match b.throughput {
            Some(ThroughputJson::Bytes(n) | ThroughputJson::BytesDecimal(n)) => (Some(n), None),
            Some(ThroughputJson::Elements(n)) => (None, Some(n)),
            Some(ThroughputJson::ElementsAndBytes { elements, bytes }) => (Some(bytes), Some(elements)),
            Some(ThroughputJson::Bits(_) | ThroughputJson::Other) | None => (None, None),
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
            elements,
            written,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes one benchmark's `new/benchmark.json` (with `throughput` as
    /// Criterion serialises it) and `new/estimates.json` under `dir/name`.
    fn write_bench(dir: &Path, name: &str, throughput: &str) {
        let new = dir.join(name).join("new");
        fs::create_dir_all(&new).unwrap();
        fs::write(
            new.join("benchmark.json"),
            format!(
                r#"{{"group_id":"g","function_id":"{name}","value_str":"lib-1","throughput":{throughput},"full_id":"x","directory_name":"x","title":"x"}}"#
            ),
        )
        .unwrap();
        let estimate = |v: f64| {
            format!(
                r#"{{"confidence_interval":{{"confidence_level":0.95,"lower_bound":{},"upper_bound":{}}},"point_estimate":{v},"standard_error":1.0}}"#,
                v - 10.0,
                v + 10.0
            )
        };
        fs::write(
            new.join("estimates.json"),
            format!(r#"{{"median":{},"mean":{}}}"#, estimate(1000.0), estimate(1100.0)),
        )
        .unwrap();
    }

    #[test]
    fn throughput_in_bytes_and_in_elements_is_read() {
        let dir = std::env::temp_dir().join(format!("tls-bench-criterion-json-{}", std::process::id()));
        write_bench(&dir, "bytes", r#"{"Bytes":65536}"#);
        write_bench(&dir, "decimal", r#"{"BytesDecimal":1024}"#);
        write_bench(&dir, "elements", r#"{"Elements":64}"#);
        write_bench(&dir, "both", r#"{"ElementsAndBytes":{"elements":64,"bytes":65536}}"#);
        write_bench(&dir, "bits", r#"{"Bits":8}"#);
        write_bench(&dir, "none", "null");
        let mut all = read_all(&dir).unwrap();
        all.sort_by(|a, b| a.params.cmp(&b.params));
        let got: Vec<(&str, Option<u64>, Option<u64>)> =
            all.iter().map(|m| (m.params.as_str(), m.bytes, m.elements)).collect();
        assert_eq!(
            got,
            [
                ("bits", None, None),
                ("both", Some(65536), Some(64)),
                ("bytes", Some(65536), None),
                ("decimal", Some(1024), None),
                ("elements", None, Some(64)),
                ("none", None, None),
            ]
        );
        assert_eq!((all[0].median_ns, all[0].mean_ns), (1000.0, Some([1090.0, 1100.0, 1110.0])));
        fs::remove_dir_all(&dir).unwrap();
    }
}
