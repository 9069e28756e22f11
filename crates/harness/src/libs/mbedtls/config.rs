//! Mbed TLS's configuration from parameters: an `mbedtls_ssl_config` per
//! side with the version fixed (minimum and maximum), the one cipher suite
//! (`mbedtls_ssl_conf_ciphersuites`), the offered groups in order
//! (`mbedtls_ssl_conf_groups`), the credentials, TLS 1.3's ephemeral key
//! exchange modes only, tickets only for resumption (the server's from an
//! `mbedtls_ssl_ticket_context`), no session cache; a CTR_DRBG for the
//! random numbers. What the in-memory stack
//! ([`crate::libs::mbedtls::stack`]) and any other runner of Mbed TLS share.
//! Source: Mbed TLS 3.6's `mbedtls/ssl.h` and `mbedtls/ssl_ticket.h`, and
//! its programs/ssl/ssl_client2.c and ssl_server2.c.

use std::{
    ffi::{CStr, CString, c_char, c_int, c_void},
    ptr, slice,
    sync::OnceLock,
};

use anyhow::{Result, anyhow, ensure};

use crate::{
    certs,
    extensions::{Extensions, Names},
    harness::ConfigureError,
    libs::mbedtls::sys,
    params::{HandshakeKind, KxGroup, Params, Protocol},
};

/// `psa_crypto_init`, once per process: Mbed TLS 3.6's TLS 1.3 makes its
/// key exchange, key schedule and records through PSA Crypto. Errors: it
/// failed (its status).
pub fn init() -> Result<()> {
    static INIT: OnceLock<sys::psa_status_t> = OnceLock::new();
    // SAFETY: psa_crypto_init sets up the library's PSA globals; called once
    // (it is thread-safe in this build, MBEDTLS_THREADING_PTHREAD).
    let status = *INIT.get_or_init(|| unsafe { sys::psa_crypto_init() });
    ensure!(status == 0, "psa_crypto_init: status {status}");
    Ok(())
}

/// `mbedtls-<version>`, the version read from the library
/// (`mbedtls_version_get_string`), e.g. `mbedtls-3.6.6`.
pub fn library_name() -> String {
    // The call writes at most 9 bytes ("x.y.z" and its NUL).
    let mut version = [0 as std::ffi::c_char; 16];
    // SAFETY: a writable buffer longer than the call writes.
    unsafe { sys::mbedtls_version_get_string(version.as_mut_ptr()) };
    // SAFETY: NUL-terminated by the call (and zeroed beyond).
    format!("mbedtls-{}", unsafe { CStr::from_ptr(version.as_ptr()) }.to_string_lossy())
}

/// Mbed TLS's text for error code `code` (`mbedtls_strerror`) and the code,
/// in hexadecimal as its docs give them (e.g. `-0x7780`).
pub fn error_text(code: c_int) -> String {
    let mut text = [0 as std::ffi::c_char; 200];
    // SAFETY: a writable buffer of the length passed; the call NUL-terminates.
    unsafe { sys::mbedtls_strerror(code, text.as_mut_ptr(), text.len()) };
    // SAFETY: NUL-terminated by the call.
    let text = unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy();
    format!("{text} (-{:#x})", code.unsigned_abs())
}

/// `Ok` when a call returned 0; else its code's text after `what`.
pub fn check(ret: c_int, what: &str) -> Result<()> {
    ensure!(ret == 0, "Mbed TLS {what}: {}", error_text(ret));
    Ok(())
}

/// A zeroed C structure on the heap, for its `_init` call: its address
/// stays fixed while Mbed TLS holds pointers to it.
pub(crate) fn boxed<T>() -> Box<T> {
    // SAFETY: used only for bindgen's C structures (integers, pointers and
    // optional function pointers), for which all-zero is a valid value and
    // the state their `_init` calls start from.
    Box::new(unsafe { std::mem::zeroed() })
}

/// The random numbers of one configuration: a CTR_DRBG (AES-256) seeded
/// from Mbed TLS's entropy sources, as its programs do. Locked inside
/// `mbedtls_ctr_drbg_random` in this build (MBEDTLS_THREADING_C).
pub struct Rng {
    entropy: Box<sys::mbedtls_entropy_context>,
    drbg: Box<sys::mbedtls_ctr_drbg_context>,
}

impl Rng {
    /// A seeded generator. Errors: seeding failed.
    pub(crate) fn new() -> Result<Rng> {
        let mut rng = Rng { entropy: boxed(), drbg: boxed() };
        let personal = b"tls-bench";
        // SAFETY: fresh structures, initialized before use; the DRBG keeps a
        // pointer to the entropy context, boxed beside it and freed after.
        unsafe {
            sys::mbedtls_entropy_init(&mut *rng.entropy);
            sys::mbedtls_ctr_drbg_init(&mut *rng.drbg);
            let ret = sys::mbedtls_ctr_drbg_seed(
                &mut *rng.drbg,
                Some(sys::mbedtls_entropy_func),
                (&raw mut *rng.entropy).cast(),
                personal.as_ptr(),
                personal.len(),
            );
            check(ret, "mbedtls_ctr_drbg_seed")?;
        }
        Ok(rng)
    }

    /// The DRBG, as `f_rng`'s argument.
    pub(crate) fn as_arg(&self) -> *mut c_void {
        (&raw const *self.drbg).cast_mut().cast()
    }
}

impl Drop for Rng {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, freed once, the DRBG first.
        unsafe {
            sys::mbedtls_ctr_drbg_free(&mut *self.drbg);
            sys::mbedtls_entropy_free(&mut *self.entropy);
        }
    }
}

/// A certificate chain (`mbedtls_x509_crt`, parsed from PEM).
pub struct Chain(Box<sys::mbedtls_x509_crt>);

impl Chain {
    /// Every certificate of the PEM `pem`; `what` names the file. Errors:
    /// Mbed TLS refused one.
    fn parse(pem: &[u8], what: &str) -> Result<Chain> {
        let mut chain = Chain(boxed());
        let pem = nul_terminated(pem);
        // SAFETY: a fresh structure, initialized first; PEM input is passed
        // with its NUL, as mbedtls_x509_crt_parse requires; it copies it.
        unsafe {
            sys::mbedtls_x509_crt_init(&mut *chain.0);
            check(sys::mbedtls_x509_crt_parse(&mut *chain.0, pem.as_ptr(), pem.len()), what)?;
        }
        Ok(chain)
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        // SAFETY: initialized in `parse`, freed once, after the configs that
        // point at it (the owner drops them first).
        unsafe { sys::mbedtls_x509_crt_free(&mut *self.0) };
    }
}

/// A private key (`mbedtls_pk_context`, parsed from PEM).
pub struct Key(Box<sys::mbedtls_pk_context>);

impl Key {
    /// The key in the PEM `pem` (PKCS#8, SEC 1 or PKCS#1); `what` names the
    /// file. Errors: Mbed TLS refused it.
    fn parse(pem: &[u8], what: &str, rng: &Rng) -> Result<Key> {
        let mut key = Key(boxed());
        let pem = nul_terminated(pem);
        // SAFETY: a fresh structure, initialized first; the PEM with its
        // NUL; no password; the DRBG for RSA blinding while parsing.
        unsafe {
            sys::mbedtls_pk_init(&mut *key.0);
            let ret = sys::mbedtls_pk_parse_key(
                &mut *key.0,
                pem.as_ptr(),
                pem.len(),
                std::ptr::null(),
                0,
                Some(sys::mbedtls_ctr_drbg_random),
                rng.as_arg(),
            );
            check(ret, what)?;
        }
        Ok(key)
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: initialized in `parse`, freed once, after the configs.
        unsafe { sys::mbedtls_pk_free(&mut *self.0) };
    }
}

/// `bytes` and a NUL, as Mbed TLS's PEM parsers take them.
fn nul_terminated(bytes: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(bytes.len() + 1);
    v.extend_from_slice(bytes);
    v.push(0);
    v
}

/// A TLS 1.2 and 1.3 server's ticket keys (`mbedtls_ssl_ticket_context`:
/// AES-256-GCM, rotated every day), locked inside its calls in this build.
pub struct Tickets(Box<sys::mbedtls_ssl_ticket_context>);

impl Tickets {
    fn new(rng: &Rng) -> Result<Tickets> {
        let mut t = Tickets(boxed());
        // SAFETY: a fresh structure, initialized first; the DRBG outlives it
        // (both are the configuration's).
        unsafe {
            sys::mbedtls_ssl_ticket_init(&mut *t.0);
            let ret = sys::mbedtls_ssl_ticket_setup(
                &mut *t.0,
                Some(sys::mbedtls_ctr_drbg_random),
                rng.as_arg(),
                sys::MBEDTLS_CIPHER_AES_256_GCM,
                86_400,
            );
            check(ret, "mbedtls_ssl_ticket_setup")?;
        }
        Ok(t)
    }
}

impl Drop for Tickets {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, freed once, after the configs.
        unsafe { sys::mbedtls_ssl_ticket_free(&mut *self.0) };
    }
}

/// One side's `mbedtls_ssl_config` and the zero-terminated lists it points
/// at (Mbed TLS keeps the pointers, not copies).
pub struct Side {
    conf: Box<sys::mbedtls_ssl_config>,
    _suites: Box<[c_int; 2]>,
    _groups: Box<[u16]>,
}

impl Side {
    /// The configuration, for `mbedtls_ssl_setup`.
    pub fn as_ptr(&self) -> *const sys::mbedtls_ssl_config {
        &raw const *self.conf
    }

    /// The configuration, for the settings made after the side's own.
    fn as_mut_ptr(&mut self) -> *mut sys::mbedtls_ssl_config {
        &raw mut *self.conf
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        // SAFETY: initialized in `MbedConfig::side`, freed once, after the
        // sessions made from it (each holds the configuration that owns it).
        unsafe { sys::mbedtls_ssl_config_free(&mut *self.conf) };
    }
}

/// The version Mbed TLS negotiates for `protocol`, its transport. Errors:
/// [`ConfigureError::Unsupported`] for DTLS 1.3, which Mbed TLS 3.6 does
/// not implement.
fn version(protocol: Protocol) -> Result<(sys::mbedtls_ssl_protocol_version, u32), ConfigureError> {
    Ok(match protocol {
        Protocol::Tls12 => (sys::MBEDTLS_SSL_VERSION_TLS1_2, sys::MBEDTLS_SSL_TRANSPORT_STREAM),
        Protocol::Tls13 => (sys::MBEDTLS_SSL_VERSION_TLS1_3, sys::MBEDTLS_SSL_TRANSPORT_STREAM),
        // DTLS 1.2 carries TLS 1.2's version in Mbed TLS's configuration.
        Protocol::Dtls12 => (sys::MBEDTLS_SSL_VERSION_TLS1_2, sys::MBEDTLS_SSL_TRANSPORT_DATAGRAM),
        Protocol::Dtls13 => {
            return Err(ConfigureError::Unsupported(format!(
                "{}: no DTLS 1.3 (Mbed TLS 3.6 implements DTLS 1.2 only)",
                library_name()
            )));
        }
    })
}

/// Everything one parameter set's sessions share: each side's
/// configuration and what they point at, and the names a client checks
/// and sends. Fields drop in order: the configurations before what they
/// point at.
pub struct MbedConfig {
    /// The parameters.
    pub params: Params,
    /// The client's configuration: the root, and its identity for mTLS (or
    /// [`Extensions::client_identity`]'s).
    pub client: Side,
    /// The server's configuration: its identity, and the root for mTLS.
    pub server: Side,
    /// Whether the client's configuration has a certificate to present.
    pub client_presents: bool,
    /// ALPN, the server name, another client identity
    /// ([`crate::libs::mbedtls::extensions`]); none in memory.
    pub extensions: Extensions,
    /// The name clients check the certificate against
    /// ([`crate::certs::SERVER_NAME`]), the one they send (SNI), and the
    /// one the server serves.
    pub names: Names,
    _protocols: Option<Protocols>,
    _tickets: Option<Tickets>,
    /// The root, the client's chain, the server's.
    chains: Vec<Chain>,
    _keys: Vec<Key>,
    _rng: Rng,
}

// SAFETY: the configurations, chains, keys and ticket keys are only read
// once set up (Mbed TLS's threading docs: an `mbedtls_ssl_config` may be
// shared by contexts in several threads); the DRBG and the ticket context
// lock themselves in this build (MBEDTLS_THREADING_C); each session is
// used by one thread at a time.
unsafe impl Send for MbedConfig {}
// SAFETY: as for `Send`.
unsafe impl Sync for MbedConfig {}

impl MbedConfig {
    /// The configuration for `params`. Errors:
    /// [`ConfigureError::Unsupported`] for DTLS 1.3 and X25519MLKEM768
    /// (Mbed TLS 3.6 has neither); failed when Mbed TLS refuses a setting
    /// or a file.
    pub fn new(params: &Params) -> Result<MbedConfig, ConfigureError> {
        MbedConfig::with_extensions(params, &Extensions::NONE)
    }

    /// [`MbedConfig::new`] with `extensions` set
    /// ([`crate::libs::mbedtls::extensions`]): ALPN on both sides, the
    /// server's one served name, the name clients send, and a client
    /// presenting [`Extensions::client_identity`]'s client chain (trusting
    /// the parameters' root still). Errors: as [`MbedConfig::new`].
    pub fn with_extensions(params: &Params, extensions: &Extensions) -> Result<MbedConfig, ConfigureError> {
        if params.group == KxGroup::X25519Mlkem768 {
            return Err(ConfigureError::Unsupported(format!(
                "{}: no ML-KEM (Mbed TLS 3.6 has no post-quantum key exchange)",
                library_name()
            )));
        }
        init()?;
        let files = certs::load(params.cert)?;
        let other = extensions.client_identity.map(certs::load).transpose()?;
        let rng = Rng::new()?;
        let resumption = params.kind == HandshakeKind::Resumption;
        let tickets = if resumption { Some(Tickets::new(&rng)?) } else { None };
        let mut chains =
            vec![Chain::parse(&files.ca_cert, &format!("reading {}", files.ca_file().display()))?];
        let mut keys = Vec::new();
        for server in [false, true] {
            let files = if server { &files } else { other.as_deref().unwrap_or(&files) };
            let (chain, key) = files.identity(server);
            let what = format!("reading {}", files.identity_files(server));
            let (chain, key) = (Chain::parse(chain, &what)?, Key::parse(key, &what, &rng)?);
            // Mbed TLS takes a key of another certificate without a word
            // (until a handshake fails): the pair is checked here.
            // SAFETY: a parsed chain (its first certificate's public key)
            // and key; the DRBG for the RSA check's blinding.
            let ret = unsafe {
                sys::mbedtls_pk_check_pair(
                    &chain.0.pk,
                    &*key.0,
                    Some(sys::mbedtls_ctr_drbg_random),
                    rng.as_arg(),
                )
            };
            check(ret, &format!("{what}: the key and certificate"))?;
            chains.push(chain);
            keys.push(key);
        }
        let mtls = params.kind == HandshakeKind::MutualAuth;
        let presents = mtls || other.is_some();
        let mut client = MbedConfig::side(params, false, &chains, &keys, &rng, tickets.as_ref(), presents)?;
        let mut server = MbedConfig::side(params, true, &chains, &keys, &rng, tickets.as_ref(), mtls)?;
        let names = Names::new(extensions)?;
        let protocols = Protocols::new(extensions.alpn)?;
        // SAFETY: live configurations, freed before the protocols and the
        // names (the fields' order).
        unsafe {
            if let Some(protocols) = &protocols {
                protocols.set(client.as_mut_ptr())?;
                protocols.set(server.as_mut_ptr())?;
            }
            if let Some(served) = &names.served {
                refuse_other_names(server.as_mut_ptr(), served);
            }
        }
        Ok(MbedConfig {
            params: *params,
            client,
            server,
            client_presents: presents,
            extensions: *extensions,
            names,
            _protocols: protocols,
            _tickets: tickets,
            chains,
            _keys: keys,
            _rng: rng,
        })
    }

    /// The root certificate, which clients (and mTLS servers) trust.
    pub fn root(&self) -> *mut sys::mbedtls_x509_crt {
        (&raw const *self.chains[0].0).cast_mut()
    }

    /// One side's configuration (`chains`: the root, the client's chain,
    /// the server's; `keys`: the client's key, the server's); `certify`:
    /// a server asks for and verifies a client certificate, a client
    /// presents its own.
    fn side(
        params: &Params,
        server: bool,
        chains: &[Chain],
        keys: &[Key],
        rng: &Rng,
        tickets: Option<&Tickets>,
        certify: bool,
    ) -> Result<Side, ConfigureError> {
        let (version, transport) = version(params.protocol())?;
        let mut groups: Vec<u16> = params.offered_groups().iter().map(|g| g.iana_code()).collect();
        groups.push(0);
        let mut side = Side {
            conf: boxed(),
            _suites: Box::new([c_int::from(params.suite.iana_code()), 0]),
            _groups: groups.into_boxed_slice(),
        };
        let endpoint = if server { sys::MBEDTLS_SSL_IS_SERVER } else { sys::MBEDTLS_SSL_IS_CLIENT };
        let tls13 = params.protocol() == Protocol::Tls13;
        let conf: *mut sys::mbedtls_ssl_config = &raw mut *side.conf;
        // SAFETY (every call below): a configuration initialized first; the
        // lists, chains, keys, DRBG and ticket keys it points at are the
        // configuration's, which keeps them until after it is freed.
        unsafe {
            sys::mbedtls_ssl_config_init(conf);
            let ret = sys::mbedtls_ssl_config_defaults(
                conf,
                endpoint as c_int,
                transport as c_int,
                sys::MBEDTLS_SSL_PRESET_DEFAULT as c_int,
            );
            check(ret, "mbedtls_ssl_config_defaults")?;
            // ssl.h's inline mbedtls_ssl_conf_min_tls_version and
            // _max_tls_version set these two fields.
            (*conf).private_min_tls_version = version;
            (*conf).private_max_tls_version = version;
            sys::mbedtls_ssl_conf_rng(conf, Some(sys::mbedtls_ctr_drbg_random), rng.as_arg());
            sys::mbedtls_ssl_conf_ciphersuites(conf, side._suites.as_ptr());
            sys::mbedtls_ssl_conf_groups(conf, side._groups.as_ptr());
            // (EC)DHE in every TLS 1.3 handshake, a resumption's too
            // (psk_dhe_ke), as the other libraries' rows.
            sys::mbedtls_ssl_conf_tls13_key_exchange_modes(
                conf,
                sys::MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ALL as c_int,
            );
            let root = &raw const *chains[0].0;
            let (chain, key) = if server { (&chains[2], &keys[1]) } else { (&chains[1], &keys[0]) };
            if server || certify {
                let ret = sys::mbedtls_ssl_conf_own_cert(
                    conf,
                    (&raw const *chain.0).cast_mut(),
                    (&raw const *key.0).cast_mut(),
                );
                check(ret, "mbedtls_ssl_conf_own_cert")?;
            }
            if !server || certify {
                sys::mbedtls_ssl_conf_ca_chain(conf, root.cast_mut(), std::ptr::null_mut());
            }
            let authmode = if server && !certify {
                sys::MBEDTLS_SSL_VERIFY_NONE
            } else {
                sys::MBEDTLS_SSL_VERIFY_REQUIRED
            };
            sys::mbedtls_ssl_conf_authmode(conf, authmode as c_int);
            let resumption = params.kind == HandshakeKind::Resumption;
            if server {
                if let Some(tickets) = tickets {
                    sys::mbedtls_ssl_conf_session_tickets_cb(
                        conf,
                        Some(sys::mbedtls_ssl_ticket_write),
                        Some(sys::mbedtls_ssl_ticket_parse),
                        (&raw const *tickets.0).cast_mut().cast(),
                    );
                }
                // One ticket after a TLS 1.3 handshake for resumption, none
                // otherwise (without the ticket hooks none is sent anyway).
                sys::mbedtls_ssl_conf_new_session_tickets(conf, u16::from(resumption));
                if transport == sys::MBEDTLS_SSL_TRANSPORT_DATAGRAM {
                    // No HelloVerifyRequest: the other libraries' DTLS 1.2
                    // rows make no cookie exchange.
                    sys::mbedtls_ssl_conf_dtls_cookies(conf, None, None, std::ptr::null_mut());
                }
            } else {
                let tickets = if resumption {
                    sys::MBEDTLS_SSL_SESSION_TICKETS_ENABLED
                } else {
                    sys::MBEDTLS_SSL_SESSION_TICKETS_DISABLED
                };
                sys::mbedtls_ssl_conf_session_tickets(conf, tickets as c_int);
                if tls13 {
                    let signal = if resumption {
                        sys::MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED
                    } else {
                        sys::MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_DISABLED
                    };
                    sys::mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(conf, signal as c_int);
                }
            }
        }
        Ok(side)
    }
}

/// An error for Mbed TLS's own text of `code` after `what`, for callers
/// outside this module.
pub fn error(what: &str, code: c_int) -> anyhow::Error {
    anyhow!("Mbed TLS {what}: {}", error_text(code))
}

/// A configuration's ALPN protocols as Mbed TLS keeps them: C strings and
/// the NULL-terminated list of pointers to them, which a configuration
/// points at (it keeps the pointer, not a copy) and which must outlive it.
pub struct Protocols {
    _names: Vec<CString>,
    list: Box<[*const c_char]>,
}

impl Protocols {
    /// The list for `protocols`; `None` when empty (no ALPN). Errors: a
    /// name holding a NUL byte.
    pub fn new(protocols: &[&[u8]]) -> Result<Option<Protocols>> {
        if protocols.is_empty() {
            return Ok(None);
        }
        let names = protocols.iter().map(|p| CString::new(*p)).collect::<Result<Vec<_>, _>>()?;
        let list = names.iter().map(|n| n.as_ptr()).chain([ptr::null()]).collect();
        Ok(Some(Protocols { _names: names, list }))
    }

    /// Sets the list on `conf`. Errors: Mbed TLS refused it (a name empty
    /// or longer than 255 bytes).
    ///
    /// # Safety
    ///
    /// `conf` is a live configuration, freed before `self`.
    pub unsafe fn set(&self, conf: *mut sys::mbedtls_ssl_config) -> Result<()> {
        // SAFETY: the caller's promise; the list is NULL-terminated and
        // outlives the configuration, which keeps the pointer.
        let ret = unsafe { sys::mbedtls_ssl_conf_alpn_protocols(conf, self.list.as_ptr().cast_mut()) };
        check(ret, "mbedtls_ssl_conf_alpn_protocols")
    }
}

/// Sets a server configuration's name check, refusing a ClientHello that
/// names a host other than `served`.
///
/// # Safety
///
/// `conf` is a live server configuration, freed before `served`.
pub unsafe fn refuse_other_names(conf: *mut sys::mbedtls_ssl_config, served: &CStr) {
    // SAFETY: the caller's promise; the hook reads `served` through the
    // pointer.
    unsafe { sys::mbedtls_ssl_conf_sni(conf, Some(check_name), served.as_ptr().cast_mut().cast()) };
}

/// The server's name hook: 0 (served) unless the name sent is another host
/// ([`crate::extensions::name_refused`]).
unsafe extern "C" fn check_name(
    served: *mut c_void,
    _ssl: *mut sys::mbedtls_ssl_context,
    name: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: `refuse_other_names` passed the served name's C string; Mbed
    // TLS passes the sent name's `len` bytes.
    let (served, sent) =
        unsafe { (CStr::from_ptr(served.cast()).to_string_lossy(), slice::from_raw_parts(name, len)) };
    let sent = String::from_utf8_lossy(sent);
    if crate::extensions::name_refused(Some(&sent), &served) { -1 } else { 0 }
}
