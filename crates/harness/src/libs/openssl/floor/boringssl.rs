//! The floor through BoringSSL's libcrypto (the `boring` crate, and
//! `boring-sys` where the crate has no interface), called the way
//! BoringSSL's own TLS layer calls it (ssl/ssl_key_share.cc,
//! ssl/ssl_privkey.cc, ssl/tls13_enc.cc, the record layer):
//!
//! - X25519: `X25519_keypair` and `X25519` (boring-sys; the crate has no
//!   X25519 agreement of its own but through an EVP_PKEY);
//! - ECDH over secp256r1/secp384r1: `EcKey::generate` and the point's
//!   uncompressed encoding, the peer's point decoded on the curve's group
//!   ([`super::ec_key`], shared with AWS-LC under the `openssl` crate) and
//!   `Deriver` (EVP_PKEY_derive);
//! - X25519MLKEM768's ML-KEM-768: `MLKEM768_generate_key`,
//!   `MLKEM768_parse_public_key` + `MLKEM768_encap`, `MLKEM768_decap`
//!   (boring-sys; the crate's `mlkem` module is behind its `mlkem` feature,
//!   off in this build, and re-parses its own public key at generation);
//! - signatures: `Signer`/`Verifier` (EVP_DigestSignInit + EVP_DigestSign,
//!   EVP_DigestVerifyInit + EVP_DigestVerify) on a key decoded once, as
//!   BoringSSL signs a CertificateVerify and verifies a certificate: it
//!   has no provider fetch, so a context per call is the library's cost;
//! - HMAC: `boring::hmac::Hmac` (HMAC_CTX: HMAC_Init_ex, Update, Final),
//!   keyed anew each call as each key-schedule step is;
//! - AEAD: `boring::aead::AeadCtx` (EVP_AEAD_CTX) and its
//!   `EVP_AEAD_CTX_seal_scatter`/`open_gather`, as the record layer calls
//!   them: a record sealed out of place from the caller's data into the
//!   record buffer, the content type as `extra_in`
//!   ([`Backend::seal_from`]), and opened in place with its detached tag.
//!   The generic `EVP_aead_aes_*_gcm`, not
//!   the `_tls13`/`_tls12` variants the record layer keys, which add only a
//!   check that nonces increase and would refuse the ticket key's random
//!   nonces.

use std::cell::RefCell;

use anyhow::{Context, Result, anyhow, bail, ensure};

use crate::{
    floor::{
        Backend, PublicKey,
        ops::{Hash, Kx, Op, Sig},
    },
    libs::openssl::config::{ForeignTypeRef, ffi, library_name, ossl},
    params::Aead,
};
use ossl::{
    aead::{AeadCtx, Algorithm},
    derive::Deriver,
    hash::MessageDigest,
    hmac::Hmac,
    pkey::{HasPrivate, HasPublic, Id, PKey, Private as PrivateKey, Public},
    rsa::Padding,
    sign::{RsaPssSaltlen, Signer, Verifier},
};

/// An X25519 key's length, private or public, and its shared secret's.
const X25519_LEN: usize = 32;
/// An ML-KEM-768 encapsulation key's encoding, in bytes.
const MLKEM768_PUBLIC_LEN: usize = ffi::MLKEM768_PUBLIC_KEY_BYTES as usize;
/// An ML-KEM-768 ciphertext, in bytes.
const MLKEM768_CIPHERTEXT_LEN: usize = ffi::MLKEM768_CIPHERTEXT_BYTES as usize;
/// An ML-KEM shared secret, in bytes.
const MLKEM_SECRET_LEN: usize = ffi::MLKEM_SHARED_SECRET_BYTES as usize;
/// An AEAD tag, in bytes.
const TAG_LEN: usize = 16;

/// BoringSSL's libcrypto, as a floor backend.
pub struct BoringSsl;

/// An ephemeral private key.
pub enum Private {
    /// An X25519 private key (`X25519_keypair`'s).
    X25519([u8; X25519_LEN]),
    /// An ECDH key on a NIST curve.
    Ec(PKey<PrivateKey>),
    /// An ML-KEM-768 decapsulation key (7776 bytes, hence boxed).
    MlKem768(Box<ffi::MLKEM768_private_key>),
}

/// A key decoded once with its scheme's digest and padding; each signature
/// or verification makes its digest context from it.
pub struct SchemeKey<T> {
    key: PKey<T>,
    md: MessageDigest,
    padding: Option<Padding>,
}

/// A keyed AEAD context (EVP_AEAD_CTX), for both directions: the generic
/// AEADs keep no state between calls.
pub struct AeadKey(RefCell<AeadCtx>);

/// `key` with `sig`'s digest and RSA padding. Errors: a key of another
/// type than `sig` names.
fn scheme_key<T>(key: PKey<T>, sig: Sig) -> Result<SchemeKey<T>> {
    let (want, md, padding) = match sig {
        Sig::EcdsaP256Sha256 => (Id::EC, MessageDigest::sha256(), None),
        Sig::EcdsaP384Sha384 => (Id::EC, MessageDigest::sha384(), None),
        Sig::RsaPssSha256(_) => (Id::RSA, MessageDigest::sha256(), Some(Padding::PKCS1_PSS)),
        Sig::RsaPkcs1Sha256(_) => (Id::RSA, MessageDigest::sha256(), Some(Padding::PKCS1)),
    };
    ensure!(key.id() == want, "{sig}: a key of another type");
    Ok(SchemeKey { key, md, padding })
}

/// A signer of `key` for its scheme (EVP_DigestSignInit, then the RSA
/// padding and, for PSS, a salt of the digest's length, as BoringSSL's
/// `setup_ctx` sets them).
fn signer<T: HasPrivate>(key: &SchemeKey<T>) -> Result<Signer<'_>> {
    let mut s = Signer::new(key.md, &key.key)?;
    if let Some(padding) = key.padding {
        s.set_rsa_padding(padding)?;
        if padding == Padding::PKCS1_PSS {
            s.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
        }
    }
    Ok(s)
}

/// A verifier of `key` for its scheme (as [`signer`]).
fn verifier<T: HasPublic>(key: &SchemeKey<T>) -> Result<Verifier<'_>> {
    let mut v = Verifier::new(key.md, &key.key)?;
    if let Some(padding) = key.padding {
        v.set_rsa_padding(padding)?;
        if padding == Padding::PKCS1_PSS {
            v.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
        }
    }
    Ok(v)
}

fn algorithm(aead: Aead) -> Algorithm {
    match aead {
        Aead::Aes128Gcm => Algorithm::aes_128_gcm(),
        Aead::Aes256Gcm => Algorithm::aes_256_gcm(),
        Aead::Chacha20Poly1305 => Algorithm::chacha20_poly1305(),
    }
}

/// `peer` as an ML-KEM-768 encapsulation key (`MLKEM768_parse_public_key`,
/// the whole input consumed). Errors: a key that does not parse.
fn mlkem768_public(peer: &[u8]) -> Result<Box<ffi::MLKEM768_public_key>> {
    ensure!(peer.len() == MLKEM768_PUBLIC_LEN, "an ML-KEM-768 key of {} bytes", peer.len());
    let mut key = Box::<ffi::MLKEM768_public_key>::new_uninit();
    let mut cbs = ffi::cbs_init(peer);
    // SAFETY: `key` points to writable, suitably aligned memory for one
    // MLKEM768_public_key, and `cbs` to `peer`, which outlives the call.
    let ok = unsafe { ffi::MLKEM768_parse_public_key(key.as_mut_ptr(), &mut cbs) } == 1;
    ensure!(ok && cbs.len == 0, "the peer's ML-KEM-768 key is invalid");
    // SAFETY: MLKEM768_parse_public_key returned 1, so it wrote the key.
    Ok(unsafe { key.assume_init() })
}

impl Backend for BoringSsl {
    type Private = Private;
    type SigningKey = SchemeKey<PrivateKey>;
    type AeadKey = AeadKey;
    type VerifyKey = SchemeKey<Public>;

    /// The library's name, `boring-<version>+boringssl`: BoringSSL has no
    /// releases, the `boring` crate's version pins its commit.
    fn name() -> String {
        library_name()
    }

    fn unsupported(_op: Op) -> Option<String> {
        None
    }

    fn key_gen(kx: Kx) -> Result<(Private, Vec<u8>)> {
        match kx {
            Kx::X25519 => {
                let (mut public, mut private) = ([0u8; X25519_LEN], [0u8; X25519_LEN]);
                // SAFETY: both pointers are to 32-byte buffers, the lengths
                // X25519_keypair writes.
                unsafe { ffi::X25519_keypair(public.as_mut_ptr(), private.as_mut_ptr()) };
                Ok((Private::X25519(private), public.to_vec()))
            }
            Kx::P256 | Kx::P384 => {
                let (key, public) = super::ec_key::key_gen(kx)?;
                Ok((Private::Ec(key), public))
            }
            Kx::MlKem768 => {
                let mut public = vec![0u8; MLKEM768_PUBLIC_LEN];
                let mut private = Box::<ffi::MLKEM768_private_key>::new_uninit();
                // SAFETY: `public` holds MLKEM768_PUBLIC_KEY_BYTES, the
                // encoding's length; `private` is writable memory for one
                // MLKEM768_private_key; the seed is optional (null).
                let private = unsafe {
                    ffi::MLKEM768_generate_key(
                        public.as_mut_ptr(),
                        std::ptr::null_mut(),
                        private.as_mut_ptr(),
                    );
                    // MLKEM768_generate_key cannot fail and wrote the key.
                    private.assume_init()
                };
                Ok((Private::MlKem768(private), public))
            }
        }
    }

    fn agree(kx: Kx, private: Private, peer: &[u8]) -> Result<Vec<u8>> {
        match (kx, private) {
            (Kx::X25519, Private::X25519(private)) => {
                ensure!(peer.len() == X25519_LEN, "an X25519 key of {} bytes", peer.len());
                let mut secret = vec![0u8; X25519_LEN];
                // SAFETY: `secret`, `private` and `peer` are 32 bytes each,
                // the lengths X25519 reads and writes.
                let ok = unsafe { ffi::X25519(secret.as_mut_ptr(), private.as_ptr(), peer.as_ptr()) };
                ensure!(ok == 1, "the peer's X25519 key is invalid");
                Ok(secret)
            }
            (Kx::P256 | Kx::P384, Private::Ec(private)) => {
                let group = super::ec_key::curve(kx)?;
                let peer = super::ec_key::peer(&group, peer)?;
                let mut deriver = Deriver::new(&private)?;
                deriver.set_peer(&peer)?;
                Ok(deriver.derive_to_vec()?)
            }
            (Kx::MlKem768, _) => bail!("ML-KEM-768 is a KEM, not an agreement"),
            (kx, _) => bail!("{kx}: a private key of another algorithm"),
        }
    }

    fn encapsulate(kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        ensure!(kx == Kx::MlKem768, "{kx} is not a KEM");
        let key = mlkem768_public(peer)?;
        let mut ciphertext = vec![0u8; MLKEM768_CIPHERTEXT_LEN];
        let mut secret = vec![0u8; MLKEM_SECRET_LEN];
        // SAFETY: the buffers hold MLKEM768_CIPHERTEXT_BYTES and
        // MLKEM_SHARED_SECRET_BYTES, what MLKEM768_encap writes; `key` is a
        // parsed public key.
        unsafe { ffi::MLKEM768_encap(ciphertext.as_mut_ptr(), secret.as_mut_ptr(), &*key) };
        Ok((ciphertext, secret))
    }

    fn decapsulate(kx: Kx, private: Private, ciphertext: &[u8]) -> Result<Vec<u8>> {
        let Private::MlKem768(key) = private else { bail!("{kx}: not an ML-KEM-768 key") };
        let mut secret = vec![0u8; MLKEM_SECRET_LEN];
        // SAFETY: `secret` holds MLKEM_SHARED_SECRET_BYTES, what
        // MLKEM768_decap writes; `ciphertext` is passed with its length
        // (a wrong length returns 0); `key` is a generated private key.
        let ok =
            unsafe { ffi::MLKEM768_decap(secret.as_mut_ptr(), ciphertext.as_ptr(), ciphertext.len(), &*key) };
        ensure!(ok == 1, "an ML-KEM-768 ciphertext of {} bytes", ciphertext.len());
        Ok(secret)
    }

    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<SchemeKey<PrivateKey>> {
        scheme_key(PKey::private_key_from_pkcs8(pkcs8)?, sig)
    }

    fn sign(key: &SchemeKey<PrivateKey>, _sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
        Ok(signer(key)?.sign_oneshot_to_vec(msg)?)
    }

    fn verify_key(sig: Sig, public: &PublicKey) -> Result<SchemeKey<Public>> {
        scheme_key(PKey::public_key_from_der(&public.spki)?, sig)
    }

    fn verify(sig: Sig, key: &SchemeKey<Public>, msg: &[u8], signature: &[u8]) -> Result<()> {
        // A wrong signature is false; a malformed one may be an error.
        match verifier(key)?.verify_oneshot(signature, msg) {
            Ok(true) => Ok(()),
            Ok(false) => bail!("{sig}: the signature does not verify"),
            Err(e) => bail!("{sig}: the signature does not verify ({e})"),
        }
    }

    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
        let md = match hash {
            Hash::Sha256 => MessageDigest::sha256(),
            Hash::Sha384 => MessageDigest::sha384(),
        };
        let mut mac = Hmac::init(key, &md)?;
        mac.update(data)?;
        Ok(mac.finalize()?)
    }

    /// One `HMAC_CTX` keyed once ([`super::hmac_ctx`]: the crate's `Hmac`
    /// is consumed by `finalize`); each HMAC restarts it from the keyed
    /// state, as BoringSSL's TLS1-PRF's P_hash does.
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        super::hmac_ctx::hmacs(hash, key, data)
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        let ctx = AeadCtx::new_default_tag(&algorithm(aead), key).context("an AEAD key")?;
        Ok(AeadKey(RefCell::new(ctx)))
    }

    fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        let len = in_out.len();
        in_out.resize(len + TAG_LEN, 0);
        let (data, tag) = in_out.split_at_mut(len);
        let n = key.0.borrow_mut().seal_in_place_mut(&nonce, data, tag, aad)?.len();
        ensure!(n == TAG_LEN, "a tag of {n} bytes");
        Ok(())
    }

    /// Out of place, as `SSLAEADContext::SealScatter` seals a TLS 1.3
    /// record ([`super::evp_aead::seal_from`]). The boring crate's
    /// `seal_scatter_mut` seals only in place, hence boring-sys.
    fn seal_from(
        key: &AeadKey,
        nonce: [u8; 12],
        aad: &[u8],
        fragment: &[u8],
        content_type: u8,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let ctx = key.0.borrow();
        // SAFETY: `ctx` is this key's keyed context, borrowed for the call.
        unsafe { super::evp_aead::seal_from(ctx.as_ptr(), nonce, aad, fragment, content_type, out) }
    }

    fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        let len = in_out.len().checked_sub(TAG_LEN).context("a record shorter than its tag")?;
        let (data, tag) = in_out.split_at_mut(len);
        key.0
            .borrow_mut()
            .open_in_place_mut(&nonce, data, tag, aad)
            .map_err(|_| anyhow!("a record does not decrypt"))?;
        Ok(len)
    }
}

/// Checks of this backend alone (the floor's tests run it through every
/// handshake).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ml_kem_768_round_trips() {
        let (private, public) = BoringSsl::key_gen(Kx::MlKem768).unwrap();
        assert_eq!(public.len(), MLKEM768_PUBLIC_LEN);
        let (ciphertext, secret) = BoringSsl::encapsulate(Kx::MlKem768, &public).unwrap();
        assert_eq!(BoringSsl::decapsulate(Kx::MlKem768, private, &ciphertext).unwrap(), secret);
    }

    #[test]
    fn x25519_agrees() {
        let (a, a_pub) = BoringSsl::key_gen(Kx::X25519).unwrap();
        let (b, b_pub) = BoringSsl::key_gen(Kx::X25519).unwrap();
        assert_eq!(
            BoringSsl::agree(Kx::X25519, a, &b_pub).unwrap(),
            BoringSsl::agree(Kx::X25519, b, &a_pub).unwrap()
        );
    }
}
