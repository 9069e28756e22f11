//! A block of application data from [`SENDER`] to its peer. On a checked
//! connection, one untimed warm-up transfer (queues and library buffers
//! grow there), then per iteration [`BLOCK_BYTES`] in writes of one size,
//! checked byte for byte into a buffer poisoned beforehand, the queues
//! checked empty after ([`crate::harness::Pair::transfer_into`]). The
//! sender's and the receiver's calls are timed apart.

use std::time::Duration;

use anyhow::Result;

use super::{Both, Kind, Run, add_sides};
use crate::{
    harness::{Pair, SideTimes},
    params::Params,
    transport::Side,
    workload::Measured,
    workload::{BLOCK_BYTES, SENDER},
};

/// [`BLOCK_BYTES`] of application data from [`SENDER`] to its peer in
/// writes of `write_size` bytes, over an established connection. Id
/// parameters: the [`Params`] and the write size, e.g. `...,1024B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Throughput {
    /// Bytes per write call.
    pub write_size: usize,
}

impl Kind for Throughput {
    fn groups(&self) -> [&'static str; 3] {
        ["throughput", "throughput-send", "throughput-recv"]
    }

    fn both(&self) -> Both {
        Both::Sides
    }

    fn first_side(&self) -> Side {
        SENDER
    }

    fn bytes_per_iteration(&self) -> Option<u64> {
        Some(BLOCK_BYTES as u64)
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{params},{}B", self.write_size)
    }

    fn bench_target(&self, params: &Params) -> &'static str {
        if params.datagram { "dtls" } else { "throughput" }
    }

    fn block_bytes(&self) -> usize {
        BLOCK_BYTES
    }

    fn run(&self, run: Run<'_>, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let write_size = self.write_size;
        block_loops(run, iters, each, |pair, data, scratch| {
            pair.transfer_into(SENDER, data, write_size, scratch)
        })
    }
}

/// The loop a transfer and the send loop share: a checked connection, one
/// untimed warm-up `op` over the run's block, then `iters` timed ones
/// (sender plus receiver time in [`super::Figure::Both`]).
pub(crate) fn block_loops(
    run: Run<'_>,
    iters: u64,
    each: &mut dyn FnMut(Duration),
    mut op: impl FnMut(&mut Pair, &[u8], &mut [u8]) -> Result<SideTimes>,
) -> Result<Measured> {
    let (mut pair, _) = run.handshaker.handshake_checked()?;
    // Warm-up: the first run grows the queues and library buffers.
    op(&mut pair, run.data, run.scratch)?;
    let mut m = Measured { iters, ..Measured::default() };
    for _ in 0..iters {
        let t = crate::callgrind::counted(run.count, || op(&mut pair, run.data, run.scratch))?;
        add_sides(&mut m, t, each);
    }
    Ok(m)
}
