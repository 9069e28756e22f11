//! The measurement: N connection pairs of one library and parameter set,
//! all kept alive, taken through handshake, steady writes and idle, with
//! the heap counters read around each step.

use anyhow::{Result, bail, ensure};
use tls_bench_harness::{
    harness::{ConfigureError, Handshaker, Pair, SideTimes, TlsLibrary},
    memory::{self, Scope, Snapshot},
    params::Params,
    transport::Side,
    workload::pattern,
};

use crate::{
    interpose::glibc_in_use_bytes,
    results::{CrossCheck, Row, Sides, Stats, WriteCost},
};

/// glibc's per-chunk header, in bytes: a chunk in use occupies its usable
/// size plus this (mallinfo2's `uordblks` counts whole chunks).
const CHUNK_HEADER: f64 = 8.0;

/// How much to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Connection pairs measured, all alive together.
    pub connections: usize,
    /// Pairs taken through every step first, unmeasured (one-time library
    /// initialisation, caches, lazily built tables).
    pub warmup: usize,
    /// Application bytes per write in the steady send loop.
    pub write_sizes: Vec<usize>,
    /// Writes measured per pair and write size (after a few unmeasured).
    pub writes: usize,
}

/// Unmeasured writes before each measured run, so buffers reach their
/// steady size.
const WARM_WRITES: usize = 4;

/// Per-pair figures of one step, for each side.
#[derive(Default)]
struct PerSide {
    client: Vec<f64>,
    server: Vec<f64>,
}

impl PerSide {
    fn push(&mut self, client: f64, server: f64) {
        self.client.push(client);
        self.server.push(server);
    }

    fn sides(&self) -> Result<Sides> {
        let pair: Vec<f64> = self.client.iter().zip(&self.server).map(|(c, s)| c + s).collect();
        Ok(Sides {
            client: Stats::of(&self.client)?,
            server: Stats::of(&self.server)?,
            pair: Stats::of(&pair)?,
        })
    }
}

/// Measures `lib` on `params`: `Ok(Err(reason))` when the library does not
/// support the combination. Errors: a library failure or a handshake that
/// negotiated other values than `params` (checked on every connection).
pub fn measure(lib: &dyn TlsLibrary, params: Params, opts: &Options) -> Result<Result<Row, String>> {
    let mut hs = match Handshaker::new(lib, lib, params) {
        Ok(h) => h,
        Err(ConfigureError::Unsupported(why)) => return Ok(Err(why)),
        Err(e) => bail!("{}/{params}: {e}", lib.name()),
    };
    let data = pattern(opts.write_sizes.iter().copied().max().unwrap_or(1));
    run(&mut hs, params, opts.warmup, &data, opts)?;
    let mut row = run(&mut hs, params, opts.connections, &data, opts)?;
    row.library = lib.name();
    Ok(Ok(row))
}

/// Drops each side in its own scope.
fn close(pairs: Vec<Pair>) {
    for Pair { client, server, duplex } in pairs {
        memory::in_scope(Scope::Client, || drop(client));
        memory::in_scope(Scope::Server, || drop(server));
        drop(duplex);
    }
}

/// Takes `n` pairs through every step and returns their figures.
fn run(hs: &mut Handshaker, params: Params, n: usize, data: &[u8], opts: &Options) -> Result<Row> {
    ensure!(n > 0, "no connections to measure");
    let mut pairs: Vec<Pair> = Vec::with_capacity(n);
    let (mut held, mut blocks, mut allocs, mut bytes) =
        (PerSide::default(), PerSide::default(), PerSide::default(), PerSide::default());
    let mut peak = Vec::with_capacity(n);

    // Creation and handshake; the pairs stay alive.
    let glibc_before = glibc_in_use_bytes();
    let all_before = Snapshot::take();
    for _ in 0..n {
        let before = Snapshot::take();
        memory::reset_peak();
        let (pair, _) = hs.handshake_checked()?;
        pair.duplex.shrink_queues();
        let after = Snapshot::take();
        let (c, s) = (after.since(&before, Scope::Client), after.since(&before, Scope::Server));
        held.push(c.net_bytes() as f64, s.net_bytes() as f64);
        blocks.push(c.net_blocks() as f64, s.net_blocks() as f64);
        allocs.push(c.allocs as f64, s.allocs as f64);
        bytes.push(c.requested as f64, s.requested as f64);
        peak.push((after.tls_peak - before.tls_live) as f64);
        pairs.push(pair);
        // Outside the pair's window: a new chain of tickets where the
        // server allows no longer one (wolfSSL's, 255 resumptions).
        hs.renew_chain_if_due()?;
    }
    let glibc_after = glibc_in_use_bytes();
    let harness = Snapshot::take().since(&all_before, Scope::Harness);
    let held = held.sides()?;
    let blocks = blocks.sides()?;
    let per_pair = |v: f64| v / n as f64;
    let cross_check = CrossCheck {
        project_bytes_per_pair: held.pair.mean + CHUNK_HEADER * blocks.pair.mean,
        glibc_bytes_per_pair: per_pair(glibc_after as f64 - glibc_before as f64),
        harness_bytes_per_pair: per_pair(
            harness.net_bytes() as f64 + CHUNK_HEADER * harness.net_blocks() as f64,
        ),
    };

    // Steady writes, server to client, in each library's default buffer mode.
    let mut writes = Vec::new();
    let mut scratch = Vec::new();
    for &size in &opts.write_sizes {
        let chunk = &data[..size];
        let (mut s_allocs, mut s_bytes, mut r_allocs, mut r_bytes) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for pair in &mut pairs {
            for _ in 0..WARM_WRITES {
                pair.transfer(Side::Server, chunk, size, &mut scratch)?;
            }
            let before = Snapshot::take();
            for _ in 0..opts.writes {
                pair.transfer(Side::Server, chunk, size, &mut scratch)?;
            }
            let after = Snapshot::take();
            let w = opts.writes as f64;
            let (sender, receiver) =
                (after.since(&before, Scope::Server), after.since(&before, Scope::Client));
            s_allocs.push(sender.allocs as f64 / w);
            s_bytes.push(sender.requested as f64 / w);
            r_allocs.push(receiver.allocs as f64 / w);
            r_bytes.push(receiver.requested as f64 / w);
        }
        writes.push(WriteCost {
            write_size: size,
            sender_allocs: Stats::of(&s_allocs)?,
            sender_bytes: Stats::of(&s_bytes)?,
            receiver_allocs: Stats::of(&r_allocs)?,
            receiver_bytes: Stats::of(&r_bytes)?,
        });
    }
    close(pairs);

    // Idle: new pairs with buffer release asked for from creation (as a
    // server configures it), through the handshake, some writes of each
    // size, and a byte each way (pending tickets are read), then released.
    let mut idle = PerSide::default();
    let mut idle_pairs = Vec::with_capacity(n);
    let mut buffer_release = String::new();
    for _ in 0..n {
        let before = Snapshot::take();
        let mut times = SideTimes::default();
        let mut pair = hs.pair(hs.duplex()?, &mut times)?;
        buffer_release = pair.release_buffers()?.to_string();
        let retired = hs.complete(&mut pair, &mut times)?;
        memory::in_scope(Scope::Client, || drop(retired));
        pair.check(&params)?;
        for &size in &opts.write_sizes {
            for _ in 0..WARM_WRITES {
                pair.transfer(Side::Server, &data[..size], size, &mut scratch)?;
            }
        }
        pair.transfer(Side::Client, b"c", 1, &mut scratch)?;
        pair.transfer(Side::Server, b"s", 1, &mut scratch)?;
        pair.release_buffers()?;
        pair.duplex.shrink_queues();
        let after = Snapshot::take();
        idle.push(
            after.since(&before, Scope::Client).net_bytes() as f64,
            after.since(&before, Scope::Server).net_bytes() as f64,
        );
        idle_pairs.push(pair);
        hs.renew_chain_if_due()?;
    }
    close(idle_pairs);

    Ok(Row {
        library: String::new(),
        params: params.to_string(),
        kind: params.kind.to_string(),
        chain: params.cert.to_string(),
        connections: n,
        held,
        peak_pair: Stats::of(&peak)?,
        idle: idle.sides()?,
        buffer_release,
        handshake_allocs: allocs.sides()?,
        handshake_bytes: bytes.sides()?,
        writes,
        cross_check,
    })
}
