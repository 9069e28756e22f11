//! Throughput benchmarks: one-directional bulk transfer of application data
//! from server to client over an established connection (handshake and one
//! warm-up transfer outside the timed region, a new connection for each
//! Criterion sample; see [`tls_bench_harness::runner`]).
//!
//! Each iteration sends 64 KiB in writes of one size, then the client reads
//! all of it into a buffer poisoned beforehand; the bytes are compared with
//! what was sent and the queues checked empty (outside the timed region).
//! `Throughput::Bytes` is the application bytes moved per iteration.
//! Group `throughput` (sender plus receiver time); with `TLS_BENCH_SIDES=1`
//! also `throughput-send` / `throughput-recv`. Ids:
//! `<group>/<params>,<write>B/<library>`.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};

fn throughput(c: &mut Criterion) {
    common::bench(c, "throughput");
}

criterion_group! {
    name = benches;
    config = common::config("throughput");
    targets = throughput
}
criterion_main!(benches);
