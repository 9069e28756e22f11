//! OpenSSL's records as its TLS layer seals and opens them: the crate's
//! `CipherCtx` (EVP_CIPHER_CTX), the key set once per direction, then per
//! record the nonce, the AAD, the data in place and the 16-byte tag, as
//! OpenSSL's TLS 1.3 record layer calls it (`tls13_cipher`,
//! ssl/record/methods/tls13_meth.c in 3.x; `tls13_enc`, ssl/record/ssl3_record_tls13.c
//! in 1.1.1). Shared by the OpenSSL 3 ([`super::ossl3`]) and 1.1.1
//! ([`super::ossl111`]) modules; AWS-LC under the crate seals through
//! EVP_AEAD instead ([`super::ossl`]).

use std::cell::RefCell;

use anyhow::{Context, Result, anyhow, ensure};

use crate::{libs::openssl::config::ossl, params::Aead};
use ossl::{
    cipher::{Cipher, CipherRef},
    cipher_ctx::CipherCtx,
};

/// A record key: one context each way, the key set once, the IV per record.
pub struct AeadKey {
    seal: RefCell<CipherCtx>,
    open: RefCell<CipherCtx>,
}

fn cipher(aead: Aead) -> &'static CipherRef {
    match aead {
        Aead::Aes128Gcm => Cipher::aes_128_gcm(),
        Aead::Aes256Gcm => Cipher::aes_256_gcm(),
        Aead::Chacha20Poly1305 => Cipher::chacha20_poly1305(),
    }
}

/// A record key of `aead`: a context each way, keyed once.
pub fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
    ensure!(key.len() == cipher(aead).key_length(), "an AEAD key of the wrong length");
    let mut seal = CipherCtx::new()?;
    seal.encrypt_init(Some(cipher(aead)), Some(key), None)?;
    let mut open = CipherCtx::new()?;
    open.decrypt_init(Some(cipher(aead)), Some(key), None)?;
    Ok(AeadKey { seal: RefCell::new(seal), open: RefCell::new(open) })
}

/// Encrypts `in_out` in place and appends the 16-byte tag.
pub fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
    let mut ctx = key.seal.borrow_mut();
    ctx.encrypt_init(None, None, Some(&nonce))?;
    ctx.cipher_update(aad, None)?;
    let len = in_out.len();
    let n = ctx.cipher_update_inplace(in_out, len)?;
    ensure!(n == len, "sealing wrote {n} of {len} bytes");
    ctx.cipher_final(&mut [])?;
    let mut tag = [0u8; 16];
    ctx.tag(&mut tag)?;
    in_out.extend_from_slice(&tag);
    Ok(())
}

/// Decrypts `in_out` (ciphertext and tag) in place; returns the
/// plaintext's length. Errors: the tag does not verify.
pub fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
    let len = in_out.len().checked_sub(16).context("a record shorter than its tag")?;
    let mut ctx = key.open.borrow_mut();
    ctx.decrypt_init(None, None, Some(&nonce))?;
    ctx.set_tag(&in_out[len..])?;
    ctx.cipher_update(aad, None)?;
    let n = ctx.cipher_update_inplace(&mut in_out[..len], len)?;
    ensure!(n == len, "opening wrote {n} of {len} bytes");
    ctx.cipher_final(&mut []).map_err(|_| anyhow!("a record does not decrypt"))?;
    Ok(len)
}
