//! Throughput benchmarks: one-directional bulk transfer of application data
//! from server to client over an established connection (handshake outside
//! the timed region, a new connection for each Criterion sample).
//!
//! Each iteration sends `BLOCK_BYTES` (64 KiB) in writes of one size, then
//! the client reads all of it; the bytes are compared with what was sent
//! (outside the timed region). `Throughput::Bytes` is the application bytes
//! moved per iteration. Groups: `throughput` (send and receive), and
//! `throughput-send` / `throughput-recv` (time inside the sender's /
//! receiver's library calls only). Ids: `<group>/<params>,<write>B/<library>`.

use std::time::Duration;

mod common;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tls_bench::{
    bench::{BLOCK_BYTES, handshaker_or_skip, pattern, throughput_params, write_sizes},
    stacks,
    transport::Side,
};

/// Which calls a throughput group times.
#[derive(Clone, Copy)]
enum Timed {
    Both,
    Sender,
    Receiver,
}

const SENDER: Side = Side::Server;

fn throughput(c: &mut Criterion) {
    let libs = stacks::all();
    let data = pattern(BLOCK_BYTES);
    for (name, timed) in [
        ("throughput", Timed::Both),
        ("throughput-send", Timed::Sender),
        ("throughput-recv", Timed::Receiver),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(BLOCK_BYTES as u64));
        for p in throughput_params() {
            for &write_size in write_sizes() {
                for lib in &libs {
                    let Some(mut h) = handshaker_or_skip(name, lib.as_ref(), p) else { continue };
                    let id = BenchmarkId::new(format!("{p},{write_size}B"), lib.name());
                    let mut scratch = Vec::with_capacity(BLOCK_BYTES);
                    group.bench_function(id, |b| {
                        b.iter_custom(|iters| {
                            let (mut pair, _) = h.handshake_checked().expect("handshake");
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let times =
                                    pair.transfer(SENDER, &data, write_size, &mut scratch).expect("transfer");
                                total += match timed {
                                    Timed::Both => times.client + times.server,
                                    Timed::Sender => times.of(SENDER),
                                    Timed::Receiver => times.of(SENDER.peer()),
                                };
                            }
                            total
                        })
                    });
                }
            }
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = throughput
}
criterion_main!(benches);
