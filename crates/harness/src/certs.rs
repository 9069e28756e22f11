//! The committed certificate chains (`certs/<chain>/`), written by
//! `cargo run --bin generate-certs` and read at run time.
//!
//! Each chain directory holds PEM files: the root CA certificate (the only
//! trust anchor), the intermediate CA certificate, the server's and the
//! client's chain (leaf then intermediate) and their PKCS#8 private keys.

use std::{
    collections::HashMap,
    env, fs,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
};

use anyhow::{Context, Result, bail};
use rustls_pki_types::{CertificateDer, PrivatePkcs8KeyDer, pem::PemObject};

use crate::params::CertChain;

/// Where `generate-certs` writes and the harness reads: `certs/` in the
/// repository (this crate is crates/harness/ in it).
pub const CERTS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../certs");
/// Environment variable naming another directory to read the chains from
/// instead of [`CERTS_DIR`] (same layout: one directory per chain, e.g.
/// `ecdsa-p256/`, each with the files named below).
pub const CERTS_DIR_ENV: &str = "TLS_BENCH_CERTS_DIR";
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
    /// The directory they were read from.
    pub dir: PathBuf,
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

    /// The paths of the files [`CertFiles::identity`] returns, for error
    /// messages: `<dir>/server-chain.pem and <dir>/server-key.pem`.
    pub fn identity_files(&self, server: bool) -> String {
        let (chain, key) = if server { (SERVER_CHAIN, SERVER_KEY) } else { (CLIENT_CHAIN, CLIENT_KEY) };
        format!("{} and {}", self.dir.join(chain).display(), self.dir.join(key).display())
    }

    /// The path of the root CA certificate, for error messages.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join(CA_CERT)
    }
}

/// The directory holding the chain directories: [`CERTS_DIR_ENV`]'s value
/// when set, else [`CERTS_DIR`].
pub fn root() -> PathBuf {
    env::var_os(CERTS_DIR_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(CERTS_DIR))
}

/// Checks that [`root`] is a directory, before anything reads a chain from
/// it. Errors: it is not (a [`CERTS_DIR_ENV`] naming no directory: the
/// message names the value and what the directory must hold).
pub fn check_root() -> Result<()> {
    let root = root();
    if root.is_dir() {
        return Ok(());
    }
    let chains: Vec<String> = CertChain::ALL.iter().map(|c| format!("{}/", c.dir_name())).collect();
    match env::var_os(CERTS_DIR_ENV) {
        Some(v) => bail!(
            "{CERTS_DIR_ENV}={:?}: no such directory; it must hold one directory per chain ({}), as \
             `cargo run --bin generate-certs -- DIR` writes them",
            v.to_string_lossy(),
            chains.join(", ")
        ),
        None => bail!(
            "{}: no such directory; restore the committed certificates with `git checkout -- certs`",
            root.display()
        ),
    }
}

/// Directory of `chain` under [`root`].
pub fn dir(chain: CertChain) -> PathBuf {
    root().join(chain.dir_name())
}

/// Reads and checks `chain`'s files ([`read`]) once per process and returns
/// them.
///
/// Errors: as [`read`].
pub fn load(chain: CertChain) -> Result<Arc<CertFiles>> {
    static CACHE: OnceLock<Mutex<HashMap<CertChain, Arc<CertFiles>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().map_err(|_| anyhow::anyhow!("certificate cache poisoned"))?;
    if let Some(files) = cache.get(&chain) {
        return Ok(files.clone());
    }
    let files = Arc::new(read(&dir(chain))?);
    cache.insert(chain, files.clone());
    Ok(files)
}

/// Reads the PEM files of one chain directory and checks their shape, which
/// every library would otherwise report in its own words, or not at all:
/// the root file holds one certificate, each chain file two (leaf then
/// intermediate), each certificate valid now (an expired chain named as
/// such), each key file a PKCS#8 private key. Whether a key belongs
/// to its leaf is each library's own check when it loads them (the
/// configuration layer names both files in its error); parsing keys here
/// would need a crypto library in every build, old releases' included.
///
/// Errors: a missing or unreadable file, or a failed check; each names the
/// file and the cause.
pub fn read(dir: &Path) -> Result<CertFiles> {
    let file = |name: &str| -> Result<(PathBuf, Vec<u8>)> {
        let path = dir.join(name);
        let hint = if dir.starts_with(CERTS_DIR) {
            "; restore the committed certificates with `git checkout -- certs`".to_string()
        } else {
            format!(" (from {CERTS_DIR_ENV})")
        };
        let bytes = fs::read(&path).with_context(|| format!("reading {}{hint}", path.display()))?;
        Ok((path, bytes))
    };
    let (ca_path, ca_cert) = file(CA_CERT)?;
    certificates(&ca_path, &ca_cert, 1, "the root CA")?;
    let identity = |chain_name: &str, key_name: &str| -> Result<(Vec<u8>, Vec<u8>)> {
        let (chain_path, chain) = file(chain_name)?;
        let (key_path, key) = file(key_name)?;
        certificates(&chain_path, &chain, 2, "leaf then intermediate")?;
        private_key(&key_path, &key)?;
        Ok((chain, key))
    };
    let (server_chain, server_key) = identity(SERVER_CHAIN, SERVER_KEY)?;
    let (client_chain, client_key) = identity(CLIENT_CHAIN, CLIENT_KEY)?;
    Ok(CertFiles { dir: dir.to_path_buf(), ca_cert, server_chain, server_key, client_chain, client_key })
}

/// The `CERTIFICATE` blocks of the PEM file at `path` (bytes `pem`).
/// Errors: a block that does not decode, or not exactly `expected` blocks.
fn certificates(
    path: &Path,
    pem: &[u8],
    expected: usize,
    what: &str,
) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pem)
            .collect::<Result<_, _>>()
            .with_context(|| format!("{}: a PEM certificate does not decode", path.display()))?;
    if certs.len() != expected {
        bail!("{}: holds {} PEM certificate(s); expected {expected} ({what})", path.display(), certs.len());
    }
    for (i, der) in certs.iter().enumerate() {
        in_validity(path, i + 1, der)?;
    }
    Ok(certs)
}

/// Errors unless certificate number `n` of the file at `path` is valid now
/// (RFC 5280, section 4.1.2.5): one expired or not yet valid is named,
/// with its dates, before a library fails its handshake as "certificate
/// verify failed" or in words of its own. Errors too: it does not parse.
fn in_validity(path: &Path, n: usize, der: &CertificateDer<'_>) -> Result<()> {
    use x509_parser::prelude::{ASN1Time, FromDer, X509Certificate};
    let (_, cert) = X509Certificate::from_der(der.as_ref())
        .map_err(|e| anyhow::anyhow!("{}: certificate {n} does not parse: {e}", path.display()))?;
    let validity = cert.validity();
    let now = ASN1Time::now();
    let state = if now > validity.not_after {
        "expired"
    } else if now < validity.not_before {
        "is not yet valid"
    } else {
        return Ok(());
    };
    bail!(
        "{}: certificate {n} ({}) {state}: valid from {} to {}; make new chains with `cargo run --bin \
         generate-certs -- DIR`",
        path.display(),
        cert.subject(),
        validity.not_before,
        validity.not_after
    )
}

/// Checks that the PEM file at `path` (bytes `pem`) holds a PKCS#8 private
/// key. Errors: none, or one that does not decode.
fn private_key(path: &Path, pem: &[u8]) -> Result<()> {
    PrivatePkcs8KeyDer::from_pem_slice(pem)
        .with_context(|| format!("{}: no PKCS#8 private key (PEM `PRIVATE KEY`)", path.display()))?;
    Ok(())
}
