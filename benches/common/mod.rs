//! What the Criterion benches share: their settings, and one loop over the
//! cases of a workload kind ([`tls_bench::bench::Case`]), each timed by the
//! project's [`Runner`].

use std::{env, time::Duration};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use tls_bench::{
    bench::{Case, Figure, Matrix, Workload, sides_from_env},
    runner::{Prepared, prepare},
    stacks,
};

/// Environment variable that turns Criterion's plots back on (`1`): they
/// cost about 2 s per benchmark, so they are off by default.
pub const PLOTS_ENV: &str = "TLS_BENCH_PLOTS";

/// 0.5 s warm-up, 2 s measurement per benchmark, no plots unless
/// [`PLOTS_ENV`] is `1` (command-line options such as
/// `--measurement-time` override the times).
pub fn config() -> Criterion {
    let c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    match env::var(PLOTS_ENV).as_deref() {
        Ok("1") => c,
        Ok("0") | Err(_) => c.without_plots(),
        Ok(other) => panic!("{PLOTS_ENV}={other:?}: valid values are 1 and 0"),
    }
}

/// Benchmarks every case of the matrix ([`Matrix::from_env`]) whose
/// workload `wanted` accepts, for every built library: the `Both` figure,
/// and with `TLS_BENCH_SIDES=1` the per-side figures too (measured in
/// groups of their own). Unsupported cases are skipped with their reason
/// printed; library settings not in the id (s2n-tls's security policy) are
/// printed as `note` lines.
///
/// Panics on a bad environment value, a configuration failure or any error
/// in an iteration: a benchmark must not go on with a broken library.
pub fn bench(c: &mut Criterion, wanted: fn(Workload) -> bool) {
    let matrix = Matrix::from_env().unwrap_or_else(|e| panic!("{e}"));
    let figures: &[Figure] = if sides_from_env().unwrap_or_else(|e| panic!("{e}")) {
        &[Figure::Both, Figure::First, Figure::Second]
    } else {
        &[Figure::Both]
    };
    let libs = stacks::all();
    let cases: Vec<Case> = matrix.cases(&libs).into_iter().filter(|c| wanted(c.workload)).collect();
    let mut runners = Vec::new();
    for case in cases {
        match prepare(&case, &libs).unwrap_or_else(|e| panic!("{e:#}")) {
            Prepared::Ready { runner, settings } => {
                if let Some(s) = settings {
                    eprintln!("note {case}: {s}");
                }
                runners.push((case, runner));
            }
            Prepared::Skipped(why) => eprintln!("skip {case}: {why}"),
        }
    }
    for &figure in figures {
        let mut names: Vec<&'static str> = runners.iter().map(|(c, _)| c.workload.group(figure)).collect();
        names.dedup();
        for name in names {
            let mut group = c.benchmark_group(name);
            // Flat sampling (the same iteration count in every sample): a
            // handshake of several ms would stretch linear sampling's
            // 5050-iteration minimum far past the measurement time.
            group.sampling_mode(SamplingMode::Flat);
            for (case, runner) in runners.iter_mut().filter(|(c, _)| c.workload.group(figure) == name) {
                if let Some(bytes) = case.workload.bytes_per_iteration() {
                    group.throughput(Throughput::Bytes(bytes));
                }
                let workload = case.workload;
                group.bench_function(BenchmarkId::new(case.parameters(), &case.library), |b| {
                    b.iter_custom(|iters| {
                        let m = runner.run(iters).unwrap_or_else(|e| panic!("{}: {e:#}", case.id(figure)));
                        m.of(workload, figure)
                    })
                });
            }
            group.finish();
        }
    }
}
