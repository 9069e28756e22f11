//! Reading Criterion's results from disk: for each benchmark, the
//! `new/benchmark.json` (its id, its throughput in bytes or elements) and
//! `new/estimates.json` (median and mean with confidence intervals, in ns
//! per iteration) that Criterion writes under its output directory
//! (`target/criterion`, or `$CRITERION_HOME`); and which crypto floor each
//! library's results go with, which the benchmarks record beside them
//! ([`record_crypto_floors`]) when they run the floors.

use std::{collections::BTreeMap, fs, path::Path, time::SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One benchmark's median and its confidence interval. Serialised by
/// `report --save`, so that a run's figures can be committed and tabled
/// again ([`crate::criterion`]).
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
    /// The library's crypto floor (a library name, `crypto-floor-...`),
    /// when a run with the floors recorded one for it
    /// ([`record_crypto_floors`]); `None` for a floor itself, for the
    /// plaintext floor, and for results saved before the floors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypto_floor: Option<String>,
}

/// The directory under Criterion's output directory where a run with the
/// crypto floors records each library's floor: one file per library, named
/// as the library, holding its floor's name.
pub const CRYPTO_FLOORS_DIR: &str = "tls-bench-crypto-floors";

/// Records, under `dir` (Criterion's output directory), that `library`'s
/// results go with the crypto floor `floor`, for each pair: `report` reads
/// them back into [`Measurement::crypto_floor`]. A pair recorded before is
/// replaced. Errors: a directory or file that cannot be written, a library
/// name that is not a plain file name (it has a `/`).
pub fn record_crypto_floors(dir: &Path, pairs: &[(String, String)]) -> Result<()> {
    let floors = dir.join(CRYPTO_FLOORS_DIR);
    fs::create_dir_all(&floors).with_context(|| format!("creating {}", floors.display()))?;
    for (library, floor) in pairs {
        anyhow::ensure!(
            !library.contains('/') && !library.starts_with('.'),
            "library name {library:?} is not a file name"
        );
        let file = floors.join(library);
        fs::write(&file, floor).with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(())
}

/// The floors [`record_crypto_floors`] recorded under `dir`: library ->
/// floor; empty when none was. Errors: an unreadable directory or file.
fn read_crypto_floors(dir: &Path) -> Result<BTreeMap<String, String>> {
    let floors = dir.join(CRYPTO_FLOORS_DIR);
    let mut out = BTreeMap::new();
    if !floors.is_dir() {
        return Ok(out);
    }
    for entry in fs::read_dir(&floors).with_context(|| format!("reading {}", floors.display()))? {
        let path = entry?.path();
        let floor = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        if let Some(library) = path.file_name().and_then(|n| n.to_str()) {
            out.insert(library.to_string(), floor.trim().to_string());
        }
    }
    Ok(out)
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
/// `group/params/library` shape, each with the crypto floor recorded for
/// its library. Errors: unreadable directories, files or JSON.
pub fn read_all(dir: &Path) -> Result<Vec<Measurement>> {
    let mut out = Vec::new();
    collect(dir, &mut out)?;
    let floors = read_crypto_floors(dir)?;
    for m in &mut out {
        m.crypto_floor = floors.get(&m.library).cloned();
    }
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
            crypto_floor: None,
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

    #[test]
    fn a_recorded_crypto_floor_goes_with_its_librarys_results_only() {
        let dir = std::env::temp_dir().join(format!("tls-bench-criterion-floors-{}", std::process::id()));
        write_bench(&dir, "a", "null");
        assert_eq!(read_all(&dir).unwrap()[0].crypto_floor, None, "nothing recorded yet");
        let pair = |l: &str, f: &str| (l.to_string(), f.to_string());
        record_crypto_floors(&dir, &[pair("lib-1", "crypto-floor-x-1"), pair("lib-2", "crypto-floor-y-2")])
            .unwrap();
        // A later run's record replaces the earlier one.
        record_crypto_floors(&dir, &[pair("lib-1", "crypto-floor-x-2")]).unwrap();
        let all = read_all(&dir).unwrap();
        assert_eq!(all.len(), 1, "the record is no benchmark");
        assert_eq!(all[0].crypto_floor.as_deref(), Some("crypto-floor-x-2"));
        let err = record_crypto_floors(&dir, &[pair("a/b", "f")]).unwrap_err();
        assert!(err.to_string().contains("\"a/b\" is not a file name"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
