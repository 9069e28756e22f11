//! The libraries with OpenSSL's API over sockets: OpenSSL or AWS-LC through
//! tokio-openssl, BoringSSL through tokio-boring (one per build, as in
//! [`tls_bench_harness::libs::openssl::config`]). Both adapters take an `Ssl`, made by
//! [`tls_bench_harness::libs::openssl::conn`] as the in-memory stack makes it; the
//! [`adapter`] module is the only place the two differ.
//!
//! Client authentication, client side: the libraries report none after the
//! handshake, so each client connection watches its own handshake messages
//! (`SSL_set_msg_callback`, in all three): a CertificateRequest received,
//! then a Certificate sent with a certificate in it ([`ClientAuthSeen`]).

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicBool, Ordering::Relaxed},
};

use anyhow::{Context, Result, bail};
use tokio::net::TcpStream;

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, identity_base, tcp::Tcp};
use tls_bench_harness::{
    error::ConfigureError,
    harness::Negotiated,
    libs::openssl::{
        config::{
            ForeignTypeRef, client_builder, ffi, library_name,
            ossl::{
                ex_data::Index,
                ssl::{Ssl, SslContext, SslRef, SslSession},
            },
            server_builder,
        },
        conn::{SSL_set_msg_callback, client_ssl, negotiated, received_session, server_ssl, session_mark},
        extensions,
    },
    params::Params,
};

/// The OpenSSL-API library of this build.
pub struct OpenSsl;

impl Library for OpenSsl {
    fn name(&self) -> String {
        library_name()
    }

    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        let mut builder = server_builder(params)?;
        extensions::server(&mut builder, extensions.alpn, extensions.server_name);
        Ok(Arc::new(OpenSslServer(builder.build())))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        let mut builder = client_builder(&identity_base(params, extensions))?;
        if let Some(chain) = extensions.client_identity {
            extensions::present(&mut builder, chain)?;
        }
        Ok(Arc::new(OpenSslClient { context: builder.build(), extensions: *extensions }))
    }
}

struct OpenSslServer(SslContext);
struct OpenSslClient {
    context: SslContext,
    extensions: Extensions,
}

impl Server for OpenSslServer {
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_> {
        Box::pin(async move {
            let stream = adapter::handshake(server_ssl(&self.0)?, Tcp::server(tcp), true).await?;
            Ok(Box::new(OpenSslStream { stream, mark: None }) as Box<dyn Stream>)
        })
    }
}

impl Client for OpenSslClient {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            let session = match ticket {
                Some(Ticket(t)) => Some(*t.downcast::<SslSession>().ok().context("not an OpenSSL session")?),
                None => None,
            };
            let mut ssl = client_ssl(&self.context, session.as_ref())?;
            extensions::client(&mut ssl, self.extensions.alpn, self.extensions.server_name)?;
            watch_client_auth(&mut ssl)?;
            let stream = adapter::handshake(ssl, Tcp::client(tcp), false).await?;
            let mark = session_mark(stream.ssl());
            Ok(Box::new(OpenSslStream { stream, mark: Some(mark) }) as Box<dyn Stream>)
        })
    }
}

struct OpenSslStream {
    stream: adapter::SslStream<Tcp>,
    /// A client's session mark at the end of its handshake
    /// ([`session_mark`]).
    mark: Option<Option<*mut tls_bench_harness::libs::openssl::config::ffi::SSL_SESSION>>,
}

// SAFETY: the mark is a pointer compared, never dereferenced; the stream
// itself is Send.
unsafe impl Send for OpenSslStream {}

impl Stream for OpenSslStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        let ssl = self.stream.ssl();
        let mut n = negotiated(ssl)?;
        if self.mark.is_some() {
            let seen = ssl.ex_data(seen_index()?).context("the client's handshake was not watched")?;
            n.client_authenticated = Some(seen.asked.load(Relaxed) && seen.sent.load(Relaxed));
        }
        Ok(Some(n))
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.stream.ssl())
    }

    fn tcp(&mut self) -> Option<&mut Tcp> {
        Some(self.stream.get_mut())
    }

    fn ticket(&mut self) -> Result<Ticket> {
        let Some(mark) = self.mark else { bail!("a server keeps no ticket") };
        Ok(Ticket(Box::new(received_session(self.stream.ssl(), mark)?)))
    }
}

forward_io!(OpenSslStream, map_err incomplete_close, stream);

/// `e` with the kind rustls gives TCP's end without a close_notify
/// (`UnexpectedEof`, an "incomplete close", RFC 9112 section 9.8), where
/// OpenSSL, AWS-LC and BoringSSL report it as `SSL_ERROR_SYSCALL` with no
/// errno, which their crates' streams carry in an error of kind `Other`
/// ("unexpected EOF"; the `openssl` crate's `ssl::Error`). Any other error
/// is left as it is.
fn incomplete_close(e: std::io::Error) -> std::io::Error {
    use tls_bench_harness::libs::openssl::config::ossl::ssl::{Error, ErrorCode};
    let eof = e.kind() == std::io::ErrorKind::Other
        && e.get_ref()
            .and_then(|inner| inner.downcast_ref::<Error>())
            .is_some_and(|ssl| ssl.code() == ErrorCode::SYSCALL && ssl.io_error().is_none());
    if eof { std::io::Error::new(std::io::ErrorKind::UnexpectedEof, e) } else { e }
}

/// What a client connection saw of client authentication in its handshake
/// messages.
#[derive(Default)]
struct ClientAuthSeen {
    /// A CertificateRequest (handshake type 13) received.
    asked: AtomicBool,
    /// A Certificate (type 11) sent with a certificate in it: a body longer
    /// than an empty list's (3 bytes in TLS 1.2, RFC 5246 section 7.4.6; 4
    /// in TLS 1.3 with its empty request context, RFC 8446 section 4.4.2).
    sent: AtomicBool,
}

/// The extra-data slot of a client connection's [`ClientAuthSeen`].
/// Errors: the library cannot allocate an index.
fn seen_index() -> Result<Index<Ssl, ClientAuthSeen>> {
    static INDEX: OnceLock<Index<Ssl, ClientAuthSeen>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// Gives client connection `ssl` a [`ClientAuthSeen`] and the message
/// callback that fills it. Errors: as [`seen_index`].
fn watch_client_auth(ssl: &mut Ssl) -> Result<()> {
    ssl.set_ex_data(seen_index()?, ClientAuthSeen::default());
    // SAFETY: valid SSL pointer; the callback reads only what the library
    // hands it and the slot set above, which lives as long as `ssl`.
    unsafe { SSL_set_msg_callback(ssl.as_ptr(), Some(on_message)) };
    Ok(())
}

/// The message callback (OpenSSL's SSL_CTX_set_msg_callback(3),
/// BoringSSL's ssl.h): every handshake message sent or received, whole,
/// with its 4-byte header (type, 24-bit length).
unsafe extern "C" fn on_message(
    write_p: libc::c_int,
    _version: libc::c_int,
    content_type: libc::c_int,
    buf: *const libc::c_void,
    len: usize,
    ssl: *mut ffi::SSL,
    _arg: *mut libc::c_void,
) {
    const HANDSHAKE: libc::c_int = 22;
    const CERTIFICATE: u8 = 11;
    const CERTIFICATE_REQUEST: u8 = 13;
    if content_type != HANDSHAKE || buf.is_null() || len < 4 || ssl.is_null() {
        return;
    }
    // SAFETY: the library hands `len` readable bytes at `buf` and its live
    // SSL, for the length of the call.
    let (message, ssl) =
        unsafe { (std::slice::from_raw_parts(buf.cast::<u8>(), len), SslRef::from_ptr(ssl)) };
    let Ok(index) = seen_index() else { return };
    let Some(seen) = ssl.ex_data(index) else { return };
    match (write_p != 0, message[0]) {
        (false, CERTIFICATE_REQUEST) => seen.asked.store(true, Relaxed),
        (true, CERTIFICATE) => {
            let body = usize::from(message[1]) << 16 | usize::from(message[2]) << 8 | usize::from(message[3]);
            seen.sent.store(body > 4, Relaxed);
        }
        _ => {}
    }
}

/// tokio-openssl (OpenSSL, AWS-LC).
#[cfg(not(feature = "boring"))]
mod adapter {
    use std::pin::Pin;

    use anyhow::Result;
    pub use tokio_openssl::SslStream;

    use crate::tcp::Tcp;
    use tls_bench_harness::libs::openssl::config::ossl::ssl::Ssl;

    /// Runs `ssl`'s handshake on `tcp` (as a server when `server`).
    /// Errors: the library's, with the I/O error inside when there is one.
    pub async fn handshake(ssl: Ssl, tcp: Tcp, server: bool) -> Result<SslStream<Tcp>> {
        let mut stream = SslStream::new(ssl, tcp)?;
        let done =
            if server { Pin::new(&mut stream).accept().await } else { Pin::new(&mut stream).connect().await };
        match done {
            Ok(()) => Ok(stream),
            Err(e) => {
                let what =
                    format!("{} handshake: {e}", tls_bench_harness::libs::openssl::config::library_name());
                Err(match e.into_io_error() {
                    Ok(io) => anyhow::Error::new(io).context(what),
                    Err(_) => anyhow::anyhow!(what),
                })
            }
        }
    }
}

/// tokio-boring (BoringSSL).
#[cfg(feature = "boring")]
mod adapter {
    use anyhow::Result;
    pub use tokio_boring::SslStream;
    use tokio_boring::SslStreamBuilder;

    use crate::tcp::Tcp;
    use tls_bench_harness::libs::openssl::config::ossl::ssl::Ssl;

    /// Runs `ssl`'s handshake on `tcp` (as a server when `server`).
    /// Errors: the library's, with the I/O error inside when there is one.
    pub async fn handshake(ssl: Ssl, tcp: Tcp, server: bool) -> Result<SslStream<Tcp>> {
        let builder = SslStreamBuilder::new(ssl, tcp);
        let done = if server { builder.accept().await } else { builder.connect().await };
        done.map_err(|e| {
            let what = format!("{} handshake: {e}", tls_bench_harness::libs::openssl::config::library_name());
            match e.as_io_error() {
                Some(io) => anyhow::Error::new(std::io::Error::new(io.kind(), io.to_string())).context(what),
                None => anyhow::anyhow!(what),
            }
        })
    }
}
