//! The regions the instruction counts cover, as functions Callgrind can
//! select by name.
//!
//! Callgrind's `--toggle-collect=PATTERN` (valgrind manual, "Callgrind
//! command-line options") counts instructions only while a function whose
//! name matches is on the stack. When counting is on ([`counted`], which the
//! runner enters around the iterations the `run-case` binary counts, never
//! around setup, warm-up or checks), the harness runs each side's library calls inside
//! [`client_calls`] or [`server_calls`] and a whole handshake inside
//! [`handshake`]: the same regions the wall-time benchmarks time. The
//! patterns that select them are [`Region::patterns`].
//!
//! When counting is off these wrappers are not entered; the wall-time
//! benchmarks pay one relaxed atomic load per library call, outside their
//! clock.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::side::Side;

static COUNTING: AtomicBool = AtomicBool::new(false);

/// Whether the named regions are on (inside [`counted`] or
/// [`counted_handshake`] with `on`).
pub fn counting() -> bool {
    COUNTING.load(Relaxed)
}

/// Runs `f` with the side regions on when `on` ([`side_call`] then enters
/// [`client_calls`] and [`server_calls`]); just `f` otherwise.
pub fn counted<T>(on: bool, f: impl FnOnce() -> T) -> T {
    if !on {
        return f();
    }
    COUNTING.store(true, Relaxed);
    let out = f();
    COUNTING.store(false, Relaxed);
    out
}

/// Runs `f`, one whole handshake, inside [`handshake`] with the side regions
/// on when `on`; just `f` otherwise.
pub fn counted_handshake<T>(on: bool, f: impl FnOnce() -> T) -> T {
    counted(on, || if on { handshake(f) } else { f() })
}

/// Runs `f`, a call into the client's library, inside a function named
/// `tls_bench::callgrind::client_calls`.
#[inline(never)]
pub fn client_calls<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box(Side::Client);
    std::hint::black_box(f())
}

/// Runs `f`, a call into the server's library, inside a function named
/// `tls_bench::callgrind::server_calls`.
#[inline(never)]
pub fn server_calls<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box(Side::Server);
    std::hint::black_box(f())
}

/// Runs `f`, a whole handshake from the creation of both connections to
/// both sides done, inside a function named `tls_bench::callgrind::handshake`.
#[inline(never)]
pub fn handshake<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box("handshake");
    std::hint::black_box(f())
}

/// Runs `f`, a call into `side`'s library, inside that side's named
/// function when counting is on ([`client_calls`], [`server_calls`]),
/// directly otherwise. `counting` is [`counting`], read by the caller before
/// its clock starts.
pub fn side_call<T>(side: Side, counting: bool, f: impl FnOnce() -> T) -> T {
    match (counting, side) {
        (false, _) => f(),
        (true, Side::Client) => client_calls(f),
        (true, Side::Server) => server_calls(f),
    }
}

/// What a Callgrind run counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The client's (handshake) or the receiver's (transfer) calls.
    Client,
    /// The server's calls: in a handshake the server, in a transfer the
    /// sender ([`crate::bench::SENDER`]).
    Server,
    /// Both sides' calls.
    BothSides,
    /// A whole handshake, harness work between the calls included (the
    /// wall-time `handshake` figure's region).
    Handshake,
}

impl Region {
    /// The `--toggle-collect` patterns that select this region (one
    /// `--toggle-collect=` option each). Valgrind demangles Rust symbols, and
    /// each generic instance of a wrapper carries the wrapper's path, so
    /// `*` on both ends matches every instance.
    pub fn patterns(self) -> &'static [&'static str] {
        match self {
            Region::Client => &["*tls_bench::callgrind::client_calls*"],
            Region::Server => &["*tls_bench::callgrind::server_calls*"],
            Region::BothSides => {
                &["*tls_bench::callgrind::client_calls*", "*tls_bench::callgrind::server_calls*"]
            }
            Region::Handshake => &["*tls_bench::callgrind::handshake*"],
        }
    }
}
