//! The committed certificate chains (`certs/<chain>/`), written by
//! `cargo run --bin generate-certs` and read at run time.
//!
//! Each chain directory holds PEM files: the root CA certificate (the only
//! trust anchor), the intermediate CA certificate, the server's and the
//! client's chain (leaf then intermediate) and their PKCS#8 private keys.

use std::{
    collections::HashMap,
    fs,
    path::PathBuf,
    sync::{Arc, Mutex, OnceLock},
};

use anyhow::{Context, Result};

use crate::params::CertChain;

/// Where `generate-certs` writes and the harness reads: `certs/` in the crate root.
pub const CERTS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/certs");
/// Root CA certificate file name.
pub const CA_CERT: &str = "ca-cert.pem";
/// Intermediate CA certificate file name.
pub const INTERMEDIATE_CERT: &str = "intermediate-cert.pem";
/// Server chain (leaf, intermediate) file name.
pub const SERVER_CHAIN: &str = "server-chain.pem";
/// Server private key (PKCS#8 PEM) file name.
pub const SERVER_KEY: &str = "server-key.pem";
/// Client chain (leaf, intermediate) file name.
pub const CLIENT_CHAIN: &str = "client-chain.pem";
/// Client private key (PKCS#8 PEM) file name.
pub const CLIENT_KEY: &str = "client-key.pem";
/// DNS name in the server leaf's subjectAltName; clients verify against it.
pub const SERVER_NAME: &str = "localhost";
/// DNS name in the client leaf's subjectAltName.
pub const CLIENT_NAME: &str = "client.localhost";
/// Start of validity (year, month, day) of every certificate.
pub const NOT_BEFORE: (i32, u8, u8) = (2026, 1, 1);
/// End of validity (year, month, day) of every certificate.
pub const NOT_AFTER: (i32, u8, u8) = (2100, 1, 1);

/// The PEM bytes of one chain directory.
#[derive(Debug)]
pub struct CertFiles {
    /// Root CA certificate (PEM): the clients' and servers' only trust anchor.
    pub ca_cert: Vec<u8>,
    /// Server leaf then intermediate (PEM).
    pub server_chain: Vec<u8>,
    /// Server private key (PKCS#8 PEM).
    pub server_key: Vec<u8>,
    /// Client leaf then intermediate (PEM).
    pub client_chain: Vec<u8>,
    /// Client private key (PKCS#8 PEM).
    pub client_key: Vec<u8>,
}

impl CertFiles {
    /// The chain and key a side presents: the server's, or (mTLS) the client's.
    pub fn identity(&self, server: bool) -> (&[u8], &[u8]) {
        if server { (&self.server_chain, &self.server_key) } else { (&self.client_chain, &self.client_key) }
    }
}

/// Directory of `chain` under [`CERTS_DIR`].
pub fn dir(chain: CertChain) -> PathBuf {
    PathBuf::from(CERTS_DIR).join(chain.dir_name())
}

/// Reads `chain`'s PEM files once per process and returns them.
///
/// Errors: a missing or unreadable file (run `cargo run --bin generate-certs`).
pub fn load(chain: CertChain) -> Result<Arc<CertFiles>> {
    static CACHE: OnceLock<Mutex<HashMap<CertChain, Arc<CertFiles>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().map_err(|_| anyhow::anyhow!("certificate cache poisoned"))?;
    if let Some(files) = cache.get(&chain) {
        return Ok(files.clone());
    }
    let d = dir(chain);
    let read = |name: &str| {
        let path = d.join(name);
        fs::read(&path).with_context(|| {
            format!("reading {} (regenerate with `cargo run --bin generate-certs`)", path.display())
        })
    };
    let files = Arc::new(CertFiles {
        ca_cert: read(CA_CERT)?,
        server_chain: read(SERVER_CHAIN)?,
        server_key: read(SERVER_KEY)?,
        client_chain: read(CLIENT_CHAIN)?,
        client_key: read(CLIENT_KEY)?,
    });
    cache.insert(chain, files.clone());
    Ok(files)
}
