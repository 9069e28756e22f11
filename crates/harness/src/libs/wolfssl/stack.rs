//! wolfSSL over the in-memory transport: a session whose I/O callbacks
//! (`wolfSSL_SSLSetIORecv`, `wolfSSL_SSLSetIOSend`) read from and write to
//! the connection's [`Endpoint`]; the receive callback answers an empty
//! queue with `WOLFSSL_CBIO_ERR_WANT_READ`, which wolfSSL reports as
//! `WOLFSSL_ERROR_WANT_READ` (wolfSSL manual, section 5.1.2, "Custom
//! Input/Output Abstraction Layer"). DTLS 1.3 runs the same sessions over
//! a datagram endpoint, non-blocking, its MTU set from it. The gather
//! write is `wolfSSL_writev`, which copies the buffers into one and
//! writes it as `wolfSSL_write` does.

use std::{
    ffi::{c_char, c_int, c_ushort, c_void},
    io::{ErrorKind, IoSlice, Read, Write},
    ptr, slice,
    sync::Arc,
};

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use wolfssl_sys as sys;

use crate::{
    extensions::Extensions,
    harness::{ConfigureError, Configured, Negotiated, SendConnections, Session, TlsConnection, TlsLibrary},
    libs::wolfssl::{
        config::{WolfConfig, check, cipher_name, error_text, library_name, negotiated},
        extensions,
    },
    params::{HandshakeKind, Params},
    transport::Endpoint,
};

/// wolfSSL's default session timeout, s (`WOLFSSL_SESSION_TIMEOUT`,
/// internal.h), for a ticket whose lifetime the server left unspecified.
const DEFAULT_SESSION_TIMEOUT: std::ffi::c_long = 500;

/// wolfSSL of this build (wolfssl-sys's vendored one), named
/// `wolfssl-<version>`.
pub struct WolfSsl;

impl TlsLibrary for WolfSsl {
    fn name(&self) -> String {
        library_name()
    }

    /// The cipher list and the groups, which the id does not spell out.
    fn settings(&self, params: &Params) -> Option<String> {
        let groups: Vec<String> = params.offered_groups().iter().map(|g| g.to_string()).collect();
        Some(format!("cipher list {}, groups {}", cipher_name(params.suite), groups.join(":")))
    }

    /// wolfCrypt, of the same build ([`super::floor`]).
    #[cfg(feature = "crypto-floor")]
    fn crypto_floor(&self) -> Option<String> {
        use crate::floor::Backend;
        Some(crate::floor::floor_name(&super::floor::WolfCrypt::name()))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if params.datagram {
            return Err(anyhow!("{}: configure with DTLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions::new(WolfConfig::new(params)?)))
    }

    /// The same sessions: [`TlsConnection::send_vectored`] is
    /// `wolfSSL_writev`.
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        self.configure(params)
    }

    /// The same sessions with `extensions` set
    /// ([`crate::libs::wolfssl::extensions`]), for the socket runner's
    /// bridge ([`Sessions`] may be shared between threads).
    fn configure_threaded(
        &self,
        params: &Params,
        extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        Ok(Arc::new(Sessions::new(WolfConfig::with_extensions(params, extensions)?)))
    }

    /// DTLS 1.3 (RFC 9147) without the server's cookie exchange; DTLS 1.2
    /// is a named skip (the module's docs).
    fn configure_datagram(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if !params.datagram {
            return Err(anyhow!("{}: configure_datagram with TLS parameters {params}", self.name()).into());
        }
        Ok(Box::new(Sessions::new(WolfConfig::new(params)?)))
    }
}

/// One parameter set's configuration, shared with every session made from
/// it (they hold a reference: wolfSSL sessions point at their context).
struct Sessions {
    config: Arc<WolfConfig>,
}

impl Sessions {
    /// The sessions of `config`, its client context told to mark a
    /// connection whose server asks for a certificate ([`cert_requested`]).
    fn new(config: WolfConfig) -> Sessions {
        // SAFETY: a live context, set up before any session is made.
        unsafe {
            sys::wolfSSL_CTX_set_cert_cb(config.client.as_ptr(), Some(cert_requested), ptr::null_mut())
        };
        Sessions { config: Arc::new(config) }
    }
}

// SAFETY: a session holds its own endpoint and the shared configuration
// through an `Arc` (wolfSSL's contexts are only read once set up and may be
// shared by sessions in several threads); its resumption data is a
// `WolfSession`, which is Send and Sync.
unsafe impl SendConnections for Sessions {}

impl Configured for Sessions {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let resume = match session {
            Some(Session(s)) => Some(s.downcast_ref::<WolfSession>().context("not a wolfSSL session")?),
            None => None,
        };
        Ok(Box::new(WolfConn::new(&self.config, false, io, resume)?))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(WolfConn::new(&self.config, true, io, None)?))
    }

    /// 255: a wolfSSL server restores a resumed ticket's nonce and
    /// increments it for the ticket it sends, one byte that it refuses to
    /// wrap (`SESSION_TICKET_NONCE_OVERFLOW`, src/tls13.c).
    fn resumption_chain_limit(&self) -> Option<u64> {
        Some(MAX_CHAINED_RESUMPTIONS)
    }
}

/// The most resumptions in a row a wolfSSL server allows, each from the
/// ticket of the one before: its TLS 1.3 ticket nonce, one byte, counts
/// from 0 at the full handshake and it refuses to pass 255.
pub const MAX_CHAINED_RESUMPTIONS: u64 = 255;

/// A client's session to resume from (`wolfSSL_get1_session`; freed with
/// `wolfSSL_SESSION_free`).
pub struct WolfSession(*mut sys::WOLFSSL_SESSION);

// SAFETY: a wolfSSL session is reference-counted under a lock and not
// changed once taken; a client only reads it (`wolfSSL_set_session`).
unsafe impl Send for WolfSession {}
// SAFETY: as for `Send`.
unsafe impl Sync for WolfSession {}

impl Drop for WolfSession {
    fn drop(&mut self) {
        // SAFETY: taken by wolfSSL_get1_session, released once.
        unsafe { sys::wolfSSL_SESSION_free(self.0) };
    }
}

/// The I/O callbacks' context: the endpoint, and whether the server asked
/// for a certificate ([`cert_requested`]).
struct Io {
    endpoint: Endpoint,
    asked: bool,
}

/// One wolfSSL session over an endpoint.
pub struct WolfConn {
    ssl: *mut sys::WOLFSSL,
    server: bool,
    /// The I/O callbacks' context: boxed, so its address stays fixed while
    /// the session holds it; freed after the session.
    io: Box<Io>,
    config: Arc<WolfConfig>,
    /// Whether a read returned the peer's close_notify.
    closed: bool,
    /// A read's error held back while it returns the data before it.
    failed: Option<anyhow::Error>,
}

impl WolfConn {
    /// A session of `config` on `io`, a server when `server`; a client
    /// resumes from `resume` if given. Errors: wolfSSL refused a setting.
    pub fn new(
        config: &Arc<WolfConfig>,
        server: bool,
        io: Endpoint,
        resume: Option<&WolfSession>,
    ) -> Result<WolfConn> {
        let ctx = if server { &config.server } else { &config.client };
        // SAFETY: a live context, which outlives the session (`config`).
        let ssl = unsafe { sys::wolfSSL_new(ctx.as_ptr()) };
        ensure!(!ssl.is_null(), "wolfSSL_new failed");
        let mut conn = WolfConn {
            ssl,
            server,
            io: Box::new(Io { endpoint: io, asked: false }),
            config: Arc::clone(config),
            closed: false,
            failed: None,
        };
        conn.set_up(resume)?;
        Ok(conn)
    }

    fn set_up(&mut self, resume: Option<&WolfSession>) -> Result<()> {
        let ssl = self.ssl;
        let config = &self.config;
        let io: *mut Io = &raw mut *self.io;
        // SAFETY (every call below): a live session; wolfSSL copies the names
        // and takes its own reference to a resumed session; the I/O context
        // is `self.io`, boxed and freed after the session.
        unsafe {
            sys::wolfSSL_SSLSetIORecv(ssl, Some(receive));
            sys::wolfSSL_SSLSetIOSend(ssl, Some(send));
            sys::wolfSSL_SetIOReadCtx(ssl, io.cast());
            sys::wolfSSL_SetIOWriteCtx(ssl, io.cast());
            if let Some(mtu) = self.io.endpoint.max_datagram() {
                sys::wolfSSL_dtls_set_using_nonblock(ssl, 1);
                let mtu = c_ushort::try_from(mtu).context("a datagram larger than 65535 bytes")?;
                check(sys::wolfSSL_dtls_set_mtu(ssl, mtu), "wolfSSL_dtls_set_mtu")?;
                if self.server {
                    check(sys::wolfSSL_disable_hrr_cookie(ssl), "wolfSSL_disable_hrr_cookie")?;
                }
            }
            if !self.server {
                check(
                    sys::wolfSSL_check_domain_name(ssl, config.names.checked.as_ptr()),
                    "wolfSSL_check_domain_name",
                )?;
                let sent = config.names.sent.as_bytes();
                let ret = sys::wolfSSL_UseSNI(
                    ssl,
                    sys::WOLFSSL_SNI_HOST_NAME as u8,
                    sent.as_ptr().cast(),
                    sent.len() as c_ushort,
                );
                check(ret, "wolfSSL_UseSNI")?;
                if let Some(session) = resume {
                    check(sys::wolfSSL_set_session(ssl, session.0), "wolfSSL_set_session")?;
                }
            }
        }
        extensions::set(ssl, config, self.server)
    }

    /// The error for a failed call's code `err` (`wolfSSL_get_error`): the
    /// transport's reason for a refused datagram first, then the alert
    /// received, then wolfSSL's text.
    fn error(&self, what: &str, err: c_int) -> anyhow::Error {
        if let Some(why) = self.io.endpoint.take_refused() {
            return anyhow!("wolfSSL {what}: the transport refused a datagram: {why}");
        }
        let mut history = sys::WOLFSSL_ALERT_HISTORY {
            last_rx: sys::WOLFSSL_ALERT { code: 0, level: 0 },
            last_tx: sys::WOLFSSL_ALERT { code: 0, level: 0 },
        };
        // SAFETY: a live session; `history` is writable.
        let got = unsafe { sys::wolfSSL_get_alert_history(self.ssl, &mut history) };
        // No alert received reads back as code -1.
        if got == sys::WOLFSSL_SUCCESS as c_int && history.last_rx.code >= 0 {
            return anyhow!("wolfSSL {what}: {} (alert {} received)", error_text(err), history.last_rx.code);
        }
        anyhow!("wolfSSL {what}: {}", error_text(err))
    }

    /// The error code of a call that returned `ret` (`wolfSSL_get_error`).
    fn code(&self, ret: c_int) -> c_int {
        // SAFETY: a live session.
        unsafe { sys::wolfSSL_get_error(self.ssl, ret) }
    }

    /// Sends all of `data` (`wolfSSL_write`).
    fn send_all(&mut self, data: &[u8]) -> Result<()> {
        let len = c_int::try_from(data.len()).context("a write over 2 GiB")?;
        // SAFETY: a live session; `data` is read only.
        let n = unsafe { sys::wolfSSL_write(self.ssl, data.as_ptr().cast(), len) };
        if n <= 0 {
            let err = self.code(n);
            if is_want(err) {
                bail!("wolfSSL_write would block on a transport that never blocks");
            }
            return Err(self.error("wolfSSL_write", err));
        }
        ensure!(n == len, "wolfSSL wrote {n} bytes of {len}");
        Ok(())
    }
}

/// Whether `err` is "would block" (`WOLFSSL_ERROR_WANT_READ`, `_WRITE`).
fn is_want(err: c_int) -> bool {
    err == sys::WOLFSSL_ERROR_WANT_READ as c_int || err == sys::WOLFSSL_ERROR_WANT_WRITE as c_int
}

impl TlsConnection for WolfConn {
    /// `wolfSSL_negotiate` (connect or accept by side). wolfSSL sends the
    /// alert for a failed handshake itself.
    fn handshake(&mut self) -> Result<bool> {
        // SAFETY: a live session.
        let ret = unsafe { sys::wolfSSL_negotiate(self.ssl) };
        if ret == sys::WOLFSSL_SUCCESS as c_int {
            return Ok(true);
        }
        match self.code(ret) {
            err if is_want(err) => Ok(false),
            err => Err(self.error("handshake", err)),
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        self.send_all(data)
    }

    /// `wolfSSL_writev`: wolfSSL copies the buffers into one and writes it.
    fn send_vectored(&mut self, parts: &[IoSlice<'_>]) -> Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let iov: Vec<sys::iovec> = parts
            .iter()
            .map(|p| sys::iovec { iov_base: p.as_ptr().cast_mut().cast(), iov_len: p.len() })
            .collect();
        let count = c_int::try_from(iov.len()).context("too many buffers")?;
        // SAFETY: a live session; wolfSSL only reads the buffers.
        let n = unsafe { sys::wolfSSL_writev(self.ssl, iov.as_ptr(), count) };
        if n <= 0 && total > 0 {
            return Err(self.error("wolfSSL_writev", self.code(n)));
        }
        ensure!(n as usize == total, "wolfSSL_writev wrote {n} bytes of {total}");
        Ok(())
    }

    /// Reads until `buf` is full or the transport is empty. The peer's
    /// close_notify ends the stream ([`TlsConnection::peer_closed`]). An
    /// error after some data returns the data first and the error on the
    /// next call.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut filled = 0;
        while filled < buf.len() && !self.closed {
            let rest = &mut buf[filled..];
            let len = c_int::try_from(rest.len()).unwrap_or(c_int::MAX);
            // SAFETY: a live session; `rest` is writable for `len` bytes.
            let n = unsafe { sys::wolfSSL_read(self.ssl, rest.as_mut_ptr().cast(), len) };
            if n > 0 {
                filled += n as usize;
                continue;
            }
            match self.code(n) {
                err if err == sys::WOLFSSL_ERROR_ZERO_RETURN as c_int => self.closed = true,
                // A post-handshake message (a NewSessionTicket, a DTLS 1.3
                // ACK) may end a read with "want read" although more is
                // queued: read on while the transport has bytes.
                err if is_want(err) && self.io.endpoint.readable() => {}
                err if is_want(err) => break,
                err => {
                    let e = self.error("wolfSSL_read", err);
                    if filled == 0 {
                        return Err(e);
                    }
                    self.failed = Some(e);
                    break;
                }
            }
        }
        Ok(filled)
    }

    /// `wolfSSL_shutdown`: sends close_notify, without waiting for the
    /// peer's (`WOLFSSL_SHUTDOWN_NOT_DONE` is success here).
    fn shutdown(&mut self) -> Result<()> {
        // SAFETY: a live session.
        let ret = unsafe { sys::wolfSSL_shutdown(self.ssl) };
        if ret == sys::WOLFSSL_SUCCESS as c_int || ret == sys::WOLFSSL_SHUTDOWN_NOT_DONE as c_int {
            return Ok(());
        }
        match self.code(ret) {
            err if is_want(err) => Ok(()),
            err => Err(self.error("wolfSSL_shutdown", err)),
        }
    }

    /// [`negotiated`]; a client reports client authentication too: the
    /// server asked for a certificate ([`cert_requested`]) and this client
    /// has one to send.
    fn negotiated(&self) -> Result<Negotiated> {
        let mut n = negotiated(self.ssl, self.server)?;
        if !self.server {
            let identity = self.config.params.kind == HandshakeKind::MutualAuth
                || self.config.extensions.client_identity.is_some();
            n.client_authenticated = Some(self.io.asked && identity);
        }
        Ok(n)
    }

    fn peer_closed(&self) -> bool {
        self.closed
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.ssl)
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("no call: wolfSSL has none that releases a session's record buffers")
    }

    /// Reads past the server's NewSessionTicket, checks that the session
    /// holds a ticket (`wolfSSL_SESSION_has_ticket`; or, in a TLS 1.2
    /// resumption, that it resumed), and returns it
    /// (`wolfSSL_get1_session`).
    fn take_session(&mut self) -> Result<Session> {
        self.read_past_ticket()?;
        // SAFETY: a live session; the caller owns the reference returned.
        let session = unsafe { sys::wolfSSL_get1_session(self.ssl) };
        ensure!(!session.is_null(), "{}: wolfSSL_get1_session returned no session", library_name());
        let session = WolfSession(session);
        // A TLS 1.2 ticket whose lifetime_hint is 0 ("unspecified", RFC 5077
        // section 3.3; Go's servers send it) becomes a session timeout of 0
        // in wolfSSL: expired at once, so `wolfSSL_set_session` would quietly
        // not resume. It gets wolfSSL's own default timeout
        // (`WOLFSSL_SESSION_TIMEOUT`, 500 s), as an unspecified lifetime means.
        // SAFETY: a live session object, this client's own reference.
        unsafe {
            if sys::wolfSSL_SESSION_get_timeout(session.0) == 0 {
                sys::wolfSSL_SSL_SESSION_set_timeout(session.0, DEFAULT_SESSION_TIMEOUT);
            }
        }
        // SAFETY: a live session object; the call only reads.
        let ticket = unsafe { sys::wolfSSL_SESSION_has_ticket(session.0) } != 0;
        ensure!(
            ticket
                || self.negotiated()?.tls12_resumed()
                || self.config.params.kind != HandshakeKind::Resumption,
            "{} client received no session ticket",
            library_name()
        );
        Ok(Session(Box::new(session)))
    }
}

impl Drop for WolfConn {
    fn drop(&mut self) {
        // SAFETY: made by wolfSSL_new, freed once; `io` is freed after.
        unsafe { sys::wolfSSL_free(self.ssl) };
    }
}

/// A client context's certificate hook (`wolfSSL_CTX_set_cert_cb`), which
/// wolfSSL calls on a client only when a CertificateRequest arrives (TLS
/// 1.3: `DoTls13CertificateRequest`; TLS 1.2: `DoCertificateRequest`):
/// marks the connection. 1: go on.
unsafe extern "C" fn cert_requested(ssl: *mut sys::WOLFSSL, _arg: *mut c_void) -> c_int {
    // SAFETY: a live session whose read context is its connection's boxed
    // `Io` (set_up), alive while the session is.
    unsafe {
        let io = sys::wolfSSL_GetIOReadCtx(ssl).cast::<Io>();
        if let Some(io) = io.as_mut() {
            io.asked = true;
        }
    }
    1
}

/// wolfSSL's receive callback: moves queued bytes (a datagram: one
/// datagram) into `buf`; `WOLFSSL_CBIO_ERR_WANT_READ` when none are queued.
unsafe extern "C" fn receive(
    _ssl: *mut sys::WOLFSSL,
    buf: *mut c_char,
    len: c_int,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: `ctx` is the connection's boxed `Io` (set_up), alive while
    // the session is; wolfSSL passes `len` writable bytes.
    let (io, buf) = unsafe {
        (&mut (*ctx.cast::<Io>()).endpoint, slice::from_raw_parts_mut(buf.cast::<u8>(), len as usize))
    };
    match io.read(buf) {
        Ok(n) => n as c_int,
        Err(e) if e.kind() == ErrorKind::WouldBlock => sys::IOerrors_WOLFSSL_CBIO_ERR_WANT_READ as c_int,
        Err(_) => sys::IOerrors_WOLFSSL_CBIO_ERR_GENERAL as c_int,
    }
}

/// wolfSSL's send callback: queues `len` bytes (a datagram: one datagram);
/// `WOLFSSL_CBIO_ERR_GENERAL` when the transport refuses a datagram (its
/// reason kept for [`Endpoint::take_refused`]).
unsafe extern "C" fn send(_ssl: *mut sys::WOLFSSL, data: *mut c_char, len: c_int, ctx: *mut c_void) -> c_int {
    // SAFETY: as in `receive`; wolfSSL passes `len` readable bytes.
    let (io, data) = unsafe {
        (&mut (*ctx.cast::<Io>()).endpoint, slice::from_raw_parts(data.cast::<u8>(), len as usize))
    };
    match io.write(data) {
        Ok(n) => n as c_int,
        Err(_) => sys::IOerrors_WOLFSSL_CBIO_ERR_GENERAL as c_int,
    }
}
