//! The memory report's CSV. The report's model, reading and Markdown are
//! [`tls_bench_results::memory`].

use std::path::Path;

use anyhow::{Context, Result};
pub use tls_bench_results::memory::{
    CrossCheck, Report, Row, Sides, Skip, Stats, WriteCost, markdown, merged_rows, read_reports,
};

/// Writes one CSV line per row and figure of `report` to `path`:
/// `library,params,figure,unit,mean,stddev,min,max,connections`. Errors:
/// the file cannot be written.
pub fn write_csv(report: &Report, path: &Path) -> Result<()> {
    write_csv_to(report, path).with_context(|| format!("writing {}", path.display()))
}

fn write_csv_to(report: &Report, path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(["library", "params", "figure", "unit", "mean", "stddev", "min", "max", "connections"])?;
    for row in &report.rows {
        for (figure, unit, s) in row.figures() {
            let nums = [s.mean, s.stddev, s.min, s.max].map(|v| format!("{v:.2}"));
            w.write_record([
                row.library.as_str(),
                &row.params,
                &figure,
                unit,
                &nums[0],
                &nums[1],
                &nums[2],
                &nums[3],
                &row.connections.to_string(),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}
