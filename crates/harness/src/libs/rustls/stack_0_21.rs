//! rustls 0.20 and 0.21 over the in-memory transport (built by
//! historical-perf; cfgs `rustls_0_21`, `rustls_0_20`), driven as
//! [`crate::libs::rustls::stack`] drives 0.23.
//!
//! These releases report neither the key exchange group nor whether a session
//! was resumed, so both are read from the server's first flight as it
//! crossed the wire ([`crate::wire`]): the client keeps a copy of what it
//! reads, the server of what it writes, until its handshake ends. The copy
//! (a few kilobytes per connection) is made inside the timed handshake, so
//! this release's handshake figures include it.

use std::{
    io::{self, Read, Write},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use anyhow::{Context, Result, bail};
#[cfg(rustls_0_20)]
use rustls::client::StoresClientSessions;
use rustls::{
    ClientConfig, ClientConnection, Connection, ProtocolVersion, ServerConfig, ServerConnection, ServerName,
    client::ClientSessionMemoryCache,
};
#[cfg(not(rustls_0_20))]
use rustls::{
    NamedGroup,
    client::{ClientSessionStore, Resumption, Tls12ClientSessionValue, Tls13ClientSessionValue},
};

use crate::{
    certs::SERVER_NAME,
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    libs::rustls::config::{Provider, client_config, server_config},
    params::{CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
    transport::Endpoint,
    wire,
};

use super::drive::{self, Driven};

/// rustls 0.20 or 0.21 (*ring*); named `rustls-<version>+ring`.
pub struct Rustls {
    /// The crypto provider (only *ring* before 0.22).
    pub provider: Provider,
}

impl TlsLibrary for Rustls {
    fn name(&self) -> String {
        format!("rustls-{}+{}", env!("TLS_BENCH_RUSTLS_VERSION"), self.provider.name())
    }

    /// *ring*: the floor's own version is the release's (historical-perf
    /// builds 0.20 with the floor on *ring* 0.16, [`crate::libs::rustls::ring`];
    /// it runs no floor for a release that links another *ring*,
    /// `floor_refusal`).
    #[cfg(feature = "crypto-floor")]
    fn crypto_floor(&self) -> Option<String> {
        use crate::{floor::Backend, libs::rustls::ring::Ring};
        Some(crate::floor::floor_name(&Ring::name()))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let mut client = client_config(self.provider, params)?;
        let store = (params.kind == HandshakeKind::Resumption).then(|| {
            let store = Arc::new(CountingStore::default());
            #[cfg(not(rustls_0_20))]
            {
                client.resumption = Resumption::store(store.clone());
            }
            #[cfg(rustls_0_20)]
            {
                client.session_storage = store.clone();
            }
            store
        });
        Ok(Box::new(RustlsConfigs {
            client: Arc::new(client),
            server: Arc::new(server_config(self.provider, params)?),
            store,
        }))
    }
}

struct RustlsConfigs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    store: Option<Arc<CountingStore>>,
}

/// rustls's in-memory session cache, counting the sessions stored in it.
struct CountingStore {
    #[cfg(not(rustls_0_20))]
    inner: ClientSessionMemoryCache,
    #[cfg(rustls_0_20)]
    inner: Arc<ClientSessionMemoryCache>,
    stored: AtomicU64,
}

impl Default for CountingStore {
    fn default() -> Self {
        // Room for more than one entry: sized for one, `LimitedCache`
        // evicts an entry as soon as it inserts it (0.21 counts 8 tickets
        // per server; 0.20 counts entries, a session and a key share hint).
        CountingStore { inner: ClientSessionMemoryCache::new(16), stored: AtomicU64::new(0) }
    }
}

/// rustls 0.20 stores encoded sessions under keys that start with their
/// kind: `session` for a session, `kx-hint` for a key share hint.
#[cfg(rustls_0_20)]
impl StoresClientSessions for CountingStore {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        if key.starts_with(b"session") {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.put(key, value)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.get(key)
    }
}

#[cfg(not(rustls_0_20))]
impl ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, server_name: &ServerName, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group)
    }
    fn kx_hint(&self, server_name: &ServerName) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }
    fn set_tls12_session(&self, server_name: &ServerName, value: Tls12ClientSessionValue) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        self.inner.set_tls12_session(server_name, value)
    }
    fn tls12_session(&self, server_name: &ServerName) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(server_name)
    }
    fn remove_tls12_session(&self, server_name: &ServerName) {
        self.inner.remove_tls12_session(server_name)
    }
    fn insert_tls13_ticket(&self, server_name: &ServerName, value: Tls13ClientSessionValue) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        self.inner.insert_tls13_ticket(server_name, value)
    }
    fn take_tls13_ticket(&self, server_name: &ServerName) -> Option<Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(server_name)
    }
}

impl Configured for RustlsConfigs {
    fn client(&self, io: Endpoint, _session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        // Resumption state lives in the ClientConfig's session store.
        let name = ServerName::try_from(SERVER_NAME)?;
        let conn = ClientConnection::new(self.client.clone(), name)?;
        let store = self.store.clone().map(|s| {
            let seen = s.stored.load(Ordering::Relaxed);
            (s, seen)
        });
        Ok(Box::new(RustlsConn { conn: conn.into(), io, store, flight: Vec::new() }))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        let conn = ServerConnection::new(self.server.clone())?;
        Ok(Box::new(RustlsConn { conn: conn.into(), io, store: None, flight: Vec::new() }))
    }
}

struct RustlsConn {
    conn: Connection,
    io: Endpoint,
    /// Client with resumption: the session store and its count at creation.
    store: Option<(Arc<CountingStore>, u64)>,
    /// The server's bytes of the handshake: read (client) or written
    /// (server) while handshaking.
    flight: Vec<u8>,
}

/// The transport, keeping a copy of the bytes that pass while `copy` is set.
struct Tee<'a> {
    io: &'a mut Endpoint,
    copy: Option<&'a mut Vec<u8>>,
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.io.read(buf)?;
        if let Some(copy) = self.copy.as_mut() {
            copy.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.io.write(buf)?;
        if let Some(copy) = self.copy.as_mut() {
            copy.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.io.flush()
    }
}

impl RustlsConn {
    fn is_server(&self) -> bool {
        matches!(self.conn, Connection::Server(_))
    }
}

impl Driven for RustlsConn {
    fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Writes all pending TLS output to the transport.
    fn flush(&mut self) -> Result<()> {
        let keep = self.is_server() && self.conn.is_handshaking();
        while self.conn.wants_write() {
            let mut tee = Tee { io: &mut self.io, copy: keep.then_some(&mut self.flight) };
            self.conn.write_tls(&mut tee)?;
        }
        Ok(())
    }

    /// Reads one chunk of queued TLS input and processes it. `Ok(false)`
    /// when nothing was queued.
    fn pull(&mut self) -> Result<bool> {
        let keep = !self.is_server() && self.conn.is_handshaking();
        let mut tee = Tee { io: &mut self.io, copy: keep.then_some(&mut self.flight) };
        match self.conn.read_tls(&mut tee) {
            Ok(0) => bail!("rustls saw end of stream"),
            Ok(_) => {
                self.conn.process_new_packets()?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

impl TlsConnection for RustlsConn {
    fn handshake(&mut self) -> Result<bool> {
        drive::handshake(self)
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        drive::send(self, data)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        drive::recv(self, buf)
    }

    fn shutdown(&mut self) -> Result<()> {
        drive::shutdown(self)
    }

    fn negotiated(&self) -> Result<Negotiated> {
        let protocol = match self.conn.protocol_version() {
            Some(ProtocolVersion::TLSv1_2) => Protocol::Tls12,
            Some(ProtocolVersion::TLSv1_3) => Protocol::Tls13,
            other => bail!("rustls negotiated protocol {other:?}"),
        };
        let suite = self.conn.negotiated_cipher_suite().context("no cipher suite negotiated")?;
        let code = suite.suite().get_u16();
        let suite =
            CipherSuite::from_iana_code(code).with_context(|| format!("unknown suite {code:#06x}"))?;
        let seen = wire::server_flight(&self.flight).context("reading the server's first flight")?;
        let group = match seen.group {
            Some(code) => {
                Some(KxGroup::from_iana_code(code).with_context(|| format!("unknown group {code}"))?)
            }
            None => None,
        };
        let client_authenticated = match &self.conn {
            Connection::Client(_) => None,
            Connection::Server(s) => Some(s.peer_certificates().is_some()),
        };
        Ok(Negotiated { protocol, suite, group, resumed: seen.resumed, client_authenticated })
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("none (no API): rustls frees sent records as they are written")
    }

    fn take_session(&mut self) -> Result<Session> {
        let Some((store, seen)) = self.store.clone() else {
            bail!("take_session needs a client configured for resumption");
        };
        drive::settle(self)?;
        if store.stored.load(Ordering::Relaxed) == seen {
            bail!("rustls client received no session ticket");
        }
        Ok(Session(Box::new(())))
    }
}
