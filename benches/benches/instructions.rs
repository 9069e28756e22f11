//! Instruction counts under Callgrind, through gungraun: every count of
//! [`tls_bench_harness::instructions::suite`] is one run of the `run-case` binary
//! under Callgrind, counting only the figure's region (README,
//! "Instruction counts").
//!
//! Not part of a plain `cargo bench` (it needs valgrind and gungraun-runner):
//! `cargo bench --bench instructions`. Ids are gungraun's
//! `instructions::GROUP::FIGURE_GROUP::PARAMETERS_LIBRARY` (each character
//! other than a letter or digit `_`); `-- '*openssl*'` filters by them.
//! The bench reads that filter itself ([`instructions::gungraun_filter`]):
//! one that selects nothing, or only skipped cases, is an error before any
//! count, and only the cases it selects are configured (skip lines for
//! those only).

use std::{env, path::Path, process, sync::OnceLock};

use gungraun::{
    Bench, BinaryBenchmark, BinaryBenchmarkConfig, BinaryBenchmarkGroup, Callgrind, Command,
    binary_benchmark_group, main,
};
use tls_bench_harness::{
    callgrind::GLIBC_TUNABLES,
    certs,
    instructions::{self, Counted, Mode},
    libs,
    runner::{Prepared, prepare},
};

/// The `run-case` binary Callgrind runs: this package's. historical-perf's
/// builds of past releases name theirs `past-run-case`
/// (`src/bin/historical-perf/build.rs`, `past_bin`): they share the
/// repository's target directory, where both would be `target/release/run-case`.
const RUN_CASE: &str =
    match (option_env!("CARGO_BIN_EXE_run-case"), option_env!("CARGO_BIN_EXE_past-run-case")) {
        (Some(path), _) | (None, Some(path)) => path,
        (None, None) => panic!("the package has no run-case binary"),
    };

/// The gungraun-runner version this bench is built with: the `gungraun`
/// crate's in Cargo.lock (exported by build.rs), which the runner must
/// match exactly.
const RUNNER_VERSION: &str = env!("TLS_BENCH_GUNGRAUN_VERSION");

/// gungraun's setting for `--save-summary`: `report --instructions` reads
/// the `summary.json` files, so the bench asks for them unless told
/// otherwise.
const SAVE_SUMMARY_ENV: &str = "GUNGRAUN_SAVE_SUMMARY";

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    process::exit(1)
}

/// Exits with how to install what is missing: valgrind, or a gungraun-runner
/// on PATH (or at `GUNGRAUN_RUNNER`).
fn require_tools() {
    if process::Command::new("valgrind").arg("--version").output().is_err() {
        fail(
            "valgrind is not installed: `apt-get install valgrind` (Debian, Ubuntu) or `dnf install valgrind`",
        );
    }
    let on_path = |name: &str| {
        env::split_paths(&env::var_os("PATH").unwrap_or_default()).any(|d| d.join(name).is_file())
    };
    // gungraun reads GUNGRAUN_RUNNER when the bench is compiled, PATH when it runs.
    let found = match option_env!("GUNGRAUN_RUNNER") {
        Some(path) => Path::new(path).is_file(),
        None => on_path("gungraun-runner"),
    };
    if !found {
        fail(&format!(
            "gungraun-runner is not installed: `cargo install gungraun-runner --version {RUNNER_VERSION} --locked`"
        ));
    }
}

/// Every count of the suite, with `None` when the command line's filter
/// ([`instructions::gungraun_filter`], with gungraun's own
/// `GUNGRAUN_FILTER`) leaves it out, else whether its library can do it; a
/// `skip` line printed for each selected case it cannot. Worked out once,
/// before gungraun runs anything.
///
/// Exits with an error on a bad [`Mode`] or certificate directory, when the
/// filter selects no count (naming it and how to list the ids), or when
/// every count it selects is skipped: nothing would be counted.
fn selection() -> &'static [(Counted, Option<bool>)] {
    static SELECTION: OnceLock<Vec<(Counted, Option<bool>)>> = OnceLock::new();
    SELECTION.get_or_init(|| {
        // Cargo runs a bench in its package's folder (benches/); a
        // relative `TLS_BENCH_CERTS_DIR` is read from the repository's root,
        // here and in the run-case processes gungraun's runner starts.
        env::set_current_dir(tls_bench::variants::repo()).unwrap_or_else(|e| fail(&format!("{e}")));
        let mode = Mode::from_env().unwrap_or_else(|e| fail(&format!("{e:#}")));
        certs::check_root().unwrap_or_else(|e| fail(&format!("{e:#}")));
        let libs = libs::all();
        let suite = instructions::suite(&libs, mode);
        instructions::check_unique(&suite).unwrap_or_else(|e| fail(&format!("{e:#}")));
        let filter = instructions::gungraun_filter(
            env::args().skip(1),
            env::var(instructions::GUNGRAUN_FILTER_ENV).ok(),
        );
        let example = suite.first().map(Counted::gungraun_path).unwrap_or_default();
        let selected = |c: &Counted| {
            filter.as_deref().is_none_or(|f| instructions::wildcard_matches(f, &c.gungraun_path()))
        };
        if let (Some(f), false) = (&filter, suite.iter().any(selected)) {
            fail(&format!(
                "no instruction count matches the filter {f:?} (a wildcard pattern on \
                 instructions::GROUP::FIGURE::ID, e.g. '*openssl*' or {example}); list the ids with \
                 `cargo bench --bench instructions -- --list`"
            ));
        }
        let mut checked: Vec<(String, bool)> = Vec::new();
        let selection: Vec<(Counted, Option<bool>)> = suite
            .into_iter()
            .map(|counted| {
                if !selected(&counted) {
                    return (counted, None);
                }
                let case_id = counted.case.to_string();
                let supported = match checked.iter().find(|(id, _)| *id == case_id) {
                    Some(&(_, ok)) => ok,
                    None => {
                        let ok = match prepare(&counted.case, &libs) {
                            Ok(Prepared::Ready { .. }) => true,
                            Ok(Prepared::Skipped(why)) => {
                                tls_bench_harness::skip::report(&case_id, &why)
                                    .unwrap_or_else(|e| fail(&format!("{e:#}")));
                                false
                            }
                            Err(e) => fail(&format!("{e:#}")),
                        };
                        checked.push((case_id, ok));
                        ok
                    }
                };
                (counted, Some(supported))
            })
            .collect();
        if let (Some(f), false) = (&filter, selection.iter().any(|(_, ok)| *ok == Some(true))) {
            fail(&format!("every instruction count the filter {f:?} selects is skipped (reasons above): nothing to count"));
        }
        selection
    })
}

/// Adds the counts of [`selection`] in the bench group `bench_group` to
/// `group`, one `BinaryBenchmark` per figure group: the selected ones their
/// library can do, and those the filter leaves out (gungraun filters them
/// again and runs none of them, but wants no group empty).
fn add(group: &mut BinaryBenchmarkGroup, bench_group: &str) {
    let selection = selection();
    require_tools();
    if env::var_os(SAVE_SUMMARY_ENV).is_none() {
        // SAFETY: the groups are built on the main thread before gungraun
        // starts its runner (which inherits the variable); no other thread
        // reads the environment.
        unsafe { env::set_var(SAVE_SUMMARY_ENV, "json") };
    }
    let mut by_group: Vec<(String, BinaryBenchmark)> = Vec::new();
    for (counted, _) in
        selection.iter().filter(|(c, ok)| *ok != Some(false) && c.gungraun_bench_group() == bench_group)
    {
        let name = counted.gungraun_group();
        let index = match by_group.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                by_group.push((name.clone(), BinaryBenchmark::new(name.as_str())));
                by_group.len() - 1
            }
        };
        let config = BinaryBenchmarkConfig::default()
            .tool(Callgrind::with_args(counted.callgrind_args()))
            .env("GLIBC_TUNABLES", GLIBC_TUNABLES)
            .pass_through_env("TLS_BENCH_CERTS_DIR")
            .clone();
        by_group[index].1.bench(
            Bench::new(counted.gungraun_id().as_str())
                .config(config)
                .command(Command::new(RUN_CASE).args(counted.run_case_args()).build())
                .clone(),
        );
    }
    for (_, bench) in by_group {
        group.binary_benchmark(bench);
    }
}

binary_benchmark_group!(
    name = handshake;
    benchmarks = |group: &mut BinaryBenchmarkGroup| add(group, "handshake")
);

binary_benchmark_group!(
    name = throughput;
    benchmarks = |group: &mut BinaryBenchmarkGroup| add(group, "throughput")
);

main!(binary_benchmark_groups = handshake, throughput);
