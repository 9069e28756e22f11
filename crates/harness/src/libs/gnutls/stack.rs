//! GnuTLS over the in-memory transport: a non-blocking session
//! (`GNUTLS_NONBLOCK`) whose push and pull functions write to and read
//! from the connection's [`Endpoint`]; the pull function answers an empty
//! queue with -1 and errno `EAGAIN`, which GnuTLS reports as
//! `GNUTLS_E_AGAIN` (GnuTLS manual, "Setting up the transport layer").
//! DTLS 1.2 runs the same sessions with `GNUTLS_DATAGRAM` over a datagram
//! endpoint, its MTU set from it. The gather write is GnuTLS's cork
//! (`gnutls_record_cork`, then one `gnutls_record_send` per buffer and
//! `gnutls_record_uncork`): the buffers go out in as few records as fit.

use std::{
    ffi::{c_int, c_uint, c_void},
    io::{ErrorKind, IoSlice, Read, Write},
    ptr, slice,
    sync::Arc,
};

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    extensions::Extensions,
    harness::{ConfigureError, Configured, Negotiated, SendConnections, Session, TlsConnection, TlsLibrary},
    libs::gnutls::{
        config::{GnuTlsConfig, check, error_text, free, library_name, negotiated},
        extensions, sys,
    },
    params::{HandshakeKind, Params},
    transport::Endpoint,
};

/// The DTLS retransmission timeout, ms (`gnutls_dtls_set_timeouts`; the
/// default is 1 s). Nothing is lost in memory: a retransmission would only
/// be a slow iteration (under Callgrind, say) taken for a lost flight, so it
/// is set far beyond any iteration. The handshake gives up after twice it.
const DTLS_RETRANSMIT_MS: c_uint = 60_000;

/// GnuTLS of this build (the system's libgnutls), named `gnutls-<version>`.
pub struct GnuTls;

impl TlsLibrary for GnuTls {
    fn name(&self) -> String {
        library_name()
    }

    /// Its crypto's floor, nettle and GnuTLS's crypto API as its TLS layer
    /// calls them ([`crate::libs::gnutls::floor`]).
    #[cfg(feature = "crypto-floor")]
    fn crypto_floor(&self) -> Option<String> {
        use crate::floor::Backend;
        Some(crate::floor::floor_name(&super::floor::GnuTlsCrypto::name()))
    }

    /// The priority string, which the id does not spell out.
    fn settings(&self, params: &Params) -> Option<String> {
        crate::libs::gnutls::config::priority(params).ok().map(|p| format!("priority {p}"))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if params.datagram {
            return Err(anyhow!("{}: configure with DTLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions { config: Arc::new(GnuTlsConfig::new(params)?) }))
    }

    /// The same sessions: [`TlsConnection::send_vectored`] corks the
    /// record layer around one send per buffer.
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        self.configure(params)
    }

    /// The same sessions with `extensions` set
    /// ([`crate::libs::gnutls::extensions`]), for the socket runner's
    /// bridge ([`Sessions`] may be shared between threads).
    fn configure_threaded(
        &self,
        params: &Params,
        extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        Ok(Arc::new(Sessions { config: Arc::new(GnuTlsConfig::with_extensions(params, extensions)?) }))
    }

    /// DTLS 1.2 (RFC 6347), no cookie exchange (the server answers the
    /// first ClientHello); DTLS 1.3 is a named skip ([`crate::libs::gnutls::config::priority`]).
    fn configure_datagram(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if !params.datagram {
            return Err(anyhow!("{}: configure_datagram with TLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions { config: Arc::new(GnuTlsConfig::new(params)?) }))
    }
}

/// One parameter set's configuration, shared with every session made from
/// it (they hold a reference: GnuTLS keeps pointers to the credentials and
/// the priority).
struct Sessions {
    config: Arc<GnuTlsConfig>,
}

// SAFETY: a session holds its own endpoint and the shared configuration
// through an `Arc` (GnuTLS's credentials, priority and ticket key are only
// read once set up, and may be used by sessions in several threads: GnuTLS
// manual, "Thread safety"); its resumption data is a `Vec<u8>`.
unsafe impl SendConnections for Sessions {}

impl Configured for Sessions {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let data = match session {
            Some(Session(s)) => Some(s.downcast_ref::<Vec<u8>>().context("not a GnuTLS session")?.as_slice()),
            None => None,
        };
        Ok(Box::new(GnuTlsConn::new(&self.config, false, io, data)?))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(GnuTlsConn::new(&self.config, true, io, None)?))
    }
}

/// One GnuTLS session over an endpoint.
pub struct GnuTlsConn {
    session: sys::gnutls_session_t,
    server: bool,
    /// The push and pull functions' context: boxed, so its address stays
    /// fixed while the session holds it; freed after the session.
    io: Box<Endpoint>,
    config: Arc<GnuTlsConfig>,
    /// Whether a read returned the peer's close_notify.
    closed: bool,
    /// A read's error held back while it returns the data before it.
    failed: Option<anyhow::Error>,
    /// Whether the peer sent user_canceled, its close_notify not yet read.
    canceled: bool,
    /// A resumption client's first ticket's data ([`GnuTlsConn::keep_ticket`]).
    kept: Option<Vec<u8>>,
    /// Whether a ticket's data was kept (once per connection).
    ticket_kept: bool,
    /// Whether a resumption server sent its ticket.
    ticket_sent: bool,
}

impl GnuTlsConn {
    /// A session of `config` on `io`, a server when `server`; a client
    /// resumes from `resume` (the bytes of `gnutls_session_get_data2`) if
    /// given. Full handshakes run with `GNUTLS_NO_TICKETS` on both sides.
    /// Errors: GnuTLS refused a setting.
    pub fn new(
        config: &Arc<GnuTlsConfig>,
        server: bool,
        io: Endpoint,
        resume: Option<&[u8]>,
    ) -> Result<GnuTlsConn> {
        // A client sends its one certificate whatever CAs the server names
        // (GNUTLS_FORCE_CLIENT_CERT): an identity of another CA is sent, for
        // the server to refuse, as the other libraries' clients do.
        let side =
            if server { sys::GNUTLS_SERVER } else { sys::GNUTLS_CLIENT | sys::GNUTLS_FORCE_CLIENT_CERT };
        let mut flags = side | sys::GNUTLS_NONBLOCK;
        let mtu = io.max_datagram();
        if mtu.is_some() {
            flags |= sys::GNUTLS_DATAGRAM;
        }
        let resumption = config.params.kind == HandshakeKind::Resumption;
        if !resumption {
            flags |= sys::GNUTLS_NO_TICKETS;
        } else if server {
            // One TLS 1.3 ticket, as every library here sends (GnuTLS sends
            // two by itself): sent at the end of the handshake.
            flags |= sys::GNUTLS_NO_AUTO_SEND_TICKET;
        }
        let mut session: sys::gnutls_session_t = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::gnutls_init(&mut session, flags) }, "gnutls_init")?;
        let mut conn = GnuTlsConn {
            session,
            server,
            io: Box::new(io),
            config: Arc::clone(config),
            closed: false,
            failed: None,
            canceled: false,
            kept: None,
            ticket_kept: false,
            ticket_sent: false,
        };
        conn.set_up(mtu, resume)?;
        Ok(conn)
    }

    fn set_up(&mut self, mtu: Option<usize>, resume: Option<&[u8]>) -> Result<()> {
        let s = self.session;
        let config = &self.config;
        let mtls = config.params.kind == HandshakeKind::MutualAuth;
        // SAFETY (every call below): a live session; the priority, the
        // credentials and the ticket key outlive it (`config` is held by
        // this connection); GnuTLS copies the strings and session data; the
        // transport pointer is `self.io`, boxed and freed after the session.
        unsafe {
            check(sys::gnutls_priority_set(s, config.priority.as_ptr()), "gnutls_priority_set")?;
            let cred = if self.server { &config.server } else { &config.client };
            check(
                sys::gnutls_credentials_set(s, sys::GNUTLS_CRD_CERTIFICATE, cred.as_ptr().cast()),
                "gnutls_credentials_set",
            )?;
            if self.server {
                if mtls {
                    sys::gnutls_certificate_server_set_request(s, sys::GNUTLS_CERT_REQUIRE);
                    sys::gnutls_session_set_verify_cert(s, ptr::null(), 0);
                }
                if let Some(key) = &config.ticket_key {
                    check(sys::gnutls_session_ticket_enable_server(s, key.datum()), "enabling tickets")?;
                }
            } else {
                let sent = config.names.sent.as_bytes();
                check(
                    sys::gnutls_server_name_set(s, sys::GNUTLS_NAME_DNS, sent.as_ptr().cast(), sent.len()),
                    "gnutls_server_name_set",
                )?;
                // GnuTLS keeps the pointer, not a copy: the name lives in `config`.
                sys::gnutls_session_set_verify_cert(s, config.names.checked.as_ptr(), 0);
                if let Some(data) = resume {
                    check(
                        sys::gnutls_session_set_data(s, data.as_ptr().cast(), data.len()),
                        "gnutls_session_set_data",
                    )?;
                }
            }
            extensions::set(s, config, self.server)?;
            sys::gnutls_transport_set_ptr(s, (&raw mut *self.io).cast());
            sys::gnutls_transport_set_push_function(s, Some(push));
            sys::gnutls_transport_set_pull_function(s, Some(pull));
            sys::gnutls_transport_set_pull_timeout_function(s, Some(pull_timeout));
            if let Some(mtu) = mtu {
                sys::gnutls_dtls_set_mtu(s, mtu as c_uint);
                sys::gnutls_dtls_set_timeouts(s, DTLS_RETRANSMIT_MS, 2 * DTLS_RETRANSMIT_MS);
            }
        }
        Ok(())
    }

    /// The error for a failed call: the transport's reason for a refused
    /// datagram first, then the alert received, then GnuTLS's message.
    fn error(&self, what: &str, code: c_int) -> anyhow::Error {
        if let Some(why) = self.io.take_refused() {
            return anyhow!("GnuTLS {what}: the transport refused a datagram: {why}");
        }
        if code == GNUTLS_E_WARNING_ALERT_RECEIVED || code == GNUTLS_E_FATAL_ALERT_RECEIVED {
            // SAFETY: a live session; the name is static.
            let alert = unsafe { sys::gnutls_alert_get_name(sys::gnutls_alert_get(self.session)) };
            if !alert.is_null() {
                // SAFETY: non-NULL, NUL-terminated and static.
                let alert = unsafe { std::ffi::CStr::from_ptr(alert) }.to_string_lossy();
                return anyhow!("GnuTLS {what}: {} (alert {alert})", error_text(code));
            }
        }
        if code == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR {
            // SAFETY: a live session; GnuTLS allocates `out`, freed below.
            let status = unsafe { sys::gnutls_session_get_verify_cert_status(self.session) };
            let mut out = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
            let printed = unsafe {
                sys::gnutls_certificate_verification_status_print(status, sys::GNUTLS_CRT_X509, &mut out, 0)
            };
            if printed >= 0 && !out.data.is_null() {
                // SAFETY: GnuTLS wrote a NUL-terminated string of `size` bytes.
                let text =
                    String::from_utf8_lossy(unsafe { slice::from_raw_parts(out.data, out.size as usize) })
                        .into_owned();
                free(out.data.cast());
                return anyhow!("GnuTLS {what}: {}: {text}", error_text(code));
            }
        }
        anyhow!("GnuTLS {what}: {}", error_text(code))
    }

    /// After a user_canceled alert GnuTLS 3.7 has invalidated a TLS 1.3
    /// session, so it cannot read the close_notify that follows (RFC 8446
    /// section 6.1; SunJSSE sends the two at a TLS 1.3 close): that one
    /// record is taken from the transport here by its header (an encrypted
    /// record, content type application_data, a body of at most 256 bytes:
    /// an alert, padding allowed by section 5.4), unread, and ends the
    /// stream. Not all there yet: wait. Errors: anything else, or more.
    fn after_user_canceled(&mut self) -> Result<()> {
        if self.io.max_datagram().is_some() || self.io.available() < 5 {
            return Ok(());
        }
        let queued = self.io.available();
        let mut header = [0u8; 5];
        self.io.peek_bytes(&mut header);
        let body = usize::from(u16::from_be_bytes([header[3], header[4]]));
        ensure!(
            header[..3] == [23, 3, 3] && body <= 256 && queued <= 5 + body,
            "GnuTLS: after the peer's user_canceled alert, bytes that are not one encrypted alert record \
             (header {header:?}, {queued} bytes queued)"
        );
        if queued < 5 + body {
            return Ok(());
        }
        self.io.read_bytes(&mut vec![0u8; queued]);
        self.closed = true;
        Ok(())
    }

    /// The session's resumption data (`gnutls_session_get_data2`).
    /// Errors: the library's (an invalidated session).
    fn session_data(&self) -> Result<Vec<u8>> {
        let mut data = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
        // SAFETY: a live session; GnuTLS allocates `data`, freed below.
        check(unsafe { sys::gnutls_session_get_data2(self.session, &mut data) }, "gnutls_session_get_data2")?;
        // SAFETY: GnuTLS wrote `size` bytes at `data`.
        let bytes = unsafe { slice::from_raw_parts(data.data, data.size as usize) }.to_vec();
        free(data.data.cast());
        Ok(bytes)
    }

    /// A resumption client keeps the data of the first ticket it reads, as
    /// it arrives: a user_canceled alert later (SunJSSE's TLS 1.3 close)
    /// invalidates the session, and its data with it. Errors: the library's.
    fn keep_ticket(&mut self) -> Result<()> {
        if self.server || self.ticket_kept || self.config.params.kind != HandshakeKind::Resumption {
            return Ok(());
        }
        // SAFETY: a live session; the call only reads.
        let flags = unsafe { sys::gnutls_session_get_flags(self.session) };
        if flags & sys::GNUTLS_SFLAGS_SESSION_TICKET != 0 {
            self.kept = Some(self.session_data()?);
            self.ticket_kept = true;
        }
        Ok(())
    }

    /// A TLS 1.3 resumption server's one ticket, once its handshake is
    /// done (`gnutls_session_ticket_send`; the session was made with
    /// `GNUTLS_NO_AUTO_SEND_TICKET`): part of the server's handshake, as
    /// the other libraries send theirs in it. Errors: the library's.
    fn send_ticket(&mut self) -> Result<()> {
        let resumption = self.config.params.kind == HandshakeKind::Resumption;
        if !self.server || !resumption || self.ticket_sent {
            return Ok(());
        }
        self.ticket_sent = true;
        // SAFETY: a live session; the call only reads.
        if unsafe { sys::gnutls_protocol_get_version(self.session) } != sys::GNUTLS_TLS1_3 {
            return Ok(());
        }
        // SAFETY: a live session whose handshake is done.
        let ret = unsafe { sys::gnutls_session_ticket_send(self.session, 1, 0) };
        if ret < 0 {
            return Err(self.error("gnutls_session_ticket_send", ret));
        }
        Ok(())
    }

    /// Whether `code` is a received user_canceled alert (RFC 8446 section
    /// 6.1: a closure alert, not an error).
    fn user_canceled(&self, code: c_int) -> bool {
        const USER_CANCELED: sys::gnutls_alert_description_t = 90;
        // SAFETY: a live session; the call only reads.
        let alert = || unsafe { sys::gnutls_alert_get(self.session) };
        matches!(code, GNUTLS_E_WARNING_ALERT_RECEIVED | GNUTLS_E_FATAL_ALERT_RECEIVED)
            && alert() == USER_CANCELED
    }

    /// `Ok(false)` for "would block" (`GNUTLS_E_AGAIN`, `GNUTLS_E_INTERRUPTED`).
    fn would_block(&self, what: &str, code: c_int) -> Result<bool> {
        match code {
            sys::GNUTLS_E_AGAIN | sys::GNUTLS_E_INTERRUPTED => Ok(false),
            _ => Err(self.error(what, code)),
        }
    }

    /// Sends all of `data` (`gnutls_record_send`; in DTLS each call sends
    /// one record of at most the MTU's payload).
    fn send_all(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            // SAFETY: a live session; `data` is read only.
            let n = unsafe { sys::gnutls_record_send(self.session, data.as_ptr().cast(), data.len()) };
            if n < 0 {
                self.would_block("gnutls_record_send", n as c_int)?;
                bail!("GnuTLS gnutls_record_send would block on a transport that never blocks");
            }
            ensure!(n > 0, "GnuTLS sent 0 bytes of {}", data.len());
            data = &data[n as usize..];
        }
        Ok(())
    }
}

/// GnuTLS's codes for a received alert (gnutls.h).
const GNUTLS_E_WARNING_ALERT_RECEIVED: c_int = -16;
const GNUTLS_E_FATAL_ALERT_RECEIVED: c_int = -12;
/// GnuTLS's code for a peer certificate that failed verification.
const GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR: c_int = -348;

impl TlsConnection for GnuTlsConn {
    /// A failed handshake sends the alert GnuTLS maps to its error
    /// (`gnutls_alert_send_appropriate`), as its manual's servers do.
    fn handshake(&mut self) -> Result<bool> {
        // SAFETY: a live session.
        match unsafe { sys::gnutls_handshake(self.session) } {
            0 => self.send_ticket().map(|()| true),
            code => self.would_block("handshake", code).inspect_err(|_| {
                // SAFETY: a live session; the alert goes to the transport.
                unsafe { sys::gnutls_alert_send_appropriate(self.session, code) };
            }),
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        self.send_all(data)
    }

    /// Corks the record layer, sends each buffer (GnuTLS copies it into
    /// the cork buffer), and uncorks, waiting until all is written
    /// (`GNUTLS_RECORD_WAIT`).
    fn send_vectored(&mut self, parts: &[IoSlice<'_>]) -> Result<()> {
        // SAFETY: a live session.
        unsafe { sys::gnutls_record_cork(self.session) };
        let total: usize = parts.iter().map(|p| p.len()).sum();
        for part in parts {
            self.send_all(part)?;
        }
        // SAFETY: a live session.
        let n = unsafe { sys::gnutls_record_uncork(self.session, sys::GNUTLS_RECORD_WAIT) };
        if n < 0 {
            return Err(self.error("gnutls_record_uncork", n as c_int));
        }
        ensure!(n as usize == total, "GnuTLS uncork sent {n} bytes of {total}");
        Ok(())
    }

    /// Reads until `buf` is full or the transport is empty. The peer's
    /// close_notify ends the stream ([`TlsConnection::peer_closed`]), and
    /// so does a user_canceled alert (which RFC 8446 section 6.1 has
    /// followed by close_notify; GnuTLS 3.7 reports it as a fatal alert)
    /// with the close_notify after it ([`GnuTlsConn::after_user_canceled`]). An error
    /// after some data returns the data first and the error on the next
    /// call.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut filled = 0;
        while filled < buf.len() && !self.closed {
            if self.canceled {
                self.after_user_canceled()?;
                break;
            }
            let rest = &mut buf[filled..];
            // SAFETY: a live session; `rest` is writable for its length.
            let n = unsafe { sys::gnutls_record_recv(self.session, rest.as_mut_ptr().cast(), rest.len()) };
            if n == sys::GNUTLS_E_AGAIN as isize {
                self.keep_ticket()?;
            }
            match n {
                0 => self.closed = true, // close_notify
                n if n > 0 => filled += n as usize,
                code if self.user_canceled(code as c_int) => self.canceled = true,
                // A post-handshake message (a NewSessionTicket) is processed
                // and answered with GNUTLS_E_AGAIN although more may be
                // queued: read on while the transport has bytes.
                code => match self.would_block("gnutls_record_recv", code as c_int) {
                    Ok(_) if self.io.readable() => {}
                    Ok(_) => break,
                    Err(e) if filled > 0 => {
                        self.failed = Some(e);
                        break;
                    }
                    Err(e) => return Err(e),
                },
            }
        }
        Ok(filled)
    }

    fn shutdown(&mut self) -> Result<()> {
        // SAFETY: a live session.
        match unsafe { sys::gnutls_bye(self.session, sys::GNUTLS_SHUT_WR) } {
            0 => Ok(()),
            code => self.would_block("gnutls_bye", code).map(|_| ()),
        }
    }

    fn negotiated(&self) -> Result<Negotiated> {
        negotiated(self.session, self.server)
    }

    fn peer_closed(&self) -> bool {
        self.closed
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.session)
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("no call: GnuTLS keeps a session's record buffers and frees them with it")
    }

    /// Reads past the server's NewSessionTicket, checks that one arrived
    /// (`GNUTLS_SFLAGS_SESSION_TICKET`; or, in a (D)TLS 1.2 resumption,
    /// that the session resumed), and returns the session's
    /// resumption data (`gnutls_session_get_data2`).
    fn take_session(&mut self) -> Result<Session> {
        self.read_past_ticket()?;
        // SAFETY: a live session; the call only reads.
        let ticket =
            unsafe { sys::gnutls_session_get_flags(self.session) } & sys::GNUTLS_SFLAGS_SESSION_TICKET != 0;
        ensure!(
            ticket || self.negotiated()?.tls12_resumed(),
            "{} client received no session ticket",
            library_name()
        );
        let bytes = match self.kept.take() {
            Some(bytes) => bytes,
            None => self.session_data()?,
        };
        Ok(Session(Box::new(bytes)))
    }
}

impl Drop for GnuTlsConn {
    fn drop(&mut self) {
        // SAFETY: made by gnutls_init, freed once; `io` is freed after.
        unsafe { sys::gnutls_deinit(self.session) };
    }
}

/// Sets the calling thread's `errno`, which GnuTLS reads after a push or
/// pull function returns -1.
fn set_errno(code: c_int) {
    // SAFETY: the thread's own errno location.
    unsafe { *libc::__errno_location() = code };
}

/// GnuTLS's push function: queues `len` bytes (a datagram: one datagram);
/// -1 with `EIO` when the transport refuses a datagram (its reason kept
/// for [`Endpoint::take_refused`]).
unsafe extern "C" fn push(ctx: sys::gnutls_transport_ptr_t, data: *const c_void, len: usize) -> isize {
    // SAFETY: `ctx` is the connection's boxed endpoint (set_up), alive
    // while the session is; GnuTLS passes `len` readable bytes.
    let (io, data) = unsafe { (&mut *ctx.cast::<Endpoint>(), slice::from_raw_parts(data.cast::<u8>(), len)) };
    match io.write(data) {
        Ok(n) => n as isize,
        Err(_) => {
            set_errno(libc::EIO);
            -1
        }
    }
}

/// GnuTLS's pull function: moves queued bytes (a datagram: one datagram)
/// into `buf`; -1 with `EAGAIN` when none are queued.
unsafe extern "C" fn pull(ctx: sys::gnutls_transport_ptr_t, buf: *mut c_void, len: usize) -> isize {
    // SAFETY: as in `push`; GnuTLS passes `len` writable bytes.
    let (io, buf) =
        unsafe { (&mut *ctx.cast::<Endpoint>(), slice::from_raw_parts_mut(buf.cast::<u8>(), len)) };
    match io.read(buf) {
        Ok(n) => n as isize,
        Err(e) => {
            set_errno(if e.kind() == ErrorKind::WouldBlock { libc::EAGAIN } else { libc::EIO });
            -1
        }
    }
}

/// GnuTLS's pull timeout function: 1 when a read would return data, 0 (a
/// timeout) when not. It never waits: the sessions are non-blocking.
unsafe extern "C" fn pull_timeout(ctx: sys::gnutls_transport_ptr_t, _ms: c_uint) -> c_int {
    // SAFETY: as in `push`.
    let io = unsafe { &*ctx.cast::<Endpoint>() };
    c_int::from(io.readable())
}
