//! Processes and `/proc`, through maintained crates: a signal to a process
//! or to its process group (nix's `kill` and `killpg`), a wait for a child
//! with a deadline (wait-timeout), and what `/proc` says of a process
//! (procfs: its state, process group, CPU ticks, resident pages, children;
//! proc(5)). Every tool that starts, watches or stops a process (the child
//! servers, nginx, the other runtimes' tools, the signal handlers) goes
//! through here.

use std::{
    process::{Child, ExitStatus},
    time::Duration,
};

use anyhow::{Context, Result};
pub use nix::sys::signal::Signal;
use nix::{sys::signal, unistd::Pid};
use procfs::process::Process;
use wait_timeout::ChildExt;

fn pid(pid: u32) -> Result<Pid> {
    Ok(Pid::from_raw(i32::try_from(pid).with_context(|| format!("pid {pid} out of range"))?))
}

/// Sends `sig` to the process `pid`. Errors: the system refused (no such
/// process, not ours), with its errno.
pub fn signal(target: u32, sig: Signal) -> Result<()> {
    signal::kill(pid(target)?, sig).with_context(|| format!("{sig} to process {target}"))
}

/// Sends `sig` to every process of the process group `group` (a child
/// started as a group leader: its pid). Errors: as [`signal`] (no process
/// left in the group is `ESRCH`).
pub fn signal_group(group: u32, sig: Signal) -> Result<()> {
    signal::killpg(pid(group)?, sig).with_context(|| format!("{sig} to process group {group}"))
}

/// Waits for `child` to end, at most `limit`: `Some(status)` once it has
/// (reaped), `None` when it runs past the limit (left running). Errors:
/// the wait failed.
pub fn wait_for(child: &mut Child, limit: Duration) -> Result<Option<ExitStatus>> {
    child.wait_timeout(limit).context("waiting for a child process")
}

/// The state letter of process `pid` (`R`, `S`, `T` stopped, `t` traced,
/// `Z` zombie ...; proc(5), `/proc/PID/stat`), or `None` when it cannot be
/// read (gone).
pub fn state(pid: u32) -> Option<char> {
    Some(Process::new(pid as i32).ok()?.stat().ok()?.state)
}

/// Whether a process of the process group `group` still runs (one that
/// is not a zombie), from `/proc`: a group whose leader is a zombie
/// awaiting its reaping but has no other member counts as gone.
pub fn group_has_running(group: i32) -> bool {
    let Ok(all) = procfs::process::all_processes() else { return false };
    all.flatten().filter_map(|p| p.stat().ok()).any(|s| s.pgrp == group && s.state != 'Z')
}

/// The CPU time process `pid` has used, user and system, in seconds
/// (`utime + stime` of `/proc/PID/stat` over the clock's ticks per
/// second). Errors: it cannot be read (gone).
pub fn cpu_seconds(pid: u32) -> Result<f64> {
    let stat = Process::new(pid as i32)
        .and_then(|p| p.stat())
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    Ok((stat.utime + stat.stime) as f64 / procfs::ticks_per_second() as f64)
}

/// The resident set size of process `pid` (this process for `None`), KiB:
/// `/proc/PID/statm`'s resident pages times the page size. Errors: it
/// cannot be read (gone, or not Linux).
pub fn rss_kib(pid: Option<u32>) -> Result<u64> {
    let process = match pid {
        Some(p) => Process::new(p as i32),
        None => Process::myself(),
    };
    let statm = process.and_then(|p| p.statm()).with_context(|| {
        format!("reading /proc/{}/statm", pid.map_or("self".to_string(), |p| p.to_string()))
    })?;
    Ok(statm.resident * procfs::page_size() / 1024)
}

/// The children of process `pid` (its main thread's,
/// `/proc/PID/task/PID/children`); none when it cannot be read.
pub fn children(pid: u32) -> Vec<u32> {
    Process::new(pid as i32).and_then(|p| p.task_main_thread()).and_then(|t| t.children()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn a_child_is_seen_signalled_and_waited_for_with_a_deadline() {
        let mut child = Command::new("sleep").arg("30").stdin(Stdio::null()).spawn().unwrap();
        let id = child.id();
        assert_eq!(wait_for(&mut child, Duration::from_millis(50)).unwrap(), None);
        assert!(matches!(state(id), Some('S' | 'R')), "{:?}", state(id));
        assert!(rss_kib(Some(id)).unwrap() > 0);
        assert!(cpu_seconds(id).unwrap() >= 0.0);
        signal(id, Signal::SIGTERM).unwrap();
        let status = wait_for(&mut child, Duration::from_secs(10)).unwrap().expect("ended after SIGTERM");
        assert!(!status.success());
        assert_eq!(state(id), None, "reaped: gone from /proc");
        assert!(signal(id, Signal::SIGTERM).is_err(), "no such process");
        assert!(rss_kib(None).unwrap() > 0);
        assert!(!group_has_running(i32::MAX));
    }

    #[test]
    fn a_group_s_children_are_listed_and_killed_together() {
        use std::os::unix::process::CommandExt;
        let mut shell = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let group = shell.id();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut kids = children(group);
        while kids.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            kids = children(group);
        }
        assert_eq!(kids.len(), 1, "{kids:?}");
        assert!(group_has_running(group as i32));
        signal_group(group, Signal::SIGKILL).unwrap();
        assert!(wait_for(&mut shell, Duration::from_secs(10)).unwrap().is_some());
        // The sleep, killed with its group, is reaped by init: gone soon.
        while group_has_running(group as i32) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!group_has_running(group as i32));
    }
}
