//! The libraries with OpenSSL's API over the in-memory transport: OpenSSL
//! or AWS-LC (the `openssl` crate) or BoringSSL (the `boring` crate), one per
//! build (see [`crate::config::openssl`]). An `SslStream` whose stream is the
//! [`Endpoint`]; `WANT_READ` from the library means the transport is empty.
//! DTLS runs the same connections over a datagram [`Endpoint`] (each BIO
//! read and write one datagram), the MTU set from it.

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    certs::SERVER_NAME,
    config::openssl::{
        ForeignTypeRef, client_context, ffi, library_name,
        ossl::ssl::{ErrorCode, Ssl, SslContext, SslSession, SslStream, SslVersion},
        server_context,
    },
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    params::{CipherSuite, KxGroup, Params, Protocol},
    transport::Endpoint,
};

/// The OpenSSL-API library of this build; named by
/// [`library_name`]: `openssl-<version>`, `openssl-aws-lc-<version>` or
/// `boring-<version>+boringssl`.
pub struct OpenSsl;

impl TlsLibrary for OpenSsl {
    fn name(&self) -> String {
        library_name()
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Ok(Box::new(OpenSslContexts { client: client_context(params)?, server: server_context(params)? }))
    }

    /// DTLS 1.2 in OpenSSL, AWS-LC and BoringSSL; DTLS 1.3 in BoringSSL
    /// only (see [`crate::config::openssl`]). The contexts come from
    /// `DTLS_method`; each connection's MTU is its endpoint's largest
    /// datagram.
    fn configure_datagram(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if !params.datagram {
            return Err(anyhow!("{}: configure_datagram with TLS parameters {params}", self.name()).into());
        }
        self.configure(params)
    }

    /// Never: OpenSSL, BoringSSL and AWS-LC have no gather write (no
    /// `SSL_writev`), and the crates' `SslStream::write_vectored` is std's
    /// default, which writes only the first non-empty buffer.
    fn configure_vectored(&self, _params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Err(ConfigureError::Unsupported(format!(
            "{}: no gather write (no SSL_writev; SslStream::write_vectored writes the first buffer only)",
            self.name()
        )))
    }
}

struct OpenSslContexts {
    client: SslContext,
    server: SslContext,
}

impl Configured for OpenSslContexts {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let mut ssl = Ssl::new(&self.client)?;
        ssl.set_hostname(SERVER_NAME)?;
        ssl.param_mut().set_host(SERVER_NAME)?;
        if let Some(Session(s)) = session {
            let s = s.downcast_ref::<SslSession>().context("not an OpenSSL session")?;
            // SAFETY: the session comes from a context with the same settings.
            unsafe { ssl.set_session(s)? };
        }
        #[cfg(any(feature = "boring", openssl_awslc))]
        ssl.set_ex_data(crate::config::openssl::received_session_index()?, None);
        set_mtu(&ssl, &io)?;
        // SAFETY: valid SSL pointer (the `boring` crate has no safe wrapper).
        unsafe { ffi::SSL_set_connect_state(ssl.as_ptr()) };
        Ok(Box::new(OpenSslConn { stream: SslStream::new(ssl, io)?, tickets_flushed: false }))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        let ssl = Ssl::new(&self.server)?;
        set_mtu(&ssl, &io)?;
        // SAFETY: valid SSL pointer (the `boring` crate has no safe wrapper).
        unsafe { ffi::SSL_set_accept_state(ssl.as_ptr()) };
        Ok(Box::new(OpenSslConn { stream: SslStream::new(ssl, io)?, tickets_flushed: false }))
    }
}

/// On a datagram endpoint, tells the connection its largest datagram
/// (`SSL_set_mtu`: the datagram payload, IP and UDP headers excluded; the
/// contexts set `SSL_OP_NO_QUERY_MTU`). Nothing on a byte stream. Errors:
/// the library refuses the size.
fn set_mtu(ssl: &Ssl, io: &Endpoint) -> Result<()> {
    let Some(mtu) = io.max_datagram() else { return Ok(()) };
    // SAFETY: valid SSL pointer; the call only sets a size. OpenSSL returns
    // the MTU set (an `SSL_ctrl`), BoringSSL 1; both 0 on failure.
    let set = unsafe { ffi::SSL_set_mtu(ssl.as_ptr(), mtu as _) };
    ensure!(set > 0, "{} refuses an MTU of {mtu} bytes", library_name());
    Ok(())
}

struct OpenSslConn {
    stream: SslStream<Endpoint>,
    /// Whether a BoringSSL/AWS-LC server has flushed its session tickets.
    #[cfg_attr(not(any(feature = "boring", openssl_awslc)), allow(dead_code))]
    tickets_flushed: bool,
}

/// The library's error queue, for a failed C call.
#[cfg(any(feature = "boring", openssl_awslc))]
fn ossl_error_stack() -> crate::config::openssl::ossl::error::ErrorStack {
    crate::config::openssl::ossl::error::ErrorStack::get()
}

/// `Ok(false)` for "would block", the error otherwise.
fn would_block(e: crate::config::openssl::ossl::ssl::Error) -> Result<bool> {
    match e.code() {
        ErrorCode::WANT_READ => Ok(false),
        _ => Err(anyhow!("OpenSSL: {e}")),
    }
}

impl OpenSslConn {
    /// The negotiated group: AWS-LC and BoringSSL report its IANA code point
    /// (`SSL_get_group_id`).
    #[cfg(any(feature = "boring", openssl_awslc))]
    fn group(&self) -> Result<Option<KxGroup>> {
        // SAFETY: valid SSL pointer; the call only reads.
        let code = unsafe { ffi::SSL_get_group_id(self.stream.ssl().as_ptr()) };
        if code == 0 {
            return Ok(None);
        }
        KxGroup::from_iana_code(code).map(Some).with_context(|| format!("unknown group code point {code}"))
    }

    /// The negotiated group: OpenSSL 3.2+ reports its name
    /// (`SSL_get0_group_name`).
    #[cfg(all(not(any(feature = "boring", openssl_awslc)), ossl320))]
    fn group(&self) -> Result<Option<KxGroup>> {
        // SAFETY: the SSL pointer is valid for the stream's lifetime; the
        // returned string is static or owned by the SSL object.
        let name = unsafe { ffi::SSL_get0_group_name(self.stream.ssl().as_ptr()) };
        group_from_name(name)
    }

    /// The negotiated group: OpenSSL 3.0/3.1 report a NID
    /// (`SSL_get_negotiated_group`, an `SSL_ctrl` macro), named by
    /// `OBJ_nid2sn` (`X25519`, `prime256v1`).
    #[cfg(all(not(any(feature = "boring", openssl_awslc)), ossl300, not(ossl320)))]
    fn group(&self) -> Result<Option<KxGroup>> {
        const SSL_CTRL_GET_NEGOTIATED_GROUP: libc::c_int = 134;
        // SAFETY: valid SSL pointer; this control only reads.
        let nid = unsafe {
            ffi::SSL_ctrl(self.stream.ssl().as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, std::ptr::null_mut())
        };
        match libc::c_int::try_from(nid) {
            // SAFETY: OBJ_nid2sn returns a static string or NULL.
            Ok(nid) if nid > 0 => group_from_name(unsafe { ffi::OBJ_nid2sn(nid) }),
            _ => Ok(None),
        }
    }
    /// The negotiated group, OpenSSL 1.1.1 (the historical benchmarks): the
    /// type of the peer's key share (`SSL_get_peer_tmp_key`, an `SSL_ctrl`
    /// macro; both sides keep the peer's share), named by `OBJ_nid2sn`.
    /// For an EC key share it names the key type, not the curve: 1.1.1 reads
    /// back X25519 only, which is all the historical benchmarks use.
    #[cfg(all(not(any(feature = "boring", openssl_awslc)), not(ossl300)))]
    fn group(&self) -> Result<Option<KxGroup>> {
        const SSL_CTRL_GET_PEER_TMP_KEY: libc::c_int = 109;
        let mut key: *mut ffi::EVP_PKEY = std::ptr::null_mut();
        // SAFETY: valid SSL pointer; the control stores a new reference to
        // the peer's key share in `key`, freed below.
        let found = unsafe {
            ffi::SSL_ctrl(self.stream.ssl().as_ptr(), SSL_CTRL_GET_PEER_TMP_KEY, 0, (&raw mut key).cast())
        };
        if found != 1 || key.is_null() {
            return Ok(None);
        }
        // SAFETY: `key` is a valid EVP_PKEY we own a reference to.
        let id = unsafe { ffi::EVP_PKEY_id(key) };
        // SAFETY: releases the reference the control took.
        unsafe { ffi::EVP_PKEY_free(key) };
        ensure!(id == ffi::EVP_PKEY_X25519, "OpenSSL 1.1.1: key share type {id} is not read back here");
        // SAFETY: OBJ_nid2sn returns a static string or NULL.
        group_from_name(unsafe { ffi::OBJ_nid2sn(id) })
    }
}

impl OpenSslConn {
    /// The session of a ticket received since the session was `before`. In
    /// TLS 1.3 OpenSSL replaces the connection's session with a new one
    /// carrying the ticket (statem_clnt.c, tls_process_new_session_ticket),
    /// so a new session object is a new ticket.
    #[cfg(not(any(feature = "boring", openssl_awslc)))]
    fn new_ticket(&mut self, before: Option<*mut ffi::SSL_SESSION>) -> Result<Option<SslSession>> {
        let session = self.stream.ssl().session();
        Ok(session.filter(|s| Some(s.as_ptr()) != before).map(|s| s.to_owned()))
    }

    /// The session of a ticket received since the connection was created
    /// (see [`crate::config::openssl::received_session_index`]).
    #[cfg(any(feature = "boring", openssl_awslc))]
    fn new_ticket(&mut self, _before: Option<*mut ffi::SSL_SESSION>) -> Result<Option<SslSession>> {
        let index = crate::config::openssl::received_session_index()?;
        // SAFETY: the pointer is the stream's valid SSL object, borrowed
        // mutably through `self` for the reference's lifetime.
        let ssl =
            unsafe { crate::config::openssl::ossl::ssl::SslRef::from_ptr_mut(self.stream.ssl().as_ptr()) };
        Ok(ssl.ex_data_mut(index).and_then(Option::take))
    }
}

#[cfg(any(feature = "boring", openssl_awslc))]
impl OpenSslConn {
    /// A BoringSSL or AWS-LC server queues its TLS 1.3 session tickets until
    /// its next write (BoringSSL tls13_server.cc, `do_send_new_session_ticket`:
    /// "Consumers which don't write data to the client will need to do a
    /// zero-byte write"). The zero-byte write is part of the server's
    /// handshake here, as the tickets are in OpenSSL and rustls.
    fn flush_tickets(&mut self) -> Result<()> {
        let ssl = self.stream.ssl();
        if self.tickets_flushed || !ssl.is_server() {
            return Ok(());
        }
        // SAFETY: valid SSL pointer; zero bytes are read from the buffer.
        let n = unsafe { ffi::SSL_write(ssl.as_ptr(), [0u8; 1].as_ptr().cast(), 0) };
        ensure!(n >= 0, "zero-byte SSL_write failed: {}", ossl_error_stack());
        self.tickets_flushed = true;
        Ok(())
    }
}

/// The group named by the C string `name` (NULL: none), normalised by
/// [`KxGroup::from_library_name`].
#[cfg(not(any(feature = "boring", openssl_awslc)))]
fn group_from_name(name: *const libc::c_char) -> Result<Option<KxGroup>> {
    if name.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, NUL-terminated, static or owned by the SSL object.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
    KxGroup::from_library_name(&name).map(Some).with_context(|| format!("unknown group {name}"))
}

impl TlsConnection for OpenSslConn {
    fn handshake(&mut self) -> Result<bool> {
        match self.stream.do_handshake() {
            Ok(()) => {
                #[cfg(any(feature = "boring", openssl_awslc))]
                self.flush_tickets()?;
                Ok(true)
            }
            Err(e) => would_block(e),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let n = self.stream.ssl_write(data).map_err(|e| anyhow!("OpenSSL write: {e}"))?;
            data = &data[n..];
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.stream.ssl_read(&mut buf[filled..]) {
                Ok(n) => filled += n,
                Err(e) => {
                    would_block(e)?;
                    break;
                }
            }
        }
        Ok(filled)
    }

    fn shutdown(&mut self) -> Result<()> {
        match self.stream.shutdown() {
            Ok(_) => Ok(()),
            Err(e) => would_block(e).map(|_| ()),
        }
    }

    fn negotiated(&self) -> Result<Negotiated> {
        let ssl = self.stream.ssl();
        let protocol = match ssl.version2() {
            Some(SslVersion::TLS1_2) => Protocol::Tls12,
            Some(SslVersion::TLS1_3) => Protocol::Tls13,
            Some(SslVersion::DTLS1_2) => Protocol::Dtls12,
            #[cfg(feature = "boring")]
            Some(SslVersion::DTLS1_3) => Protocol::Dtls13,
            other => bail!("OpenSSL negotiated {other:?}"),
        };
        let cipher = ssl.current_cipher().context("no cipher negotiated")?;
        // SAFETY: valid cipher pointer; the call only reads.
        let code = unsafe { ffi::SSL_CIPHER_get_protocol_id(cipher.as_ptr()) };
        let suite = CipherSuite::from_iana_code(code)
            .with_context(|| format!("unknown suite code point {code:#06x}"))?;
        let resumed = ssl.session_reused();
        let group = self.group()?;
        let client_authenticated = (!ssl_is_client(ssl)).then(|| ssl.peer_certificate().is_some());
        Ok(Negotiated { protocol, suite, group, resumed, client_authenticated })
    }

    #[cfg(not(any(feature = "boring", openssl_awslc)))]
    fn release_buffers(&mut self) -> Result<&'static str> {
        // SAFETY: valid SSL pointer; SSL_CTRL_MODE only sets mode bits.
        unsafe {
            ffi::SSL_ctrl(
                self.stream.ssl().as_ptr(),
                ffi::SSL_CTRL_MODE,
                ffi::SSL_MODE_RELEASE_BUFFERS,
                std::ptr::null_mut(),
            )
        };
        Ok("SSL_MODE_RELEASE_BUFFERS (frees a buffer when it empties)")
    }

    #[cfg(any(feature = "boring", openssl_awslc))]
    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("always on: BoringSSL and AWS-LC free a buffer when it empties \
            (their SSL_MODE_RELEASE_BUFFERS is 0)")
    }

    fn take_session(&mut self) -> Result<Session> {
        let before = self.stream.ssl().session().map(|s| s.as_ptr());
        // Reading processes the server's NewSessionTicket.
        let mut byte = [0u8; 1];
        ensure!(self.recv(&mut byte)? == 0, "unexpected application data while waiting for a ticket");
        let session = match self.new_ticket(before)? {
            Some(session) => session,
            // (D)TLS 1.2: a server may resume without issuing a new ticket
            // (RFC 5077 section 3.3); the client keeps the session it resumed.
            None => {
                let ssl = self.stream.ssl();
                ensure!(
                    matches!(ssl.version2(), Some(SslVersion::TLS1_2 | SslVersion::DTLS1_2)),
                    "{} client received no session ticket",
                    library_name()
                );
                ssl.session().context("client has no session")?.to_owned()
            }
        };
        // SAFETY: valid session pointer; the call only reads.
        let resumable = unsafe { SSL_SESSION_is_resumable(session.as_ptr()) } == 1;
        ensure!(resumable, "{} client session is not resumable", library_name());
        Ok(Session(Box::new(session)))
    }
}

#[cfg(any(feature = "boring", openssl_awslc))]
use ffi::SSL_SESSION_is_resumable;
#[cfg(not(any(feature = "boring", openssl_awslc)))]
unsafe extern "C" {
    /// OpenSSL 1.1.1+ (AWS-LC and BoringSSL too, bound by their -sys
    /// crates); not bound by openssl-sys for OpenSSL.
    fn SSL_SESSION_is_resumable(s: *const ffi::SSL_SESSION) -> libc::c_int;
}

impl Drop for OpenSslConn {
    /// Marks the connection as shut down before `SSL_free`. OpenSSL marks the
    /// session of a connection freed without shutdown as not resumable
    /// (`ssl_clear_bad_session`), which would stop a resumption benchmark
    /// from resuming once the previous connection is dropped; a client that
    /// closes its connections cleanly keeps its sessions.
    fn drop(&mut self) {
        // SAFETY: valid SSL pointer; SSL_set_shutdown only sets flags.
        unsafe {
            ffi::SSL_set_shutdown(
                self.stream.ssl().as_ptr(),
                (ffi::SSL_SENT_SHUTDOWN | ffi::SSL_RECEIVED_SHUTDOWN) as _,
            )
        };
    }
}

fn ssl_is_client(ssl: &crate::config::openssl::ossl::ssl::SslRef) -> bool {
    // SAFETY: valid SSL pointer; SSL_is_server only reads.
    unsafe { ffi::SSL_is_server(ssl.as_ptr()) == 0 }
}
