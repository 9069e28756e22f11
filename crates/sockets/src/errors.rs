//! What went wrong on a socket connection, by kind: the counts a `serve`
//! summary and a `load` report give. A kind says whose fault it is: the
//! network or the machine (refused, unreachable, ports exhausted, reset,
//! timeout), the peer (closed early), the library (handshake), or the
//! benchmark's checks (negotiated, corrupt), or HTTP (http).

use std::fmt;

pub use tls_bench_results::sockets::ErrorKind;

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
    use std::io;

    use super::*;

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
