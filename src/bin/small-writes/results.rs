//! A small-writes run's CSV. The report's model and its Markdown are
//! [`tls_bench_results::small_writes`].

use std::path::Path;

use anyhow::{Context, Result};
use tls_bench_harness::writes::Wire;
pub use tls_bench_results::small_writes::{Report, Row, distinct};

/// Writes one CSV line per row of `report` to `path` (skipped rows with
/// empty figures and their reason). Errors: the file cannot be written.
pub fn save_csv(report: &Report, path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("writing {}", path.display()))?;
    w.write_record([
        "id",
        "library",
        "protocol",
        "suite",
        "strategy",
        "message",
        "payload_bytes",
        "count",
        "min_ns",
        "p50_ns",
        "p90_ns",
        "p99_ns",
        "p99_9_ns",
        "max_ns",
        "mean_ns",
        "records",
        "wire_bytes",
        "overhead_bytes",
        "skipped",
    ])?;
    for r in &report.rows {
        let l = r.latency.unwrap_or_default();
        let measured = r.latency.is_some();
        let n = |v: u64| if measured { v.to_string() } else { String::new() };
        let wire = |f: fn(&Wire) -> u64| r.wire.as_ref().map_or(String::new(), |w| f(w).to_string());
        w.write_record([
            r.id.clone(),
            r.library.clone(),
            r.protocol.clone(),
            r.suite.clone(),
            r.strategy.clone(),
            r.message.clone(),
            r.payload_bytes.to_string(),
            n(l.count),
            n(l.min),
            n(l.p50),
            n(l.p90),
            n(l.p99),
            n(l.p999),
            n(l.max),
            if measured { format!("{:.1}", l.mean) } else { String::new() },
            wire(|w| w.records),
            wire(|w| w.bytes),
            r.overhead().map_or(String::new(), |o| o.to_string()),
            r.skipped.clone().unwrap_or_default(),
        ])?;
    }
    w.flush().with_context(|| format!("writing {}", path.display()))
}
