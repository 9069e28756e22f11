//! s2n-tls over sockets through s2n-tls-tokio (`TlsConnector`,
//! `TlsAcceptor`), whose connections [`Conn`] makes with
//! [`tls_bench_harness::libs::s2n::config::connection`]: the security policy, blinding,
//! record size and server name the in-memory stack uses, and the ticket to
//! resume.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use s2n_tls::{
    config::Config,
    connection::{Builder, Connection},
    enums::Mode,
    error::Error,
};
use s2n_tls_tokio::{TlsAcceptor, TlsConnector, TlsStream};
use tokio::net::TcpStream;

use super::tcp::Tcp;

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, identity_base};
use tls_bench_harness::{
    certs::SERVER_NAME,
    error::ConfigureError,
    harness::{Negotiated, TlsLibrary},
    libs::s2n::{
        config::{
            client_builder, connection, fail, group, negotiated_with_group, received_ticket, server_builder,
            ticket_key,
        },
        extensions,
        policy::policy_for,
    },
    params::Params,
};

/// s2n-tls, under the security policy the in-memory benchmarks pick for a
/// parameter set ([`policy_for`]).
pub struct S2n;

impl Library for S2n {
    fn name(&self) -> String {
        tls_bench_harness::libs::s2n::stack::S2nTls.name()
    }

    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        let mut builder = server_builder(params, policy_for(params)?, &ticket_key()?)?;
        if let Some(served) = extensions.server_name {
            extensions::one_name(&mut builder, served).map_err(fail)?;
        }
        let config = builder.build().map_err(fail)?;
        Ok(Arc::new(S2nServer(TlsAcceptor::new(Conn { config, alpn: extensions.alpn, ticket: None }))))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        let mut builder = client_builder(&identity_base(params, extensions), policy_for(params)?)?;
        if let Some(chain) = extensions.client_identity {
            extensions::present(&mut builder, chain)?;
        }
        let config = builder.build().map_err(fail)?;
        Ok(Arc::new(S2nClient {
            config,
            alpn: extensions.alpn,
            name: extensions.server_name.unwrap_or(SERVER_NAME),
        }))
    }
}

/// Makes each connection: [`connection`]'s settings, its ALPN protocols,
/// and a client's ticket to resume.
#[derive(Clone)]
struct Conn {
    config: Config,
    alpn: &'static [&'static [u8]],
    ticket: Option<Arc<Vec<u8>>>,
}

impl Builder for Conn {
    type Output = Connection;

    fn build_connection(&self, mode: Mode) -> Result<Connection, Error> {
        let mut conn = connection(mode == Mode::Server, &self.config)?;
        extensions::offer(&mut conn, self.alpn)?;
        if let Some(ticket) = &self.ticket {
            conn.set_session_ticket(ticket)?;
        }
        Ok(conn)
    }
}

struct S2nServer(TlsAcceptor<Conn>);
struct S2nClient {
    config: Config,
    alpn: &'static [&'static [u8]],
    /// The name sent (SNI) and checked.
    name: &'static str,
}

/// An s2n-tls-tokio error as a result, its I/O error kept for
/// [`super::ErrorKind`].
fn failed<T>(what: &str, r: Result<T, Error>) -> Result<T> {
    r.map_err(|e| match e.kind() {
        s2n_tls::error::ErrorType::IOError => {
            let io = std::io::Error::from(e);
            anyhow::Error::new(io).context(what.to_string())
        }
        _ => anyhow::anyhow!("{what}: s2n-tls: {e}"),
    })
}

impl Server for S2nServer {
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_> {
        Box::pin(async move {
            let stream = failed("s2n-tls handshake", self.0.accept(Tcp::server(tcp)).await)?;
            Ok(Box::new(S2nStream { stream, server: true }) as Box<dyn Stream>)
        })
    }
}

impl Client for S2nClient {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            let ticket = match ticket {
                Some(Ticket(t)) => {
                    Some(Arc::new(*t.downcast::<Vec<u8>>().ok().context("not an s2n-tls ticket")?))
                }
                None => None,
            };
            let connector = TlsConnector::new(Conn { config: self.config.clone(), alpn: self.alpn, ticket });
            let stream = failed("s2n-tls handshake", connector.connect(self.name, Tcp::client(tcp)).await)?;
            Ok(Box::new(S2nStream { stream, server: false }) as Box<dyn Stream>)
        })
    }
}

struct S2nStream {
    stream: TlsStream<Tcp, Connection>,
    server: bool,
}

impl Stream for S2nStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        let conn: &Connection = self.stream.as_ref();
        let mut n = negotiated_with_group(conn, self.server, group(conn)?)?;
        // A client's side of client authentication: a CertificateRequest
        // received and a certificate sent (s2n-tls's handshake type has
        // CLIENT_AUTH and not NO_CLIENT_CERT; s2n_connection_client_cert_used).
        n.client_authenticated = Some(conn.client_cert_used());
        Ok(Some(n))
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.stream.as_ref())
    }

    fn tcp(&mut self) -> Option<&mut Tcp> {
        Some(self.stream.get_mut())
    }

    fn ticket(&mut self) -> Result<Ticket> {
        if self.server {
            bail!("a server keeps no ticket");
        }
        Ok(Ticket(Box::new(received_ticket(self.stream.as_mut())?)))
    }

    /// Not in TLS 1.2: `s2n_shutdown_send` closes both directions there
    /// (`s2n_connection_check_io_status`), and s2n-tls-tokio's shutdown
    /// is `s2n_shutdown_send`.
    fn reads_after_close_notify(&self) -> bool {
        let conn: &Connection = self.stream.as_ref();
        !conn.actual_protocol_version().is_ok_and(|v| v == s2n_tls::enums::Version::TLS12)
    }
}

forward_io!(S2nStream, stream);
