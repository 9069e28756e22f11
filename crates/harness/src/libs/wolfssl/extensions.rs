//! wolfSSL's ALPN and server name ([`crate::extensions`]): a client's offer
//! (`wolfSSL_UseALPN`, going on when nothing matches), a server's choice by
//! its own order of preference from its selection hook
//! (`wolfSSL_set_alpn_select_cb`, [`crate::extensions::select`]; nothing in
//! common: no ALPN) and the read-back (`wolfSSL_get0_alpn_selected`). A
//! server's refusal of a ClientHello naming another host, from its
//! server-name hook (`wolfSSL_CTX_set_servername_callback`,
//! `wolfSSL_get_servername`: a fatal unrecognized_name alert), is set on
//! its context by [`crate::libs::wolfssl::config`], which this module
//! uses (not the other way).

use std::{
    ffi::{c_int, c_uchar, c_uint, c_void},
    ptr, slice,
};

use anyhow::Result;
use wolfssl_sys as sys;

use crate::libs::wolfssl::config::{EXT_NOACK, EXT_OK, WolfConfig, check};

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
