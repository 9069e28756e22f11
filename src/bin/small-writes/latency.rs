//! Per-iteration latency percentiles: each iteration's time recorded into
//! an HdrHistogram (the `hdrhistogram` crate), summarised as the
//! percentiles wrk and ssl-writev-benchmark report.

use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

/// Largest time recorded, in ns: 60 s.
pub const MAX_NS: u64 = 60_000_000_000;

/// Significant decimal digits the histogram keeps: values are exact to
/// 0.1% (HdrHistogram's precision setting).
pub const PRECISION_DIGITS: u8 = 3;

/// Iteration times, 1 ns to [`MAX_NS`], at [`PRECISION_DIGITS`].
pub struct Latencies {
    hist: Histogram<u64>,
}

impl Latencies {
    /// An empty histogram. Errors: never for these fixed bounds
    /// (hdrhistogram's constructor checks them).
    pub fn new() -> Result<Latencies> {
        let hist = Histogram::new_with_bounds(1, MAX_NS, PRECISION_DIGITS).context("histogram bounds")?;
        Ok(Latencies { hist })
    }

    /// Records one iteration's time. Errors: longer than [`MAX_NS`].
    pub fn record(&mut self, d: Duration) -> Result<()> {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        anyhow::ensure!(ns <= MAX_NS, "an iteration of {ns} ns is longer than {MAX_NS} ns");
        self.hist
            .record(ns)
            .with_context(|| format!("an iteration of {ns} ns is out of the histogram's range"))
    }

    /// The percentiles of what was recorded (all zero when nothing was).
    pub fn percentiles(&self) -> Percentiles {
        let q = |q: f64| self.hist.value_at_quantile(q);
        Percentiles {
            count: self.hist.len(),
            min: self.hist.min(),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: self.hist.max(),
            mean: self.hist.mean(),
        }
    }
}

/// Percentiles of iteration times, in ns (defined with the results they
/// are saved in).
pub use tls_bench_results::small_writes::Percentiles;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_spread() {
        let mut l = Latencies::new().unwrap();
        assert_eq!(l.percentiles().count, 0);
        for ns in 1..=1000 {
            l.record(Duration::from_nanos(ns)).unwrap();
        }
        let p = l.percentiles();
        assert_eq!((p.count, p.min, p.max), (1000, 1, 1000));
        assert_eq!((p.p50, p.p90, p.p99, p.p999), (500, 900, 990, 999));
        assert!((p.mean - 500.5).abs() < 1.0, "{}", p.mean);
        assert!(l.record(Duration::from_secs(61)).is_err());
    }
}
