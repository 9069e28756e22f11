//! The libraries with OpenSSL's API over the in-memory transport: OpenSSL
//! or AWS-LC (the `openssl` crate) or BoringSSL (the `boring` crate), one per
//! build (see [`crate::libs::openssl::config`]). An `SslStream` whose stream is the
//! [`Endpoint`]; `WANT_READ` from the library means the transport is empty.
//! DTLS runs the same connections over a datagram [`Endpoint`] (each BIO
//! read and write one datagram), the MTU set from it. Each connection's
//! settings and the read-back of what it negotiated are in
//! [`crate::libs::openssl::conn`].

use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};

use crate::{
    extensions::Extensions,
    harness::{ConfigureError, Configured, Negotiated, SendConnections, Session, TlsConnection, TlsLibrary},
    libs::openssl::{
        config::{
            ForeignTypeRef, client_context, ffi, library_name,
            ossl::ssl::{ErrorCode, SslContext, SslSession, SslStream},
            server_context,
        },
        conn::{client_ssl, negotiated, received_session, server_ssl, session_mark, set_mtu},
    },
    params::Params,
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

    /// libcrypto through the `openssl` crate (OpenSSL, or AWS-LC under it).
    #[cfg(all(feature = "crypto-floor", feature = "openssl"))]
    fn crypto_floor(&self) -> Option<String> {
        use super::floor::ossl::Ossl;
        use crate::floor::Backend;
        Some(crate::floor::floor_name(&Ossl::name()))
    }

    /// BoringSSL's libcrypto through the `boring` crate.
    #[cfg(all(feature = "crypto-floor", feature = "boring"))]
    fn crypto_floor(&self) -> Option<String> {
        use super::floor::boringssl::BoringSsl;
        use crate::floor::Backend;
        Some(crate::floor::floor_name(&BoringSsl::name()))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        Ok(Box::new(OpenSslContexts { client: client_context(params)?, server: server_context(params)? }))
    }

    /// DTLS 1.2 in OpenSSL, AWS-LC and BoringSSL; DTLS 1.3 in BoringSSL
    /// only (see [`crate::libs::openssl::config`]). The contexts come from
    /// `DTLS_method`; each connection's MTU is its endpoint's largest
    /// datagram.
    fn configure_datagram(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        if !params.datagram {
            return Err(anyhow!("{}: configure_datagram with TLS parameters {params}", self.name()).into());
        }
        self.configure(params)
    }

    /// The same contexts, for the socket runner's bridge: beside the
    /// native adapter (tokio-openssl, tokio-boring), what the bridge costs.
    fn configure_threaded(
        &self,
        params: &Params,
        extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        if *extensions != Extensions::NONE {
            return Err(ConfigureError::Unsupported(format!(
                "{}: the bridge sets no extensions on it (its native adapter does)",
                self.name()
            )));
        }
        Ok(Arc::new(OpenSslContexts { client: client_context(params)?, server: server_context(params)? }))
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

// SAFETY: the contexts are reference-counted by the library (thread-safe,
// `SslContext: Send + Sync`); a connection holds its `Ssl` and its own
// endpoint; its session is an `SslSession` (`Send + Sync`).
unsafe impl SendConnections for OpenSslContexts {}

impl Configured for OpenSslContexts {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        let session = match session {
            Some(Session(s)) => Some(s.downcast_ref::<SslSession>().context("not an OpenSSL session")?),
            None => None,
        };
        let ssl = client_ssl(&self.client, session)?;
        if let Some(mtu) = io.max_datagram() {
            set_mtu(&ssl, mtu)?;
        }
        Ok(Box::new(OpenSslConn {
            stream: SslStream::new(ssl, io)?,
            tickets_flushed: false,
            closed: false,
            mark: None,
        }))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        let ssl = server_ssl(&self.server)?;
        if let Some(mtu) = io.max_datagram() {
            set_mtu(&ssl, mtu)?;
        }
        Ok(Box::new(OpenSslConn {
            stream: SslStream::new(ssl, io)?,
            tickets_flushed: false,
            closed: false,
            mark: None,
        }))
    }
}

struct OpenSslConn {
    stream: SslStream<Endpoint>,
    /// Whether a BoringSSL/AWS-LC server has flushed its session tickets.
    #[cfg_attr(not(any(feature = "boring", openssl_awslc)), allow(dead_code))]
    tickets_flushed: bool,
    /// Whether a read returned the peer's close_notify (`SSL_ERROR_ZERO_RETURN`).
    closed: bool,
    /// A client's session when its handshake ended ([`session_mark`]): a
    /// ticket read after it (by [`TlsConnection::take_session`], or over
    /// sockets with the first response) is a new session.
    mark: Option<*mut ffi::SSL_SESSION>,
}

/// The library's error queue, for a failed C call.
#[cfg(any(feature = "boring", openssl_awslc))]
fn ossl_error_stack() -> crate::libs::openssl::config::ossl::error::ErrorStack {
    crate::libs::openssl::config::ossl::error::ErrorStack::get()
}

/// `Ok(false)` for "would block", the error otherwise.
fn would_block(e: crate::libs::openssl::config::ossl::ssl::Error) -> Result<bool> {
    match e.code() {
        ErrorCode::WANT_READ => Ok(false),
        _ => Err(anyhow!("OpenSSL: {e}")),
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
        anyhow::ensure!(n >= 0, "zero-byte SSL_write failed: {}", ossl_error_stack());
        self.tickets_flushed = true;
        Ok(())
    }
}

impl TlsConnection for OpenSslConn {
    fn handshake(&mut self) -> Result<bool> {
        match self.stream.do_handshake() {
            Ok(()) => {
                #[cfg(any(feature = "boring", openssl_awslc))]
                self.flush_tickets()?;
                self.mark = session_mark(self.stream.ssl());
                Ok(true)
            }
            Err(e) => would_block(e).map_err(|e| match self.stream.get_ref().take_refused() {
                Some(why) => anyhow!("OpenSSL handshake: the transport refused a datagram: {why}"),
                None => e,
            }),
        }
    }

    fn send(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let n = match self.stream.ssl_write(data) {
                Ok(n) => n,
                // OpenSSL's DTLS drops a datagram its BIO refused and reports
                // the failed write without the BIO's error ("unexpected EOF"):
                // the transport's own reason comes first.
                Err(e) => match self.stream.get_ref().take_refused() {
                    Some(why) => bail!("OpenSSL write: the transport refused a datagram: {why}"),
                    None => bail!("OpenSSL write: {e}"),
                },
            };
            data = &data[n..];
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.stream.ssl_read(&mut buf[filled..]) {
                Ok(n) => filled += n,
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => {
                    self.closed = true;
                    break;
                }
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
        negotiated(self.stream.ssl())
    }

    fn peer_closed(&self) -> bool {
        self.closed
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
        let before = self.mark;
        // Reading processes the server's NewSessionTicket.
        self.read_past_ticket()?;
        Ok(Session(Box::new(received_session(self.stream.ssl(), before)?)))
    }
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
