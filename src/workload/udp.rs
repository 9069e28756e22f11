//! The UDP kinds: DTLS handshakes and the send loop over UDP sockets on
//! 127.0.0.1, one thread per side; what is timed there is in
//! [`crate::udp`]. Each side's thread configures the library itself (the
//! connection objects are not `Send`).

use std::time::Duration;

use anyhow::Result;

use super::{
    Both, Figure, Kind, Run,
    send_loop::{LOOP_FIGURES, loop_parameters},
};
use crate::{
    bench::{SEND_LOOP_SENDER, SEND_LOOP_WRITES},
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    params::Params,
    runner::Measured,
    transport::Side,
    udp,
};

/// A DTLS handshake over UDP sockets on 127.0.0.1, one thread per side. Id
/// parameters: the whole [`Params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UdpHandshake;

/// The send loop over UDP sockets on 127.0.0.1, one thread per side, lost
/// and reordered writes counted. Id parameters as the send loop's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UdpSendLoop {
    /// Application bytes per write.
    pub payload: usize,
}

/// Configures `lib` in this thread too, so that a combination it cannot do
/// is a named skip before any socket is opened. Errors: also
/// [`udp::supports`]'s reason, as [`ConfigureError::Unsupported`].
fn configure_checked(lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
    let handshaker = Handshaker::new(lib, lib, *params)?;
    udp::supports(params).map_err(ConfigureError::Unsupported)?;
    Ok(handshaker)
}

impl Kind for UdpHandshake {
    fn groups(&self) -> [&'static str; 3] {
        ["udp-handshake", "udp-handshake-client", "udp-handshake-server"]
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

    fn bench_target(&self, _params: &Params) -> &'static str {
        "dtls"
    }

    fn in_memory(&self) -> bool {
        false
    }

    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        configure_checked(lib, params)
    }

    /// Not calling `each`: the threads report totals.
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let u = udp::handshakes(run.library, *run.handshaker.params(), run.mtu, iters)?;
        Ok(Measured { iters, both: u.both, sides: u.sides, ..Measured::default() })
    }
}

impl Kind for UdpSendLoop {
    fn groups(&self) -> [&'static str; 3] {
        ["udp-send-loop", "udp-send-loop-send", "udp-send-loop-recv"]
    }

    fn both(&self) -> Both {
        Both::Sides
    }

    fn first_side(&self) -> Side {
        SEND_LOOP_SENDER
    }

    fn figures(&self, _sides: bool) -> &'static [Figure] {
        LOOP_FIGURES
    }

    fn bytes_per_iteration(&self) -> Option<u64> {
        Some((self.payload * SEND_LOOP_WRITES) as u64)
    }

    fn writes_per_iteration(&self) -> Option<u64> {
        Some(SEND_LOOP_WRITES as u64)
    }

    fn parameters(&self, params: &Params) -> String {
        loop_parameters(params, self.payload)
    }

    fn bench_target(&self, _params: &Params) -> &'static str {
        "dtls"
    }

    fn in_memory(&self) -> bool {
        false
    }

    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        configure_checked(lib, params)
    }

    /// Not calling `each`: the threads report totals.
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let u = udp::send_loop(run.library, *run.handshaker.params(), self.payload, run.mtu, iters)?;
        Ok(Measured { iters, both: u.both, sides: u.sides, losses: u.losses, ..Measured::default() })
    }
}
