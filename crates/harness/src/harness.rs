//! The harness: the traits every library implements once, what a library
//! reports it negotiated, and the [`Pair`] that drives a client and a server
//! over the in-memory [`Duplex`](crate::transport::Duplex).

use std::{
    any::Any,
    fmt,
    io::IoSlice,
    rc::Rc,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Result, anyhow, bail, ensure};

pub use crate::error::ConfigureError;

use crate::{
    callgrind,
    extensions::Extensions,
    memory::{self, Scope},
    params::{CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
    transport::{DEFAULT_MTU, Duplex, Endpoint, Side},
    writes::{Strategy, Wire},
};

/// What a connection reports it negotiated, read back from the library
/// after the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    /// Protocol version.
    pub protocol: Protocol,
    /// Cipher suite.
    pub suite: CipherSuite,
    /// Key exchange group; `None` when no key exchange took place (a TLS 1.2
    /// resumption) or the library does not report it.
    pub group: Option<KxGroup>,
    /// Whether the handshake resumed a session.
    pub resumed: bool,
    /// Whether the client presented a certificate the server verified. Only
    /// the server knows for sure: clients report `None`, or where the
    /// library tells (GnuTLS) whether the server asked for a certificate and
    /// the client sent one.
    pub client_authenticated: Option<bool>,
}

impl Negotiated {
    /// Whether a (D)TLS 1.2 handshake resumed: after one, a server resuming
    /// from a ticket need not issue a new one (RFC 5077 section 3.3), and
    /// the client resumes from the same again.
    pub fn tls12_resumed(&self) -> bool {
        self.resumed && self.protocol.stream_version() == Protocol::Tls12
    }

    /// Checks these values against what `params` asks for.
    ///
    /// Errors name every field that differs. For a TLS 1.2 resumption no key
    /// exchange happens, so the group is not checked.
    pub fn check(&self, params: &Params) -> Result<()> {
        let mut wrong = Vec::new();
        let resumption = params.kind == HandshakeKind::Resumption;
        if self.protocol != params.protocol() {
            wrong.push(format!("protocol {} (wanted {})", self.protocol, params.protocol()));
        }
        if self.suite != params.suite {
            wrong.push(format!("suite {} (wanted {})", self.suite, params.suite));
        }
        let group_checked = !(resumption && params.protocol().stream_version() == Protocol::Tls12);
        if group_checked && self.group != Some(params.group) {
            let got = self.group.map_or("none".to_string(), |g| g.to_string());
            wrong.push(format!("group {got} (wanted {})", params.group));
        }
        if self.resumed != resumption {
            wrong.push(format!("resumed {} (wanted {resumption})", self.resumed));
        }
        let mtls = params.kind == HandshakeKind::MutualAuth;
        if let Some(auth) = self.client_authenticated
            && auth != mtls
        {
            wrong.push(format!("client authenticated {auth} (wanted {mtls})"));
        }
        ensure!(wrong.is_empty(), "negotiated {}", wrong.join(", "));
        Ok(())
    }
}

/// A session ticket (or the library's session object holding one) kept by a
/// client to resume. Opaque: only the library that made it reads it.
pub struct Session(pub Box<dyn Any>);

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Session(..)")
    }
}

/// One TLS connection (client or server) of one library over an in-memory
/// [`Endpoint`].
pub trait TlsConnection {
    /// Advances the handshake as far as the queued input allows, writing any
    /// output to the transport. `Ok(true)` once this side's handshake is
    /// complete and its output flushed. Errors: a TLS alert or library error.
    fn handshake(&mut self) -> Result<bool>;

    /// Encrypts all of `data` as application data and writes the records to
    /// the transport. Errors: library error.
    fn send(&mut self, data: &[u8]) -> Result<()>;

    /// Encrypts the concatenation of `parts` as application data with the
    /// library's own gather write (one call for all the buffers, e.g.
    /// rustls's `Writer::write_vectored`, s2n-tls's
    /// `s2n_sendv_with_offset`) and writes the records to the transport.
    /// Only called on connections made by the [`Configured`] that
    /// [`TlsLibrary::configure_vectored`] returned. Errors: library error;
    /// the default, for a library without one, always errors.
    fn send_vectored(&mut self, _parts: &[IoSlice<'_>]) -> Result<()> {
        bail!("this connection has no gather write")
    }

    /// Decrypts queued records into `buf`; returns the bytes of application
    /// data written to `buf`, `0` when none are available yet (would block).
    /// Post-handshake messages (session tickets) are processed on the way.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize>;

    /// Sends a close_notify alert (RFC 8446 section 6.1).
    fn shutdown(&mut self) -> Result<()>;

    /// What was negotiated, read back from the library. Errors: handshake
    /// not complete, or a value the harness does not know.
    fn negotiated(&self) -> Result<Negotiated>;

    /// Frees the connection's I/O buffers while they are empty, and asks the
    /// library to free them whenever they empty from now on (OpenSSL's
    /// `SSL_MODE_RELEASE_BUFFERS`, s2n-tls's `s2n_connection_release_buffers`).
    /// Called on a new connection (before its handshake) and when it is
    /// idle. Returns what was used, for the memory report; a library
    /// without such a call does nothing and says how it manages buffers.
    fn release_buffers(&mut self) -> Result<&'static str>;

    /// Client only, after the handshake: processes the server's queued
    /// post-handshake messages and returns the session to resume from.
    /// Errors: no ticket received.
    fn take_session(&mut self) -> Result<Session>;

    /// Client only, after the handshake: reads what the server queued after
    /// it (its NewSessionTicket), which must hold no application data; the
    /// stacks' [`TlsConnection::take_session`] start with it. Errors: the
    /// read's, or application data.
    fn read_past_ticket(&mut self) -> Result<()> {
        let mut byte = [0u8; 1];
        ensure!(self.recv(&mut byte)? == 0, "unexpected application data while waiting for a ticket");
        Ok(())
    }

    /// Whether [`TlsConnection::recv`] has read the peer's close_notify
    /// (RFC 8446 section 6.1): its `0` then means the end, not "would
    /// block". The socket runner's bridge ([`SendConnections`]) reads it;
    /// the default, `false`, is for a stack that never reports one.
    fn peer_closed(&self) -> bool {
        false
    }

    /// The ALPN protocol the handshake chose (RFC 7301), for a connection
    /// configured with [`Extensions::alpn`]; `None`: none chosen, or a
    /// stack that sets no ALPN (the default).
    fn alpn(&self) -> Option<&[u8]> {
        None
    }
}

/// A [`Configured`] whose connections may move between threads, each with
/// the [`Endpoint`] it was made on and the [`Duplex`] behind it, as one
/// whole: what the socket runner's bridge needs to drive a library over
/// tokio's multi-threaded runtime from its in-memory connections
/// ([`TlsLibrary::configure_threaded`]).
///
/// # Safety
///
/// An implementor promises that its connections share nothing with one
/// another or with it but through thread-safe types (`Arc`, state the
/// library documents as safe to share between threads), and that the
/// [`Session`]s they return hold only `Send + Sync` data. A connection,
/// its endpoint and that endpoint's duplex (whose `Rc`s stay among them)
/// may then be moved to another thread together, and used from one thread
/// at a time.
pub unsafe trait SendConnections: Configured + Send + Sync {}

/// A library configured for one parameter set: its client and server
/// configuration objects, built once, from which connections are made.
pub trait Configured {
    /// A new client connection on `io`, resuming `session` if given.
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>>;
    /// A new server connection on `io`.
    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>>;

    /// How many resumptions in a row this server allows when each resumes
    /// from the ticket the one before received; `None` (the default): no
    /// limit. A wolfSSL server carries a resumed ticket's one-byte nonce
    /// into the next ticket and refuses the 256th in a row ("Session
    /// ticket nonce overflow", src/tls13.c `SendTls13NewSessionTicket`).
    /// [`Handshaker::renew_chain_if_due`] starts a new chain with a full
    /// handshake, outside any clock, before it is reached.
    fn resumption_chain_limit(&self) -> Option<u64> {
        None
    }
}

/// A TLS library (or one build of it, such as rustls with one crypto
/// provider) as the benchmarks see it.
pub trait TlsLibrary {
    /// Name and version as read from the library, with its crypto backend
    /// where it has a choice, e.g. `rustls-0.23.46+aws-lc-rs`,
    /// `openssl-3.6.3`, `s2n-tls-0.3.47`. The last component of benchmark ids.
    fn name(&self) -> String;

    /// Builds client and server configurations for `params`, forcing the
    /// suite, group and protocol version (never relying on defaults).
    /// Errors: [`ConfigureError::Unsupported`] with a reason when the library
    /// cannot do the combination.
    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError>;

    /// [`TlsLibrary::configure`], for connections whose
    /// [`TlsConnection::send_vectored`] works: the library's own gather
    /// write. Errors: [`ConfigureError::Unsupported`] with the reason when
    /// the library has none (the default: a stack without one), never an
    /// emulation under that name.
    fn configure_vectored(&self, _params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Err(ConfigureError::Unsupported(format!("{}: this stack has no gather write", self.name())))
    }

    /// [`TlsLibrary::configure`] for DTLS parameters ([`Params::datagram`]):
    /// connections over a datagram [`Endpoint`], told its
    /// [`Endpoint::max_datagram`] as their MTU. Errors:
    /// [`ConfigureError::Unsupported`] with the reason when the library has
    /// no DTLS (the default) or not this version, suite or group.
    fn configure_datagram(&self, _params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Err(ConfigureError::Unsupported("no DTLS (TLS over a byte stream only)".to_string()))
    }

    /// Settings this library uses for `params` that the benchmark id does
    /// not name but that change what is measured, e.g. s2n-tls's security
    /// policy (`security policy default_tls13`). `None` when there are none
    /// or the library cannot do `params`.
    fn settings(&self, _params: &Params) -> Option<String> {
        None
    }

    /// [`TlsLibrary::configure`] for TLS parameters (never DTLS: the
    /// caller checks) and connections that may move between threads
    /// ([`SendConnections`]), with `extensions` (ALPN, the server
    /// name, another client identity) set: the socket runner's bridge
    /// drives a library without a tokio adapter of its own through these.
    /// Errors: [`ConfigureError::Unsupported`] with the reason for a stack
    /// whose connections share state that is not thread-safe (the default),
    /// an extension it does not set, or what [`TlsLibrary::configure`]
    /// refuses.
    fn configure_threaded(
        &self,
        _params: &Params,
        _extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        Err(ConfigureError::Unsupported(format!(
            "{}: its in-memory connections are not made to move between threads",
            self.name()
        )))
    }

    /// The name of the crypto floor of the implementation this library's
    /// crypto runs on in this build ([`crate::libs::crypto_floors`]),
    /// e.g. `crypto-floor-aws-lc-rs-1.19.0`; `None` where the build has
    /// none for it.
    fn crypto_floor(&self) -> Option<String> {
        None
    }
}

/// Time spent inside each side's library calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideTimes {
    /// Time in the client's calls.
    pub client: Duration,
    /// Time in the server's calls.
    pub server: Duration,
}

impl SideTimes {
    /// Time of `side`.
    pub fn of(&self, side: Side) -> Duration {
        match side {
            Side::Client => self.client,
            Side::Server => self.server,
        }
    }
}

/// Rounds of both sides stepping without any byte moving before a handshake
/// counts as stalled.
const STALL_ROUNDS: usize = 3;

/// Runs `f`, a call into `side`'s library, adding its time to `acc`; its
/// allocations are charged to that side ([`memory::in_scope`]), and when
/// instructions are counted it runs inside that side's named region
/// ([`callgrind::side_call`]).
fn timed<T>(side: Side, acc: &mut Duration, f: impl FnOnce() -> T) -> T {
    memory::in_scope(side.into(), || {
        let counting = callgrind::counting();
        let start = Instant::now();
        let out = callgrind::side_call(side, counting, f);
        *acc += start.elapsed();
        out
    })
}

/// A client and a server of (possibly different) libraries, joined by a
/// [`Duplex`]. Creating it makes both connections; nothing is sent yet.
pub struct Pair {
    /// The client connection.
    pub client: Box<dyn TlsConnection>,
    /// The server connection.
    pub server: Box<dyn TlsConnection>,
    /// The transport between them, with its counters.
    pub duplex: Duplex,
}

impl Pair {
    /// A client from `client_lib` (resuming `session` if given) and a server
    /// from `server_lib` over `duplex` (new and empty). Creating each
    /// connection is timed into its side of `times`: some libraries make
    /// their key share and first flight here (rustls's
    /// `ClientConnection::new`), others in their first handshake call, so
    /// a handshake's timed region starts with creation for every library.
    pub fn new(
        client_lib: &dyn Configured,
        server_lib: &dyn Configured,
        session: Option<&Session>,
        duplex: Duplex,
        times: &mut SideTimes,
    ) -> Result<Pair> {
        let client = timed(Side::Client, &mut times.client, || {
            client_lib.client(duplex.endpoint(Side::Client), session)
        })?;
        let server =
            timed(Side::Server, &mut times.server, || server_lib.server(duplex.endpoint(Side::Server)))?;
        Ok(Pair { client, server, duplex })
    }

    /// Runs the handshake to completion, adding the time spent in each
    /// side's library calls to `times`. Errors: a library error, or no
    /// progress (neither side moved a byte for a few rounds).
    pub fn handshake(&mut self, times: &mut SideTimes) -> Result<()> {
        let mut stalled = 0;
        let (mut client_done, mut server_done) = (false, false);
        while !(client_done && server_done) {
            let before = self.bytes_moved();
            if !client_done {
                client_done = timed(Side::Client, &mut times.client, || self.client.handshake())?;
            }
            if !server_done {
                server_done = timed(Side::Server, &mut times.server, || self.server.handshake())?;
            }
            if self.bytes_moved() == before {
                stalled += 1;
                ensure!(
                    stalled < STALL_ROUNDS,
                    "handshake stalled (client done: {client_done}, server done: {server_done})"
                );
            } else {
                stalled = 0;
            }
        }
        if self.duplex.max_datagram().is_some() {
            self.settle_datagrams(times)?;
        }
        ensure!(
            self.duplex.pending_for(Side::Server) == 0,
            "server left {} bytes of the client unread after the handshake",
            self.duplex.pending_for(Side::Server)
        );
        Ok(())
    }

    /// DTLS 1.3: the server acknowledges the client's last flight with an
    /// ACK record (RFC 9147 section 7), which the client must process to
    /// know its flight arrived (else it would retransmit it). A side with
    /// datagrams still queued when both report done reads them here, timed
    /// into its side of the handshake; no application data may be among
    /// them. Errors: a library error, or application data.
    fn settle_datagrams(&mut self, times: &mut SideTimes) -> Result<()> {
        for side in [Side::Client, Side::Server] {
            if self.duplex.datagrams_for(side) == 0 {
                continue;
            }
            let (conn, acc) = self.side_mut(side, times);
            let mut byte = [0u8; 1];
            let n = timed(side, acc, || conn.recv(&mut byte))?;
            ensure!(n == 0, "the {side:?} received application data at the end of the handshake");
            let left = self.duplex.datagrams_for(side);
            ensure!(left == 0, "the {side:?} left {left} datagrams unread after the handshake");
        }
        Ok(())
    }

    /// Client side: reads the server's post-handshake messages and returns
    /// the session ticket, adding the time to `times.client`.
    pub fn take_session(&mut self, times: &mut SideTimes) -> Result<Session> {
        timed(Side::Client, &mut times.client, || self.client.take_session())
    }

    /// Checks both sides' negotiated values against `params`, and that the
    /// sides agree. Errors name the side and the differing fields.
    pub fn check(&self, params: &Params) -> Result<()> {
        let client = self.client.negotiated()?;
        let server = self.server.negotiated()?;
        client.check(params).map_err(|e| anyhow!("client {e}"))?;
        server.check(params).map_err(|e| anyhow!("server {e}"))?;
        ensure!(
            server.client_authenticated.is_some(),
            "the server did not report whether the client authenticated"
        );
        Ok(())
    }

    /// Sends `data` from `from` in writes of `write_size` bytes (the last may
    /// be shorter), adding the time in the sender's calls to `times`.
    pub fn send(&mut self, from: Side, data: &[u8], write_size: usize, times: &mut SideTimes) -> Result<()> {
        ensure!(write_size > 0, "write size must be positive");
        let (conn, acc) = self.side_mut(from, times);
        timed(from, acc, || data.chunks(write_size).try_for_each(|chunk| conn.send(chunk)))
    }

    /// Receives exactly `buf.len()` bytes on side `to`, adding the time in
    /// its calls to `times`. Errors: the data stops arriving before `buf` is
    /// full.
    pub fn recv_exact(&mut self, to: Side, buf: &mut [u8], times: &mut SideTimes) -> Result<()> {
        let (conn, acc) = self.side_mut(to, times);
        timed(to, acc, || {
            let mut filled = 0;
            while filled < buf.len() {
                match conn.recv(&mut buf[filled..])? {
                    0 => bail!("{to:?} received {filled} of {} bytes; no more queued", buf.len()),
                    n => filled += n,
                }
            }
            Ok(())
        })
    }

    /// Moves `data` from `from` to the peer in writes of `write_size`, checks
    /// it arrived intact into `scratch` (resized to `data.len()`), and
    /// returns the times of the send phase and the receive phase. See
    /// [`Pair::transfer_into`].
    pub fn transfer(
        &mut self,
        from: Side,
        data: &[u8],
        write_size: usize,
        scratch: &mut Vec<u8>,
    ) -> Result<SideTimes> {
        scratch.resize(data.len(), 0);
        self.transfer_into(from, data, write_size, scratch)
    }

    /// Moves `data` from `from` to the peer in writes of `write_size`, checks
    /// it arrived intact into `scratch` (exactly `data.len()` bytes), and
    /// returns the times of the send phase and the receive phase.
    ///
    /// Before the receive (untimed), every byte of `scratch` is set to the
    /// complement of the byte expected there, so a receiver that reports
    /// bytes without writing them fails the check. After it, both
    /// directions' queues must be empty: bytes left queued were not counted.
    /// Errors: a library error, corrupted or missing data, bytes left queued,
    /// a `scratch` of another length.
    pub fn transfer_into(
        &mut self,
        from: Side,
        data: &[u8],
        write_size: usize,
        scratch: &mut [u8],
    ) -> Result<SideTimes> {
        ensure!(scratch.len() == data.len(), "receive buffer of {} bytes for {}", scratch.len(), data.len());
        let mut times = SideTimes::default();
        scratch.iter_mut().zip(data).for_each(|(s, d)| *s = !d);
        self.send(from, data, write_size, &mut times)?;
        self.recv_exact(from.peer(), scratch, &mut times)?;
        ensure!(*scratch == *data, "application data arrived corrupted");
        for side in [Side::Client, Side::Server] {
            let left = self.duplex.pending_for(side);
            ensure!(left == 0, "{left} bytes left queued for the {side:?} after a transfer");
        }
        Ok(times)
    }

    /// Sends one message from `from`, written from the buffers `parts` as
    /// `strategy` says, and checks that it arrived intact into `scratch`
    /// (exactly the message's length; `message` is the concatenation of
    /// `parts`). Returns the time in the sender's calls and in the
    /// receiver's (each in its side), and what the sender put on the wire.
    ///
    /// - [`Strategy::PerBuffer`]: one [`TlsConnection::send`] per buffer.
    /// - [`Strategy::Coalesced`]: the buffers copied into `copy` (cleared
    ///   first; give it the message's capacity so the copy does not
    ///   allocate), then one `send`. The copy is timed, in the sender's
    ///   figure: it is the application's cost.
    /// - [`Strategy::Vectored`]: one [`TlsConnection::send_vectored`].
    ///
    /// As in [`Pair::transfer_into`], `scratch` is poisoned before the
    /// receive and both queues must be empty after it. Errors: a library
    /// error, corrupted or missing data, bytes left queued, a `scratch` or
    /// `message` of another length.
    #[allow(clippy::too_many_arguments)]
    pub fn deliver(
        &mut self,
        from: Side,
        parts: &[IoSlice<'_>],
        message: &[u8],
        strategy: Strategy,
        copy: &mut Vec<u8>,
        scratch: &mut [u8],
    ) -> Result<(SideTimes, Wire)> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        ensure!(message.len() == len, "message of {} bytes for buffers of {len}", message.len());
        ensure!(scratch.len() == len, "receive buffer of {} bytes for {len}", scratch.len());
        let mut times = SideTimes::default();
        scratch.iter_mut().zip(message).for_each(|(s, d)| *s = !d);
        let before = self.duplex.stats(from);
        let (conn, acc) = self.side_mut(from, &mut times);
        timed(from, acc, || match strategy {
            Strategy::PerBuffer => parts.iter().try_for_each(|p| conn.send(p)),
            Strategy::Coalesced => {
                copy.clear();
                parts.iter().for_each(|p| copy.extend_from_slice(p));
                conn.send(copy)
            }
            Strategy::Vectored => conn.send_vectored(parts),
        })?;
        let after = self.duplex.stats(from);
        let wire = Wire { records: after.records - before.records, bytes: after.bytes - before.bytes };
        self.recv_exact(from.peer(), scratch, &mut times)?;
        ensure!(*scratch == *message, "message arrived corrupted");
        for side in [Side::Client, Side::Server] {
            let left = self.duplex.pending_for(side);
            ensure!(left == 0, "{left} bytes left queued for the {side:?} after a message");
        }
        Ok((times, wire))
    }

    /// The send loop: [`Pair::send_writes`] then [`Pair::receive_writes`].
    /// Returns the time in the sender's calls and in the receiver's, each in
    /// its side. Errors: theirs.
    pub fn send_loop(
        &mut self,
        from: Side,
        data: &[u8],
        payload: usize,
        scratch: &mut [u8],
    ) -> Result<SideTimes> {
        let mut times = SideTimes::default();
        self.send_writes(from, data, payload, &mut times)?;
        self.receive_writes(from.peer(), data, payload, scratch, &mut times)?;
        Ok(times)
    }

    /// The send loop's first half: `data` from `from` to the peer in writes
    /// of `payload` bytes (`data.len()` a multiple of it), the sender's calls
    /// timed into `times`. Each write must go out as exactly one record, and
    /// on a datagram duplex as one datagram: the transport's counters are
    /// checked. Errors: a library error, a write that was not one record
    /// (datagram).
    pub fn send_writes(
        &mut self,
        from: Side,
        data: &[u8],
        payload: usize,
        times: &mut SideTimes,
    ) -> Result<()> {
        ensure!(
            payload > 0 && data.len().is_multiple_of(payload),
            "{} bytes are not a whole number of {payload}-byte writes",
            data.len()
        );
        let writes = (data.len() / payload) as u64;
        let before = self.duplex.stats(from);
        self.send(from, data, payload, times)?;
        let after = self.duplex.stats(from);
        let records = after.records - before.records;
        ensure!(records == writes, "{writes} writes of {payload} bytes went out as {records} records");
        if self.duplex.max_datagram().is_some() {
            let datagrams = after.datagrams - before.datagrams;
            ensure!(
                datagrams == writes,
                "{writes} writes of {payload} bytes went out as {datagrams} datagrams"
            );
        }
        Ok(())
    }

    /// The send loop's second half: side `to` reads each of the writes of
    /// `payload` bytes that [`Pair::send_writes`] sent into its own slot of
    /// `scratch` (poisoned first), its calls timed into `times`; the slots
    /// are compared with `data`, and both queues must then be empty.
    /// Errors: a library error; a slot that stayed short (a lost datagram:
    /// the in-memory transport never loses one, so a harness or library
    /// bug); a slot that differs from what was sent (corrupted or
    /// reordered); bytes left queued.
    pub fn receive_writes(
        &mut self,
        to: Side,
        data: &[u8],
        payload: usize,
        scratch: &mut [u8],
        times: &mut SideTimes,
    ) -> Result<()> {
        ensure!(scratch.len() == data.len(), "receive buffer of {} bytes for {}", scratch.len(), data.len());
        ensure!(payload > 0, "writes of 0 bytes");
        let writes = data.len() / payload;
        scratch.iter_mut().zip(data).for_each(|(s, d)| *s = !d);
        let (conn, acc) = self.side_mut(to, times);
        timed(to, acc, || {
            for (i, slot) in scratch.chunks_mut(payload).enumerate() {
                let mut filled = 0;
                while filled < payload {
                    match conn.recv(&mut slot[filled..])? {
                        0 => bail!(
                            "write {i} of {writes}: {filled} of {payload} bytes arrived; no more queued (lost)"
                        ),
                        n => filled += n,
                    }
                }
            }
            Ok(())
        })?;
        if let Some(i) = scratch.chunks(payload).zip(data.chunks(payload)).position(|(got, sent)| got != sent)
        {
            bail!("write {i} of {writes} arrived corrupted or out of order");
        }
        for side in [Side::Client, Side::Server] {
            let left = self.duplex.pending_for(side);
            ensure!(left == 0, "{left} bytes left queued for the {side:?} after a send loop");
        }
        Ok(())
    }

    /// Both sides send close_notify.
    pub fn shutdown(&mut self) -> Result<()> {
        memory::in_scope(Scope::Client, || self.client.shutdown())?;
        memory::in_scope(Scope::Server, || self.server.shutdown())?;
        Ok(())
    }

    /// Asks both sides to free their idle I/O buffers
    /// ([`TlsConnection::release_buffers`]); returns the client's
    /// description of what that does (both sides are the same library in
    /// the memory measurements).
    pub fn release_buffers(&mut self) -> Result<&'static str> {
        let used = memory::in_scope(Scope::Client, || self.client.release_buffers())?;
        memory::in_scope(Scope::Server, || self.server.release_buffers())?;
        Ok(used)
    }

    fn side_mut<'a>(
        &'a mut self,
        side: Side,
        times: &'a mut SideTimes,
    ) -> (&'a mut Box<dyn TlsConnection>, &'a mut Duration) {
        match side {
            Side::Client => (&mut self.client, &mut times.client),
            Side::Server => (&mut self.server, &mut times.server),
        }
    }

    fn bytes_moved(&self) -> u64 {
        self.duplex.stats(Side::Client).bytes + self.duplex.stats(Side::Server).bytes
    }
}

/// A library configured for one parameter set, with the state a run of
/// handshakes needs: for resumption, the session from the last handshake.
pub struct Handshaker {
    params: Params,
    client: Rc<dyn Configured>,
    server: Rc<dyn Configured>,
    session: Option<Session>,
    /// Resumptions since the full handshake whose ticket began the chain.
    chained: u64,
    /// The path MTU of DTLS connections' duplexes, in bytes.
    mtu: usize,
}

impl Handshaker {
    /// Configures `client_lib` and `server_lib` (the same library for the
    /// benchmarks; two for interop tests) for `params`. For resumption it
    /// runs one full handshake to get the first ticket.
    ///
    /// Errors: [`ConfigureError::Unsupported`] if either library cannot do
    /// `params`, or an invalid combination.
    pub fn new(
        client_lib: &dyn TlsLibrary,
        server_lib: &dyn TlsLibrary,
        params: Params,
    ) -> Result<Handshaker, ConfigureError> {
        params.validate().map_err(ConfigureError::Unsupported)?;
        let configure = |lib: &dyn TlsLibrary| {
            if params.datagram { lib.configure_datagram(&params) } else { lib.configure(&params) }
        };
        let client: Rc<dyn Configured> = configure(client_lib)?.into();
        let server = if client_lib.name() == server_lib.name() {
            client.clone()
        } else {
            configure(server_lib)?.into()
        };
        Handshaker::from_configured(client, server, params)
    }

    /// A handshaker over configurations already made for `params` (such as
    /// [`TlsLibrary::configure_vectored`]'s). For resumption it runs one
    /// full handshake to get the first ticket. Errors: that handshake
    /// failed.
    pub fn from_configured(
        client: Rc<dyn Configured>,
        server: Rc<dyn Configured>,
        params: Params,
    ) -> Result<Handshaker, ConfigureError> {
        params.validate().map_err(ConfigureError::Unsupported)?;
        let mut h = Handshaker { params, client, server, session: None, chained: 0, mtu: DEFAULT_MTU };
        if params.kind == HandshakeKind::Resumption {
            h.first_ticket()?;
        }
        Ok(h)
    }

    /// Runs a full handshake and keeps its ticket as the session to resume,
    /// the start of a chain. Errors: that handshake failed.
    fn first_ticket(&mut self) -> Result<()> {
        let mut times = SideTimes::default();
        let mut pair =
            Pair::new(self.client.as_ref(), self.server.as_ref(), None, self.duplex()?, &mut times)?;
        pair.handshake(&mut times)?;
        self.session = Some(pair.take_session(&mut times)?);
        self.chained = 0;
        Ok(())
    }

    /// For resumption, when the server allows no further resumption in a
    /// chain ([`Configured::resumption_chain_limit`]), starts a new chain
    /// with a full handshake; otherwise nothing. For the caller to run
    /// outside its clock, after each handshake. Errors: that handshake
    /// failed.
    pub fn renew_chain_if_due(&mut self) -> Result<()> {
        let due = self.params.kind == HandshakeKind::Resumption
            && self.server.resumption_chain_limit().is_some_and(|limit| self.chained >= limit);
        if due { self.first_ticket() } else { Ok(()) }
    }

    /// The parameters this handshaker runs.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Sets the path MTU of the duplexes of DTLS connections from now on,
    /// in bytes ([`DEFAULT_MTU`] until then; a byte stream has none).
    /// Errors: an MTU [`Duplex::datagram`] refuses.
    pub fn set_mtu(&mut self, mtu: usize) -> Result<()> {
        Duplex::datagram(mtu).map_err(|e| anyhow!(e))?;
        self.mtu = mtu;
        Ok(())
    }

    /// A new, empty duplex of the kind the parameters need: a byte stream
    /// for TLS, datagrams of the set MTU for DTLS. Errors: none once the
    /// MTU was accepted ([`Duplex::datagram`]'s check).
    pub fn duplex(&self) -> Result<Duplex> {
        if self.params.datagram {
            Duplex::datagram(self.mtu).map_err(|e| anyhow!(e))
        } else {
            Ok(Duplex::new())
        }
    }

    /// A new connection pair over `duplex`, resuming the last session for
    /// resumption; each side's connection creation is timed into `times`
    /// ([`Pair::new`]).
    pub fn pair(&self, duplex: Duplex, times: &mut SideTimes) -> Result<Pair> {
        Pair::new(self.client.as_ref(), self.server.as_ref(), self.session.as_ref(), duplex, times)
    }

    /// Runs `pair`'s handshake (timed into `times`); for resumption also
    /// takes the fresh ticket the server issued (timed: it is the cost of
    /// being able to resume again) and returns the session it replaces, for
    /// the caller to drop outside the timed region. Does not check what was
    /// negotiated.
    pub fn complete(&mut self, pair: &mut Pair, times: &mut SideTimes) -> Result<Option<Session>> {
        pair.handshake(times)?;
        if self.params.kind == HandshakeKind::Resumption {
            let next = pair.take_session(times)?;
            self.chained += 1;
            return Ok(self.session.replace(next));
        }
        Ok(None)
    }

    /// One handshake as the benchmarks time it, from the creation of both
    /// connections over `duplex` to both sides done (and, for resumption,
    /// the client holding its fresh ticket). Each side's calls are timed
    /// into its side of `times`. Does not check what was negotiated.
    pub fn run_on(&mut self, duplex: Duplex, times: &mut SideTimes) -> Result<Handshake> {
        let mut pair = self.pair(duplex, times)?;
        let retired = self.complete(&mut pair, times)?;
        Ok(Handshake { pair, retired })
    }

    /// [`Handshaker::run_on`] over a new duplex ([`Handshaker::duplex`]).
    pub fn run(&mut self, times: &mut SideTimes) -> Result<Handshake> {
        self.run_on(self.duplex()?, times)
    }

    /// One checked handshake: [`Handshaker::run`] and the check of both
    /// sides' negotiated values. Returns the pair (for a transfer) and the
    /// side times.
    pub fn handshake_checked(&mut self) -> Result<(Pair, SideTimes)> {
        let mut times = SideTimes::default();
        let done = self.run(&mut times)?;
        done.pair.check(&self.params)?;
        // The client's memory: the replaced session is freed in its scope.
        memory::in_scope(Scope::Client, || drop(done.retired));
        Ok((done.pair, times))
    }
}

/// A completed handshake: the connected pair and, for resumption, the
/// session it resumed from (replaced in the [`Handshaker`] by the fresh
/// one). Dropping it frees both; the benchmarks drop it after the clock.
pub struct Handshake {
    /// The connected pair.
    pub pair: Pair,
    /// The session this handshake resumed from (resumption only).
    pub retired: Option<Session>,
}
