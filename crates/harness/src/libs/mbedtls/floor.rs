//! The floor through Mbed TLS's own crypto (libmbedcrypto of the same
//! system build), called the way its TLS layer calls it. Debian's build
//! leaves `MBEDTLS_USE_PSA_CRYPTO` off, so the TLS layer (3.6's library/)
//! calls the legacy API but for TLS 1.3's key exchange and key schedule
//! (PSA Crypto); where the two differ the floor takes the one that does
//! less:
//!
//! - key shares (X25519, secp256r1, secp384r1): an `mbedtls_ecdh_context`
//!   per key (`mbedtls_ecdh_setup`), `mbedtls_ecdh_make_public`, then the
//!   peer's key read (`mbedtls_ecdh_read_public`) and
//!   `mbedtls_ecdh_calc_secret`, as TLS 1.2's client makes its share
//!   (ssl_tls12_client.c). TLS 1.3 makes them through PSA Crypto
//!   (`psa_generate_key`, which draws the private scalar alone,
//!   `psa_export_public_key`, which loads the key again and multiplies the
//!   base point, `psa_raw_key_agreement`; library/psa_crypto_ecp.c): the
//!   same multiplications, with the key store's work around them (the
//!   curve and the key loaded again for each call), which the floor leaves
//!   to the library's protocol cost (a floor through PSA executed more
//!   instructions than the TLS 1.2 client, which takes the legacy path);
//! - signatures over a digest (`mbedtls_md`): `mbedtls_pk_sign_ext` and
//!   `mbedtls_pk_verify_ext` with the scheme's key type (RSA-PSS with
//!   MGF1 over the same hash and the hash's length of salt when verifying,
//!   as `ssl_tls13_parse_certificate_verify` asks), as the TLS 1.3 layer
//!   and the certificate checks (x509_crt.c) call them; the private key
//!   parsed once (`mbedtls_pk_parse_key`), the public key from the
//!   SubjectPublicKeyInfo (`mbedtls_pk_parse_public_key`). ECDSA is
//!   deterministic in this build (`MBEDTLS_ECDSA_DETERMINISTIC`: an
//!   HMAC_DRBG per signature, in the library as here, whose HMACs
//!   `crypto-floor count` leaves out);
//! - HMAC: `mbedtls_md_hmac`, keyed anew each call; TLS 1.2's P_hash
//!   keys one context once (`mbedtls_md_hmac_starts`) and resets it
//!   (`mbedtls_md_hmac_reset`), as ssl_tls.c's `tls_prf_generic` does. The
//!   TLS 1.3 key schedule derives through PSA's HKDF, which makes its
//!   HMACs below `psa_mac_sign_finish`: its extra bookkeeping is counted
//!   as protocol cost;
//! - AEAD: an `mbedtls_cipher_context_t` per direction keyed once
//!   (`mbedtls_cipher_setup`, `mbedtls_cipher_setkey`) and
//!   `mbedtls_cipher_auth_encrypt_ext` / `_decrypt_ext` in place with the
//!   tag after the ciphertext, as ssl_msg.c's `mbedtls_ssl_encrypt_buf`
//!   and `_decrypt_buf` do. A record is copied into the output buffer and
//!   sealed there (the default [`Backend::seal_from`]).
//!
//! ML-KEM-768: Mbed TLS 3.6 has none (a named skip). Random numbers: a
//! CTR_DRBG per thread, seeded from Mbed TLS's entropy sources, as each
//! configuration of the TLS layer has its own.

use std::{
    cell::RefCell,
    ffi::{c_int, c_void},
    ptr,
};

use anyhow::{Result, bail, ensure};

use super::{
    config::{Rng, boxed, error_text, library_name},
    sys,
};
use crate::{
    floor::{
        Backend, PublicKey,
        count::{Class, Profile},
        ops::{Hash, Kx, Op, Sig},
    },
    params::Aead,
};

/// The largest signature here: an RSA one of up to 8192 bits
/// (`MBEDTLS_MPI_MAX_SIZE`, 1024 bytes).
const SIGNATURE_MAX: usize = 1024;
/// An AEAD tag, in bytes.
const TAG_LEN: usize = 16;

/// Mbed TLS's crypto, libmbedcrypto, as the floor of Mbed TLS.
#[derive(Default)]
pub struct MbedCrypto;

/// `Ok` when a call returned 0; else Mbed TLS's text after `what`.
fn check(ret: c_int, what: &str) -> Result<()> {
    ensure!(ret == 0, "Mbed TLS {what}: {}", error_text(ret));
    Ok(())
}

thread_local! {
    /// This thread's CTR_DRBG, seeded once.
    static RNG: RefCell<Option<Rng>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's DRBG as `f_rng`'s argument. Errors: seeding
/// failed, or `f`'s.
fn with_rng<R>(f: impl FnOnce(*mut c_void) -> Result<R>) -> Result<R> {
    RNG.with(|cell| {
        let mut rng = cell.borrow_mut();
        if rng.is_none() {
            *rng = Some(Rng::new()?);
        }
        f(rng.as_ref().expect("made above").as_arg())
    })
}

/// An ephemeral key pair in an ECDH context, freed when dropped.
pub struct Private(Box<sys::mbedtls_ecdh_context>);

impl Drop for Private {
    fn drop(&mut self) {
        // SAFETY: initialised when made, freed once.
        unsafe { sys::mbedtls_ecdh_free(&mut *self.0) };
    }
}

/// A parsed key (`mbedtls_pk_context`), private or public; Mbed TLS's
/// calls take it mutably.
pub struct PkKey(RefCell<Box<sys::mbedtls_pk_context>>);

impl PkKey {
    fn new() -> PkKey {
        let mut pk = boxed::<sys::mbedtls_pk_context>();
        // SAFETY: a zeroed context, initialised here.
        unsafe { sys::mbedtls_pk_init(&mut *pk) };
        PkKey(RefCell::new(pk))
    }

    fn ptr(&self) -> *mut sys::mbedtls_pk_context {
        &raw mut **self.0.borrow_mut()
    }

    /// Checks that the key is of `sig`'s type.
    fn check_type(&self, sig: Sig) -> Result<()> {
        // SAFETY: an initialised context.
        let ty = unsafe { sys::mbedtls_pk_get_type(self.ptr()) };
        let ec = matches!(sig, Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384);
        let want = if ec { sys::MBEDTLS_PK_ECKEY } else { sys::MBEDTLS_PK_RSA };
        ensure!(ty == want, "{sig}: a key of another type ({ty})");
        Ok(())
    }
}

impl Drop for PkKey {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, freed once.
        unsafe { sys::mbedtls_pk_free(&mut **self.0.get_mut()) };
    }
}

/// A cipher context keyed for one direction (`mbedtls_cipher_free`d).
struct Cipher(Box<sys::mbedtls_cipher_context_t>);

impl Drop for Cipher {
    fn drop(&mut self) {
        // SAFETY: initialised when made, freed once.
        unsafe { sys::mbedtls_cipher_free(&mut *self.0) };
    }
}

/// A record key: a context per direction, as a TLS connection's transform
/// keeps them.
pub struct AeadKey {
    seal: RefCell<Cipher>,
    open: RefCell<Cipher>,
}

/// Mbed TLS's group of a key share. Errors: ML-KEM.
fn group(kx: Kx) -> Result<sys::mbedtls_ecp_group_id> {
    Ok(match kx {
        Kx::X25519 => sys::MBEDTLS_ECP_DP_CURVE25519,
        Kx::P256 => sys::MBEDTLS_ECP_DP_SECP256R1,
        Kx::P384 => sys::MBEDTLS_ECP_DP_SECP384R1,
        Kx::MlKem768 => bail!("{}", no_ml_kem()),
    })
}

/// The largest ECPoint (RFC 8422 section 5.4: a length byte, then an
/// uncompressed secp384r1 point) and shared secret here.
const POINT_MAX: usize = 1 + 1 + 2 * 48;

fn no_ml_kem() -> String {
    format!("{}: no ML-KEM (Mbed TLS 3.6 has no post-quantum key exchange)", library_name())
}

/// Mbed TLS's hash of a signature scheme or an HMAC.
fn md(sha384: bool) -> (sys::mbedtls_md_type_t, *const sys::mbedtls_md_info_t) {
    let ty = if sha384 { sys::MBEDTLS_MD_SHA384 } else { sys::MBEDTLS_MD_SHA256 };
    // SAFETY: a static table lookup.
    (ty, unsafe { sys::mbedtls_md_info_from_type(ty) })
}

/// `sig`'s hash, and `msg`'s digest under it (`mbedtls_md`).
fn digest(sig: Sig, msg: &[u8]) -> Result<(sys::mbedtls_md_type_t, Vec<u8>)> {
    let (ty, info) = md(matches!(sig, Sig::EcdsaP384Sha384));
    ensure!(!info.is_null(), "{sig}: no hash in this build");
    // SAFETY: a hash of this build.
    let mut out = vec![0u8; usize::from(unsafe { sys::mbedtls_md_get_size(info) })];
    // SAFETY: `msg` is read for its length; `out` holds the digest.
    check(unsafe { sys::mbedtls_md(info, msg.as_ptr(), msg.len(), out.as_mut_ptr()) }, "mbedtls_md")?;
    Ok((ty, out))
}

/// The key type `mbedtls_pk_sign_ext` and `_verify_ext` take for `sig`.
fn pk_type(sig: Sig) -> sys::mbedtls_pk_type_t {
    match sig {
        Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384 => sys::MBEDTLS_PK_ECDSA,
        Sig::RsaPssSha256(_) => sys::MBEDTLS_PK_RSASSA_PSS,
        Sig::RsaPkcs1Sha256(_) => sys::MBEDTLS_PK_RSA,
    }
}

/// Mbed TLS 3.6's libmbedcrypto (the system's, Debian's build: exported
/// functions only, and `MBEDTLS_USE_PSA_CRYPTO` off). Key pairs: TLS 1.3
/// through PSA (`mbedtls_psa_ecp_generate_key`), TLS 1.2 and the floor
/// through the legacy ECDH context (a server's `mbedtls_ecdh_make_params`,
/// a client's `mbedtls_ecdh_make_public`), one function per path;
/// agreements in `mbedtls_ecdh_calc_secret`, which PSA's ECDH calls too
/// (library/psa_crypto_ecp.c); X25519's and the NIST curves' are the same functions,
/// counted together ([`Profile::merged`]). Signatures through the pk layer
/// to `mbedtls_ecdsa_write_signature_restartable` (deterministic ECDSA),
/// `mbedtls_ecdsa_verify_restartable`, `mbedtls_rsa_private` and
/// `mbedtls_rsa_public`; a PKCS#1 v1.5 signature (TLS 1.2's
/// ServerKeyExchange, which Mbed TLS signs so) checks itself with one
/// `mbedtls_rsa_public` (library/rsa.c, `mbedtls_rsa_rsassa_pkcs1_v15_sign`):
/// counted apart ([`Profile::own_checks`]). HMACs: the legacy
/// `mbedtls_md_hmac_finish` (TLS 1.2's PRF, the floor's), less the calls
/// deterministic ECDSA's HMAC_DRBG makes ([`Profile::not_from`]), and
/// PSA's, below TLS 1.3's HKDF (`mbedtls_psa_mac_sign_finish`) and its
/// Finished (`mbedtls_psa_mac_compute`).
pub const MBED_CRYPTO: Profile = Profile {
    name: "Mbed TLS",
    functions: &[
        (
            Class::KeyPairEc,
            &["mbedtls_psa_ecp_generate_key", "mbedtls_ecdh_make_params", "mbedtls_ecdh_make_public"],
        ),
        (Class::AgreeEc, &["mbedtls_ecdh_calc_secret"]),
        (Class::SignEcdsa, &["mbedtls_ecdsa_write_signature_restartable"]),
        (Class::VerifyEcdsa, &["mbedtls_ecdsa_verify_restartable"]),
        (Class::SignRsa, &["mbedtls_rsa_private"]),
        (Class::VerifyRsa, &["mbedtls_rsa_public"]),
        (
            Class::Hmac,
            &[
                "mbedtls_md_hmac_finish",
                "mbedtls_psa_mac_sign_finish",
                "mbedtls_psa_mac_compute",
                "mbedtls_psa_mac_verify_finish",
            ],
        ),
    ],
    own_checks: &[(Class::VerifyRsa, "mbedtls_rsa_rsassa_pkcs1_v15_sign")],
    fewer: &[],
    merged: &[(Class::KeyPairX25519, Class::KeyPairEc), (Class::AgreeX25519, Class::AgreeEc)],
    not_from: &["mbedtls_hmac_drbg_update", "mbedtls_hmac_drbg_random_with_add"],
};

impl Backend for MbedCrypto {
    type Private = Private;
    type SigningKey = PkKey;
    type AeadKey = AeadKey;
    type VerifyKey = PkKey;

    /// `mbedcrypto-<version>`, e.g. `mbedcrypto-3.6.6`: Mbed TLS's
    /// version, whose build it is.
    fn name() -> String {
        library_name().replacen("mbedtls", "mbedcrypto", 1)
    }

    fn profile() -> Option<&'static Profile> {
        Some(&MBED_CRYPTO)
    }

    fn unsupported(op: Op) -> Option<String> {
        op.is_ml_kem().then(no_ml_kem)
    }

    fn key_gen(kx: Kx) -> Result<(Private, Vec<u8>)> {
        let id = group(kx)?;
        let mut ctx = boxed::<sys::mbedtls_ecdh_context>();
        // SAFETY: a zeroed context, initialised here; the owner frees it.
        unsafe { sys::mbedtls_ecdh_init(&mut *ctx) };
        let mut private = Private(ctx);
        // SAFETY: an initialised context.
        check(unsafe { sys::mbedtls_ecdh_setup(&mut *private.0, id) }, "mbedtls_ecdh_setup")?;
        let mut point = [0u8; POINT_MAX];
        let mut len = 0usize;
        with_rng(|rng| {
            // SAFETY: a set-up context; `point` holds any ECPoint here;
            // `len` is writable; the DRBG makes the key.
            let ret = unsafe {
                sys::mbedtls_ecdh_make_public(
                    &mut *private.0,
                    &mut len,
                    point.as_mut_ptr(),
                    point.len(),
                    Some(sys::mbedtls_ctr_drbg_random),
                    rng,
                )
            };
            check(ret, &format!("{kx}: mbedtls_ecdh_make_public"))
        })?;
        // The ECPoint's length byte, then the key as TLS 1.3's key share
        // carries it.
        ensure!(len >= 2 && usize::from(point[0]) == len - 1, "{kx}: a malformed ECPoint");
        Ok((private, point[1..len].to_vec()))
    }

    fn agree(kx: Kx, mut private: Private, peer: &[u8]) -> Result<Vec<u8>> {
        let len = u8::try_from(peer.len())
            .map_err(|_| anyhow::anyhow!("{kx}: a peer key of {} bytes", peer.len()))?;
        let mut point = Vec::with_capacity(1 + peer.len());
        point.push(len);
        point.extend_from_slice(peer);
        // SAFETY: a set-up context; `point` is read for its length.
        let ret = unsafe { sys::mbedtls_ecdh_read_public(&mut *private.0, point.as_ptr(), point.len()) };
        check(ret, &format!("{kx}: mbedtls_ecdh_read_public"))?;
        let mut secret = vec![0u8; POINT_MAX];
        let mut written = 0usize;
        with_rng(|rng| {
            // SAFETY: a context with both keys; `secret` holds the shared
            // secret; the DRBG blinds the multiplication.
            let ret = unsafe {
                sys::mbedtls_ecdh_calc_secret(
                    &mut *private.0,
                    &mut written,
                    secret.as_mut_ptr(),
                    secret.len(),
                    Some(sys::mbedtls_ctr_drbg_random),
                    rng,
                )
            };
            check(ret, &format!("{kx}: mbedtls_ecdh_calc_secret"))
        })?;
        secret.truncate(written);
        Ok(secret)
    }

    fn encapsulate(_kx: Kx, _peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        bail!("{}", no_ml_kem())
    }

    fn decapsulate(_kx: Kx, _private: Private, _ciphertext: &[u8]) -> Result<Vec<u8>> {
        bail!("{}", no_ml_kem())
    }

    /// `mbedtls_pk_parse_key` of the PKCS#8 document (DER).
    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<PkKey> {
        let key = PkKey::new();
        with_rng(|rng| {
            // SAFETY: an initialised context; the DER is read for its
            // length; no password; the DRBG for RSA blinding.
            let ret = unsafe {
                sys::mbedtls_pk_parse_key(
                    key.ptr(),
                    pkcs8.as_ptr(),
                    pkcs8.len(),
                    ptr::null(),
                    0,
                    Some(sys::mbedtls_ctr_drbg_random),
                    rng,
                )
            };
            check(ret, &format!("{sig}: mbedtls_pk_parse_key"))
        })?;
        key.check_type(sig)?;
        Ok(key)
    }

    fn sign(key: &PkKey, sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
        key.check_type(sig)?;
        let (md, hash) = digest(sig, msg)?;
        let mut out = vec![0u8; SIGNATURE_MAX];
        let mut len = 0usize;
        with_rng(|rng| {
            // SAFETY: a parsed key; `hash` is read for its length, `out`
            // holds any signature of this build; the DRBG for blinding (and
            // ECDSA's, deterministic, nonce).
            let ret = unsafe {
                sys::mbedtls_pk_sign_ext(
                    pk_type(sig),
                    key.ptr(),
                    md,
                    hash.as_ptr(),
                    hash.len(),
                    out.as_mut_ptr(),
                    out.len(),
                    &mut len,
                    Some(sys::mbedtls_ctr_drbg_random),
                    rng,
                )
            };
            check(ret, &format!("{sig}: mbedtls_pk_sign_ext"))
        })?;
        out.truncate(len);
        Ok(out)
    }

    /// `mbedtls_pk_parse_public_key` of the SubjectPublicKeyInfo (DER).
    fn verify_key(sig: Sig, public: &PublicKey) -> Result<PkKey> {
        let key = PkKey::new();
        // SAFETY: an initialised context; the DER is read for its length.
        let ret =
            unsafe { sys::mbedtls_pk_parse_public_key(key.ptr(), public.spki.as_ptr(), public.spki.len()) };
        check(ret, &format!("{sig}: mbedtls_pk_parse_public_key"))?;
        key.check_type(sig)?;
        Ok(key)
    }

    fn verify(sig: Sig, key: &PkKey, msg: &[u8], signature: &[u8]) -> Result<()> {
        key.check_type(sig)?;
        let (md, hash) = digest(sig, msg)?;
        let mut pss =
            sys::mbedtls_pk_rsassa_pss_options { mgf1_hash_id: md, expected_salt_len: hash.len() as c_int };
        let options: *const c_void =
            if matches!(sig, Sig::RsaPssSha256(_)) { (&raw mut pss).cast() } else { ptr::null() };
        // SAFETY: a parsed key; the options (PSS only) live across the call;
        // `hash` and `signature` are read for their lengths.
        let ret = unsafe {
            sys::mbedtls_pk_verify_ext(
                pk_type(sig),
                options,
                key.ptr(),
                md,
                hash.as_ptr(),
                hash.len(),
                signature.as_ptr(),
                signature.len(),
            )
        };
        check(ret, &format!("{sig}: the signature does not verify (mbedtls_pk_verify_ext)"))
    }

    /// `mbedtls_md_hmac`, keyed anew.
    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
        let info = md(hash == Hash::Sha384).1;
        // SAFETY: a hash of this build.
        let mut out = vec![0u8; usize::from(unsafe { sys::mbedtls_md_get_size(info) })];
        // SAFETY: the key and data are read for their lengths; `out` holds
        // the hash's length.
        let ret = unsafe {
            sys::mbedtls_md_hmac(info, key.as_ptr(), key.len(), data.as_ptr(), data.len(), out.as_mut_ptr())
        };
        check(ret, "mbedtls_md_hmac")?;
        Ok(out)
    }

    /// One context keyed once (`mbedtls_md_hmac_starts`), finished and
    /// reset for each input, as TLS 1.2's PRF uses it.
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        let info = md(hash == Hash::Sha384).1;
        let mut ctx = boxed::<sys::mbedtls_md_context_t>();
        // SAFETY: a zeroed context, initialised and set up for HMAC, freed
        // at the end; the key and each input are read for their lengths,
        // `out` holds the hash's length.
        unsafe {
            sys::mbedtls_md_init(&mut *ctx);
            let result = (|| {
                check(sys::mbedtls_md_setup(&mut *ctx, info, 1), "mbedtls_md_setup")?;
                check(
                    sys::mbedtls_md_hmac_starts(&mut *ctx, key.as_ptr(), key.len()),
                    "mbedtls_md_hmac_starts",
                )?;
                let size = usize::from(sys::mbedtls_md_get_size(info));
                let mut outs = Vec::with_capacity(data.len());
                for (i, d) in data.iter().enumerate() {
                    if i > 0 {
                        check(sys::mbedtls_md_hmac_reset(&mut *ctx), "mbedtls_md_hmac_reset")?;
                    }
                    let mut out = vec![0u8; size];
                    check(
                        sys::mbedtls_md_hmac_update(&mut *ctx, d.as_ptr(), d.len()),
                        "mbedtls_md_hmac_update",
                    )?;
                    check(
                        sys::mbedtls_md_hmac_finish(&mut *ctx, out.as_mut_ptr()),
                        "mbedtls_md_hmac_finish",
                    )?;
                    outs.push(out);
                }
                Ok(outs)
            })();
            sys::mbedtls_md_free(&mut *ctx);
            result
        }
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        let (ty, len) = match aead {
            Aead::Aes128Gcm => (sys::MBEDTLS_CIPHER_AES_128_GCM, 16),
            Aead::Aes256Gcm => (sys::MBEDTLS_CIPHER_AES_256_GCM, 32),
            Aead::Chacha20Poly1305 => (sys::MBEDTLS_CIPHER_CHACHA20_POLY1305, 32),
        };
        ensure!(key.len() == len, "a {aead:?} key of {} bytes", key.len());
        let keyed = |operation: sys::mbedtls_operation_t| -> Result<Cipher> {
            let mut cipher = Cipher(boxed());
            // SAFETY: a zeroed context, initialised, set up and keyed;
            // `key` is read for its length (given in bits).
            unsafe {
                sys::mbedtls_cipher_init(&mut *cipher.0);
                let info = sys::mbedtls_cipher_info_from_type(ty);
                ensure!(!info.is_null(), "{aead:?}: not in this build");
                check(sys::mbedtls_cipher_setup(&mut *cipher.0, info), "mbedtls_cipher_setup")?;
                let ret =
                    sys::mbedtls_cipher_setkey(&mut *cipher.0, key.as_ptr(), (len * 8) as c_int, operation);
                check(ret, "mbedtls_cipher_setkey")?;
            }
            Ok(cipher)
        };
        Ok(AeadKey {
            seal: RefCell::new(keyed(sys::MBEDTLS_ENCRYPT)?),
            open: RefCell::new(keyed(sys::MBEDTLS_DECRYPT)?),
        })
    }

    fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        let len = in_out.len();
        in_out.resize(len + TAG_LEN, 0);
        let mut written = 0usize;
        let mut cipher = key.seal.borrow_mut();
        // SAFETY: a keyed context; in place: the plaintext's `len` bytes
        // are read and the ciphertext and the tag written over `in_out`,
        // which holds both; `written` is writable.
        let ret = unsafe {
            sys::mbedtls_cipher_auth_encrypt_ext(
                &mut *cipher.0,
                nonce.as_ptr(),
                nonce.len(),
                aad.as_ptr(),
                aad.len(),
                in_out.as_ptr(),
                len,
                in_out.as_mut_ptr(),
                in_out.len(),
                &mut written,
                TAG_LEN,
            )
        };
        check(ret, "mbedtls_cipher_auth_encrypt_ext")?;
        ensure!(
            written == len + TAG_LEN,
            "mbedtls_cipher_auth_encrypt_ext wrote {written} bytes of {}",
            len + TAG_LEN
        );
        Ok(())
    }

    fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        ensure!(in_out.len() >= TAG_LEN, "a record shorter than its tag");
        let mut written = 0usize;
        let mut cipher = key.open.borrow_mut();
        // SAFETY: a keyed context; in place: the ciphertext and tag are
        // read, the plaintext written over them; `written` is writable.
        let ret = unsafe {
            sys::mbedtls_cipher_auth_decrypt_ext(
                &mut *cipher.0,
                nonce.as_ptr(),
                nonce.len(),
                aad.as_ptr(),
                aad.len(),
                in_out.as_ptr(),
                in_out.len(),
                in_out.as_mut_ptr(),
                in_out.len(),
                &mut written,
                TAG_LEN,
            )
        };
        check(ret, "mbedtls_cipher_auth_decrypt_ext: the record does not authenticate")?;
        Ok(written)
    }
}
