//! s2n-tls's gather write, `s2n_sendv_with_offset` (s2n-tls-sys), which the
//! safe crate does not wrap.
//!
//! The call needs the connection's `*mut s2n_connection`, which the safe
//! crate keeps private: `Connection::unstable_as_ptr` exists only with an
//! externally built libs2n (`cfg(s2n_tls_external_build)`), and reading the
//! pointer out of `Connection` would rest on a layout Rust does not
//! promise. The sound way used here: s2n-tls hands the pointer to the
//! key-log callback (`s2n_config_set_key_log_cb`; `conn` is "the connection
//! for which the log line is being emitted"), which it calls during each
//! side's handshake, TLS 1.2 and TLS 1.3 alike. A config built with
//! [`capture`] sets a callback that keeps that pointer in a thread-local
//! slot and drops the log line; the stack clears the slot before each of
//! its own handshake calls and takes it after ([`take`]), so the pointer is
//! that of the connection whose call ran, and it lives exactly as long as
//! that connection.
//!
//! The cost: such a handshake also formats the key-log lines. Only the
//! configurations of vectored small writes capture, and their handshake is
//! not timed.

use std::{cell::Cell, ffi::c_void, io::IoSlice, ptr::NonNull};

use anyhow::{Result, bail, ensure};
use s2n_tls_sys::{
    s2n_blocked_status, s2n_connection, s2n_connection_get_mode, s2n_errno_location, s2n_mode,
    s2n_sendv_with_offset, s2n_strerror,
};

use crate::{
    harness::ConfigureError,
    libs::s2n::{api::config::Builder, config::fail},
};

thread_local! {
    /// The connection the key-log callback last ran for, on this thread.
    static CAPTURED: Cell<Option<NonNull<s2n_connection>>> = const { Cell::new(None) };
}

/// The key-log callback: keeps `conn`, ignores the line.
unsafe extern "C" fn keep_connection(
    _ctx: *mut c_void,
    conn: *mut s2n_connection,
    _logline: *mut u8,
    _len: usize,
) -> libc::c_int {
    CAPTURED.set(NonNull::new(conn));
    0
}

/// Makes connections of the config built from `b` hand their pointer to
/// [`take`] during their handshake. Errors: s2n-tls refused the callback.
pub(super) fn capture(b: &mut Builder) -> Result<(), ConfigureError> {
    // SAFETY: the callback reads no context (null), and copies nothing out
    // of the log line.
    unsafe { b.set_key_log_callback(Some(keep_connection), std::ptr::null_mut()) }.map_err(fail)?;
    Ok(())
}

/// Empties this thread's slot: call before a handshake call of a capturing
/// connection.
pub(super) fn clear() {
    CAPTURED.set(None);
}

/// The pointer the key-log callback received since [`clear`], if it ran,
/// checked to be a connection of the wanted mode. Call right after the
/// handshake call of the connection it belongs to, and keep it no longer
/// than that connection. Errors: a connection of the other mode.
pub(super) fn take(server: bool) -> Result<Option<RawConn>> {
    let Some(conn) = CAPTURED.take() else { return Ok(None) };
    // SAFETY: s2n-tls passed this pointer to the callback during the
    // current call of the connection that owns it, which is alive.
    let mode = unsafe { s2n_connection_get_mode(conn.as_ptr()) };
    let wanted = if server { s2n_mode::SERVER } else { s2n_mode::CLIENT };
    ensure!(mode == wanted, "s2n-tls key-log callback ran for a connection of mode {mode}, not {wanted}");
    Ok(Some(RawConn(conn)))
}

/// A connection's own `s2n_connection`, from [`take`]. Kept beside (and
/// dropped with) the `Connection` that owns it.
pub(super) struct RawConn(NonNull<s2n_connection>);

impl RawConn {
    /// Writes the concatenation of `parts` with `s2n_sendv_with_offset`,
    /// calling again with the advanced offset after a partial write (s2n-tls
    /// docs, `docs/examples/s2n_send.c`). `IoSlice` is ABI-compatible with
    /// `iovec` on Unix (std docs), which s2n-tls-sys takes as `libc::iovec`. Errors:
    /// s2n-tls's error, or blocked (the in-memory transport never blocks).
    pub(super) fn sendv(&self, parts: &[IoSlice<'_>]) -> Result<()> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut offset = 0usize;
        while offset < total {
            let mut blocked = s2n_blocked_status::NOT_BLOCKED;
            // SAFETY: a live connection (see `take`); `parts` is an array
            // of valid buffers laid out as iovecs, read only.
            let n = unsafe {
                s2n_sendv_with_offset(
                    self.0.as_ptr(),
                    parts.as_ptr().cast::<libc::iovec>(),
                    parts.len() as isize,
                    offset as isize,
                    &mut blocked,
                )
            };
            if n < 0 {
                bail!("s2n_sendv_with_offset: {} (blocked {blocked})", last_error());
            }
            offset += n as usize;
        }
        Ok(())
    }
}

/// s2n-tls's thread-local error, as text (`s2n_strerror`).
fn last_error() -> String {
    // SAFETY: s2n_errno_location points at this thread's error; s2n_strerror
    // returns a static NUL-terminated string.
    unsafe {
        let e = *s2n_errno_location();
        std::ffi::CStr::from_ptr(s2n_strerror(e, c"EN".as_ptr())).to_string_lossy().into_owned()
    }
}
