//! What went wrong on a socket connection, by kind: the counts a `serve`
//! summary and a `load` report give. A kind says whose fault it is: the
//! network or the machine (refused, unreachable, ports exhausted, reset,
//! timeout), the peer (closed early), the library (handshake), or the
//! benchmark's checks (negotiated, corrupt), or HTTP (http).

use std::{fmt, io};

pub use crate::results::sockets::ErrorKind;

/// How a failure is classified (the kinds and their names are the saved
/// reports', [`crate::results::sockets::ErrorKind`]).
impl ErrorKind {
    /// The kind of an I/O error found in `e`'s chain, else `otherwise`.
    pub fn of(e: &anyhow::Error, otherwise: ErrorKind) -> ErrorKind {
        for cause in e.chain() {
            if let Some(io) = cause.downcast_ref::<io::Error>() {
                return ErrorKind::of_io(io, otherwise);
            }
        }
        otherwise
    }

    /// The kind of `e`: by its `io::ErrorKind`, else by its OS error
    /// number, else `otherwise` (a library's error carried in an
    /// `io::Error`, as tokio-rustls does).
    pub fn of_io(e: &io::Error, otherwise: ErrorKind) -> ErrorKind {
        match e.kind() {
            io::ErrorKind::ConnectionRefused => return ErrorKind::Refused,
            io::ErrorKind::AddrNotAvailable => return ErrorKind::PortsExhausted,
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionAborted => {
                return ErrorKind::Reset;
            }
            io::ErrorKind::TimedOut => return ErrorKind::Timeout,
            io::ErrorKind::UnexpectedEof => return ErrorKind::Closed,
            io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::NetworkDown => {
                return ErrorKind::Unreachable;
            }
            _ => {}
        }
        match e.raw_os_error() {
            Some(libc::EADDRNOTAVAIL) => ErrorKind::PortsExhausted,
            Some(_) => ErrorKind::Io,
            None => otherwise,
        }
    }
}

/// A failed connection or exchange: its kind and the whole message.
#[derive(Debug)]
pub struct Failure {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The error with its causes (`{:#}`).
    pub message: String,
}

impl Failure {
    /// A failure of `kind` ([`ErrorKind::of`] when the chain holds an I/O
    /// error) with `e`'s message.
    pub fn new(e: anyhow::Error, otherwise: ErrorKind) -> Failure {
        Failure { kind: ErrorKind::of(&e, otherwise), message: chain_text(&e) }
    }

    /// A failure of exactly `kind`, whatever the chain holds.
    pub fn exactly(kind: ErrorKind, e: anyhow::Error) -> Failure {
        Failure { kind, message: chain_text(&e) }
    }
}

/// `e` and its causes, `: `-separated as `{:#}` writes them, less a cause
/// that only repeats the one before (an `io::Error` wrapping another, or a
/// library error quoting its I/O error, as hyper's and the TLS adapters'
/// do: "reset (os error 104): reset (os error 104)").
fn chain_text(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if parts.last().is_some_and(|last| last.ends_with(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_their_kinds() {
        let e = |k| io::Error::from(k);
        assert_eq!(ErrorKind::of_io(&e(io::ErrorKind::ConnectionRefused), ErrorKind::Io), ErrorKind::Refused);
        assert_eq!(ErrorKind::of_io(&e(io::ErrorKind::BrokenPipe), ErrorKind::Io), ErrorKind::Reset);
        let exhausted = io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        assert_eq!(ErrorKind::of_io(&exhausted, ErrorKind::Io), ErrorKind::PortsExhausted);
        let library = io::Error::other("bad record mac");
        assert_eq!(ErrorKind::of_io(&library, ErrorKind::Handshake), ErrorKind::Handshake);
        let chained = anyhow::Error::new(e(io::ErrorKind::UnexpectedEof)).context("reading");
        assert_eq!(ErrorKind::of(&chained, ErrorKind::Io), ErrorKind::Closed);
        assert_eq!(ErrorKind::of(&anyhow::anyhow!("no io"), ErrorKind::Negotiated), ErrorKind::Negotiated);
    }

    #[test]
    fn a_cause_that_repeats_the_one_before_is_said_once() {
        let reset = io::Error::from_raw_os_error(libc::ECONNRESET);
        let wrapped = io::Error::new(io::ErrorKind::ConnectionReset, reset);
        let e = anyhow::Error::new(wrapped).context("serving HTTP");
        let f = Failure::new(e, ErrorKind::Io);
        assert_eq!(f.kind, ErrorKind::Reset);
        assert_eq!(f.message.matches("os error 104").count(), 1, "{}", f.message);
        assert!(f.message.starts_with("serving HTTP: "), "{}", f.message);
    }
}
