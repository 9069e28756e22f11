//! wolfSSL's ALPN and server name ([`crate::extensions`]): a client's offer
//! (`wolfSSL_UseALPN`, going on when nothing matches), a server's choice by
//! its own order of preference from its selection hook
//! (`wolfSSL_set_alpn_select_cb`, [`crate::extensions::select`]; nothing in
//! common: no ALPN), the read-back (`wolfSSL_get0_alpn_selected`), and a
//! server's refusal of a ClientHello naming another host from its
//! server-name hook (`wolfSSL_CTX_set_servername_callback`,
//! `wolfSSL_get_servername`): a fatal unrecognized_name alert.

use std::{
    ffi::{CStr, c_int, c_uchar, c_uint, c_void},
    ptr, slice,
};

use anyhow::Result;
use wolfssl_sys as sys;

use crate::libs::wolfssl::config::{WolfConfig, check};

/// OpenSSL's codes for a TLS extension hook's answer, which wolfSSL's
/// compatibility layer takes (`SSL_TLSEXT_ERR_*`).
const EXT_OK: c_int = 0;
const EXT_ALERT_FATAL: c_int = 2;
const EXT_NOACK: c_int = 3;
/// unrecognized_name (RFC 6066 section 3).
const UNRECOGNIZED_NAME: c_int = 112;

/// Sets a server context's name check when `config` serves one name. The
/// hook reads `config`'s name, which must outlive the context (it does:
/// the configuration owns both).
pub(crate) fn set_server_context(config: &WolfConfig) {
    if let Some(served) = &config.names.served {
        // SAFETY: a live context; the argument is the name's heap buffer,
        // which the configuration keeps as long as the context.
        unsafe {
            sys::wolfSSL_CTX_set_servername_callback(config.server.as_ptr(), Some(check_name));
            sys::wolfSSL_CTX_set_servername_arg(config.server.as_ptr(), served.as_ptr().cast_mut().cast());
        }
    }
}

/// Sets `config`'s ALPN protocols on `ssl` (a server when `server`). The
/// server's hook reads `config`, which must outlive the session. Errors:
/// wolfSSL refused the list.
pub(crate) fn set(ssl: *mut sys::WOLFSSL, config: &WolfConfig, server: bool) -> Result<()> {
    let protocols = config.extensions.alpn;
    if protocols.is_empty() {
        return Ok(());
    }
    if server {
        // SAFETY: a live session; the argument is `config`, which outlives it.
        unsafe {
            sys::wolfSSL_set_alpn_select_cb(ssl, Some(select), ptr::from_ref(config).cast_mut().cast());
        }
        return Ok(());
    }
    let mut list: Vec<u8> = protocols.join(&b","[..]);
    // SAFETY: a live session; wolfSSL copies the list.
    let ret = unsafe {
        sys::wolfSSL_UseALPN(
            ssl,
            list.as_mut_ptr().cast(),
            list.len() as c_uint,
            sys::WOLFSSL_ALPN_CONTINUE_ON_MISMATCH as c_uchar,
        )
    };
    check(ret, "wolfSSL_UseALPN")
}

/// The protocol `ssl` chose; `None`: none.
pub(crate) fn chosen<'a>(ssl: *mut sys::WOLFSSL) -> Option<&'a [u8]> {
    let (mut data, mut len): (*const c_uchar, c_uint) = (ptr::null(), 0);
    // SAFETY: a live session; the bytes are the session's, which the
    // caller's borrow keeps alive for 'a.
    unsafe { sys::wolfSSL_get0_alpn_selected(ssl, &mut data, &mut len) };
    (!data.is_null() && len > 0).then(|| unsafe { slice::from_raw_parts(data, len as usize) })
}

/// The server's ALPN hook: the first of its protocols the client offers.
unsafe extern "C" fn select(
    _ssl: *mut sys::WOLFSSL,
    out: *mut *const c_uchar,
    out_len: *mut c_uchar,
    offered: *const c_uchar,
    offered_len: c_uint,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: `set` passed the configuration, alive while the session is;
    // wolfSSL passes the client's list, `offered_len` bytes.
    let (config, offered) =
        unsafe { (&*arg.cast::<WolfConfig>(), slice::from_raw_parts(offered, offered_len as usize)) };
    match crate::extensions::select(config.extensions.alpn, offered) {
        Some(name) => {
            // SAFETY: out-pointers from wolfSSL; `name` points into its list.
            unsafe {
                *out = name.as_ptr();
                *out_len = name.len() as c_uchar;
            }
            EXT_OK
        }
        None => EXT_NOACK,
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
