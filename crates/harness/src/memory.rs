//! Heap accounting shared by the harness and the `memory` binary.
//!
//! The `memory` binary replaces the C allocator's entry points (`malloc`,
//! `free`, `calloc`, `realloc` and the aligned variants) for the whole
//! process, so Rust code, the libraries' C code (OpenSSL, BoringSSL, s2n-tls,
//! AWS-LC) and glibc itself all pass through it; each call reports here with
//! [`record_alloc`] and [`record_free`]. Other builds (benches, tests) have no
//! interposer: the counters stay at zero and cost nothing.
//!
//! Every allocation and free is attributed to the [`Scope`] current when it
//! happens: the harness marks the calls it makes into a client or a server
//! (see [`in_scope`]) and its own transport work as [`Scope::Harness`]. The
//! harness is single-threaded; the scope is one process-wide value.
//!
//! Bytes are counted two ways: *requested* (the size argument) for
//! allocations, and *usable* (glibc's `malloc_usable_size`: the request
//! rounded up to the allocator's chunk size, minus its 8-byte header) for
//! what is live, freed and at peak, since frees know only the pointer.

use std::sync::atomic::{AtomicI64, AtomicU8, AtomicU64, Ordering::Relaxed};

use crate::side::Side;

/// Who an allocation is charged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Scope {
    /// Everything outside a client's or server's library calls: the harness,
    /// the transport's queues, the measuring code itself.
    Harness = 0,
    /// Inside calls into the client connection (creation, handshake, send,
    /// receive, release, drop).
    Client = 1,
    /// Inside calls into the server connection.
    Server = 2,
}

impl Scope {
    /// Every scope, in index order.
    pub const ALL: [Scope; 3] = [Scope::Harness, Scope::Client, Scope::Server];

    fn from_index(i: u8) -> Scope {
        match i {
            1 => Scope::Client,
            2 => Scope::Server,
            _ => Scope::Harness,
        }
    }
}

impl From<Side> for Scope {
    fn from(side: Side) -> Scope {
        match side {
            Side::Client => Scope::Client,
            Side::Server => Scope::Server,
        }
    }
}

static SCOPE: AtomicU8 = AtomicU8::new(Scope::Harness as u8);

/// The scope allocations are charged to now.
pub fn scope() -> Scope {
    Scope::from_index(SCOPE.load(Relaxed))
}

/// Runs `f` with allocations charged to `scope`, then restores the previous
/// scope (so scopes nest: the transport's writes inside a client call are
/// charged to the harness).
pub fn in_scope<T>(scope: Scope, f: impl FnOnce() -> T) -> T {
    let previous = SCOPE.swap(scope as u8, Relaxed);
    let out = f();
    SCOPE.store(previous, Relaxed);
    out
}

/// Per-scope counters, updated by the interposer.
struct Counters {
    allocs: AtomicU64,
    requested: AtomicU64,
    usable: AtomicU64,
    frees: AtomicU64,
    freed_usable: AtomicU64,
}

impl Counters {
    const fn new() -> Counters {
        Counters {
            allocs: AtomicU64::new(0),
            requested: AtomicU64::new(0),
            usable: AtomicU64::new(0),
            frees: AtomicU64::new(0),
            freed_usable: AtomicU64::new(0),
        }
    }
}

static COUNTERS: [Counters; 3] = [Counters::new(), Counters::new(), Counters::new()];
/// Usable bytes allocated minus freed in the client and server scopes.
static TLS_LIVE: AtomicI64 = AtomicI64::new(0);
/// Highest [`TLS_LIVE`] since [`reset_peak`].
static TLS_PEAK: AtomicI64 = AtomicI64::new(0);
/// Records an allocation of `requested` bytes that got a block of `usable`
/// bytes. Called by the interposer; must not allocate.
pub fn record_alloc(requested: usize, usable: usize) {
    let scope = SCOPE.load(Relaxed);
    let c = &COUNTERS[usize::from(scope.min(2))];
    c.allocs.fetch_add(1, Relaxed);
    c.requested.fetch_add(requested as u64, Relaxed);
    c.usable.fetch_add(usable as u64, Relaxed);
    if scope != Scope::Harness as u8 {
        let live = TLS_LIVE.fetch_add(usable as i64, Relaxed) + usable as i64;
        TLS_PEAK.fetch_max(live, Relaxed);
    }
}

/// Records the free of a block of `usable` bytes. Called by the interposer;
/// must not allocate.
pub fn record_free(usable: usize) {
    let scope = SCOPE.load(Relaxed);
    let c = &COUNTERS[usize::from(scope.min(2))];
    c.frees.fetch_add(1, Relaxed);
    c.freed_usable.fetch_add(usable as u64, Relaxed);
    if scope != Scope::Harness as u8 {
        TLS_LIVE.fetch_sub(usable as i64, Relaxed);
    }
}

/// Sets the peak of client+server live bytes to the current value.
pub fn reset_peak() {
    TLS_PEAK.store(TLS_LIVE.load(Relaxed), Relaxed);
}

/// One scope's counters at an instant. Differences of two snapshots give
/// what happened in between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScopeCounts {
    /// Allocation calls (a `realloc` counts as one allocation and one free).
    pub allocs: u64,
    /// Bytes requested by those calls.
    pub requested: u64,
    /// Usable bytes of the blocks returned.
    pub usable: u64,
    /// Free calls (of non-null pointers).
    pub frees: u64,
    /// Usable bytes of the blocks freed.
    pub freed_usable: u64,
}

impl ScopeCounts {
    /// Usable bytes allocated minus freed: the change in live heap charged
    /// to this scope, in bytes (negative when it freed more).
    pub fn net_bytes(&self) -> i64 {
        self.usable as i64 - self.freed_usable as i64
    }

    /// Blocks allocated minus blocks freed.
    pub fn net_blocks(&self) -> i64 {
        self.allocs as i64 - self.frees as i64
    }

    fn minus(&self, earlier: &ScopeCounts) -> ScopeCounts {
        ScopeCounts {
            allocs: self.allocs - earlier.allocs,
            requested: self.requested - earlier.requested,
            usable: self.usable - earlier.usable,
            frees: self.frees - earlier.frees,
            freed_usable: self.freed_usable - earlier.freed_usable,
        }
    }
}

/// Every scope's counters, and the client+server peak, at an instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Indexed by `Scope as usize`.
    pub scopes: [ScopeCounts; 3],
    /// Client+server live usable bytes (since start-up), in bytes.
    pub tls_live: i64,
    /// Highest `tls_live` since the last [`reset_peak`], in bytes.
    pub tls_peak: i64,
}

impl Snapshot {
    /// The counters now.
    pub fn take() -> Snapshot {
        let read = |c: &Counters| ScopeCounts {
            allocs: c.allocs.load(Relaxed),
            requested: c.requested.load(Relaxed),
            usable: c.usable.load(Relaxed),
            frees: c.frees.load(Relaxed),
            freed_usable: c.freed_usable.load(Relaxed),
        };
        Snapshot {
            scopes: [read(&COUNTERS[0]), read(&COUNTERS[1]), read(&COUNTERS[2])],
            tls_live: TLS_LIVE.load(Relaxed),
            tls_peak: TLS_PEAK.load(Relaxed),
        }
    }

    /// What `scope` did between `earlier` and this snapshot.
    pub fn since(&self, earlier: &Snapshot, scope: Scope) -> ScopeCounts {
        self.scopes[scope as usize].minus(&earlier.scopes[scope as usize])
    }

    /// All scopes together between `earlier` and this snapshot.
    pub fn since_all(&self, earlier: &Snapshot) -> ScopeCounts {
        Scope::ALL.iter().fold(ScopeCounts::default(), |acc, &s| {
            let d = self.since(earlier, s);
            ScopeCounts {
                allocs: acc.allocs + d.allocs,
                requested: acc.requested + d.requested,
                usable: acc.usable + d.usable,
                frees: acc.frees + d.frees,
                freed_usable: acc.freed_usable + d.freed_usable,
            }
        })
    }
}
