//! Mbed TLS's ALPN and server name ([`crate::extensions`]), for the socket
//! runner's bridge, on a session: the read-back
//! (`mbedtls_ssl_get_alpn_protocol`) and a client that sends one name and
//! checks the certificate against another. What a configuration sets is
//! in [`crate::libs::mbedtls::config`] (which this module uses, not the
//! other way): the protocols on each side (`mbedtls_ssl_conf_alpn_protocols`:
//! a client's offer; a server picks the first of its own that the client
//! offers) and a server's refusal of a ClientHello naming another host
//! from its server-name hook (`mbedtls_ssl_conf_sni`: a non-zero answer
//! aborts with an unrecognized_name alert).
//!
//! Two differences from the other libraries, both Mbed TLS's own:
//! - a server whose protocols have nothing in common with a client's offer
//!   aborts with a no_application_protocol alert (RFC 7301 section 3.2's
//!   "SHALL"); Mbed TLS has no setting to go on without ALPN. The socket
//!   runner's clients always offer a protocol its servers have.
//! - `mbedtls_ssl_set_hostname` sets both the name a client sends and the
//!   one it checks. A client sending another name
//!   ([`crate::extensions::Names::sent`]) sets that one, and its
//!   verification hook (`mbedtls_ssl_set_verify`) checks the server's
//!   certificate against [`crate::extensions::Names::checked`] again
//!   (`mbedtls_x509_crt_verify`, one more signature check) before it lets
//!   the mismatch with the sent name pass. Only a client given
//!   [`crate::extensions::Extensions::server_name`] other than the
//!   certificate's name does this: the socket runner's wrong-name attacker,
//!   whose handshake the server refuses before it sends a certificate.
//!
//! Source: Mbed TLS 3.6's `mbedtls/ssl.h` and `mbedtls/x509_crt.h`.

use std::{
    ffi::{CStr, c_int, c_void},
    ptr,
};

use crate::libs::mbedtls::{config::MbedConfig, sys};

/// The protocol `ssl` chose; `None`: none.
pub(crate) fn chosen<'a>(ssl: *const sys::mbedtls_ssl_context) -> Option<&'a [u8]> {
    // SAFETY: a live context; the name is one of its configuration's, which
    // the caller's borrow keeps alive for 'a.
    let name = unsafe { sys::mbedtls_ssl_get_alpn_protocol(ssl) };
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_bytes())
}

/// Makes a client context whose sent name differs from the checked one
/// check the certificate against `config`'s checked name.
///
/// # Safety
///
/// `ssl` is a live client context whose host name is `config`'s sent
/// name; `config` outlives it.
pub unsafe fn check_other_name(ssl: *mut sys::mbedtls_ssl_context, config: &MbedConfig) {
    // SAFETY: the caller's promise; the hook reads `config`.
    unsafe {
        sys::mbedtls_ssl_set_verify(ssl, Some(verify_checked_name), ptr::from_ref(config).cast_mut().cast())
    };
}

/// The verification hook of a client sending another name: at the
/// server's certificate (depth 0), a name mismatch passes only if the
/// chain verifies against the root with the checked name.
unsafe extern "C" fn verify_checked_name(
    config: *mut c_void,
    crt: *mut sys::mbedtls_x509_crt,
    depth: c_int,
    flags: *mut u32,
) -> c_int {
    let mismatch = sys::MBEDTLS_X509_BADCERT_CN_MISMATCH;
    // SAFETY: Mbed TLS passes its flags for this certificate.
    if depth != 0 || unsafe { *flags } & mismatch == 0 {
        return 0;
    }
    // SAFETY: `check_other_name` passed the configuration, alive while the
    // context is; `crt` is the peer's chain from its first certificate.
    let config = unsafe { &*config.cast::<MbedConfig>() };
    let mut again = 0u32;
    // SAFETY: the peer's chain, the configuration's root and checked name.
    let ret = unsafe {
        sys::mbedtls_x509_crt_verify(
            crt,
            config.root(),
            ptr::null_mut(),
            config.names.checked.as_ptr(),
            &mut again,
            None,
            ptr::null_mut(),
        )
    };
    if ret == 0 && again == 0 {
        // SAFETY: as above.
        unsafe { *flags &= !mismatch };
    }
    0
}
