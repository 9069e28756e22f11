//! The floor through libcrypto, by the `openssl` crate's EVP calls: the
//! OpenSSL of this build (vendored 3.6, or the system's) or AWS-LC under
//! the crate (`aws-lc-config/openssl.toml`). A library's TLS layer calls
//! the same EVP interfaces (EVP_PKEY key generation and derivation,
//! EVP_DigestSign/Verify, EVP_CIPHER_CTX for records), so the floor pays
//! the same per-call costs (an OpenSSL 3 provider fetch, an EVP_PKEY_CTX)
//! as the library's own calls. The crate has no ML-KEM interface, so
//! X25519MLKEM768 has no floor here yet.

use std::cell::RefCell;

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    config::openssl::{ffi, library_name, ossl},
    floor::{
        Backend, PublicKey,
        ops::{Hash, Kx, Op, Sig},
    },
    params::Aead,
};
use ossl::{
    bn::BigNumContext,
    cipher::{Cipher, CipherRef},
    cipher_ctx::CipherCtx,
    derive::Deriver,
    ec::{EcGroup, EcKey, EcPoint, PointConversionForm},
    error::ErrorStack,
    hash::{MessageDigest, hash},
    md::Md,
    nid::Nid,
    pkey::{Id, PKey, PKeyRef, Private, Public},
    pkey_ctx::{PkeyCtx, PkeyCtxRef},
    rsa::Padding,
    sign::RsaPssSaltlen,
};

/// The type of `HMAC_Init_ex`'s key length: `int` in OpenSSL, `size_t` in
/// AWS-LC.
#[cfg(not(openssl_awslc))]
type HmacKeyLen = std::ffi::c_int;
#[cfg(openssl_awslc)]
type HmacKeyLen = usize;

/// libcrypto through the `openssl` crate, as a floor backend.
pub struct Ossl;

/// A record key: one context each way, the key set once, the IV per record.
pub struct AeadKey {
    seal: RefCell<CipherCtx>,
    open: RefCell<CipherCtx>,
}

fn curve(kx: Kx) -> Result<EcGroup> {
    let nid = match kx {
        Kx::P256 => Nid::X9_62_PRIME256V1,
        Kx::P384 => Nid::SECP384R1,
        _ => bail!("{kx} is not a NIST curve"),
    };
    Ok(EcGroup::from_curve_name(nid)?)
}

fn digest(sig: Sig) -> MessageDigest {
    match sig {
        Sig::EcdsaP384Sha384 => MessageDigest::sha384(),
        _ => MessageDigest::sha256(),
    }
}

fn cipher(aead: Aead) -> &'static CipherRef {
    match aead {
        Aead::Aes128Gcm => Cipher::aes_128_gcm(),
        Aead::Aes256Gcm => Cipher::aes_256_gcm(),
        Aead::Chacha20Poly1305 => Cipher::chacha20_poly1305(),
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
    type AeadKey = AeadKey;
    type VerifyKey = PreparedKey<Public>;

    fn name() -> String {
        library_name()
    }

    fn unsupported(op: Op) -> Option<String> {
        matches!(op, Op::KeyGen(Kx::MlKem768) | Op::Encapsulate(_) | Op::Decapsulate(_))
            .then(|| "the openssl crate has no ML-KEM interface".to_string())
    }

    fn key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
        match kx {
            Kx::X25519 => {
                let key = PKey::generate_x25519()?;
                let public = key.raw_public_key()?;
                Ok((key, public))
            }
            Kx::P256 | Kx::P384 => {
                let group = curve(kx)?;
                let key = EcKey::generate(&group)?;
                let mut ctx = BigNumContext::new()?;
                let public =
                    key.public_key().to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
                Ok((PKey::from_ec_key(key)?, public))
            }
            Kx::MlKem768 => bail!("the openssl crate has no ML-KEM interface"),
        }
    }

    fn agree(kx: Kx, private: PKey<Private>, peer: &[u8]) -> Result<Vec<u8>> {
        let peer = match kx {
            Kx::X25519 => PKey::public_key_from_raw_bytes(peer, Id::X25519)?,
            Kx::P256 | Kx::P384 => {
                let group = curve(kx)?;
                let mut ctx = BigNumContext::new()?;
                let point = EcPoint::from_bytes(&group, peer, &mut ctx)?;
                PKey::from_ec_key(EcKey::from_public_key(&group, &point)?)?
            }
            Kx::MlKem768 => bail!("ML-KEM-768 is a KEM, not an agreement"),
        };
        let mut deriver = Deriver::new(&private)?;
        deriver.set_peer(&peer)?;
        Ok(deriver.derive_to_vec()?)
    }

    fn encapsulate(_kx: Kx, _peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        bail!("the openssl crate has no ML-KEM interface")
    }

    fn decapsulate(_kx: Kx, _private: PKey<Private>, _ciphertext: &[u8]) -> Result<Vec<u8>> {
        bail!("the openssl crate has no ML-KEM interface")
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
        let md = match hash {
            Hash::Sha256 => MessageDigest::sha256(),
            Hash::Sha384 => MessageDigest::sha384(),
        };
        let mut out = vec![0u8; md.size()];
        let mut len: std::ffi::c_uint = 0;
        let key_len = HmacKeyLen::try_from(key.len())?;
        // SAFETY: the context is made, used and freed here; every pointer
        // is to a live buffer of the length passed with it (`out` holds
        // the digest's size, which HMAC_Final writes at most).
        let ok = unsafe {
            let ctx = ffi::HMAC_CTX_new();
            ensure!(!ctx.is_null(), "HMAC_CTX_new failed");
            let ok = ffi::HMAC_Init_ex(ctx, key.as_ptr().cast(), key_len, md.as_ptr(), std::ptr::null_mut())
                == 1
                && ffi::HMAC_Update(ctx, data.as_ptr(), data.len()) == 1
                && ffi::HMAC_Final(ctx, out.as_mut_ptr(), &mut len) == 1;
            ffi::HMAC_CTX_free(ctx);
            ok
        };
        ensure!(ok, "HMAC failed: {}", ErrorStack::get());
        out.truncate(usize::try_from(len)?);
        Ok(out)
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        ensure!(key.len() == cipher(aead).key_length(), "an AEAD key of the wrong length");
        let mut seal = CipherCtx::new()?;
        seal.encrypt_init(Some(cipher(aead)), Some(key), None)?;
        let mut open = CipherCtx::new()?;
        open.decrypt_init(Some(cipher(aead)), Some(key), None)?;
        Ok(AeadKey { seal: RefCell::new(seal), open: RefCell::new(open) })
    }

    fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
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

    fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
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
}
