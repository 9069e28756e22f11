//! A flamegraph of one benchmark, on request: Criterion calls this profiler
//! only with `--profile-time <seconds>`, which runs each selected benchmark
//! for that long without measuring it. Normal runs never start it.

use std::{
    ffi::c_int,
    fs::{self, File},
    io::{BufWriter, Write},
    path::Path,
};

use criterion::profiler::Profiler;
use pprof::{ProfilerGuard, ProfilerGuardBuilder};

use super::fail;

/// Samples asked for per second of CPU time: a prime, so sampling does not
/// fall into step with a periodic loop. Linux delivers SIGPROF on the
/// scheduler tick, so the rate obtained is at most the kernel's `CONFIG_HZ`
/// (often 250 Hz).
const FREQUENCY_HZ: c_int = 997;

/// File written in the directory Criterion gives the profiler
/// (`target/criterion/<group>/<function>/<value>/profile/`).
pub const FILE_NAME: &str = "flamegraph.svg";

/// Profiles each benchmark run under `--profile-time` by sampling its call
/// stacks [`FREQUENCY_HZ`] times a second of CPU time (pprof, SIGPROF), and
/// writes the samples as a flamegraph SVG, [`FILE_NAME`], in the
/// benchmark's profile directory.
///
/// Failing to start the sampler, to build the report, or to write the SVG
/// prints `error: ...` and exits with status 1.
#[derive(Default)]
pub struct Flamegraph {
    /// The running sampler, between `start_profiling` and `stop_profiling`.
    guard: Option<ProfilerGuard<'static>>,
}

impl Profiler for Flamegraph {
    fn start_profiling(&mut self, benchmark_id: &str, _benchmark_dir: &Path) {
        let builder = ProfilerGuardBuilder::default().frequency(FREQUENCY_HZ);
        // No samples taken while in these shared libraries: unwinding from
        // a signal handler there can deadlock (libgcc's unwinder), or read
        // wrong DWARF (some vDSOs). pprof has the blocklist only on these
        // architectures.
        #[cfg(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "riscv64",
            target_arch = "loongarch64"
        ))]
        let builder = builder.blocklist(&["libc", "libgcc", "pthread", "vdso"]);
        let guard =
            builder.build().unwrap_or_else(|e| fail(&format!("{benchmark_id}: starting the profiler: {e}")));
        self.guard = Some(guard);
    }

    fn stop_profiling(&mut self, benchmark_id: &str, benchmark_dir: &Path) {
        let Some(guard) = self.guard.take() else {
            fail(&format!("{benchmark_id}: the profiler stopped without having started"));
        };
        let report = guard
            .report()
            .build()
            .unwrap_or_else(|e| fail(&format!("{benchmark_id}: building the profile report: {e}")));
        // Stop sampling before writing.
        drop(guard);
        let path = benchmark_dir.join(FILE_NAME);
        if let Err(e) = write_svg(&report, benchmark_dir, &path) {
            fail(&format!("writing {}: {e}", path.display()));
        }
        eprintln!("flamegraph: {}", path.display());
    }
}

/// Writes `report` as a flamegraph SVG to `path`, creating `dir` (its
/// directory) first. Errors: creating the directory or the file, rendering,
/// or writing.
fn write_svg(report: &pprof::Report, dir: &Path, path: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("creating its directory: {e}"))?;
    let mut out = BufWriter::new(File::create(path).map_err(|e| e.to_string())?);
    report.flamegraph(&mut out).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())
}
