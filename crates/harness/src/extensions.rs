//! The TLS extensions the socket runner's HTTPS sets beyond a parameter
//! set, through each library's own API: ALPN and the server name; and,
//! for an attacker, a client identity of another CA.
//!
//! **ALPN** (Application-Layer Protocol Negotiation, RFC 7301), for the
//! runners that carry an application protocol (HTTPS: `h2` and
//! `http/1.1`): a server's protocols in its order of preference, a
//! client's offer, and the read-back of the protocol chosen.
//!
//! The server picks the first of its protocols that the client offers
//! (RFC 7301 section 3.2, "the server's preference"). With nothing in
//! common, or no offer, no protocol is chosen and the handshake goes on:
//! the server then speaks its default (HTTP/1.1), as nginx does.
//!
//! **The server name** (SNI, RFC 6066 section 3): a server that serves one
//! name refuses a ClientHello naming another host, aborting the handshake
//! ([`name_refused`]; RFC 6066 lets it send unrecognized_name or go on: it
//! aborts, as nginx's `ssl_reject_handshake` does); a client sends the name
//! it is given.
//!
//! **Another CA's client identity**: a client that trusts its parameter
//! set's CA (so it accepts the server) but presents another chain's client
//! certificate, which an mTLS server must refuse (RFC 8446 section 4.4.2.4:
//! unknown_ca or bad_certificate).
//!
//! Sources: rustls's `ServerConfig::alpn_protocols`,
//! `ClientConfig::alpn_protocols` and `CommonState::alpn_protocol`;
//! OpenSSL's SSL_CTX_set_alpn_select_cb(3), SSL_set_alpn_protos(3) and
//! SSL_get0_alpn_selected(3), which BoringSSL and AWS-LC share; s2n-tls's
//! `s2n_connection_set_protocol_preferences` and
//! `s2n_get_application_protocol` (its `Connection`'s
//! `set_application_protocol_preference` and `application_protocol`).
//! SNI: rustls's `ResolvesServerCert` (`None` aborts the handshake);
//! OpenSSL's SSL_CTX_set_tlsext_servername_callback(3); s2n-tls's client
//! hello callback (`s2n_config_set_client_hello_cb`, an error aborts).

use std::ffi::CString;

use crate::params::CertChain;

/// What a connection carries beyond its parameter set, the same on every
/// library (this module's): what the socket runner's HTTPS sets, and what
/// a library driven by its bridge is configured with
/// ([`crate::harness::TlsLibrary::configure_threaded`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extensions {
    /// ALPN protocol names (RFC 7301): a server's, in its order of
    /// preference (it picks the first one the client offers; none in
    /// common, or no offer: no ALPN); a client's offer. Empty: no ALPN.
    pub alpn: &'static [&'static [u8]],
    /// The server name (SNI, RFC 6066). A server given one refuses a
    /// ClientHello naming another host (no name, or an IP address, is
    /// served); a client given one sends it in place of the certificate's
    /// name ([`crate::certs::SERVER_NAME`], sent when `None`). A server
    /// without one serves any name.
    pub server_name: Option<&'static str>,
    /// The chain whose client certificate and key a client presents, in
    /// place of its parameter set's (another CA's: the attacker of
    /// the socket runner's `UntrustedClientCert` attack); it still trusts its
    /// parameter set's CA. `None`: the parameter set's, under mTLS.
    pub client_identity: Option<CertChain>,
}

impl Extensions {
    /// Nothing beyond the parameter set (the echo, `serve` and `load`).
    pub const NONE: Extensions = Extensions { alpn: &[], server_name: None, client_identity: None };
}

/// One configuration's host names as C strings, for the libraries whose C
/// API takes them so and keeps the pointer (GnuTLS's
/// `gnutls_session_set_verify_cert`) or reads them from a hook (their
/// server-name checks): the configuration owns them for its sessions.
pub struct Names {
    /// [`crate::certs::SERVER_NAME`], which clients check the certificate
    /// against.
    pub checked: CString,
    /// The name a client sends (SNI): [`Extensions::server_name`], else
    /// [`crate::certs::SERVER_NAME`].
    pub sent: CString,
    /// The one name a server serves ([`Extensions::server_name`]); `None`:
    /// any.
    pub served: Option<CString>,
}

impl Names {
    /// The names for `extensions`. Errors: a name holding a NUL byte.
    pub fn new(extensions: &Extensions) -> anyhow::Result<Names> {
        let c = |name: &str| CString::new(name).map_err(anyhow::Error::from);
        Ok(Names {
            checked: c(crate::certs::SERVER_NAME)?,
            sent: c(extensions.server_name.unwrap_or(crate::certs::SERVER_NAME))?,
            served: extensions.server_name.map(c).transpose()?,
        })
    }
}

/// HTTP/2 over TLS (RFC 9113 section 3.2).
pub const H2: &[u8] = b"h2";

/// HTTP/1.1 (RFC 7301 section 6).
pub const HTTP_1_1: &[u8] = b"http/1.1";

/// `protocols` in ALPN's wire format, each name after its length byte
/// (RFC 7301 section 3.1), as OpenSSL takes a client's offer. Names longer
/// than 255 bytes cannot be sent and are left out (ours are constants).
pub fn wire(protocols: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in protocols {
        if let Ok(len) = u8::try_from(p.len())
            && len > 0
        {
            out.push(len);
            out.extend_from_slice(p);
        }
    }
    out
}

/// The server's choice: the first of `server` (in its order of preference)
/// that `offered` (a client's list in wire format) holds, as a slice of
/// `offered`; `None` when nothing is in common or the list is malformed.
pub fn select<'a>(server: &[&[u8]], offered: &'a [u8]) -> Option<&'a [u8]> {
    let mut names = Vec::new();
    let mut rest = offered;
    while let Some((&len, tail)) = rest.split_first() {
        let (name, after) = tail.split_at_checked(usize::from(len))?;
        names.push(name);
        rest = after;
    }
    server.iter().find_map(|s| names.iter().find(|n| **n == *s).copied())
}

/// Whether a server serving `served` refuses a ClientHello whose server
/// name extension holds `sent`: a host name other than `served` (compared
/// without case, RFC 6066 section 3). No extension, or an IP address in it
/// (which RFC 6066 forbids, and some clients send meaning the address), is
/// served.
pub fn name_refused(sent: Option<&str>, served: &str) -> bool {
    sent.is_some_and(|name| name.parse::<std::net::IpAddr>().is_err() && !name.eq_ignore_ascii_case(served))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_host_name_is_refused() {
        assert!(name_refused(Some("wrong.invalid"), "localhost"));
        for served in [None, Some("localhost"), Some("LocalHost"), Some("127.0.0.1"), Some("::1")] {
            assert!(!name_refused(served, "localhost"), "{served:?}");
        }
    }

    #[test]
    fn wire_format_puts_each_length_first() {
        assert_eq!(wire(&[H2, HTTP_1_1]), b"\x02h2\x08http/1.1");
        assert_eq!(wire(&[]), b"");
    }

    #[test]
    fn the_server_preference_wins_and_bad_lists_choose_nothing() {
        let both = wire(&[HTTP_1_1, H2]);
        assert_eq!(select(&[H2, HTTP_1_1], &both), Some(H2));
        assert_eq!(select(&[HTTP_1_1, H2], &wire(&[H2, HTTP_1_1])), Some(HTTP_1_1));
        assert_eq!(select(&[H2], &wire(&[HTTP_1_1])), None);
        assert_eq!(select(&[H2], b""), None);
        // A length past the end: malformed, nothing chosen.
        assert_eq!(select(&[H2], b"\x09h2"), None);
    }
}
