//! The plaintext floor: no TLS, the same transport and driving loop.
//!
//! Its handshake replays, byte for byte and write for write, the flights a
//! real TLS library sent for the same parameters (recorded once at
//! configuration time), so it moves the same bytes, records and writes as
//! that handshake and costs only the harness. Its data transfer frames each
//! write of up to 16 KiB as one application_data record (5-byte header, no
//! encryption), so record counts stay meaningful. What it reports as
//! negotiated is what the recorded library negotiated.

use std::{io::IoSlice, rc::Rc};

use anyhow::{Result, bail, ensure};

use crate::{
    harness::{
        ConfigureError, Configured, Handshaker, Negotiated, Session, SideTimes, TlsConnection, TlsLibrary,
    },
    params::Params,
    transport::{CONTENT_APPLICATION_DATA, CapturedWrite, Duplex, Endpoint, RECORD_HEADER_LEN, Side},
};

/// Largest record body, in bytes (RFC 8446 section 5.1: 2^14).
pub const MAX_FRAGMENT: usize = 16384;

/// The plaintext floor; named `plaintext`. It records its handshake script
/// from the first of `references` that supports the parameters.
pub struct Plaintext {
    /// Libraries whose handshake may be replayed, in order of preference.
    pub references: Vec<Box<dyn TlsLibrary>>,
}

/// A recorded handshake: every write in order, and what each side negotiated.
struct Script {
    writes: Vec<CapturedWrite>,
    client: Negotiated,
    server: Negotiated,
    source: String,
}

impl Plaintext {
    /// Records the handshake of `reference` for `params`: every write of
    /// the (for resumption: resumed) handshake, up to and including the
    /// client's reading of its new session ticket.
    fn record(reference: &dyn TlsLibrary, params: &Params) -> Result<Script, ConfigureError> {
        let mut h = Handshaker::new(reference, reference, *params)?;
        let duplex = Duplex::new();
        duplex.start_capture();
        let pair = h.run_on(duplex, &mut SideTimes::default())?.pair;
        let writes = pair.duplex.take_capture();
        pair.check(params)?;
        Ok(Script {
            writes,
            client: pair.client.negotiated()?,
            server: pair.server.negotiated()?,
            source: reference.name(),
        })
    }

    /// The name of the library whose handshake is replayed for `params`.
    pub fn source_for(&self, params: &Params) -> Result<String, ConfigureError> {
        Ok(self.script(params)?.source)
    }

    fn script(&self, params: &Params) -> Result<Script, ConfigureError> {
        let mut reasons = Vec::new();
        for r in &self.references {
            match Plaintext::record(r.as_ref(), params) {
                Ok(s) => return Ok(s),
                Err(ConfigureError::Unsupported(why)) => reasons.push(format!("{}: {why}", r.name())),
                Err(e) => return Err(e),
            }
        }
        Err(ConfigureError::Unsupported(format!(
            "no TLS library to record a handshake from ({})",
            reasons.join("; ")
        )))
    }
}

impl TlsLibrary for Plaintext {
    fn name(&self) -> String {
        "plaintext".to_string()
    }

    fn settings(&self, params: &Params) -> Option<String> {
        self.source_for(params).ok().map(|s| format!("replays the handshake of {s}"))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Ok(Box::new(Rc::new(self.script(params)?)))
    }

    /// The same: the floor frames gathered buffers itself.
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        self.configure(params)
    }
}

impl Configured for Rc<Script> {
    fn client(&self, io: Endpoint, _session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(PlainConn::new(self.clone(), io)))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(PlainConn::new(self.clone(), io)))
    }
}

/// The header of an application_data record of `len` bytes. Errors: more
/// than 2^16 - 1 bytes.
fn record_header(len: usize) -> Result<[u8; RECORD_HEADER_LEN]> {
    let len = u16::try_from(len)?.to_be_bytes();
    Ok([CONTENT_APPLICATION_DATA, 3, 3, len[0], len[1]])
}

struct PlainConn {
    script: Rc<Script>,
    io: Endpoint,
    /// Next write of the script to send or expect.
    cursor: usize,
    /// Bytes left in the application data record being read.
    body_left: usize,
    scratch: Vec<u8>,
}

impl PlainConn {
    fn new(script: Rc<Script>, io: Endpoint) -> PlainConn {
        let largest = script.writes.iter().map(|w| w.bytes.len()).max().unwrap_or(0);
        PlainConn { script, io, cursor: 0, body_left: 0, scratch: vec![0; largest] }
    }
}

impl TlsConnection for PlainConn {
    fn handshake(&mut self) -> Result<bool> {
        while let Some(w) = self.script.writes.get(self.cursor) {
            if w.from == self.io.side() {
                self.io.write_all_bytes(&w.bytes);
            } else {
                let want = w.bytes.len();
                if self.io.available() < want {
                    return Ok(false);
                }
                let got = self.io.read_bytes(&mut self.scratch[..want]);
                ensure!(got == want && self.scratch[..want] == w.bytes[..], "handshake flight corrupted");
            }
            self.cursor += 1;
        }
        Ok(true)
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        for chunk in data.chunks(MAX_FRAGMENT) {
            self.io.write_parts(&[&record_header(chunk.len())?, chunk]);
        }
        Ok(())
    }

    /// Gathers `parts` into records of up to [`MAX_FRAGMENT`] bytes, each
    /// written with its header as one write. A message of one record (every
    /// default message) is written straight from `parts`; a longer one
    /// lists each record's pieces in a new vector first.
    fn send_vectored(&mut self, parts: &[IoSlice<'_>]) -> Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total <= MAX_FRAGMENT {
            self.io.write_framed(&record_header(total)?, parts);
            return Ok(());
        }
        let mut record: Vec<IoSlice<'_>> = Vec::new();
        let mut room = MAX_FRAGMENT;
        for part in parts {
            let mut part: &[u8] = part;
            while !part.is_empty() {
                let n = room.min(part.len());
                record.push(IoSlice::new(&part[..n]));
                part = &part[n..];
                room -= n;
                if room == 0 {
                    self.io.write_framed(&record_header(MAX_FRAGMENT)?, &record);
                    record.clear();
                    room = MAX_FRAGMENT;
                }
            }
        }
        if room < MAX_FRAGMENT {
            self.io.write_framed(&record_header(MAX_FRAGMENT - room)?, &record);
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.body_left == 0 {
                if self.io.available() < RECORD_HEADER_LEN {
                    break;
                }
                let mut header = [0u8; RECORD_HEADER_LEN];
                self.io.read_bytes(&mut header);
                if header[0] != CONTENT_APPLICATION_DATA {
                    bail!("plaintext: unexpected record type {}", header[0]);
                }
                self.body_left = usize::from(u16::from_be_bytes([header[3], header[4]]));
                continue;
            }
            let n = self.body_left.min(buf.len() - filled);
            let got = self.io.read_bytes(&mut buf[filled..filled + n]);
            if got == 0 {
                break;
            }
            filled += got;
            self.body_left -= got;
        }
        Ok(filled)
    }

    fn shutdown(&mut self) -> Result<()> {
        Ok(())
    }

    fn negotiated(&self) -> Result<Negotiated> {
        ensure!(self.cursor == self.script.writes.len(), "handshake not complete");
        Ok(match self.io.side() {
            Side::Client => self.script.client,
            Side::Server => self.script.server,
        })
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("none: keeps a scratch buffer of the largest handshake flight")
    }

    fn take_session(&mut self) -> Result<Session> {
        // The recorded script already carried the ticket.
        Ok(Session(Box::new(())))
    }
}
