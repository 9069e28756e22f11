//! DTLS over real UDP sockets on 127.0.0.1: the kernel path, to check the
//! in-memory datagram figures against. One client thread and one server
//! thread, each with its own blocking socket (connected to the other's
//! ephemeral port) and its own configuration of the library, made from the
//! same parameters by [`crate::harness::TlsLibrary::configure_datagram`] (the connection
//! objects are not `Send`, so each side lives in its thread).
//!
//! - Handshake: for every iteration a new pair of sockets; each side's
//!   clock runs from the creation of its connection to its side done. The
//!   figure is the wall time from the earlier creation to the later done;
//!   each side's figure holds its own calls (system calls included). The
//!   negotiated values are checked on both sides every iteration, after the
//!   clock. Server authentication and mTLS only: a resumption's client
//!   would have to wait on the socket to learn that no further ticket
//!   comes.
//! - Send loop: on one checked connection, per iteration
//!   [`SEND_LOOP_WRITES`] writes of `payload` bytes from client to server;
//!   the server reads them, then answers with one byte of application data
//!   so the client does not run ahead of the socket buffer (flow control,
//!   outside the clocks). The first 4 bytes of each write hold its number,
//!   the rest the fixed pattern: the server counts the writes that never
//!   came (a read waited [`READ_TIMEOUT`]) as lost and those out of order
//!   (or late, after their batch) as reordered, and fails on any other
//!   difference (corruption is not loss). The figure is the wall time from the first write to the last
//!   read; the sides hold their own calls.

use std::{
    net::UdpSocket,
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, anyhow, ensure};

use crate::{
    harness::{Configured, SideTimes, TlsConnection},
    libs,
    params::{HandshakeKind, Params},
    transport::{Endpoint, Side},
    workload::{pattern, send_loop::SEND_LOOP_WRITES},
};

/// How long a read waits for a datagram before it counts as lost (send
/// loop) or the handshake as stalled, on loopback where a datagram takes
/// microseconds.
pub const READ_TIMEOUT: Duration = Duration::from_millis(200);

/// Reads that may time out in a row before a handshake counts as failed.
const STALLED_READS: u32 = 5;

/// What the server of a UDP send loop saw of the client's writes (each one
/// datagram), over the measured iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// Writes the client made.
    pub sent: u64,
    /// Of those, the ones the server read.
    pub received: u64,
    /// Writes that never arrived (a read waited [`READ_TIMEOUT`]).
    pub lost: u64,
    /// Writes that arrived after a later one (or after their batch was
    /// given up, also counted lost).
    pub reordered: u64,
}

/// What a UDP run measured, summed over its iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpMeasured {
    /// Iterations run.
    pub iters: u64,
    /// Wall time summed over the iterations (see the module doc).
    pub both: Duration,
    /// Time in each side's calls, summed over the iterations.
    pub sides: SideTimes,
    /// Send loop only: the writes sent, received, lost and reordered.
    pub losses: Option<Losses>,
}

/// Whether a UDP run can measure `params`: `Err` with the reason for a
/// resumption (see the module doc) or TLS parameters.
pub fn supports(params: &Params) -> Result<(), String> {
    if !params.datagram {
        return Err("UDP runs DTLS only".into());
    }
    if params.kind == HandshakeKind::Resumption {
        return Err("resumption is not run over UDP: the client would have to wait on the socket to \
                    learn that no further ticket comes"
            .into());
    }
    Ok(())
}

/// A pair of blocking UDP sockets on 127.0.0.1, each connected to the
/// other's ephemeral port, with [`READ_TIMEOUT`] on reads.
fn socket_pair() -> Result<(UdpSocket, UdpSocket)> {
    let bind = || -> Result<UdpSocket> {
        let s = UdpSocket::bind("127.0.0.1:0").context("binding a UDP socket on 127.0.0.1")?;
        s.set_read_timeout(Some(READ_TIMEOUT))?;
        Ok(s)
    };
    let (a, b) = (bind()?, bind()?);
    a.connect(b.local_addr()?)?;
    b.connect(a.local_addr()?)?;
    Ok((a, b))
}

/// The library named `library` of this build, configured for `params` in
/// the calling thread. Errors: no such library, or it cannot do `params`.
fn configure(library: &str, params: &Params) -> Result<Box<dyn Configured>> {
    let lib = libs::all()
        .into_iter()
        .find(|l| l.name() == library)
        .with_context(|| format!("library {library} is not in this build"))?;
    lib.configure_datagram(params).map_err(|e| anyhow!("{library}: {e}"))
}

/// Drives `conn`'s handshake over a blocking socket until done. Errors: a
/// library error, or [`STALLED_READS`] reads in a row that timed out (a
/// lost handshake datagram: the stacks do not retransmit).
fn drive(conn: &mut dyn TlsConnection, side: Side) -> Result<()> {
    let mut stalled = 0;
    while !conn.handshake()? {
        stalled += 1;
        ensure!(stalled < STALLED_READS, "{side:?}: the DTLS handshake over UDP stalled (a datagram lost?)");
    }
    Ok(())
}

/// `side`'s connection of `library` on `socket`, its handshake done and
/// its negotiated values checked (untimed: the send loop's setup). Errors:
/// as [`configure`] and [`drive`], or a negotiated value that differs.
fn connected(
    side: Side,
    library: &str,
    params: &Params,
    socket: UdpSocket,
    mtu: usize,
) -> Result<Box<dyn TlsConnection>> {
    let configured = configure(library, params)?;
    let io = Endpoint::udp(socket, side, mtu).map_err(|e| anyhow!(e))?;
    let mut conn = match side {
        Side::Client => configured.client(io, None)?,
        Side::Server => configured.server(io)?,
    };
    drive(conn.as_mut(), side)?;
    conn.negotiated()?.check(params).map_err(|e| anyhow!("{side:?} {e}"))?;
    Ok(conn)
}

/// One side's end of a handshake: when its clock started and stopped.
struct SideRun {
    start: Instant,
    done: Instant,
}

/// Runs one side of `iters + 1` handshakes (the first a warm-up, not
/// counted) of `library` on `params`, exchanging sockets with the peer
/// thread through `tx`/`rx`. Returns each counted handshake's [`SideRun`].
fn handshake_side(
    side: Side,
    library: &str,
    params: Params,
    mtu: usize,
    iters: u64,
    sockets: mpsc::Receiver<UdpSocket>,
) -> Result<Vec<SideRun>> {
    let configured = configure(library, &params)?;
    let mut runs = Vec::with_capacity(iters as usize);
    for i in 0..=iters {
        let socket = sockets.recv().context("the peer thread stopped")?;
        let io = Endpoint::udp(socket, side, mtu).map_err(|e| anyhow!(e))?;
        let start = Instant::now();
        let mut conn = match side {
            Side::Client => configured.client(io, None)?,
            Side::Server => configured.server(io)?,
        };
        drive(conn.as_mut(), side)?;
        let done = Instant::now();
        conn.negotiated()?.check(&params).map_err(|e| anyhow!("{side:?} {e}"))?;
        if i > 0 {
            runs.push(SideRun { start, done });
        }
    }
    Ok(runs)
}

/// `iters` DTLS handshakes of `library` over UDP on 127.0.0.1 (after one
/// warm-up), path MTU `mtu`. Errors: [`supports`]'s reason, a library
/// error, a handshake that stalled, a negotiated value that differs.
pub fn handshakes(library: &str, params: Params, mtu: usize, iters: u64) -> Result<UdpMeasured> {
    supports(&params).map_err(|e| anyhow!(e))?;
    let (to_client, client_rx) = mpsc::channel();
    let (to_server, server_rx) = mpsc::channel();
    let (client, server) = thread::scope(|s| -> Result<_> {
        let c = s.spawn(|| handshake_side(Side::Client, library, params, mtu, iters, client_rx));
        let v = s.spawn(|| handshake_side(Side::Server, library, params, mtu, iters, server_rx));
        for _ in 0..=iters {
            let (a, b) = socket_pair()?;
            // A send fails only when that side's thread stopped: its error comes from join.
            if to_client.send(a).is_err() || to_server.send(b).is_err() {
                break;
            }
        }
        drop((to_client, to_server));
        let join = |h: thread::ScopedJoinHandle<'_, Result<Vec<SideRun>>>| {
            h.join().map_err(|_| anyhow!("a UDP side thread panicked"))?
        };
        Ok((join(c)?, join(v)?))
    })?;
    let mut m = UdpMeasured { iters, ..UdpMeasured::default() };
    for (c, v) in client.iter().zip(&server) {
        m.both += c.done.max(v.done) - c.start.min(v.start);
        m.sides.client += c.done - c.start;
        m.sides.server += v.done - v.start;
    }
    Ok(m)
}

/// `pattern(payload * SEND_LOOP_WRITES)` with write `n`'s first 4 bytes set
/// to `n` (big endian), for `n` counted from `first`.
fn numbered(block: &[u8], payload: usize, first: u32) -> Vec<u8> {
    let mut data = block.to_vec();
    for (n, chunk) in data.chunks_mut(payload).enumerate() {
        chunk[..4].copy_from_slice(&(first + n as u32).to_be_bytes());
    }
    data
}

/// The client side of the send loop: a checked handshake, then per
/// iteration the writes (timed) and the wait for the server's one byte.
fn send_loop_client(
    library: &str,
    params: Params,
    payload: usize,
    iters: u64,
    socket: UdpSocket,
    mtu: usize,
) -> Result<(Vec<(Instant, Duration)>, u64)> {
    let mut conn = connected(Side::Client, library, &params, socket, mtu)?;
    let block = pattern(payload * SEND_LOOP_WRITES);
    let mut runs = Vec::with_capacity(iters as usize);
    let mut byte = [0u8; 1];
    for i in 0..=iters {
        let data = numbered(&block, payload, (i as usize * SEND_LOOP_WRITES) as u32);
        let start = Instant::now();
        for chunk in data.chunks(payload) {
            conn.send(chunk)?;
        }
        let spent = start.elapsed();
        // The server's go-ahead: its one byte (after any DTLS 1.3 ACKs).
        let mut waited = 0;
        while conn.recv(&mut byte)? == 0 {
            waited += 1;
            ensure!(waited < STALLED_READS, "client: no go-ahead from the server over UDP");
        }
        if i > 0 {
            runs.push((start, spent));
        }
    }
    Ok((runs, (iters as usize * SEND_LOOP_WRITES) as u64))
}

/// What the server side of one send-loop iteration saw: `reordered`
/// includes writes of an earlier batch that came after it was given up
/// (they stay counted lost there).
struct Batch {
    done: Instant,
    spent: Duration,
    received: u64,
    lost: u64,
    reordered: u64,
}

/// The server side of the send loop: a checked handshake, then per
/// iteration the reads (timed), each write's number and bytes checked, and
/// the one-byte go-ahead.
fn send_loop_server(
    library: &str,
    params: Params,
    payload: usize,
    iters: u64,
    socket: UdpSocket,
    mtu: usize,
) -> Result<Vec<Batch>> {
    let mut conn = connected(Side::Server, library, &params, socket, mtu)?;
    let block = pattern(payload * SEND_LOOP_WRITES);
    let mut slot = vec![0u8; payload];
    let mut batches = Vec::with_capacity(iters as usize);
    for i in 0..=iters {
        let first = (i as usize * SEND_LOOP_WRITES) as u32;
        let last = first + SEND_LOOP_WRITES as u32 - 1;
        let mut next = first;
        let (mut received, mut reordered, mut late) = (0, 0, 0);
        let mut spent = Duration::ZERO;
        loop {
            slot.fill(0);
            let start = Instant::now();
            let n = conn.recv(&mut slot)?;
            spent += start.elapsed();
            if n == 0 {
                break; // Timed out: the rest of the batch is lost.
            }
            ensure!(n == payload, "server: a read of {n} bytes, not one {payload}-byte write");
            let number = u32::from_be_bytes([slot[0], slot[1], slot[2], slot[3]]);
            ensure!(number <= last, "server: write {number} is past this batch's last, {last}");
            let k = number as usize % SEND_LOOP_WRITES;
            ensure!(
                slot[4..] == block[k * payload + 4..(k + 1) * payload],
                "server: write {number} arrived corrupted"
            );
            if number < first {
                // A write of an earlier batch, counted lost there: late.
                late += 1;
                continue;
            }
            received += 1;
            if number < next {
                reordered += 1;
            } else {
                next = number + 1;
            }
            if number == last {
                break;
            }
        }
        let done = Instant::now();
        conn.send(b"!")?;
        if i > 0 {
            batches.push(Batch {
                done,
                spent,
                received,
                lost: SEND_LOOP_WRITES as u64 - received,
                reordered: reordered + late,
            });
        }
    }
    Ok(batches)
}

/// `iters` send-loop iterations of `library` over UDP on 127.0.0.1 (after
/// one warm-up iteration), path MTU `mtu`, `payload` bytes per write (at
/// least 4: the write's number). Errors: [`supports`]'s reason, a library
/// error, a stalled handshake or go-ahead, a corrupted write.
pub fn send_loop(
    library: &str,
    params: Params,
    payload: usize,
    mtu: usize,
    iters: u64,
) -> Result<UdpMeasured> {
    supports(&params).map_err(|e| anyhow!(e))?;
    ensure!(payload >= 4, "UDP send-loop writes carry a 4-byte number: {payload} bytes is too few");
    let (a, b) = socket_pair()?;
    let ((client, sent), server) = thread::scope(|s| -> Result<_> {
        let c = s.spawn(|| send_loop_client(library, params, payload, iters, a, mtu));
        let v = s.spawn(|| send_loop_server(library, params, payload, iters, b, mtu));
        let client = c.join().map_err(|_| anyhow!("the UDP client thread panicked"))?;
        let server = v.join().map_err(|_| anyhow!("the UDP server thread panicked"))?;
        Ok((client?, server?))
    })?;
    let mut m = UdpMeasured { iters, ..UdpMeasured::default() };
    let mut losses = Losses { sent, ..Losses::default() };
    for ((start, send), batch) in client.iter().zip(&server) {
        m.both += batch.done - *start;
        m.sides.client += *send;
        m.sides.server += batch.spent;
        losses.received += batch.received;
        losses.lost += batch.lost;
        losses.reordered += batch.reordered;
    }
    m.losses = Some(losses);
    Ok(m)
}
