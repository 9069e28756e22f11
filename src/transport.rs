//! An in-memory duplex transport: two byte queues, no system calls.
//!
//! A [`Duplex`] joins a client [`Endpoint`] and a server [`Endpoint`]. Each
//! endpoint writes into its outgoing queue and reads from its incoming one; a
//! read of an empty queue is "would block" (`0` from [`Endpoint::read`],
//! `ErrorKind::WouldBlock` from `std::io::Read`), never end of file.
//!
//! Per direction it counts bytes, write calls and TLS records. Records are
//! counted by parsing the 5-byte record header (RFC 8446 section 5.1:
//! content type, legacy version, 16-bit length) in the written byte stream,
//! so the counts are of what went on the wire, whatever the library's
//! internal buffering.
//!
//! Each byte is copied twice: into the queue on write, out of it on read.

use crate::memory::{self, Scope};
use std::{
    cell::RefCell,
    collections::VecDeque,
    io::{self, IoSlice, Read, Write},
    rc::Rc,
};

pub use crate::side::Side;

/// Size of a TLS record header in bytes (RFC 8446 section 5.1).
pub const RECORD_HEADER_LEN: usize = 5;
/// TLS content type of application data records.
pub const CONTENT_APPLICATION_DATA: u8 = 23;
/// TLS content type of handshake records.
pub const CONTENT_HANDSHAKE: u8 = 22;

/// Counters for one direction (what one side sent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Bytes written (all record headers and bodies), in bytes.
    pub bytes: u64,
    /// Write calls the library made on the transport.
    pub writes: u64,
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

/// One direction: a byte queue with its counters.
#[derive(Debug, Default)]
struct Pipe {
    queue: VecDeque<u8>,
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
    /// A new, empty duplex.
    pub fn new() -> Duplex {
        Duplex::default()
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
        Endpoint { duplex: self.clone(), side }
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
            inner.to_server.queue.shrink_to_fit();
            inner.to_client.queue.shrink_to_fit();
        });
    }

    /// Bytes queued for `side` to read.
    pub fn pending_for(&self, side: Side) -> usize {
        self.inner.borrow_mut().outgoing(side.peer()).queue.len()
    }
}

/// One side's handle on a [`Duplex`]: writes go to the peer, reads come from it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    duplex: Duplex,
    side: Side,
}

impl Endpoint {
    /// Which side this endpoint is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Queues all of `data` for the peer and counts it as one write. Never
    /// blocks.
    pub fn write_all_bytes(&self, data: &[u8]) {
        self.write_parts(&[data]);
    }

    /// Queues the concatenation of `parts` for the peer, counted as one
    /// write (like `writev`). Never blocks.
    /// Growing the queue is charged to the harness
    /// ([`memory::Scope::Harness`]), not to the calling library; a write
    /// that fits in the queue's capacity (the steady state of a benchmark)
    /// allocates nothing and does no accounting.
    pub fn write_parts(&self, parts: &[&[u8]]) {
        self.write_gathered(parts.iter().copied());
    }

    /// Queues `header` then the concatenation of `body`, counted as one
    /// write, as [`Endpoint::write_parts`] does.
    pub fn write_framed(&self, header: &[u8], body: &[IoSlice<'_>]) {
        self.write_gathered(std::iter::once(header).chain(body.iter().map(|s| &**s)));
    }

    fn write_gathered<'a>(&self, parts: impl Iterator<Item = &'a [u8]> + Clone) {
        let mut inner = self.duplex.inner.borrow_mut();
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
    /// returns how many, `0` when the queue is empty (would block).
    pub fn read_bytes(&self, buf: &mut [u8]) -> usize {
        let mut inner = self.duplex.inner.borrow_mut();
        let pipe = inner.outgoing(self.side.peer());
        // VecDeque's Read takes from the front; it cannot fail.
        pipe.queue.read(buf).unwrap_or(0)
    }

    /// Bytes queued from the peer, ready to read.
    pub fn available(&self) -> usize {
        self.duplex.pending_for(self.side)
    }
}

impl Read for Endpoint {
    /// Reads queued bytes; `ErrorKind::WouldBlock` when none are queued.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
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
    /// Queues all of `buf`; never blocks.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all_bytes(buf);
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
