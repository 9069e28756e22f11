//! The libraries with OpenSSL's API over sockets: OpenSSL or AWS-LC through
//! tokio-openssl, BoringSSL through tokio-boring (one per build, as in
//! [`crate::config::openssl`]). Both adapters take an `Ssl`, made by
//! [`crate::config::openssl_conn`] as the in-memory stack makes it; the
//! [`adapter`] module is the only place the two differ.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use tokio::net::TcpStream;

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, identity_base};
use crate::{
    config::{
        extensions,
        openssl::{
            client_builder, library_name,
            ossl::ssl::{SslContext, SslSession},
            server_builder,
        },
        openssl_conn::{client_ssl, negotiated, received_session, server_ssl, session_mark},
    },
    error::ConfigureError,
    harness::Negotiated,
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
        extensions::openssl::server(&mut builder, extensions.alpn, extensions.server_name);
        Ok(Arc::new(OpenSslServer(builder.build())))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        let mut builder = client_builder(&identity_base(params, extensions))?;
        if let Some(chain) = extensions.client_identity {
            extensions::openssl::present(&mut builder, chain)?;
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
            let stream = adapter::handshake(server_ssl(&self.0)?, tcp, true).await?;
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
            extensions::openssl::client(&mut ssl, self.extensions.alpn, self.extensions.server_name)?;
            let stream = adapter::handshake(ssl, tcp, false).await?;
            let mark = session_mark(stream.ssl());
            Ok(Box::new(OpenSslStream { stream, mark: Some(mark) }) as Box<dyn Stream>)
        })
    }
}

struct OpenSslStream {
    stream: adapter::SslStream<TcpStream>,
    /// A client's session mark at the end of its handshake
    /// ([`session_mark`]).
    mark: Option<Option<*mut crate::config::openssl::ffi::SSL_SESSION>>,
}

// SAFETY: the mark is a pointer compared, never dereferenced; the stream
// itself is Send.
unsafe impl Send for OpenSslStream {}

impl Stream for OpenSslStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        negotiated(self.stream.ssl()).map(Some)
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::openssl::chosen(self.stream.ssl())
    }

    fn ticket(&mut self) -> Result<Ticket> {
        let Some(mark) = self.mark else { bail!("a server keeps no ticket") };
        Ok(Ticket(Box::new(received_session(self.stream.ssl(), mark)?)))
    }
}

forward_io!(OpenSslStream, stream);

/// tokio-openssl (OpenSSL, AWS-LC).
#[cfg(not(feature = "boring"))]
mod adapter {
    use std::pin::Pin;

    use anyhow::Result;
    use tokio::net::TcpStream;
    pub use tokio_openssl::SslStream;

    use crate::config::openssl::ossl::ssl::Ssl;

    /// Runs `ssl`'s handshake on `tcp` (as a server when `server`).
    /// Errors: the library's, with the I/O error inside when there is one.
    pub async fn handshake(ssl: Ssl, tcp: TcpStream, server: bool) -> Result<SslStream<TcpStream>> {
        let mut stream = SslStream::new(ssl, tcp)?;
        let done =
            if server { Pin::new(&mut stream).accept().await } else { Pin::new(&mut stream).connect().await };
        match done {
            Ok(()) => Ok(stream),
            Err(e) => {
                let what = format!("{} handshake: {e}", crate::config::openssl::library_name());
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
    use tokio::net::TcpStream;
    pub use tokio_boring::SslStream;
    use tokio_boring::SslStreamBuilder;

    use crate::config::openssl::ossl::ssl::Ssl;

    /// Runs `ssl`'s handshake on `tcp` (as a server when `server`).
    /// Errors: the library's, with the I/O error inside when there is one.
    pub async fn handshake(ssl: Ssl, tcp: TcpStream, server: bool) -> Result<SslStream<TcpStream>> {
        let builder = SslStreamBuilder::new(ssl, tcp);
        let done = if server { builder.accept().await } else { builder.connect().await };
        done.map_err(|e| {
            let what = format!("{} handshake: {e}", crate::config::openssl::library_name());
            match e.as_io_error() {
                Some(io) => anyhow::Error::new(std::io::Error::new(io.kind(), io.to_string())).context(what),
                None => anyhow::anyhow!(what),
            }
        })
    }
}
