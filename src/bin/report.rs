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
    path::PathBuf,
};

use anyhow::{Result, bail};
use clap::Parser;
use tls_bench::criterion_json::{self, Measurement};

#[derive(Parser)]
#[command(about = "Markdown tables of tls-bench Criterion medians")]
struct Args {
    /// Criterion's output directory.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/target/criterion"))]
    criterion_dir: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let results = criterion_json::read_all(&args.criterion_dir)?;
    if results.is_empty() {
        bail!("no Criterion results under {}: run `cargo bench` first", args.criterion_dir.display());
    }
    // group -> params -> library -> result
    let mut groups: BTreeMap<String, BTreeMap<String, BTreeMap<String, Measurement>>> = BTreeMap::new();
    for m in results {
        groups
            .entry(m.group.clone())
            .or_default()
            .entry(m.params.clone())
            .or_default()
            .insert(m.library.clone(), m);
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
            let value = |r: &Measurement| match r.bytes {
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
