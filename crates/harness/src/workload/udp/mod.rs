//! The UDP kinds: a kind of the in-memory duplex run over UDP sockets on
//! 127.0.0.1 instead, one thread per side ([`Udp`]): DTLS handshakes and
//! the send loop. What is timed there is in [`socket`]; each side's
//! thread configures the library itself (the connection objects are not
//! `Send`). Ids, figures and bytes are the in-memory kind's, under groups
//! of their own (`udp-handshake`, `udp-send-loop`).

use std::time::Duration;

use anyhow::Result;

use super::{Both, Figure, Handshake, Kind, Measured, Run, SendLoop};
use crate::{
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    params::Params,
    transport::Side,
};

pub mod socket;

pub use socket::Losses;

/// The in-memory kind `K` run over UDP sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Udp<K>(pub K);

/// A DTLS handshake over UDP, server authentication or mTLS.
pub type UdpHandshake = Udp<Handshake>;

/// The send loop over UDP, lost and reordered writes counted.
pub type UdpSendLoop = Udp<SendLoop>;

/// An in-memory kind that also runs over UDP ([`socket`]).
pub trait OverUdp: Kind {
    /// The benchmark groups over UDP ([`Kind::groups`]).
    const GROUPS: [&'static str; 3];

    /// Runs `iters` iterations over UDP with `params` (the threads report
    /// totals). Errors: as [`socket`]'s.
    fn run_over_udp(&self, params: Params, mtu: usize, library: &str, iters: u64) -> Result<Measured>;
}

impl OverUdp for Handshake {
    const GROUPS: [&'static str; 3] = ["udp-handshake", "udp-handshake-client", "udp-handshake-server"];

    fn run_over_udp(&self, params: Params, mtu: usize, library: &str, iters: u64) -> Result<Measured> {
        let u = socket::handshakes(library, params, mtu, iters)?;
        Ok(Measured { iters, both: u.both, sides: u.sides, ..Measured::default() })
    }
}

impl OverUdp for SendLoop {
    const GROUPS: [&'static str; 3] = ["udp-send-loop", "udp-send-loop-send", "udp-send-loop-recv"];

    fn run_over_udp(&self, params: Params, mtu: usize, library: &str, iters: u64) -> Result<Measured> {
        let u = socket::send_loop(library, params, self.payload, mtu, iters)?;
        Ok(Measured { iters, both: u.both, sides: u.sides, losses: u.losses, ..Measured::default() })
    }
}

impl<K: OverUdp> Kind for Udp<K> {
    fn groups(&self) -> [&'static str; 3] {
        K::GROUPS
    }

    fn both(&self) -> Both {
        self.0.both()
    }

    fn first_side(&self) -> Side {
        self.0.first_side()
    }

    fn figures(&self, sides: bool) -> &'static [Figure] {
        self.0.figures(sides)
    }

    fn bytes_per_iteration(&self) -> Option<u64> {
        self.0.bytes_per_iteration()
    }

    fn writes_per_iteration(&self) -> Option<u64> {
        self.0.writes_per_iteration()
    }

    fn parameters(&self, params: &Params) -> String {
        self.0.parameters(params)
    }

    fn bench_target(&self, _params: &Params) -> &'static str {
        "dtls"
    }

    fn in_memory(&self) -> bool {
        false
    }

    fn fits_mtu(&self, params: &Params, mtu: usize) -> Result<(), String> {
        self.0.fits_mtu(params, mtu)
    }

    /// Configures `lib` in this thread too, so that a combination it cannot
    /// do is a named skip before any socket is opened. Errors: also
    /// [`udp::supports`]'s reason, as [`ConfigureError::Unsupported`].
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        let handshaker = Handshaker::new(lib, lib, *params)?;
        socket::supports(params).map_err(ConfigureError::Unsupported)?;
        Ok(handshaker)
    }

    /// Not calling `each`: the threads report totals.
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        self.0.run_over_udp(*run.handshaker.params(), run.mtu, run.library, iters)
    }
}
