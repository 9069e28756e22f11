//! rustls over sockets through tokio-rustls (`TlsConnector`,
//! `TlsAcceptor`), on the configs of [`tls_bench_harness::libs::rustls::config`].
//!
//! Resumption: rustls takes a client's ticket from its config's session
//! store, so a client that resumes has a config of its own (a clone of the
//! parameter set's, with its own [`CountingStore`]); that config is its
//! [`Ticket`].
//!
//! Client authentication, client side: rustls says nothing of it after the
//! handshake, so every client config's certificate resolver is wrapped
//! ([`AskedFor`]): rustls calls it only on a CertificateRequest, and sends
//! the certificate it returns when its key can sign with one of the
//! server's schemes (rustls's `ClientAuthDetails::resolve`).

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering::Relaxed},
};

use anyhow::{Context, Result, bail};
use rustls::{
    ClientConfig, ServerConfig, SignatureScheme, client::ResolvesClientCert, pki_types::ServerName,
    sign::CertifiedKey,
};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector, client, server};

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, io_failed, tcp::Tcp};
use tls_bench_harness::{
    error::ConfigureError,
    harness::{Negotiated, TlsLibrary},
    libs::rustls::{
        config::{CountingStore, Provider, client_config, negotiated, own_store, server_config, server_name},
        extensions,
    },
    params::{HandshakeKind, Params},
};

/// rustls with one crypto provider.
pub struct Rustls {
    /// The crypto provider.
    pub provider: Provider,
}

impl Library for Rustls {
    fn name(&self) -> String {
        tls_bench_harness::libs::rustls::stack::Rustls { provider: self.provider }.name()
    }

    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        let mut config: ServerConfig = server_config(self.provider, params)?;
        extensions::server(&mut config, extensions.alpn, extensions.server_name);
        Ok(Arc::new(RustlsServer(TlsAcceptor::from(Arc::new(config)))))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        let mut config = client_config(self.provider, params)?;
        extensions::client(&mut config, extensions.alpn);
        if let Some(chain) = extensions.client_identity {
            extensions::present(&mut config, chain)?;
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
            let stream = io_failed("rustls handshake", self.0.accept(Tcp::server(tcp)).await)?;
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

/// A resuming client's own config, its session store and its resolver.
struct OwnConfig {
    config: Arc<ClientConfig>,
    store: Arc<CountingStore>,
    asked: Arc<AskedFor>,
}

/// A client certificate resolver that counts the CertificateRequests it
/// answered (`asked`) and the certificates rustls then sends (`sent`: one
/// resolved whose key signs with one of the server's schemes). A client's
/// connections hand-shake one after another, so a connection's figures are
/// the counts' changes over its handshake.
#[derive(Debug)]
struct AskedFor {
    inner: Arc<dyn ResolvesClientCert>,
    asked: AtomicU64,
    sent: AtomicU64,
}

impl AskedFor {
    /// `config` with its resolver wrapped in a new one (returned too).
    fn wrap(config: &mut ClientConfig) -> Arc<AskedFor> {
        let asked = Arc::new(AskedFor {
            inner: config.client_auth_cert_resolver.clone(),
            asked: AtomicU64::new(0),
            sent: AtomicU64::new(0),
        });
        config.client_auth_cert_resolver = asked.clone();
        asked
    }

    fn counts(&self) -> (u64, u64) {
        (self.asked.load(Relaxed), self.sent.load(Relaxed))
    }
}

impl ResolvesClientCert for AskedFor {
    fn resolve(&self, hints: &[&[u8]], schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.asked.fetch_add(1, Relaxed);
        let key = self.inner.resolve(hints, schemes);
        if key.as_ref().is_some_and(|k| k.key.choose_scheme(schemes).is_some()) {
            self.sent.fetch_add(1, Relaxed);
        }
        key
    }

    fn only_raw_public_keys(&self) -> bool {
        self.inner.only_raw_public_keys()
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

impl Client for RustlsClient {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            let own = match ticket {
                Some(Ticket(t)) => Some(*t.downcast::<OwnConfig>().ok().context("not a rustls ticket")?),
                None if self.resumes => {
                    let mut config = self.config.clone();
                    let store = own_store(&mut config);
                    let asked = AskedFor::wrap(&mut config);
                    Some(OwnConfig { config: Arc::new(config), store, asked })
                }
                None => None,
            };
            let (config, asked) = match &own {
                Some(own) => (own.config.clone(), own.asked.clone()),
                None => {
                    let mut config = self.config.clone();
                    let asked = AskedFor::wrap(&mut config);
                    (Arc::new(config), asked)
                }
            };
            let seen = own.as_ref().map_or(0, |o| o.store.stored());
            let before = asked.counts();
            let stream = io_failed(
                "rustls handshake",
                TlsConnector::from(config).connect(self.name.clone(), Tcp::client(tcp)).await,
            )?;
            let after = asked.counts();
            let authenticated = (after.0 - before.0, after.1 - before.1) == (1, 1);
            Ok(Box::new(ClientStream { stream, own, seen, authenticated }) as Box<dyn Stream>)
        })
    }
}

struct ServerStream(server::TlsStream<Tcp>);

struct ClientStream {
    stream: client::TlsStream<Tcp>,
    /// A resuming client's config, and its store's count at the handshake.
    own: Option<OwnConfig>,
    seen: u64,
    /// Whether the server asked for a certificate and this client sent one.
    authenticated: bool,
}

impl Stream for ServerStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        negotiated(self.0.get_ref().1, true).map(Some)
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.0.get_ref().1)
    }

    fn ticket(&mut self) -> Result<Ticket> {
        bail!("a server keeps no ticket")
    }
}

impl Stream for ClientStream {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        let mut n = negotiated(self.stream.get_ref().1, false)?;
        n.client_authenticated = Some(self.authenticated);
        Ok(Some(n))
    }

    fn alpn(&self) -> Option<&[u8]> {
        extensions::chosen(self.stream.get_ref().1)
    }

    fn tcp(&mut self) -> Option<&mut Tcp> {
        Some(self.stream.get_mut().0)
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
