//! The measurement core: what one iteration of a [`Case`] does and which
//! part of it is timed, the same for every library and every runner (the
//! Criterion benchmarks, `compare`'s workers, the tests).
//!
//! - Handshake: the clock starts before either connection is created and
//!   stops when both sides are done (for resumption: when the client holds
//!   its fresh ticket). Each side's figure holds only its own calls,
//!   creation included. The negotiated values are checked every iteration
//!   and the pair and the session it resumed from are dropped, all after
//!   the clock.
//! - Throughput: on a checked connection, one untimed warm-up transfer
//!   (queues and library buffers grow there), then per iteration
//!   [`BLOCK_BYTES`] from [`SENDER`] to its peer, checked byte for byte
//!   into a buffer poisoned beforehand, the queues checked empty after
//!   ([`crate::harness::Pair::transfer_into`]). Each run places the sent
//!   and the receive buffer at another offset within a page
//!   ([`buffer_offsets`]), so a figure averages over buffer alignments
//!   instead of resting on where one process's allocator put them.
//! - Small writes: as throughput, with one untimed warm-up message; then
//!   per iteration one message from [`SENDER`], written from its buffers
//!   as the strategy says (timed: the sender's calls, and for `coalesced`
//!   the copy), read whole by the peer into a poisoned buffer and checked
//!   (the receiver's calls timed into its side only), the records and
//!   bytes it put on the wire checked to be the same every iteration
//!   ([`crate::harness::Pair::deliver`]).
//! - Send loop (DTLS, and TLS for contrast): on a checked connection, one
//!   untimed warm-up loop; then per iteration [`SEND_LOOP_WRITES`] writes
//!   from [`SEND_LOOP_SENDER`], each checked to leave as one record (DTLS:
//!   one datagram), each read by the peer into its own slot of a poisoned
//!   buffer and compared, the queues checked empty
//!   ([`crate::harness::Pair::send_loop`]). The sender's calls and the
//!   receiver's are timed apart.
//!
//! DTLS cases run over a datagram duplex of the MTU [`crate::bench::MTU_ENV`]
//! sets. The UDP workloads run over sockets, one thread per side: what is
//! timed there is in [`crate::udp`].

use std::{
    io::IoSlice,
    rc::Rc,
    time::{Duration, Instant},
};

use anyhow::{Result, ensure};

use crate::{
    bench::{
        BLOCK_BYTES, Case, Figure, SEND_LOOP_SENDER, SEND_LOOP_WRITES, SENDER, Workload, mtu_from_env,
        pattern,
    },
    callgrind,
    error::ConfigureError,
    harness::{Configured, Handshaker, Pair, SideTimes, TlsLibrary},
    transport::DEFAULT_MTU,
    udp,
    writes::{Message, Strategy, Wire},
};

/// Totals over the iterations of one [`Runner::run`].
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
    pub losses: Option<udp::Losses>,
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

/// The span over which [`buffer_offsets`] moves the buffers: a page.
pub const OFFSET_SPAN: usize = 4096;

/// Where run number `run` places the sent data and the receive buffer in
/// their allocations, in bytes: both cycle through the 64 cache-line
/// offsets of a page, in different orders, so that over 64 runs every
/// offset of each is taken once.
pub fn buffer_offsets(run: u64) -> (usize, usize) {
    let step = (run % 64) as usize;
    (step * 64, (step * 29 % 64) * 64)
}

/// A case configured and ready to time.
pub struct Runner {
    workload: Workload,
    handshaker: Handshaker,
    /// Throughput: the block sent ([`pattern`]), made once.
    block: Vec<u8>,
    /// Throughput: the allocations holding the data sent and the receive
    /// buffer, [`OFFSET_SPAN`] longer than a block.
    data: Vec<u8>,
    scratch: Vec<u8>,
    /// Runs so far.
    runs: u64,
    /// Whether the measured part of each run enters the named regions
    /// Callgrind counts ([`Runner::count_instructions`]).
    count: bool,
    /// The library's name (the UDP runs configure it in their threads).
    library: String,
    /// The path MTU of DTLS connections, in bytes.
    mtu: usize,
}

impl Runner {
    /// Configures `lib` (client and server) for `case`. For resumption it
    /// runs one untimed handshake for the first ticket.
    ///
    /// Errors: [`ConfigureError::Unsupported`] when the library cannot do
    /// the case's parameters (a named skip), [`ConfigureError::Failed`] for
    /// any other failure, or when `lib` is not the case's library.
    pub fn new(case: &Case, lib: &dyn TlsLibrary) -> Result<Runner, ConfigureError> {
        if lib.name() != case.library {
            return Err(anyhow::anyhow!("{case}: runner given library {}", lib.name()).into());
        }
        let mut handshaker = match case.workload {
            Workload::SmallWrites { strategy: Strategy::Vectored, .. } => {
                let configured: Rc<dyn Configured> = lib.configure_vectored(&case.params)?.into();
                Handshaker::from_configured(configured.clone(), configured, case.params)?
            }
            _ => Handshaker::new(lib, lib, case.params)?,
        };
        let mtu = if case.params.datagram { mtu_from_env()? } else { DEFAULT_MTU };
        if case.params.datagram {
            handshaker.set_mtu(mtu)?;
        }
        if matches!(case.workload, Workload::UdpHandshake | Workload::UdpSendLoop { .. }) {
            udp::supports(&case.params).map_err(ConfigureError::Unsupported)?;
        }
        let (block, len) = match case.workload {
            Workload::Handshake | Workload::UdpHandshake | Workload::UdpSendLoop { .. } => (Vec::new(), 0),
            Workload::Throughput { .. } => (pattern(BLOCK_BYTES), BLOCK_BYTES + OFFSET_SPAN),
            Workload::SmallWrites { message, .. } => (pattern(message.len()), message.len() + OFFSET_SPAN),
            Workload::SendLoop { payload } => {
                let bytes = payload * SEND_LOOP_WRITES;
                (pattern(bytes), bytes + OFFSET_SPAN)
            }
        };
        Ok(Runner {
            workload: case.workload,
            handshaker,
            block,
            data: vec![0; len],
            scratch: vec![0; len],
            runs: 0,
            count: false,
            library: case.library.clone(),
            mtu,
        })
    }

    /// From now on, the measured part of every run (each handshake from
    /// connection creation to both sides done; the timed transfers, not the
    /// connection's handshake or the warm-up transfer) runs inside the
    /// functions Callgrind's `--toggle-collect` selects
    /// ([`crate::callgrind`]). Setup, checks and frees stay outside.
    pub fn count_instructions(&mut self) {
        self.count = true;
    }

    /// Runs `iters` checked iterations (see the module doc for what is
    /// timed). Errors: a library error, a negotiated value that differs from
    /// the case, data that arrived corrupted or incomplete.
    pub fn run(&mut self, iters: u64) -> Result<Measured> {
        self.run_with(iters, &mut |_| {})
    }

    /// [`Runner::run`], also handing `each` the [`Figure::Both`] time of
    /// every iteration (after the clock): a handshake's wall time, a
    /// transfer's sender plus receiver time, a small write's sender time.
    /// For per-iteration latency percentiles; not called for the UDP
    /// workloads, whose threads report totals.
    pub fn run_with(&mut self, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        self.runs += 1;
        match self.workload {
            Workload::Handshake => self.handshakes(iters, each),
            Workload::Throughput { write_size } => self.transfers(iters, write_size, each),
            Workload::SmallWrites { message, strategy } => self.messages(iters, message, strategy, each),
            Workload::SendLoop { payload } => self.send_loops(iters, payload, each),
            Workload::UdpHandshake => {
                let u = udp::handshakes(&self.library, *self.handshaker.params(), self.mtu, iters)?;
                Ok(Measured { iters, both: u.both, sides: u.sides, ..Measured::default() })
            }
            Workload::UdpSendLoop { payload } => {
                let u = udp::send_loop(&self.library, *self.handshaker.params(), payload, self.mtu, iters)?;
                Ok(Measured { iters, both: u.both, sides: u.sides, losses: u.losses, ..Measured::default() })
            }
        }
    }

    fn send_loops(&mut self, iters: u64, payload: usize, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        self.block_loops(iters, each, |pair, data, scratch| {
            pair.send_loop(SEND_LOOP_SENDER, data, payload, scratch)
        })
    }

    /// The loop throughput and the send loop share: the block placed at
    /// this run's offsets ([`buffer_offsets`]), a checked connection, one
    /// untimed warm-up `op`, then `iters` timed ones (sender plus receiver
    /// time in `Both`).
    fn block_loops(
        &mut self,
        iters: u64,
        each: &mut dyn FnMut(Duration),
        mut op: impl FnMut(&mut Pair, &[u8], &mut [u8]) -> Result<SideTimes>,
    ) -> Result<Measured> {
        let len = self.block.len();
        let (d, r) = buffer_offsets(self.runs);
        let data = &mut self.data[d..d + len];
        data.copy_from_slice(&self.block);
        let data = &*data;
        let scratch = &mut self.scratch[r..r + len];
        let (mut pair, _) = self.handshaker.handshake_checked()?;
        // Warm-up: the first run grows the queues and library buffers.
        op(&mut pair, data, scratch)?;
        let mut m = Measured { iters, ..Measured::default() };
        for _ in 0..iters {
            let t = callgrind::counted(self.count, || op(&mut pair, data, scratch))?;
            m.both += t.client + t.server;
            m.sides.client += t.client;
            m.sides.server += t.server;
            each(t.client + t.server);
        }
        Ok(m)
    }

    fn handshakes(&mut self, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let mut m = Measured { iters, ..Measured::default() };
        for _ in 0..iters {
            let duplex = self.handshaker.duplex()?;
            let mut times = SideTimes::default();
            let handshaker = &mut self.handshaker;
            let start = Instant::now();
            let done = callgrind::counted_handshake(self.count, || handshaker.run_on(duplex, &mut times))?;
            let elapsed = start.elapsed();
            m.both += elapsed;
            each(elapsed);
            done.pair.check(self.handshaker.params())?;
            m.sides.client += times.client;
            m.sides.server += times.server;
            // The pair and the session it resumed from are freed here, after the clock.
            drop(done);
        }
        Ok(m)
    }

    fn transfers(
        &mut self,
        iters: u64,
        write_size: usize,
        each: &mut dyn FnMut(Duration),
    ) -> Result<Measured> {
        self.block_loops(iters, each, |pair, data, scratch| {
            pair.transfer_into(SENDER, data, write_size, scratch)
        })
    }

    fn messages(
        &mut self,
        iters: u64,
        message: Message,
        strategy: Strategy,
        each: &mut dyn FnMut(Duration),
    ) -> Result<Measured> {
        let len = message.len();
        let (d, r) = buffer_offsets(self.runs);
        let data = &mut self.data[d..d + len];
        data.copy_from_slice(&self.block);
        let data = &*data;
        let mut parts = Vec::with_capacity(message.sizes().len());
        let mut rest = data;
        for &size in message.sizes() {
            let (part, tail) = rest.split_at(size);
            parts.push(IoSlice::new(part));
            rest = tail;
        }
        let scratch = &mut self.scratch[r..r + len];
        let mut copy = Vec::with_capacity(len);
        let (mut pair, _) = self.handshaker.handshake_checked()?;
        // Warm-up: the first message grows the queues and library buffers.
        pair.deliver(SENDER, &parts, data, strategy, &mut copy, scratch)?;
        let mut m = Measured { iters, ..Measured::default() };
        for _ in 0..iters {
            let (t, wire) = callgrind::counted(self.count, || {
                pair.deliver(SENDER, &parts, data, strategy, &mut copy, scratch)
            })?;
            let sent = t.of(SENDER);
            m.both += sent;
            m.sides.client += t.client;
            m.sides.server += t.server;
            match m.wire {
                None => m.wire = Some(wire),
                Some(first) => ensure!(
                    first == wire,
                    "a message put {} records and {} bytes on the wire, an earlier one {} and {}",
                    wire.records,
                    wire.bytes,
                    first.records,
                    first.bytes
                ),
            }
            each(sent);
        }
        Ok(m)
    }
}

/// A case ready to time, or why its library skips it.
pub enum Prepared {
    /// Configured, with the library's settings that the id does not name
    /// ([`TlsLibrary::settings`]).
    Ready {
        /// The runner (boxed: it holds the buffers' handles and the
        /// handshaker).
        runner: Box<Runner>,
        /// E.g. `security policy AWS-CRT-SDK-TLSv1.3` for s2n-tls.
        settings: Option<String>,
    },
    /// The library cannot do the case's parameters: the reason (a named
    /// skip, never run with other parameters).
    Skipped(String),
}

/// Prepares `case` with the library of `libs` it names. Errors: no library
/// of `libs` has that name, or configuring failed for another reason than
/// an unsupported combination (a broken library or environment).
pub fn prepare(case: &Case, libs: &[Box<dyn TlsLibrary>]) -> Result<Prepared> {
    let lib = libs
        .iter()
        .find(|l| l.name() == case.library)
        .ok_or_else(|| anyhow::anyhow!("{case}: library {} is not in this build", case.library))?;
    match Runner::new(case, lib.as_ref()) {
        Ok(runner) => Ok(Prepared::Ready { runner: Box::new(runner), settings: lib.settings(&case.params) }),
        Err(ConfigureError::Unsupported(why)) => Ok(Prepared::Skipped(why)),
        Err(e) => anyhow::bail!("{case}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_cover_every_cache_line_of_a_page_once_per_64_runs() {
        let (mut d, mut r): (Vec<usize>, Vec<usize>) = (0..64).map(buffer_offsets).unzip();
        assert!(d.iter().chain(&r).all(|&o| o % 64 == 0 && o < OFFSET_SPAN));
        d.sort();
        r.sort();
        let all: Vec<usize> = (0..64).map(|i| i * 64).collect();
        assert_eq!((d, r), (all.clone(), all));
        assert_ne!(buffer_offsets(1).0, buffer_offsets(1).1);
    }
}
