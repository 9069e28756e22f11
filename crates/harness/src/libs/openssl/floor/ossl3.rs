//! OpenSSL 3's key exchange as its TLS layer calls it, where the `openssl`
//! crate has no wrapper: NIST-curve shares as encoded points
//! (`EVP_PKEY_get1_encoded_public_key`, `EVP_PKEY_set1_encoded_public_key`
//! on a key with our key's parameters: libssl's `key_share`, OpenSSL's
//! `ssl/s3_lib.c` and `ssl/statem`), which decodes and checks the peer's
//! point once (the crate's `EcPoint` and `EcKey` path is a legacy key that
//! each derivation exports to the provider again: more instructions than
//! the library's own), and ML-KEM-768 (OpenSSL 3.5 and later:
//! `EVP_PKEY_encapsulate`/`EVP_PKEY_decapsulate`, FIPS 203 sizes).
//! Records go through [`super::cipher_ctx`], as in OpenSSL 1.1.1. Not
//! built for OpenSSL 1.1.1 ([`super::ossl111`]) nor for AWS-LC under the
//! crate (no providers; its TLS layer's records go through EVP_AEAD),
//! whose module is in [`super::ossl`].

use std::{
    ffi::{c_int, c_uchar},
    ptr,
};

use anyhow::{Result, bail, ensure};
use foreign_types::ForeignType;

pub use super::cipher_ctx::{AeadKey, aead_key, open, seal};
use crate::{
    floor::ops::Kx,
    libs::openssl::config::{ffi, ossl},
};
use ossl::{
    error::ErrorStack,
    pkey::{PKey, Private},
};

unsafe extern "C" {
    // OpenSSL 3.0 and later (`man EVP_PKEY_set1_encoded_public_key`); the
    // openssl-sys bindings lack them.
    fn EVP_PKEY_get1_encoded_public_key(pkey: *mut ffi::EVP_PKEY, ppub: *mut *mut c_uchar) -> usize;
    fn EVP_PKEY_set1_encoded_public_key(
        pkey: *mut ffi::EVP_PKEY,
        publ: *const c_uchar,
        publen: usize,
    ) -> c_int;
}

/// ML-KEM-768's encapsulation-key, ciphertext and shared-secret sizes in
/// bytes (FIPS 203, table 3).
const MLKEM768_EK: usize = 1184;
const MLKEM768_CT: usize = 1088;
const MLKEM768_SS: usize = 32;

/// OpenSSL's name of a NIST curve.
fn curve_name(kx: Kx) -> Result<&'static str> {
    Ok(match kx {
        Kx::P256 => "P-256",
        Kx::P384 => "P-384",
        _ => bail!("{kx} is not a NIST curve"),
    })
}

/// Why this OpenSSL cannot do ML-KEM-768 (before 3.5), `None` when it can.
pub fn mlkem_unsupported() -> Option<String> {
    (ossl::version::number() < 0x3050_0000)
        .then(|| format!("{} has no ML-KEM (OpenSSL 3.5 added it)", ossl::version::version()))
}

/// A NIST-curve key pair and its public key's uncompressed point.
pub fn ec_key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
    let key = PKey::ec_gen(curve_name(kx)?)?;
    let mut out: *mut c_uchar = ptr::null_mut();
    // SAFETY: `key` is a live EVP_PKEY; on success `out` points to `len`
    // bytes OpenSSL allocated, copied and freed here.
    let public = unsafe {
        let len = EVP_PKEY_get1_encoded_public_key(key.as_ptr(), &mut out);
        ensure!(len > 0 && !out.is_null(), "EVP_PKEY_get1_encoded_public_key: {}", ErrorStack::get());
        let public = std::slice::from_raw_parts(out, len).to_vec();
        ffi::OPENSSL_free(out.cast());
        public
    };
    Ok((key, public))
}

/// The peer's NIST-curve public key `point` on `private`'s curve.
pub fn ec_peer(private: &PKey<Private>, point: &[u8]) -> Result<PKey<ossl::pkey::Public>> {
    // SAFETY: EVP_PKEY_new returns an owned key (null on failure, checked)
    // that `PKey` takes; both calls read the live keys and `point`.
    unsafe {
        let raw = ffi::EVP_PKEY_new();
        ensure!(!raw.is_null(), "EVP_PKEY_new: {}", ErrorStack::get());
        let peer = PKey::<ossl::pkey::Public>::from_ptr(raw);
        ensure!(
            ffi::EVP_PKEY_copy_parameters(peer.as_ptr(), private.as_ptr()) == 1,
            "EVP_PKEY_copy_parameters: {}",
            ErrorStack::get()
        );
        ensure!(
            EVP_PKEY_set1_encoded_public_key(peer.as_ptr(), point.as_ptr(), point.len()) == 1,
            "the peer's point: {}",
            ErrorStack::get()
        );
        Ok(peer)
    }
}

/// An ML-KEM-768 key pair and its encapsulation key.
pub fn mlkem_key_gen() -> Result<(PKey<Private>, Vec<u8>)> {
    if let Some(why) = mlkem_unsupported() {
        bail!(why);
    }
    // SAFETY: EVP_PKEY_Q_keygen returns an owned key or null (checked).
    let key = unsafe {
        let raw = ffi::EVP_PKEY_Q_keygen(ptr::null_mut(), ptr::null_mut(), c"ML-KEM-768".as_ptr());
        ensure!(!raw.is_null(), "ML-KEM-768 key generation: {}", ErrorStack::get());
        PKey::<Private>::from_ptr(raw)
    };
    let public = key.raw_public_key()?;
    ensure!(public.len() == MLKEM768_EK, "an ML-KEM-768 encapsulation key of {} bytes", public.len());
    Ok((key, public))
}

/// An encapsulation to the encapsulation key `peer`: (ciphertext, shared
/// secret).
pub fn mlkem_encapsulate(peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let key = PKey::public_key_from_raw_bytes_ex(None, ossl::pkey::KeyType::ML_KEM_768, None, peer)?;
    let ctx = ossl::pkey_ctx::PkeyCtx::new(&key)?;
    let (mut ct, mut ss) = (vec![0u8; MLKEM768_CT], vec![0u8; MLKEM768_SS]);
    let (mut ct_len, mut ss_len) = (ct.len(), ss.len());
    // SAFETY: `ctx` is live; the buffers hold the lengths passed.
    unsafe {
        ensure!(ffi::EVP_PKEY_encapsulate_init(ctx.as_ptr(), ptr::null()) == 1, "{}", ErrorStack::get());
        ensure!(
            ffi::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                ct.as_mut_ptr(),
                &mut ct_len,
                ss.as_mut_ptr(),
                &mut ss_len
            ) == 1,
            "ML-KEM-768 encapsulation: {}",
            ErrorStack::get()
        );
    }
    ensure!(ct_len == MLKEM768_CT && ss_len == MLKEM768_SS, "ML-KEM-768: {ct_len} and {ss_len} bytes");
    Ok((ct, ss))
}

/// The shared secret in `ciphertext` for `private`.
pub fn mlkem_decapsulate(private: &PKey<Private>, ciphertext: &[u8]) -> Result<Vec<u8>> {
    let ctx = ossl::pkey_ctx::PkeyCtx::new(private)?;
    let mut ss = vec![0u8; MLKEM768_SS];
    let mut ss_len = ss.len();
    // SAFETY: `ctx` is live; the buffers hold the lengths passed.
    unsafe {
        ensure!(ffi::EVP_PKEY_decapsulate_init(ctx.as_ptr(), ptr::null()) == 1, "{}", ErrorStack::get());
        ensure!(
            ffi::EVP_PKEY_decapsulate(
                ctx.as_ptr(),
                ss.as_mut_ptr(),
                &mut ss_len,
                ciphertext.as_ptr(),
                ciphertext.len()
            ) == 1,
            "ML-KEM-768 decapsulation: {}",
            ErrorStack::get()
        );
    }
    ensure!(ss_len == MLKEM768_SS, "ML-KEM-768: a {ss_len}-byte secret");
    Ok(ss)
}
