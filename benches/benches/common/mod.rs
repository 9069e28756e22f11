//! What the Criterion benches share: their settings, and one loop over the
//! cases of a workload kind ([`tls_bench_harness::bench::Case`]), each timed by the
//! project's [`Runner`].

#[cfg(target_os = "linux")]
pub mod flamegraph;

use std::{env, time::Duration};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use tls_bench_harness::{
    bench::{Case, FLOORS_ENV, Figure, Matrix, SIDES_ENV, floors_from_env, mtu_from_env, sides_from_env},
    certs,
    filter::{self, CRITERION_TITLE_MAX, IdFilter},
    harness::TlsLibrary,
    libs,
    runner::{Prepared, Runner, prepare},
};
use tls_bench_results::criterion_json;

/// Environment variable that turns Criterion's plots back on (`1`): they
/// cost about 2 s per benchmark, so they are off by default.
pub const PLOTS_ENV: &str = "TLS_BENCH_PLOTS";

/// Moves to the repository's root, checks the command line and the
/// settings, then: with `--list`, prints
/// the ids of the bench named `bench` that the filter selects, each whole,
/// as Criterion's `--list` does (`ID: benchmark`; Criterion would cut ids
/// over [`CRITERION_TITLE_MAX`] characters), and exits; otherwise returns
/// the Criterion configuration: 0.5 s warm-up, 2 s measurement per
/// benchmark, no plots unless [`PLOTS_ENV`] is `1` (command-line options
/// such as `--measurement-time` override the times). On Linux,
/// `--profile-time <seconds>` writes a flamegraph of each selected
/// benchmark ([`flamegraph::Flamegraph`]) instead of measuring it.
///
/// Exits with `error: ...` and status 1, before Criterion reads the
/// command line (it would panic on some of these): on a bad [`PLOTS_ENV`],
/// matrix, sides or MTU value, a certificate directory that does not
/// exist, a filter that is not a regular expression, or an option value
/// Criterion asserts ([`filter::check_options`]).
pub fn config(bench: &str) -> Criterion {
    // Cargo runs a bench in its package's folder (benches/); the
    // repository's root is where relative paths in the settings
    // (`CRITERION_HOME`, `CARGO_TARGET_DIR`, `TLS_BENCH_CERTS_DIR`) and
    // Criterion's `target/criterion` have always been read from.
    env::set_current_dir(tls_bench::variants::repo()).unwrap_or_else(fail_on);
    let args = || env::args().skip(1);
    filter::check_options(args()).unwrap_or_else(fail_on);
    IdFilter::from_args(args()).unwrap_or_else(fail_on);
    Matrix::from_env().unwrap_or_else(fail_on);
    sides_from_env().unwrap_or_else(fail_on);
    if floors_from_env().unwrap_or_else(fail_on) && libs::crypto_floors().is_empty() {
        fail(&format!(
            "{FLOORS_ENV}=1: this build has no crypto floor (the `crypto-floor` feature, part of `tools`, \
             with rustls, openssl or boring)"
        ));
    }
    mtu_from_env().unwrap_or_else(fail_on);
    certs::check_root().unwrap_or_else(fail_on);
    let plots = match env::var(PLOTS_ENV).as_deref() {
        Ok("1") => true,
        Ok("0") | Err(_) => false,
        Ok(other) => fail(&format!("{PLOTS_ENV}={other:?}: valid values are 1 and 0")),
    };
    if filter::wants_list(args()) {
        list(bench);
    }
    let c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    #[cfg(target_os = "linux")]
    let c = c.with_profiler(flamegraph::Flamegraph::default());
    if plots { c } else { c.without_plots() }
}

/// [`fail`] with an error's message (its cause chain).
fn fail_on<T, E: std::fmt::Display>(e: E) -> T {
    fail(&format!("{e:#}"))
}

/// Prints `error: <msg>` and exits with status 1: a bad setting or a filter
/// that leaves nothing to measure ends the run before any work.
fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// The cases of one bench a run measures, configured, in the order of its
/// benchmarks.
struct Selection {
    filter: IdFilter,
    sides: bool,
    runners: Vec<(Case, Box<Runner>)>,
    /// (library, its crypto floor) for each library measured beside its
    /// floor ([`tls_bench_harness::bench::FLOORS_ENV`]).
    crypto_floors: Vec<(String, String)>,
}

impl Selection {
    /// The benchmarks in the order Criterion runs them: per figure, per
    /// group, the cases (indices into `runners`) measured in it.
    fn order(&self) -> Vec<(Figure, &'static str, Vec<usize>)> {
        let mut out = Vec::new();
        for figure in [Figure::Both, Figure::First, Figure::Second] {
            let measured = |c: &Case| c.workload.figures(self.sides).contains(&figure);
            let mut names: Vec<&'static str> = self
                .runners
                .iter()
                .filter(|(c, _)| measured(c))
                .map(|(c, _)| c.workload.group(figure))
                .collect();
            names.dedup();
            for name in names {
                let cases = (0..self.runners.len())
                    .filter(|&i| {
                        measured(&self.runners[i].0) && self.runners[i].0.workload.group(figure) == name
                    })
                    .collect();
                out.push((figure, name, cases));
            }
        }
        out
    }
}

/// Selects and configures the cases of the matrix ([`Matrix::from_env`],
/// [`Matrix::all_cases`]) that belong to the bench named `bench`
/// ([`Case::bench_target`]) and whose id the command line's filter
/// selects ([`IdFilter`]), for every built library. Only selected cases are
/// configured; unsupported ones are skipped with their reason printed;
/// library settings not in the id (s2n-tls's security policy) are printed
/// as `note` lines. `None` when this bench has nothing to run but another
/// has (said in one line).
///
/// Exits with an error on a bad environment value or filter, a case whose
/// configuration fails (a broken certificate file, a broken library), and
/// when the filter selects no case of any benchmark, or every selected case
/// of every benchmark is skipped (nothing would be measured).
fn select(bench: &str) -> Option<Selection> {
    let matrix = Matrix::from_env().unwrap_or_else(fail_on);
    let sides = sides_from_env().unwrap_or_else(fail_on);
    let filter = IdFilter::from_args(env::args().skip(1)).unwrap_or_else(fail_on);
    let mut libs = libs::all();
    if floors_from_env().unwrap_or_else(fail_on) {
        // Only the floors a built library goes with (a past rustls has no
        // aws-lc-rs provider: its floor would run alone).
        let used: Vec<String> = libs.iter().filter_map(|l| l.crypto_floor()).collect();
        libs.extend(libs::crypto_floors().into_iter().filter(|f| used.contains(&f.name())));
    }
    let selected = |case: &Case| case.workload.figures(sides).iter().any(|&f| filter.matches(&case.id(f)));
    let cases = matrix.all_cases(&libs);
    let example = cases.first().map(Case::to_string).unwrap_or_default();
    let (here, elsewhere): (Vec<Case>, Vec<Case>) =
        cases.into_iter().filter(selected).partition(|c| c.bench_target() == bench);
    let mut runners = Vec::new();
    let selected_here = here.len();
    for case in here {
        match prepare(&case, &libs).unwrap_or_else(fail_on) {
            Prepared::Ready { runner, settings } => {
                if let Some(s) = settings {
                    eprintln!("note {case}: {s}");
                }
                runners.push((case, runner));
            }
            Prepared::Skipped(why) => {
                tls_bench_harness::skip::report(&case.to_string(), &why).unwrap_or_else(fail_on)
            }
        }
    }
    drop_lone_floors(&libs, &mut runners);
    if runners.is_empty() {
        let per_side = !sides
            && matrix
                .all_cases(&libs)
                .iter()
                .any(|c| c.workload.figures(true).iter().any(|&f| filter.matches(&c.id(f))));
        nothing_here(bench, &filter, selected_here, per_side, &elsewhere, &libs, &example);
        return None;
    }
    let crypto_floors = crypto_floors(&libs, &runners);
    Some(Selection { filter, sides, runners, crypto_floors })
}

/// Drops, with a named skip, each crypto floor's case that no library
/// going with that floor runs (s2n-tls 0.0.8 has no resumption: its floor's
/// resumption case would be a row with nothing to compare it to).
fn drop_lone_floors(libs: &[Box<dyn TlsLibrary>], runners: &mut Vec<(Case, Box<Runner>)>) {
    let goes_with: Vec<(String, String)> =
        libs.iter().filter_map(|l| Some((l.name(), l.crypto_floor()?))).collect();
    let lone: Vec<bool> = runners
        .iter()
        .map(|(case, _)| {
            goes_with.iter().any(|(_, floor)| *floor == case.library)
                && !runners.iter().any(|(c, _)| {
                    c.row() == case.row()
                        && goes_with.iter().any(|(lib, floor)| *lib == c.library && *floor == case.library)
                })
        })
        .collect();
    let mut lone = lone.into_iter();
    runners.retain(|(case, _)| {
        let drop = lone.next().unwrap_or(false);
        if drop {
            let why = "no library that this floor goes with runs this case";
            tls_bench_harness::skip::report(&case.to_string(), why).unwrap_or_else(fail_on);
        }
        !drop
    });
}

/// Each library the cases measure whose crypto floor they measure too,
/// with that floor: (library, floor).
fn crypto_floors(libs: &[Box<dyn TlsLibrary>], runners: &[(Case, Box<Runner>)]) -> Vec<(String, String)> {
    let measured = |name: &str| runners.iter().any(|(c, _)| c.library == name);
    libs.iter()
        .filter_map(|l| Some((l.name(), l.crypto_floor()?)))
        .filter(|(library, floor)| measured(library) && measured(floor))
        .collect()
}

/// `--list`: prints `ID: benchmark` for every benchmark of [`select`] that
/// the filter keeps, each id whole, then exits with status 0.
fn list(bench: &str) -> ! {
    if let Some(selection) = select(bench) {
        for (figure, _, cases) in selection.order() {
            for i in cases {
                let id = selection.runners[i].0.id(figure);
                if selection.filter.matches(&id) {
                    println!("{id}: benchmark");
                }
            }
        }
    }
    std::process::exit(0)
}

/// Benchmarks the cases [`select`] configures: the `Both` figure, and with
/// `TLS_BENCH_SIDES=1` the per-side figures too (measured in groups of
/// their own; [`tls_bench_harness::bench::Workload::figures`]). Before each
/// benchmark whose id is longer than Criterion prints whole
/// ([`CRITERION_TITLE_MAX`]), prints `id in full: <id>`. The send loop's
/// Criterion throughput is in elements (writes: packets per second for
/// DTLS), the throughput benchmark's in bytes.
///
/// Exits with an error as [`select`] does. Panics on any error in an
/// iteration: a benchmark must not go on with a broken library.
pub fn bench(c: &mut Criterion, bench: &str) {
    let Some(mut selection) = select(bench) else { return };
    // Beside Criterion's results, for `report`'s floor tables.
    if !selection.crypto_floors.is_empty() {
        let dir = tls_bench_harness::paths::criterion_home();
        criterion_json::record_crypto_floors(&dir, &selection.crypto_floors).unwrap_or_else(fail_on);
    }
    for (figure, name, cases) in selection.order() {
        let mut group = c.benchmark_group(name);
        // Flat sampling (the same iteration count in every sample): a
        // handshake of several ms would stretch linear sampling's
        // 5050-iteration minimum far past the measurement time.
        group.sampling_mode(SamplingMode::Flat);
        for i in cases {
            let (case, runner) = &mut selection.runners[i];
            if let Some(writes) = case.workload.writes_per_iteration() {
                group.throughput(Throughput::Elements(writes));
            } else if let Some(bytes) = case.workload.bytes_per_iteration() {
                group.throughput(Throughput::Bytes(bytes));
            }
            let id = case.id(figure);
            if id.len() > CRITERION_TITLE_MAX && selection.filter.matches(&id) {
                println!("id in full: {id}");
            }
            let workload = case.workload;
            group.bench_function(BenchmarkId::new(case.parameters(), &case.library), |b| {
                b.iter_custom(|iters| {
                    let m = runner.run(iters).unwrap_or_else(|e| panic!("{}: {e:#}", case.id(figure)));
                    if let Some(l) = m.losses.filter(|l| l.lost + l.reordered > 0) {
                        eprintln!(
                            "note {}: over UDP {} of {} writes lost, {} reordered",
                            case.id(figure),
                            l.lost,
                            l.sent,
                            l.reordered
                        );
                    }
                    m.of(workload, figure)
                })
            });
        }
        group.finish();
    }
}

/// This benchmark measures nothing (`selected_here` cases selected, all
/// skipped): says why, and exits with an error unless another benchmark has
/// a selected case that runs (`elsewhere`: the selected cases of the other
/// benchmarks, configured here only to know). `per_side`: the filter would
/// select per-side ids, which this run does not have.
fn nothing_here(
    bench: &str,
    filter: &IdFilter,
    selected_here: usize,
    per_side: bool,
    elsewhere: &[Case],
    libs: &[Box<dyn TlsLibrary>],
    example: &str,
) {
    if matches!(filter, IdFilter::None) {
        return;
    }
    let runs_elsewhere = elsewhere
        .iter()
        .any(|case| matches!(prepare(case, libs).unwrap_or_else(fail_on), Prepared::Ready { .. }));
    if runs_elsewhere {
        // The small-writes and dtls benches are `bench = false`: a plain
        // `cargo bench` does not run them.
        let hint = match elsewhere.first().map(Case::bench_target) {
            Some(target @ ("small-writes" | "dtls"))
                if elsewhere.iter().all(|c| c.bench_target() == target) =>
            {
                format!(" ({target} ids run with `cargo bench --bench {target}`)")
            }
            _ => String::new(),
        };
        eprintln!("{bench}: no benchmark here matches the {filter}; other benchmarks have some{hint}");
        return;
    }
    if selected_here > 0 || !elsewhere.is_empty() {
        fail(&format!("every benchmark the {filter} selects is skipped (reasons above): nothing to measure"));
    }
    let sides =
        if per_side { format!(" (the per-side groups run only with {SIDES_ENV}=1)") } else { String::new() };
    fail(&format!(
        "no benchmark id matches the {filter}{sides}; ids read group/parameters/library, e.g. {example}"
    ));
}
