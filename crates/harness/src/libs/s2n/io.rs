//! s2n-tls's I/O over an [`Endpoint`] (the in-memory duplex, or a UDP
//! socket): send and receive callbacks whose context is the connection's
//! [`Io`]; the receive callback returns -1 with errno EWOULDBLOCK on an
//! empty queue (s2n-tls usage guide, "I/O"). Used by the in-memory stack
//! and by the security-policy probe ([`crate::libs::s2n::policy`]).

use std::{ffi::c_void, pin::Pin, slice};

use anyhow::Result;

#[cfg(s2n_raw_api)]
use crate::libs::s2n::api::PollNames as _;
use crate::{
    harness::Negotiated,
    libs::s2n::{api::connection::Connection, config::pending},
    transport::Endpoint,
};

/// A connection's transport as its send and receive callbacks see it.
pub struct Io {
    endpoint: Endpoint,
    /// s2n-tls before 0.0.29 (historical-perf) cannot report the
    /// negotiated group: the server's handshake bytes are kept to read it
    /// from the wire.
    #[cfg(s2n_no_curve_getter)]
    flight: KeptFlight,
}

impl Io {
    /// Sets `conn`'s send and receive callbacks to `endpoint`. The returned
    /// box is their context: keep it alive, unmoved, as long as `conn`
    /// (drop `conn` first). `server` says which side `conn` is. Errors:
    /// s2n-tls refused a callback.
    pub fn attach(conn: &mut Connection, endpoint: Endpoint, server: bool) -> Result<Pin<Box<Io>>> {
        // Boxed so the address stays fixed while the connection holds it.
        let io = Box::pin(Io::new(endpoint, server));
        let ctx = &*io as *const Io as *mut c_void;
        conn.set_send_callback(Some(send_cb))?;
        conn.set_receive_callback(Some(recv_cb))?;
        // SAFETY: the caller keeps `io` alive and unmoved (pinned box) for
        // as long as `conn`, as documented above.
        unsafe {
            conn.set_send_context(ctx)?;
            conn.set_receive_context(ctx)?;
        }
        Ok(io)
    }

    #[cfg_attr(not(s2n_no_curve_getter), allow(unused_variables))]
    fn new(endpoint: Endpoint, server: bool) -> Io {
        Io {
            endpoint,
            #[cfg(s2n_no_curve_getter)]
            flight: KeptFlight { server, ..Default::default() },
        }
    }

    /// Drives `conn`'s handshake (`poll_negotiate`): whether it is done.
    /// Errors: the library's error.
    pub fn negotiate(&self, conn: &mut Connection) -> Result<bool> {
        let done = pending(conn.poll_negotiate())?.is_some();
        #[cfg(s2n_no_curve_getter)]
        self.flight.done.set(done);
        Ok(done)
    }

    /// What `conn` (on this I/O; a server when `server`) negotiated
    /// ([`crate::libs::s2n::config::negotiated_with_group`]); before s2n-tls 0.0.29
    /// the group as the server sent it ([`crate::wire`]).
    pub fn negotiated(&self, conn: &Connection, server: bool) -> Result<Negotiated> {
        crate::libs::s2n::config::negotiated_with_group(conn, server, self.group(conn)?)
    }

    #[cfg(not(s2n_no_curve_getter))]
    fn group(&self, conn: &Connection) -> Result<Option<crate::params::KxGroup>> {
        crate::libs::s2n::config::group(conn)
    }

    /// Before s2n-tls 0.0.29 (no `selected_curve`): the ServerHello key share
    /// or the ServerKeyExchange curve, as the server sent it.
    #[cfg(s2n_no_curve_getter)]
    fn group(&self, _conn: &Connection) -> Result<Option<crate::params::KxGroup>> {
        use anyhow::Context as _;
        let seen = crate::wire::server_flight(&self.flight.bytes.borrow())
            .context("reading the server's first flight")?;
        match seen.group {
            Some(code) => Ok(Some(
                crate::params::KxGroup::from_iana_code(code)
                    .with_context(|| format!("unknown group {code}"))?,
            )),
            None => Ok(None),
        }
    }
}

/// The bytes the server sends (a server) or receives (a client) until the
/// handshake completes.
#[cfg(s2n_no_curve_getter)]
#[derive(Default)]
struct KeptFlight {
    server: bool,
    done: std::cell::Cell<bool>,
    bytes: std::cell::RefCell<Vec<u8>>,
}

#[cfg(s2n_no_curve_getter)]
impl KeptFlight {
    fn passed(&self, sent: bool, data: &[u8]) {
        if sent == self.server && !self.done.get() {
            self.bytes.borrow_mut().extend_from_slice(data);
        }
    }
}

unsafe extern "C" fn send_cb(ctx: *mut c_void, buf: *const u8, len: u32) -> libc::c_int {
    // SAFETY: ctx is the connection's pinned Io; s2n-tls passes a valid
    // buffer of `len` bytes.
    let (io, data) = unsafe { (&*(ctx as *const Io), slice::from_raw_parts(buf, len as usize)) };
    io.endpoint.write_all_bytes(data);
    #[cfg(s2n_no_curve_getter)]
    io.flight.passed(true, data);
    len as libc::c_int
}

unsafe extern "C" fn recv_cb(ctx: *mut c_void, buf: *mut u8, len: u32) -> libc::c_int {
    // SAFETY: as in send_cb, with a writable buffer.
    let (io, out) = unsafe { (&*(ctx as *const Io), slice::from_raw_parts_mut(buf, len as usize)) };
    match io.endpoint.read_bytes(out) {
        0 => {
            errno::set_errno(errno::Errno(libc::EWOULDBLOCK));
            -1
        }
        n => {
            #[cfg(s2n_no_curve_getter)]
            io.flight.passed(false, &out[..n]);
            n as libc::c_int
        }
    }
}
