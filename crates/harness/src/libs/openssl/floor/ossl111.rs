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

pub use super::cipher_ctx::{AeadKey, aead_key, open, seal};

super::ec_key::ec_key_kx_without_mlkem!("OpenSSL 1.1.1 has no ML-KEM (OpenSSL 3.5 added it)");
