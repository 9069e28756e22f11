//! Small writes as data: the messages a server writes as several buffers
//! (a header, a body, a trailer), the ways to hand them to a TLS library
//! ([`Strategy`]), and what a record costs on the wire ([`record_overhead`]).
//!
//! The messages and the three strategies follow ssl-writev-benchmark's
//! (`anchors.md`): N write calls for N buffers pay a record's framing and a
//! seal per buffer, one write of a copied buffer or one gather write pays
//! once.

use std::fmt;

use anyhow::{Context, Result, bail, ensure};

use crate::{
    params::{Aead, Protocol},
    transport::{IPV4_UDP_HEADERS, MAX_MTU},
};

/// One message: the sizes of the buffers it is written from, in bytes, in
/// order. `Display` is its component of a benchmark id: sizes joined by
/// `+`, a run of equal sizes as `<size>x<count>`, then `B`, e.g.
/// `50+300+100B`, `50x20B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Message(pub &'static [usize]);

/// The default messages, in bytes: one buffer, two, three, and twenty
/// buffers of 50 bytes.
pub const MESSAGES: [Message; 10] = [
    Message(&[50]),
    Message(&[300]),
    Message(&[5000]),
    Message(&[100, 50]),
    Message(&[50, 300]),
    Message(&[2000, 1000]),
    Message(&[100, 50, 100]),
    Message(&[50, 300, 100]),
    Message(&[1000, 3000, 2000]),
    Message(&[50; 20]),
];

/// The largest message [`Message::parse`] accepts, in bytes: 1 MiB.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// The most buffers [`Message::parse`] accepts in one message (Linux's
/// `IOV_MAX`).
pub const MAX_BUFFERS: usize = 1024;

impl Message {
    /// The buffers' sizes, in bytes.
    pub fn sizes(self) -> &'static [usize] {
        self.0
    }

    /// The message's length: the sum of its buffers, in bytes.
    pub fn len(self) -> usize {
        self.0.iter().sum()
    }

    /// Whether the message has no bytes.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Parses a list of buffer sizes in bytes, comma-separated, where
    /// `<size>x<count>` stands for `count` buffers of `size`: `50,300,100`,
    /// `50x20`, `100,50x3`. The sizes are leaked, so the message lives as
    /// long as the process (a command line's few messages).
    ///
    /// Errors: an empty list, a size that is not a positive integer, more
    /// than [`MAX_BUFFERS`] buffers or [`MAX_MESSAGE_BYTES`] bytes.
    pub fn parse(text: &str) -> Result<Message> {
        let mut sizes = Vec::new();
        let mut total = 0usize;
        for item in text.split(',') {
            let (size, count) = match item.trim().split_once('x') {
                Some((s, c)) => (s, c.parse::<usize>().ok().filter(|&c| c > 0)),
                None => (item.trim(), Some(1)),
            };
            let (Some(size), Some(count)) = (size.parse::<usize>().ok().filter(|&s| s > 0), count) else {
                bail!(
                    "message {text:?}: {item:?} is not a size in bytes (a positive integer, or SIZExCOUNT)"
                );
            };
            // Checked: sizes and counts up to usize::MAX must not wrap
            // past the bounds.
            ensure!(count <= MAX_BUFFERS - sizes.len(), "message {text:?}: more than {MAX_BUFFERS} buffers");
            total = size
                .checked_mul(count)
                .and_then(|bytes| bytes.checked_add(total))
                .filter(|&t| t <= MAX_MESSAGE_BYTES)
                .with_context(|| format!("message {text:?}: more than {MAX_MESSAGE_BYTES} bytes"))?;
            sizes.extend(std::iter::repeat_n(size, count));
        }
        Ok(Message(Vec::leak(sizes)))
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        let mut first = true;
        while let Some(&size) = rest.first() {
            let run = rest.iter().take_while(|&&s| s == size).count();
            if !first {
                f.write_str("+")?;
            }
            first = false;
            if run > 1 {
                write!(f, "{size}x{run}")?;
            } else {
                write!(f, "{size}")?;
            }
            rest = &rest[run..];
        }
        f.write_str("B")
    }
}

/// How a message's buffers are handed to the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// One library write call per buffer.
    PerBuffer,
    /// The buffers copied into one buffer (the copy is timed: it is the
    /// application's cost), then one write call.
    Coalesced,
    /// One call to the library's own gather write
    /// ([`crate::harness::TlsConnection::send_vectored`]); skipped where the
    /// library has none, never emulated.
    Vectored,
}

impl Strategy {
    /// Every strategy.
    pub const ALL: [Strategy; 3] = [Strategy::PerBuffer, Strategy::Coalesced, Strategy::Vectored];

    /// Its name in ids and on command lines: `per-buffer`, `coalesced`,
    /// `vectored`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::PerBuffer => "per-buffer",
            Strategy::Coalesced => "coalesced",
            Strategy::Vectored => "vectored",
        }
    }

    /// The strategy named `name`. Errors: an unknown name (the error lists
    /// the valid ones).
    pub fn from_name(name: &str) -> Result<Strategy> {
        match Strategy::ALL.into_iter().find(|s| s.name() == name) {
            Some(s) => Ok(s),
            None => bail!("unknown strategy {name:?}; valid: per-buffer, coalesced, vectored"),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Records and bytes one message put on the wire, as the transport counted
/// them (record headers parsed from the written bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Wire {
    /// TLS records written.
    pub records: u64,
    /// Bytes written: record headers and bodies.
    pub bytes: u64,
}

impl Wire {
    /// Bytes on the wire beyond the message's own `payload` bytes: record
    /// headers, nonces, content types, tags.
    pub fn overhead(&self, payload: usize) -> i64 {
        self.bytes as i64 - payload as i64
    }
}

/// Bytes a record adds to its plaintext, with no padding, in bytes:
/// - TLS 1.3: 5 (header) + 1 (inner content type) + 16 (AEAD tag) = 22
///   (RFC 8446 section 5.2);
/// - TLS 1.2 AES-GCM: 5 + 8 (explicit nonce) + 16 = 29 (RFC 5288 section 3);
/// - TLS 1.2 ChaCha20-Poly1305: 5 + 16 = 21 (RFC 7905 section 2, no
///   explicit nonce);
/// - DTLS 1.2: the same with a 13-byte header (epoch and sequence number
///   added, RFC 6347 section 4.1): 37 and 29.
///
/// `None` for DTLS 1.3, whose header form (8- or 16-bit sequence number,
/// length present or not) each library chooses (RFC 9147 section 4).
pub fn record_overhead(protocol: Protocol, aead: Aead) -> Option<usize> {
    const TAG: usize = 16;
    let header = match protocol {
        Protocol::Tls12 | Protocol::Tls13 => 5,
        Protocol::Dtls12 => 13,
        Protocol::Dtls13 => return None,
    };
    Some(match (protocol.stream_version(), aead) {
        (Protocol::Tls12, Aead::Aes128Gcm | Aead::Aes256Gcm) => header + 8 + TAG,
        (Protocol::Tls12, Aead::Chacha20Poly1305) => header + TAG,
        _ => header + 1 + TAG,
    })
}

/// The largest record overhead of a datagram protocol, in bytes: DTLS 1.2
/// as [`record_overhead`] (37 with AES-GCM, 29 with ChaCha20-Poly1305);
/// DTLS 1.3 with its longest unified header (RFC 9147 section 4: 1 byte of
/// flags, a 16-bit sequence number and a 16-bit length, no connection id)
/// plus the inner content type and the 16-byte tag, 5 + 1 + 16 = 22
/// (BoringSSL writes that header, `DTLS1_3_RECORD_HEADER_WRITE_LENGTH`).
/// `None` for TLS (no datagrams).
pub fn datagram_record_overhead(protocol: Protocol, aead: Aead) -> Option<usize> {
    match protocol {
        Protocol::Dtls12 => record_overhead(protocol, aead),
        Protocol::Dtls13 => Some(5 + 1 + 16),
        Protocol::Tls12 | Protocol::Tls13 => None,
    }
}

/// The most application data one record carries in one datagram of path
/// MTU `mtu` (bytes, IPv4 and UDP headers included as
/// [`crate::transport::Duplex::datagram`] counts them): `mtu` minus
/// [`IPV4_UDP_HEADERS`] minus [`datagram_record_overhead`], in bytes; at the
/// default MTU of 1500, 1435 for DTLS 1.2 AES-GCM and 1450 for DTLS 1.3.
/// `None` for TLS, or an MTU that leaves no room.
pub fn max_datagram_payload(mtu: usize, protocol: Protocol, aead: Aead) -> Option<usize> {
    let overhead = datagram_record_overhead(protocol, aead)?;
    mtu.checked_sub(IPV4_UDP_HEADERS + overhead).filter(|&n| n > 0)
}

/// The smallest path MTU, in bytes, whose datagrams carry `payload` bytes
/// of application data in one record ([`max_datagram_payload`]'s inverse);
/// `None` for TLS.
pub fn min_mtu_for(payload: usize, protocol: Protocol, aead: Aead) -> Option<usize> {
    Some(payload.saturating_add(IPV4_UDP_HEADERS + datagram_record_overhead(protocol, aead)?))
}

/// Whether writes of `payload` bytes each fit one record in one datagram
/// of path MTU `mtu` with `protocol` and `aead` (always for TLS). Errors: the
/// reason, naming the payload, the MTU, the most it carries and the
/// smallest MTU that fits (or that none does, past [`MAX_MTU`]).
pub fn check_datagram_payload(
    payload: usize,
    mtu: usize,
    protocol: Protocol,
    aead: Aead,
) -> Result<(), String> {
    let Some(overhead) = datagram_record_overhead(protocol, aead) else { return Ok(()) };
    let max = max_datagram_payload(mtu, protocol, aead).unwrap_or(0);
    if payload <= max {
        return Ok(());
    }
    let fits = match min_mtu_for(payload, protocol, aead) {
        Some(m) if m <= MAX_MTU => format!("the smallest MTU that fits {payload} bytes is {m}"),
        _ => format!("no MTU up to {MAX_MTU} fits {payload} bytes"),
    };
    Err(format!(
        "a {payload}-byte write does not fit one datagram at MTU {mtu}: {protocol} with {} carries at \
         most {max} bytes per datagram ({mtu} - {IPV4_UDP_HEADERS} IPv4 and UDP - {overhead} record \
         overhead); {fits} (TLS_BENCH_MTU)",
        match aead {
            Aead::Aes128Gcm => "AES-128-GCM",
            Aead::Aes256Gcm => "AES-256-GCM",
            Aead::Chacha20Poly1305 => "ChaCha20-Poly1305",
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_print_runs_and_parse_back() {
        let shown: Vec<String> = MESSAGES.iter().map(Message::to_string).collect();
        assert_eq!(shown[0], "50B");
        assert_eq!(shown[8], "1000+3000+2000B");
        assert_eq!(shown[9], "50x20B");
        for m in MESSAGES {
            let text = m.to_string().trim_end_matches('B').replace('+', ",");
            assert_eq!(Message::parse(&text).unwrap(), m, "{text}");
        }
        assert_eq!(Message::parse("100, 50x3").unwrap().sizes(), &[100, 50, 50, 50]);
        for bad in ["", "0", "50,", "x3", "50x0", "-1", "5000000", "1x2000"] {
            assert!(Message::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn huge_sizes_and_counts_are_errors_not_overflows() {
        for bad in [
            "9223372036854775808,9223372036854775808",
            "50,50x18446744073709551615",
            "18446744073709551615",
            "2x9223372036854775808",
            "1048576,1",
        ] {
            let e = Message::parse(bad).unwrap_err().to_string();
            assert!(e.contains("more than"), "{bad:?}: {e}");
        }
        assert_eq!(Message::parse("1048575,1").unwrap().len(), MAX_MESSAGE_BYTES);
    }

    #[test]
    fn strategies_by_name() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::from_name(s.name()).unwrap(), s);
        }
        let e = Strategy::from_name("writev").unwrap_err().to_string();
        assert!(e.contains("per-buffer, coalesced, vectored"), "{e}");
    }

    #[test]
    fn record_overheads_match_the_rfcs() {
        assert_eq!(record_overhead(Protocol::Tls13, Aead::Aes256Gcm), Some(22));
        assert_eq!(record_overhead(Protocol::Tls12, Aead::Aes256Gcm), Some(29));
        assert_eq!(record_overhead(Protocol::Tls12, Aead::Chacha20Poly1305), Some(21));
        assert_eq!(record_overhead(Protocol::Dtls12, Aead::Aes128Gcm), Some(37));
        assert_eq!(record_overhead(Protocol::Dtls13, Aead::Aes128Gcm), None);
    }
}
