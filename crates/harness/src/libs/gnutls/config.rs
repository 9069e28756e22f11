//! GnuTLS's configuration from parameters: the priority string that
//! forces the version, suite and groups (GnuTLS manual, "Priority
//! strings"), the certificate credentials of each side, the session
//! ticket key of a resumption server, and the read-back of what a session
//! negotiated. What the in-memory stack ([`crate::libs::gnutls::stack`])
//! and any other runner of GnuTLS share.

use std::{
    ffi::{CStr, CString, c_int, c_uint},
    ptr,
};

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    certs::{self, CertFiles},
    extensions::{Extensions, Names},
    harness::{ConfigureError, Negotiated},
    libs::gnutls::sys,
    params::{Aead, CipherSuite, HandshakeKind, KeyType, KxGroup, Params, Protocol},
};

/// `gnutls-<version>`, the version read from the library
/// (`gnutls_check_version(NULL)`), e.g. `gnutls-3.7.9`.
pub fn library_name() -> String {
    // SAFETY: with NULL the call returns the library's static version string.
    let version = unsafe { sys::gnutls_check_version(ptr::null()) };
    if version.is_null() {
        return "gnutls-unknown".to_string();
    }
    // SAFETY: non-NULL, NUL-terminated and static.
    format!("gnutls-{}", unsafe { CStr::from_ptr(version) }.to_string_lossy())
}

/// `ret` when it is not negative; else the library's message for it
/// (`gnutls_strerror`), after `what`.
pub fn check(ret: c_int, what: &str) -> Result<c_int> {
    ensure!(ret >= 0, "GnuTLS {what}: {}", error_text(ret));
    Ok(ret)
}

/// GnuTLS's text for error code `code` and the code itself.
pub fn error_text(code: c_int) -> String {
    // SAFETY: gnutls_strerror returns a static string for any code.
    let text = unsafe { CStr::from_ptr(sys::gnutls_strerror(code)) }.to_string_lossy();
    format!("{text} ({code})")
}

/// The priority string for `params`: `NONE`, then only the version, the
/// suite's cipher (its MAC is the AEAD's), for TLS 1.2 the suite's key
/// exchange, every signature algorithm (the certificate decides) and the
/// offered groups in order ([`Params::offered_groups`]). Errors:
/// [`ConfigureError::Unsupported`] for what GnuTLS 3.7 does not have
/// (ML-KEM groups, DTLS 1.3).
pub fn priority(params: &Params) -> Result<String, ConfigureError> {
    let version = match params.protocol() {
        Protocol::Tls12 => "VERS-TLS1.2",
        Protocol::Tls13 => "VERS-TLS1.3",
        Protocol::Dtls12 => "VERS-DTLS1.2",
        Protocol::Dtls13 => {
            return Err(ConfigureError::Unsupported(format!("{}: no DTLS 1.3", library_name())));
        }
    };
    let cipher = match params.suite.aead() {
        Aead::Aes128Gcm => "AES-128-GCM",
        Aead::Aes256Gcm => "AES-256-GCM",
        Aead::Chacha20Poly1305 => "CHACHA20-POLY1305",
    };
    let mut parts =
        vec!["NONE".to_string(), format!("+{version}"), format!("+{cipher}"), "+AEAD".to_string()];
    match params.suite.auth() {
        Some(KeyType::Ecdsa) => parts.push("+ECDHE-ECDSA".to_string()),
        Some(KeyType::Rsa) => parts.push("+ECDHE-RSA".to_string()),
        None => {}
    }
    parts.push("+SIGN-ALL".to_string());
    for group in params.offered_groups() {
        parts.push(format!("+GROUP-{}", group_keyword(group)?));
    }
    Ok(parts.join(":"))
}

/// GnuTLS's priority keyword for `group` (after `GROUP-`). Errors:
/// [`ConfigureError::Unsupported`] for X25519MLKEM768 (GnuTLS has ML-KEM
/// from 3.8.8, through leancrypto or liboqs).
fn group_keyword(group: KxGroup) -> Result<&'static str, ConfigureError> {
    match group {
        KxGroup::Secp256r1 => Ok("SECP256R1"),
        KxGroup::Secp384r1 => Ok("SECP384R1"),
        KxGroup::X25519 => Ok("X25519"),
        KxGroup::X25519Mlkem768 => Err(ConfigureError::Unsupported(format!(
            "{}: no {group} (ML-KEM is in GnuTLS 3.8.8+)",
            library_name()
        ))),
    }
}

/// A parsed priority string (`gnutls_priority_t`), shared by every
/// session of one side.
pub struct Priority(sys::gnutls_priority_t);

impl Priority {
    /// Parses `text`. Errors: GnuTLS refuses it (its message and the
    /// position of the word it stopped at).
    pub fn new(text: &str) -> Result<Priority> {
        let c = CString::new(text)?;
        let mut prio: sys::gnutls_priority_t = ptr::null_mut();
        let mut err_pos: *const std::ffi::c_char = ptr::null();
        // SAFETY: valid out-pointers and a NUL-terminated string.
        let ret = unsafe { sys::gnutls_priority_init(&mut prio, c.as_ptr(), &mut err_pos) };
        if ret < 0 {
            let at = if err_pos.is_null() {
                String::new()
            } else {
                // SAFETY: err_pos points into `c`, NUL-terminated.
                format!(" at \"{}\"", unsafe { CStr::from_ptr(err_pos) }.to_string_lossy())
            };
            bail!("GnuTLS refuses the priority string {text}{at}: {}", error_text(ret));
        }
        Ok(Priority(prio))
    }

    /// The pointer, for `gnutls_priority_set`.
    pub fn as_ptr(&self) -> sys::gnutls_priority_t {
        self.0
    }
}

impl Drop for Priority {
    fn drop(&mut self) {
        // SAFETY: made by gnutls_priority_init, freed once.
        unsafe { sys::gnutls_priority_deinit(self.0) };
    }
}

/// Certificate credentials (`gnutls_certificate_credentials_t`): the
/// trusted root and, for a side that authenticates, its chain and key.
pub struct Credentials(sys::gnutls_certificate_credentials_t);

impl Credentials {
    /// Credentials trusting the chain's root ([`certs::CA_CERT`]), with
    /// the identity of the server, or of the client when `identity` (mTLS).
    /// Errors: GnuTLS refuses a file (named).
    pub fn new(files: &CertFiles, server: bool, identity: bool) -> Result<Credentials> {
        Credentials::with_identity(files, identity.then_some((files, server)))
    }

    /// Credentials trusting `files`' root, with the identity of `identity`
    /// (its files, and whether the server's or the client's), if given.
    /// Errors: GnuTLS refuses a file (named).
    pub fn with_identity(files: &CertFiles, identity: Option<(&CertFiles, bool)>) -> Result<Credentials> {
        let mut cred: sys::gnutls_certificate_credentials_t = ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::gnutls_certificate_allocate_credentials(&mut cred) }, "allocating credentials")?;
        let cred = Credentials(cred);
        let ca = datum(&files.ca_cert);
        // SAFETY: valid credentials; GnuTLS copies the datum.
        let trusted =
            unsafe { sys::gnutls_certificate_set_x509_trust_mem(cred.0, &ca, sys::GNUTLS_X509_FMT_PEM) };
        check(trusted, &format!("reading {}", files.ca_file().display()))?;
        ensure!(trusted == 1, "GnuTLS read {trusted} certificates from {}", files.ca_file().display());
        if let Some((files, server)) = identity {
            let (chain, key) = files.identity(server);
            let (chain, key) = (datum(chain), datum(key));
            // SAFETY: valid credentials; GnuTLS copies both; no password.
            let ret = unsafe {
                sys::gnutls_certificate_set_x509_key_mem2(
                    cred.0,
                    &chain,
                    &key,
                    sys::GNUTLS_X509_FMT_PEM,
                    ptr::null(),
                    0,
                )
            };
            check(ret, &format!("reading {}", files.identity_files(server)))?;
        }
        Ok(cred)
    }

    /// The pointer, for `gnutls_credentials_set`.
    pub fn as_ptr(&self) -> sys::gnutls_certificate_credentials_t {
        self.0
    }
}

impl Drop for Credentials {
    fn drop(&mut self) {
        // SAFETY: allocated above, freed once, after every session using it
        // (the configuration owning it outlives its connections' use).
        unsafe { sys::gnutls_certificate_free_credentials(self.0) };
    }
}

/// A server's session ticket encryption key
/// (`gnutls_session_ticket_key_generate`), shared by its sessions so a
/// ticket from one resumes on the next.
pub struct TicketKey(sys::gnutls_datum_t);

impl TicketKey {
    /// A new random key. Errors: the library's.
    pub fn new() -> Result<TicketKey> {
        let mut key = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
        // SAFETY: valid out-datum, allocated by GnuTLS.
        check(unsafe { sys::gnutls_session_ticket_key_generate(&mut key) }, "generating a ticket key")?;
        Ok(TicketKey(key))
    }

    /// The datum, for `gnutls_session_ticket_enable_server`.
    pub fn datum(&self) -> &sys::gnutls_datum_t {
        &self.0
    }
}

impl Drop for TicketKey {
    fn drop(&mut self) {
        free(self.0.data.cast());
    }
}

/// Frees memory GnuTLS allocated for the caller (`gnutls_free`).
pub(crate) fn free(p: *mut std::ffi::c_void) {
    // SAFETY: gnutls_free is set by the library at load; `p` came from
    // GnuTLS's allocator (or is NULL, which it accepts).
    unsafe {
        if let Some(f) = sys::gnutls_free {
            f(p)
        }
    }
}

/// A borrowed datum over `bytes` (GnuTLS copies what it keeps).
pub fn datum(bytes: &[u8]) -> sys::gnutls_datum_t {
    sys::gnutls_datum_t { data: bytes.as_ptr().cast_mut(), size: bytes.len() as c_uint }
}

/// Everything one parameter set's sessions share: each side's priority
/// and credentials, and a resumption server's ticket key.
pub struct GnuTlsConfig {
    /// The parameters.
    pub params: Params,
    /// The priority string both sides use ([`priority`]).
    pub priority: Priority,
    /// The client's credentials: the root, and its identity for mTLS.
    pub client: Credentials,
    /// The server's credentials: its identity, and the root for mTLS.
    pub server: Credentials,
    /// The ticket key of a resumption server; `None` otherwise (no tickets).
    pub ticket_key: Option<TicketKey>,
    /// ALPN, the server name, another client identity
    /// ([`crate::libs::gnutls::extensions`]); none in memory.
    pub extensions: Extensions,
    /// The names its clients check and send and its server serves.
    pub names: Names,
}

// SAFETY: the pointers are GnuTLS's credentials, priority cache and ticket
// key, which are only read once set up and which GnuTLS lets sessions in
// several threads share (GnuTLS manual, "Thread safety").
unsafe impl Send for GnuTlsConfig {}
// SAFETY: as for `Send`: nothing here is written after `GnuTlsConfig::new`.
unsafe impl Sync for GnuTlsConfig {}

impl GnuTlsConfig {
    /// The configuration for `params` (a DTLS version when
    /// [`Params::datagram`]). Errors: [`ConfigureError::Unsupported`] from
    /// [`priority`]; failed when GnuTLS refuses a setting or a file.
    pub fn new(params: &Params) -> Result<GnuTlsConfig, ConfigureError> {
        GnuTlsConfig::with_extensions(params, &Extensions::NONE)
    }

    /// [`GnuTlsConfig::new`] with `extensions` set on its sessions: ALPN,
    /// the server name, and a client presenting
    /// [`Extensions::client_identity`]'s client chain (trusting the
    /// parameters' root still). Errors: as [`GnuTlsConfig::new`].
    pub fn with_extensions(params: &Params, extensions: &Extensions) -> Result<GnuTlsConfig, ConfigureError> {
        let text = priority(params)?;
        let files = certs::load(params.cert)?;
        let mtls = params.kind == HandshakeKind::MutualAuth;
        let client = match extensions.client_identity {
            Some(chain) => Credentials::with_identity(&files, Some((&*certs::load(chain)?, false)))?,
            None => Credentials::with_identity(&files, mtls.then_some((&*files, false)))?,
        };
        Ok(GnuTlsConfig {
            params: *params,
            priority: Priority::new(&text)?,
            client,
            server: Credentials::new(&files, true, true)?,
            ticket_key: (params.kind == HandshakeKind::Resumption).then(TicketKey::new).transpose()?,
            extensions: *extensions,
            names: Names::new(extensions)?,
        })
    }
}

/// What `session` negotiated, read back from GnuTLS: the version
/// (`gnutls_protocol_get_version`), the suite by its IANA name
/// (`gnutls_ciphersuite_get`, 3.7.3+), the group
/// (`gnutls_group_get`; none in a TLS 1.2 resumption), resumption
/// (`gnutls_session_is_resumed`) and whether the client authenticated:
/// on a server, whether the client sent a certificate
/// (`gnutls_certificate_get_peers`; the server verifies it in the
/// handshake, `gnutls_session_set_verify_cert`); on a client, whether the
/// server asked for one (`gnutls_certificate_client_get_request_status`)
/// and it sent its own (`gnutls_certificate_get_ours`). Errors: a
/// version, suite or group not benchmarked here.
pub(crate) fn negotiated(session: sys::gnutls_session_t, server: bool) -> Result<Negotiated> {
    // SAFETY (every call below): a live session; the calls only read, and
    // the strings returned are static or owned by the session.
    let protocol = match unsafe { sys::gnutls_protocol_get_version(session) } {
        sys::GNUTLS_TLS1_2 => Protocol::Tls12,
        sys::GNUTLS_TLS1_3 => Protocol::Tls13,
        sys::GNUTLS_DTLS1_2 => Protocol::Dtls12,
        other => bail!("GnuTLS negotiated protocol {other}"),
    };
    let name = unsafe { sys::gnutls_ciphersuite_get(session) };
    ensure!(!name.is_null(), "GnuTLS reports no cipher suite");
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    let suite =
        CipherSuite::from_iana_name(&name).with_context(|| format!("GnuTLS negotiated suite {name}"))?;
    let group = match unsafe { sys::gnutls_group_get(session) } {
        0 => None,
        g => {
            let name = unsafe { sys::gnutls_group_get_name(g) };
            ensure!(!name.is_null(), "GnuTLS group {g} has no name");
            let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            Some(KxGroup::from_library_name(&name).ok_or_else(|| anyhow!("GnuTLS negotiated group {name}"))?)
        }
    };
    let resumed = unsafe { sys::gnutls_session_is_resumed(session) } != 0;
    let client_authenticated = Some(if server {
        let mut n: c_uint = 0;
        let peers = unsafe { sys::gnutls_certificate_get_peers(session, &mut n) };
        !peers.is_null() && n > 0
    } else {
        let asked = unsafe { sys::gnutls_certificate_client_get_request_status(session) } != 0;
        asked && !unsafe { sys::gnutls_certificate_get_ours(session) }.is_null()
    });
    Ok(Negotiated { protocol, suite, group, resumed, client_authenticated })
}
