//! Plaintext TCP: the baseline a TLS library's figures sit beside. No
//! handshake, nothing negotiated, no tickets; the same echo and checks of
//! the bytes. No ALPN either: HTTP over it is HTTP/1.1 (no h2c).

use std::sync::Arc;

use anyhow::{Result, bail};
use tokio::net::TcpStream;

use super::{Client, Extensions, Handshaking, Library, PLAINTEXT, Server, Stream, Ticket};
use tls_bench_harness::{
    error::ConfigureError,
    harness::Negotiated,
    params::{HandshakeKind, Params},
};

/// TCP without TLS.
pub struct Plaintext;

impl Library for Plaintext {
    fn name(&self) -> String {
        PLAINTEXT.to_string()
    }

    fn server(&self, params: &Params, _: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        check(params)?;
        Ok(Arc::new(Tcp))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        check(params)?;
        if !extensions.alpn.is_empty() && !extensions.alpn.contains(&tls_bench_harness::extensions::HTTP_1_1)
        {
            return Err(ConfigureError::Unsupported(
                "plaintext TCP has no ALPN: HTTP over it is HTTP/1.1 only".to_string(),
            ));
        }
        Ok(Arc::new(Tcp))
    }

    fn plaintext(&self) -> bool {
        true
    }
}

/// Plaintext has no sessions to resume or certificates to present.
fn check(params: &Params) -> Result<(), ConfigureError> {
    match params.kind {
        HandshakeKind::ServerAuth => Ok(()),
        kind => Err(ConfigureError::Unsupported(format!("plaintext TCP has no {kind} (no TLS)"))),
    }
}

struct Tcp;

impl Server for Tcp {
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_> {
        Box::pin(async move { Ok(Box::new(TcpConn(tcp)) as Box<dyn Stream>) })
    }
}

impl Client for Tcp {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            if ticket.is_some() {
                bail!("plaintext TCP has no session to resume");
            }
            Ok(Box::new(TcpConn(tcp)) as Box<dyn Stream>)
        })
    }
}

struct TcpConn(TcpStream);

impl Stream for TcpConn {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        Ok(None)
    }

    fn alpn(&self) -> Option<&[u8]> {
        None
    }

    fn ticket(&mut self) -> Result<Ticket> {
        bail!("plaintext TCP has no session to resume")
    }
}

forward_io!(TcpConn, 0);
