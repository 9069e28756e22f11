//! s2n-tls over the in-memory transport. The configuration layer does the
//! rest: configs ([`crate::libs::s2n::config`]), each connection's settings
//! ([`crate::libs::s2n::config::connection`]: `Blinding::SelfService`,
//! `prefer_throughput`, the server name), the I/O callbacks over an
//! [`Endpoint`] ([`crate::libs::s2n::io`]), the read-back of what was
//! negotiated, and the security policy for a parameter set
//! ([`crate::libs::s2n::policy`]).

use std::pin::Pin;

#[cfg(not(feature = "historical-perf"))]
use std::io::IoSlice;

use anyhow::{Context, Result, anyhow, bail, ensure};

pub use crate::libs::s2n::policy::{CANDIDATE_POLICIES, policies_for, policy_for};

/// The gather write (not in historical-perf builds, which do not run small
/// writes).
#[cfg(not(feature = "historical-perf"))]
#[path = "vectored.rs"]
mod vectored;

#[cfg(s2n_raw_api)]
use crate::libs::s2n::api::PollNames as _;
use crate::{
    harness::{ConfigureError, Configured, Negotiated, Session, TlsConnection, TlsLibrary},
    libs::s2n::{
        api::{
            config::{Builder, Config},
            connection::Connection,
        },
        config::{self as s2n, client_builder, pending, server_builder},
        io::Io,
        policy as s2n_policy,
    },
    params::Params,
    transport::Endpoint,
};

/// s2n-tls (links AWS-LC through aws-lc-rs); named
/// `s2n-tls-<version>+aws-lc`, or `+aws-lc-fips` when s2n-tls runs in FIPS
/// mode on AWS-LC's FIPS module (`aws-lc-config/s2n.toml`), or
/// `+openssl-libcrypto` for the 0.0.x releases historical-perf builds, which
/// link the system's OpenSSL libcrypto.
pub struct S2nTls;

/// s2n-tls under one named security policy, to show what choosing another
/// policy that negotiates the same parameters costs; named
/// `s2n-tls-<version>+<backend>[<policy>]`. Parameter sets the policy does
/// not negotiate exactly are unsupported (a named skip).
pub struct S2nTlsPolicy {
    /// The security policy (a name from [`CANDIDATE_POLICIES`]).
    pub policy: &'static str,
}

impl TlsLibrary for S2nTlsPolicy {
    fn name(&self) -> String {
        format!("{}[{}]", S2nTls.name(), self.policy)
    }

    fn settings(&self, _params: &Params) -> Option<String> {
        Some(format!("security policy {}", self.policy))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        s2n_policy::check_chain(params)?;
        if !s2n_policy::negotiates_exactly(params, self.policy)? {
            return Err(ConfigureError::Unsupported(format!(
                "security policy {} does not negotiate exactly {} with {} for a {} chain",
                self.policy, params.suite, params.group, params.cert
            )));
        }
        Ok(Box::new(S2nConfigs::new(params, self.policy)?))
    }
}

impl TlsLibrary for S2nTls {
    /// aws-lc-rs: s2n-tls (from 0.1) links AWS-LC through this build's
    /// aws-lc-rs (historical-perf's builds of 0.1.0-0.1.4: its aws-lc-sys
    /// under an aws-lc-rs of the release's day).
    #[cfg(all(aws_lc_rs_floor, not(tls_bench_rustls_fips), not(tls_bench_s2n_fips)))]
    fn crypto_floor(&self) -> Option<String> {
        use crate::floor::{Backend, aws_lc_rs::AwsLcRs};
        Some(crate::floor::floor_name(&AwsLcRs::name()))
    }

    /// libcrypto through the `openssl` crate: s2n-tls 0.0.x links the
    /// system's libcrypto through openssl-sys, which the `openssl` crate
    /// (feature `openssl-floor` in historical-perf's builds) calls too: one
    /// openssl-sys in a build (its `links = "openssl"`), so one libcrypto.
    #[cfg(all(feature = "crypto-floor", s2n_system_libcrypto, openssl_crate))]
    fn crypto_floor(&self) -> Option<String> {
        use crate::{floor::Backend, libs::openssl::floor::ossl::Ossl};
        Some(crate::floor::floor_name(&Ossl::name()))
    }

    fn name(&self) -> String {
        // s2n-tls 0.0.x (historical-perf) links the system's OpenSSL libcrypto.
        let backend = if cfg!(s2n_system_libcrypto) {
            "openssl-libcrypto"
        } else if s2n::fips() {
            "aws-lc-fips"
        } else {
            "aws-lc"
        };
        format!("s2n-tls-{}+{backend}", env!("TLS_BENCH_S2N_TLS_VERSION"))
    }

    fn settings(&self, params: &Params) -> Option<String> {
        s2n_policy::policy_for(params).ok().map(|p| format!("security policy {p}"))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let policy = s2n_policy::policy_for(params)?;
        Ok(Box::new(S2nConfigs::new(params, policy)?))
    }

    /// Configs whose connections capture their `s2n_connection` for
    /// `s2n_sendv_with_offset` (see the `vectored` module).
    #[cfg(not(feature = "historical-perf"))]
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let policy = s2n_policy::policy_for(params)?;
        let (mut client, mut server) = S2nConfigs::builders(params, policy)?;
        vectored::capture(&mut client)?;
        vectored::capture(&mut server)?;
        let fail = crate::libs::s2n::config::fail;
        Ok(Box::new(S2nConfigs {
            client: client.build().map_err(fail)?,
            server: server.build().map_err(fail)?,
            capturing: true,
        }))
    }
}

struct S2nConfigs {
    client: Config,
    server: Config,
    /// Connections take their raw pointer during the handshake
    /// ([`TlsLibrary::configure_vectored`]).
    capturing: bool,
}

impl S2nConfigs {
    fn new(params: &Params, policy: &'static str) -> Result<S2nConfigs, ConfigureError> {
        let (client, server) = S2nConfigs::builders(params, policy)?;
        let fail = crate::libs::s2n::config::fail;
        Ok(S2nConfigs {
            client: client.build().map_err(fail)?,
            server: server.build().map_err(fail)?,
            capturing: false,
        })
    }

    /// The client's and the server's config builders, with a fresh ticket key.
    fn builders(params: &Params, policy: &'static str) -> Result<(Builder, Builder), ConfigureError> {
        let ticket_key = crate::libs::s2n::config::ticket_key()?;
        Ok((client_builder(params, policy)?, server_builder(params, policy, &ticket_key)?))
    }

    fn connection(&self, server: bool, io: Endpoint) -> Result<S2nConn> {
        let mut conn = s2n::connection(server, if server { &self.server } else { &self.client })?;
        // `io` lives in the same S2nConn as `conn` and is dropped after it
        // (field order), and it never moves (pinned box).
        let io = Io::attach(&mut conn, io, server)?;
        Ok(S2nConn {
            conn,
            server,
            io,
            capturing: self.capturing,
            #[cfg(not(feature = "historical-perf"))]
            raw: None,
        })
    }
}

impl Configured for S2nConfigs {
    fn client(&self, io: Endpoint, session: Option<&Session>) -> Result<Box<dyn TlsConnection>> {
        #[cfg_attr(s2n_no_session_tickets, allow(unused_mut))]
        let mut c = self.connection(false, io)?;
        if let Some(Session(s)) = session {
            let ticket = s.downcast_ref::<Vec<u8>>().context("not an s2n-tls session")?;
            #[cfg(not(s2n_no_session_tickets))]
            c.conn.set_session_ticket(ticket)?;
            #[cfg(s2n_no_session_tickets)]
            bail!("s2n-tls before 0.0.36 cannot resume ({} byte session)", ticket.len());
        }
        Ok(Box::new(c))
    }

    fn server(&self, io: Endpoint) -> Result<Box<dyn TlsConnection>> {
        Ok(Box::new(self.connection(true, io)?))
    }
}

struct S2nConn {
    // Dropped before `io`, which it points to.
    conn: Connection,
    /// A server, not a client (`Connection::mode` is private up to s2n-tls
    /// 0.3.38).
    server: bool,
    io: Pin<Box<Io>>,
    /// Made by a capturing config: takes [`S2nConn::raw`] in the handshake.
    #[cfg_attr(feature = "historical-perf", allow(dead_code))]
    capturing: bool,
    /// This connection's own `s2n_connection`, once captured.
    #[cfg(not(feature = "historical-perf"))]
    raw: Option<vectored::RawConn>,
}

impl TlsConnection for S2nConn {
    fn handshake(&mut self) -> Result<bool> {
        #[cfg(not(feature = "historical-perf"))]
        if self.capturing && self.raw.is_none() {
            vectored::clear();
            let done = self.io.negotiate(&mut self.conn)?;
            self.raw = vectored::take(self.server)?;
            return Ok(done);
        }
        self.io.negotiate(&mut self.conn)
    }

    fn send(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let n = pending(self.conn.poll_send(data))?.context("s2n-tls send blocked")?;
            data = &data[n..];
        }
        pending(self.conn.poll_flush())?.context("s2n-tls flush blocked")?;
        Ok(())
    }

    #[cfg(not(feature = "historical-perf"))]
    fn send_vectored(&mut self, parts: &[IoSlice<'_>]) -> Result<()> {
        let raw = self.raw.as_ref().context("s2n-tls: no connection pointer captured in the handshake")?;
        raw.sendv(parts)?;
        pending(self.conn.poll_flush())?.context("s2n-tls flush blocked")?;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match pending(self.conn.poll_recv(&mut buf[filled..]))? {
                Some(0) => bail!("s2n-tls: peer closed the connection"),
                Some(n) => filled += n,
                None => break,
            }
        }
        Ok(filled)
    }

    fn shutdown(&mut self) -> Result<()> {
        // Sends close_notify; the peer's close_notify is not awaited.
        #[cfg(not(s2n_before_0_3))]
        pending(self.conn.poll_shutdown_send())?;
        // Before 0.2 there is no send-only shutdown: `s2n_shutdown` sends
        // close_notify, then blocks (Pending) on the peer's.
        #[cfg(s2n_before_0_3)]
        pending(self.conn.poll_shutdown())?;
        Ok(())
    }

    fn negotiated(&self) -> Result<Negotiated> {
        self.io.negotiated(&self.conn, self.server)
    }

    fn release_buffers(&mut self) -> Result<&'static str> {
        self.conn.release_buffers().map_err(|e| anyhow!("s2n_connection_release_buffers: {e}"))?;
        Ok("s2n_connection_release_buffers when idle")
    }

    fn take_session(&mut self) -> Result<Session> {
        // Reading processes the server's NewSessionTicket (TLS 1.3); in
        // TLS 1.2 the ticket came in the handshake.
        let mut byte = [0u8; 1];
        ensure!(self.recv(&mut byte)? == 0, "unexpected application data while waiting for a ticket");
        Ok(Session(Box::new(crate::libs::s2n::config::received_ticket(&mut self.conn)?)))
    }
}
