//! The floor through libcrypto, by the `openssl` crate's EVP calls: the
//! OpenSSL of this build (vendored 3.6, or the system's) or AWS-LC under
//! the crate (`aws-lc-config/openssl.toml`). A library's TLS layer calls
//! the same EVP interfaces (EVP_PKEY key generation and derivation,
//! EVP_DigestSign/Verify), so the floor pays the same per-call costs (an
//! OpenSSL 3 provider fetch, an EVP_PKEY_CTX) as the library's own calls.
//! What differs by library is in one module each ([`compat`]): key
//! exchange beyond X25519 and records go through [`super::ossl3`] on
//! OpenSSL 3 (libssl's calls, ML-KEM-768 from 3.5; records through
//! EVP_CIPHER_CTX, [`super::cipher_ctx`]), through [`super::ossl111`] on
//! OpenSSL 1.1.1 (NIST curves through [`super::ec_key`], records as in 3),
//! and through [`aws_lc`] on AWS-LC under the crate
//! (NIST curves through [`super::ec_key`], records through EVP_AEAD as its
//! libssl seals them; no ML-KEM floor).

use std::cell::RefCell;

use anyhow::{Result, bail, ensure};

use crate::{
    floor::{
        Backend, PublicKey,
        ops::{Hash, Kx, Op, Sig},
    },
    libs::openssl::config::{library_name, ossl},
    params::Aead,
};
use ossl::{
    derive::Deriver,
    error::ErrorStack,
    hash::{MessageDigest, hash},
    md::Md,
    pkey::{Id, PKey, PKeyRef, Private, Public},
    pkey_ctx::{PkeyCtx, PkeyCtxRef},
    rsa::Padding,
    sign::RsaPssSaltlen,
};

/// libcrypto through the `openssl` crate, as a floor backend.
pub struct Ossl;

#[cfg(all(not(openssl_awslc), ossl300))]
use super::ossl3 as compat;
/// What differs by library: key exchange beyond X25519 and the records'
/// AEAD, OpenSSL 3's as libssl calls them ([`super::ossl3`]), OpenSSL
/// 1.1.1's ([`super::ossl111`]), or AWS-LC's ([`aws_lc`]).
#[cfg(all(not(openssl_awslc), not(ossl300)))]
use super::ossl111 as compat;
#[cfg(openssl_awslc)]
use aws_lc as compat;

/// AWS-LC under the `openssl` crate: NIST-curve shares through the legacy
/// EC_KEY calls ([`super::ec_key`]; AWS-LC's EVP has no providers), no
/// ML-KEM through the crate, and records through EVP_AEAD.
///
/// Records: AWS-LC's libssl seals and opens every TLS 1.2 and 1.3 AEAD
/// suite through EVP_AEAD, not EVP_CIPHER: `ssl_cipher_get_evp_aead`
/// (ssl/ssl_cipher.cc) picks `EVP_aead_aes_128_gcm_tls13`/`_tls12`,
/// `EVP_aead_aes_256_gcm_tls13`/`_tls12` and `EVP_aead_chacha20_poly1305`,
/// and `SSLAEADContext` (ssl/ssl_aead_ctx.cc) keys one `EVP_AEAD_CTX` per
/// direction once (`EVP_AEAD_CTX_init_with_direction`, the default tag
/// length), then seals each record out of place, from the caller's data
/// into the write buffer with the TLS 1.3 content type as `extra_in`
/// (`EVP_AEAD_CTX_seal_scatter`; [`Backend::seal_from`]), and opens it in
/// place (`EVP_AEAD_CTX_open`). The crate's `Cipher` path (EVP_CIPHER_CTX, as
/// OpenSSL's libssl calls it) is another implementation in AWS-LC: its
/// ChaCha20-Poly1305 runs ChaCha20 and Poly1305 in two passes
/// (`cipher_chacha20_poly1305_do_cipher`,
/// crypto/cipher_extra/e_chacha20poly1305.c) where the EVP_AEAD's seals
/// and opens in one fused pass on x86-64 with SSE4.1 and on AArch64
/// (`chacha20_poly1305_seal`/`_open`), so a floor through it measured
/// above the library. The floor does as `SSLAEADContext` does for all three
/// AEADs, through openssl-sys's AWS-LC bindings (aws-lc-sys), with the
/// generic `EVP_aead_aes_*_gcm` as the BoringSSL floor does: the
/// `_tls13`/`_tls12` variants add only a check that sealing nonces
/// increase (a compare per record, and an XOR for TLS 1.3's) and would
/// refuse the ticket key's random nonces. The generic AEADs keep no state
/// between calls, so one context serves both directions.
#[cfg(openssl_awslc)]
mod aws_lc {
    use std::ptr::{self, NonNull};

    use anyhow::{Context, Result, anyhow, ensure};

    use super::ossl::error::ErrorStack;
    use crate::{libs::openssl::config::ffi, params::Aead};

    crate::libs::openssl::floor::ec_key::ec_key_kx_without_mlkem!(
        "the openssl crate has no ML-KEM interface on AWS-LC"
    );

    /// An AEAD tag, in bytes: all three AEADs' default.
    const TAG_LEN: usize = 16;

    /// `EVP_AEAD_DEFAULT_TAG_LENGTH` (0: the AEAD's own, [`TAG_LEN`]), as
    /// `SSLAEADContext` keys its contexts.
    const DEFAULT_TAG_LEN: usize = ffi::EVP_AEAD_DEFAULT_TAG_LENGTH as usize;

    /// A keyed `EVP_AEAD_CTX` (`EVP_AEAD_CTX_new`), freed on drop.
    pub struct AeadKey(NonNull<ffi::EVP_AEAD_CTX>);

    impl Drop for AeadKey {
        fn drop(&mut self) {
            // SAFETY: the context came from EVP_AEAD_CTX_new and is freed
            // once, here.
            unsafe { ffi::EVP_AEAD_CTX_free(self.0.as_ptr()) }
        }
    }

    fn evp_aead(aead: Aead) -> *const ffi::EVP_AEAD {
        // SAFETY: each returns a pointer to a static EVP_AEAD.
        unsafe {
            match aead {
                Aead::Aes128Gcm => ffi::EVP_aead_aes_128_gcm(),
                Aead::Aes256Gcm => ffi::EVP_aead_aes_256_gcm(),
                Aead::Chacha20Poly1305 => ffi::EVP_aead_chacha20_poly1305(),
            }
        }
    }

    /// A record key of `aead`, keyed once. Errors: a key of the wrong
    /// length.
    pub fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        let alg = evp_aead(aead);
        // SAFETY: `alg` is a static EVP_AEAD; EVP_AEAD_CTX_new reads
        // `key.len()` bytes of `key` and returns an owned context or null.
        let ctx = unsafe {
            ensure!(key.len() == ffi::EVP_AEAD_key_length(alg), "an AEAD key of the wrong length");
            ffi::EVP_AEAD_CTX_new(alg, key.as_ptr(), key.len(), DEFAULT_TAG_LEN)
        };
        NonNull::new(ctx).map(AeadKey).with_context(|| format!("EVP_AEAD_CTX_new: {}", ErrorStack::get()))
    }

    /// Encrypts `in_out` in place and appends the tag
    /// (`EVP_AEAD_CTX_seal_scatter`, as `SSLAEADContext::SealScatter`).
    pub fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        let len = in_out.len();
        in_out.resize(len + TAG_LEN, 0);
        let (data, tag) = in_out.split_at_mut(len);
        let data = data.as_mut_ptr();
        let mut tag_len = 0;
        // SAFETY: `key` is a keyed context; `data` is the input and the
        // output, exactly aliased (which EVP_AEAD_CTX_seal_scatter allows),
        // of `len` bytes; `tag` holds TAG_LEN bytes, passed as its most;
        // the nonce and the AAD are passed with their lengths; no extra
        // input.
        let ok = unsafe {
            ffi::EVP_AEAD_CTX_seal_scatter(
                key.0.as_ptr(),
                data,
                tag.as_mut_ptr(),
                &mut tag_len,
                TAG_LEN,
                nonce.as_ptr(),
                nonce.len(),
                data.cast_const(),
                len,
                ptr::null(),
                0,
                aad.as_ptr(),
                aad.len(),
            )
        } == 1;
        ensure!(ok, "sealing failed: {}", ErrorStack::get());
        ensure!(tag_len == TAG_LEN, "a tag of {tag_len} bytes");
        Ok(())
    }

    /// Seals `fragment || content_type` out of place into `out`, as
    /// `SSLAEADContext::SealScatter` seals a TLS 1.3 record
    /// ([`super::super::evp_aead::seal_from`]).
    pub fn seal_from(
        key: &AeadKey,
        nonce: [u8; 12],
        aad: &[u8],
        fragment: &[u8],
        content_type: u8,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        // SAFETY: `key` owns its keyed context (freed only on drop).
        unsafe {
            crate::libs::openssl::floor::evp_aead::seal_from(
                key.0.as_ptr(),
                nonce,
                aad,
                fragment,
                content_type,
                out,
            )
        }
    }

    /// Decrypts `in_out` (ciphertext and tag) in place
    /// (`EVP_AEAD_CTX_open`, as `SSLAEADContext::Open`); returns the
    /// plaintext's length. Errors: the tag does not verify.
    pub fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        let len = in_out.len();
        let plain = len.checked_sub(TAG_LEN).context("a record shorter than its tag")?;
        let data = in_out.as_mut_ptr();
        let mut out_len = 0;
        // SAFETY: `key` is a keyed context; `data` is the input and the
        // output, exactly aliased (which EVP_AEAD_CTX_open allows), of
        // `len` bytes, the most it writes; the nonce and the AAD are
        // passed with their lengths.
        let ok = unsafe {
            ffi::EVP_AEAD_CTX_open(
                key.0.as_ptr(),
                data,
                &mut out_len,
                len,
                nonce.as_ptr(),
                nonce.len(),
                data.cast_const(),
                len,
                aad.as_ptr(),
                aad.len(),
            )
        } == 1;
        if !ok {
            // The failure's errors, off the thread's queue.
            drop(ErrorStack::get());
            return Err(anyhow!("a record does not decrypt"));
        }
        ensure!(out_len == plain, "opening wrote {out_len} of {plain} bytes");
        Ok(plain)
    }
}

fn digest(sig: Sig) -> MessageDigest {
    match sig {
        Sig::EcdsaP384Sha384 => MessageDigest::sha384(),
        _ => MessageDigest::sha256(),
    }
}

/// A key with its signing or verifying context, initialised once (as
/// `openssl speed` prepares its keys): each signature hashes the message
/// and signs the digest (`EVP_PKEY_sign`), each verification the same
/// (`EVP_PKEY_verify`).
pub struct PreparedKey<T> {
    ctx: RefCell<PkeyCtx<T>>,
    md: MessageDigest,
}

/// A context of `key` for `sig`'s scheme, initialised by `init`
/// (`sign_init` or `verify_init`).
fn prepare<T>(
    key: &PKeyRef<T>,
    sig: Sig,
    init: fn(&mut PkeyCtxRef<T>) -> Result<(), ErrorStack>,
) -> Result<PreparedKey<T>> {
    let want = match sig {
        Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384 => Id::EC,
        Sig::RsaPssSha256(_) | Sig::RsaPkcs1Sha256(_) => Id::RSA,
    };
    ensure!(key.id() == want, "{sig}: a key of another type");
    let md = digest(sig);
    let mut ctx = PkeyCtx::new(key)?;
    init(&mut ctx)?;
    match sig {
        Sig::RsaPssSha256(_) => {
            ctx.set_rsa_padding(Padding::PKCS1_PSS)?;
            ctx.set_signature_md(Md::sha256())?;
            ctx.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
        }
        Sig::RsaPkcs1Sha256(_) => {
            ctx.set_rsa_padding(Padding::PKCS1)?;
            ctx.set_signature_md(Md::sha256())?;
        }
        Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384 => {}
    }
    Ok(PreparedKey { ctx: RefCell::new(ctx), md })
}

impl Backend for Ossl {
    type Private = PKey<Private>;
    type SigningKey = PreparedKey<Private>;
    type AeadKey = compat::AeadKey;
    type VerifyKey = PreparedKey<Public>;

    fn name() -> String {
        library_name()
    }

    fn unsupported(op: Op) -> Option<String> {
        match op {
            Op::KeyGen(Kx::MlKem768) | Op::Encapsulate(_) | Op::Decapsulate(_) => compat::mlkem_unsupported(),
            _ => None,
        }
    }

    fn key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
        match kx {
            Kx::X25519 => {
                let key = PKey::generate_x25519()?;
                let public = key.raw_public_key()?;
                Ok((key, public))
            }
            Kx::P256 | Kx::P384 => compat::ec_key_gen(kx),
            Kx::MlKem768 => compat::mlkem_key_gen(),
        }
    }

    fn agree(kx: Kx, private: PKey<Private>, peer: &[u8]) -> Result<Vec<u8>> {
        let peer = match kx {
            Kx::X25519 => PKey::public_key_from_raw_bytes(peer, Id::X25519)?,
            Kx::P256 | Kx::P384 => compat::ec_peer(&private, peer)?,
            Kx::MlKem768 => bail!("ML-KEM-768 is a KEM, not an agreement"),
        };
        let mut deriver = Deriver::new(&private)?;
        deriver.set_peer(&peer)?;
        Ok(deriver.derive_to_vec()?)
    }

    fn encapsulate(_kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        compat::mlkem_encapsulate(peer)
    }

    fn decapsulate(_kx: Kx, private: PKey<Private>, ciphertext: &[u8]) -> Result<Vec<u8>> {
        compat::mlkem_decapsulate(&private, ciphertext)
    }

    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<PreparedKey<Private>> {
        let key = PKey::private_key_from_pkcs8(pkcs8)?;
        prepare(&key, sig, PkeyCtxRef::sign_init)
    }

    fn sign(key: &PreparedKey<Private>, _sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
        let digest = hash(key.md, msg)?;
        let mut out = Vec::new();
        key.ctx.borrow_mut().sign_to_vec(&digest, &mut out)?;
        Ok(out)
    }

    fn verify_key(sig: Sig, public: &PublicKey) -> Result<PreparedKey<Public>> {
        let key = PKey::public_key_from_der(&public.spki)?;
        prepare(&key, sig, PkeyCtxRef::verify_init)
    }

    fn verify(sig: Sig, key: &PreparedKey<Public>, msg: &[u8], signature: &[u8]) -> Result<()> {
        let digest = hash(key.md, msg)?;
        // A wrong signature is false; a malformed one an error of libcrypto.
        match key.ctx.borrow_mut().verify(&digest, signature) {
            Ok(true) => Ok(()),
            Ok(false) => bail!("{sig}: the signature does not verify"),
            Err(e) => bail!("{sig}: the signature does not verify ({e})"),
        }
    }

    /// Through `HMAC_CTX` (HMAC_Init_ex, Update, Final): libcrypto's own
    /// HMAC, keyed anew each call as each key-schedule step is. (The
    /// crate's `PKey::hmac` and `Signer` go through an EVP_PKEY and a
    /// DigestSign context, about ten times the cost here on OpenSSL 3.)
    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
        Ok(super::hmac_ctx::hmacs(hash, key, &[data])?.remove(0))
    }

    /// One `HMAC_CTX` keyed once; each HMAC restarts it from the keyed
    /// state (`HMAC_Init_ex` with no key), as TLS1-PRF's P_hash does.
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        super::hmac_ctx::hmacs(hash, key, data)
    }

    /// The peer's key decoded and a derivation context made (with the
    /// peer set) before the clock; the derivation alone after.
    fn agree_prepared(
        kx: Kx,
        private: PKey<Private>,
        peer: &[u8],
    ) -> Result<Box<dyn FnOnce() -> Result<Vec<u8>>>> {
        let peer = match kx {
            Kx::X25519 => PKey::public_key_from_raw_bytes(peer, Id::X25519)?,
            Kx::P256 | Kx::P384 => compat::ec_peer(&private, peer)?,
            Kx::MlKem768 => bail!("ML-KEM-768 is a KEM, not an agreement"),
        };
        let mut ctx = PkeyCtx::new(&private)?;
        ctx.derive_init()?;
        ctx.derive_set_peer(&peer)?;
        Ok(Box::new(move || {
            let mut out = Vec::new();
            ctx.derive_to_vec(&mut out)?;
            Ok(out)
        }))
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<compat::AeadKey> {
        compat::aead_key(aead, key)
    }

    fn seal(key: &compat::AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        compat::seal(key, nonce, aad, in_out)
    }

    /// Out of place through EVP_AEAD on AWS-LC ([`aws_lc::seal_from`]), as
    /// its libssl seals; copied then sealed in place on OpenSSL 3 (the
    /// default), as OpenSSL's libssl seals.
    #[cfg(openssl_awslc)]
    fn seal_from(
        key: &compat::AeadKey,
        nonce: [u8; 12],
        aad: &[u8],
        fragment: &[u8],
        content_type: u8,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        aws_lc::seal_from(key, nonce, aad, fragment, content_type, out)
    }

    fn open(key: &compat::AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        compat::open(key, nonce, aad, in_out)
    }
}
