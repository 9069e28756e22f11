//! The floor through libcrypto, by the `openssl` crate's EVP calls: the
//! OpenSSL of this build (vendored 3.6, or the system's) or AWS-LC under
//! the crate (`aws-lc-config/openssl.toml`). A library's TLS layer calls
//! the same EVP interfaces (EVP_PKEY key generation and derivation,
//! EVP_DigestSign/Verify, EVP_CIPHER_CTX for records), so the floor pays
//! the same per-call costs (an OpenSSL 3 provider fetch, an EVP_PKEY_CTX)
//! as the library's own calls. Key exchange beyond X25519 goes through
//! [`super::ossl3`] on OpenSSL 3 (libssl's calls, ML-KEM-768 from 3.5);
//! AWS-LC under the crate has no ML-KEM floor.

use std::cell::RefCell;

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    config::openssl::{library_name, ossl},
    floor::{
        Backend, PublicKey,
        ops::{Hash, Kx, Op, Sig},
    },
    params::Aead,
};
use ossl::{
    cipher::{Cipher, CipherRef},
    cipher_ctx::CipherCtx,
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

/// A record key: one context each way, the key set once, the IV per record.
pub struct AeadKey {
    seal: RefCell<CipherCtx>,
    open: RefCell<CipherCtx>,
}

/// Key exchange beyond X25519: OpenSSL 3's as libssl calls it
/// ([`super::ossl3`]), or AWS-LC's legacy EC_KEY calls ([`aws_lc_kx`]).
#[cfg(not(openssl_awslc))]
use super::ossl3 as kx;
#[cfg(openssl_awslc)]
use aws_lc_kx as kx;

/// AWS-LC under the `openssl` crate: NIST-curve shares through the crate's
/// `EcKey` (AWS-LC's EVP has no providers: its TLS layer calls the same
/// EC_KEY functions), no ML-KEM through the crate.
#[cfg(openssl_awslc)]
mod aws_lc_kx {
    use anyhow::{Result, bail};

    use super::ossl::{
        bn::BigNumContext,
        ec::{EcGroup, EcKey, EcPoint, PointConversionForm},
        nid::Nid,
        pkey::{PKey, Private, Public},
    };
    use crate::floor::ops::Kx;

    const NO_MLKEM: &str = "the openssl crate has no ML-KEM interface on AWS-LC";

    fn curve(kx: Kx) -> Result<EcGroup> {
        let nid = match kx {
            Kx::P256 => Nid::X9_62_PRIME256V1,
            Kx::P384 => Nid::SECP384R1,
            _ => bail!("{kx} is not a NIST curve"),
        };
        Ok(EcGroup::from_curve_name(nid)?)
    }

    pub fn ec_key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
        let group = curve(kx)?;
        let key = EcKey::generate(&group)?;
        let mut ctx = BigNumContext::new()?;
        let public = key.public_key().to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
        Ok((PKey::from_ec_key(key)?, public))
    }

    pub fn ec_peer(private: &PKey<Private>, point: &[u8]) -> Result<PKey<Public>> {
        let ec = private.ec_key()?;
        let group = ec.group();
        let mut ctx = BigNumContext::new()?;
        let point = EcPoint::from_bytes(group, point, &mut ctx)?;
        Ok(PKey::from_ec_key(EcKey::from_public_key(group, &point)?)?)
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
        match op {
            Op::KeyGen(Kx::MlKem768) | Op::Encapsulate(_) | Op::Decapsulate(_) => kx::mlkem_unsupported(),
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
            Kx::P256 | Kx::P384 => kx::ec_key_gen(kx),
            Kx::MlKem768 => kx::mlkem_key_gen(),
        }
    }

    fn agree(kx: Kx, private: PKey<Private>, peer: &[u8]) -> Result<Vec<u8>> {
        let peer = match kx {
            Kx::X25519 => PKey::public_key_from_raw_bytes(peer, Id::X25519)?,
            Kx::P256 | Kx::P384 => kx::ec_peer(&private, peer)?,
            Kx::MlKem768 => bail!("ML-KEM-768 is a KEM, not an agreement"),
        };
        let mut deriver = Deriver::new(&private)?;
        deriver.set_peer(&peer)?;
        Ok(deriver.derive_to_vec()?)
    }

    fn encapsulate(_kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        kx::mlkem_encapsulate(peer)
    }

    fn decapsulate(_kx: Kx, private: PKey<Private>, ciphertext: &[u8]) -> Result<Vec<u8>> {
        kx::mlkem_decapsulate(&private, ciphertext)
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
            Kx::P256 | Kx::P384 => kx::ec_peer(&private, peer)?,
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
