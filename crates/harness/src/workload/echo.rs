//! The socket echo ([`Echo`]): `connections` clients on kept TCP
//! connections, each sending messages of `message` bytes to the library's
//! echo server on 127.0.0.1 and reading them back, through the socket
//! runner (`tls_bench_sockets`: each library's tokio adapter, every echoed
//! byte checked). One iteration is one message on every connection; the
//! time is the wall time of the measured window (all clients connected,
//! their handshakes before it). The server for a library and parameter set
//! starts on first use and serves every later slice.
//!
//! Only `compare --sockets` runs it (no Criterion bench): its slices
//! interleave with the other libraries' as every comparison's do.

use std::time::Duration;

use anyhow::Result;

use super::{Both, Kind, Run, over_sockets};
use crate::{
    error::ConfigureError,
    harness::{Handshaker, TlsLibrary},
    params::Params,
    transport::Side,
    workload::Measured,
};

/// The socket echo: clients at once and bytes per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Echo {
    /// Clients at once, each on one kept connection.
    pub connections: u32,
    /// Bytes per message, each way.
    pub message: u32,
}

impl Kind for Echo {
    fn groups(&self) -> [&'static str; 3] {
        ["echo", "echo-client", "echo-server"]
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

    /// A message on every connection, counted once (the same bytes come
    /// back): MB/s is each way's.
    fn bytes_per_iteration(&self) -> Option<u64> {
        Some(u64::from(self.connections) * u64::from(self.message))
    }

    fn parameters(&self, params: &Params) -> String {
        format!("{params},{}conns,{}B", self.connections, self.message)
    }

    /// No Criterion bench runs it (`compare --sockets` does).
    fn bench_target(&self, _params: &Params) -> &'static str {
        "compare --sockets"
    }

    fn in_memory(&self) -> bool {
        false
    }

    /// The library's own, but for the plaintext floor, which is plaintext
    /// TCP here (no handshake to replay).
    fn settings(&self, lib: &dyn TlsLibrary, params: &Params) -> Option<String> {
        if lib.name() == "plaintext" { Some("TCP without TLS".into()) } else { lib.settings(params) }
    }

    /// The in-memory configuration (the same support), then the socket
    /// library's server and client: a combination either cannot do is a
    /// named skip. Errors: [`ConfigureError::Unsupported`] also in a build
    /// without the socket runner (feature `sockets`).
    fn configure(&self, lib: &dyn TlsLibrary, params: &Params) -> Result<Handshaker, ConfigureError> {
        let handshaker = Handshaker::new(lib, lib, *params)?;
        over_sockets::supports(&lib.name(), params)?;
        Ok(handshaker)
    }

    /// Not calling `each`: the window is timed as a whole.
    fn run(&self, run: Run<'_>, iters: u64, _each: &mut dyn FnMut(Duration)) -> Result<Measured> {
        let load = over_sockets::Load {
            connections: self.connections,
            requests: iters,
            message: self.message,
            new_connection: false,
        };
        let done = over_sockets::slice(run.library, *run.handshaker.params(), load)?;
        Ok(Measured { iters, both: Duration::from_secs_f64(done.seconds), ..Measured::default() })
    }
}
