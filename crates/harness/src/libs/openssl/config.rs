//! Configuration for the libraries with OpenSSL's API, for a parameter set:
//! client and server `SslContext`s with exactly one protocol version, one
//! cipher suite and one group. One module serves three builds:
//!
//! - OpenSSL through the `openssl` crate (vendored 3.6.x, or the system's),
//! - AWS-LC through the same crate (openssl-sys feature `aws-lc`, switched on
//!   by `aws-lc-config/openssl.toml`),
//! - BoringSSL through the `boring` crate (feature `boring`; it cannot link
//!   beside OpenSSL, so never both in one build).
//!
//! The crates share their API; the few calls that differ go through the
//! C functions of [`ffi`], which all three libraries export. Independent of
//! the transport, so a socket runner (tokio-openssl, tokio-boring) can use
//! the same contexts.
//!
//! Sources: OpenSSL manuals SSL_CTX_set_ciphersuites(3) (TLS 1.3 suites),
//! SSL_CTX_set_cipher_list(3) (TLS 1.2), SSL_CTX_set1_groups_list(3),
//! SSL_CTX_set_num_tickets(3), SSL_get_session(3); BoringSSL's ssl.h
//! (`SSL_CTX_set1_tls13_ciphers`, `SSL_CTX_set_num_tickets`).

#[cfg(all(feature = "openssl", feature = "boring"))]
compile_error!(
    "features `openssl` and `boring` cannot be built together (boring-sys's libssl shadows OpenSSL's \
     at link time): build BoringSSL with `--no-default-features --features boring`"
);

use anyhow::{Context, Result, anyhow};

#[cfg(not(feature = "boring"))]
pub use {::openssl as ossl, foreign_types::ForeignTypeRef, openssl_sys as ffi};
#[cfg(feature = "boring")]
pub use {boring as ossl, boring_sys as ffi, foreign_types_05::ForeignTypeRef};

use ossl::{
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

/// The library's version text (`OpenSSL_version(OPENSSL_VERSION)`), e.g.
/// `OpenSSL 3.6.3 30 Sep 2025` or, on AWS-LC, `OpenSSL 1.1.1 (compatible;
/// AWS-LC 1.73.0)`.
#[cfg(not(feature = "boring"))]
fn version_text() -> &'static str {
    ossl::version::version()
}

/// The benchmark-id name of the library in this build, with its version and
/// backend: `openssl-3.6.3` (OpenSSL, version read at run time).
#[cfg(not(any(feature = "boring", openssl_awslc)))]
pub fn library_name() -> String {
    let text = version_text();
    format!("openssl-{}", text.split_whitespace().nth(1).unwrap_or(text))
}

/// The benchmark-id name of the library in this build, with its version and
/// backend: `openssl-aws-lc-1.73.0` (AWS-LC under the `openssl` crate,
/// version read at run time).
#[cfg(all(not(feature = "boring"), openssl_awslc))]
pub fn library_name() -> String {
    let text = version_text();
    let version = text.split("AWS-LC").nth(1).and_then(|v| v.split([' ', ')']).find(|w| !w.is_empty()));
    format!("openssl-aws-lc-{}", version.unwrap_or("unknown"))
}

/// The benchmark-id name of the library in this build, with its version and
/// backend: `boring-5.4.0+boringssl`, the `boring` crate's version from
/// Cargo.lock (via build.rs): it pins a BoringSSL commit, and BoringSSL has
/// no releases.
#[cfg(feature = "boring")]
pub fn library_name() -> String {
    format!("boring-{}+boringssl", env!("TLS_BENCH_BORING_VERSION"))
}

/// BoringSSL and AWS-LC hand a client its TLS 1.3 session tickets only
/// through the new-session callback (`SSL_CTX_sess_set_new_cb`, called with
/// `SSL_SESS_CACHE_CLIENT` on); `SSL_get_session` keeps the handshake's
/// session, which has no ticket. The callback leaves each session it gets
/// in the connection's extra-data slot at this index (set to `None` when the
/// connection is created). OpenSSL replaces `SSL_get_session` instead.
///
/// Errors: the library cannot allocate an extra-data index.
#[cfg(any(feature = "boring", openssl_awslc))]
pub fn received_session_index() -> Result<ossl::ex_data::Index<ossl::ssl::Ssl, Option<ossl::ssl::SslSession>>>
{
    use std::sync::OnceLock;
    static INDEX: OnceLock<ossl::ex_data::Index<ossl::ssl::Ssl, Option<ossl::ssl::SslSession>>> =
        OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = ossl::ssl::Ssl::new_ex_index()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// The C call result `ok == 1` as a configuration result.
fn check(ok: libc::c_int, what: impl FnOnce() -> String) -> Result<(), ConfigureError> {
    if ok == 1 { Ok(()) } else { Err(ConfigureError::Unsupported(what())) }
}

/// Sets the TLS 1.3 suites. OpenSSL and AWS-LC take a name list
/// (`SSL_CTX_set_ciphersuites`; the `openssl` crate hides its wrapper on
/// AWS-LC), BoringSSL a list of IANA code points
/// (`SSL_CTX_set1_tls13_ciphers`).
fn set_tls13_suite(builder: &mut SslContextBuilder, params: &Params) -> Result<(), ConfigureError> {
    let ctx = builder.as_ptr();
    #[cfg(not(feature = "boring"))]
    let ok = {
        let name = std::ffi::CString::new(params.suite.openssl_name()).map_err(anyhow::Error::from)?;
        // SAFETY: valid context and NUL-terminated string; OpenSSL copies it.
        unsafe { ffi::SSL_CTX_set_ciphersuites(ctx, name.as_ptr()) }
    };
    #[cfg(feature = "boring")]
    let ok = {
        let code = params.suite.iana_code();
        // SAFETY: valid context, one code point, no flags; BoringSSL copies.
        unsafe { ffi::SSL_CTX_set1_tls13_ciphers(ctx, &code, std::ptr::null(), 1) }
    };
    check(ok, || format!("{} rejects suite {}", library_name(), params.suite))
}

/// Sets the supported groups, benchmarked group first.
fn set_groups(builder: &mut SslContextBuilder, groups: &str) -> Result<(), ConfigureError> {
    #[cfg(not(feature = "boring"))]
    let set = builder.set_groups_list(groups);
    #[cfg(feature = "boring")]
    let set = builder.set_curves_list(groups);
    set.map_err(|e| ConfigureError::Unsupported(format!("{} has no group {groups}: {e}", library_name())))
}

/// Sets how many TLS 1.3 session tickets a server sends after a full
/// handshake (`SSL_CTX_set_num_tickets`, in OpenSSL 1.1.1+, AWS-LC and
/// BoringSSL; the `openssl` crate hides its wrapper on AWS-LC).
fn set_num_tickets(builder: &mut SslContextBuilder, n: usize) -> Result<(), ConfigureError> {
    // SAFETY: valid context; the call only sets a counter.
    let ok = unsafe { ffi::SSL_CTX_set_num_tickets(builder.as_ptr(), n as _) };
    check(ok, || format!("{} rejects SSL_CTX_set_num_tickets({n})", library_name()))
}

/// The library's version constant for `p`. Errors: DTLS 1.3, which no
/// OpenSSL release up to 4.0 has (it was merged for 4.1), nor AWS-LC (its
/// ssl.h has no `DTLS1_3_VERSION`, checked in 1.73 and 5.12); BoringSSL
/// has it.
fn version_of(p: Protocol) -> Result<SslVersion, ConfigureError> {
    Ok(match p {
        Protocol::Tls12 => SslVersion::TLS1_2,
        Protocol::Tls13 => SslVersion::TLS1_3,
        Protocol::Dtls12 => SslVersion::DTLS1_2,
        #[cfg(feature = "boring")]
        Protocol::Dtls13 => SslVersion::DTLS1_3,
        #[cfg(not(any(feature = "boring", openssl_awslc)))]
        Protocol::Dtls13 => {
            return Err(ConfigureError::Unsupported(format!(
                "{}: no DTLS 1.3 (not in any OpenSSL release up to 4.0; the openssl crate has no DTLS1_3)",
                library_name()
            )));
        }
        #[cfg(all(not(feature = "boring"), openssl_awslc))]
        Protocol::Dtls13 => {
            return Err(ConfigureError::Unsupported(format!(
                "{}: no DTLS 1.3 (AWS-LC has no DTLS1_3_VERSION)",
                library_name()
            )));
        }
    })
}

/// The method of `params`: `TLS_method` or, for DTLS, `DTLS_method`
/// (versions are then pinned by [`common`]).
fn method(params: &Params) -> SslMethod {
    if params.datagram { SslMethod::dtls() } else { SslMethod::tls() }
}

/// Settings both sides share: one version, one suite, one group. For DTLS
/// also `SSL_OP_NO_QUERY_MTU`: the MTU is set on each connection from its
/// transport (`SSL_set_mtu`), never asked of the BIO. No cookie exchange
/// (HelloVerifyRequest): OpenSSL's server sends one only with
/// `SSL_OP_COOKIE_EXCHANGE`, which is not set.
fn common(builder: &mut SslContextBuilder, params: &Params) -> Result<(), ConfigureError> {
    let v = version_of(params.protocol())?;
    builder.set_min_proto_version(Some(v)).map_err(anyhow::Error::from)?;
    builder.set_max_proto_version(Some(v)).map_err(anyhow::Error::from)?;
    if params.datagram {
        builder.set_options(SslOptions::NO_QUERY_MTU);
    }
    match params.protocol().stream_version() {
        Protocol::Tls13 => set_tls13_suite(builder, params)?,
        _ => {
            let suite = params.suite.openssl_name();
            builder.set_cipher_list(suite).map_err(|e| {
                ConfigureError::Unsupported(format!("{} rejects suite {suite}: {e}", library_name()))
            })?;
        }
    }
    let groups: Vec<&str> = params.offered_groups().into_iter().map(KxGroup::openssl_name).collect();
    set_groups(builder, &groups.join(":"))?;
    // Groups and suites in the server's order (the benchmarked one first).
    builder.set_options(SslOptions::CIPHER_SERVER_PREFERENCE);
    Ok(())
}

fn trust(builder: &mut SslContextBuilder, files: &CertFiles) -> Result<()> {
    let mut store = X509StoreBuilder::new()?;
    let ca =
        X509::from_pem(&files.ca_cert).with_context(|| format!("parsing {}", files.ca_file().display()))?;
    store.add_cert(ca)?;
    builder.set_cert_store(store.build());
    Ok(())
}

/// Makes `builder`'s connections present the chain's identity (`server`:
/// the server's, else the client's). Errors name both files: one does not
/// parse, or the key does not match.
pub fn identity(builder: &mut SslContextBuilder, files: &CertFiles, server: bool) -> Result<()> {
    load_identity(builder, files.identity(server))
        .with_context(|| format!("loading {}", files.identity_files(server)))
}

fn load_identity(builder: &mut SslContextBuilder, (chain, key): (&[u8], &[u8])) -> Result<()> {
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
/// `SSL_get1_session`; on BoringSSL and AWS-LC see
/// [`received_session_index`]); session tickets only for resumption. Without the
/// client cache OpenSSL does not mark a resumed TLS 1.3 session single-use
/// in a way that its successor inherits.
pub fn client_context(params: &Params) -> Result<SslContext, ConfigureError> {
    Ok(client_builder(params)?.build())
}

/// The builder of [`client_context`], for a runner that adds settings of
/// its own (the socket runner's attacker presents another CA's identity).
/// Errors: as [`client_context`].
pub fn client_builder(params: &Params) -> Result<SslContextBuilder, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = SslContext::builder(method(params)).map_err(anyhow::Error::from)?;
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
    #[cfg(any(feature = "boring", openssl_awslc))]
    if params.kind == HandshakeKind::Resumption {
        let index = received_session_index()?;
        b.set_session_cache_mode(SslSessionCacheMode::CLIENT);
        b.set_new_session_callback(move |ssl, session| {
            if let Some(slot) = ssl.ex_data_mut(index) {
                *slot = Some(session);
            }
        });
    }
    Ok(b)
}

/// A server context for `params`: the chain's server identity; requires and
/// verifies a client certificate for mTLS; no session cache; for resumption
/// exactly one stateless ticket per TLS 1.3 handshake (RFC 5077 tickets in
/// TLS 1.2), otherwise no tickets.
pub fn server_context(params: &Params) -> Result<SslContext, ConfigureError> {
    Ok(server_builder(params)?.build())
}

/// The builder of [`server_context`], for a runner that adds settings of
/// its own (the socket runner's ALPN, `config::alpn`). Errors: as
/// [`server_context`].
pub fn server_builder(params: &Params) -> Result<SslContextBuilder, ConfigureError> {
    let files = certs::load(params.cert)?;
    let mut b = SslContext::builder(method(params)).map_err(anyhow::Error::from)?;
    common(&mut b, params)?;
    identity(&mut b, &files, true)?;
    if params.kind == HandshakeKind::MutualAuth {
        trust(&mut b, &files)?;
        b.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
    }
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    if params.kind == HandshakeKind::Resumption {
        set_num_tickets(&mut b, 1)?;
    } else {
        set_num_tickets(&mut b, 0)?;
        b.set_options(SslOptions::NO_TICKET);
    }
    Ok(b)
}
