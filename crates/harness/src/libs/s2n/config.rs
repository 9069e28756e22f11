//! s2n-tls configuration for a parameter set, the settings of each new
//! connection, and the read-back of what a connection negotiated.
//! s2n-tls picks suites and groups only through named security policies,
//! so the caller passes the policy ([`crate::libs::s2n::policy::policy_for`]
//! finds the one whose top preferences are the wanted suite and group).
//! Independent of the transport, so a socket runner (s2n-tls-tokio) builds
//! the same configs and connections and checks them the same way.
//!
//! Source: s2n-tls usage guide (security policies, session resumption,
//! client authentication) and the `s2n_tls::config::Builder` docs.

#[cfg(not(s2n_no_session_tickets))]
use std::time::SystemTime;

use anyhow::anyhow;

#[cfg(not(s2n_no_session_tickets))]
use crate::libs::s2n::api::callbacks::{SessionTicket, SessionTicketCallback};
#[cfg(s2n_raw_api)]
use crate::libs::s2n::api::{BuilderNames as _, PollNames as _};
use crate::{
    certs::{self, CertFiles},
    harness::{ConfigureError, Negotiated},
    libs::s2n::api::{
        callbacks::VerifyHostNameCallback,
        config::{Builder, Config},
        connection::Connection,
        enums::ClientAuthType,
        security::Policy,
    },
    params::{CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
};

/// Accepts any host name. Used by servers for client certificates, which
/// name a client, not a host the server connected to.
struct AnyClientName;

impl VerifyHostNameCallback for AnyClientName {
    fn verify_host_name(&self, _host_name: &str) -> bool {
        true
    }
}

/// A client connection's application context (`Connection::
/// set_application_context`) where the session-ticket callback leaves the
/// last session it received, serialised for `set_session_ticket`.
#[derive(Debug, Default)]
pub struct ReceivedTicket(pub Option<Vec<u8>>);

/// s2n-tls before 0.3 (historical-perf builds) has no application context:
/// the callback leaves the last session received by any client here, which
/// is that of the one client handshaking (the harness runs one pair at a
/// time).
#[cfg(s2n_before_0_3)]
pub static LAST_TICKET: std::sync::Mutex<Option<Vec<u8>>> = std::sync::Mutex::new(None);

/// Keeps each received session in the connection's [`ReceivedTicket`]
/// ([`LAST_TICKET`] before s2n-tls 0.3). A ticket that cannot be read
/// leaves the slot empty, which the harness reports as "no ticket received".
#[cfg(not(s2n_no_session_tickets))]
struct KeepTicket;

#[cfg(not(s2n_no_session_tickets))]
impl SessionTicketCallback for KeepTicket {
    #[cfg_attr(s2n_before_0_3, allow(unused_variables))]
    fn on_session_ticket(&self, connection: &mut Connection, ticket: &SessionTicket) {
        let Ok(len) = ticket.len() else { return };
        let mut data = vec![0u8; len];
        if ticket.data(&mut data).is_err() {
            return;
        }
        #[cfg(not(s2n_before_0_3))]
        if let Some(slot) = connection.application_context_mut::<ReceivedTicket>() {
            slot.0 = Some(data);
        }
        #[cfg(s2n_before_0_3)]
        if let Ok(mut slot) = LAST_TICKET.lock() {
            *slot = Some(data);
        }
    }
}

/// An s2n-tls error while configuring: [`ConfigureError::Failed`].
pub fn fail(e: crate::libs::s2n::api::error::Error) -> ConfigureError {
    ConfigureError::Failed(anyhow!("s2n-tls: {e}"))
}

fn builder(policy: &str) -> Result<Builder, ConfigureError> {
    #[cfg(not(s2n_before_0_3))]
    check_fips()?;
    let mut b = Config::builder();
    let p = Policy::from_version(policy).map_err(fail)?;
    b.set_security_policy(&p)
        .map_err(|e| ConfigureError::Unsupported(format!("no s2n-tls security policy {policy}: {e}")))?;
    Ok(b)
}

/// Makes `b`'s connections present the chain's identity (`server`: the
/// server's, else the client's; `load_pem`). Errors name both files.
pub fn identity(b: &mut Builder, files: &CertFiles, server: bool) -> Result<(), ConfigureError> {
    let (chain, key) = files.identity(server);
    b.load_pem(chain, key).map_err(|e| {
        ConfigureError::Failed(anyhow!("s2n-tls: loading {}: {e}", files.identity_files(server)))
    })?;
    Ok(())
}

/// Trusts the chain's root CA (`trust_pem`). Errors name the file.
fn trust(b: &mut Builder, files: &CertFiles) -> Result<(), ConfigureError> {
    b.trust_pem(&files.ca_cert).map_err(|e| {
        ConfigureError::Failed(anyhow!("s2n-tls: loading {}: {e}", files.ca_file().display()))
    })?;
    Ok(())
}

/// Trust only what `trust_pem` adds (`with_system_certs(false)`). s2n-tls
/// before 0.0.32 (historical-perf) has no such switch and also loads the
/// system's trust store, which adds no trust anchor the test chains use.
#[cfg_attr(s2n_no_system_certs_switch, allow(unused_variables))]
fn without_system_certs(b: &mut Builder) -> Result<(), ConfigureError> {
    #[cfg(not(s2n_no_system_certs_switch))]
    b.with_system_certs(false).map_err(fail)?;
    Ok(())
}

/// Session tickets on (`enable_session_tickets`). Errors:
/// [`ConfigureError::Unsupported`] before s2n-tls 0.0.36, which has no
/// session ticket API.
#[cfg_attr(s2n_no_session_tickets, allow(unused_variables))]
fn tickets(b: &mut Builder) -> Result<(), ConfigureError> {
    #[cfg(not(s2n_no_session_tickets))]
    b.enable_session_tickets(true).map_err(fail)?;
    #[cfg(s2n_no_session_tickets)]
    return Err(ConfigureError::Unsupported("s2n-tls before 0.0.36 has no session ticket API".to_string()));
    #[cfg(not(s2n_no_session_tickets))]
    Ok(())
}

/// A client config for `params` with security policy `policy`: trusts only
/// the chain's root (no system certificates); presents the client chain for
/// mTLS; for resumption accepts session tickets and keeps each in the
/// connection's [`ReceivedTicket`] (set it as the application context).
pub fn client_config(params: &Params, policy: &str) -> Result<Config, ConfigureError> {
    client_builder(params, policy)?.build().map_err(fail)
}

/// The builder of [`client_config`], for a caller that adds a setting
/// before building.
pub fn client_builder(params: &Params, policy: &str) -> Result<Builder, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = builder(policy)?;
    without_system_certs(&mut b)?;
    trust(&mut b, &files)?;
    if params.kind == HandshakeKind::MutualAuth {
        b.set_client_auth_type(ClientAuthType::Required).map_err(fail)?;
        identity(&mut b, &files, false)?;
    }
    if params.kind == HandshakeKind::Resumption {
        tickets(&mut b)?;
        #[cfg(not(s2n_no_session_tickets))]
        b.set_session_ticket_callback(KeepTicket).map_err(fail)?;
    }
    Ok(b)
}

/// A server config for `params` with security policy `policy`: the chain's
/// server identity; no system certificates (`Builder::build` would otherwise
/// parse the system's trust store into every config, which a server that
/// verifies no client never reads, and which was a third of the CPU of
/// building configs in the tests); requires and verifies a client
/// certificate, trusting only the chain's root, for mTLS;
/// for resumption a session ticket key (s2n-tls issues one ticket per
/// TLS 1.3 handshake), otherwise tickets off (the s2n-tls default).
///
/// `ticket_key` is the 32-byte ticket encryption key (RFC 5077 style; used
/// only for resumption).
pub fn server_config(params: &Params, policy: &str, ticket_key: &[u8; 32]) -> Result<Config, ConfigureError> {
    server_builder(params, policy, ticket_key)?.build().map_err(fail)
}

/// The builder of [`server_config`], for a caller that adds a setting
/// before building.
#[cfg_attr(s2n_no_session_tickets, allow(unused_variables))]
pub fn server_builder(
    params: &Params,
    policy: &str,
    ticket_key: &[u8; 32],
) -> Result<Builder, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = builder(policy)?;
    without_system_certs(&mut b)?;
    identity(&mut b, &files, true)?;
    if params.kind == HandshakeKind::MutualAuth {
        b.set_client_auth_type(ClientAuthType::Required).map_err(fail)?;
        trust(&mut b, &files)?;
        b.set_verify_host_callback(AnyClientName).map_err(fail)?;
    }
    if params.kind == HandshakeKind::Resumption {
        tickets(&mut b)?;
        #[cfg(not(s2n_no_session_tickets))]
        b.add_session_ticket_key(b"tls-bench", ticket_key, SystemTime::now()).map_err(fail)?;
    }
    Ok(b)
}

/// A fresh random session ticket key for [`server_config`] (32 bytes from
/// the OS). Errors: the OS gave no random bytes.
pub fn ticket_key() -> Result<[u8; 32], ConfigureError> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| anyhow!("getrandom: {e}"))?;
    Ok(key)
}

/// Whether s2n-tls runs in FIPS mode, as its ids say (`+aws-lc-fips`):
/// when its libcrypto, this build's AWS-LC through aws-lc-rs, is the FIPS
/// module in FIPS mode (`aws_lc_rs::try_fips_mode`), which only the
/// aws-lc-config files' builds link. s2n-tls follows its libcrypto there
/// (`s2n_fips_init` in s2n-tls's `crypto/s2n_fips.c`). Asked of AWS-LC, not
/// of s2n-tls: naming a case does not run `s2n_init`, whose entropy setup
/// in AWS-LC is 93% of the instructions of a Callgrind run of another
/// library's case. [`builder`] holds s2n-tls to the answer.
#[cfg(not(s2n_before_0_3))]
pub fn fips() -> bool {
    #[cfg(any(tls_bench_s2n_fips, tls_bench_rustls_fips))]
    return aws_lc_rs::try_fips_mode().is_ok();
    #[cfg(not(any(tls_bench_s2n_fips, tls_bench_rustls_fips)))]
    false
}

/// Errors (failed) unless s2n-tls's own FIPS mode (`s2n_get_fips_mode`,
/// after `s2n_init`) is what [`fips`] said, so what its ids say.
#[cfg(not(s2n_before_0_3))]
fn check_fips() -> Result<(), ConfigureError> {
    s2n_tls::init::init();
    let on = s2n_tls::init::fips_mode().map_err(fail)? == s2n_tls::enums::FipsMode::Enabled;
    if on != fips() {
        return Err(ConfigureError::Failed(anyhow!(
            "s2n-tls's FIPS mode is {} but its libcrypto's is {}",
            if on { "on" } else { "off" },
            if on { "off" } else { "on" }
        )));
    }
    Ok(())
}

/// s2n-tls before 0.3 (historical-perf builds) cannot report its FIPS
/// mode; those builds never ask for it (no `fips` feature).
#[cfg(s2n_before_0_3)]
pub fn fips() -> bool {
    false
}

/// A new connection on `config` (a server's when `server`, else a
/// client's) with the per-connection settings every runner uses:
/// `Blinding::SelfService` (no 10-30 s sleeps after an error, s2n-tls usage
/// guide), `prefer_throughput` (16 KiB records instead of about 8 KiB, what
/// a tuned server runs), and for a client the server name
/// ([`certs::SERVER_NAME`], which drives the host-name check) and the
/// [`ReceivedTicket`] slot. The caller sets the I/O. Errors: s2n-tls
/// refused a setting (s2n-tls's own error, as s2n-tls-tokio's
/// `connection::Builder` returns it).
pub fn connection(server: bool, config: &Config) -> Result<Connection, crate::libs::s2n::api::error::Error> {
    use crate::libs::s2n::api::enums::{Blinding, Mode};
    let mut conn = Connection::new(if server { Mode::Server } else { Mode::Client });
    conn.set_config(config.clone())?;
    conn.set_blinding(Blinding::SelfService)?;
    conn.prefer_throughput()?;
    if !server {
        conn.set_server_name(certs::SERVER_NAME)?;
        #[cfg(not(s2n_before_0_3))]
        conn.set_application_context(ReceivedTicket::default());
    }
    Ok(conn)
}

/// The session to resume the next connection with, serialised for
/// `set_session_ticket`, from client `conn` once it has read past the
/// server's NewSessionTicket (TLS 1.3; in TLS 1.2 the ticket comes in the
/// handshake): the ticket the session-ticket callback left in its
/// [`ReceivedTicket`] ([`LAST_TICKET`] before s2n-tls 0.3), taken out; in
/// TLS 1.2 a server may resume without issuing a new ticket (RFC 5077
/// section 3.3), and the client keeps the session it resumed. Errors: no
/// ticket received.
#[cfg_attr(s2n_before_0_3, allow(unused_variables))]
pub fn received_ticket(conn: &mut Connection) -> anyhow::Result<Vec<u8>> {
    #[cfg(not(s2n_before_0_3))]
    let received = conn.application_context_mut::<ReceivedTicket>().and_then(|t| t.0.take());
    #[cfg(s2n_before_0_3)]
    let received = LAST_TICKET.lock().map_err(|_| anyhow!("ticket slot poisoned"))?.take();
    if let Some(ticket) = received {
        return Ok(ticket);
    }
    #[cfg(not(s2n_before_0_3))]
    if conn.actual_protocol_version()? == crate::libs::s2n::api::enums::Version::TLS12 && conn.resumed() {
        let mut ticket = vec![0u8; conn.session_ticket_length()?];
        let n = conn.session_ticket(&mut ticket)?;
        ticket.truncate(n);
        return Ok(ticket);
    }
    anyhow::bail!("s2n-tls client received no session ticket")
}

/// A poll of s2n-tls: `Some` when ready, `None` when it waits on I/O.
/// Errors: the library's error.
pub(crate) fn pending<T>(
    p: std::task::Poll<Result<T, crate::libs::s2n::api::error::Error>>,
) -> anyhow::Result<Option<T>> {
    match p {
        std::task::Poll::Ready(Ok(v)) => Ok(Some(v)),
        std::task::Poll::Ready(Err(e)) => Err(anyhow!("s2n-tls: {e}")),
        std::task::Poll::Pending => Ok(None),
    }
}

/// Whether the handshake resumed a session (`s2n_connection_is_session_resumed`).
#[cfg(not(s2n_before_0_3))]
fn resumed(c: &Connection) -> anyhow::Result<bool> {
    Ok(c.resumed())
}

/// Before s2n-tls 0.3 (no `Connection::resumed`): s2n-tls's own handshake
/// type, which names `FULL_HANDSHAKE` unless a session was resumed
/// (`s2n_connection_get_handshake_type_name`).
#[cfg(s2n_before_0_3)]
fn resumed(c: &Connection) -> anyhow::Result<bool> {
    let kind = c.handshake_type()?;
    anyhow::ensure!(kind.contains("NEGOTIATED"), "s2n-tls handshake type {kind}: not negotiated");
    Ok(!kind.contains("FULL_HANDSHAKE"))
}

/// The negotiated key exchange group, `None` without one. Not before
/// s2n-tls 0.0.29, which cannot report it ([`crate::libs::s2n::io::Io`]
/// reads it from the wire there).
#[cfg(not(s2n_no_curve_getter))]
pub fn group(c: &Connection) -> anyhow::Result<Option<KxGroup>> {
    use anyhow::Context as _;
    match selected_group(c)? {
        Some(n) => Ok(Some(KxGroup::from_library_name(n).with_context(|| format!("unknown group {n}"))?)),
        None => Ok(None),
    }
}

/// The negotiated key exchange group's s2n-tls name, `None` without one
/// (`s2n_connection_get_key_exchange_group`, s2n-tls 0.3.15+).
#[cfg(not(s2n_no_kx_group_getter))]
fn selected_group(c: &Connection) -> anyhow::Result<Option<&str>> {
    Ok(c.selected_key_exchange_group())
}

/// Releases before 0.3.15: the hybrid (KEM) group if one was negotiated
/// (0.3.10+), else the ECDHE curve. `s2n_connection_get_curve` reports
/// "NONE" for a hybrid group (its curve lives in the KEM group's
/// parameters), so a hybrid is never taken for its curve.
#[cfg(all(s2n_no_kx_group_getter, not(s2n_no_curve_getter)))]
fn selected_group(c: &Connection) -> anyhow::Result<Option<&str>> {
    #[cfg(not(s2n_no_kem_group_getter))]
    if let Some(kem_group) = c.kem_group_name() {
        return Ok(Some(kem_group));
    }
    Ok(match c.selected_curve()? {
        "NONE" => None,
        curve => Some(curve),
    })
}

/// What `c` negotiated, with `group` as the key exchange group ([`group`],
/// or read from the wire where s2n-tls cannot report it); `server` says
/// which side `c` is (only a server knows whether the client
/// authenticated). Errors: a version or suite outside the benchmark's, a
/// HelloRetryRequest (the parameters ask for the group the client offers
/// first), a failed read-back.
pub fn negotiated_with_group(
    c: &Connection,
    server: bool,
    group: Option<KxGroup>,
) -> anyhow::Result<Negotiated> {
    use anyhow::{Context as _, bail, ensure};

    use crate::libs::s2n::api::enums::Version;
    let protocol = match c.actual_protocol_version()? {
        Version::TLS12 => Protocol::Tls12,
        Version::TLS13 => Protocol::Tls13,
        other => bail!("s2n-tls negotiated {other:?}"),
    };
    let name = c.cipher_suite()?;
    let suite = CipherSuite::from_library_name(name).with_context(|| format!("unknown suite {name}"))?;
    let hrr = c.handshake_type()?.contains("HELLO_RETRY_REQUEST");
    ensure!(!hrr, "s2n-tls needed a HelloRetryRequest");
    let client_authenticated = server.then(|| c.client_cert_used());
    Ok(Negotiated { protocol, suite, group, resumed: resumed(c)?, client_authenticated })
}
