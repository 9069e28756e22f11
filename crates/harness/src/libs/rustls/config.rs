//! rustls configuration for a parameter set: `ClientConfig` and
//! `ServerConfig` with exactly one cipher suite, one key exchange group and
//! one protocol version. Independent of the transport, so a socket runner
//! (tokio-rustls) can use the same objects.
//!
//! Source: rustls 0.23 docs, `ConfigBuilder`, `CryptoProvider`,
//! `crypto::default_fips_provider`, `SupportedCipherSuite::fips`. Also
//! builds against rustls 0.22 (cfg `rustls_0_22`, for historical-perf),
//! where the negotiated group and resumption are observed through
//! counting wrappers ([`crate::libs::rustls::observe`]).

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering, Ordering::Relaxed},
};

use anyhow::{Context, Result, anyhow};
use rustls::{
    ClientConfig, NamedGroup, RootCertStore, ServerConfig, SupportedProtocolVersion,
    client::{
        ClientSessionMemoryCache, ClientSessionStore, Resumption, Tls12ClientSessionValue,
        Tls13ClientSessionValue,
    },
    crypto::{CryptoProvider, GetRandomFailed, SecureRandom},
    pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject},
    server::{NoServerSessionStorage, WebPkiClientVerifier},
};

#[cfg(rustls_0_22)]
use crate::libs::rustls::observe;
use crate::{
    certs::{self, CertFiles},
    harness::ConfigureError,
    params::{HandshakeKind, Params, Protocol},
};

/// Which rustls crypto provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// `rustls::crypto::aws_lc_rs`: AWS-LC through aws-lc-rs. When this
    /// build's aws-lc-rs is on AWS-LC's FIPS module (`aws-lc-config/rustls.toml`
    /// or `s2n.toml`), only its FIPS-approved suites and groups (those whose
    /// `fips()` is true), as in `rustls::crypto::default_fips_provider()`.
    AwsLcRs,
    /// `rustls::crypto::ring`: *ring* (no ML-KEM).
    Ring,
}

impl Provider {
    /// Both providers.
    pub const ALL: [Provider; 2] = [Provider::AwsLcRs, Provider::Ring];

    /// The provider's name in benchmark ids: `aws-lc-rs`, `aws-lc-rs-fips`
    /// (on the FIPS module, see [`Provider::fips`]), `ring`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::AwsLcRs if self.fips() => "aws-lc-rs-fips",
            Provider::AwsLcRs => "aws-lc-rs",
            Provider::Ring => "ring",
        }
    }

    /// Whether the provider runs on a FIPS module in FIPS mode
    /// (`aws_lc_rs::try_fips_mode`); never for *ring*.
    pub fn fips(self) -> bool {
        self == Provider::AwsLcRs && aws_lc_rs::try_fips_mode().is_ok()
    }

    /// The full provider: FIPS-approved parts only on a FIPS module.
    fn default_provider(self) -> CryptoProvider {
        match self {
            #[cfg(tls_bench_rustls_fips)]
            Provider::AwsLcRs => rustls::crypto::default_fips_provider(),
            #[cfg(not(tls_bench_rustls_fips))]
            Provider::AwsLcRs => {
                #[cfg_attr(rustls_0_22, allow(unused_mut))]
                let mut p = rustls::crypto::aws_lc_rs::default_provider();
                // rustls 0.22 has no `fips()` (and is never built on the FIPS module here).
                #[cfg(not(rustls_0_22))]
                if self.fips() {
                    p.cipher_suites.retain(|s| s.fips());
                    p.kx_groups.retain(|g| g.fips());
                }
                p
            }
            Provider::Ring => rustls::crypto::ring::default_provider(),
        }
    }

    fn ticketer(self) -> Result<Arc<dyn rustls::server::ProducesTickets>, ConfigureError> {
        let ticketer = match self {
            #[cfg(not(rustls_0_22))]
            Provider::AwsLcRs => rustls::crypto::aws_lc_rs::Ticketer::new(),
            #[cfg(rustls_0_22)]
            Provider::AwsLcRs => {
                return Err(ConfigureError::Unsupported(
                    "rustls 0.22 has no aws-lc-rs ticketer (its aws_lc_rs::Ticketer is private)".to_string(),
                ));
            }
            Provider::Ring => rustls::crypto::ring::Ticketer::new(),
        };
        Ok(ticketer.map_err(|e| anyhow!("creating a ticketer: {e}"))?)
    }
}

static FIXED_RANDOM: AtomicBool = AtomicBool::new(false);

/// From now on, every provider built here draws its random bytes
/// (`CryptoProvider::secure_random`: the hello randoms, session ids, ticket
/// nonces) from [`FixedRandom`], so that repeated instruction counts take the
/// same paths (as rustls's ci-bench does). Key shares and signatures still
/// use the crypto library's own generator (aws-lc-rs, *ring*): those cannot
/// be fixed through rustls. For instruction counts only; never in the
/// wall-time benchmarks.
pub fn fix_random() {
    FIXED_RANDOM.store(true, Relaxed);
}

/// A `SecureRandom` that fills every buffer with `0x5a`: for instruction
/// counts only ([`fix_random`]); it makes every connection predictable.
#[derive(Debug)]
pub struct FixedRandom;

impl SecureRandom for FixedRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        buf.fill(0x5a);
        Ok(())
    }
}

static FIXED: FixedRandom = FixedRandom;

/// A cipher suite's IANA code (`u16::from`; `get_u16` before rustls 0.23).
pub fn suite_code(suite: rustls::CipherSuite) -> u16 {
    #[cfg(rustls_0_22)]
    return suite.get_u16();
    #[cfg(not(rustls_0_22))]
    u16::from(suite)
}

/// A named group's IANA code (`u16::from`; `get_u16` before rustls 0.23).
pub fn group_code(group: rustls::NamedGroup) -> u16 {
    #[cfg(rustls_0_22)]
    return group.get_u16();
    #[cfg(not(rustls_0_22))]
    u16::from(group)
}

/// The provider cut down to `params`' suite and group.
///
/// Errors: [`ConfigureError::Unsupported`] if the provider lacks either.
pub fn provider_for(provider: Provider, params: &Params) -> Result<Arc<CryptoProvider>, ConfigureError> {
    let mut p = provider.default_provider();
    if FIXED_RANDOM.load(Relaxed) {
        p.secure_random = &FIXED;
    }
    let fips = if provider.fips() { " (FIPS mode: not approved)" } else { "" };
    p.cipher_suites.retain(|s| suite_code(s.suite()) == params.suite.iana_code());
    let offered: Vec<u16> = params.offered_groups().iter().map(|g| g.iana_code()).collect();
    p.kx_groups.retain(|g| offered.contains(&group_code(g.name())));
    p.kx_groups.sort_by_key(|g| offered.iter().position(|o| *o == group_code(g.name())));
    if p.cipher_suites.is_empty() {
        return Err(ConfigureError::Unsupported(format!(
            "the {} provider has no {}{fips}",
            provider.name(),
            params.suite
        )));
    }
    if !p.kx_groups.iter().any(|g| group_code(g.name()) == params.group.iana_code()) {
        return Err(ConfigureError::Unsupported(format!(
            "the {} provider has no {}{fips}",
            provider.name(),
            params.group
        )));
    }
    Ok(Arc::new(p))
}

static TLS12_ONLY: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
static TLS13_ONLY: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

fn versions(params: &Params) -> &'static [&'static SupportedProtocolVersion] {
    // DTLS parameters never reach here (rustls has no DTLS: the default
    // `TlsLibrary::configure_datagram` refuses them).
    match params.protocol().stream_version() {
        Protocol::Tls12 => &TLS12_ONLY,
        _ => &TLS13_ONLY,
    }
}

/// A side's chain and key, parsed. Errors name the files.
pub fn chain_and_key(
    files: &CertFiles,
    server: bool,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let (chain, key) = files.identity(server);
    let parsed = (|| -> Result<_> {
        let chain = CertificateDer::pem_slice_iter(chain)
            .collect::<Result<Vec<_>, _>>()
            .context("parsing a PEM certificate chain")?;
        Ok((chain, PrivateKeyDer::from_pem_slice(key).context("parsing a PEM private key")?))
    })();
    parsed.with_context(|| format!("loading {}", files.identity_files(server)))
}

fn roots(files: &CertFiles) -> Result<Arc<RootCertStore>> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&files.ca_cert) {
        roots
            .add(cert.with_context(|| format!("parsing {}", files.ca_file().display()))?)
            .context("adding the root CA")?;
    }
    Ok(Arc::new(roots))
}

/// A client config for `params`: trusts only the chain's root; presents the
/// client chain for mTLS; keeps session tickets only for resumption.
pub fn client_config(provider: Provider, params: &Params) -> Result<ClientConfig, ConfigureError> {
    let files = certs::load(params.cert)?;
    let crypto = provider_for(provider, params)?;
    #[cfg(rustls_0_22)]
    let crypto = observe::counted(crypto, observe::Role::Client)?;
    let builder = ClientConfig::builder_with_provider(crypto.clone())
        .with_protocol_versions(versions(params))
        .map_err(|e| anyhow!("{e}"))?;
    #[cfg(not(rustls_0_22))]
    let builder = builder.with_root_certificates(roots(&files)?);
    #[cfg(rustls_0_22)]
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(observe::server_verifier(roots(&files)?, crypto)?);
    let mut config = if params.kind == HandshakeKind::MutualAuth {
        let (chain, key) = chain_and_key(&files, false)?;
        builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| anyhow!("{}: {e}", files.identity_files(false)))?
    } else {
        builder.with_no_client_auth()
    };
    if params.kind != HandshakeKind::Resumption {
        config.resumption = Resumption::disabled();
    }
    Ok(config)
}

/// A server config for `params`: the chain's server identity; requires and
/// verifies a client certificate for mTLS; for resumption issues exactly one
/// stateless ticket per handshake (no session-id cache), otherwise none.
pub fn server_config(provider: Provider, params: &Params) -> Result<ServerConfig, ConfigureError> {
    let files = certs::load(params.cert)?;
    let crypto = provider_for(provider, params)?;
    #[cfg(rustls_0_22)]
    let crypto = observe::counted(crypto, observe::Role::Server)?;
    let builder = ServerConfig::builder_with_provider(crypto.clone())
        .with_protocol_versions(versions(params))
        .map_err(|e| anyhow!("{e}"))?;
    let builder = if params.kind == HandshakeKind::MutualAuth {
        let verifier = WebPkiClientVerifier::builder_with_provider(roots(&files)?, crypto)
            .build()
            .map_err(|e| anyhow!("{e}"))?;
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let (chain, key) = chain_and_key(&files, true)?;
    let mut config =
        builder.with_single_cert(chain, key).map_err(|e| anyhow!("{}: {e}", files.identity_files(true)))?;
    config.session_storage = Arc::new(NoServerSessionStorage {});
    if params.kind == HandshakeKind::Resumption {
        config.ticketer = provider.ticketer()?;
        config.send_tls13_tickets = 1;
    } else {
        config.send_tls13_tickets = 0;
    }
    Ok(config)
}

/// The server name every client sends and checks the certificate against
/// ([`certs::SERVER_NAME`]), as rustls takes it.
pub fn server_name() -> Result<rustls::pki_types::ServerName<'static>> {
    Ok(rustls::pki_types::ServerName::try_from(certs::SERVER_NAME)?)
}

/// What a connection negotiated, from its common state (a
/// `ClientConnection` or `ServerConnection` dereferences to it, as does a
/// tokio-rustls stream's connection), with `group` (IANA code) and
/// `resumed` as read by [`group_and_resumed`] (or, in rustls 0.22, as
/// observed: [`crate::libs::rustls::observe`]); `server` says which side
/// it is (only a server knows whether the client authenticated). Errors: a
/// version outside TLS 1.2 and 1.3, no suite, an unknown suite or group.
pub fn negotiated_with(
    state: &rustls::CommonState,
    server: bool,
    group: Option<u16>,
    resumed: bool,
) -> Result<crate::harness::Negotiated> {
    use rustls::ProtocolVersion;

    use crate::params::{CipherSuite, KxGroup};
    let protocol = match state.protocol_version() {
        Some(ProtocolVersion::TLSv1_2) => Protocol::Tls12,
        Some(ProtocolVersion::TLSv1_3) => Protocol::Tls13,
        other => anyhow::bail!("rustls negotiated protocol {other:?}"),
    };
    let suite = state.negotiated_cipher_suite().context("no cipher suite negotiated")?;
    let code = suite_code(suite.suite());
    let suite = CipherSuite::from_iana_code(code).with_context(|| format!("unknown suite {code:#06x}"))?;
    let group = match group {
        Some(code) => Some(KxGroup::from_iana_code(code).with_context(|| format!("unknown group {code}"))?),
        None => None,
    };
    let client_authenticated = server.then(|| state.peer_certificates().is_some());
    Ok(crate::harness::Negotiated { protocol, suite, group, resumed, client_authenticated })
}

/// The key exchange group's IANA code and whether the session was resumed
/// (`negotiated_key_exchange_group`, `handshake_kind`; rustls 0.23+).
#[cfg(not(rustls_0_22))]
pub fn group_and_resumed(state: &rustls::CommonState) -> (Option<u16>, bool) {
    let group = state.negotiated_key_exchange_group().map(|g| group_code(g.name()));
    (group, state.handshake_kind() == Some(rustls::HandshakeKind::Resumed))
}

/// What a connection negotiated ([`negotiated_with`] and
/// [`group_and_resumed`]; rustls 0.23+).
#[cfg(not(rustls_0_22))]
pub fn negotiated(state: &rustls::CommonState, server: bool) -> Result<crate::harness::Negotiated> {
    let (group, resumed) = group_and_resumed(state);
    negotiated_with(state, server, group, resumed)
}

/// rustls' in-memory session cache, counting the sessions stored in it so
/// that a client can tell it received a ticket ([`CountingStore::stored`]).
/// Room for one server's tickets: a client config with its own store
/// resumes with the ticket of its previous handshake.
#[derive(Debug)]
pub struct CountingStore {
    inner: ClientSessionMemoryCache,
    stored: AtomicU64,
}

impl Default for CountingStore {
    fn default() -> Self {
        // rustls 0.22's cache evicts the only server it has room for as soon
        // as it inserts it when sized for one (`LimitedCache`), so it is
        // given room for two servers there (sizes count tickets, 8 per server).
        let size = if cfg!(rustls_0_22) { 16 } else { 1 };
        CountingStore { inner: ClientSessionMemoryCache::new(size), stored: AtomicU64::new(0) }
    }
}

impl ClientSessionStore for CountingStore {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group)
    }
    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }
    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        self.inner.set_tls12_session(server_name, value)
    }
    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(server_name)
    }
    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.inner.remove_tls12_session(server_name)
    }
    fn insert_tls13_ticket(&self, server_name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        self.inner.insert_tls13_ticket(server_name, value)
    }
    fn take_tls13_ticket(&self, server_name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(server_name)
    }
}

/// Gives `config` a session store of its own, which it resumes from, and
/// returns it (to count the tickets it receives).
pub fn own_store(config: &mut ClientConfig) -> Arc<CountingStore> {
    let store = Arc::new(CountingStore::default());
    config.resumption = Resumption::store(store.clone());
    store
}

impl CountingStore {
    /// Sessions stored so far (TLS 1.3 tickets and TLS 1.2 sessions).
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::Relaxed)
    }
}
