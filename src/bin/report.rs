//! Prints Markdown tables of Criterion results (medians) from
//! `target/criterion`, one per benchmark group: a row per parameter set, a
//! column per library, each TLS figure with its ratio to the row's fastest
//! TLS library, and the plaintext floor beside them.
//!
//! Handshake groups are reported in µs per handshake (and handshakes/s);
//! throughput groups in MB/s (10^6 bytes per second of application data).
//!
//! Usage: `cargo run --release --bin report [-- --criterion-dir DIR]`.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde::Deserialize;

#[derive(Parser)]
#[command(about = "Markdown tables of tls-bench Criterion medians")]
struct Args {
    /// Criterion's output directory.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/target/criterion"))]
    criterion_dir: PathBuf,
}

/// `new/benchmark.json`, as Criterion writes it.
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

/// `new/estimates.json`: point estimates in ns.
#[derive(Deserialize)]
struct Estimates {
    median: Estimate,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

struct Result1 {
    median_ns: f64,
    bytes: Option<u64>,
}

fn collect(dir: &Path, out: &mut Vec<(BenchmarkJson, Result1)>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        let bench = path.join("new/benchmark.json");
        if bench.is_file() {
            let b: BenchmarkJson = serde_json::from_slice(&fs::read(&bench)?)?;
            let e: Estimates = serde_json::from_slice(&fs::read(path.join("new/estimates.json"))?)?;
            let bytes = match &b.throughput {
                Some(ThroughputJson::Bytes(n) | ThroughputJson::BytesDecimal(n)) => Some(*n),
                _ => None,
            };
            out.push((b, Result1 { median_ns: e.median.point_estimate, bytes }));
        } else {
            collect(&path, out)?;
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let mut results = Vec::new();
    collect(&args.criterion_dir, &mut results)?;
    if results.is_empty() {
        bail!("no Criterion results under {}: run `cargo bench` first", args.criterion_dir.display());
    }
    // group -> params -> library -> result
    let mut groups: BTreeMap<String, BTreeMap<String, BTreeMap<String, Result1>>> = BTreeMap::new();
    for (b, r) in results {
        let (Some(params), Some(lib)) = (b.function_id, b.value_str) else { continue };
        groups.entry(b.group_id).or_default().entry(params).or_default().insert(lib, r);
    }
    for (group, rows) in &groups {
        let libs: BTreeSet<&String> =
            rows.values().flat_map(|r| r.keys()).filter(|l| *l != "plaintext").collect();
        let throughput = rows.values().flat_map(|r| r.values()).any(|r| r.bytes.is_some());
        let unit = if throughput { "MB/s" } else { "µs" };
        println!("\n### {group} (median, {unit}; ratio to the row's best TLS library)\n");
        let header: Vec<String> = libs.iter().map(|l| l.to_string()).collect();
        println!("| parameters | {} | plaintext floor |", header.join(" | "));
        println!("|---|{}---|", "---|".repeat(libs.len()));
        for (params, cells) in rows {
            // Higher is better for MB/s, lower for µs.
            let value = |r: &Result1| match r.bytes {
                Some(b) => b as f64 / r.median_ns * 1e3, // bytes/ns * 1e3 = MB/s
                None => r.median_ns / 1e3,
            };
            let tls: Vec<f64> = libs.iter().filter_map(|l| cells.get(*l)).map(value).collect();
            let best = if throughput {
                tls.iter().cloned().fold(f64::MIN, f64::max)
            } else {
                tls.iter().cloned().fold(f64::MAX, f64::min)
            };
            let row: Vec<String> = libs
                .iter()
                .map(|l| match cells.get(*l) {
                    Some(r) => {
                        let v = value(r);
                        let ratio = if throughput { best / v } else { v / best };
                        format!("{v:.1} ({ratio:.2}x)")
                    }
                    None => "skipped".to_string(),
                })
                .collect();
            let floor = match cells.get("plaintext") {
                Some(r) => {
                    let v = value(r);
                    if throughput {
                        format!("{v:.0} ({:.1}x the best TLS)", v / best)
                    } else {
                        format!("{v:.2} ({:.2}% of the best TLS)", v / best * 100.0)
                    }
                }
                None => "-".to_string(),
            };
            println!("| {params} | {} | {floor} |", row.join(" | "));
        }
    }
    Ok(())
}
