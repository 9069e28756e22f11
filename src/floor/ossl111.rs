//! OpenSSL 1.1.1's key exchange as its TLS layer calls it: NIST-curve
//! shares through the legacy `EC_KEY` calls ([`super::ec_key`]), which is
//! what 1.1.1's EVP_PKEY of type EC holds. Its libssl makes a share with
//! `ssl_generate_pkey_group` (ssl/s3_lib.c: `EVP_PKEY_keygen` on the
//! curve's parameters) and encodes it with
//! `EVP_PKEY_get1_tls_encodedpoint` (`EC_KEY_key2buf`, the uncompressed
//! point); it reads the peer's with `EVP_PKEY_set1_tls_encodedpoint`
//! (`EC_KEY_oct2key`) on a key with the same parameters
//! (ssl/statem/extensions_clnt.c, extensions_srvr.c). No ML-KEM (OpenSSL
//! 3.5 added it). Records go through [`super::cipher_ctx`], as in OpenSSL
//! 3. Built for OpenSSL before 3.0 (cfg `not(ossl300)`, openssl-sys's
//! version), where [`super::ossl3`]'s calls do not exist.

use anyhow::{Result, bail};

pub use super::cipher_ctx::{AeadKey, aead_key, open, seal};
use crate::{
    config::openssl::ossl,
    floor::{ec_key, ops::Kx},
};
use ossl::pkey::{PKey, Private, Public};

/// Why this OpenSSL has no ML-KEM-768.
const NO_MLKEM: &str = "OpenSSL 1.1.1 has no ML-KEM (OpenSSL 3.5 added it)";

/// A NIST-curve key pair and its public key's uncompressed point.
pub fn ec_key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
    ec_key::key_gen(kx)
}

/// The peer's point on `private`'s group.
pub fn ec_peer(private: &PKey<Private>, point: &[u8]) -> Result<PKey<Public>> {
    ec_key::peer(private.ec_key()?.group(), point)
}

pub fn mlkem_unsupported() -> Option<String> {
    Some(NO_MLKEM.to_string())
}

pub fn mlkem_key_gen() -> Result<(PKey<Private>, Vec<u8>)> {
    bail!(NO_MLKEM)
}

pub fn mlkem_encapsulate(_peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    bail!(NO_MLKEM)
}

pub fn mlkem_decapsulate(_private: &PKey<Private>, _ciphertext: &[u8]) -> Result<Vec<u8>> {
    bail!(NO_MLKEM)
}
