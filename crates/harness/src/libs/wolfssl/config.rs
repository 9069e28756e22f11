//! wolfSSL's configuration from parameters: a context (`WOLFSSL_CTX`) per
//! side whose method fixes the version (`wolfTLSv1_3_client_method` and
//! the like), the one cipher suite (`wolfSSL_CTX_set_cipher_list`), the
//! offered groups in order (`wolfSSL_CTX_set_groups`), the credentials,
//! tickets only for resumption, no session cache; and the read-back of
//! what a session negotiated. What the in-memory stack
//! ([`crate::libs::wolfssl::stack`]) and any other runner of wolfSSL share.
//! Source: the wolfSSL manual, chapter 17 ("API Reference") and `ssl.h`.

use std::{
    ffi::{CStr, CString, c_int, c_long, c_uchar, c_ulong, c_void},
    sync::OnceLock,
};

use anyhow::{Result, anyhow, bail, ensure};
use wolfssl_sys as sys;

use crate::{
    certs::{self, CertFiles},
    extensions::{Extensions, Names},
    harness::{ConfigureError, Negotiated},
    params::{CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
};

/// `wolfSSL_Init`, once per process. Errors: it failed (its code).
pub fn init() -> Result<()> {
    static INIT: OnceLock<c_int> = OnceLock::new();
    // SAFETY: wolfSSL_Init sets up the library's globals; called once.
    let ret = *INIT.get_or_init(|| unsafe { sys::wolfSSL_Init() });
    ensure!(ret == sys::WOLFSSL_SUCCESS as c_int, "wolfSSL_Init: {}", error_text(ret));
    Ok(())
}

/// `wolfssl-<version>`, the version read from the library
/// (`wolfSSL_lib_version`), e.g. `wolfssl-5.9.4`.
pub fn library_name() -> String {
    // SAFETY: the call returns the library's static version string.
    let version = unsafe { sys::wolfSSL_lib_version() };
    if version.is_null() {
        return "wolfssl-unknown".to_string();
    }
    // SAFETY: non-NULL, NUL-terminated and static.
    format!("wolfssl-{}", unsafe { CStr::from_ptr(version) }.to_string_lossy())
}

/// wolfSSL's text for error code `code` (`wolfSSL_ERR_reason_error_string`)
/// and the code itself.
pub fn error_text(code: c_int) -> String {
    // SAFETY: the call returns a static string for any code (negative codes
    // are passed as wolfSSL's own examples do, sign-extended).
    let text = unsafe { sys::wolfSSL_ERR_reason_error_string(code as c_long as c_ulong) };
    if text.is_null() {
        return format!("error {code}");
    }
    // SAFETY: non-NULL, NUL-terminated and static.
    format!("{} ({code})", unsafe { CStr::from_ptr(text) }.to_string_lossy())
}

/// `Ok` when a call returned `WOLFSSL_SUCCESS`; else its code's text
/// after `what`.
pub fn check(ret: c_int, what: &str) -> Result<()> {
    ensure!(ret == sys::WOLFSSL_SUCCESS as c_int, "wolfSSL {what}: {}", error_text(ret));
    Ok(())
}

/// wolfSSL's name for `suite` in a cipher list: its own `TLS13-` names for
/// TLS 1.3, OpenSSL's for TLS 1.2 (wolfSSL's `cipher_names` table).
pub fn cipher_name(suite: CipherSuite) -> &'static str {
    match suite {
        CipherSuite::TLS_AES_128_GCM_SHA256 => "TLS13-AES128-GCM-SHA256",
        CipherSuite::TLS_AES_256_GCM_SHA384 => "TLS13-AES256-GCM-SHA384",
        CipherSuite::TLS_CHACHA20_POLY1305_SHA256 => "TLS13-CHACHA20-POLY1305-SHA256",
        tls12 => tls12.openssl_name(),
    }
}

/// wolfSSL's code for `group` (its `WOLFSSL_ECC_*` and ML-KEM names, the
/// IANA TLS Supported Groups registry's numbers).
fn group_id(group: KxGroup) -> c_int {
    (match group {
        KxGroup::Secp256r1 => sys::WOLFSSL_ECC_SECP256R1,
        KxGroup::Secp384r1 => sys::WOLFSSL_ECC_SECP384R1,
        KxGroup::X25519 => sys::WOLFSSL_ECC_X25519,
        KxGroup::X25519Mlkem768 => sys::WOLFSSL_X25519MLKEM768,
    }) as c_int
}

/// The method fixing `protocol` on one side. Errors:
/// [`ConfigureError::Unsupported`] for DTLS 1.2 (see the module's docs).
fn method(protocol: Protocol, server: bool) -> Result<*mut sys::WOLFSSL_METHOD, ConfigureError> {
    // SAFETY: each returns a new method object, which wolfSSL_CTX_new takes.
    let method = unsafe {
        match (protocol, server) {
            (Protocol::Tls12, false) => sys::wolfTLSv1_2_client_method(),
            (Protocol::Tls12, true) => sys::wolfTLSv1_2_server_method(),
            (Protocol::Tls13, false) => sys::wolfTLSv1_3_client_method(),
            (Protocol::Tls13, true) => sys::wolfTLSv1_3_server_method(),
            (Protocol::Dtls13, false) => sys::wolfDTLSv1_3_client_method(),
            (Protocol::Dtls13, true) => sys::wolfDTLSv1_3_server_method(),
            (Protocol::Dtls12, _) => {
                return Err(ConfigureError::Unsupported(format!(
                    "{}: its DTLS 1.2 server always sends a HelloVerifyRequest (RFC 6347 section 4.2.1), \
                     a round trip the other libraries' DTLS 1.2 rows do not make",
                    library_name()
                )));
            }
        }
    };
    if method.is_null() {
        return Err(anyhow!("{}: no method for {protocol:?}", library_name()).into());
    }
    Ok(method)
}

/// One side's context (`WOLFSSL_CTX`), shared by that side's sessions.
pub struct Context(*mut sys::WOLFSSL_CTX);

impl Context {
    /// The pointer, for `wolfSSL_new`.
    pub fn as_ptr(&self) -> *mut sys::WOLFSSL_CTX {
        self.0
    }

    /// A context for `params` on one side (`server`): the version's method,
    /// the suite, the offered groups, the session cache off, tickets off
    /// unless `params` asks for resumption; trusting `files`' root when
    /// `trust`, with `identity`'s chain and key if given. Errors: wolfSSL
    /// refused a setting or a file (named).
    fn new(
        params: &Params,
        server: bool,
        files: &CertFiles,
        trust: bool,
        identity: Option<(&CertFiles, bool)>,
    ) -> Result<Context, ConfigureError> {
        let method = method(params.protocol(), server)?;
        // SAFETY: a new method, which the context takes (and frees with it).
        let ctx = unsafe { sys::wolfSSL_CTX_new(method) };
        if ctx.is_null() {
            return Err(anyhow!("wolfSSL_CTX_new failed").into());
        }
        let ctx = Context(ctx);
        let suite = CString::new(cipher_name(params.suite)).map_err(anyhow::Error::from)?;
        let mut groups: Vec<c_int> = params.offered_groups().into_iter().map(group_id).collect();
        let pem = sys::WOLFSSL_FILETYPE_PEM as c_int;
        let tls13 = params.protocol().stream_version() == Protocol::Tls13;
        let resumption = params.kind == HandshakeKind::Resumption;
        // SAFETY (every call below): a live context; wolfSSL copies the
        // strings, the groups and the certificates and keys.
        unsafe {
            check(sys::wolfSSL_CTX_set_cipher_list(ctx.0, suite.as_ptr()), "wolfSSL_CTX_set_cipher_list")?;
            let ret = sys::wolfSSL_CTX_set_groups(ctx.0, groups.as_mut_ptr(), groups.len() as c_int);
            check(ret, &format!("wolfSSL_CTX_set_groups({:?})", params.offered_groups()))?;
            // A TLS 1.2 server takes the first group the client offers whose
            // key is at least its ephemeral key size (tls.c,
            // TLSX_ValidateSupportedCurves): that size is the group's, so the
            // client's first group is chosen, as the other libraries do.
            if server && !tls13 {
                let size = if params.group == KxGroup::Secp384r1 { 48 } else { 32 };
                check(sys::wolfSSL_CTX_SetTmpEC_DHE_Sz(ctx.0, size), "wolfSSL_CTX_SetTmpEC_DHE_Sz")?;
            }
            sys::wolfSSL_CTX_set_session_cache_mode(ctx.0, sys::WOLFSSL_SESS_CACHE_OFF as c_long);
            // Tickets: a TLS 1.3 server sends one unless told not to; a TLS
            // 1.2 client asks for one (RFC 5077) only for resumption.
            if server && tls13 && !resumption {
                // 0 is success here.
                let ret = sys::wolfSSL_CTX_no_ticket_TLSv13(ctx.0);
                if ret != 0 {
                    return Err(anyhow!("wolfSSL wolfSSL_CTX_no_ticket_TLSv13: {}", error_text(ret)).into());
                }
            } else if !server && !tls13 && resumption {
                check(sys::wolfSSL_CTX_UseSessionTicket(ctx.0), "wolfSSL_CTX_UseSessionTicket")?;
            }
            if trust {
                let ca = &files.ca_cert;
                let ret = sys::wolfSSL_CTX_load_verify_buffer(ctx.0, ca.as_ptr(), ca.len() as c_long, pem);
                check(ret, &format!("reading {}", files.ca_file().display()))?;
            }
            if let Some((files, server)) = identity {
                let (chain, key) = files.identity(server);
                let what = format!("reading {}", files.identity_files(server));
                let ret = sys::wolfSSL_CTX_use_certificate_chain_buffer(
                    ctx.0,
                    chain.as_ptr(),
                    chain.len() as c_long,
                );
                check(ret, &what)?;
                let ret =
                    sys::wolfSSL_CTX_use_PrivateKey_buffer(ctx.0, key.as_ptr(), key.len() as c_long, pem);
                check(ret, &what)?;
                // wolfSSL takes a key of another certificate without a word.
                check(
                    sys::wolfSSL_CTX_check_private_key(ctx.0),
                    &format!("{what}: the key and certificate"),
                )?;
            }
            let mode = match (server, params.kind == HandshakeKind::MutualAuth) {
                (false, _) => sys::WOLFSSL_VERIFY_PEER,
                (true, true) => sys::WOLFSSL_VERIFY_PEER | sys::WOLFSSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                (true, false) => sys::WOLFSSL_VERIFY_NONE,
            };
            sys::wolfSSL_CTX_set_verify(ctx.0, mode as c_int, None);
        }
        Ok(ctx)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: made by wolfSSL_CTX_new, freed once, after its sessions
        // (each holds the configuration that owns it).
        unsafe { sys::wolfSSL_CTX_free(self.0) };
    }
}

/// Everything one parameter set's sessions share: each side's context and
/// the names a client checks and sends.
pub struct WolfConfig {
    /// The parameters.
    pub params: Params,
    /// The client's context: the root, and its identity for mTLS.
    pub client: Context,
    /// The server's context: its identity, and the root for mTLS.
    pub server: Context,
    /// ALPN, the server name, another client identity
    /// ([`crate::libs::wolfssl::extensions`]); none in memory.
    pub extensions: Extensions,
    /// The names its clients check and send and its server serves.
    pub names: Names,
}

// SAFETY: the contexts are only read once set up; wolfSSL lets sessions in
// several threads share one (its manual, "Multi-threading": a WOLFSSL_CTX
// may be shared once loaded, each WOLFSSL used by one thread at a time).
unsafe impl Send for WolfConfig {}
// SAFETY: as for `Send`: nothing here is written after `WolfConfig::new`.
unsafe impl Sync for WolfConfig {}

impl WolfConfig {
    /// The configuration for `params`. Errors:
    /// [`ConfigureError::Unsupported`] for DTLS 1.2 ([`method`]); failed
    /// when wolfSSL refuses a setting or a file.
    pub fn new(params: &Params) -> Result<WolfConfig, ConfigureError> {
        WolfConfig::with_extensions(params, &Extensions::NONE)
    }

    /// [`WolfConfig::new`] with `extensions` set on its sessions: ALPN, the
    /// server name, and a client presenting
    /// [`Extensions::client_identity`]'s client chain (trusting the
    /// parameters' root still). Errors: as [`WolfConfig::new`].
    pub fn with_extensions(params: &Params, extensions: &Extensions) -> Result<WolfConfig, ConfigureError> {
        init()?;
        let files = certs::load(params.cert)?;
        let mtls = params.kind == HandshakeKind::MutualAuth;
        let client = match extensions.client_identity {
            Some(chain) => Context::new(params, false, &files, true, Some((&*certs::load(chain)?, false)))?,
            None => Context::new(params, false, &files, true, mtls.then_some((&*files, false)))?,
        };
        let config = WolfConfig {
            params: *params,
            client,
            server: Context::new(params, true, &files, mtls, Some((&files, true)))?,
            extensions: *extensions,
            names: Names::new(extensions)?,
        };
        set_server_context(&config);
        Ok(config)
    }
}

/// What `ssl` negotiated, read back from wolfSSL: the version
/// (`wolfSSL_version`), the suite by its IANA name
/// (`wolfSSL_get_current_cipher_suite`,
/// `wolfSSL_get_cipher_name_iana_from_suite`), the group
/// (`wolfSSL_get_negotiated_group`, named by `wolfSSL_group_to_name`;
/// none in a TLS 1.2 resumption),
/// resumption (`wolfSSL_session_reused`) and, on a server, whether the
/// client sent a certificate (`wolfSSL_get_peer_certificate`; the server
/// verifies it in the handshake). A client reports `None` there (the stack
/// adds what it saw). Errors: a
/// version, suite or group not benchmarked here.
pub(crate) fn negotiated(ssl: *mut sys::WOLFSSL, server: bool) -> Result<Negotiated> {
    // SAFETY (every call below): a live session; the calls only read, and
    // the strings returned are static.
    let protocol = match unsafe { sys::wolfSSL_version(ssl) } as u32 {
        sys::TLS1_2_VERSION => Protocol::Tls12,
        sys::TLS1_3_VERSION => Protocol::Tls13,
        sys::DTLS1_2_VERSION => Protocol::Dtls12,
        sys::DTLS1_3_VERSION => Protocol::Dtls13,
        other => bail!("wolfSSL negotiated protocol {other:#x}"),
    };
    let suite = unsafe { sys::wolfSSL_get_current_cipher_suite(ssl) };
    ensure!(suite >= 0, "wolfSSL reports no cipher suite: {}", error_text(suite));
    let name = unsafe { sys::wolfSSL_get_cipher_name_iana_from_suite((suite >> 8) as u8, suite as u8) };
    ensure!(!name.is_null(), "wolfSSL has no name for suite {suite:#06x}");
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    let suite =
        CipherSuite::from_iana_name(&name).ok_or_else(|| anyhow!("wolfSSL negotiated suite {name}"))?;
    let group = match unsafe { sys::wolfSSL_get_negotiated_group(ssl) } {
        0 => None,
        id => {
            let name = unsafe { sys::wolfSSL_group_to_name(ssl, id) };
            ensure!(!name.is_null(), "wolfSSL negotiated group {id}, which it cannot name");
            let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            Some(
                KxGroup::from_library_name(&name)
                    .ok_or_else(|| anyhow!("wolfSSL negotiated group {name}"))?,
            )
        }
    };
    let resumed = unsafe { sys::wolfSSL_session_reused(ssl) } != 0;
    let client_authenticated = server.then(|| {
        let peer = unsafe { sys::wolfSSL_get_peer_certificate(ssl) };
        // SAFETY: a copy the caller owns (or NULL, which X509_free accepts).
        unsafe { sys::wolfSSL_X509_free(peer) };
        !peer.is_null()
    });
    Ok(Negotiated { protocol, suite, group, resumed, client_authenticated })
}

/// OpenSSL's codes for a TLS extension hook's answer, which wolfSSL's
/// compatibility layer takes (`SSL_TLSEXT_ERR_*`).
pub(crate) const EXT_OK: c_int = 0;
const EXT_ALERT_FATAL: c_int = 2;
pub(crate) const EXT_NOACK: c_int = 3;
/// unrecognized_name (RFC 6066 section 3).
const UNRECOGNIZED_NAME: c_int = 112;

/// Sets a server context's name check when `config` serves one name. The
/// hook reads `config`'s name, which must outlive the context (it does:
/// the configuration owns both).
fn set_server_context(config: &WolfConfig) {
    if let Some(served) = &config.names.served {
        // SAFETY: a live context; the argument is the name's heap buffer,
        // which the configuration keeps as long as the context.
        unsafe {
            sys::wolfSSL_CTX_set_servername_callback(config.server.as_ptr(), Some(check_name));
            sys::wolfSSL_CTX_set_servername_arg(config.server.as_ptr(), served.as_ptr().cast_mut().cast());
        }
    }
}

/// The server's name hook: refuses a host name other than the served one
/// ([`crate::extensions::name_refused`]).
unsafe extern "C" fn check_name(ssl: *mut sys::WOLFSSL, alert: *mut c_int, arg: *mut c_void) -> c_int {
    // SAFETY: `set_server_context` passed the served name's C string.
    let served = unsafe { CStr::from_ptr(arg.cast()) }.to_string_lossy();
    // SAFETY: a live session; the name (or NULL) is the session's.
    let sent = unsafe { sys::wolfSSL_get_servername(ssl, sys::WOLFSSL_SNI_HOST_NAME as c_uchar) };
    let sent = (!sent.is_null()).then(|| unsafe { CStr::from_ptr(sent) }.to_string_lossy().into_owned());
    if crate::extensions::name_refused(sent.as_deref(), &served) {
        // SAFETY: wolfSSL's out-pointer for the alert.
        unsafe { *alert = UNRECOGNIZED_NAME };
        EXT_ALERT_FATAL
    } else {
        EXT_OK
    }
}
