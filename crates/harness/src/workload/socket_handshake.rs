//! Handshakes over TCP sockets ([`SocketHandshake`]): `connections` clients
//! at once, each opening a new connection to the library's echo server on
//! 127.0.0.1, completing the handshake, echoing one byte (so that a TLS
//! 1.3 ticket arrives, and the connection is proven to carry data), and
//! closing, again and again: `load --new-connection -s 1`. One iteration is
//! one handshake; its time is the wall time of the measured window over
//! the handshakes in it, so 10^9 / ns is handshakes per second. With the
//! resumption kind every client first fetches a ticket on a full handshake
//! before the window: the window holds resumed handshakes only (at most
//! one chain of them per client, [`over_sockets::RESUMPTIONS_PER_CHAIN`]),
//! and each slice checks that it did.
//!
//! Only `compare --sockets` runs it (no Criterion bench), interleaved with
//! the other libraries' slices as every comparison is.

use std::time::Duration;

use anyhow::{Result, ensure};

use super::{Both, Kind, Run, over_sockets};
use crate::{
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    params::{HandshakeKind, Params},
    transport::Side,
    workload::Measured,
};

/// Handshakes on new TCP connections, `connections` clients at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocketHandshake {
    /// Clients at once, each one connection at a time.
    pub connections: u32,
}

impl Kind for SocketHandshake {
    fn groups(&self) -> [&'static str; 3] {
        ["socket-handshake", "socket-handshake-client", "socket-handshake-server"]
    }

    fn both(&self) -> Both {
        Both::Wall
    }

    fn first_side(&self) -> Side {
        Side::Client
    }

    /// Only [`super::Figure::Both`]: the two ends share the machine's
    /// cores, and their times are not apart.
    fn figures(&self, _sides: bool) -> &'static [super::Figure] {
        &[super::Figure::Both]
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{params},{}conns", self.connections)
    }

    /// No Criterion bench runs it (`compare --sockets` does).
    fn bench_target(&self, _params: &Params) -> &'static str {
        "compare --sockets"
    }

    fn in_memory(&self) -> bool {
        false
    }

    /// The library's own, but for the plaintext floor: a TCP connection
    /// carrying one byte each way.
    fn settings(&self, lib: &dyn TlsLibrary, params: &Params) -> Option<String> {
        if lib.name() == "plaintext" {
            Some("TCP without TLS: connect, 1-byte echo, close".into())
        } else {
            lib.settings(params)
        }
    }

    /// As [`super::Echo`]'s: the in-memory configuration, then the socket
    /// library's server and client; either's refusal is a named skip.
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        let handshaker = Handshaker::new(lib, lib, *params)?;
        over_sockets::supports(&lib.name(), params)?;
        Ok(handshaker)
    }

    /// `iters` handshakes, rounded up to a whole number per client, and
    /// under resumption at most one chain's
    /// ([`over_sockets::RESUMPTIONS_PER_CHAIN`]) per client (the
    /// [`Measured::iters`] says how many). Errors: any failure over the
    /// sockets, or a window that did not hold exactly the handshakes of
    /// the id (resumed ones for resumption, full ones otherwise).
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let params = *run.handshaker.params();
        let connections = u64::from(self.connections);
        let mut requests = iters.div_ceil(connections).max(1);
        if params.kind == HandshakeKind::Resumption {
            // One chain per client: a longer one would start again with a
            // full handshake inside the window.
            requests = requests.min(over_sockets::RESUMPTIONS_PER_CHAIN);
        }
        let load =
            over_sockets::Load { connections: self.connections, requests, message: 1, new_connection: true };
        let done = over_sockets::slice(run.library, params, load)?;
        let handshakes = requests * connections;
        ensure!(done.requests == handshakes, "{} requests echoed of {handshakes}", done.requests);
        if done.tls {
            let (full, resumed) = match params.kind {
                HandshakeKind::Resumption => (connections, handshakes),
                _ => (handshakes, 0),
            };
            ensure!(
                (done.full, done.resumed) == (full, resumed),
                "{} full and {} resumed handshakes, where {full} full and {resumed} resumed were due",
                done.full,
                done.resumed
            );
        }
        Ok(Measured { iters: handshakes, both: Duration::from_secs_f64(done.seconds), ..Measured::default() })
    }
}
