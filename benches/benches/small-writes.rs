//! Small-writes benchmarks: one message written from several buffers (a
//! header, a body, a trailer) over an established connection, per buffer,
//! coalesced into one buffer first, or with the library's gather write
//! ([`tls_bench_harness::writes`]; what is timed: [`tls_bench_harness::runner`]).
//!
//! Each iteration sends one message from server to client and reads it
//! whole, checked byte for byte; the figure is the sender's time per
//! message (the `coalesced` copy included). Group `small-writes`; with
//! `TLS_BENCH_SIDES=1` also `small-writes-recv`. Ids:
//! `small-writes/<suite>,<strategy>,<message>/<library>`, e.g.
//! `small-writes/TLS_AES_256_GCM_SHA384,vectored,50x20B/rustls-0.23.46+ring`
//! (server authentication, secp256r1, ECDSA P-256: `bench::small_write_params`,
//! checked every run).
//! The latency percentiles of the same ids come from the `small-writes`
//! binary.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};

fn small_writes(c: &mut Criterion) {
    common::bench(c, "small-writes");
}

criterion_group! {
    name = benches;
    config = common::config("small-writes");
    targets = small_writes
}
criterion_main!(benches);
