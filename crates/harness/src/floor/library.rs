//! The crypto floor as a library: connections that run exactly the
//! primitives of [`crate::floor::ops::handshake`] for their parameters,
//! through one crypto implementation ([`Backend`]), over the same
//! transport and drivers as every TLS library; named
//! `crypto-floor-<implementation>` (e.g. `crypto-floor-aws-lc-rs-1.19.0`).
//!
//! Each side's flight is one handshake record of the fields the next
//! operations need
//! (key shares, ciphertexts, a signature, a ticket, the last HMAC as its
//! Finished); the peer's certificates are read once at configuration, as
//! parsed certificates (parsing is the library's own work, not crypto). Every
//! output is used: the peer's key share feeds the agreement, every
//! signature is verified (the certificates' own signatures, and the
//! handshake signature over RFC 8446 section 4.4.3's content), and each
//! side's last HMAC, keyed with every shared secret, must equal the
//! other's, so a wrong agreement fails the handshake. Records frame
//! up to 16 KiB of data as TLS 1.3 does (5-byte header, the inner content
//! type, a 16-byte tag; the key and IV from the handshake's last HMAC) and
//! are sealed and opened with the suite's AEAD, each record sealed from the
//! caller's data as the backend's TLS library seals it
//! ([`Backend::seal_from`]: copied then sealed in place, or out of place).

use std::{collections::BTreeMap, marker::PhantomData, rc::Rc};

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    certs,
    floor::{
        self, Backend, Chain,
        ops::{self, Flights, Kx, Op, Sig},
    },
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    params::{Aead, HandshakeKind, Params, Protocol},
    transport::{CONTENT_APPLICATION_DATA, CONTENT_HANDSHAKE, Endpoint, RECORD_HEADER_LEN, Side},
};

/// Largest record body, in bytes (RFC 8446 section 5.1: 2^14).
const MAX_FRAGMENT: usize = 16384;
/// An AEAD tag, in bytes.
const TAG_LEN: usize = 16;

/// The crypto floor of backend `B`.
pub struct CryptoFloor<B>(PhantomData<B>);

impl<B: Backend> Default for CryptoFloor<B> {
    fn default() -> Self {
        CryptoFloor(PhantomData)
    }
}

impl<B: Backend> TlsLibrary for CryptoFloor<B> {
    fn name(&self) -> String {
        floor::floor_name(&B::name())
    }

    /// The operations each side runs, e.g. `client: key pair x25519, ...`.
    fn settings(&self, params: &Params) -> Option<String> {
        let f = ops::handshake(params);
        let list =
            |side| f.counts(side).iter().map(|(op, n)| format!("{n}x {op}")).collect::<Vec<_>>().join(", ");
        Some(format!("client: {}; server: {}", list(Side::Client), list(Side::Server)))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if params.datagram {
            return Err(ConfigureError::Unsupported("the crypto floor runs over a byte stream only".into()));
        }
        let flights = ops::handshake(params);
        let first = ops::first_of_resumption(params);
        for op in [Side::Client, Side::Server].into_iter().flat_map(|s| flights.of(s).chain(first.of(s))) {
            if let Some(why) = B::unsupported(op) {
                return Err(ConfigureError::Unsupported(format!("{why} ({op})")));
            }
        }
        let files = certs::load(params.cert).map_err(ConfigureError::Failed)?;
        let read = |server| -> Result<Chain> {
            let chain = floor::chain(&files, server)?;
            floor::check_chain_scheme(params.cert, &chain)?;
            Ok(chain)
        };
        let (server_chain, client_chain) = (read(true)?, read(false)?);
        let sig = ops::handshake_sig(params.cert);
        let config = FloorConfig::<B> {
            params: *params,
            flights,
            first,
            server_key: B::signing_key(&server_chain.private, sig)?,
            client_key: B::signing_key(&client_chain.private, sig)?,
            server_verify: Verifying::of(&server_chain, params)?,
            client_verify: Verifying::of(&client_chain, params)?,
            server_chain,
            client_chain,
            ticket_key: B::aead_key(Aead::Aes256Gcm, &[0x5a; 32])?,
        };
        Ok(Box::new(Rc::new(config)))
    }
}

/// One parameter set's floor: its operation tables, both chains, both
/// signing keys, the server's ticket key.
struct FloorConfig<B: Backend> {
    params: Params,
    flights: Flights,
    first: Flights,
    server_chain: Chain,
    client_chain: Chain,
    server_verify: Verifying<B>,
    client_verify: Verifying<B>,
    server_key: B::SigningKey,
    client_key: B::SigningKey,
    ticket_key: B::AeadKey,
}

/// A peer chain's keys ready to verify with ([`Backend::verify_key`]):
/// the intermediate's (for the leaf's signature), the CA's (for the
/// intermediate's), the leaf's (for the handshake signature).
struct Verifying<B: Backend> {
    keys: [B::VerifyKey; 3],
}

impl<B: Backend> Verifying<B> {
    fn of(chain: &Chain, params: &Params) -> Result<Verifying<B>> {
        let cert = ops::cert_sig(params.cert);
        Ok(Verifying {
            keys: [
                B::verify_key(cert, &chain.signed[0].issuer)?,
                B::verify_key(cert, &chain.signed[1].issuer)?,
                B::verify_key(ops::handshake_sig(params.cert), &chain.leaf)?,
            ],
        })
    }
}

/// A session to resume: the ticket and its PSK.
struct Ticket {
    ticket: Vec<u8>,
    psk: Vec<u8>,
}

impl<B: Backend> Configured for Rc<FloorConfig<B>> {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let ticket = match session {
            Some(s) => Some(s.0.downcast_ref::<Ticket>().context("a session of another library")?),
            None => None,
        };
        let mut conn = FloorConn::<B>::new(self.clone(), io);
        if let Some(t) = ticket {
            conn.psk = t.psk.clone();
            conn.offered_ticket = Some(t.ticket.clone());
            conn.resumed = true;
        }
        Ok(Box::new(conn))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(FloorConn::<B>::new(self.clone(), io)))
    }
}

/// A field of a flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    /// A key share (public key or ML-KEM ciphertext) of one primitive.
    Share(Kx),
    Signature,
    Ticket,
    Finished,
}

impl Field {
    fn tag(self) -> u8 {
        match self {
            Field::Share(Kx::X25519) => 1,
            Field::Share(Kx::P256) => 2,
            Field::Share(Kx::P384) => 3,
            Field::Share(Kx::MlKem768) => 4,
            Field::Signature => 5,
            Field::Ticket => 6,
            Field::Finished => 7,
        }
    }

    fn from_tag(tag: u8) -> Result<Field> {
        Ok(match tag {
            1 => Field::Share(Kx::X25519),
            2 => Field::Share(Kx::P256),
            3 => Field::Share(Kx::P384),
            4 => Field::Share(Kx::MlKem768),
            5 => Field::Signature,
            6 => Field::Ticket,
            7 => Field::Finished,
            _ => bail!("crypto floor: unknown field {tag}"),
        })
    }
}

/// The share of the first group (in [`Kx`] order) among `fields`, empty
/// when there is none (a TLS 1.2 resumption).
fn first_share<'a>(fields: impl Iterator<Item = (&'a Field, &'a Vec<u8>)>) -> Vec<u8> {
    fields
        .filter(|(f, _)| matches!(f, Field::Share(_)))
        .min_by_key(|(f, _)| **f)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// A record protection key and IV, with its sequence number.
struct Direction<K> {
    key: K,
    iv: [u8; 12],
    seq: u64,
}

impl<K> Direction<K> {
    fn nonce(&mut self) -> [u8; 12] {
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        self.seq += 1;
        nonce
    }
}

struct FloorConn<B: Backend> {
    config: Rc<FloorConfig<B>>,
    io: Endpoint,
    /// Flights this side has run (2: done).
    step: usize,
    /// The table this connection runs (the server learns it from the
    /// ClientHello: a ticket means resumption).
    resumed: bool,
    offered_ticket: Option<Vec<u8>>,
    privates: Vec<(Kx, B::Private)>,
    secrets: BTreeMap<Kx, Vec<u8>>,
    psk: Vec<u8>,
    peer: BTreeMap<Field, Vec<u8>>,
    out: Vec<(Field, Vec<u8>)>,
    hmacs: u32,
    /// [`FloorConn::hmac_key`]'s key; empty until made.
    hmac_key: Vec<u8>,
    last_hmac: Vec<u8>,
    verified: usize,
    /// The client's first key share (of the first group in [`Kx`] order),
    /// which the handshake signatures cover.
    client_share: Vec<u8>,
    /// The length of the flight being read, once its prefix was read.
    pending: Option<usize>,
    new_ticket: Option<Ticket>,
    send: Option<Direction<B::AeadKey>>,
    recv: Option<Direction<B::AeadKey>>,
    /// Decrypted data not yet handed to the caller, and how much was.
    plain: Vec<u8>,
    plain_at: usize,
    /// The body of the record being sent ([`Backend::seal_from`]'s `out`).
    record: Vec<u8>,
}

impl<B: Backend> FloorConn<B> {
    fn new(config: Rc<FloorConfig<B>>, io: Endpoint) -> FloorConn<B> {
        FloorConn {
            config,
            io,
            step: 0,
            resumed: false,
            offered_ticket: None,
            privates: Vec::new(),
            secrets: BTreeMap::new(),
            psk: Vec::new(),
            peer: BTreeMap::new(),
            out: Vec::new(),
            hmacs: 0,
            hmac_key: Vec::new(),
            last_hmac: Vec::new(),
            verified: 0,
            client_share: Vec::new(),
            pending: None,
            new_ticket: None,
            send: None,
            recv: None,
            plain: Vec::new(),
            plain_at: 0,
            record: Vec::new(),
        }
    }

    fn side(&self) -> Side {
        self.io.side()
    }

    /// Runs this side's flight `n` of its table.
    fn run_flight(&mut self, n: usize) -> Result<()> {
        let config = self.config.clone();
        let resumption = config.params.kind == HandshakeKind::Resumption;
        let table = if resumption && !self.resumed { &config.first } else { &config.flights };
        let ops = match self.side() {
            Side::Client => &table.client[n],
            Side::Server => &table.server[n],
        };
        let tls12 = config.params.protocol().stream_version() == Protocol::Tls12;
        let mut i = 0;
        while i < ops.len() {
            let op = ops[i];
            // TLS 1.2's PRF keys its HMAC once per call (RFC 5246 section
            // 5's P_hash): a run of HMACs under one key.
            let run = if tls12 && matches!(op, Op::Hmac(_)) {
                ops[i..].iter().take_while(|o| **o == op).count()
            } else {
                1
            };
            let ran = if run > 1 { self.hmacs_same_key(op, run) } else { self.run(op) };
            ran.with_context(|| format!("crypto floor, {:?}: {op}", self.side()))?;
            i += run;
        }
        Ok(())
    }

    /// The key of this connection's HMACs: the PSK and every shared secret
    /// (so each side's last HMAC, its Finished, proves they agree), made
    /// once after each new secret.
    fn hmac_key(&mut self) -> &[u8] {
        if self.hmac_key.is_empty() {
            self.hmac_key.extend_from_slice(&self.psk);
            self.hmac_key.extend(self.secrets.values().flatten());
            if self.hmac_key.is_empty() {
                self.hmac_key.resize(48, 0);
            }
        }
        &self.hmac_key
    }

    /// Keeps a shared secret of `kx`; the HMAC key is made again.
    fn add_secret(&mut self, kx: Kx, secret: Vec<u8>) {
        self.secrets.insert(kx, secret);
        self.hmac_key.clear();
    }

    /// `n` HMACs `op` under one key, keyed once ([`Backend::hmac_same_key`]).
    fn hmacs_same_key(&mut self, op: Op, n: usize) -> Result<()> {
        let Op::Hmac(hash) = op else { bail!("{op} is not an HMAC") };
        let counters: Vec<[u8; 4]> = (0..n as u32).map(|i| (self.hmacs + i).to_be_bytes()).collect();
        let data: Vec<&[u8]> = counters.iter().map(|c| c.as_slice()).collect();
        let mut macs = B::hmac_same_key(hash, self.hmac_key(), &data)?;
        ensure!(macs.len() == n, "{} HMACs for {n}", macs.len());
        self.last_hmac = macs.pop().unwrap_or_default();
        self.hmacs += n as u32;
        Ok(())
    }

    fn take_private(&mut self, kx: Kx) -> Result<B::Private> {
        let i = self.privates.iter().position(|(k, _)| *k == kx).context("no key pair of this group")?;
        Ok(self.privates.remove(i).1)
    }

    fn peer_field(&self, field: Field) -> Result<&[u8]> {
        self.peer.get(&field).map(Vec::as_slice).with_context(|| format!("the peer sent no {field:?}"))
    }

    /// The content a handshake signature covers (RFC 8446 section 4.4.3):
    /// 64 spaces, the context string, a zero byte and a transcript hash
    /// (here the first 32 bytes of the client's first key share, which
    /// both sides hold).
    fn signed_content(&self, signer: Side) -> Vec<u8> {
        let context: &[u8] = match signer {
            Side::Server => b"TLS 1.3, server CertificateVerify",
            Side::Client => b"TLS 1.3, client CertificateVerify",
        };
        let share = &self.client_share;
        let mut content = vec![0x20; 64];
        content.extend_from_slice(context);
        content.push(0);
        content.extend_from_slice(&share[..share.len().min(32)]);
        content
    }

    fn run(&mut self, op: Op) -> Result<()> {
        let config = self.config.clone();
        match op {
            Op::KeyGen(kx) => {
                let (private, public) = B::key_gen(kx)?;
                self.privates.push((kx, private));
                self.out.push((Field::Share(kx), public));
            }
            Op::Agree(kx) => {
                let private = self.take_private(kx)?;
                let secret = B::agree(kx, private, self.peer_field(Field::Share(kx))?)?;
                self.add_secret(kx, secret);
            }
            Op::Encapsulate(kx) => {
                let (ciphertext, secret) = B::encapsulate(kx, self.peer_field(Field::Share(kx))?)?;
                self.out.push((Field::Share(kx), ciphertext));
                self.add_secret(kx, secret);
            }
            Op::Decapsulate(kx) => {
                let private = self.take_private(kx)?;
                let secret = B::decapsulate(kx, private, self.peer_field(Field::Share(kx))?)?;
                self.add_secret(kx, secret);
            }
            Op::Sign(sig) => {
                let key = match self.side() {
                    Side::Server => &config.server_key,
                    Side::Client => &config.client_key,
                };
                let signature = B::sign(key, sig, &self.signed_content(self.side()))?;
                self.out.push((Field::Signature, signature));
            }
            Op::Verify(sig) => self.verify(sig)?,
            Op::Hmac(hash) => {
                let counter = self.hmacs.to_be_bytes();
                self.last_hmac = B::hmac(hash, self.hmac_key(), &counter)?;
                self.hmacs += 1;
            }
            Op::TicketOpen => {
                let ticket = self.peer_field(Field::Ticket)?.to_vec();
                ensure!(ticket.len() > 12, "a ticket of {} bytes", ticket.len());
                let nonce: [u8; 12] = ticket[..12].try_into()?;
                let mut body = ticket[12..].to_vec();
                let n = B::open(&config.ticket_key, nonce, &[], &mut body).context("the ticket")?;
                self.psk = body[..n].to_vec();
                self.hmac_key.clear();
            }
            Op::TicketSeal => {
                let mut nonce = [0u8; 12];
                getrandom::fill(&mut nonce).map_err(|e| anyhow!("a ticket nonce: {e}"))?;
                let mut body = self.last_hmac.clone();
                B::seal(&config.ticket_key, nonce, &[], &mut body)?;
                let mut ticket = nonce.to_vec();
                ticket.extend(body);
                self.out.push((Field::Ticket, ticket));
            }
        }
        Ok(())
    }

    /// The peer's certificates' signatures (first two), then its handshake
    /// signature.
    fn verify(&mut self, sig: Sig) -> Result<()> {
        let config = self.config.clone();
        let (chain, keys, signer) = match self.side() {
            Side::Client => (&config.server_chain, &config.server_verify.keys, Side::Server),
            Side::Server => (&config.client_chain, &config.client_verify.keys, Side::Client),
        };
        match self.verified {
            i @ (0 | 1) => {
                let cert = &chain.signed[i];
                B::verify(sig, &keys[i], &cert.tbs, &cert.signature)?;
            }
            _ => B::verify(sig, &keys[2], &self.signed_content(signer), self.peer_field(Field::Signature)?)?,
        }
        self.verified += 1;
        Ok(())
    }

    /// Writes the fields of `out` (and a Finished) as one flight: one
    /// handshake record (5-byte header, content type 22) of (tag, 2-byte
    /// length, bytes) each, so the transport counts records as for TLS.
    fn write_flight(&mut self, finished: bool) -> Result<()> {
        if finished {
            self.out.push((Field::Finished, self.last_hmac.clone()));
        }
        let mut body = Vec::new();
        for (field, bytes) in &self.out {
            body.push(field.tag());
            body.extend_from_slice(&u16::try_from(bytes.len())?.to_be_bytes());
            body.extend_from_slice(bytes);
        }
        let len = u16::try_from(body.len()).context("a flight longer than a record")?.to_be_bytes();
        self.io.write_parts(&[&[CONTENT_HANDSHAKE, 3, 3, len[0], len[1]], &body]);
        if self.side() == Side::Client && self.step == 0 {
            self.client_share = first_share(self.out.iter().map(|(f, v)| (f, v)));
        }
        self.out.clear();
        Ok(())
    }

    /// Reads the peer's next flight into `peer`; `false` while it has not
    /// all arrived.
    fn read_flight(&mut self) -> Result<bool> {
        if self.pending.is_none() {
            if self.io.available() < RECORD_HEADER_LEN {
                return Ok(false);
            }
            let mut header = [0u8; RECORD_HEADER_LEN];
            self.io.read_bytes(&mut header);
            ensure!(
                header[0] == CONTENT_HANDSHAKE,
                "crypto floor: a flight in a record of type {}",
                header[0]
            );
            self.pending = Some(usize::from(u16::from_be_bytes([header[3], header[4]])));
        }
        let len = self.pending.unwrap_or(0);
        if self.io.available() < len {
            return Ok(false);
        }
        let mut body = vec![0u8; len];
        ensure!(self.io.read_bytes(&mut body) == len, "crypto floor: a short flight");
        self.pending = None;
        self.peer.clear();
        let mut at = 0;
        while at < body.len() {
            ensure!(at + 3 <= body.len(), "crypto floor: a truncated field");
            let field = Field::from_tag(body[at])?;
            let n = usize::from(u16::from_be_bytes([body[at + 1], body[at + 2]]));
            ensure!(at + 3 + n <= body.len(), "crypto floor: a truncated field");
            self.peer.insert(field, body[at + 3..at + 3 + n].to_vec());
            at += 3 + n;
        }
        Ok(true)
    }

    /// The peer's Finished must be this side's last HMAC: both are keyed
    /// with every shared secret.
    fn check_finished(&self) -> Result<()> {
        ensure!(
            self.peer_field(Field::Finished)? == self.last_hmac.as_slice(),
            "crypto floor: the peer's Finished differs (the shared secrets disagree)"
        );
        Ok(())
    }

    /// The record keys, from the last HMAC (no further crypto operation
    /// but each key's setup).
    fn start_records(&mut self) -> Result<()> {
        let aead = self.config.params.suite.aead();
        let len = if aead == Aead::Aes128Gcm { 16 } else { 32 };
        ensure!(self.last_hmac.len() >= 32, "crypto floor: no secret to key the records");
        let mut material = self.last_hmac.clone();
        material.resize(32, 0);
        let direction = |label: u8| -> Result<Direction<B::AeadKey>> {
            let mut key = material[..len].to_vec();
            key[0] ^= label;
            let mut iv = [0u8; 12];
            iv.copy_from_slice(&material[20..32]);
            iv[0] ^= label;
            Ok(Direction { key: B::aead_key(aead, &key)?, iv, seq: 0 })
        };
        let (c2s, s2c) = (direction(1)?, direction(2)?);
        let (send, recv) = match self.side() {
            Side::Client => (c2s, s2c),
            Side::Server => (s2c, c2s),
        };
        self.send = Some(send);
        self.recv = Some(recv);
        Ok(())
    }
}

impl<B: Backend> TlsConnection for FloorConn<B> {
    fn handshake(&mut self) -> Result<bool> {
        match (self.side(), self.step) {
            (_, 2) => Ok(true),
            (Side::Client, 0) => {
                self.run_flight(0)?;
                if let Some(t) = self.offered_ticket.take() {
                    self.out.push((Field::Ticket, t));
                }
                self.write_flight(false)?;
                self.step = 1;
                Ok(false)
            }
            (Side::Client, _) => {
                if !self.read_flight()? {
                    return Ok(false);
                }
                self.run_flight(1)?;
                self.check_finished()?;
                if let Some(ticket) = self.peer.get(&Field::Ticket) {
                    self.new_ticket = Some(Ticket { ticket: ticket.clone(), psk: self.last_hmac.clone() });
                }
                self.write_flight(true)?;
                self.start_records()?;
                self.step = 2;
                Ok(true)
            }
            (Side::Server, 0) => {
                if !self.read_flight()? {
                    return Ok(false);
                }
                self.client_share = first_share(self.peer.iter());
                self.resumed = self.peer.contains_key(&Field::Ticket);
                ensure!(
                    !self.resumed || self.config.params.kind == HandshakeKind::Resumption,
                    "crypto floor: a ticket offered to a {} server",
                    self.config.params.kind
                );
                self.run_flight(0)?;
                self.write_flight(true)?;
                self.step = 1;
                Ok(false)
            }
            (Side::Server, _) => {
                if !self.read_flight()? {
                    return Ok(false);
                }
                self.run_flight(1)?;
                self.check_finished()?;
                self.start_records()?;
                self.step = 2;
                Ok(true)
            }
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        let dir = self.send.as_mut().context("crypto floor: send before the handshake")?;
        for chunk in data.chunks(MAX_FRAGMENT) {
            let len = u16::try_from(chunk.len() + 1 + TAG_LEN)?.to_be_bytes();
            let header = [CONTENT_APPLICATION_DATA, 3, 3, len[0], len[1]];
            let nonce = dir.nonce();
            B::seal_from(&dir.key, nonce, &header, chunk, CONTENT_APPLICATION_DATA, &mut self.record)?;
            self.io.write_parts(&[&header, &self.record]);
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.plain_at < self.plain.len() {
                let n = (self.plain.len() - self.plain_at).min(buf.len() - filled);
                buf[filled..filled + n].copy_from_slice(&self.plain[self.plain_at..self.plain_at + n]);
                self.plain_at += n;
                filled += n;
                continue;
            }
            if self.pending.is_none() {
                if self.io.available() < RECORD_HEADER_LEN {
                    break;
                }
                let mut header = [0u8; RECORD_HEADER_LEN];
                self.io.read_bytes(&mut header);
                ensure!(header[0] == CONTENT_APPLICATION_DATA, "crypto floor: record type {}", header[0]);
                self.pending = Some(usize::from(u16::from_be_bytes([header[3], header[4]])));
            }
            let len = self.pending.unwrap_or(0);
            if self.io.available() < len {
                break;
            }
            self.plain.resize(len, 0);
            ensure!(self.io.read_bytes(&mut self.plain) == len, "crypto floor: a short record");
            self.pending = None;
            let len16 = u16::try_from(len)?.to_be_bytes();
            let header = [CONTENT_APPLICATION_DATA, 3, 3, len16[0], len16[1]];
            let dir = self.recv.as_mut().context("crypto floor: recv before the handshake")?;
            let nonce = dir.nonce();
            let n = B::open(&dir.key, nonce, &header, &mut self.plain)?;
            ensure!(
                n >= 1 && self.plain[n - 1] == CONTENT_APPLICATION_DATA,
                "crypto floor: inner content type"
            );
            self.plain.truncate(n - 1);
            self.plain_at = 0;
        }
        Ok(filled)
    }

    fn shutdown(&mut self) -> Result<()> {
        Ok(())
    }

    fn negotiated(&self) -> Result<Negotiated> {
        ensure!(self.step == 2, "handshake not complete");
        let p = &self.config.params;
        let tls12_resumed = self.resumed && p.protocol().stream_version() == Protocol::Tls12;
        Ok(Negotiated {
            protocol: p.protocol(),
            suite: p.suite,
            group: (!tls12_resumed).then_some(p.group),
            resumed: self.resumed,
            client_authenticated: match self.side() {
                Side::Client => None,
                // The server verified the client's three signatures.
                Side::Server => Some(self.verified == 3),
            },
        })
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("none: keeps one record's buffer each way")
    }

    fn take_session(&mut self) -> Result<Session> {
        let t = self.new_ticket.take().context("crypto floor: no ticket received")?;
        Ok(Session(Box::new(t)))
    }
}
