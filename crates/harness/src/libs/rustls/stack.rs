//! rustls over the in-memory transport, with either crypto provider.
//!
//! Bytes move with `write_tls` / `read_tls` + `process_new_packets`; the
//! plaintext reader is drained after every `process_new_packets` (rustls
//! docs, `Connection::process_new_packets`).

use std::{
    io::{self, IoSlice},
    sync::Arc,
};

use anyhow::{Result, bail};
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};

#[cfg(rustls_0_22)]
use crate::libs::rustls::observe::{Observed, RESUMPTION_MARK, Role, Snapshot};
use crate::{
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    libs::rustls::config::{CountingStore, Provider, client_config, own_store, server_config},
    params::{HandshakeKind, Params},
    transport::Endpoint,
};

use super::drive::{self, Driven};

/// rustls with one crypto provider; named `rustls-<version>+<provider>`.
pub struct Rustls {
    /// The crypto provider.
    pub provider: Provider,
}

impl TlsLibrary for Rustls {
    fn name(&self) -> String {
        format!("rustls-{}+{}", env!("TLS_BENCH_RUSTLS_VERSION"), self.provider.name())
    }

    /// aws-lc-rs or *ring*, as the provider.
    #[cfg(all(feature = "crypto-floor", not(tls_bench_rustls_fips)))]
    fn crypto_floor(&self) -> Option<String> {
        use crate::{
            floor::{Backend, aws_lc_rs::AwsLcRs},
            libs::rustls::config::Provider,
            libs::rustls::ring::Ring,
        };
        Some(crate::floor::floor_name(&match self.provider {
            Provider::AwsLcRs => AwsLcRs::name(),
            Provider::Ring => Ring::name(),
        }))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let mut client = client_config(self.provider, params)?;
        let store = (params.kind == HandshakeKind::Resumption).then(|| own_store(&mut client));
        Ok(Box::new(RustlsConfigs {
            client: Arc::new(client),
            server: Arc::new(server_config(self.provider, params)?),
            store,
        }))
    }

    /// The same configuration: `Writer::write_vectored` needs no setup.
    /// (rustls 0.22 is left out: it wrote each slice as a record of its own.)
    #[cfg(not(rustls_0_22))]
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        self.configure(params)
    }
}

struct RustlsConfigs {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    store: Option<Arc<CountingStore>>,
}

impl Configured for RustlsConfigs {
    fn client(&self, io: Endpoint, _session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        // Resumption state lives in the ClientConfig's session store: each
        // TLS 1.3 ticket is taken out of it when used, so every resumption
        // uses the ticket of the previous handshake.
        let name = crate::libs::rustls::config::server_name()?;
        // Before the connection: a client makes its key share as it is created.
        #[cfg(rustls_0_22)]
        let observed = Observation::Pending(Snapshot::take(Role::Client)?);
        let conn = ClientConnection::new(self.client.clone(), name)?;
        let store = self.store.clone().map(|s| {
            let seen = s.stored();
            (s, seen)
        });
        Ok(Box::new(RustlsConn {
            conn: conn.into(),
            io,
            store,
            #[cfg(rustls_0_22)]
            observed,
        }))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        #[cfg(rustls_0_22)]
        let observed = Observation::Pending(Snapshot::take(Role::Server)?);
        #[cfg_attr(not(rustls_0_22), allow(unused_mut))]
        let mut conn = ServerConnection::new(self.server.clone())?;
        #[cfg(rustls_0_22)]
        conn.set_resumption_data(RESUMPTION_MARK);
        Ok(Box::new(RustlsConn {
            conn: conn.into(),
            io,
            store: None,
            #[cfg(rustls_0_22)]
            observed,
        }))
    }
}

/// rustls 0.22: the counts before the handshake, then what it did.
#[cfg(rustls_0_22)]
enum Observation {
    Pending(Snapshot),
    Done(Observed),
}

struct RustlsConn {
    conn: Connection,
    io: Endpoint,
    /// Client with resumption: the session store and its count at creation.
    store: Option<(Arc<CountingStore>, u64)>,
    #[cfg(rustls_0_22)]
    observed: Observation,
}

#[cfg(rustls_0_22)]
impl RustlsConn {
    /// rustls 0.22: observed (see [`crate::libs::rustls::observe`]).
    fn group_and_resumed(&self) -> Result<(Option<u16>, bool)> {
        let Observation::Done(observed) = &self.observed else {
            bail!("handshake not complete");
        };
        let resumed = match &self.conn {
            Connection::Client(_) => !observed.verified_server,
            Connection::Server(s) => s.received_resumption_data() == Some(RESUMPTION_MARK),
        };
        Ok((observed.group, resumed))
    }
}

impl Driven for RustlsConn {
    fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Writes all pending TLS output to the transport.
    fn flush(&mut self) -> Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.io)?;
        }
        Ok(())
    }

    /// Reads one chunk of queued TLS input and processes it. `Ok(false)`
    /// when nothing was queued.
    fn pull(&mut self) -> Result<bool> {
        match self.conn.read_tls(&mut self.io) {
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
        let done = drive::handshake(self)?;
        #[cfg(rustls_0_22)]
        if done && let Observation::Pending(before) = &self.observed {
            self.observed = Observation::Done(before.since()?);
        }
        Ok(done)
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        drive::send(self, data)
    }

    fn send_vectored(&mut self, parts: &[IoSlice<'_>]) -> Result<()> {
        drive::send_vectored(self, parts)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        drive::recv(self, buf)
    }

    fn shutdown(&mut self) -> Result<()> {
        drive::shutdown(self)
    }

    fn negotiated(&self) -> Result<Negotiated> {
        let server = matches!(self.conn, Connection::Server(_));
        #[cfg(not(rustls_0_22))]
        return crate::libs::rustls::config::negotiated(&self.conn, server);
        #[cfg(rustls_0_22)]
        {
            let (group, resumed) = self.group_and_resumed()?;
            crate::libs::rustls::config::negotiated_with(&self.conn, server, group, resumed)
        }
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        Ok("none (no API): rustls frees sent records as they are written and shrinks its \
            receive buffer to 4 KiB when a read finds it empty")
    }

    fn take_session(&mut self) -> Result<Session> {
        let Some((store, seen)) = self.store.clone() else {
            bail!("take_session needs a client configured for resumption");
        };
        // Processing the server's NewSessionTicket stores it in the config's
        // session store, from which the next connection takes it.
        drive::settle(self)?;
        if store.stored() == seen {
            bail!("rustls client received no session ticket");
        }
        Ok(Session(Box::new(())))
    }
}
