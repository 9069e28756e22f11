//! Each new connection of the libraries with OpenSSL's API (OpenSSL,
//! AWS-LC, BoringSSL; see [`crate::libs::openssl::config`]) and the read-back of
//! what it negotiated, on the library's own `Ssl` objects: what the
//! in-memory stack and a socket runner (tokio-openssl, tokio-boring, whose
//! `SslStream::new` takes an `Ssl`) share.
//!
//! Sources: OpenSSL manuals SSL_set1_host(3), SSL_set_session(3),
//! SSL_set_connect_state(3), SSL_get0_group_name(3), SSL_CIPHER_get_name(3);
//! BoringSSL's ssl.h (`SSL_get_group_id`).

use anyhow::{Context, Result, bail, ensure};

use crate::{
    certs::SERVER_NAME,
    harness::Negotiated,
    libs::openssl::config::{
        ForeignTypeRef, ffi, library_name,
        ossl::ssl::{Ssl, SslContext, SslRef, SslSession, SslVersion},
    },
    params::{CipherSuite, KxGroup, Protocol},
};

/// A client connection of `context`: the server name sent (SNI) and
/// checked against the certificate ([`SERVER_NAME`]), resuming `session`
/// if given, in the connect state. On BoringSSL and AWS-LC its slot for the
/// session of a ticket received is set empty
/// ([`crate::libs::openssl::config::received_session_index`]). Errors: the
/// library refused a setting.
pub fn client_ssl(context: &SslContext, session: Option<&SslSession>) -> Result<Ssl> {
    let mut ssl = Ssl::new(context)?;
    ssl.set_hostname(SERVER_NAME)?;
    ssl.param_mut().set_host(SERVER_NAME)?;
    if let Some(s) = session {
        // SAFETY: the session comes from a context with the same settings.
        unsafe { ssl.set_session(s)? };
    }
    #[cfg(any(feature = "boring", openssl_awslc))]
    ssl.set_ex_data(crate::libs::openssl::config::received_session_index()?, None);
    // SAFETY: valid SSL pointer (the `boring` crate has no safe wrapper).
    unsafe { ffi::SSL_set_connect_state(ssl.as_ptr()) };
    Ok(ssl)
}

/// A server connection of `context`, in the accept state. Errors: the
/// library refused to make one.
pub fn server_ssl(context: &SslContext) -> Result<Ssl> {
    let ssl = Ssl::new(context)?;
    // SAFETY: valid SSL pointer (the `boring` crate has no safe wrapper).
    unsafe { ffi::SSL_set_accept_state(ssl.as_ptr()) };
    Ok(ssl)
}

/// Tells a DTLS connection its largest datagram, `mtu` bytes
/// (`SSL_set_mtu`: the datagram payload, IP and UDP headers excluded; the
/// contexts set `SSL_OP_NO_QUERY_MTU`). Errors: the library refuses the
/// size.
pub fn set_mtu(ssl: &SslRef, mtu: usize) -> Result<()> {
    // SAFETY: valid SSL pointer; the call only sets a size. OpenSSL returns
    // the MTU set (an `SSL_ctrl`), BoringSSL 1; both 0 on failure.
    let set = unsafe { ffi::SSL_set_mtu(ssl.as_ptr(), mtu as _) };
    ensure!(set > 0, "{} refuses an MTU of {mtu} bytes", library_name());
    Ok(())
}

/// What `ssl` negotiated: version, suite (by IANA code point), group,
/// resumption and, on a server, whether the client presented a
/// certificate. Errors: a version outside the benchmark's, no cipher, an
/// unknown suite or group.
pub fn negotiated(ssl: &SslRef) -> Result<Negotiated> {
    let protocol = match ssl.version2() {
        Some(SslVersion::TLS1_2) => Protocol::Tls12,
        Some(SslVersion::TLS1_3) => Protocol::Tls13,
        Some(SslVersion::DTLS1_2) => Protocol::Dtls12,
        #[cfg(feature = "boring")]
        Some(SslVersion::DTLS1_3) => Protocol::Dtls13,
        other => bail!("OpenSSL negotiated {other:?}"),
    };
    let cipher = ssl.current_cipher().context("no cipher negotiated")?;
    // SAFETY: valid cipher pointer; the call only reads.
    let code = unsafe { ffi::SSL_CIPHER_get_protocol_id(cipher.as_ptr()) };
    let suite =
        CipherSuite::from_iana_code(code).with_context(|| format!("unknown suite code point {code:#06x}"))?;
    let resumed = ssl.session_reused();
    let client_authenticated = (!is_client(ssl)).then(|| ssl.peer_certificate().is_some());
    Ok(Negotiated { protocol, suite, group: group(ssl)?, resumed, client_authenticated })
}

/// The client session's pointer now, to hand [`received_session`] later:
/// OpenSSL's way of telling a ticket has arrived is a new session object.
pub fn session_mark(ssl: &SslRef) -> Option<*mut ffi::SSL_SESSION> {
    ssl.session().map(|s| s.as_ptr())
}

/// The session to resume the next connection with, from client `ssl` once
/// it has read past the server's NewSessionTicket (a read after the
/// handshake: the in-memory stack reads zero bytes, a socket client its
/// first response), `before` being its [`session_mark`] from before that
/// read. In TLS 1.3 this is the session of a ticket received since
/// ([`received_ticket`]); in (D)TLS 1.2 a server may resume without issuing
/// a new ticket (RFC 5077 section 3.3), and the client keeps the session
/// it resumed. Errors: no ticket received in TLS 1.3, or a session the
/// library says is not resumable (`SSL_SESSION_is_resumable`).
pub fn received_session(ssl: &SslRef, before: Option<*mut ffi::SSL_SESSION>) -> Result<SslSession> {
    let session = match received_ticket(ssl, before)? {
        Some(session) => session,
        None => {
            ensure!(
                matches!(ssl.version2(), Some(SslVersion::TLS1_2 | SslVersion::DTLS1_2)),
                "{} client received no session ticket",
                library_name()
            );
            ssl.session().context("client has no session")?.to_owned()
        }
    };
    // SAFETY: valid session pointer; the call only reads.
    let resumable = unsafe { SSL_SESSION_is_resumable(session.as_ptr()) } == 1;
    ensure!(resumable, "{} client session is not resumable", library_name());
    Ok(session)
}

/// The session of a ticket received since the session was `before`. In
/// TLS 1.3 OpenSSL replaces the connection's session with a new one
/// carrying the ticket (statem_clnt.c, tls_process_new_session_ticket), so
/// a new session object is a new ticket.
#[cfg(not(any(feature = "boring", openssl_awslc)))]
fn received_ticket(ssl: &SslRef, before: Option<*mut ffi::SSL_SESSION>) -> Result<Option<SslSession>> {
    Ok(ssl.session().filter(|s| Some(s.as_ptr()) != before).map(|s| s.to_owned()))
}

/// The session of a ticket received since the connection was created (see
/// [`crate::libs::openssl::config::received_session_index`]).
#[cfg(any(feature = "boring", openssl_awslc))]
fn received_ticket(ssl: &SslRef, _before: Option<*mut ffi::SSL_SESSION>) -> Result<Option<SslSession>> {
    let index = crate::libs::openssl::config::received_session_index()?;
    Ok(ssl.ex_data(index).and_then(|slot| slot.clone()))
}

#[cfg(any(feature = "boring", openssl_awslc))]
use ffi::SSL_SESSION_is_resumable;
#[cfg(not(any(feature = "boring", openssl_awslc)))]
unsafe extern "C" {
    /// OpenSSL 1.1.1+ (AWS-LC and BoringSSL too, bound by their -sys
    /// crates); not bound by openssl-sys for OpenSSL.
    fn SSL_SESSION_is_resumable(s: *const ffi::SSL_SESSION) -> libc::c_int;
}

/// The message-callback setter (OpenSSL's SSL_CTX_set_msg_callback(3),
/// BoringSSL's ssl.h), with which the socket runner's clients watch their
/// own handshake messages: bound by boring-sys and aws-lc-sys, not by
/// openssl-sys (a function of libssl since OpenSSL 0.9.7).
#[cfg(any(feature = "boring", openssl_awslc))]
pub use ffi::SSL_set_msg_callback;
#[cfg(not(any(feature = "boring", openssl_awslc)))]
unsafe extern "C" {
    pub fn SSL_set_msg_callback(
        ssl: *mut ffi::SSL,
        cb: Option<
            unsafe extern "C" fn(
                libc::c_int,
                libc::c_int,
                libc::c_int,
                *const libc::c_void,
                usize,
                *mut ffi::SSL,
                *mut libc::c_void,
            ),
        >,
    );
}

/// Whether `ssl` is a client (`SSL_is_server`).
pub fn is_client(ssl: &SslRef) -> bool {
    // SAFETY: valid SSL pointer; SSL_is_server only reads.
    unsafe { ffi::SSL_is_server(ssl.as_ptr()) == 0 }
}

/// The negotiated group: AWS-LC and BoringSSL report its IANA code point
/// (`SSL_get_group_id`).
#[cfg(any(feature = "boring", openssl_awslc))]
fn group(ssl: &SslRef) -> Result<Option<KxGroup>> {
    // SAFETY: valid SSL pointer; the call only reads.
    let code = unsafe { ffi::SSL_get_group_id(ssl.as_ptr()) };
    if code == 0 {
        return Ok(None);
    }
    KxGroup::from_iana_code(code).map(Some).with_context(|| format!("unknown group code point {code}"))
}

/// The negotiated group: OpenSSL 3.2+ reports its name
/// (`SSL_get0_group_name`).
#[cfg(all(not(any(feature = "boring", openssl_awslc)), ossl320))]
fn group(ssl: &SslRef) -> Result<Option<KxGroup>> {
    // SAFETY: the SSL pointer is valid; the returned string is static or
    // owned by the SSL object.
    let name = unsafe { ffi::SSL_get0_group_name(ssl.as_ptr()) };
    group_from_name(name)
}

/// The negotiated group: OpenSSL 3.0/3.1 report a NID
/// (`SSL_get_negotiated_group`, an `SSL_ctrl` macro), named by
/// `OBJ_nid2sn` (`X25519`, `prime256v1`).
#[cfg(all(not(any(feature = "boring", openssl_awslc)), ossl300, not(ossl320)))]
fn group(ssl: &SslRef) -> Result<Option<KxGroup>> {
    const SSL_CTRL_GET_NEGOTIATED_GROUP: libc::c_int = 134;
    // SAFETY: valid SSL pointer; this control only reads.
    let nid = unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, std::ptr::null_mut()) };
    match libc::c_int::try_from(nid) {
        // SAFETY: OBJ_nid2sn returns a static string or NULL.
        Ok(nid) if nid > 0 => group_from_name(unsafe { ffi::OBJ_nid2sn(nid) }),
        _ => Ok(None),
    }
}

/// The negotiated group, OpenSSL 1.1.1 (the historical benchmarks): the
/// peer's key share (`SSL_get_peer_tmp_key`, an `SSL_ctrl` macro; a client
/// keeps the server's, a TLS 1.3 server the client's), named by
/// `OBJ_nid2sn`: by its key type for X25519, by its curve for an EC key
/// (`EVP_PKEY_get1_EC_KEY`, `EC_GROUP_get_curve_name`: `prime256v1`,
/// `secp384r1`), the key type alone naming no curve. A (D)TLS 1.2 server
/// keeps no key share: once it has the secret it frees both (statem_srvr.c,
/// `tls_process_cke_ecdhe`), so for an ECDHE suite not resumed it reads the
/// group its ServerKeyExchange took, the first shared group
/// (`SSL_get_shared_group(ssl, 0)`, an `SSL_ctrl` macro: `tls1_shared_group`,
/// as the server called it outside Suite B).
#[cfg(all(not(any(feature = "boring", openssl_awslc)), not(ossl300)))]
fn group(ssl: &SslRef) -> Result<Option<KxGroup>> {
    const SSL_CTRL_GET_PEER_TMP_KEY: libc::c_int = 109;
    const SSL_CTRL_GET_SHARED_GROUP: libc::c_int = 93;
    let mut key: *mut ffi::EVP_PKEY = std::ptr::null_mut();
    // SAFETY: valid SSL pointer; the control stores a new reference to
    // the peer's key share in `key`, freed below.
    let found = unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_PEER_TMP_KEY, 0, (&raw mut key).cast()) };
    if found != 1 || key.is_null() {
        let tls12 = matches!(ssl.version2(), Some(SslVersion::TLS1_2 | SslVersion::DTLS1_2));
        let ecdhe = ssl.current_cipher().is_some_and(|c| c.name().starts_with("ECDHE-"));
        if is_client(ssl) || !tls12 || !ecdhe || ssl.session_reused() {
            return Ok(None);
        }
        // SAFETY: valid SSL pointer; this control only reads.
        let nid = unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_SHARED_GROUP, 0, std::ptr::null_mut()) };
        return match libc::c_int::try_from(nid) {
            // SAFETY: OBJ_nid2sn returns a static string or NULL.
            Ok(nid) if nid > 0 => group_from_name(unsafe { ffi::OBJ_nid2sn(nid) }),
            _ => Ok(None),
        };
    }
    // SAFETY: `key` is a valid EVP_PKEY we own a reference to.
    let id = unsafe { ffi::EVP_PKEY_id(key) };
    let nid = match id {
        ffi::EVP_PKEY_X25519 => Ok(id),
        ffi::EVP_PKEY_EC => {
            // SAFETY: `key` is an EC key; the call takes a new reference to
            // its EC_KEY (NULL on failure), freed here; the group pointer
            // is owned by that EC_KEY and only read while it lives.
            unsafe {
                let ec = ffi::EVP_PKEY_get1_EC_KEY(key);
                let group = if ec.is_null() { std::ptr::null() } else { ffi::EC_KEY_get0_group(ec) };
                let curve = if group.is_null() { 0 } else { ffi::EC_GROUP_get_curve_name(group) };
                ffi::EC_KEY_free(ec);
                if curve > 0 {
                    Ok(curve)
                } else {
                    Err(anyhow::anyhow!("OpenSSL 1.1.1: EC key share on no named curve"))
                }
            }
        }
        _ => Err(anyhow::anyhow!("OpenSSL 1.1.1: key share type {id} is not read back here")),
    };
    // SAFETY: releases the reference the control took.
    unsafe { ffi::EVP_PKEY_free(key) };
    // SAFETY: OBJ_nid2sn returns a static string or NULL.
    group_from_name(unsafe { ffi::OBJ_nid2sn(nid?) })
}

/// The group named by the C string `name` (NULL: none), normalised by
/// [`KxGroup::from_library_name`].
#[cfg(not(any(feature = "boring", openssl_awslc)))]
fn group_from_name(name: *const libc::c_char) -> Result<Option<KxGroup>> {
    if name.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, NUL-terminated, static or owned by the SSL object.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
    KxGroup::from_library_name(&name).map(Some).with_context(|| format!("unknown group {name}"))
}
