//! DTLS benchmarks (`cargo bench --bench dtls`): handshakes and the send
//! loop over the in-memory datagram transport, for every library with DTLS
//! (the others are skipped with their reason), and the same send loop over
//! TLS 1.2 for contrast (see [`tls_bench_harness::runner`] for what is timed).
//!
//! - `handshake/<kind>,DTLSv1.x,<suite>,<group>,ECDSA-P256/<library>`:
//!   server auth, mTLS and resumption, DTLS 1.2 and 1.3, AES-128-GCM and
//!   AES-256-GCM, x25519 and secp256r1; the negotiated values checked every
//!   iteration. With `TLS_BENCH_SIDES=1` also `handshake-client` and
//!   `handshake-server`.
//! - `send-loop/<params>,<payload>B/<library>`: 64 writes of 1024 bytes
//!   (`TLS_BENCH_MATRIX=full`: also 256 and 1400) from client to server,
//!   each one datagram (one record over TLS), each read back and checked.
//!   Criterion's throughput is in elements: writes (datagrams) per second.
//!   `send-loop-send` and `send-loop-recv` hold the sender's and the
//!   receiver's time apart.
//!
//! The datagram transport's MTU is 1500 bytes (`TLS_BENCH_MTU` sets it).

mod common;

use criterion::{Criterion, criterion_group, criterion_main};

fn dtls(c: &mut Criterion) {
    common::bench(c, "dtls");
}

criterion_group! {
    name = benches;
    config = common::config("dtls");
    targets = dtls
}
criterion_main!(benches);
