//! What a handshake negotiated, read from the server's first flight as it
//! crossed the wire: the plaintext handshake records before the first
//! ChangeCipherSpec or encrypted record. Used where a library cannot report
//! the value itself: rustls 0.20 and 0.21, s2n-tls before 0.0.29 (releases
//! built by historical-perf) keep the flight and read it with
//! [`server_flight`]; Mbed TLS 3.6 (which has no getter for either) reads it
//! as it passes its I/O callbacks with a [`FlightScanner`], which keeps
//! only a few hundred bytes, inline, so it allocates nothing.
//!
//! Formats: TLS records and handshake messages (RFC 8446 section 5.1 and
//! 4), ServerHello and its `supported_versions`, `key_share` and
//! `pre_shared_key` extensions (RFC 8446 section 4.1.3, 4.2), the TLS 1.2
//! ServerKeyExchange for ECDHE (RFC 8422 section 5.4) and the abbreviated
//! TLS 1.2 handshake (RFC 5246 section 7.3); DTLS 1.2's record and
//! handshake headers (RFC 6347 section 4.1, 4.2.2).

use anyhow::{Result, bail, ensure};

const RECORD_HEADER: usize = 5;
#[cfg(test)]
const CHANGE_CIPHER_SPEC: u8 = 20;
const HANDSHAKE: u8 = 22;
const SERVER_HELLO: u8 = 2;
const CERTIFICATE: u8 = 11;
const SERVER_KEY_EXCHANGE: u8 = 12;
const CERTIFICATE_REQUEST: u8 = 13;
const EXT_PRE_SHARED_KEY: u16 = 41;
const EXT_SUPPORTED_VERSIONS: u16 = 43;
const EXT_KEY_SHARE: u16 = 51;
const TLS13: u16 = 0x0304;
/// ServerHello.random of a HelloRetryRequest (RFC 8446 section 4.1.3).
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91, 0xc2,
    0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// What the server's first flight says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerFlight {
    /// The key exchange group's IANA code: the ServerHello key share (TLS
    /// 1.3) or the ServerKeyExchange curve (TLS 1.2); `None` without one
    /// (an abbreviated TLS 1.2 handshake).
    pub group: Option<u16>,
    /// Whether a session was resumed: the server accepted a PSK (TLS 1.3)
    /// or went from ServerHello to ChangeCipherSpec with no Certificate
    /// (TLS 1.2).
    pub resumed: bool,
    /// Whether the ServerHello selected TLS 1.3.
    pub tls13: bool,
    /// Whether the server asked for the client's certificate: a (D)TLS 1.2
    /// CertificateRequest in the flight. Always false in TLS 1.3, whose
    /// CertificateRequest is encrypted.
    pub certificate_request: bool,
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        ensure!(self.0.len() >= n, "truncated handshake message");
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
}

/// One handshake message: its type and body.
struct Message {
    kind: u8,
    body: Vec<u8>,
}

/// The handshake messages in the plaintext handshake records at the start
/// of `bytes`, up to the first ChangeCipherSpec or encrypted record; the
/// bool says whether such a record ended them.
fn plaintext_messages(bytes: &[u8]) -> Result<(Vec<Message>, bool)> {
    let mut handshake = Vec::new();
    let mut rest = bytes;
    let mut ended = false;
    while rest.len() >= RECORD_HEADER {
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        let Some(payload) = rest.get(RECORD_HEADER..RECORD_HEADER + len) else { break };
        if rest[0] != HANDSHAKE {
            ended = true;
            break;
        }
        handshake.extend_from_slice(payload);
        rest = &rest[RECORD_HEADER + len..];
    }
    let mut messages = Vec::new();
    let mut r = Reader(&handshake);
    while r.0.len() >= 4 {
        let kind = r.u8()?;
        let len = r.take(3)?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        if r.0.len() < len {
            break;
        }
        messages.push(Message { kind, body: r.take(len)?.to_vec() });
    }
    Ok((messages, ended))
}

/// Reads the server's first flight from `bytes`, everything the server sent
/// from its first byte on (more may follow; it is ignored).
///
/// Errors: no complete ServerHello, a HelloRetryRequest (the benchmarks
/// want none), a TLS 1.2 flight that neither shows a certificate and key
/// exchange nor ends in ChangeCipherSpec, or malformed messages.
pub fn server_flight(bytes: &[u8]) -> Result<ServerFlight> {
    let (messages, ended) = plaintext_messages(bytes)?;
    let has = |kind: u8| messages.iter().find(|m| m.kind == kind).map(|m| m.body.as_slice());
    let Some(hello) = has(SERVER_HELLO) else {
        bail!("no complete ServerHello in the server's first {} bytes", bytes.len());
    };
    let seen = Seen {
        certificate: has(CERTIFICATE).is_some(),
        certificate_request: has(CERTIFICATE_REQUEST).is_some(),
    };
    read_flight(hello, has(SERVER_KEY_EXCHANGE), seen, ended)
}

/// Which of the flight's messages that [`read_flight`] reads only the
/// presence of passed.
struct Seen {
    certificate: bool,
    certificate_request: bool,
}

/// What a flight says from its ServerHello's body (`hello`), the start of
/// its ServerKeyExchange's body if it has one, whether it has a
/// Certificate and a CertificateRequest, and whether a ChangeCipherSpec or
/// encrypted record ended it. Errors: as [`server_flight`].
fn read_flight(hello: &[u8], ske: Option<&[u8]>, seen: Seen, ended: bool) -> Result<ServerFlight> {
    let mut r = Reader(hello);
    r.take(2)?; // legacy_version
    ensure!(r.take(32)? != HELLO_RETRY_RANDOM, "the server sent a HelloRetryRequest");
    let session_id = usize::from(r.u8()?);
    r.take(session_id + 2 + 1)?; // session id, cipher suite, compression
    let (mut tls13, mut key_share, mut psk) = (false, None, false);
    if !r.0.is_empty() {
        let len = usize::from(r.u16()?);
        let mut exts = Reader(r.take(len)?);
        while !exts.0.is_empty() {
            let kind = exts.u16()?;
            let len = usize::from(exts.u16()?);
            let mut body = Reader(exts.take(len)?);
            match kind {
                EXT_SUPPORTED_VERSIONS => tls13 = body.u16()? == TLS13,
                EXT_KEY_SHARE => key_share = Some(body.u16()?),
                EXT_PRE_SHARED_KEY => psk = true,
                _ => {}
            }
        }
    }
    if tls13 {
        return Ok(ServerFlight { group: key_share, resumed: psk, tls13, certificate_request: false });
    }
    if let Some(ske) = ske {
        let mut r = Reader(ske);
        ensure!(r.u8()? == 3, "ServerKeyExchange without a named curve");
        let (group, certificate_request) = (Some(r.u16()?), seen.certificate_request);
        return Ok(ServerFlight { group, resumed: false, tls13, certificate_request });
    }
    ensure!(
        !seen.certificate && ended,
        "TLS 1.2 flight with neither a ServerKeyExchange nor an abbreviated handshake"
    );
    Ok(ServerFlight { group: None, resumed: true, tls13, certificate_request: false })
}

/// The most of a ServerHello's body a [`FlightScanner`] keeps: a TLS 1.3
/// ServerHello with a secp384r1 key share is about 160 bytes.
const HELLO_KEPT: usize = 512;
/// The start of a ServerKeyExchange that names its curve: curve type (1
/// byte) and named curve (2).
const SKE_KEPT: usize = 3;

/// Reads the server's first flight as it passes, a chunk at a time, and
/// keeps only what [`server_flight`] reads of it: the ServerHello's body
/// (up to [`HELLO_KEPT`] bytes), the first bytes of the
/// ServerKeyExchange, whether a Certificate and a CertificateRequest
/// passed, and whether a
/// ChangeCipherSpec or encrypted record ended the plaintext handshake.
/// Everything is inline: it allocates nothing. Over DTLS its records and
/// handshake fragments carry DTLS's longer headers (RFC 6347 section 4.1,
/// 4.2.2); a fragment is placed by its offset.
pub struct FlightScanner {
    datagram: bool,
    /// The record header being read, and how much of it has been.
    record_header: [u8; 13],
    record_header_read: usize,
    /// What is left of the current record's payload.
    record_left: usize,
    /// The handshake (fragment) header being read, and how much of it.
    message_header: [u8; 12],
    message_header_read: usize,
    /// The current message: its type, the position in its body of the next
    /// byte, what is left of this fragment (TLS: of the message).
    kind: u8,
    position: usize,
    fragment_left: usize,
    hello: [u8; HELLO_KEPT],
    hello_len: usize,
    hello_read: usize,
    ske: [u8; SKE_KEPT],
    ske_read: usize,
    ske_seen: bool,
    certificate: bool,
    certificate_request: bool,
    ended: bool,
}

impl FlightScanner {
    /// A scanner for TLS records, or DTLS's when `datagram`.
    pub fn new(datagram: bool) -> FlightScanner {
        FlightScanner {
            datagram,
            record_header: [0; 13],
            record_header_read: 0,
            record_left: 0,
            message_header: [0; 12],
            message_header_read: 0,
            kind: 0,
            position: 0,
            fragment_left: 0,
            hello: [0; HELLO_KEPT],
            hello_len: 0,
            hello_read: 0,
            ske: [0; SKE_KEPT],
            ske_read: 0,
            ske_seen: false,
            certificate: false,
            certificate_request: false,
            ended: false,
        }
    }

    /// Whether a ChangeCipherSpec or encrypted record has ended the
    /// plaintext flight: nothing after it is read.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Reads the next `bytes` the server sent (a datagram: one whole
    /// datagram, of one or more records).
    pub fn push(&mut self, mut bytes: &[u8]) {
        let (record_header, message_header) = if self.datagram { (13, 12) } else { (5, 4) };
        while !bytes.is_empty() && !self.ended {
            if self.record_left == 0 {
                let n = (record_header - self.record_header_read).min(bytes.len());
                self.record_header[self.record_header_read..][..n].copy_from_slice(&bytes[..n]);
                self.record_header_read += n;
                bytes = &bytes[n..];
                if self.record_header_read == record_header {
                    self.record_header_read = 0;
                    if self.record_header[0] != HANDSHAKE {
                        self.ended = true;
                        return;
                    }
                    let len = &self.record_header[record_header - 2..record_header];
                    self.record_left = usize::from(u16::from_be_bytes([len[0], len[1]]));
                }
                continue;
            }
            let here = self.record_left.min(bytes.len());
            let (payload, rest) = bytes.split_at(here);
            self.handshake_bytes(payload, message_header);
            self.record_left -= here;
            bytes = rest;
        }
    }

    /// Handshake record payload: message (fragment) headers and bodies.
    fn handshake_bytes(&mut self, mut bytes: &[u8], message_header: usize) {
        let be24 = |b: &[u8]| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]);
        while !bytes.is_empty() {
            if self.fragment_left == 0 {
                let n = (message_header - self.message_header_read).min(bytes.len());
                self.message_header[self.message_header_read..][..n].copy_from_slice(&bytes[..n]);
                self.message_header_read += n;
                bytes = &bytes[n..];
                if self.message_header_read < message_header {
                    continue;
                }
                self.message_header_read = 0;
                let h = self.message_header;
                self.kind = h[0];
                let length = be24(&h[1..4]);
                // DTLS: message_seq (2), fragment_offset (3), fragment_length (3).
                let (offset, fragment) =
                    if self.datagram { (be24(&h[6..9]), be24(&h[9..12])) } else { (0, length) };
                self.position = offset;
                self.fragment_left = fragment;
                match self.kind {
                    SERVER_HELLO => self.hello_len = length,
                    SERVER_KEY_EXCHANGE => self.ske_seen = true,
                    CERTIFICATE => self.certificate = true,
                    CERTIFICATE_REQUEST => self.certificate_request = true,
                    _ => {}
                }
                continue;
            }
            let n = self.fragment_left.min(bytes.len());
            let (body, rest) = bytes.split_at(n);
            let keep = |kept: &mut [u8], read: &mut usize, position: usize| {
                for (i, byte) in body.iter().enumerate() {
                    if let Some(slot) = kept.get_mut(position + i) {
                        *slot = *byte;
                        *read = (*read).max(position + i + 1);
                    }
                }
            };
            match self.kind {
                SERVER_HELLO => keep(&mut self.hello, &mut self.hello_read, self.position),
                SERVER_KEY_EXCHANGE => keep(&mut self.ske, &mut self.ske_read, self.position),
                _ => {}
            }
            self.position += n;
            self.fragment_left -= n;
            bytes = rest;
        }
    }

    /// What the flight read so far says, as [`server_flight`] reads it.
    /// Errors: no whole ServerHello (or one longer than [`HELLO_KEPT`]),
    /// and [`server_flight`]'s.
    pub fn flight(&self) -> Result<ServerFlight> {
        ensure!(
            self.hello_len > 0 && self.hello_read == self.hello_len,
            "no whole ServerHello of at most {HELLO_KEPT} bytes in the server's first flight"
        );
        let ske = self.ske_seen.then_some(&self.ske[..self.ske_read]);
        let seen = Seen { certificate: self.certificate, certificate_request: self.certificate_request };
        read_flight(&self.hello[..self.hello_len], ske, seen, self.ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, payload: &[u8]) -> Vec<u8> {
        let mut r = vec![kind, 3, 3];
        r.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        r.extend_from_slice(payload);
        r
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let len = body.len() as u32;
        let mut m = vec![kind, (len >> 16) as u8, (len >> 8) as u8, len as u8];
        m.extend_from_slice(body);
        m
    }

    fn server_hello(random: [u8; 32], exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut b = vec![3, 3];
        b.extend_from_slice(&random);
        b.push(0); // empty session id
        b.extend_from_slice(&[0x13, 0x01, 0]);
        let mut e = Vec::new();
        for (kind, body) in exts {
            e.extend_from_slice(&kind.to_be_bytes());
            e.extend_from_slice(&(body.len() as u16).to_be_bytes());
            e.extend_from_slice(body);
        }
        b.extend_from_slice(&(e.len() as u16).to_be_bytes());
        b.extend_from_slice(&e);
        message(SERVER_HELLO, &b)
    }

    #[test]
    fn tls13_group_and_psk_are_read_from_the_server_hello() {
        let full = [(43, vec![3, 4]), (51, vec![0, 29, 0, 1, 0xaa])];
        let mut wire = record(HANDSHAKE, &server_hello([7; 32], &full));
        wire.extend(record(CHANGE_CIPHER_SPEC, &[1]));
        wire.extend(record(23, &[0; 40]));
        assert_eq!(
            server_flight(&wire).unwrap(),
            ServerFlight { group: Some(29), resumed: false, tls13: true, certificate_request: false }
        );
        let resumed = [(43, vec![3, 4]), (51, vec![0, 23, 0, 1, 0xaa]), (41, vec![0, 0])];
        let wire = record(HANDSHAKE, &server_hello([7; 32], &resumed));
        assert_eq!(
            server_flight(&wire).unwrap(),
            ServerFlight { group: Some(23), resumed: true, tls13: true, certificate_request: false }
        );
    }

    #[test]
    fn hello_retry_requests_and_short_flights_are_errors() {
        let hrr =
            record(HANDSHAKE, &server_hello(HELLO_RETRY_RANDOM, &[(43, vec![3, 4]), (51, vec![0, 29])]));
        assert!(server_flight(&hrr).unwrap_err().to_string().contains("HelloRetryRequest"));
        let whole = record(HANDSHAKE, &server_hello([7; 32], &[(43, vec![3, 4])]));
        assert!(server_flight(&whole[..whole.len() - 3]).is_err());
    }

    #[test]
    fn tls12_curve_comes_from_the_server_key_exchange_and_resumption_from_the_abbreviated_flight() {
        let mut flight = server_hello([7; 32], &[]);
        flight.extend(message(CERTIFICATE, &[0, 0, 0]));
        flight.extend(message(SERVER_KEY_EXCHANGE, &[3, 0, 23, 65]));
        flight.extend(message(14, &[]));
        // One handshake message split across two records.
        let (a, b) = flight.split_at(10);
        let mut wire = record(HANDSHAKE, a);
        wire.extend(record(HANDSHAKE, b));
        assert_eq!(
            server_flight(&wire).unwrap(),
            ServerFlight { group: Some(23), resumed: false, tls13: false, certificate_request: false }
        );
        let mut abbreviated = record(HANDSHAKE, &server_hello([7; 32], &[]));
        abbreviated.extend(record(CHANGE_CIPHER_SPEC, &[1]));
        assert_eq!(
            server_flight(&abbreviated).unwrap(),
            ServerFlight { group: None, resumed: true, tls13: false, certificate_request: false }
        );
    }

    #[test]
    fn the_scanner_reads_what_server_flight_reads_a_byte_at_a_time() {
        let mut flight = server_hello([7; 32], &[]);
        flight.extend(message(CERTIFICATE, &[0, 0, 0]));
        flight.extend(message(SERVER_KEY_EXCHANGE, &[3, 0, 24, 97]));
        flight.extend(message(CERTIFICATE_REQUEST, &[1, 64, 0, 2, 4, 3, 0, 0]));
        let (a, b) = flight.split_at(10);
        let mut wire = record(HANDSHAKE, a);
        wire.extend(record(HANDSHAKE, b));
        let mut tls13 = record(HANDSHAKE, &server_hello([7; 32], &[(43, vec![3, 4]), (51, vec![0, 29, 0])]));
        tls13.extend(record(CHANGE_CIPHER_SPEC, &[1]));
        tls13.extend(record(23, &[0; 40]));
        for (wire, asked) in [(wire, true), (tls13, false)] {
            let mut scanner = FlightScanner::new(false);
            for byte in &wire {
                scanner.push(std::slice::from_ref(byte));
            }
            assert_eq!(scanner.flight().unwrap(), server_flight(&wire).unwrap());
            assert_eq!(scanner.flight().unwrap().certificate_request, asked);
        }
        let mut scanner = FlightScanner::new(false);
        scanner.push(&record(HANDSHAKE, &server_hello([7; 32], &[]))[..20]);
        assert!(scanner.flight().is_err());
    }

    /// A DTLS 1.2 record (RFC 6347 section 4.1) holding one handshake
    /// fragment (section 4.2.2) of a message of `total` bytes.
    fn dtls_fragment(kind: u8, total: usize, offset: usize, body: &[u8]) -> Vec<u8> {
        let be24 = |n: usize| [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        let mut m = vec![kind];
        m.extend(be24(total));
        m.extend([0, 1]);
        m.extend(be24(offset));
        m.extend(be24(body.len()));
        m.extend_from_slice(body);
        let mut r = vec![HANDSHAKE, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 1];
        r.extend_from_slice(&(m.len() as u16).to_be_bytes());
        r.extend(m);
        r
    }

    #[test]
    fn the_scanner_reads_dtls_records_and_fragments() {
        let hello = server_hello([7; 32], &[]);
        let mut scanner = FlightScanner::new(true);
        scanner.push(&dtls_fragment(SERVER_HELLO, hello.len() - 4, 0, &hello[4..]));
        let cert = [0u8; 30];
        let mut datagram = dtls_fragment(CERTIFICATE, 30, 0, &cert[..20]);
        datagram.extend(dtls_fragment(CERTIFICATE, 30, 20, &cert[20..]));
        scanner.push(&datagram);
        scanner.push(&dtls_fragment(SERVER_KEY_EXCHANGE, 4, 0, &[3, 0, 23, 65]));
        assert!(!scanner.ended());
        assert_eq!(
            scanner.flight().unwrap(),
            ServerFlight { group: Some(23), resumed: false, tls13: false, certificate_request: false }
        );
        let mut abbreviated = FlightScanner::new(true);
        abbreviated.push(&dtls_fragment(SERVER_HELLO, hello.len() - 4, 0, &hello[4..]));
        abbreviated.push(&[CHANGE_CIPHER_SPEC, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 1]);
        assert!(abbreviated.ended());
        assert_eq!(
            abbreviated.flight().unwrap(),
            ServerFlight { group: None, resumed: true, tls13: false, certificate_request: false }
        );
    }
}
