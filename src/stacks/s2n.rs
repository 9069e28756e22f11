//! s2n-tls over the in-memory transport: send and receive callbacks whose
//! context is the connection's `Io` (its [`Endpoint`]); the receive callback returns
//! -1 with errno EWOULDBLOCK on an empty queue (s2n-tls usage guide, "I/O").
//!
//! Connections use `Blinding::SelfService` (no sleeps on errors) and
//! `prefer_throughput` (16 KiB records instead of the default ~8 KiB), what
//! a tuned server runs.

use std::{
    collections::HashMap,
    ffi::c_void,
    pin::Pin,
    slice,
    sync::{Mutex, OnceLock},
    task::Poll,
};

#[cfg(not(feature = "historical-perf"))]
use std::io::IoSlice;

use anyhow::{Context, Result, anyhow, bail, ensure};

/// The gather write (not in historical-perf builds, which do not run small
/// writes).
#[cfg(not(feature = "historical-perf"))]
#[path = "s2n_vectored.rs"]
mod vectored;

#[cfg(s2n_raw_api)]
use crate::config::s2n_api::PollNames as _;
use crate::{
    config::{
        s2n::{client_builder, server_builder},
        s2n_api::{
            config::{Builder, Config},
            connection::Connection,
            enums::{Blinding, Mode, Version},
        },
    },
    harness::{ConfigureError, Configured, Negotiated, Pair, Session, SideTimes, TlsConnection, TlsLibrary},
    params::{CertChain, CipherSuite, KxGroup, Params, Protocol},
    transport::{Duplex, Endpoint, Side},
};

/// s2n-tls (links AWS-LC through aws-lc-rs); named
/// `s2n-tls-<version>+aws-lc`, or `+aws-lc-fips` when s2n-tls runs in FIPS
/// mode on AWS-LC's FIPS module (`aws-lc-config/s2n.toml`), or
/// `+openssl-libcrypto` for the 0.0.x releases historical-perf builds, which
/// link the system's OpenSSL libcrypto.
pub struct S2nTls;

/// Security policies tried, in order, when looking for one whose top
/// preferences are a wanted suite and group: s2n-tls's defaults first, then
/// named policies that lead with other suites or groups, then TLS 1.2-only
/// ones (s2n-tls has no maximum-version setting: TLS 1.2 is forced by a
/// policy without TLS 1.3 suites). Names from s2n_security_policies.c.
pub const CANDIDATE_POLICIES: &[&str] = &[
    "default_tls13",
    "default",
    "default_pq",
    "AWS-CRT-SDK-TLSv1.3",
    "20190801",
    "20190802",
    "rfc9151",
    "cnsa_1",
    "test_all_tls13",
    "20240503",
    "20240501",
    "20230317",
    "20251014",
    "CloudFront-TLS-1-2-2021-Chacha20-Boosted",
    "ELBSecurityPolicy-TLS-1-2-Ext-2018-06",
    "ELBSecurityPolicy-FS-1-2-Res-2020-10",
    "AWS-CRT-SDK-TLSv1.2",
    "20210825_gcm",
    "20240417",
    "20241106",
    "CloudFront-TLS-1-2-2021",
    "CloudFront-TLS-1-2-2019",
    "PQ-TLS-1-2-2024-10-08_gcm",
    "20210816",
    "20170210",
    "20190214",
    "20210825",
    "test_all_tls12",
    "test_all_ecdsa",
    "test_all",
    // TLS 1.2 only, ECDHE-ECDSA-AES256-GCM-SHA384 first, secp256r1 first.
    "CloudFront-Upstream-TLS-1-2",
];

/// The first of [`CANDIDATE_POLICIES`] under which an s2n-tls client and
/// server, server authentication with `params`' chain, negotiate exactly
/// `params`' protocol, suite and group with no HelloRetryRequest: the
/// policy's top preferences for that chain. Probed once per (suite, group,
/// chain) per process.
///
/// Errors: [`ConfigureError::Unsupported`] naming the combination when no
/// candidate does; [`ConfigureError::Failed`] when the chain itself does not
/// work ([`check_chain`]).
pub fn policy_for(params: &Params) -> Result<&'static str, ConfigureError> {
    type Key = (CipherSuite, KxGroup, CertChain);
    static FOUND: OnceLock<Mutex<HashMap<Key, Option<&'static str>>>> = OnceLock::new();
    let key = (params.suite, params.group, params.cert);
    let cache = FOUND.get_or_init(Default::default);
    let cached = cache.lock().map_err(|_| anyhow!("policy cache poisoned"))?.get(&key).copied();
    let found = match cached {
        Some(found) => found,
        None => {
            // A missing or broken chain is an error, not a "no" from every policy.
            check_chain(params)?;
            let probe = Params { kind: crate::params::HandshakeKind::ServerAuth, ..*params };
            let mut found = None;
            for policy in CANDIDATE_POLICIES {
                if probe_policy(&probe, policy)? {
                    found = Some(*policy);
                    break;
                }
            }
            cache.lock().map_err(|_| anyhow!("policy cache poisoned"))?.insert(key, found);
            found
        }
    };
    found.ok_or_else(|| {
        ConfigureError::Unsupported(format!(
            "no s2n-tls security policy prefers {} with {} for a {} chain{}",
            params.suite,
            params.group,
            params.cert,
            if fips() { " in FIPS mode" } else { "" }
        ))
    })
}

/// Every policy of [`CANDIDATE_POLICIES`] under which two s2n-tls peers
/// negotiate exactly `params`' protocol, suite and group with no
/// HelloRetryRequest (server authentication with `params`' chain), in
/// candidate order: the first is [`policy_for`]'s choice, the others what a
/// user could choose instead. Errors: a missing or broken chain
/// ([`check_chain`]).
pub fn policies_for(params: &Params) -> Result<Vec<&'static str>, ConfigureError> {
    check_chain(params)?;
    let probe = Params { kind: crate::params::HandshakeKind::ServerAuth, ..*params };
    let mut found = Vec::new();
    for policy in CANDIDATE_POLICIES {
        if probe_policy(&probe, policy)? {
            found.push(*policy);
        }
    }
    Ok(found)
}

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
        check_chain(params)?;
        let probe = Params { kind: crate::params::HandshakeKind::ServerAuth, ..*params };
        if !probe_policy(&probe, self.policy)? {
            return Err(ConfigureError::Unsupported(format!(
                "security policy {} does not negotiate exactly {} with {} for a {} chain",
                self.policy, params.suite, params.group, params.cert
            )));
        }
        Ok(Box::new(S2nConfigs::new(params, self.policy)?))
    }
}

/// Whether s2n-tls runs in FIPS mode (`s2n_get_fips_mode`): it does when
/// linked to a FIPS libcrypto (s2n-tls feature `fips`).
///
/// Panics if s2n-tls cannot report its mode (it failed to initialise).
#[cfg(not(s2n_before_0_3))]
pub fn fips() -> bool {
    s2n_tls::init::init();
    let mode = s2n_tls::init::fips_mode().expect("s2n_get_fips_mode");
    mode == s2n_tls::enums::FipsMode::Enabled
}

/// s2n-tls before 0.3 (historical-perf builds) cannot report its FIPS
/// mode; those builds never ask for it (no `fips` feature).
#[cfg(s2n_before_0_3)]
pub fn fips() -> bool {
    false
}

/// Whether `policy` negotiates exactly `params` between two s2n-tls peers
/// without a HelloRetryRequest. Call [`check_chain`] first: once the chain
/// is known to work, a policy that rejects the chain's keys or signatures
/// when loading it, or a handshake that fails, means the policy cannot do
/// it ("no").
///
/// Errors: creating a connection failed.
fn probe_policy(params: &Params, policy: &'static str) -> Result<bool, ConfigureError> {
    Ok(match handshake_under(params, policy)? {
        Ok(pair) => pair.check(params).is_ok(),
        Err(_) => false,
    })
}

/// One server-auth handshake between two s2n-tls peers with `params`' chain
/// under `policy`: the pair after it, or (inner `Err`) why the
/// configuration or the handshake failed.
///
/// Errors (outer): creating a connection failed.
fn handshake_under(
    params: &Params,
    policy: &'static str,
) -> Result<Result<Pair, anyhow::Error>, ConfigureError> {
    let probe = Params { kind: crate::params::HandshakeKind::ServerAuth, ..*params };
    let configs = match S2nConfigs::new(&probe, policy) {
        Ok(configs) => configs,
        Err(e) => return Ok(Err(anyhow!("{e}"))),
    };
    let duplex = Duplex::new();
    let client = configs.connection(Mode::Client, duplex.endpoint(Side::Client))?;
    let server = configs.connection(Mode::Server, duplex.endpoint(Side::Server))?;
    let mut pair = Pair { client: Box::new(client), server: Box::new(server), duplex };
    let mut times = SideTimes::default();
    Ok(pair.handshake(&mut times).map(|()| pair))
}

/// Checks, once per chain per process, that two s2n-tls peers complete a
/// server-auth handshake with `params`' chain under at least one of
/// [`CANDIDATE_POLICIES`] (whatever they negotiate), so that a policy probe
/// that fails is the policy's doing, not the chain's.
///
/// Errors: [`ConfigureError::Failed`] naming the chain's files and the
/// first policy's error, when no policy completes a handshake (a broken,
/// truncated or mismatched chain or key).
fn check_chain(params: &Params) -> Result<(), ConfigureError> {
    static WORKS: OnceLock<Mutex<Vec<CertChain>>> = OnceLock::new();
    let works = WORKS.get_or_init(Default::default);
    if works.lock().map_err(|_| anyhow!("chain cache poisoned"))?.contains(&params.cert) {
        return Ok(());
    }
    let files = crate::certs::load(params.cert)?;
    let mut first_error = None;
    for policy in CANDIDATE_POLICIES {
        match handshake_under(params, policy)? {
            Ok(_) => {
                works.lock().map_err(|_| anyhow!("chain cache poisoned"))?.push(params.cert);
                return Ok(());
            }
            Err(e) => {
                first_error.get_or_insert((*policy, e));
            }
        }
    }
    let (policy, e) = first_error.ok_or_else(|| anyhow!("no candidate security policy"))?;
    Err(ConfigureError::Failed(anyhow!(
        "s2n-tls completes no handshake with the {} chain ({}, {}) under any candidate security policy; \
         under {policy}: {e:#}",
        params.cert,
        files.ca_file().display(),
        files.identity_files(true)
    )))
}

impl TlsLibrary for S2nTls {
    fn name(&self) -> String {
        // s2n-tls 0.0.x (historical-perf) links the system's OpenSSL libcrypto.
        let backend = if cfg!(s2n_system_libcrypto) {
            "openssl-libcrypto"
        } else if fips() {
            "aws-lc-fips"
        } else {
            "aws-lc"
        };
        format!("s2n-tls-{}+{backend}", env!("TLS_BENCH_S2N_TLS_VERSION"))
    }

    fn settings(&self, params: &Params) -> Option<String> {
        policy_for(params).ok().map(|p| format!("security policy {p}"))
    }

    fn configure(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let policy = policy_for(params)?;
        Ok(Box::new(S2nConfigs::new(params, policy)?))
    }

    /// Configs whose connections capture their `s2n_connection` for
    /// `s2n_sendv_with_offset` (see the `vectored` module).
    #[cfg(not(feature = "historical-perf"))]
    fn configure_vectored(&self, params: &Params) -> Result<Box<dyn Configured>, ConfigureError> {
        let policy = policy_for(params)?;
        let (mut client, mut server) = S2nConfigs::builders(params, policy)?;
        vectored::capture(&mut client)?;
        vectored::capture(&mut server)?;
        let fail = crate::config::s2n::fail;
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
        let fail = crate::config::s2n::fail;
        Ok(S2nConfigs {
            client: client.build().map_err(fail)?,
            server: server.build().map_err(fail)?,
            capturing: false,
        })
    }

    /// The client's and the server's config builders, with a fresh ticket key.
    fn builders(params: &Params, policy: &'static str) -> Result<(Builder, Builder), ConfigureError> {
        let mut ticket_key = [0u8; 32];
        getrandom::fill(&mut ticket_key).map_err(|e| anyhow!("getrandom: {e}"))?;
        Ok((client_builder(params, policy)?, server_builder(params, policy, &ticket_key)?))
    }

    fn connection(&self, mode: Mode, io: Endpoint) -> Result<S2nConn> {
        // s2n-tls 0.0.8's `Mode` is neither Copy nor Clone.
        let server = mode == Mode::Server;
        let mut conn = Connection::new(mode);
        let config = if server { self.server.clone() } else { self.client.clone() };
        conn.set_config(config)?;
        conn.set_blinding(Blinding::SelfService)?;
        conn.prefer_throughput()?;
        if !server {
            conn.set_server_name(crate::certs::SERVER_NAME)?;
            #[cfg(not(s2n_before_0_3))]
            conn.set_application_context(crate::config::s2n::ReceivedTicket::default());
        }
        // The endpoint is boxed so its address stays fixed while the
        // connection holds it as callback context.
        let io = Box::pin(Io::new(io, server));
        let ctx = &*io as *const Io as *mut c_void;
        conn.set_send_callback(Some(send_cb))?;
        conn.set_receive_callback(Some(recv_cb))?;
        // SAFETY: `io` lives in the same S2nConn as `conn` and is dropped
        // after it (field order), and it never moves (pinned box).
        unsafe {
            conn.set_send_context(ctx)?;
            conn.set_receive_context(ctx)?;
        }
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
        let mut c = self.connection(Mode::Client, io)?;
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
        Ok(Box::new(self.connection(Mode::Server, io)?))
    }
}

/// A connection's transport as its send and receive callbacks see it.
struct Io {
    endpoint: Endpoint,
    /// s2n-tls before 0.0.29 (historical-perf) cannot report the
    /// negotiated group: the server's handshake bytes are kept to read it
    /// from the wire.
    #[cfg(s2n_no_curve_getter)]
    flight: KeptFlight,
}

impl Io {
    #[cfg_attr(not(s2n_no_curve_getter), allow(unused_variables))]
    fn new(endpoint: Endpoint, server: bool) -> Io {
        Io {
            endpoint,
            #[cfg(s2n_no_curve_getter)]
            flight: KeptFlight { server, ..Default::default() },
        }
    }
}

/// The bytes the server sends (a server) or receives (a client) until the
/// handshake completes.
#[cfg(s2n_no_curve_getter)]
#[derive(Default)]
struct KeptFlight {
    server: bool,
    done: std::cell::Cell<bool>,
    bytes: std::cell::RefCell<Vec<u8>>,
}

#[cfg(s2n_no_curve_getter)]
impl KeptFlight {
    fn passed(&self, sent: bool, data: &[u8]) {
        if sent == self.server && !self.done.get() {
            self.bytes.borrow_mut().extend_from_slice(data);
        }
    }
}

unsafe extern "C" fn send_cb(ctx: *mut c_void, buf: *const u8, len: u32) -> libc::c_int {
    // SAFETY: ctx is the connection's pinned Io; s2n-tls passes a valid
    // buffer of `len` bytes.
    let (io, data) = unsafe { (&*(ctx as *const Io), slice::from_raw_parts(buf, len as usize)) };
    io.endpoint.write_all_bytes(data);
    #[cfg(s2n_no_curve_getter)]
    io.flight.passed(true, data);
    len as libc::c_int
}

unsafe extern "C" fn recv_cb(ctx: *mut c_void, buf: *mut u8, len: u32) -> libc::c_int {
    // SAFETY: as in send_cb, with a writable buffer.
    let (io, out) = unsafe { (&*(ctx as *const Io), slice::from_raw_parts_mut(buf, len as usize)) };
    match io.endpoint.read_bytes(out) {
        0 => {
            errno::set_errno(errno::Errno(libc::EWOULDBLOCK));
            -1
        }
        n => {
            #[cfg(s2n_no_curve_getter)]
            io.flight.passed(false, &out[..n]);
            n as libc::c_int
        }
    }
}

struct S2nConn {
    // Dropped before `io`, which it points to.
    conn: Connection,
    /// A server, not a client (`Connection::mode` is private up to s2n-tls
    /// 0.3.38).
    server: bool,
    #[cfg_attr(not(s2n_no_curve_getter), allow(dead_code))]
    io: Pin<Box<Io>>,
    /// Made by a capturing config: takes [`S2nConn::raw`] in the handshake.
    #[cfg_attr(feature = "historical-perf", allow(dead_code))]
    capturing: bool,
    /// This connection's own `s2n_connection`, once captured.
    #[cfg(not(feature = "historical-perf"))]
    raw: Option<vectored::RawConn>,
}

/// Whether the handshake resumed a session (`s2n_connection_is_session_resumed`).
#[cfg(not(s2n_before_0_3))]
fn resumed(c: &Connection) -> Result<bool> {
    Ok(c.resumed())
}

/// Before s2n-tls 0.3 (no `Connection::resumed`): s2n-tls's own handshake
/// type, which names `FULL_HANDSHAKE` unless a session was resumed
/// (`s2n_connection_get_handshake_type_name`).
#[cfg(s2n_before_0_3)]
fn resumed(c: &Connection) -> Result<bool> {
    let kind = c.handshake_type()?;
    ensure!(kind.contains("NEGOTIATED"), "s2n-tls handshake type {kind}: not negotiated");
    Ok(!kind.contains("FULL_HANDSHAKE"))
}

/// The negotiated key exchange group, `None` without one.
#[cfg(not(s2n_no_curve_getter))]
fn group(c: &S2nConn) -> Result<Option<KxGroup>> {
    match selected_group(&c.conn)? {
        Some(n) => Ok(Some(KxGroup::from_library_name(n).with_context(|| format!("unknown group {n}"))?)),
        None => Ok(None),
    }
}

/// Before s2n-tls 0.0.29 (no `selected_curve`): the ServerHello key share
/// or the ServerKeyExchange curve, as the server sent it ([`crate::wire`]).
#[cfg(s2n_no_curve_getter)]
fn group(c: &S2nConn) -> Result<Option<KxGroup>> {
    let seen = crate::wire::server_flight(&c.io.flight.bytes.borrow())
        .context("reading the server's first flight")?;
    match seen.group {
        Some(code) => {
            Ok(Some(KxGroup::from_iana_code(code).with_context(|| format!("unknown group {code}"))?))
        }
        None => Ok(None),
    }
}

/// The negotiated key exchange group's s2n-tls name, `None` without one
/// (`s2n_connection_get_key_exchange_group`, s2n-tls 0.3.15+).
#[cfg(not(s2n_no_kx_group_getter))]
fn selected_group(c: &Connection) -> Result<Option<&str>> {
    Ok(c.selected_key_exchange_group())
}

/// Releases before 0.3.15: the hybrid (KEM) group if one was negotiated
/// (0.3.10+), else the ECDHE curve. `s2n_connection_get_curve` reports
/// "NONE" for a hybrid group (its curve lives in the KEM group's
/// parameters), so a hybrid is never taken for its curve.
#[cfg(all(s2n_no_kx_group_getter, not(s2n_no_curve_getter)))]
fn selected_group(c: &Connection) -> Result<Option<&str>> {
    #[cfg(not(s2n_no_kem_group_getter))]
    if let Some(kem_group) = c.kem_group_name() {
        return Ok(Some(kem_group));
    }
    Ok(match c.selected_curve()? {
        "NONE" => None,
        curve => Some(curve),
    })
}

fn pending<T>(p: Poll<Result<T, crate::config::s2n_api::error::Error>>) -> Result<Option<T>> {
    match p {
        Poll::Ready(Ok(v)) => Ok(Some(v)),
        Poll::Ready(Err(e)) => Err(anyhow!("s2n-tls: {e}")),
        Poll::Pending => Ok(None),
    }
}

impl TlsConnection for S2nConn {
    fn handshake(&mut self) -> Result<bool> {
        #[cfg(not(feature = "historical-perf"))]
        if self.capturing && self.raw.is_none() {
            vectored::clear();
            let done = pending(self.conn.poll_negotiate())?.is_some();
            self.raw = vectored::take(self.server)?;
            return Ok(done);
        }
        let done = pending(self.conn.poll_negotiate())?.is_some();
        #[cfg(s2n_no_curve_getter)]
        self.io.flight.done.set(done);
        Ok(done)
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
        let c = &self.conn;
        let protocol = match c.actual_protocol_version()? {
            Version::TLS12 => Protocol::Tls12,
            Version::TLS13 => Protocol::Tls13,
            other => bail!("s2n-tls negotiated {other:?}"),
        };
        let name = c.cipher_suite()?;
        let suite = CipherSuite::from_library_name(name).with_context(|| format!("unknown suite {name}"))?;
        let group = group(self)?;
        let hrr = c.handshake_type()?.contains("HELLO_RETRY_REQUEST");
        ensure!(!hrr, "s2n-tls needed a HelloRetryRequest");
        let client_authenticated = self.server.then(|| c.client_cert_used());
        Ok(Negotiated { protocol, suite, group, resumed: resumed(c)?, client_authenticated })
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
        #[cfg(not(s2n_before_0_3))]
        let received = self
            .conn
            .application_context_mut::<crate::config::s2n::ReceivedTicket>()
            .and_then(|t| t.0.take());
        #[cfg(s2n_before_0_3)]
        let received =
            crate::config::s2n::LAST_TICKET.lock().map_err(|_| anyhow!("ticket slot poisoned"))?.take();
        if let Some(ticket) = received {
            return Ok(Session(Box::new(ticket)));
        }
        // TLS 1.2: a server may resume without issuing a new ticket
        // (RFC 5077 section 3.3); the client keeps the session it resumed.
        #[cfg(not(s2n_before_0_3))]
        if self.conn.actual_protocol_version()? == Version::TLS12 && self.conn.resumed() {
            let mut ticket = vec![0u8; self.conn.session_ticket_length()?];
            let n = self.conn.session_ticket(&mut ticket)?;
            ticket.truncate(n);
            return Ok(Session(Box::new(ticket)));
        }
        bail!("s2n-tls client received no session ticket")
    }
}
