//! s2n-tls configuration for a parameter set. s2n-tls picks suites and
//! groups only through named security policies, so the caller passes the
//! policy (see [`crate::stacks::s2n::policy_for`], which finds one whose top
//! preferences are the wanted suite and group). Independent of the
//! transport, so a socket runner (s2n-tls-tokio) can use the same configs.
//!
//! Source: s2n-tls usage guide (security policies, session resumption,
//! client authentication) and the `s2n_tls::config::Builder` docs.

#[cfg(not(s2n_no_session_tickets))]
use std::time::SystemTime;

use anyhow::anyhow;

#[cfg(s2n_raw_api)]
use crate::config::s2n_api::BuilderNames as _;
#[cfg(not(s2n_no_session_tickets))]
use crate::config::s2n_api::{
    callbacks::{SessionTicket, SessionTicketCallback},
    connection::Connection,
};
use crate::{
    certs::{self, CertFiles},
    config::s2n_api::{
        callbacks::VerifyHostNameCallback,
        config::{Builder, Config},
        enums::ClientAuthType,
        security::Policy,
    },
    harness::ConfigureError,
    params::{HandshakeKind, Params},
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
pub fn fail(e: crate::config::s2n_api::error::Error) -> ConfigureError {
    ConfigureError::Failed(anyhow!("s2n-tls: {e}"))
}

fn builder(policy: &str) -> Result<Builder, ConfigureError> {
    let mut b = Config::builder();
    let p = Policy::from_version(policy).map_err(fail)?;
    b.set_security_policy(&p)
        .map_err(|e| ConfigureError::Unsupported(format!("no s2n-tls security policy {policy}: {e}")))?;
    Ok(b)
}

/// Loads a side's chain and key (`load_pem`). Errors name both files.
fn identity(b: &mut Builder, files: &CertFiles, server: bool) -> Result<(), ConfigureError> {
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
/// server identity; requires and verifies a client certificate for mTLS;
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
    identity(&mut b, &files, true)?;
    if params.kind == HandshakeKind::MutualAuth {
        without_system_certs(&mut b)?;
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
