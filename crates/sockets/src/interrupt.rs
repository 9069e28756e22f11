//! SIGINT and SIGTERM in the socket tools, and the child processes that
//! must not outlive them.
//!
//! A tool calls [`install`] once, first thing, with what a signal means to
//! it ([`OnSignal`]):
//! - a client (`load`, `https-load`, `https-attack`) stops measuring (each
//!   of its clients at its next request: [`stopping`], [`sleep_until`]),
//!   keeps what it measured so far, reports it marked interrupted, and
//!   exits 130 (SIGINT) or 143 (SIGTERM) ([`exit_code`]): [`OnSignal::Report`];
//! - a tool that runs servers as children (`https-soak`, `https-compare`)
//!   stops them and exits at once: [`OnSignal::Exit`].
//!
//! Either way, every child started through [`spawn`] is stopped before the
//! tool exits: SIGTERM to its process group (nginx's master stops its
//! workers on it; `https-serve` prints its summary), SIGKILL to the group
//! after [`GRACE`]. A child also gets SIGTERM from the kernel when the tool
//! dies any other way (`PR_SET_PDEATHSIG`, prctl(2)), SIGKILL included. A
//! second signal kills the children at once and exits.

use std::{
    io,
    os::unix::process::CommandExt,
    process::{Child, Command},
    sync::{
        Mutex, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use tokio::sync::watch;

use crate::process::{self, Signal};

/// What a first SIGINT or SIGTERM does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSignal {
    /// The tool keeps going to its report: [`requested`] turns true and
    /// [`wait`] resolves; its children are stopped.
    Report,
    /// The children are stopped, then the process exits with 128 + the
    /// signal's number.
    Exit,
}

/// How long stopped children have between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);

struct State {
    /// The signal's number once one came.
    signal: watch::Sender<Option<i32>>,
    /// Whether one came: what a client's loop reads per request (one
    /// load of a line nobody writes; [`wait`] takes locks every time it is
    /// polled, too dear on a hot path).
    came: AtomicBool,
    /// The process groups of the children started by [`spawn`] and not yet
    /// reaped ([`forget`]).
    children: Mutex<Vec<i32>>,
    /// Directories of this run's own making, half written, removed when a
    /// signal ends the process ([`remove_on_exit`]).
    litter: Mutex<Vec<std::path::PathBuf>>,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| State {
        signal: watch::Sender::new(None),
        came: AtomicBool::new(false),
        children: Mutex::new(Vec::new()),
        litter: Mutex::new(Vec::new()),
    })
}

/// Installs the handlers (once; a second call does nothing): a thread of
/// its own waits for SIGINT and SIGTERM. Errors: the thread or its
/// runtime cannot start.
pub fn install(on_signal: OnSignal) -> Result<()> {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("starting the signal handler's runtime")?;
    // The handlers are registered here, before this returns, so that no
    // signal between install and the thread's start is missed.
    let (mut int, mut term) = {
        use tokio::signal::unix::{SignalKind, signal};
        let _guard = runtime.enter();
        (
            signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
            signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
        )
    };
    std::thread::Builder::new()
        .name("tls-bench-signals".into())
        .spawn(move || {
            runtime.block_on(async {
                let mut first = true;
                loop {
                    let number = tokio::select! {
                        _ = int.recv() => libc::SIGINT,
                        _ = term.recv() => libc::SIGTERM,
                    };
                    if !first {
                        stop_children(Duration::ZERO);
                        remove_litter();
                        std::process::exit(128 + number);
                    }
                    first = false;
                    state().came.store(true, Ordering::Relaxed);
                    state().signal.send_replace(Some(number));
                    eprintln!(
                        "\n{}: stopping{}",
                        if number == libc::SIGINT { "SIGINT" } else { "SIGTERM" },
                        if on_signal == OnSignal::Report { " (a second signal exits at once)" } else { "" }
                    );
                    stop_children(GRACE);
                    if on_signal == OnSignal::Exit {
                        remove_litter();
                        std::process::exit(128 + number);
                    }
                }
            })
        })
        .context("starting the signal handler's thread")?;
    let _ = INSTALLED.set(());
    Ok(())
}

/// The signal that came (`SIGINT`, `SIGTERM`), if one did.
pub fn requested() -> Option<i32> {
    *state().signal.borrow()
}

/// Whether a signal came: one atomic load, for a client's loop.
pub fn stopping() -> bool {
    state().came.load(Ordering::Relaxed)
}

/// Resolves when a signal has come (at once if one has). Each poll takes
/// the channel's locks: for waits, not for a loop's every step
/// ([`stopping`], [`sleep_until`]).
pub async fn wait() {
    let mut rx = state().signal.subscribe();
    let _ = rx.wait_for(Option::is_some).await;
}

/// Sleeps until `at`, or until a signal has come, seen within
/// [`SLEEP_STEP`]: a short sleep is one timer, a long one (a slow open
/// loop, a back-off) is cut into steps. Returns false when a signal came.
pub async fn sleep_until(at: Instant) -> bool {
    loop {
        if stopping() {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        tokio::time::sleep_until((at.min(now + SLEEP_STEP)).into()).await;
    }
}

/// How soon a sleeping client sees a signal, at most.
pub const SLEEP_STEP: Duration = Duration::from_millis(100);

/// The exit status for a run that a signal stopped: 128 + its number
/// (130 for SIGINT, 143 for SIGTERM); `None` when none came.
pub fn exit_status() -> Option<u8> {
    requested().and_then(|n| u8::try_from(128 + n).ok())
}

/// Starts `cmd` as a child that does not outlive this process: in a process
/// group of its own (so its own children, nginx's workers, go with it),
/// sent SIGTERM by the kernel when this process ends
/// (`PR_SET_PDEATHSIG`), and stopped by [`install`]'s handler. Call
/// [`forget`] once it is reaped. The kernel's signal comes when the
/// *thread* that started the child ends (prctl(2)): start children from
/// the main thread, or one that lives as long. Errors: it cannot start.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    // SAFETY: getpid is async-signal-safe.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only async-signal-safe functions (prctl, getppid, sigaction).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then nothing
            // would signal this child.
            if libc::getppid() != parent {
                return Err(io::Error::other("the parent exited while the child started"));
            }
            // SIGINT and SIGTERM stop a child server; a process started in
            // a shell's background job inherits them ignored, and a
            // runtime that keeps an ignored signal ignored (the JVM) would
            // then not stop. Default here (sigaction, async-signal-safe).
            for signal in [libc::SIGINT, libc::SIGTERM] {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.process_group(0);
    let child = cmd.spawn()?;
    if let Ok(mut c) = state().children.lock() {
        c.push(child.id() as i32);
    }
    Ok(child)
}

/// A child started by [`spawn`] has been reaped: its group is no longer
/// stopped on a signal.
pub fn forget(child: &Child) {
    forget_id(child.id());
}

/// [`forget`] by process id (for a child consumed by its wait).
pub fn forget_id(pid: u32) {
    if let Ok(mut c) = state().children.lock() {
        c.retain(|&p| p != pid as i32);
    }
}

/// Removes the directory `path` (this run's own, half written: a results
/// directory's staging, a build set aside) if a signal ends the process
/// before [`keep`] is called for it, after the children are stopped (they
/// may write into it). A process killed with SIGKILL removes nothing: the
/// next run that makes such a directory cleans the ones of processes gone.
pub fn remove_on_exit(path: &std::path::Path) {
    if let Ok(mut l) = state().litter.lock() {
        l.push(path.to_path_buf());
    }
}

/// `path` is no longer to be removed on a signal ([`remove_on_exit`]): it
/// was moved into place, or removed.
pub fn keep(path: &std::path::Path) {
    if let Ok(mut l) = state().litter.lock() {
        l.retain(|p| p != path);
    }
}

/// Removes what [`remove_on_exit`] named (a failure changes nothing: the
/// process is exiting on a signal).
fn remove_litter() {
    let paths: Vec<std::path::PathBuf> = state().litter.lock().map(|l| l.clone()).unwrap_or_default();
    for path in paths {
        let _gone = std::fs::remove_dir_all(&path);
    }
}

/// SIGTERM to every child's process group, then, after at most `grace`,
/// SIGKILL to those still there.
fn stop_children(grace: Duration) {
    let groups: Vec<i32> = state().children.lock().map(|c| c.clone()).unwrap_or_default();
    for &g in &groups {
        // A process group this process made; one already gone is done.
        let _gone = process::signal_group(g as u32, Signal::SIGTERM);
    }
    let until = Instant::now() + grace;
    // A group is gone when no process is left in it (its leader may be a
    // zombie until reaped: it counts as gone).
    let alive = |g: i32| process::group_has_running(g);
    while Instant::now() < until && groups.iter().any(|&g| alive(g)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &g in &groups {
        if alive(g) {
            let _gone = process::signal_group(g as u32, Signal::SIGKILL);
        }
    }
}

/// How a tool that [`install`]ed the handlers ends: as
/// [`tls_bench_harness::error::exit_code`] says, unless a signal stopped it: then 130
/// (SIGINT) or 143 (SIGTERM), its error (if any) printed first.
pub fn exit_code(result: Result<()>) -> std::process::ExitCode {
    match exit_status() {
        None => tls_bench_harness::error::exit_code(result),
        Some(status) => {
            if let Err(e) = result {
                eprintln!("error: {e:#}");
            }
            std::process::ExitCode::from(status)
        }
    }
}
