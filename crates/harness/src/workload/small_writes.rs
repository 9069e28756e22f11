//! Small writes: on a checked connection, one untimed warm-up message; then
//! per iteration one message from [`SENDER`], written from its buffers as
//! the strategy says (timed: the sender's calls, and for `coalesced` the
//! copy), read whole by the peer into a poisoned buffer and checked (the
//! receiver's calls timed into its side only), the records and bytes it put
//! on the wire checked to be the same every iteration
//! ([`crate::harness::Pair::deliver`]).

use std::{io::IoSlice, rc::Rc, time::Duration};

use anyhow::{Result, ensure};

use super::{Both, Kind, Run};
use crate::{
    error::ConfigureError,
    harness::{Configured, Handshaker, TlsLibrary},
    params::Params,
    transport::Side,
    workload::Measured,
    workload::SENDER,
    writes::{Message, Strategy},
};

/// One message from [`SENDER`] to its peer over an established connection,
/// written from several buffers as `strategy` says; the peer reads it whole
/// and checks it (untimed in the group's figure, which is the sender's
/// time). Id parameters: only the suite (which names the version: the other
/// parameters are always [`crate::bench::small_write_params`]'s, still
/// checked every run), the strategy and the message, e.g.
/// `TLS_AES_256_GCM_SHA384,vectored,50+300+100B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SmallWrites {
    /// The buffers' sizes.
    pub message: Message,
    /// How they are handed to the library.
    pub strategy: Strategy,
}

impl Kind for SmallWrites {
    fn groups(&self) -> [&'static str; 3] {
        ["small-writes", "small-writes-send", "small-writes-recv"]
    }

    fn both(&self) -> Both {
        Both::First
    }

    fn first_side(&self) -> Side {
        SENDER
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{},{},{}", params.suite, self.strategy, self.message)
    }

    fn bench_target(&self, params: &Params) -> &'static str {
        if params.datagram { "dtls" } else { "small-writes" }
    }

    fn block_bytes(&self) -> usize {
        self.message.len()
    }

    /// The vectored strategy needs the library's gather write, set up in
    /// its configs ([`TlsLibrary::configure_vectored`]).
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        if self.strategy == Strategy::Vectored {
            let configured: Rc<dyn Configured> = lib.configure_vectored(params)?.into();
            Handshaker::from_configured(configured.clone(), configured, *params)
        } else {
            Handshaker::new(lib, lib, *params)
        }
    }

    fn run(&self, run: Run<'_>, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let (data, strategy) = (run.data, self.strategy);
        let mut parts = Vec::with_capacity(self.message.sizes().len());
        let mut rest = data;
        for &size in self.message.sizes() {
            let (part, tail) = rest.split_at(size);
            parts.push(IoSlice::new(part));
            rest = tail;
        }
        let scratch = run.scratch;
        let mut copy = Vec::with_capacity(data.len());
        let (mut pair, _) = run.handshaker.handshake_checked()?;
        // Warm-up: the first message grows the queues and library buffers.
        pair.deliver(SENDER, &parts, data, strategy, &mut copy, scratch)?;
        let mut m = Measured { iters, ..Measured::default() };
        for _ in 0..iters {
            let (t, wire) = crate::callgrind::counted(run.count, || {
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
