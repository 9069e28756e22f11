//! rustls: the fields of its configs, a certificate resolver that refuses
//! other names, and the read-back.

use std::sync::Arc;

use anyhow::Result;
use rustls::{
    ClientConfig, CommonState, ServerConfig, SignatureScheme,
    client::ResolvesClientCert,
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};

use crate::{certs, libs::rustls::config::chain_and_key, params::CertChain};

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
        if crate::extensions::name_refused(hello.server_name(), self.served) {
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
