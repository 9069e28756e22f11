//! The measurement core: a case configured and run, the same for every
//! library and every runner (the Criterion benchmarks, `compare`'s workers,
//! the tests). What one iteration of each workload kind does and which
//! part of it is timed is in that kind's module under [`crate::workload`];
//! what the runner adds is the same for all of them:
//!
//! - configuring the library once per case ([`crate::workload::Kind::configure`]),
//!   with the path MTU of DTLS cases ([`crate::bench::MTU_ENV`]);
//! - the data block each iteration sends, made once, and for each run
//!   placed with the receive buffer at other offsets within a page
//!   ([`buffer_offsets`]), so a figure averages over buffer alignments
//!   instead of resting on where one process's allocator put them;
//! - the instruction-count switch ([`Runner::count_instructions`]).

use std::time::Duration;

use anyhow::Result;

use crate::{
    bench::{Case, mtu_from_env},
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    transport::DEFAULT_MTU,
    workload::{Measured, Run, Workload, pattern},
};

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
    /// The block each iteration sends ([`pattern`]), made once; empty for
    /// a handshake.
    block: Vec<u8>,
    /// The allocations holding the data sent and the receive buffer,
    /// [`OFFSET_SPAN`] longer than a block (empty for a handshake).
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
    /// the case's parameters, or (DTLS) its writes do not fit the datagrams
    /// of the MTU ([`crate::workload::Kind::fits_mtu`], checked before any
    /// connection is made: a named skip); [`ConfigureError::Failed`] for a bad
    /// [`crate::bench::MTU_ENV`], any other failure, or when `lib` is not
    /// the case's library.
    pub fn new(case: &Case, lib: &dyn TlsLibrary) -> Result<Runner, ConfigureError> {
        if lib.name() != case.library {
            return Err(anyhow::anyhow!("{case}: runner given library {}", lib.name()).into());
        }
        let mtu = if case.params.datagram { mtu_from_env()? } else { DEFAULT_MTU };
        // The library's own support first (its reason is the one to give),
        // then the MTU: configuring a kind that checks it (a send loop, not
        // a resumption) runs no handshake.
        let mut handshaker = case.workload.kind().configure(lib, &case.params)?;
        case.workload.kind().fits_mtu(&case.params, mtu).map_err(ConfigureError::Unsupported)?;
        if case.params.datagram {
            handshaker.set_mtu(mtu)?;
        }
        let bytes = case.workload.kind().block_bytes();
        let len = if bytes == 0 { 0 } else { bytes + OFFSET_SPAN };
        Ok(Runner {
            workload: case.workload,
            handshaker,
            block: pattern(bytes),
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
    /// Callgrind starts instrumenting here
    /// ([`crate::callgrind::start_instrumentation`]).
    pub fn count_instructions(&mut self) {
        crate::callgrind::start_instrumentation();
        self.count = true;
    }

    /// What Callgrind counts: one warm-up iteration (one-time and lazy
    /// initialisation happen there, outside the count), then `iterations`
    /// checked iterations inside the counted regions
    /// ([`Runner::count_instructions`]). Errors: `iterations` is 0, or as
    /// [`Runner::run`].
    pub fn run_counted(&mut self, iterations: u64) -> Result<()> {
        anyhow::ensure!(iterations > 0, "--iterations must be at least 1");
        self.run(1)?;
        self.count_instructions();
        self.run(iterations)?;
        Ok(())
    }

    /// Runs `iters` checked iterations (see the kind's module for what is
    /// timed). Errors: a library error, a negotiated value that differs from
    /// the case, data that arrived corrupted or incomplete.
    pub fn run(&mut self, iters: u64) -> Result<Measured> {
        self.run_with(iters, &mut |_| {})
    }

    /// [`Runner::run`], also handing `each` the [`crate::workload::Figure::Both`] time of
    /// every iteration (after the clock): a handshake's wall time, a
    /// transfer's sender plus receiver time, a small write's sender time.
    /// For per-iteration latency percentiles; not called for the UDP
    /// workloads, whose threads report totals.
    pub fn run_with(&mut self, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        self.runs += 1;
        let len = self.block.len();
        let (data, scratch): (&[u8], &mut [u8]) = if len == 0 {
            (&[], &mut [])
        } else {
            let (d, r) = buffer_offsets(self.runs);
            let data = &mut self.data[d..d + len];
            data.copy_from_slice(&self.block);
            (data, &mut self.scratch[r..r + len])
        };
        let run = Run {
            handshaker: &mut self.handshaker,
            data,
            scratch,
            count: self.count,
            library: &self.library,
            mtu: self.mtu,
        };
        self.workload.kind().run(run, iters, each)
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
        Ok(runner) => Ok(Prepared::Ready {
            runner: Box::new(runner),
            settings: case.workload.kind().settings(&**lib, &case.params),
        }),
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
