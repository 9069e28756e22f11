//! The s2n-tls security policy for a parameter set. s2n-tls has no
//! per-suite or per-group setting, only named policies
//! (`security::Policy::from_version`), so the policy for a suite, group and
//! chain is the first of [`CANDIDATE_POLICIES`] under which two s2n-tls
//! peers negotiate exactly those, found by trial handshakes over the
//! in-memory duplex (untimed) once per (suite, group, chain) per process and
//! cached. Every runner asks here: the in-memory stack, and a socket runner
//! that builds its configs with [`crate::libs::s2n::config`]. Runners print the
//! policy beside a case's id ([`crate::harness::TlsLibrary::settings`]).

use std::{
    collections::HashMap,
    sync::{Mutex, OnceLock},
};

use anyhow::anyhow;

use crate::{
    error::ConfigureError,
    harness::Negotiated,
    libs::s2n::{
        config::{client_config, connection, fips, server_config},
        io::Io,
    },
    params::{CertChain, CipherSuite, HandshakeKind, KxGroup, Params},
    transport::{Duplex, Side},
};

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

/// Rounds of both sides' handshake calls a probe waits for both to be done
/// (a server-auth handshake takes about three).
const PROBE_ROUNDS: usize = 16;

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
            let mut found = None;
            for policy in CANDIDATE_POLICIES {
                if negotiates_exactly(params, policy)? {
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
    let mut found = Vec::new();
    for policy in CANDIDATE_POLICIES {
        if negotiates_exactly(params, policy)? {
            found.push(*policy);
        }
    }
    Ok(found)
}

/// Whether `policy` negotiates exactly `params`' protocol, suite and group
/// between two s2n-tls peers without a HelloRetryRequest (server
/// authentication). Call [`check_chain`] first: once the chain is known to
/// work, a policy that rejects the chain's keys or signatures when loading
/// it, or a handshake that fails, means the policy cannot do it ("no").
///
/// Errors: creating a connection failed.
pub fn negotiates_exactly(params: &Params, policy: &'static str) -> Result<bool, ConfigureError> {
    let probe = Params { kind: HandshakeKind::ServerAuth, ..*params };
    Ok(match handshake_under(&probe, policy)? {
        Ok((Ok(client), Ok(server))) => {
            client.check(&probe).is_ok()
                && server.check(&probe).is_ok()
                && server.client_authenticated.is_some()
        }
        Ok(_) | Err(_) => false,
    })
}

/// What the client and the server of a probe read back.
type ReadBack = (anyhow::Result<Negotiated>, anyhow::Result<Negotiated>);

/// One server-auth handshake between two s2n-tls peers with `params`' chain
/// under `policy`, over the in-memory duplex: what the client and the
/// server read back after it (each an error where the read-back failed,
/// e.g. after a HelloRetryRequest), or (inner `Err`) why the configuration
/// or the handshake failed.
///
/// Errors (outer): creating a connection failed.
fn handshake_under(
    params: &Params,
    policy: &'static str,
) -> Result<Result<ReadBack, anyhow::Error>, ConfigureError> {
    let probe = Params { kind: HandshakeKind::ServerAuth, ..*params };
    // Server authentication: the ticket key is not used.
    let configs =
        client_config(&probe, policy).and_then(|c| Ok((c, server_config(&probe, policy, &[0; 32])?)));
    let (client_config, server_config) = match configs {
        Ok(configs) => configs,
        Err(e) => return Ok(Err(anyhow!("{e}"))),
    };
    let duplex = Duplex::new();
    let mut sides = Vec::new();
    for (server, config, side) in
        [(false, &client_config, Side::Client), (true, &server_config, Side::Server)]
    {
        let mut conn = connection(server, config).map_err(crate::libs::s2n::config::fail)?;
        let io = Io::attach(&mut conn, duplex.endpoint(side), server)?;
        sides.push((conn, io));
    }
    let [(client, client_io), (server, server_io)] = &mut sides[..] else {
        return Err(anyhow!("two sides expected").into());
    };
    let (mut client_done, mut server_done) = (false, false);
    for _ in 0..PROBE_ROUNDS {
        if !client_done {
            match client_io.negotiate(client) {
                Ok(done) => client_done = done,
                Err(e) => return Ok(Err(e)),
            }
        }
        if !server_done {
            match server_io.negotiate(server) {
                Ok(done) => server_done = done,
                Err(e) => return Ok(Err(e)),
            }
        }
        if client_done && server_done {
            return Ok(Ok((client_io.negotiated(client, false), server_io.negotiated(server, true))));
        }
    }
    Ok(Err(anyhow!("handshake not done after {PROBE_ROUNDS} rounds")))
}

/// Checks, once per chain per process, that two s2n-tls peers complete a
/// server-auth handshake with `params`' chain under at least one of
/// [`CANDIDATE_POLICIES`] (whatever they negotiate), so that a policy probe
/// that fails is the policy's doing, not the chain's.
///
/// Errors: [`ConfigureError::Failed`] naming the chain's files and the
/// first policy's error, when no policy completes a handshake (a broken,
/// truncated or mismatched chain or key).
pub fn check_chain(params: &Params) -> Result<(), ConfigureError> {
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
