//! The send loop (DTLS, and TLS for contrast): on a checked connection, one
//! untimed warm-up loop; then per iteration [`SEND_LOOP_WRITES`] writes
//! from [`SEND_LOOP_SENDER`], each checked to leave as one record (DTLS:
//! one datagram), each read by the peer into its own slot of a poisoned
//! buffer and compared, the queues checked empty
//! ([`crate::harness::Pair::send_loop`]). The sender's calls and the
//! receiver's are timed apart.

use std::time::Duration;

use anyhow::Result;

use super::{Both, Figure, Kind, Measured, Run, throughput::block_loops};
use crate::{params::Params, transport::Side};

/// Writes per send-loop iteration: each is one datagram (DTLS) or one
/// record (TLS), so a figure per iteration divides into packets per second.
pub const SEND_LOOP_WRITES: usize = 64;

/// The side that writes in the send loop (client to server, as a media or
/// VPN sender does).
pub const SEND_LOOP_SENDER: Side = Side::Client;

/// [`SEND_LOOP_WRITES`] writes of `payload` bytes from
/// [`SEND_LOOP_SENDER`] to its peer over an established connection. Id
/// parameters: the version, the suite and the write size, e.g.
/// `DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B` (kind, group
/// and chain are fixed by [`crate::bench::send_loop_params`] and still
/// checked every run), so that ids stay within Criterion's 100-character
/// titles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SendLoop {
    /// Application bytes per write.
    pub payload: usize,
}

impl Kind for SendLoop {
    fn groups(&self) -> [&'static str; 3] {
        ["send-loop", "send-loop-send", "send-loop-recv"]
    }

    fn both(&self) -> Both {
        Both::Sides
    }

    fn first_side(&self) -> Side {
        SEND_LOOP_SENDER
    }

    /// The sender and the receiver always apart.
    fn figures(&self, _sides: bool) -> &'static [Figure] {
        &[Figure::Both, Figure::First, Figure::Second]
    }

    fn bytes_per_iteration(&self) -> Option<u64> {
        Some((self.payload * SEND_LOOP_WRITES) as u64)
    }

    fn writes_per_iteration(&self) -> Option<u64> {
        Some(SEND_LOOP_WRITES as u64)
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{},{},{}B", params.protocol(), params.suite, self.payload)
    }

    fn bench_target(&self, _params: &Params) -> &'static str {
        "dtls"
    }

    fn block_bytes(&self) -> usize {
        self.payload * SEND_LOOP_WRITES
    }

    /// Each write must leave as one record in one datagram.
    fn fits_mtu(&self, params: &Params, mtu: usize) -> Result<(), String> {
        crate::writes::check_datagram_payload(self.payload, mtu, params.protocol(), params.suite.aead())
    }

    fn run(&self, run: Run<'_>, iters: u64, each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let payload = self.payload;
        block_loops(run, iters, each, |pair, data, scratch| {
            pair.send_loop(SEND_LOOP_SENDER, data, payload, scratch)
        })
    }
}
