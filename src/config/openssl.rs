//! OpenSSL configuration for a parameter set: client and server
//! `SslContext`s with exactly one protocol version, one cipher suite and one
//! group. Independent of the transport, so a socket runner (tokio-openssl)
//! can use the same contexts.
//!
//! Sources: OpenSSL manuals SSL_CTX_set_ciphersuites(3) (TLS 1.3 suites),
//! SSL_CTX_set_cipher_list(3) (TLS 1.2), SSL_CTX_set1_groups_list(3),
//! SSL_CTX_set_num_tickets(3), SSL_get_session(3).

use anyhow::{Context, Result, anyhow};
use openssl::{
    pkey::PKey,
    ssl::{
        SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode, SslVersion,
    },
    x509::{X509, store::X509StoreBuilder},
};

use crate::{
    certs::{self, CertFiles},
    harness::ConfigureError,
    params::{HandshakeKind, KxGroup, Params, Protocol},
};

/// OpenSSL's version as the library reports it at run time
/// (`OpenSSL_version(OPENSSL_VERSION)`), e.g. `3.6.3`.
pub fn version() -> String {
    let full = openssl::version::version();
    full.split_whitespace().nth(1).unwrap_or(full).to_string()
}

/// The group's name for `SSL_CTX_set1_groups_list`, accepted by OpenSSL
/// 3.0 and later (and by AWS-LC and BoringSSL).
pub fn group_list_name(group: KxGroup) -> &'static str {
    match group {
        KxGroup::Secp256r1 => "P-256",
        KxGroup::Secp384r1 => "P-384",
        KxGroup::X25519 => "X25519",
        KxGroup::X25519Mlkem768 => "X25519MLKEM768",
    }
}

fn version_of(p: Protocol) -> SslVersion {
    match p {
        Protocol::Tls12 => SslVersion::TLS1_2,
        Protocol::Tls13 => SslVersion::TLS1_3,
    }
}

/// Settings both sides share: one version, one suite, one group.
fn common(builder: &mut SslContextBuilder, params: &Params) -> Result<(), ConfigureError> {
    let v = version_of(params.protocol());
    builder.set_min_proto_version(Some(v)).map_err(anyhow::Error::from)?;
    builder.set_max_proto_version(Some(v)).map_err(anyhow::Error::from)?;
    let suite = params.suite.openssl_name();
    let set = match params.protocol() {
        Protocol::Tls13 => builder.set_ciphersuites(suite),
        Protocol::Tls12 => builder.set_cipher_list(suite),
    };
    set.map_err(|e| ConfigureError::Unsupported(format!("OpenSSL rejects suite {suite}: {e}")))?;
    let groups: Vec<&str> = params.offered_groups().into_iter().map(group_list_name).collect();
    let groups = groups.join(":");
    builder
        .set_groups_list(&groups)
        .map_err(|e| ConfigureError::Unsupported(format!("OpenSSL has no group {groups}: {e}")))?;
    // Groups and suites in the server's order (the benchmarked one first).
    builder.set_options(SslOptions::CIPHER_SERVER_PREFERENCE);
    Ok(())
}

fn trust(builder: &mut SslContextBuilder, files: &CertFiles) -> Result<()> {
    let mut store = X509StoreBuilder::new()?;
    store.add_cert(X509::from_pem(&files.ca_cert).context("parsing the root CA")?)?;
    builder.set_cert_store(store.build());
    Ok(())
}

fn identity(builder: &mut SslContextBuilder, files: &CertFiles, server: bool) -> Result<()> {
    let (chain, key) = files.identity(server);
    let mut certs = X509::stack_from_pem(chain).context("parsing a certificate chain")?.into_iter();
    let leaf = certs.next().ok_or_else(|| anyhow!("empty certificate chain"))?;
    builder.set_certificate(&leaf)?;
    for cert in certs {
        builder.add_extra_chain_cert(cert)?;
    }
    let key = PKey::private_key_from_pem(key).context("parsing a private key")?;
    builder.set_private_key(&key)?;
    builder.check_private_key()?;
    Ok(())
}

/// A client context for `params`: verifies the server against the chain's
/// root only (host name set per connection); presents the client chain for
/// mTLS; no session cache (the caller keeps the session to resume, see
/// `SSL_get1_session`); session tickets only for resumption. Without the
/// client cache OpenSSL does not mark a resumed TLS 1.3 session single-use
/// in a way that its successor inherits.
pub fn client_context(params: &Params) -> Result<SslContext, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = SslContext::builder(SslMethod::tls_client()).map_err(anyhow::Error::from)?;
    common(&mut b, params)?;
    trust(&mut b, &files)?;
    b.set_verify(SslVerifyMode::PEER);
    if params.kind == HandshakeKind::MutualAuth {
        identity(&mut b, &files, false)?;
    }
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    if params.kind != HandshakeKind::Resumption {
        b.set_options(SslOptions::NO_TICKET);
    }
    Ok(b.build())
}

/// A server context for `params`: the chain's server identity; requires and
/// verifies a client certificate for mTLS; no session cache; for resumption
/// exactly one stateless ticket per TLS 1.3 handshake (RFC 5077 tickets in
/// TLS 1.2), otherwise no tickets.
pub fn server_context(params: &Params) -> Result<SslContext, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = SslContext::builder(SslMethod::tls_server()).map_err(anyhow::Error::from)?;
    common(&mut b, params)?;
    identity(&mut b, &files, true)?;
    if params.kind == HandshakeKind::MutualAuth {
        trust(&mut b, &files)?;
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    if params.kind == HandshakeKind::Resumption {
        b.set_num_tickets(1).map_err(anyhow::Error::from)?;
    } else {
        b.set_num_tickets(0).map_err(anyhow::Error::from)?;
        b.set_options(SslOptions::NO_TICKET);
    }
    Ok(b.build())
}
