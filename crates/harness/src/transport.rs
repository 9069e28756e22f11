//! An in-memory duplex transport: two queues, no system calls.
//!
//! A [`Duplex`] joins a client [`Endpoint`] and a server [`Endpoint`]. Each
//! endpoint writes into its outgoing queue and reads from its incoming one; a
//! read of an empty queue is "would block" (`0` from [`Endpoint::read_bytes`],
//! `ErrorKind::WouldBlock` from `std::io::Read`), never end of file.
//!
//! A duplex is a byte stream (for TLS, [`Duplex::new`]) or carries
//! datagrams (for DTLS, [`Duplex::datagram`]): then each `Write::write` is
//! one datagram of at most [`Duplex::max_datagram`] bytes, and each
//! `Read::read` returns one whole datagram, in order. Nothing is lost or
//! reordered; a datagram over the size, or one that does not fit the
//! reader's buffer (UDP would truncate it), is an error, not a silent loss.
//!
//! Per direction it counts bytes, write calls, datagrams and records.
//! Records are counted by parsing their headers in what was written (TLS:
//! the 5-byte header of RFC 8446 section 5.1 in the byte stream, whatever
//! the write boundaries; DTLS: the 13-byte header of RFC 6347 section 4.1
//! or the unified header of RFC 9147 section 4, within each datagram), so
//! the counts are of what went on the wire, whatever the library's internal
//! buffering.
//!
//! Each byte is copied twice: into the queue on write, out of it on read.
//!
//! An [`Endpoint`] can also stand on a connected UDP socket
//! ([`Endpoint::udp`], for [`crate::workload::udp::socket`]): the same datagram calls, with
//! system calls, lost datagrams possible, and only the sender's counters.

use crate::memory::{self, Scope};
use std::{
    cell::{Cell, RefCell},
    collections::VecDeque,
    io::{self, IoSlice, Read, Write},
    net::UdpSocket,
    rc::Rc,
};

pub use crate::side::Side;

/// Size of a TLS record header in bytes (RFC 8446 section 5.1).
pub const RECORD_HEADER_LEN: usize = 5;
/// TLS content type of application data records.
pub const CONTENT_APPLICATION_DATA: u8 = 23;
/// TLS content type of handshake records.
pub const CONTENT_HANDSHAKE: u8 = 22;

/// The default path MTU of a datagram duplex, in bytes (Ethernet's).
pub const DEFAULT_MTU: usize = 1500;
/// Bytes of IPv4 (20) and UDP (8) headers in each datagram: the largest
/// datagram payload is the MTU minus this (RFC 6347 section 4.1.1).
pub const IPV4_UDP_HEADERS: usize = 28;
/// The smallest path MTU a datagram duplex takes, in bytes: the least every
/// IPv4 host must accept (RFC 791).
pub const MIN_MTU: usize = 576;
/// The largest path MTU a datagram duplex takes, in bytes (IPv4's largest
/// packet).
pub const MAX_MTU: usize = 65535;

/// Checks a path MTU in bytes. Errors: outside [`MIN_MTU`] to [`MAX_MTU`].
pub fn check_mtu(mtu: usize) -> Result<(), String> {
    if (MIN_MTU..=MAX_MTU).contains(&mtu) {
        Ok(())
    } else {
        Err(format!("an MTU of {mtu} bytes: it must be from {MIN_MTU} to {MAX_MTU}"))
    }
}

/// Size of a DTLS 1.2 record header in bytes (RFC 6347 section 4.1).
pub const DTLS_RECORD_HEADER_LEN: usize = 13;

/// Counters for one direction (what one side sent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Bytes written (all record headers and bodies), in bytes; for a
    /// datagram duplex the datagrams' payloads (IP and UDP headers not
    /// included).
    pub bytes: u64,
    /// Write calls the library made on the transport.
    pub writes: u64,
    /// Datagrams sent (datagram duplex only; one per write): what a packets
    /// per second figure counts.
    pub datagrams: u64,
    /// TLS records whose header was written.
    pub records: u64,
    /// Of those, records of content type application_data (23). In TLS 1.3
    /// every encrypted record has this outer type, handshake messages too.
    pub application_data_records: u64,
}

/// Streaming parser that counts records in a byte stream, whatever the
/// write boundaries.
#[derive(Clone, Copy, Debug, Default)]
struct RecordCounter {
    header: [u8; RECORD_HEADER_LEN],
    header_len: usize,
    body_left: usize,
}

impl RecordCounter {
    fn feed(&mut self, mut data: &[u8], stats: &mut DirectionStats) {
        while !data.is_empty() {
            if self.body_left > 0 {
                let n = self.body_left.min(data.len());
                self.body_left -= n;
                data = &data[n..];
                continue;
            }
            let n = (RECORD_HEADER_LEN - self.header_len).min(data.len());
            self.header[self.header_len..self.header_len + n].copy_from_slice(&data[..n]);
            self.header_len += n;
            data = &data[n..];
            if self.header_len == RECORD_HEADER_LEN {
                stats.records += 1;
                if self.header[0] == CONTENT_APPLICATION_DATA {
                    stats.application_data_records += 1;
                }
                self.body_left = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                self.header_len = 0;
            }
        }
    }
}

/// Counts the DTLS records of one datagram: DTLSPlaintext/DTLSCiphertext
/// headers of 13 bytes (RFC 6347 section 4.1) and DTLS 1.3's unified
/// header (RFC 9147 section 4: first bits `001`, then flags for a
/// connection id, a 16-bit sequence number and a length). A record without
/// a length runs to the end of the datagram. Returns the records and how
/// many of them were application data or encrypted (unified header);
/// `None` when the datagram does not parse as DTLS records.
pub fn dtls_records(mut datagram: &[u8]) -> Option<(u64, u64)> {
    let (mut records, mut app) = (0, 0);
    while !datagram.is_empty() {
        let first = datagram[0];
        let (header, body) = if first & 0xE0 == 0x20 {
            // Connection ids are never negotiated here; their length is not
            // in the header.
            if first & 0x10 != 0 {
                return None;
            }
            let seq = if first & 0x08 != 0 { 2 } else { 1 };
            let header = 1 + seq + if first & 0x04 != 0 { 2 } else { 0 };
            let body = if first & 0x04 != 0 {
                let at = 1 + seq;
                usize::from(u16::from_be_bytes([*datagram.get(at)?, *datagram.get(at + 1)?]))
            } else {
                datagram.len().checked_sub(header)?
            };
            app += 1;
            (header, body)
        } else {
            let h = datagram.get(..DTLS_RECORD_HEADER_LEN)?;
            if first == CONTENT_APPLICATION_DATA {
                app += 1;
            }
            (DTLS_RECORD_HEADER_LEN, usize::from(u16::from_be_bytes([h[11], h[12]])))
        };
        datagram = datagram.get(header + body..)?;
        records += 1;
    }
    Some((records, app))
}

thread_local! {
    /// Why this thread's last datagram was refused ([`Endpoint::take_refused`]).
    static REFUSED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// One direction: a byte queue with its counters, and for a datagram duplex
/// the length of each queued datagram.
#[derive(Debug, Default)]
struct Pipe {
    queue: VecDeque<u8>,
    datagrams: VecDeque<usize>,
    stats: DirectionStats,
    counter: RecordCounter,
}

/// A write seen by the transport, kept when capture is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedWrite {
    /// Who wrote.
    pub from: Side,
    /// The bytes of that write call.
    pub bytes: Vec<u8>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Bytes the client sent, the server reads.
    to_server: Pipe,
    /// Bytes the server sent, the client reads.
    to_client: Pipe,
    capture: Option<Vec<CapturedWrite>>,
    /// The path MTU of a datagram duplex; `None` for a byte stream.
    mtu: Option<usize>,
}

impl Inner {
    fn outgoing(&mut self, side: Side) -> &mut Pipe {
        match side {
            Side::Client => &mut self.to_server,
            Side::Server => &mut self.to_client,
        }
    }
}

/// The shared state of one in-memory connection. Cloning gives another
/// handle to the same queues.
#[derive(Clone, Debug, Default)]
pub struct Duplex {
    inner: Rc<RefCell<Inner>>,
}

impl Duplex {
    /// A new, empty byte-stream duplex (for TLS).
    pub fn new() -> Duplex {
        Duplex::default()
    }

    /// A new, empty datagram duplex (for DTLS) with path MTU `mtu` in bytes:
    /// datagrams of up to `mtu -` [`IPV4_UDP_HEADERS`] bytes. Errors: an MTU
    /// [`check_mtu`] refuses.
    pub fn datagram(mtu: usize) -> Result<Duplex, String> {
        check_mtu(mtu)?;
        let d = Duplex::default();
        d.inner.borrow_mut().mtu = Some(mtu);
        Ok(d)
    }

    /// The largest datagram payload in bytes (MTU minus IPv4 and UDP
    /// headers), `None` for a byte stream.
    pub fn max_datagram(&self) -> Option<usize> {
        self.inner.borrow().mtu.map(|m| m - IPV4_UDP_HEADERS)
    }

    /// Fault injection for tests of the checks: removes datagram `index`
    /// (0 is the next) of those queued for `side`, or with `swap_with`
    /// exchanges it with that one, and returns whether they were queued. The
    /// transport itself never loses or reorders a datagram. Always `false`
    /// on a byte stream.
    #[doc(hidden)]
    pub fn tamper(&self, side: Side, index: usize, swap_with: Option<usize>) -> bool {
        let mut inner = self.inner.borrow_mut();
        if inner.mtu.is_none() {
            return false;
        }
        let pipe = inner.outgoing(side.peer());
        let n = pipe.datagrams.len();
        if index >= n || swap_with.is_some_and(|j| j >= n) {
            return false;
        }
        let mut grams: Vec<Vec<u8>> =
            pipe.datagrams.iter().map(|&len| pipe.queue.drain(..len).collect()).collect();
        match swap_with {
            Some(j) => grams.swap(index, j),
            None => drop(grams.remove(index)),
        }
        pipe.datagrams = grams.iter().map(Vec::len).collect();
        pipe.queue = grams.concat().into();
        true
    }

    /// Datagrams queued for `side` to read (0 for a byte stream).
    pub fn datagrams_for(&self, side: Side) -> usize {
        self.inner.borrow_mut().outgoing(side.peer()).datagrams.len()
    }

    /// Starts keeping a copy of every write (used to record a handshake for
    /// the plaintext floor); [`Duplex::take_capture`] returns them.
    pub fn start_capture(&self) {
        self.inner.borrow_mut().capture = Some(Vec::new());
    }

    /// The writes captured since [`Duplex::start_capture`], in order; capture stops.
    pub fn take_capture(&self) -> Vec<CapturedWrite> {
        self.inner.borrow_mut().capture.take().unwrap_or_default()
    }

    /// The endpoint of `side`.
    pub fn endpoint(&self, side: Side) -> Endpoint {
        Endpoint { link: Link::Memory(self.clone()), side }
    }

    /// Counters of what `side` sent since creation or the last reset.
    pub fn stats(&self, side: Side) -> DirectionStats {
        self.inner.borrow_mut().outgoing(side).stats
    }

    /// Zeroes both directions' counters (queued bytes stay).
    pub fn reset_stats(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.to_server.stats = DirectionStats::default();
        inner.to_client.stats = DirectionStats::default();
    }

    /// Frees the queues' spare capacity (all of it when they are empty), so
    /// a memory measurement holds only what the libraries hold.
    pub fn shrink_queues(&self) {
        memory::in_scope(Scope::Harness, || {
            let mut inner = self.inner.borrow_mut();
            let Inner { to_server, to_client, .. } = &mut *inner;
            for pipe in [to_server, to_client] {
                pipe.queue.shrink_to_fit();
                pipe.datagrams.shrink_to_fit();
            }
        });
    }

    /// Bytes queued for `side` to read.
    pub fn pending_for(&self, side: Side) -> usize {
        self.inner.borrow_mut().outgoing(side.peer()).queue.len()
    }
}

/// A connected UDP socket as a datagram endpoint, with what it sent.
#[derive(Debug)]
struct UdpLink {
    socket: UdpSocket,
    max_datagram: usize,
    sent: Cell<DirectionStats>,
}

/// What an [`Endpoint`] moves bytes over.
#[derive(Clone, Debug)]
enum Link {
    /// One side of an in-memory [`Duplex`].
    Memory(Duplex),
    /// A connected UDP socket (the `udp` runner's).
    Udp(Rc<UdpLink>),
}

/// One side's handle on a [`Duplex`] (writes go to the peer, reads come
/// from it), or on a connected UDP socket ([`Endpoint::udp`]).
#[derive(Clone, Debug)]
pub struct Endpoint {
    link: Link,
    side: Side,
}

impl Endpoint {
    /// `side`'s endpoint on `socket`, a UDP socket connected to the peer's
    /// (reads should time out: a timed-out read is "would block"), for
    /// datagrams of path MTU `mtu`. Errors: an MTU [`Duplex::datagram`]
    /// refuses.
    pub fn udp(socket: UdpSocket, side: Side, mtu: usize) -> Result<Endpoint, String> {
        Duplex::datagram(mtu)?;
        let link = UdpLink { socket, max_datagram: mtu - IPV4_UDP_HEADERS, sent: Cell::default() };
        Ok(Endpoint { link: Link::Udp(Rc::new(link)), side })
    }

    /// Which side this endpoint is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The in-memory duplex; panics on a UDP endpoint (the byte-stream
    /// calls are for in-memory TLS only: a harness bug).
    fn duplex(&self) -> &Duplex {
        match &self.link {
            Link::Memory(d) => d,
            Link::Udp(_) => panic!("a byte-stream call on a UDP endpoint"),
        }
    }

    /// The largest datagram payload in bytes, `None` on a byte stream: a
    /// DTLS library is told this as its MTU (e.g. OpenSSL's `SSL_set_mtu`,
    /// which excludes the IP and UDP headers).
    pub fn max_datagram(&self) -> Option<usize> {
        match &self.link {
            Link::Memory(d) => d.max_datagram(),
            Link::Udp(u) => Some(u.max_datagram),
        }
    }

    /// What this endpoint sent over UDP (datagrams, bytes, records); `None`
    /// for an in-memory endpoint (its [`Duplex::stats`] has both sides).
    pub fn udp_stats(&self) -> Option<DirectionStats> {
        match &self.link {
            Link::Memory(_) => None,
            Link::Udp(u) => Some(u.sent.get()),
        }
    }

    /// Why the transport refused the last datagram a library wrote through
    /// this endpoint (or a clone of it), since the last call: the message
    /// of [`Endpoint::send_datagram`]'s error. A library may report a
    /// failed write in its own words ("unexpected EOF") having dropped the
    /// I/O error; its stack reads the cause here, on the thread that wrote
    /// (the reason is kept per thread, as `errno` is: an endpoint or a
    /// duplex holding it would cost bytes or an allocation per connection,
    /// made inside a handshake's timed region and counted to the library).
    pub fn take_refused(&self) -> Option<String> {
        REFUSED.with(|r| r.borrow_mut().take())
    }

    /// Sends `data` as one datagram. Errors: a byte-stream duplex, a
    /// datagram longer than [`Endpoint::max_datagram`] (a library that
    /// ignores its MTU), or one that is not DTLS records; over UDP, the
    /// socket's error. Each error's message is also kept for
    /// [`Endpoint::take_refused`].
    pub fn send_datagram(&self, data: &[u8]) -> io::Result<()> {
        self.try_send_datagram(data).inspect_err(|e| REFUSED.with(|r| *r.borrow_mut() = Some(e.to_string())))
    }

    fn try_send_datagram(&self, data: &[u8]) -> io::Result<()> {
        let max = self.max_datagram().ok_or_else(|| io::Error::other("a byte stream has no datagrams"))?;
        if data.len() > max {
            return Err(io::Error::other(format!(
                "a datagram of {} bytes exceeds the largest of {max} (MTU {})",
                data.len(),
                max + IPV4_UDP_HEADERS
            )));
        }
        let (records, app) = dtls_records(data).ok_or_else(|| {
            io::Error::other(format!("a datagram of {} bytes does not parse as DTLS records", data.len()))
        })?;
        if let Link::Udp(u) = &self.link {
            let n = u.socket.send(data)?;
            if n != data.len() {
                return Err(io::Error::other(format!("UDP sent {n} of a datagram's {} bytes", data.len())));
            }
            let mut s = u.sent.get();
            s.writes += 1;
            s.datagrams += 1;
            s.bytes += n as u64;
            s.records += records;
            s.application_data_records += app;
            u.sent.set(s);
            return Ok(());
        }
        let mut inner = self.duplex().inner.borrow_mut();
        let side = self.side;
        if let Some(capture) = inner.capture.as_mut() {
            capture.push(CapturedWrite { from: side, bytes: data.to_vec() });
        }
        let pipe = inner.outgoing(side);
        if pipe.queue.capacity() - pipe.queue.len() < data.len()
            || pipe.datagrams.capacity() == pipe.datagrams.len()
        {
            memory::in_scope(Scope::Harness, || {
                pipe.queue.reserve(data.len());
                pipe.datagrams.reserve(1);
            });
        }
        pipe.queue.extend(data);
        pipe.datagrams.push_back(data.len());
        pipe.stats.writes += 1;
        pipe.stats.datagrams += 1;
        pipe.stats.bytes += data.len() as u64;
        pipe.stats.records += records;
        pipe.stats.application_data_records += app;
        Ok(())
    }

    /// Moves the next datagram from the peer into `buf`; `Ok(None)` when
    /// none is queued. Errors: a byte-stream duplex, or a datagram longer
    /// than `buf` (UDP would truncate it; here it stays queued).
    pub fn recv_datagram(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        if self.max_datagram().is_none() {
            return Err(io::Error::other("a byte stream has no datagrams"));
        }
        if let Link::Udp(u) = &self.link {
            // Blocks until a datagram or the socket's read timeout. A
            // datagram longer than `buf` would be truncated: refused by
            // peeking at its length first is not possible without a copy,
            // so `buf` must hold the largest datagram.
            if buf.len() < u.max_datagram {
                return Err(io::Error::other(format!(
                    "a read buffer of {} bytes is smaller than the largest datagram, {}",
                    buf.len(),
                    u.max_datagram
                )));
            }
            return match u.socket.recv(buf) {
                Ok(n) => Ok(Some(n)),
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => Ok(None),
                Err(e) => Err(e),
            };
        }
        let mut inner = self.duplex().inner.borrow_mut();
        let pipe = inner.outgoing(self.side.peer());
        let Some(&len) = pipe.datagrams.front() else { return Ok(None) };
        if len > buf.len() {
            return Err(io::Error::other(format!(
                "a datagram of {len} bytes does not fit a read buffer of {}",
                buf.len()
            )));
        }
        pipe.datagrams.pop_front();
        for (b, q) in buf[..len].iter_mut().zip(pipe.queue.drain(..len)) {
            *b = q;
        }
        Ok(Some(len))
    }

    /// Queues all of `data` for the peer and counts it as one write. Never
    /// blocks. Byte streams only (as [`Endpoint::write_parts`]).
    pub fn write_all_bytes(&self, data: &[u8]) {
        self.write_parts(&[data]);
    }

    /// Queues the concatenation of `parts` for the peer, counted as one
    /// write (like `writev`). Never blocks.
    /// Growing the queue is charged to the harness
    /// ([`memory::Scope::Harness`]), not to the calling library; a write
    /// that fits in the queue's capacity (the steady state of a benchmark)
    /// allocates nothing and does no accounting.
    ///
    /// Byte streams only: on a datagram duplex it panics (a harness bug; the
    /// DTLS stacks write through `std::io::Write`).
    pub fn write_parts(&self, parts: &[&[u8]]) {
        self.write_gathered(parts.iter().copied());
    }

    /// Queues `header` then the concatenation of `body`, counted as one
    /// write, as [`Endpoint::write_parts`] does.
    pub fn write_framed(&self, header: &[u8], body: &[IoSlice<'_>]) {
        self.write_gathered(std::iter::once(header).chain(body.iter().map(|s| &**s)));
    }

    fn write_gathered<'a>(&self, parts: impl Iterator<Item = &'a [u8]> + Clone) {
        let mut inner = self.duplex().inner.borrow_mut();
        assert!(inner.mtu.is_none(), "a byte-stream write on a datagram duplex");
        let side = self.side;
        if let Some(capture) = inner.capture.as_mut() {
            capture.push(CapturedWrite { from: side, bytes: parts.clone().flatten().copied().collect() });
        }
        let pipe = inner.outgoing(side);
        let total: usize = parts.clone().map(<[u8]>::len).sum();
        if pipe.queue.capacity() - pipe.queue.len() < total {
            memory::in_scope(Scope::Harness, || pipe.queue.reserve(total));
        }
        pipe.stats.writes += 1;
        for data in parts {
            pipe.queue.extend(data);
            pipe.stats.bytes += data.len() as u64;
            let Pipe { stats, counter, .. } = &mut *pipe;
            counter.feed(data, stats);
        }
    }

    /// Moves up to `buf.len()` queued bytes from the peer into `buf`;
    /// returns how many, `0` when the queue is empty (would block). Byte
    /// streams only: on a datagram duplex it panics (a harness bug).
    pub fn read_bytes(&self, buf: &mut [u8]) -> usize {
        let mut inner = self.duplex().inner.borrow_mut();
        assert!(inner.mtu.is_none(), "a byte-stream read on a datagram duplex");
        let pipe = inner.outgoing(self.side.peer());
        // VecDeque's Read takes from the front; it cannot fail.
        pipe.queue.read(buf).unwrap_or(0)
    }

    /// Copies up to `buf.len()` queued bytes from the peer into `buf`,
    /// leaving them queued; returns how many. Byte streams only (as
    /// [`Endpoint::read_bytes`]).
    pub fn peek_bytes(&self, buf: &mut [u8]) -> usize {
        let mut inner = self.duplex().inner.borrow_mut();
        assert!(inner.mtu.is_none(), "a byte-stream peek on a datagram duplex");
        let queue = &inner.outgoing(self.side.peer()).queue;
        let n = buf.len().min(queue.len());
        for (b, q) in buf[..n].iter_mut().zip(queue.iter()) {
            *b = *q;
        }
        n
    }

    /// Bytes queued from the peer, ready to read.
    pub fn available(&self) -> usize {
        self.duplex().pending_for(self.side)
    }

    /// Whether a read would return data (a byte or a datagram), without
    /// reading it: what a library polls before it reads (GnuTLS's pull
    /// timeout function). In memory, whether bytes are queued now; over
    /// UDP, whether a datagram arrives within the socket's read timeout, as
    /// a read waits for one ([`Endpoint::udp`]).
    pub fn readable(&self) -> bool {
        match &self.link {
            Link::Memory(d) => d.pending_for(self.side) > 0,
            // A peek leaves the datagram queued (truncated here only).
            Link::Udp(u) => u.socket.peek(&mut [0u8; 1]).is_ok(),
        }
    }
}

impl Read for Endpoint {
    /// Reads queued bytes (a datagram duplex: one whole datagram,
    /// [`Endpoint::recv_datagram`]); `ErrorKind::WouldBlock` when none are
    /// queued.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.max_datagram().is_some() {
            return self.recv_datagram(buf)?.ok_or_else(|| io::ErrorKind::WouldBlock.into());
        }
        if buf.is_empty() {
            return Ok(0);
        }
        match self.read_bytes(buf) {
            0 => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok(n),
        }
    }
}

impl Write for Endpoint {
    /// Queues all of `buf` (a datagram duplex: as one datagram,
    /// [`Endpoint::send_datagram`], whose errors it returns); never blocks.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.max_datagram().is_some() {
            self.send_datagram(buf)?;
        } else {
            self.write_all_bytes(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(content_type: u8, body_len: u16) -> Vec<u8> {
        let mut r = vec![content_type, 3, 3];
        r.extend_from_slice(&body_len.to_be_bytes());
        r.extend(std::iter::repeat_n(0xAB, usize::from(body_len)));
        r
    }

    #[test]
    fn counts_records_across_arbitrary_write_boundaries() {
        let mut stream = Vec::new();
        stream.extend(record(CONTENT_HANDSHAKE, 100));
        stream.extend(record(CONTENT_APPLICATION_DATA, 16384));
        stream.extend(record(CONTENT_APPLICATION_DATA, 0));
        stream.extend(record(21, 2));
        for chunk in [1, 2, 3, 5, 7, 4096, stream.len()] {
            let d = Duplex::new();
            let client = d.endpoint(Side::Client);
            for piece in stream.chunks(chunk) {
                client.write_all_bytes(piece);
            }
            let s = d.stats(Side::Client);
            assert_eq!(s.bytes, stream.len() as u64);
            assert_eq!(s.writes, stream.len().div_ceil(chunk) as u64);
            assert_eq!(s.records, 4, "chunk {chunk}");
            assert_eq!(s.application_data_records, 2);
            assert_eq!(d.stats(Side::Server), DirectionStats::default());
        }
    }

    #[test]
    fn empty_read_would_block_and_bytes_arrive_in_order() {
        let d = Duplex::new();
        let mut client = d.endpoint(Side::Client);
        let mut server = d.endpoint(Side::Server);
        let mut buf = [0u8; 8];
        assert_eq!(server.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        client.write_all(b"hello").unwrap();
        client.write_all(b" world").unwrap();
        assert_eq!(server.available(), 11);
        assert_eq!(client.available(), 0);
        assert_eq!(server.read(&mut buf).unwrap(), 8);
        assert_eq!(&buf, b"hello wo");
        assert_eq!(server.read(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"rld");
        assert_eq!(server.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn datagrams_keep_their_boundaries_and_size_limits() {
        assert!(Duplex::datagram(575).is_err());
        let d = Duplex::datagram(DEFAULT_MTU).unwrap();
        assert_eq!(d.max_datagram(), Some(1472));
        let mut client = d.endpoint(Side::Client);
        let mut server = d.endpoint(Side::Server);
        // Two DTLS 1.2 records in one datagram, then a unified-header record
        // without a length (to the end of the datagram), then one with.
        let mut two = vec![22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 1, 2, 3];
        two.extend([23, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 9]);
        client.write_all(&two).unwrap();
        client.write_all(&[0x28, 7, 1, 2, 3, 4]).unwrap();
        client.write_all(&[0x2C, 7, 7, 0, 1, 5]).unwrap();
        let s = d.stats(Side::Client);
        assert_eq!((s.datagrams, s.writes, s.records, s.application_data_records), (3, 3, 4, 3));
        assert_eq!(s.bytes, (two.len() + 6 + 6) as u64);
        assert_eq!(d.datagrams_for(Side::Server), 3);
        let mut small = [0u8; 4];
        assert!(server.read(&mut small).unwrap_err().to_string().contains("does not fit"));
        let mut buf = [0u8; 1472];
        assert_eq!(server.read(&mut buf).unwrap(), two.len());
        assert_eq!(&buf[..two.len()], &two[..]);
        assert_eq!(server.read(&mut buf).unwrap(), 6);
        assert_eq!(server.read(&mut buf).unwrap(), 6);
        assert_eq!(server.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let big = vec![0u8; 1473];
        assert!(client.write(&big).unwrap_err().to_string().contains("exceeds the largest of 1472"));
        assert!(client.write(&[22, 0xFE]).unwrap_err().to_string().contains("does not parse"));
        assert_eq!(d.stats(Side::Client).datagrams, 3);
    }

    #[test]
    fn capture_keeps_writes_in_order() {
        let d = Duplex::new();
        d.start_capture();
        d.endpoint(Side::Client).write_all_bytes(b"a");
        d.endpoint(Side::Server).write_all_bytes(b"bc");
        let c = d.take_capture();
        assert_eq!(
            c,
            vec![
                CapturedWrite { from: Side::Client, bytes: b"a".to_vec() },
                CapturedWrite { from: Side::Server, bytes: b"bc".to_vec() },
            ]
        );
        d.endpoint(Side::Client).write_all_bytes(b"d");
        assert!(d.take_capture().is_empty());
    }
}
