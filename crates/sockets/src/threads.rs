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

/// Every core's busy and total time so far, in clock ticks, from the
/// `cpuN` lines of `/proc/stat` (busy: user, nice, system, irq, softirq,
/// steal; total adds idle and iowait; proc(5)). Two readings give how busy
/// a set of cores was between them, whoever ran there: the servers' cores
/// of `https-compare`, where only the server under load runs.
#[derive(Clone, Debug, Default)]
pub struct CoreTimes(std::collections::BTreeMap<usize, (u64, u64)>);

impl CoreTimes {
    /// Reads `/proc/stat`. Errors: it cannot be read or a `cpuN` line is
    /// not understood.
    pub fn read() -> Result<CoreTimes> {
        let text = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
        Self::parse(&text)
    }

    /// Reads `/proc/stat`'s text. Errors: a `cpuN` line with fewer than 8
    /// numbers.
    pub fn parse(text: &str) -> Result<CoreTimes> {
        let mut cores = std::collections::BTreeMap::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(core) = words.next().and_then(|w| w.strip_prefix("cpu")).and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let n: Vec<u64> = words
                .take(8)
                .map(str::parse)
                .collect::<Result<_, _>>()
                .with_context(|| format!("/proc/stat: {line:?}"))?;
            ensure!(n.len() == 8, "/proc/stat: {line:?} has fewer than 8 times");
            // user nice system idle iowait irq softirq steal
            let busy = n[0] + n[1] + n[2] + n[5] + n[6] + n[7];
            cores.insert(core, (busy, busy + n[3] + n[4]));
        }
        Ok(CoreTimes(cores))
    }

    /// The share (0-1) of `cores`' time spent busy since `earlier`;
    /// `None` when `cores` is empty, a core is missing from either reading
    /// or no tick passed.
    pub fn busy_since(&self, earlier: &CoreTimes, cores: &[usize]) -> Option<f64> {
        let (mut busy, mut total) = (0u64, 0u64);
        for core in cores {
            let (b1, t1) = self.0.get(core)?;
            let (b0, t0) = earlier.0.get(core)?;
            busy += b1.saturating_sub(*b0);
            total += t1.saturating_sub(*t0);
        }
        (total > 0).then(|| busy as f64 / total as f64)
    }
}

#[cfg(test)]
mod core_times_tests {
    use super::CoreTimes;

    #[test]
    fn busy_share_between_two_readings() {
        let before = "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 5 0 5 50 0 0 0 0 0 0\ncpu1 5 0 5 50 0 0 0 0 0 0\n";
        let after =
            "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 65 0 25 55 5 0 10 0 0 0\ncpu1 6 0 5 149 0 0 0 0 0 0\n";
        let (b, a) = (CoreTimes::parse(before).unwrap(), CoreTimes::parse(after).unwrap());
        // cpu0: busy 60+20+10 = 90 of 90+5+5 = 100 ticks.
        assert_eq!(a.busy_since(&b, &[0]), Some(0.9));
        assert_eq!(a.busy_since(&b, &[1]), Some(0.01));
        assert_eq!(a.busy_since(&b, &[0, 1]), Some(91.0 / 200.0));
        assert_eq!(a.busy_since(&b, &[]), None);
        assert_eq!(a.busy_since(&b, &[2]), None);
        assert!(CoreTimes::parse("cpu0 1 2 3\n").is_err());
    }
}
