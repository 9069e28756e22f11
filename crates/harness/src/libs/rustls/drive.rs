//! The loop that moves a rustls connection's bytes, shared by the stack of
//! every rustls release built ([`crate::libs::rustls::stack`], whichever API era
//! it is): `write_tls` / `read_tls` + `process_new_packets`, the plaintext
//! reader drained after every `process_new_packets` (rustls docs,
//! `Connection::process_new_packets`). Only how TLS bytes reach the
//! transport differs between eras ([`Driven::flush`], [`Driven::pull`]).

use std::io::{self, IoSlice, Read, Write};

use anyhow::{Result, bail, ensure};
use rustls::Connection;

/// A rustls connection and how its TLS bytes move.
pub(crate) trait Driven {
    /// The connection.
    fn conn(&mut self) -> &mut Connection;
    /// Writes all pending TLS output to the transport.
    fn flush(&mut self) -> Result<()>;
    /// Reads one chunk of queued TLS input and processes it; `Ok(false)`
    /// when nothing was queued.
    fn pull(&mut self) -> Result<bool>;
}

/// Advances the handshake as far as the queued input allows; `Ok(true)`
/// once it is complete.
pub(crate) fn handshake(d: &mut impl Driven) -> Result<bool> {
    loop {
        d.flush()?;
        if !d.conn().is_handshaking() {
            return Ok(true);
        }
        if !d.pull()? {
            return Ok(false);
        }
    }
}

/// Writes all of `data` as application data and flushes it.
pub(crate) fn send(d: &mut impl Driven, mut data: &[u8]) -> Result<()> {
    while !data.is_empty() {
        let n = d.conn().writer().write(data)?;
        data = &data[n..];
        d.flush()?;
    }
    Ok(())
}

/// Writes the concatenation of `parts` as application data with one
/// `Writer::write_vectored` call (rustls 0.23 gathers the slices into
/// records of up to 16 KiB), and flushes it. A partial write (the outgoing
/// buffer limit) is finished by further calls.
#[cfg_attr(rustls_0_21, allow(dead_code))]
pub(crate) fn send_vectored(d: &mut impl Driven, parts: &[IoSlice<'_>]) -> Result<()> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut n = d.conn().writer().write_vectored(parts)?;
    d.flush()?;
    let mut written = n;
    if written < total {
        let mut owned: Vec<IoSlice<'_>> = parts.to_vec();
        let mut rest = &mut owned[..];
        while written < total {
            IoSlice::advance_slices(&mut rest, n);
            n = d.conn().writer().write_vectored(rest)?;
            ensure!(n > 0, "rustls accepted none of {} bytes", total - written);
            written += n;
            d.flush()?;
        }
    }
    Ok(())
}

/// Fills `buf` from queued input as far as it goes; returns the bytes read.
pub(crate) fn recv(d: &mut impl Driven, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    loop {
        match d.conn().reader().read(&mut buf[filled..]) {
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e.into()),
        }
        if filled == buf.len() || !d.pull()? {
            // Flush anything processing produced (e.g. a key update reply).
            d.flush()?;
            return Ok(filled);
        }
    }
}

/// Sends close_notify.
pub(crate) fn shutdown(d: &mut impl Driven) -> Result<()> {
    d.conn().send_close_notify();
    d.flush()
}

/// Processes all queued input (a client: the server's NewSessionTicket,
/// which rustls puts in the config's session store). Errors: application
/// data arrived instead.
pub(crate) fn settle(d: &mut impl Driven) -> Result<()> {
    while d.pull()? {}
    if d.conn().reader().read(&mut [0u8; 1]).is_ok_and(|n| n > 0) {
        bail!("unexpected application data while waiting for a ticket");
    }
    Ok(())
}
