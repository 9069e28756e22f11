//! GnuTLS's ALPN and server name ([`crate::extensions`]): the protocols on
//! each session (`gnutls_alpn_set_protocols`, the server's order first with
//! `GNUTLS_ALPN_SERVER_PRECEDENCE`; nothing in common: no ALPN, the
//! handshake goes on), the read-back (`gnutls_alpn_get_selected_protocol`),
//! and a server's refusal of a ClientHello naming another host, from its
//! post-ClientHello hook (`gnutls_handshake_set_post_client_hello_function`,
//! `gnutls_server_name_get`): `GNUTLS_E_UNRECOGNIZED_NAME`, which the stack
//! answers with the alert GnuTLS maps to it.

use std::{
    ffi::{CStr, c_int, c_uint},
    ptr, slice,
};

use anyhow::Result;

use crate::libs::gnutls::{
    config::{GnuTlsConfig, check, datum},
    sys,
};

/// Sets `config`'s extensions on `session` (a server when `server`): the
/// ALPN protocols, and a server's name check. The server's check reads
/// `config`, which must outlive the session. Errors: GnuTLS refused the
/// list.
pub(crate) fn set(session: sys::gnutls_session_t, config: &GnuTlsConfig, server: bool) -> Result<()> {
    let protocols = config.extensions.alpn;
    if !protocols.is_empty() {
        let list: Vec<sys::gnutls_datum_t> = protocols.iter().map(|p| datum(p)).collect();
        let flags = if server { sys::GNUTLS_ALPN_SERVER_PRECEDENCE } else { 0 };
        // SAFETY: a live session; GnuTLS copies the names.
        let ret =
            unsafe { sys::gnutls_alpn_set_protocols(session, list.as_ptr(), list.len() as c_uint, flags) };
        check(ret, "gnutls_alpn_set_protocols")?;
    }
    if server && let Some(served) = &config.names.served {
        // SAFETY: a live session; the pointer is `config`'s name, which
        // outlives the session (the caller's promise).
        unsafe {
            sys::gnutls_session_set_ptr(session, served.as_ptr().cast_mut().cast());
            sys::gnutls_handshake_set_post_client_hello_function(session, Some(check_name));
        }
    }
    Ok(())
}

/// The protocol `session` chose; `None`: none.
pub(crate) fn chosen<'a>(session: sys::gnutls_session_t) -> Option<&'a [u8]> {
    let mut out = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
    // SAFETY: a live session; the datum points into the session, which the
    // caller's borrow keeps alive for 'a.
    let ret = unsafe { sys::gnutls_alpn_get_selected_protocol(session, &mut out) };
    (ret == 0 && !out.data.is_null()).then(|| unsafe { slice::from_raw_parts(out.data, out.size as usize) })
}

/// The post-ClientHello hook: refuses a host name other than the session's
/// served name ([`crate::extensions::name_refused`]).
unsafe extern "C" fn check_name(session: sys::gnutls_session_t) -> c_int {
    // SAFETY: `set` stored the served name's C string as the session's pointer.
    let served = unsafe { CStr::from_ptr(sys::gnutls_session_get_ptr(session).cast()) }.to_string_lossy();
    let mut name = [0u8; 256];
    let (mut len, mut kind): (usize, c_uint) = (name.len(), 0);
    // SAFETY: a live session; `name` holds `len` bytes.
    let ret =
        unsafe { sys::gnutls_server_name_get(session, name.as_mut_ptr().cast(), &mut len, &mut kind, 0) };
    let sent = (ret == 0 && kind == sys::GNUTLS_NAME_DNS)
        .then(|| String::from_utf8_lossy(&name[..len]).into_owned());
    if crate::extensions::name_refused(sent.as_deref(), &served) {
        sys::GNUTLS_E_UNRECOGNIZED_NAME
    } else {
        0
    }
}
