//! OpenSSL, AWS-LC and BoringSSL: the server's select callback on its
//! context, the client's offer on its connection, and the read-back.

use anyhow::Result;

use crate::libs::openssl::config::ossl::ssl::{
    AlpnError, NameType, SniError, SslAlert, SslContextBuilder, SslRef,
};

/// Makes the server contexts of `builder` choose among `protocols`
/// ([`crate::extensions::select`]; with nothing in common, no ALPN: `NOACK`) and,
/// given a `server_name`, refuse ClientHellos naming another host (a
/// fatal unrecognized_name alert).
pub fn server(
    builder: &mut SslContextBuilder,
    protocols: &'static [&'static [u8]],
    server_name: Option<&'static str>,
) {
    if !protocols.is_empty() {
        builder.set_alpn_select_callback(move |_, offered| {
            crate::extensions::select(protocols, offered).ok_or(AlpnError::NOACK)
        });
    }
    if let Some(served) = server_name {
        builder.set_servername_callback(move |ssl, alert| {
            if crate::extensions::name_refused(ssl.servername(NameType::HOST_NAME), served) {
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
        ssl.set_alpn_protos(&crate::extensions::wire(protocols))?;
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
    crate::libs::openssl::config::identity(builder, &files, false)
}
