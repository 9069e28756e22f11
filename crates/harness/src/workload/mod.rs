//! Workload kinds: what one iteration of a case does, how its id and
//! figures read, what it moves, and how it runs. Each kind is one module
//! implementing [`Kind`]; the catalogue below lists every kind once, and the
//! runners (the Criterion benches, `compare`, `run-case`, `small-writes`,
//! the instruction counts, the tests) take them from there through
//! [`Workload`]. A new kind is a new module plus one line in the catalogue.
//!
//! What every kind shares (the buffers placed at each run's offsets, the
//! checked connection, the MTU of DTLS cases) is in [`Run`], handed to
//! [`Kind::run`] by [`crate::runner::Runner`].

use std::time::Duration;

use anyhow::Result;

use crate::{
    error::ConfigureError,
    harness::{Handshaker, SideTimes, TlsLibrary},
    params::Params,
    transport::Side,
    writes::Wire,
};

pub mod echo;
pub mod handshake;
pub mod over_sockets;
pub mod send_loop;
pub mod small_writes;
pub mod socket_handshake;
pub mod throughput;
pub mod udp;

pub use echo::Echo;
pub use handshake::Handshake;
pub use send_loop::SendLoop;
pub use small_writes::SmallWrites;
pub use socket_handshake::SocketHandshake;
pub use throughput::Throughput;
pub use udp::{Udp, UdpHandshake, UdpSendLoop};

/// The side that sends in the throughput benchmark (server to client, as a
/// server sends a response).
pub const SENDER: Side = Side::Server;

/// Application bytes moved per throughput iteration: 64 KiB, a multiple of
/// every write size, small enough to stay in cache.
pub const BLOCK_BYTES: usize = 64 * 1024;

/// `len` bytes of a fixed pseudo-random pattern (xorshift64), so that
/// corrupted or reordered data cannot compare equal by accident.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Totals over the iterations of one [`crate::runner::Runner::run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    /// Iterations run.
    pub iters: u64,
    /// The [`Figure::Both`] time summed over the iterations: a handshake's
    /// wall time, a transfer's sender plus receiver time.
    pub both: Duration,
    /// Time in each side's calls, summed over the iterations.
    pub sides: SideTimes,
    /// Small writes: the records and bytes each message put on the wire
    /// (the same for every iteration, or the run fails). `None` for other
    /// workloads and for zero iterations.
    pub wire: Option<Wire>,
    /// The UDP send loop: the writes sent, received, lost and reordered
    /// (counted, never a failure). `None` for other workloads.
    pub losses: Option<udp::socket::Losses>,
}

impl Measured {
    /// The time of `figure`, summed over the iterations: for a transfer
    /// [`Figure::First`] is the sender ([`SENDER`]), [`Figure::Second`] the
    /// receiver; for a handshake the client and the server.
    pub fn of(&self, workload: Workload, figure: Figure) -> Duration {
        let first = workload.first_side();
        match figure {
            Figure::Both => self.both,
            Figure::First => self.sides.of(first),
            Figure::Second => self.sides.of(first.peer()),
        }
    }
}

/// Which time of an iteration a figure holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Figure {
    /// What [`Kind::both`] says: a handshake's wall time, a transfer's
    /// sender plus receiver time, a small write's sender time.
    Both,
    /// Only the time in the client's calls (handshake) or the sender's
    /// calls (transfers, small writes, the send loop).
    First,
    /// Only the time in the server's calls (handshake) or the receiver's
    /// calls.
    Second,
}

/// What a kind's [`Figure::Both`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Both {
    /// The wall time of the whole iteration, from the creation of both
    /// connections to both sides done (a handshake).
    Wall,
    /// The time in both sides' calls, summed (a transfer).
    Sides,
    /// The time in the first side's calls only (a small write: the
    /// sender's, the receiver's being apart).
    First,
}

/// The state an iteration runs on, set up by the runner for each run: the
/// checked connection's configs, and the data block placed at this run's
/// buffer offsets ([`crate::runner::buffer_offsets`]).
pub struct Run<'a> {
    /// Makes and checks the pair each run (or iteration) uses.
    pub handshaker: &'a mut Handshaker,
    /// The data one iteration sends ([`Kind::block_bytes`] of
    /// [`crate::bench::pattern`]), at this run's offset.
    pub data: &'a [u8],
    /// As long as `data`, at another offset, poisoned by each receive
    /// before it is filled.
    pub scratch: &'a mut [u8],
    /// Whether the measured part runs inside Callgrind's named regions
    /// ([`crate::callgrind`]).
    pub count: bool,
    /// The library's name (the UDP kinds configure it in their threads).
    pub library: &'a str,
    /// The path MTU of DTLS connections, in bytes.
    pub mtu: usize,
}

/// One workload kind. `self` holds the kind's own parameters (a write
/// size, a message), so that a [`Workload`] is a small `Copy` value.
pub trait Kind {
    /// The benchmark groups of [`Figure::Both`], [`Figure::First`] and
    /// [`Figure::Second`], e.g. `handshake`, `handshake-client`,
    /// `handshake-server`.
    fn groups(&self) -> [&'static str; 3];

    /// What [`Figure::Both`] holds.
    fn both(&self) -> Both;

    /// The side whose time [`Figure::First`] holds: the client in a
    /// handshake, the sender otherwise.
    fn first_side(&self) -> Side;

    /// The figures a Criterion run measures: `Both`, and with `sides` the
    /// per-side ones that differ from it.
    fn figures(&self, sides: bool) -> &'static [Figure] {
        match (sides, self.both()) {
            (false, _) => &[Figure::Both],
            (true, Both::First) => &[Figure::Both, Figure::Second],
            (true, _) => &[Figure::Both, Figure::First, Figure::Second],
        }
    }

    /// Application bytes moved per iteration, `None` where the figure is a
    /// time per handshake or per message.
    fn bytes_per_iteration(&self) -> Option<u64> {
        None
    }

    /// Writes (DTLS: datagrams) per iteration, the elements of a
    /// packets-per-second figure; `None` where that is not the figure.
    fn writes_per_iteration(&self) -> Option<u64> {
        None
    }

    /// The `parameters` component of an id with `params`.
    fn parameters(&self, params: &Params) -> String;

    /// The Criterion bench (`benches/benches/<name>.rs`) that runs the kind with
    /// `params`.
    fn bench_target(&self, params: &Params) -> &'static str;

    /// Whether the kind runs over the in-memory duplex on one thread, so
    /// that `compare` can interleave it with others (the UDP kinds do not).
    fn in_memory(&self) -> bool {
        true
    }

    /// Bytes of data one iteration sends (0 for a handshake).
    fn block_bytes(&self) -> usize {
        0
    }

    /// Whether the kind's writes fit the datagrams of path MTU `mtu` (bytes)
    /// with `params`, checked once the library is configured, before any
    /// connection. Errors: the reason, for a named skip (a DTLS write
    /// larger than one datagram carries,
    /// [`crate::writes::check_datagram_payload`]). Always `Ok` for a kind
    /// whose writes the library may split (a handshake) or for TLS.
    fn fits_mtu(&self, _params: &Params, _mtu: usize) -> Result<(), String> {
        Ok(())
    }

    /// What `lib` runs `params` with, when the id does not say it (an
    /// s2n-tls security policy): [`TlsLibrary::settings`] by default.
    fn settings(&self, lib: &dyn TlsLibrary, params: &Params) -> Option<String> {
        lib.settings(params)
    }

    /// Configures `lib` for `params` (client and server). Errors:
    /// [`ConfigureError::Unsupported`] for a combination the library or the
    /// kind cannot do (a named skip), [`ConfigureError::Failed`] otherwise.
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        Handshaker::new(lib, lib, *params)
    }

    /// Runs `iters` checked iterations on `run`, handing `each` the
    /// [`Figure::Both`] time of each (after the clock). Errors: a library
    /// error, a negotiated value that differs from the case, data that
    /// arrived corrupted or incomplete.
    fn run(&self, run: Run<'_>, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured>;
}

/// Adds the per-iteration side times `t` to `m`, and their sum to its
/// `both` and to `each`: a transfer's [`Both::Sides`].
pub(crate) fn add_sides(m: &mut Measured, t: SideTimes, each: &mut dyn FnMut(Duration)) {
    m.both += t.client + t.server;
    m.sides.client += t.client;
    m.sides.server += t.server;
    each(t.client + t.server);
}

/// The catalogue: each line is a kind (a variant of [`Workload`] holding
/// that kind's parameters); [`Workload::kind`] reaches its [`Kind`].
macro_rules! catalogue {
    ($($(#[$doc:meta])* $variant:ident($kind:ty),)*) => {
        /// What one iteration of a case does: one of the kinds of the
        /// catalogue, with its parameters.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Workload {
            $($(#[$doc])* $variant($kind),)*
        }

        impl Workload {
            /// The kind's behaviour.
            pub fn kind(&self) -> &dyn Kind {
                match self {
                    $(Workload::$variant(k) => k,)*
                }
            }
        }

        $(impl From<$kind> for Workload {
            fn from(k: $kind) -> Workload {
                Workload::$variant(k)
            }
        })*
    };
}

catalogue! {
    /// A complete handshake ([`handshake`]).
    Handshake(Handshake),
    /// A block of application data in writes of one size ([`throughput`]).
    Throughput(Throughput),
    /// One message written from several buffers ([`small_writes`]).
    SmallWrites(SmallWrites),
    /// Writes of one record (DTLS: one datagram) each ([`send_loop`]).
    SendLoop(SendLoop),
    /// A DTLS handshake over UDP sockets ([`udp`]).
    UdpHandshake(UdpHandshake),
    /// The send loop over UDP sockets ([`udp`]).
    UdpSendLoop(UdpSendLoop),
    /// Messages echoed over TCP sockets, kept connections ([`echo`]).
    Echo(Echo),
    /// Handshakes on new TCP connections ([`socket_handshake`]).
    SocketHandshake(SocketHandshake),
}

impl Workload {
    /// A complete handshake.
    pub const HANDSHAKE: Workload = Workload::Handshake(Handshake);

    /// The benchmark group of `figure` ([`Kind::groups`]).
    pub fn group(self, figure: Figure) -> &'static str {
        let [both, first, second] = self.kind().groups();
        match figure {
            Figure::Both => both,
            Figure::First => first,
            Figure::Second => second,
        }
    }

    /// [`Kind::figures`].
    pub fn figures(self, sides: bool) -> &'static [Figure] {
        self.kind().figures(sides)
    }

    /// [`Kind::first_side`].
    pub fn first_side(self) -> Side {
        self.kind().first_side()
    }

    /// [`Kind::bytes_per_iteration`].
    pub fn bytes_per_iteration(self) -> Option<u64> {
        self.kind().bytes_per_iteration()
    }

    /// [`Kind::writes_per_iteration`].
    pub fn writes_per_iteration(self) -> Option<u64> {
        self.kind().writes_per_iteration()
    }
}
