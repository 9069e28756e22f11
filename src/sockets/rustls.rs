//! rustls over sockets through tokio-rustls (`TlsConnector`,
//! `TlsAcceptor`), on the configs of [`crate::config::rustls`].
//!
//! Resumption: rustls takes a client's ticket from its config's session
//! store, so a client that resumes has a config of its own (a clone of the
//! parameter set's, with its own [`CountingStore`]); that config is its
//! [`Ticket`].

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::{ClientConfig, ServerConfig, pki_types::ServerName};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector, client, server};

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, io_failed};
use crate::{
    config::{
        extensions,
        rustls::{CountingStore, Provider, client_config, negotiated, own_store, server_config, server_name},
    },
    error::ConfigureError,
    harness::{Negotiated, TlsLibrary},
    params::{HandshakeKind, Params},
};

/// rustls with one crypto provider.
pub struct Rustls {
    /// The crypto provider.
    pub provider: Provider,
}

impl Library for Rustls {
    fn name(&self) -> String {
        crate::stacks::rustls::Rustls { provider: self.provider }.name()
    }

    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        let mut config: ServerConfig = server_config(self.provider, params)?;
        extensions::rustls::server(&mut config, extensions.alpn, extensions.server_name);
        Ok(Arc::new(RustlsServer(TlsAcceptor::from(Arc::new(config)))))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        let mut config = client_config(self.provider, params)?;
        extensions::rustls::client(&mut config, extensions.alpn);
        if let Some(chain) = extensions.client_identity {
            extensions::rustls::present(&mut config, chain)?;
        }
        let name = match extensions.server_name {
            Some(name) => ServerName::try_from(name)
                .map_err(|e| ConfigureError::Failed(anyhow::anyhow!("server name {name:?}: {e}")))?,
            None => server_name()?,
        };
        Ok(Arc::new(RustlsClient { config, name, resumes: params.kind == HandshakeKind::Resumption }))
    }
}

struct RustlsServer(TlsAcceptor);

impl Server for RustlsServer {
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_> {
        Box::pin(async move {
            let stream = io_failed("rustls handshake", self.0.accept(tcp).await)?;
            Ok(Box::new(ServerStream(stream)) as Box<dyn Stream>)
        })
    }
}

struct RustlsClient {
    config: ClientConfig,
    /// The name sent (SNI) and checked.
    name: ServerName<'static>,
    resumes: bool,
}

/// A resuming client's own config and its session store.
struct OwnConfig {
    config: Arc<ClientConfig>,
    store: Arc<CountingStore>,
}

impl Client for RustlsClient {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            let own = match ticket {
                Some(Ticket(t)) => Some(*t.downcast::<OwnConfig>().ok().context("not a rustls ticket")?),
                None if self.resumes => {
                    let mut config = self.config.clone();
                    let store = own_store(&mut config);
                    Some(OwnConfig { config: Arc::new(config), store })
                }
                None => None,
            };
            let config = match &own {
                Some(own) => own.config.clone(),
                None => Arc::new(self.config.clone()),
            };
            let seen = own.as_ref().map_or(0, |o| o.store.stored());
            let stream = io_failed(
                "rustls handshake",
                TlsConnector::from(config).connect(self.name.clone(), tcp).await,
            )?;
            Ok(Box::new(ClientStream { stream, own, seen }) as Box<dyn Stream>)
        })
    }
}

struct ServerStream(server::TlsStream<TcpStream>);

struct ClientStream {
    stream: client::TlsStream<TcpStream>,
    /// A resuming client's config, and its store's count at the handshake.
    own: Option<OwnConfig>,
    seen: u64,
}

impl Stream for ServerStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        negotiated(self.0.get_ref().1, true).map(Some)
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::rustls::chosen(self.0.get_ref().1)
    }

    fn ticket(&mut self) -> Result<Ticket> {
        bail!("a server keeps no ticket")
    }
}

impl Stream for ClientStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        negotiated(self.stream.get_ref().1, false).map(Some)
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::rustls::chosen(self.stream.get_ref().1)
    }

    fn ticket(&mut self) -> Result<Ticket> {
        let Some(own) = self.own.take() else { bail!("the client is not configured for resumption") };
        if own.store.stored() == self.seen {
            bail!("rustls client received no session ticket");
        }
        Ok(Ticket(Box::new(own)))
    }
}

forward_io!(ServerStream, 0);
forward_io!(ClientStream, stream);
