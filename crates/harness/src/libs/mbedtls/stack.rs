//! Mbed TLS over the in-memory transport: an `mbedtls_ssl_context` whose
//! BIO callbacks (`mbedtls_ssl_set_bio`) read from and write to the
//! connection's [`Endpoint`]; the receive callback answers an empty queue
//! with `MBEDTLS_ERR_SSL_WANT_READ` (`mbedtls/ssl.h`, "mbedtls_ssl_set_bio").
//! DTLS 1.2 runs the same contexts over a datagram endpoint, with its MTU
//! (`mbedtls_ssl_set_mtu`) and a timer that never fires (the in-memory
//! transport loses nothing; Mbed TLS's DTLS needs the callbacks,
//! `mbedtls_ssl_set_timer_cb`).
//!
//! Mbed TLS 3.6 cannot report the negotiated group or whether a handshake
//! resumed: both are read from the server's first flight as it passes the
//! callbacks ([`crate::wire::FlightScanner`]: the server's as it sends it,
//! the client's as it receives it), inside the handshake's calls, a scan of
//! a few kilobytes that keeps a few hundred bytes inline and allocates
//! nothing. Mbed TLS has no gather write (`mbedtls_ssl_write` takes one
//! buffer): vectored writes are a named skip.

use std::{
    ffi::{CStr, c_int, c_uchar, c_void},
    io::{ErrorKind, Read, Write},
    slice,
    sync::Arc,
};

use anyhow::{Context as _, Result, anyhow, bail, ensure};

use crate::{
    extensions::Extensions,
    harness::{ConfigureError, Configured, Negotiated, SendConnections, Session, TlsConnection, TlsLibrary},
    libs::mbedtls::{
        config::{MbedConfig, boxed, check, error_text, library_name},
        extensions, sys,
    },
    params::{CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
    transport::Endpoint,
    wire::FlightScanner,
};

/// Mbed TLS of this build (the system's), named `mbedtls-<version>`.
pub struct MbedTls;

impl TlsLibrary for MbedTls {
    fn name(&self) -> String {
        library_name()
    }

    /// The suite and groups by their IANA codes, as the lists take them.
    fn settings(&self, params: &Params) -> Option<String> {
        let groups: Vec<String> = params.offered_groups().iter().map(|g| g.to_string()).collect();
        Some(format!("ciphersuites [{:#06x}], groups {}", params.suite.iana_code(), groups.join(":")))
    }

    /// Its crypto's floor, libmbedcrypto through the calls its TLS layer
    /// makes ([`crate::libs::mbedtls::floor`]).
    #[cfg(feature = "crypto-floor")]
    fn crypto_floor(&self) -> Option<String> {
        use crate::floor::Backend;
        Some(crate::floor::floor_name(&super::floor::MbedCrypto::name()))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if params.datagram {
            return Err(anyhow!("{}: configure with DTLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions { config: Arc::new(MbedConfig::new(params)?) }))
    }

    /// The same contexts with `extensions` set
    /// ([`crate::libs::mbedtls::extensions`]), for the socket runner's
    /// bridge.
    fn configure_threaded(
        &self,
        params: &Params,
        extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        Ok(Arc::new(Sessions { config: Arc::new(MbedConfig::with_extensions(params, extensions)?) }))
    }

    /// DTLS 1.2 (RFC 6347) without the server's cookie exchange; DTLS 1.3
    /// is a named skip ([`MbedConfig::new`]).
    fn configure_datagram(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if !params.datagram {
            return Err(anyhow!("{}: configure_datagram with TLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions { config: Arc::new(MbedConfig::new(params)?) }))
    }
}

/// One parameter set's configuration, shared with every session made from
/// it (a context points at its configuration).
struct Sessions {
    config: Arc<MbedConfig>,
}

// SAFETY: a context holds its own endpoint and the shared configuration
// through an `Arc` (`MbedConfig`'s own promise: read only once set up, its
// DRBG and ticket keys locked inside their calls); a session to resume
// from is `MbedSession`, `Send + Sync`.
unsafe impl SendConnections for Sessions {}

impl Configured for Sessions {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let resume = match session {
            Some(Session(s)) => Some(s.downcast_ref::<MbedSession>().context("not an Mbed TLS session")?),
            None => None,
        };
        Ok(Box::new(MbedConn::new(&self.config, false, io, resume)?))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(MbedConn::new(&self.config, true, io, None)?))
    }
}

/// A client's session to resume from (`mbedtls_ssl_get_session`'s copy,
/// holding the ticket; freed with `mbedtls_ssl_session_free`).
pub struct MbedSession(Box<sys::mbedtls_ssl_session>);

impl MbedSession {
    fn new() -> MbedSession {
        let mut s = MbedSession(boxed());
        // SAFETY: a fresh structure.
        unsafe { sys::mbedtls_ssl_session_init(&mut *s.0) };
        s
    }

    /// Whether it holds a ticket (its length, which `ssl.h` keeps in the
    /// session and has no getter for).
    fn has_ticket(&self) -> bool {
        self.0.private_ticket_len > 0
    }
}

// SAFETY: a session is only read once taken: `mbedtls_ssl_set_session`
// copies it into the new context.
unsafe impl Send for MbedSession {}
// SAFETY: as for `Send`.
unsafe impl Sync for MbedSession {}

impl Drop for MbedSession {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, freed once.
        unsafe { sys::mbedtls_ssl_session_free(&mut *self.0) };
    }
}

/// The BIO callbacks' context: the endpoint, the scan of the server's
/// first flight, and the DTLS timer's state.
struct Io {
    endpoint: Endpoint,
    /// Scans what the server sends (a server: its writes; a client: its
    /// reads) until the handshake is done.
    flight: FlightScanner,
    scanning: bool,
    server: bool,
    /// Whether a DTLS retransmission timer is running (never expires).
    timer_running: bool,
}

/// One Mbed TLS context over an endpoint.
pub struct MbedConn {
    ssl: Box<sys::mbedtls_ssl_context>,
    server: bool,
    /// The BIO callbacks' context: boxed, so its address stays fixed while
    /// the context holds it; freed after the context.
    io: Box<Io>,
    config: Arc<MbedConfig>,
    /// A TLS 1.3 client's newest ticket, taken when Mbed TLS signals it
    /// (`MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET`).
    ticket: Option<MbedSession>,
    /// Whether a read returned the peer's close_notify.
    closed: bool,
    /// Whether a client's handshake reached the writing of its
    /// CertificateVerify (TLS 1.3: it sent a certificate).
    certified: bool,
    /// A read's error held back while it returns the data before it.
    failed: Option<anyhow::Error>,
}

impl MbedConn {
    /// A context of `config` on `io`, a server when `server`; a client
    /// resumes from `resume` if given. Errors: Mbed TLS refused a setting.
    pub fn new(
        config: &Arc<MbedConfig>,
        server: bool,
        io: Endpoint,
        resume: Option<&MbedSession>,
    ) -> Result<MbedConn> {
        let datagram = io.max_datagram().is_some();
        let mut conn = MbedConn {
            ssl: boxed(),
            server,
            io: Box::new(Io {
                flight: FlightScanner::new(datagram),
                scanning: true,
                server,
                timer_running: false,
                endpoint: io,
            }),
            config: Arc::clone(config),
            ticket: None,
            closed: false,
            certified: false,
            failed: None,
        };
        let side = if server { &config.server } else { &config.client };
        let ssl: *mut sys::mbedtls_ssl_context = &raw mut *conn.ssl;
        let io: *mut Io = &raw mut *conn.io;
        // SAFETY (every call below): a context initialized first, set up on a
        // live configuration that outlives it (`config`); the BIO and timer
        // context is `conn.io`, boxed and freed after the context; Mbed TLS
        // copies the host name and the resumed session.
        unsafe {
            sys::mbedtls_ssl_init(ssl);
            check(sys::mbedtls_ssl_setup(ssl, side.as_ptr()), "mbedtls_ssl_setup")?;
            sys::mbedtls_ssl_set_bio(ssl, io.cast(), Some(send), Some(receive), None);
            if let Some(mtu) = (*io).endpoint.max_datagram() {
                let mtu = u16::try_from(mtu).context("a datagram larger than 65535 bytes")?;
                sys::mbedtls_ssl_set_mtu(ssl, mtu);
                sys::mbedtls_ssl_set_timer_cb(ssl, io.cast(), Some(set_timer), Some(get_timer));
            }
            if !server {
                let names = &config.names;
                check(sys::mbedtls_ssl_set_hostname(ssl, names.sent.as_ptr()), "mbedtls_ssl_set_hostname")?;
                if names.sent != names.checked {
                    extensions::check_other_name(ssl, config);
                }
                if let Some(session) = resume {
                    check(sys::mbedtls_ssl_set_session(ssl, &*session.0), "mbedtls_ssl_set_session")?;
                }
            }
        }
        Ok(conn)
    }

    fn ptr(&mut self) -> *mut sys::mbedtls_ssl_context {
        &raw mut *self.ssl
    }

    /// The error for a failed call's code `err`: the transport's reason for
    /// a refused datagram first, then Mbed TLS's text; for a certificate
    /// that failed verification, the reasons too
    /// (`mbedtls_ssl_get_verify_result`, `mbedtls_x509_crt_verify_info`).
    fn error(&self, what: &str, err: c_int) -> anyhow::Error {
        if let Some(why) = self.io.endpoint.take_refused() {
            return anyhow!("Mbed TLS {what}: the transport refused a datagram: {why}");
        }
        if err == sys::MBEDTLS_ERR_X509_CERT_VERIFY_FAILED {
            let mut info = [0 as std::ffi::c_char; 512];
            // SAFETY: a live context; a writable buffer of the length
            // passed, which the call NUL-terminates; the prefix is static.
            let reasons = unsafe {
                let flags = sys::mbedtls_ssl_get_verify_result(&raw const *self.ssl);
                sys::mbedtls_x509_crt_verify_info(info.as_mut_ptr(), info.len(), c"".as_ptr(), flags);
                CStr::from_ptr(info.as_ptr()).to_string_lossy()
            };
            let reasons = reasons.trim_end().replace('\n', "; ");
            return anyhow!("Mbed TLS {what}: {} ({reasons})", error_text(err));
        }
        anyhow!("Mbed TLS {what}: {}", error_text(err))
    }

    /// Whether a TLS 1.3 NewSessionTicket has been read and waits to be
    /// processed (the context's state, which `ssl.h` has no getter for).
    fn ticket_pending(&self) -> bool {
        self.ssl.private_state == sys::MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET as c_int
    }

    /// Takes the ticket Mbed TLS just signalled (TLS 1.3) into
    /// [`MbedConn::ticket`] (`mbedtls_ssl_get_session`, once per ticket).
    fn keep_ticket(&mut self) -> Result<()> {
        let mut session = MbedSession::new();
        // SAFETY: a live context; the session is initialized and ours.
        let ret = unsafe { sys::mbedtls_ssl_get_session(self.ptr(), &mut *session.0) };
        check(ret, "mbedtls_ssl_get_session")?;
        self.ticket = Some(session);
        Ok(())
    }
}

/// Whether `err` is "would block" (`MBEDTLS_ERR_SSL_WANT_READ`, `_WRITE`).
fn is_want(err: c_int) -> bool {
    err == sys::MBEDTLS_ERR_SSL_WANT_READ || err == sys::MBEDTLS_ERR_SSL_WANT_WRITE
}

impl TlsConnection for MbedConn {
    /// `mbedtls_ssl_handshake`'s own loop: `mbedtls_ssl_handshake_step`
    /// until the state is `MBEDTLS_SSL_HANDSHAKE_OVER` (Mbed TLS 3.6's
    /// library/ssl_tls.c; the two checks it makes first hold by
    /// construction here), so that a client sees whether it goes through
    /// `MBEDTLS_SSL_CLIENT_CERTIFICATE_VERIFY`, which a TLS 1.3 client
    /// enters only after sending a certificate (library/ssl_tls13_client.c,
    /// `ssl_tls13_write_client_certificate`): Mbed TLS has no getter for
    /// it. Mbed TLS sends the alert for a failed handshake itself.
    fn handshake(&mut self) -> Result<bool> {
        let over = sys::MBEDTLS_SSL_HANDSHAKE_OVER as c_int;
        let certificate_verify = sys::MBEDTLS_SSL_CLIENT_CERTIFICATE_VERIFY as c_int;
        while self.ssl.private_state != over {
            self.certified |= !self.server && self.ssl.private_state == certificate_verify;
            // SAFETY: a live context.
            match unsafe { sys::mbedtls_ssl_handshake_step(self.ptr()) } {
                0 => {}
                err if is_want(err) => return Ok(false),
                err => return Err(self.error("handshake", err)),
            }
        }
        self.io.scanning = false;
        Ok(true)
    }

    /// `mbedtls_ssl_write` until all is written: it writes at most one
    /// record's payload a call (16383 bytes in TLS 1.3, whose record keeps
    /// one byte of its 16384 for the content type; 16384 in TLS 1.2).
    fn send(&mut self, data: &[u8]) -> Result<()> {
        let mut rest = data;
        while !rest.is_empty() {
            // SAFETY: a live context; `rest` is read only.
            let n = unsafe { sys::mbedtls_ssl_write(self.ptr(), rest.as_ptr(), rest.len()) };
            if n <= 0 {
                if is_want(n) {
                    bail!("mbedtls_ssl_write would block on a transport that never blocks");
                }
                if let Some(mtu) = self.io.endpoint.max_datagram() {
                    // SAFETY: a live context; the call only reads.
                    let max = unsafe { sys::mbedtls_ssl_get_max_out_record_payload(self.ptr()) };
                    if n == sys::MBEDTLS_ERR_SSL_BAD_INPUT_DATA && max >= 0 && rest.len() > max as usize {
                        bail!(
                            "Mbed TLS mbedtls_ssl_write: a write of {} bytes exceeds the largest record \
                             payload of {max} (datagrams of at most {mtu} bytes); DTLS does not split a \
                             write across datagrams",
                            rest.len()
                        );
                    }
                }
                return Err(self.error("mbedtls_ssl_write", n));
            }
            rest = &rest[n as usize..];
        }
        Ok(())
    }

    /// Reads until `buf` is full or the transport is empty. The peer's
    /// close_notify ends the stream ([`TlsConnection::peer_closed`]); a TLS
    /// 1.3 client keeps each ticket Mbed TLS signals. An error after some
    /// data returns the data first and the error on the next call.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut filled = 0;
        while filled < buf.len() && !self.closed {
            let rest = &mut buf[filled..];
            // SAFETY: a live context; `rest` is writable for its length.
            let n = unsafe { sys::mbedtls_ssl_read(self.ptr(), rest.as_mut_ptr(), rest.len()) };
            if n > 0 {
                filled += n as usize;
                continue;
            }
            let failure = match n {
                sys::MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY => {
                    self.closed = true;
                    None
                }
                sys::MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET => self.keep_ticket().err(),
                // A TLS 1.3 NewSessionTicket read but not yet processed:
                // Mbed TLS answers "want read" with its state at
                // MBEDTLS_SSL_TLS1_3_NEW_SESSION_TICKET, and processes it
                // (and signals it) on the next read.
                err if is_want(err) && self.ticket_pending() => None,
                // A post-handshake message may end a read with "want read"
                // although more is queued: read on while the transport has
                // bytes.
                err if is_want(err) && self.io.endpoint.readable() => None,
                err if is_want(err) => break,
                0 => Some(anyhow!("Mbed TLS mbedtls_ssl_read: the transport ended")),
                err => Some(self.error("mbedtls_ssl_read", err)),
            };
            if let Some(e) = failure {
                if filled == 0 {
                    return Err(e);
                }
                self.failed = Some(e);
                break;
            }
        }
        Ok(filled)
    }

    /// `mbedtls_ssl_close_notify`: sends close_notify, without waiting for
    /// the peer's.
    fn shutdown(&mut self) -> Result<()> {
        // SAFETY: a live context.
        match unsafe { sys::mbedtls_ssl_close_notify(self.ptr()) } {
            0 => Ok(()),
            err if is_want(err) => Ok(()),
            err => Err(self.error("mbedtls_ssl_close_notify", err)),
        }
    }

    /// The version (`mbedtls_ssl_get_version`) and suite
    /// (`mbedtls_ssl_get_ciphersuite_id_from_ssl`) read from Mbed TLS; the
    /// group and resumption read from the server's first flight
    /// ([`crate::wire::FlightScanner`]). Whether the client authenticated:
    /// on a server, whether the client sent a certificate
    /// (`mbedtls_ssl_get_peer_cert`; the server verifies it in the
    /// handshake, `MBEDTLS_SSL_VERIFY_REQUIRED`); on a TLS 1.3 client,
    /// whether its handshake went through writing a CertificateVerify
    /// ([`TlsConnection::handshake`]); on a (D)TLS 1.2 client, whether the
    /// server's flight asked for a certificate and its configuration has
    /// one, which Mbed TLS then sends. Errors: a version, suite or group
    /// not benchmarked here, or a flight that cannot be read.
    fn negotiated(&self) -> Result<Negotiated> {
        let ssl = &raw const *self.ssl;
        // SAFETY: a live context; the string returned is static.
        let version = unsafe { CStr::from_ptr(sys::mbedtls_ssl_get_version(ssl)) }.to_string_lossy();
        let protocol = match &*version {
            "TLSv1.2" => Protocol::Tls12,
            "TLSv1.3" => Protocol::Tls13,
            "DTLSv1.2" => Protocol::Dtls12,
            other => bail!("Mbed TLS negotiated {other}"),
        };
        // SAFETY: a live context; the call only reads.
        let id = unsafe { sys::mbedtls_ssl_get_ciphersuite_id_from_ssl(ssl) };
        let suite = u16::try_from(id)
            .ok()
            .and_then(CipherSuite::from_iana_code)
            .ok_or_else(|| anyhow!("Mbed TLS negotiated suite {id:#06x}"))?;
        let flight = self.io.flight.flight().context("reading the server's first flight")?;
        let group = match flight.group {
            Some(code) => Some(
                KxGroup::from_iana_code(code).ok_or_else(|| anyhow!("Mbed TLS negotiated group {code}"))?,
            ),
            None => None,
        };
        let client_authenticated = Some(if self.server {
            // SAFETY: a live context; the certificate (or NULL) is its own.
            !unsafe { sys::mbedtls_ssl_get_peer_cert(ssl) }.is_null()
        } else if protocol == Protocol::Tls13 {
            self.certified
        } else {
            flight.certificate_request && self.config.client_presents
        });
        Ok(Negotiated { protocol, suite, group, resumed: flight.resumed, client_authenticated })
    }

    fn peer_closed(&self) -> bool {
        self.closed
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(&raw const *self.ssl)
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("no call: Mbed TLS allocates a context's record buffers in mbedtls_ssl_setup and keeps them \
            (MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH, which shrinks them, is off in Debian's build)")
    }

    /// Reads past the server's NewSessionTicket and returns the session to
    /// resume from: TLS 1.3's newest ticket as Mbed TLS signalled it, TLS
    /// 1.2's session with its ticket (`mbedtls_ssl_get_session`). Errors:
    /// no ticket, unless a TLS 1.2 resumption (whose client resumes from
    /// the same ticket again) or another kind of handshake.
    fn take_session(&mut self) -> Result<Session> {
        self.read_past_ticket()?;
        let session = match self.ticket.take() {
            Some(ticket) => ticket,
            None => {
                let mut session = MbedSession::new();
                // SAFETY: a live context; the session is initialized and ours.
                let ret = unsafe { sys::mbedtls_ssl_get_session(self.ptr(), &mut *session.0) };
                check(ret, "mbedtls_ssl_get_session")?;
                session
            }
        };
        ensure!(
            session.has_ticket()
                || self.negotiated()?.tls12_resumed()
                || self.config.params.kind != HandshakeKind::Resumption,
            "{} client received no session ticket",
            library_name()
        );
        Ok(Session(Box::new(session)))
    }
}

impl Drop for MbedConn {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, freed once; `io` is freed after.
        unsafe { sys::mbedtls_ssl_free(&mut *self.ssl) };
    }
}

/// The receive callback: moves queued bytes (a datagram: one datagram)
/// into `buf`; `MBEDTLS_ERR_SSL_WANT_READ` when none are queued. A client
/// scans what it receives of the server's first flight.
unsafe extern "C" fn receive(ctx: *mut c_void, buf: *mut c_uchar, len: usize) -> c_int {
    // SAFETY: `ctx` is the connection's boxed `Io` (MbedConn::new), alive
    // while the context is; Mbed TLS passes `len` writable bytes.
    let (io, buf) = unsafe { (&mut *ctx.cast::<Io>(), slice::from_raw_parts_mut(buf, len)) };
    match io.endpoint.read(buf) {
        Ok(n) => {
            if io.scanning && !io.server {
                io.flight.push(&buf[..n]);
            }
            c_int::try_from(n).unwrap_or(c_int::MAX)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => sys::MBEDTLS_ERR_SSL_WANT_READ,
        Err(_) => sys::MBEDTLS_ERR_NET_RECV_FAILED,
    }
}

/// The send callback: queues `len` bytes (a datagram: one datagram); a
/// server scans what it sends of its first flight. A refused datagram's
/// reason is kept for [`Endpoint::take_refused`].
unsafe extern "C" fn send(ctx: *mut c_void, data: *const c_uchar, len: usize) -> c_int {
    // SAFETY: as in `receive`; Mbed TLS passes `len` readable bytes.
    let (io, data) = unsafe { (&mut *ctx.cast::<Io>(), slice::from_raw_parts(data, len)) };
    match io.endpoint.write(data) {
        Ok(n) => {
            if io.scanning && io.server {
                io.flight.push(&data[..n]);
            }
            c_int::try_from(n).unwrap_or(c_int::MAX)
        }
        Err(_) => sys::MBEDTLS_ERR_NET_SEND_FAILED,
    }
}

/// DTLS's timer: started (`fin_ms` > 0) or cancelled (0).
unsafe extern "C" fn set_timer(ctx: *mut c_void, _int_ms: u32, fin_ms: u32) {
    // SAFETY: the connection's boxed `Io`, as in `receive`.
    unsafe { (*ctx.cast::<Io>()).timer_running = fin_ms > 0 };
}

/// DTLS's timer: -1 when cancelled, else 0 (no delay expired: the
/// in-memory transport loses nothing, so nothing is retransmitted).
unsafe extern "C" fn get_timer(ctx: *mut c_void) -> c_int {
    // SAFETY: the connection's boxed `Io`, as in `receive`.
    if unsafe { (*ctx.cast::<Io>()).timer_running } { 0 } else { -1 }
}
