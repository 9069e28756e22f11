//! OpenSSL (the `openssl` crate) over the in-memory transport: an
//! `SslStream` whose stream is the [`Endpoint`]; `WANT_READ` from the
//! library means the transport is empty.

use std::ffi::CStr;

use foreign_types::ForeignTypeRef;

use anyhow::{Context, Result, anyhow, bail, ensure};
use openssl::ssl::{ErrorCode, Ssl, SslContext, SslStream, SslVersion};

use crate::{
    certs::SERVER_NAME,
    config::openssl::{client_context, server_context, version},
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    params::{CipherSuite, KxGroup, Params, Protocol},
    transport::Endpoint,
};

/// OpenSSL through the `openssl` crate; named `openssl-<version>`.
pub struct OpenSsl;

impl TlsLibrary for OpenSsl {
    fn name(&self) -> String {
        format!("openssl-{}", version())
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Ok(Box::new(OpenSslContexts { client: client_context(params)?, server: server_context(params)? }))
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
            let s = s.downcast_ref::<openssl::ssl::SslSession>().context("not an OpenSSL session")?;
            // SAFETY: the session comes from a context with the same settings.
            unsafe { ssl.set_session(s)? };
        }
        ssl.set_connect_state();
        Ok(Box::new(OpenSslConn { stream: SslStream::new(ssl, io)? }))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        let mut ssl = Ssl::new(&self.server)?;
        ssl.set_accept_state();
        Ok(Box::new(OpenSslConn { stream: SslStream::new(ssl, io)? }))
    }
}

struct OpenSslConn {
    stream: SslStream<Endpoint>,
}

/// `Ok(false)` for "would block", the error otherwise.
fn would_block(e: openssl::ssl::Error) -> Result<bool> {
    match e.code() {
        ErrorCode::WANT_READ => Ok(false),
        _ => Err(anyhow!("OpenSSL: {e}")),
    }
}

impl OpenSslConn {
    /// The negotiated group's name as OpenSSL reports it.
    #[cfg(ossl320)]
    fn group_name(&self) -> Option<String> {
        // SAFETY: the SSL pointer is valid for the stream's lifetime; the
        // returned string is static or owned by the SSL object.
        let name = unsafe { openssl_sys::SSL_get0_group_name(self.stream.ssl().as_ptr()) };
        (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
    }
}

impl OpenSslConn {
    /// The negotiated group's name as OpenSSL 3.0/3.1 report it: the NID
    /// from `SSL_get_negotiated_group` (an `SSL_ctrl` macro) as a short name.
    #[cfg(not(ossl320))]
    fn group_name(&self) -> Option<String> {
        const SSL_CTRL_GET_NEGOTIATED_GROUP: libc::c_int = 134;
        // SAFETY: valid SSL pointer; this control only reads.
        let nid = unsafe {
            openssl_sys::SSL_ctrl(
                self.stream.ssl().as_ptr(),
                SSL_CTRL_GET_NEGOTIATED_GROUP,
                0,
                std::ptr::null_mut(),
            )
        };
        let nid = libc::c_int::try_from(nid).ok().filter(|n| *n > 0)?;
        // SAFETY: OBJ_nid2sn returns a static string or NULL.
        let name = unsafe { openssl_sys::OBJ_nid2sn(nid) };
        (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
    }
}

impl TlsConnection for OpenSslConn {
    fn handshake(&mut self) -> Result<bool> {
        match self.stream.do_handshake() {
            Ok(()) => Ok(true),
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
            other => bail!("OpenSSL negotiated {other:?}"),
        };
        let cipher = ssl.current_cipher().context("no cipher negotiated")?;
        let name = cipher.standard_name().context("cipher without a standard name")?;
        let suite = CipherSuite::from_iana_name(name).with_context(|| format!("unknown suite {name}"))?;
        let resumed = ssl.session_reused();
        let group = match self.group_name() {
            Some(n) => Some(KxGroup::from_library_name(&n).with_context(|| format!("unknown group {n}"))?),
            None => None,
        };
        let client_authenticated = (!ssl_is_client(ssl)).then(|| ssl.peer_certificate().is_some());
        Ok(Negotiated { protocol, suite, group, resumed, client_authenticated })
    }

    fn take_session(&mut self) -> Result<Session> {
        // Reading processes the server's NewSessionTicket. In TLS 1.3 OpenSSL
        // then replaces the connection's session with a new one carrying the
        // ticket (statem_clnt.c, tls_process_new_session_ticket), so a new
        // session object is a new ticket.
        let before = self.stream.ssl().session().map(|s| s.as_ptr());
        let mut byte = [0u8; 1];
        ensure!(self.recv(&mut byte)? == 0, "unexpected application data while waiting for a ticket");
        let ssl = self.stream.ssl();
        let session = ssl.session().context("OpenSSL client has no session")?;
        // SAFETY: valid session pointer; the call only reads.
        let resumable = unsafe { SSL_SESSION_is_resumable(session.as_ptr()) } == 1;
        ensure!(resumable, "OpenSSL client session is not resumable");
        // TLS 1.2: a server may resume without issuing a new ticket
        // (RFC 5077 section 3.3); the client keeps the session it resumed.
        let fresh = Some(session.as_ptr()) != before;
        ensure!(
            fresh || ssl.version2() == Some(SslVersion::TLS1_2),
            "OpenSSL client received no session ticket"
        );
        Ok(Session(Box::new(session.to_owned())))
    }
}

unsafe extern "C" {
    /// OpenSSL 1.1.1+, BoringSSL, AWS-LC; not bound by openssl-sys.
    fn SSL_SESSION_is_resumable(s: *const openssl_sys::SSL_SESSION) -> libc::c_int;
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
            openssl_sys::SSL_set_shutdown(
                self.stream.ssl().as_ptr(),
                openssl_sys::SSL_SENT_SHUTDOWN | openssl_sys::SSL_RECEIVED_SHUTDOWN,
            )
        };
    }
}

fn ssl_is_client(ssl: &openssl::ssl::SslRef) -> bool {
    // SAFETY: valid SSL pointer; SSL_is_server only reads.
    unsafe { openssl_sys::SSL_is_server(ssl.as_ptr()) == 0 }
}
