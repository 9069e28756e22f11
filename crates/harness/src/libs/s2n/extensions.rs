//! s2n-tls: a connection's preference list (a server's or a client's), a
//! client hello callback that refuses other names, and the read-back.

use std::pin::Pin;

use crate::{
    error::ConfigureError,
    libs::s2n::api::{
        callbacks::{ClientHelloCallback, ConnectionFuture},
        config::Builder,
        connection::Connection,
        enums::ClientAuthType,
        error::Error,
    },
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
        if crate::extensions::name_refused(conn.server_name(), self.0) {
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
    builder.set_client_auth_type(ClientAuthType::Required).map_err(crate::libs::s2n::config::fail)?;
    let files = crate::certs::load(chain)?;
    crate::libs::s2n::config::identity(builder, &files, false)
}
