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

/// rustls: the fields of its configs, a certificate resolver that refuses
/// other names, and the read-back.
#[cfg(feature = "rustls")]
pub mod rustls {
    use std::sync::Arc;

    use anyhow::Result;
    use rustls::{
        ClientConfig, CommonState, ServerConfig, SignatureScheme,
        client::ResolvesClientCert,
        server::{ClientHello, ResolvesServerCert},
        sign::CertifiedKey,
    };

    use crate::{certs, config::rustls::chain_and_key, params::CertChain};

    fn owned(protocols: &[&[u8]]) -> Vec<Vec<u8>> {
        protocols.iter().map(|p| p.to_vec()).collect()
    }

    /// Makes `config` accept `protocols` (its order of preference) and,
    /// given a `server_name`, refuse ClientHellos naming another host.
    pub fn server(config: &mut ServerConfig, protocols: &[&[u8]], server_name: Option<&'static str>) {
        config.alpn_protocols = owned(protocols);
        if let Some(served) = server_name {
            config.cert_resolver = Arc::new(OneName { served, inner: config.cert_resolver.clone() });
        }
    }

    /// The config's own resolver, for the one name served only.
    #[derive(Debug)]
    struct OneName {
        served: &'static str,
        inner: Arc<dyn ResolvesServerCert>,
    }

    impl ResolvesServerCert for OneName {
        fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
            if super::name_refused(hello.server_name(), self.served) {
                return None;
            }
            self.inner.resolve(hello)
        }
    }

    /// Makes `config` offer `protocols`.
    pub fn client(config: &mut ClientConfig, protocols: &[&[u8]]) {
        config.alpn_protocols = owned(protocols);
    }

    /// The protocol chosen; `None`: none.
    pub fn chosen(state: &CommonState) -> Option<&[u8]> {
        state.alpn_protocol()
    }

    /// Makes `config` present `chain`'s client identity whenever a server
    /// asks for one. Errors: the files do not load, or the key does not
    /// suit the config's crypto provider.
    pub fn present(config: &mut ClientConfig, chain: CertChain) -> Result<()> {
        let files = certs::load(chain)?;
        let (certs, key) = chain_and_key(&files, false)?;
        let key = CertifiedKey::from_der(certs, key, config.crypto_provider())?;
        config.client_auth_cert_resolver = Arc::new(Present(Arc::new(key)));
        Ok(())
    }

    /// Always the one identity.
    #[derive(Debug)]
    struct Present(Arc<CertifiedKey>);

    impl ResolvesClientCert for Present {
        fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
            Some(self.0.clone())
        }

        fn has_certs(&self) -> bool {
            true
        }
    }
}

/// OpenSSL, AWS-LC and BoringSSL: the server's select callback on its
/// context, the client's offer on its connection, and the read-back.
#[cfg(any(feature = "openssl", feature = "boring"))]
pub mod openssl {
    use anyhow::Result;

    use crate::config::openssl::ossl::ssl::{
        AlpnError, NameType, SniError, SslAlert, SslContextBuilder, SslRef,
    };

    /// Makes the server contexts of `builder` choose among `protocols`
    /// ([`super::select`]; with nothing in common, no ALPN: `NOACK`) and,
    /// given a `server_name`, refuse ClientHellos naming another host (a
    /// fatal unrecognized_name alert).
    pub fn server(
        builder: &mut SslContextBuilder,
        protocols: &'static [&'static [u8]],
        server_name: Option<&'static str>,
    ) {
        if !protocols.is_empty() {
            builder.set_alpn_select_callback(move |_, offered| {
                super::select(protocols, offered).ok_or(AlpnError::NOACK)
            });
        }
        if let Some(served) = server_name {
            builder.set_servername_callback(move |ssl, alert| {
                if super::name_refused(ssl.servername(NameType::HOST_NAME), served) {
                    *alert = SslAlert::UNRECOGNIZED_NAME;
                    return Err(SniError::ALERT_FATAL);
                }
                Ok(())
            });
        }
    }

    /// Makes the client connection `ssl` offer `protocols` and, given a
    /// `server_name`, send it in place of the certificate's. Errors: the
    /// library refused the list or the name.
    pub fn client(ssl: &mut SslRef, protocols: &[&[u8]], server_name: Option<&str>) -> Result<()> {
        if !protocols.is_empty() {
            ssl.set_alpn_protos(&super::wire(protocols))?;
        }
        if let Some(name) = server_name {
            ssl.set_hostname(name)?;
        }
        Ok(())
    }

    /// The protocol chosen; `None`: none.
    pub fn chosen(ssl: &SslRef) -> Option<&[u8]> {
        ssl.selected_alpn_protocol()
    }

    /// Makes the client contexts of `builder` present `chain`'s client
    /// identity. Errors: the files do not load.
    pub fn present(builder: &mut SslContextBuilder, chain: crate::params::CertChain) -> Result<()> {
        let files = crate::certs::load(chain)?;
        crate::config::openssl::identity(builder, &files, false)
    }
}

/// s2n-tls: a connection's preference list (a server's or a client's), a
/// client hello callback that refuses other names, and the read-back.
#[cfg(feature = "s2n-tls")]
pub mod s2n {
    use std::pin::Pin;

    use crate::{
        config::s2n_api::{
            callbacks::{ClientHelloCallback, ConnectionFuture},
            config::Builder,
            connection::Connection,
            enums::ClientAuthType,
            error::Error,
        },
        error::ConfigureError,
    };

    /// Makes the server configs of `builder` refuse ClientHellos naming
    /// another host than `served` (the callback's error aborts the
    /// handshake). Errors: s2n-tls refused the callback.
    pub fn one_name(builder: &mut Builder, served: &'static str) -> Result<(), Error> {
        builder.set_client_hello_callback(OneName(served))?;
        Ok(())
    }

    struct OneName(&'static str);

    impl ClientHelloCallback for OneName {
        fn on_client_hello(
            &self,
            conn: &mut Connection,
        ) -> Result<Option<Pin<Box<dyn ConnectionFuture>>>, Error> {
            if super::name_refused(conn.server_name(), self.0) {
                let why = format!("server name {:?} is not {:?}", conn.server_name().unwrap_or(""), self.0);
                return Err(Error::application(why.into()));
            }
            if conn.server_name().is_some() {
                conn.server_name_extension_used();
            }
            Ok(None)
        }
    }

    /// Sets `conn`'s protocols: a server's to choose among, a client's to
    /// offer. Errors: s2n-tls refused the list.
    pub fn offer(conn: &mut Connection, protocols: &[&[u8]]) -> Result<(), Error> {
        if !protocols.is_empty() {
            conn.set_application_protocol_preference(protocols.iter().copied())?;
        }
        Ok(())
    }

    /// The protocol chosen; `None`: none.
    pub fn chosen(conn: &Connection) -> Option<&[u8]> {
        conn.application_protocol()
    }

    /// Makes the client configs of `builder` present `chain`'s client
    /// identity when a server asks for one. Errors: the files do not load,
    /// s2n-tls refuses them.
    pub fn present(builder: &mut Builder, chain: crate::params::CertChain) -> Result<(), ConfigureError> {
        builder.set_client_auth_type(ClientAuthType::Required).map_err(crate::config::s2n::fail)?;
        let files = crate::certs::load(chain)?;
        crate::config::s2n::identity(builder, &files, false)
    }
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
