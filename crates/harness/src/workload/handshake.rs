//! A complete handshake. The clock starts before either connection is
//! created and stops when both sides are done (for resumption: when the
//! client holds its fresh ticket). Each side's figure holds only its own
//! calls, creation included. The negotiated values are checked every
//! iteration and the pair and the session it resumed from are dropped, all
//! after the clock, as is a full handshake that starts a new chain of
//! tickets where the server allows no longer one
//! ([`crate::harness::Handshaker::renew_chain_if_due`]).

use std::time::{Duration, Instant};

use anyhow::Result;

use super::Measured;
use super::{Both, Kind, Run};
use crate::{harness::SideTimes, params::Params, transport::Side};

/// A complete handshake, from the creation of both connections to both
/// sides done. Id parameters: the whole [`Params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handshake;

impl Kind for Handshake {
    fn groups(&self) -> [&'static str; 3] {
        ["handshake", "handshake-client", "handshake-server"]
    }

    fn both(&self) -> Both {
        Both::Wall
    }

    fn first_side(&self) -> Side {
        Side::Client
    }

    fn parameters(&self, params: &Params) -> String {
        params.to_string()
    }

    fn bench_target(&self, params: &Params) -> &'static str {
        if params.datagram { "dtls" } else { "handshake" }
    }

    fn run(&self, run: Run<'_>, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let mut m = Measured { iters, ..Measured::default() };
        for _ in 0..iters {
            let duplex = run.handshaker.duplex()?;
            let mut times = SideTimes::default();
            let handshaker = &mut *run.handshaker;
            let start = Instant::now();
            let done =
                crate::callgrind::counted_handshake(run.count, || handshaker.run_on(duplex, &mut times))?;
            let elapsed = start.elapsed();
            m.both += elapsed;
            each(elapsed);
            done.pair.check(run.handshaker.params())?;
            m.sides.client += times.client;
            m.sides.server += times.server;
            // The pair and the session it resumed from are freed here, after the clock.
            drop(done);
            run.handshaker.renew_chain_if_due()?;
        }
        Ok(m)
    }
}
