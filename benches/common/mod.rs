//! Criterion settings shared by the benchmarks.

use std::time::Duration;

use criterion::Criterion;

/// 1 s warm-up, 3 s measurement per benchmark (command-line options such as
/// `--measurement-time` override these).
pub fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3))
}
