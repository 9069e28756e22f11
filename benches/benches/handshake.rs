//! Handshake benchmarks: one complete handshake per iteration, client and
//! server driven on one thread over the in-memory transport, timed from the
//! creation of both connections to both sides done (see
//! [`tls_bench_harness::runner`]).
//!
//! Group `handshake` (wall time); with `TLS_BENCH_SIDES=1` also
//! `handshake-client` and `handshake-server` (time inside that side's
//! library calls, connection creation included). Ids:
//! `<group>/<params>/<library>`. The negotiated values are checked every
//! iteration, outside the timed region. A resumption iteration includes the
//! client's processing of its fresh session ticket.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};

fn handshake(c: &mut Criterion) {
    common::bench(c, "handshake");
}

criterion_group! {
    name = benches;
    config = common::config("handshake");
    targets = handshake
}
criterion_main!(benches);
