//! rustls 0.20 and 0.21 configuration (built by historical-perf; cfg
//! `rustls_0_21` from build.rs, and `rustls_0_20` for 0.20's differences):
//! the same settings as [`crate::libs::rustls::config`] through their API, which
//! has no crypto providers (*ring* only) and its own certificate types. `ClientConfig` and `ServerConfig` carry exactly one
//! cipher suite, the parameter set's groups and one protocol version.
//!
//! Source: rustls 0.21 docs, `ConfigBuilder::with_cipher_suites`,
//! `with_kx_groups`, `with_protocol_versions`, `client::Resumption`.

use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
#[cfg(not(rustls_0_20))]
use rustls::client::Resumption;
use rustls::{
    ALL_CIPHER_SUITES, ALL_KX_GROUPS, Certificate, ClientConfig, PrivateKey, RootCertStore, ServerConfig,
    SupportedCipherSuite, SupportedKxGroup, SupportedProtocolVersion,
    server::{AllowAnyAuthenticatedClient, NoServerSessionStorage},
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

use crate::{
    certs::{self, CertFiles},
    harness::ConfigureError,
    params::{HandshakeKind, Params, Protocol},
};

/// rustls 0.21's only crypto: *ring*.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// *ring* (rustls 0.21 has no provider choice).
    Ring,
}

impl Provider {
    /// The one provider.
    pub const ALL: [Provider; 1] = [Provider::Ring];

    /// `ring`, as in the newer releases' ids.
    pub fn name(self) -> &'static str {
        "ring"
    }

    /// Never FIPS.
    pub fn fips(self) -> bool {
        false
    }
}

/// The cipher suite and the groups of `params` in rustls 0.21's lists.
///
/// Errors: [`ConfigureError::Unsupported`] if rustls 0.21 lacks either.
fn suite_and_groups(
    params: &Params,
) -> Result<(SupportedCipherSuite, Vec<&'static SupportedKxGroup>), ConfigureError> {
    let suite = ALL_CIPHER_SUITES
        .iter()
        .find(|s| s.suite().get_u16() == params.suite.iana_code())
        .copied()
        .ok_or_else(|| ConfigureError::Unsupported(format!("rustls 0.21 has no {}", params.suite)))?;
    let mut groups = Vec::new();
    for g in params.offered_groups() {
        match ALL_KX_GROUPS.iter().find(|k| k.name.get_u16() == g.iana_code()) {
            Some(k) => groups.push(*k),
            None if g == params.group => {
                return Err(ConfigureError::Unsupported(format!("rustls 0.21 has no {g}")));
            }
            None => {}
        }
    }
    Ok((suite, groups))
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
fn chain_and_key(files: &CertFiles, server: bool) -> Result<(Vec<Certificate>, PrivateKey)> {
    let (chain, key) = files.identity(server);
    let parsed = (|| -> Result<_> {
        let chain = CertificateDer::pem_slice_iter(chain)
            .map(|c| c.map(|c| Certificate(c.to_vec())))
            .collect::<Result<Vec<_>, _>>()
            .context("parsing a PEM certificate chain")?;
        let key = PrivateKeyDer::from_pem_slice(key).context("parsing a PEM private key")?;
        Ok((chain, PrivateKey(key.secret_der().to_vec())))
    })();
    parsed.with_context(|| format!("loading {}", files.identity_files(server)))
}

fn roots(files: &CertFiles) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&files.ca_cert) {
        let cert = cert.with_context(|| format!("parsing {}", files.ca_file().display()))?;
        roots.add(&Certificate(cert.to_vec())).context("adding the root CA")?;
    }
    Ok(roots)
}

/// A client config for `params`: trusts only the chain's root; presents the
/// client chain for mTLS; session resumption off (the stack sets a store
/// for resumption).
pub fn client_config(_provider: Provider, params: &Params) -> Result<ClientConfig, ConfigureError> {
    let files = certs::load(params.cert)?;
    let (suite, groups) = suite_and_groups(params)?;
    let builder = ClientConfig::builder()
        .with_cipher_suites(&[suite])
        .with_kx_groups(&groups)
        .with_protocol_versions(versions(params))
        .map_err(|e| anyhow!("{e}"))?
        .with_root_certificates(roots(&files)?);
    let mut config = if params.kind == HandshakeKind::MutualAuth {
        let (chain, key) = chain_and_key(&files, false)?;
        #[cfg(not(rustls_0_20))]
        let config = builder.with_client_auth_cert(chain, key);
        #[cfg(rustls_0_20)]
        let config = builder.with_single_cert(chain, key);
        config.map_err(|e| anyhow!("{}: {e}", files.identity_files(false)))?
    } else {
        builder.with_no_client_auth()
    };
    #[cfg(not(rustls_0_20))]
    {
        config.resumption = Resumption::disabled();
    }
    #[cfg(rustls_0_20)]
    {
        config.session_storage = Arc::new(rustls::client::NoClientSessionStorage {});
    }
    Ok(config)
}

/// A server config for `params`: the chain's server identity; requires and
/// verifies a client certificate for mTLS; for resumption issues exactly one
/// stateless ticket per handshake (no session-id cache), otherwise none.
pub fn server_config(_provider: Provider, params: &Params) -> Result<ServerConfig, ConfigureError> {
    let files = certs::load(params.cert)?;
    let (suite, groups) = suite_and_groups(params)?;
    let builder = ServerConfig::builder()
        .with_cipher_suites(&[suite])
        .with_kx_groups(&groups)
        .with_protocol_versions(versions(params))
        .map_err(|e| anyhow!("{e}"))?;
    let builder = if params.kind == HandshakeKind::MutualAuth {
        #[cfg(not(rustls_0_20))]
        let verifier = AllowAnyAuthenticatedClient::new(roots(&files)?).boxed();
        #[cfg(rustls_0_20)]
        let verifier = AllowAnyAuthenticatedClient::new(roots(&files)?);
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let (chain, key) = chain_and_key(&files, true)?;
    let mut config =
        builder.with_single_cert(chain, key).map_err(|e| anyhow!("{}: {e}", files.identity_files(true)))?;
    config.session_storage = Arc::new(NoServerSessionStorage {});
    // rustls 0.20 sends one TLS 1.3 ticket per handshake when it has a
    // ticketer (it has none by default); 0.21 says how many.
    if params.kind == HandshakeKind::Resumption {
        config.ticketer = rustls::Ticketer::new().map_err(|e| anyhow!("creating a ticketer: {e}"))?;
    }
    #[cfg(not(rustls_0_20))]
    {
        config.send_tls13_tickets = usize::from(params.kind == HandshakeKind::Resumption);
    }
    Ok(config)
}
