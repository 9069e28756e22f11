//! Handshake benchmarks: one complete handshake per iteration, client and
//! server driven on one thread over the in-memory transport.
//!
//! Groups: `handshake` (both sides, wall time of the handshake loop),
//! `handshake-client` and `handshake-server` (time inside that side's
//! library calls only). Ids: `<group>/<params>/<library>`. Connection
//! creation and the negotiated-value check happen in every iteration but
//! outside the timed region. A resumption iteration includes the client's
//! processing of its fresh session ticket.

use std::time::{Duration, Instant};

mod common;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tls_bench::{
    bench::{handshake_params, handshaker_or_skip},
    harness::SideTimes,
    stacks,
};

/// What a handshake benchmark group times.
#[derive(Clone, Copy)]
enum Timed {
    Pair,
    Client,
    Server,
}

fn handshake(c: &mut Criterion) {
    let libs = stacks::all();
    let params = handshake_params();
    for (name, timed) in
        [("handshake", Timed::Pair), ("handshake-client", Timed::Client), ("handshake-server", Timed::Server)]
    {
        let mut group = c.benchmark_group(name);
        for p in &params {
            for lib in &libs {
                let Some(mut h) = handshaker_or_skip(name, lib.as_ref(), *p) else { continue };
                let id = BenchmarkId::new(p.to_string(), lib.name());
                group.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let mut pair = h.pair().expect("creating a connection pair");
                            let mut times = SideTimes::default();
                            let start = Instant::now();
                            h.run(&mut pair, &mut times).expect("handshake");
                            let wall = start.elapsed();
                            pair.check(p).expect("negotiated values");
                            total += match timed {
                                Timed::Pair => wall,
                                Timed::Client => times.client,
                                Timed::Server => times.server,
                            };
                        }
                        total
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = handshake
}
criterion_main!(benches);
