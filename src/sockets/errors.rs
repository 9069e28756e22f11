//! What went wrong on a socket connection, by kind: the counts a `serve`
//! summary and a `load` report give. A kind says whose fault it is: the
//! network or the machine (refused, unreachable, ports exhausted, reset,
//! timeout), the peer (closed early), the library (handshake), or the
//! benchmark's checks (negotiated, corrupt), or HTTP (http).

use std::{fmt, io};

use serde::{Deserialize, Serialize};

/// The kind of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// TCP connect refused: nothing listens there (`ECONNREFUSED`).
    Refused,
    /// No route to the address, or the network is down.
    Unreachable,
    /// No local port left for a new connection (`EADDRNOTAVAIL`): closed
    /// sockets in TIME_WAIT hold them; not a library failure.
    PortsExhausted,
    /// A connect, handshake or read did not finish in its timeout.
    Timeout,
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`).
    Reset,
    /// The peer closed the connection before the exchange was done.
    Closed,
    /// The TLS library failed the handshake (or a record after it).
    Handshake,
    /// The handshake negotiated something other than the parameters ask.
    Negotiated,
    /// Echoed bytes differ from those sent, or an HTTP body from the one
    /// served.
    Corrupt,
    /// Malformed HTTP from the peer, or a response other than `200 OK`.
    Http,
    /// Any other I/O error.
    Io,
}

impl ErrorKind {
    /// The kind's name, as in reports (`ports-exhausted`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::PortsExhausted => "ports-exhausted",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Handshake => "handshake",
            ErrorKind::Negotiated => "negotiated",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Http => "http",
            ErrorKind::Io => "io",
        }
    }

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

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
