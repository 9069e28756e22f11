//! The runtime `serve` and `load` run on: tokio's multi-threaded runtime
//! with its worker threads pinned to given cores (when asked), and the CPU
//! time its threads used, read when each thread ends (`getrusage` with
//! `RUSAGE_THREAD`, Linux). Pinning is `sched_setaffinity(2)`.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed},
};

use anyhow::{Context, Result, bail, ensure};
use tokio::runtime::Runtime;

/// A runtime and the CPU its threads used.
pub struct Threads {
    /// The runtime.
    pub runtime: Runtime,
    cpu_us: Arc<AtomicU64>,
    pin_failed: Arc<AtomicBool>,
}

/// The cores this process may run on (`sched_getaffinity`), in order.
/// Errors: the call failed.
pub fn allowed_cores() -> Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is an empty set; the call fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    ensure!(r == 0, "sched_getaffinity: {}", std::io::Error::last_os_error());
    // SAFETY: CPU_ISSET reads the set.
    Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect())
}

/// Splits the cores this process may use into a server's half and a
/// client's half (the server takes the first, larger half), so a load and
/// the server it loads do not share a core: with fewer than 2 cores, both
/// get every core (`(all, all)`). Errors: `sched_getaffinity` failed.
pub fn split_cores() -> Result<(Vec<usize>, Vec<usize>)> {
    let all = allowed_cores()?;
    if all.len() < 2 {
        return Ok((all.clone(), all));
    }
    let server = all.len().div_ceil(2);
    Ok((all[..server].to_vec(), all[server..].to_vec()))
}

/// Checks that every one of `cores` is one this process may use. Errors:
/// the first that is not, with those it may.
pub fn check_cores(cores: &[usize]) -> Result<()> {
    if cores.is_empty() {
        return Ok(());
    }
    let allowed = allowed_cores()?;
    for c in cores {
        if !allowed.contains(c) {
            bail!("core {c} is not one this process may use: {allowed:?}");
        }
    }
    Ok(())
}

/// Makes `cmd`'s process run on `cores` only (`sched_setaffinity` in the
/// child before it runs the program; nothing when `cores` is empty). Its
/// spawn fails if the kernel refuses.
pub fn pin_command(cmd: &mut std::process::Command, cores: &[usize]) {
    if cores.is_empty() {
        return;
    }
    // SAFETY: a zeroed set, then cores below CPU_SETSIZE added (callers
    // pass cores from `check_cores`'d lists).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cores {
        // SAFETY: as above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: between fork and exec the closure only calls
    // sched_setaffinity, which is async-signal-safe, on a set copied in.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// CPU seconds (user + system) used by this process's children that have
/// ended and been waited for (`getrusage(RUSAGE_CHILDREN)`); the
/// difference across one child's run is that child's, when no other child
/// ends meanwhile. Errors: the call failed.
pub fn children_cpu_seconds() -> Result<f64> {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    let r = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    ensure!(r == 0, "getrusage: {}", std::io::Error::last_os_error());
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(s(usage.ru_utime) + s(usage.ru_stime))
}

/// Pins the calling thread to `core`. Errors: the kernel refused.
fn pin(core: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed set, then one core added.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `core` is below CPU_SETSIZE (checked by `start`).
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: valid pointer and size; 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// CPU time (user + system) of the calling thread so far, µs.
fn thread_cpu_us() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; RUSAGE_THREAD is Linux's.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return 0;
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

/// Starts a runtime of `threads` worker threads named `name`, each pinned
/// to one of `cores` in turn when `cores` is not empty. Errors: a core the
/// process may not use (the message lists those it may), the runtime
/// cannot start.
pub fn start(threads: usize, name: &str, cores: &[usize]) -> Result<Threads> {
    ensure!(threads >= 1, "at least 1 thread");
    check_cores(cores)?;
    let cpu_us = Arc::new(AtomicU64::new(0));
    let pin_failed = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicUsize::new(0));
    let (cores_start, failed_start) = (cores.to_vec(), pin_failed.clone());
    let cpu_stop = cpu_us.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name(name)
        .enable_all()
        .on_thread_start(move || {
            if !cores_start.is_empty() {
                let core = cores_start[next.fetch_add(1, Relaxed) % cores_start.len()];
                if pin(core).is_err() {
                    failed_start.store(true, Relaxed);
                }
            }
        })
        .on_thread_stop(move || {
            cpu_stop.fetch_add(thread_cpu_us(), Relaxed);
        })
        .build()
        .context("starting the tokio runtime")?;
    Ok(Threads { runtime, cpu_us, pin_failed })
}

impl Threads {
    /// Errors if a thread could not be pinned to its core.
    pub fn check_pinned(&self) -> Result<()> {
        ensure!(!self.pin_failed.load(Relaxed), "sched_setaffinity refused to pin a thread");
        Ok(())
    }

    /// Shuts the runtime down (waiting at most `wait` for its tasks) and
    /// returns the CPU seconds its threads used over their lives.
    pub fn finish(self, wait: std::time::Duration) -> f64 {
        self.runtime.shutdown_timeout(wait);
        self.cpu_us.load(Relaxed) as f64 / 1e6
    }
}
