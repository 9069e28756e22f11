//! The timing rules of the measurement core ([`tls_bench_harness::runner`]), proved
//! on every built library by wrapping it:
//!
//! - connection creation is inside a handshake's timed region and charged
//!   to its own side (a wrapper whose client and server creation take a
//!   known, different time);
//! - a receiver that reports bytes without writing them fails the data
//!   check, even after an honest transfer filled the buffer.

use std::{
    cell::Cell,
    rc::Rc,
    thread,
    time::{Duration, Instant},
};

use anyhow::Result;
use tls_bench_harness::{
    bench::{Case, Figure, Workload},
    error::ConfigureError,
    harness::{Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    libs,
    params::{HandshakeKind, Params},
    runner::Runner,
    transport::{Endpoint, Side},
    workload::Throughput,
    workload::{BLOCK_BYTES, pattern},
};

const CLIENT_CREATION: Duration = Duration::from_millis(40);
const SERVER_CREATION: Duration = Duration::from_millis(120);

/// Waits `d` (measured: a sleep may overshoot, never undershoot).
fn take(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        thread::sleep(d - start.elapsed());
    }
}

/// A library whose connections take a known time to create, and whose
/// receivers can be told to lie.
struct Wrapped {
    inner: Box<dyn TlsLibrary>,
    lie: Rc<Cell<bool>>,
}

struct WrappedConfig {
    inner: Box<dyn Configured>,
    lie: Rc<Cell<bool>>,
}

struct WrappedConn {
    inner: Box<dyn TlsConnection>,
    lie: Rc<Cell<bool>>,
}

impl TlsLibrary for Wrapped {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Ok(Box::new(WrappedConfig { inner: self.inner.configure(params)?, lie: self.lie.clone() }))
    }
}

impl Configured for WrappedConfig {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        take(CLIENT_CREATION);
        Ok(Box::new(WrappedConn { inner: self.inner.client(io, session)?, lie: self.lie.clone() }))
    }
    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        take(SERVER_CREATION);
        Ok(Box::new(WrappedConn { inner: self.inner.server(io)?, lie: self.lie.clone() }))
    }
}

impl TlsConnection for WrappedConn {
    fn handshake(&mut self) -> Result<bool> {
        self.inner.handshake()
    }
    fn send(&mut self, data: &[u8]) -> Result<()> {
        self.inner.send(data)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.lie.get() {
            // Decrypts into a buffer of its own and reports the count only.
            let mut elsewhere = vec![0u8; buf.len()];
            return self.inner.recv(&mut elsewhere);
        }
        self.inner.recv(buf)
    }
    fn shutdown(&mut self) -> Result<()> {
        self.inner.shutdown()
    }
    fn negotiated(&self) -> Result<Negotiated> {
        self.inner.negotiated()
    }
    fn release_buffers(&mut self) -> Result<&'static str> {
        self.inner.release_buffers()
    }
    fn take_session(&mut self) -> Result<Session> {
        self.inner.take_session()
    }
}

fn wrapped() -> Vec<(Wrapped, Rc<Cell<bool>>)> {
    libs::all()
        .into_iter()
        .map(|inner| {
            let lie = Rc::new(Cell::new(false));
            (Wrapped { inner, lie: lie.clone() }, lie)
        })
        .collect()
}

/// The centre of the sweep with handshake `kind`, or secp256r1 where a
/// FIPS build has no x25519.
fn centre(lib: &dyn TlsLibrary, kind: HandshakeKind) -> Params {
    for group in [tls_bench_harness::params::KxGroup::X25519, tls_bench_harness::params::KxGroup::Secp256r1] {
        let params = Params { kind, group, ..Params::default() };
        match lib.configure(&params) {
            Ok(_) => return params,
            Err(ConfigureError::Unsupported(why)) if why.contains("FIPS") => continue,
            Err(e) => panic!("{params}/{}: {e}", lib.name()),
        }
    }
    panic!("{}: neither x25519 nor secp256r1", lib.name())
}

fn runner(lib: &Wrapped, workload: Workload, kind: HandshakeKind) -> Runner {
    let case = Case { workload, params: centre(lib, kind), library: lib.name() };
    Runner::new(&case, lib).unwrap_or_else(|e| panic!("{case}: {e}"))
}

#[test]
fn connection_creation_is_timed_and_charged_to_its_side() {
    for (lib, _) in wrapped() {
        for kind in HandshakeKind::ALL {
            let mut r = runner(&lib, Workload::HANDSHAKE, kind);
            let m = r.run(1).unwrap_or_else(|e| panic!("{}: {e:#}", lib.name()));
            let (client, server) =
                (m.of(Workload::HANDSHAKE, Figure::First), m.of(Workload::HANDSHAKE, Figure::Second));
            let what =
                format!("{} {kind}: client {client:?}, server {server:?}, pair {:?}", lib.name(), m.both);
            // Each side holds its own creation and not the other's.
            assert!(client >= CLIENT_CREATION && client < SERVER_CREATION, "{what}");
            assert!(server >= SERVER_CREATION, "{what}");
            // The pair figure holds both.
            assert!(m.both >= CLIENT_CREATION + SERVER_CREATION && m.both >= client + server, "{what}");
        }
    }
}

#[test]
fn a_receiver_that_writes_nothing_fails_the_data_check() {
    for (lib, lie) in wrapped() {
        let mut r = runner(&lib, Throughput { write_size: 16384 }.into(), HandshakeKind::ServerAuth);
        // Honest: passes, and leaves the expected bytes in the receive buffer.
        r.run(1).unwrap_or_else(|e| panic!("{}: {e:#}", lib.name()));
        lie.set(true);
        let err = r.run(1).expect_err(&format!("{}: a lying receiver passed", lib.name()));
        assert!(format!("{err:#}").contains("corrupted"), "{}: {err:#}", lib.name());
    }
}

#[test]
fn bytes_counted_are_bytes_moved() {
    // The throughput figure's bytes: exactly one block of application data
    // per iteration, which the transport sees as at least that much.
    assert_eq!(
        Workload::from(Throughput { write_size: 1024 }).bytes_per_iteration(),
        Some(BLOCK_BYTES as u64)
    );
    for lib in libs::all() {
        let p = centre(lib.as_ref(), HandshakeKind::ServerAuth);
        let mut h = tls_bench_harness::harness::Handshaker::new(lib.as_ref(), lib.as_ref(), p)
            .unwrap_or_else(|e| panic!("{}: {e}", lib.name()));
        let (mut pair, _) = h.handshake_checked().unwrap();
        pair.duplex.reset_stats();
        let mut scratch = Vec::new();
        pair.transfer(Side::Server, &pattern(BLOCK_BYTES), 1024, &mut scratch).unwrap();
        let sent = pair.duplex.stats(Side::Server).bytes;
        assert!(sent >= BLOCK_BYTES as u64 && sent < 2 * BLOCK_BYTES as u64, "{}: {sent} B", lib.name());
    }
}
