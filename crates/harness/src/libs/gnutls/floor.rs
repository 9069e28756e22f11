//! The floor through GnuTLS's own crypto: nettle (the system's, under the
//! system's GnuTLS) for the key exchange, called as GnuTLS 3.7's nettle
//! backend calls it (lib/nettle/pk.c), and GnuTLS's crypto API for the rest,
//! which is what its TLS layer calls:
//!
//! - X25519: a private key from `gnutls_rnd(GNUTLS_RND_KEY)` and
//!   `nettle_curve25519_mul_g`, the agreement `nettle_curve25519_mul` and
//!   its check against an all-zero secret (`_wrap_nettle_pk_generate_keys`,
//!   `_wrap_nettle_pk_derive`);
//! - ECDH over secp256r1/secp384r1: `nettle_ecdsa_generate_keypair` (GnuTLS
//!   makes every NIST-curve key so), the public point exported as TLS sends
//!   it (X9.62 uncompressed: `nettle_mpz_get_str_256` of each coordinate);
//!   the peer's point imported on the curve (`nettle_ecc_point_set`, which
//!   refuses a point off it) and `nettle_ecc_point_mul`, its x coordinate
//!   the secret (`ecc_shared_secret`);
//! - signatures: `gnutls_privkey_sign_data2` and `gnutls_pubkey_verify_data2`
//!   with the TLS SignatureScheme's GnuTLS algorithm, as TLS 1.3's
//!   CertificateVerify is made and checked (lib/tls13-sig.c) and the chain's
//!   signatures checked; the keys imported once (`gnutls_privkey_import_x509_raw`
//!   of the PKCS#8 document, `gnutls_pubkey_import` of the
//!   SubjectPublicKeyInfo);
//! - HMAC: `gnutls_hmac_fast`, keyed anew each call (as the Finished,
//!   `_gnutls_mac_fast`); TLS 1.2's PRF keys once: `gnutls_hmac_init`, then
//!   `gnutls_hmac` and `gnutls_hmac_output` (which leaves it keyed) per
//!   output;
//! - AEAD: a `gnutls_aead_cipher_hd_t` keyed once (`gnutls_aead_cipher_init`)
//!   and `gnutls_aead_cipher_encrypt` / `_decrypt`, the tag after the
//!   ciphertext: GnuTLS's own AES-GCM (its accelerated x86 code) and
//!   nettle's ChaCha20-Poly1305. A TLS 1.3 record is sealed as its record
//!   layer seals it (lib/cipher.c, `encrypt_packet_tls13`): out of place,
//!   from the caller's fragment and the content type as a gather list
//!   (`gnutls_aead_cipher_encryptv`) straight into the output buffer.
//!
//! ML-KEM-768: GnuTLS 3.7 has none (a named skip).

use std::{
    ffi::{c_uint, c_void},
    ptr,
};

use anyhow::{Result, bail, ensure};

use super::{
    config::{check, datum, free, library_name},
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

/// The C calls the floor makes that the generated bindings ([`sys`], the
/// TLS API of <gnutls/gnutls.h>) leave out: GnuTLS's crypto API
/// (<gnutls/crypto.h>, <gnutls/abstract.h>), nettle's and GMP's, as GnuTLS
/// 3.7.9, nettle 3.8 (<nettle/ecc.h>, <nettle/ecdsa.h>,
/// <nettle/curve25519.h>, <nettle/bignum.h>) and GMP 6 (<gmp.h>) declare
/// them. nettle's structures are made by their `_init` calls on memory of
/// their declared layout.
mod ext {
    use std::ffi::{c_int, c_uint, c_ulong, c_void};

    use super::sys::gnutls_datum_t;

    /// An opaque GnuTLS handle.
    #[repr(C)]
    pub struct Opaque {
        _private: [u8; 0],
    }

    /// GMP's `__mpz_struct` (`mpz_t` is an array of one).
    #[repr(C)]
    pub struct Mpz {
        alloc: c_int,
        size: c_int,
        limbs: *mut c_ulong,
    }

    /// `struct ecc_curve`, opaque.
    #[repr(C)]
    pub struct EccCurve {
        _private: [u8; 0],
    }

    /// `struct ecc_point` and `struct ecc_scalar`: the curve and the
    /// limbs (`mp_limb_t`), allocated by their `_init` calls.
    #[repr(C)]
    pub struct EccPoint {
        ecc: *const EccCurve,
        limbs: *mut c_ulong,
    }

    /// `struct ecc_scalar`.
    #[repr(C)]
    pub struct EccScalar {
        ecc: *const EccCurve,
        limbs: *mut c_ulong,
    }

    /// `giovec_t`: one buffer of a gather list.
    #[repr(C)]
    pub struct IoVec {
        pub base: *const c_void,
        pub len: usize,
    }

    /// `nettle_random_func`.
    pub type RandomFn = unsafe extern "C" fn(ctx: *mut c_void, length: usize, dst: *mut u8);

    /// `GNUTLS_RND_KEY`.
    pub const RND_KEY: c_int = 2;
    /// `GNUTLS_X509_FMT_DER`.
    pub const FMT_DER: c_uint = 0;
    /// `gnutls_sign_algorithm_t` values (<gnutls/gnutls.h>).
    pub const SIGN_RSA_SHA256: c_uint = 6;
    pub const SIGN_ECDSA_SECP256R1_SHA256: c_uint = 37;
    pub const SIGN_ECDSA_SECP384R1_SHA384: c_uint = 38;
    pub const SIGN_RSA_PSS_RSAE_SHA256: c_uint = 40;
    /// `gnutls_mac_algorithm_t` values.
    pub const MAC_SHA256: c_uint = 6;
    pub const MAC_SHA384: c_uint = 7;
    /// `gnutls_cipher_algorithm_t` values.
    pub const CIPHER_AES_128_GCM: c_uint = 10;
    pub const CIPHER_AES_256_GCM: c_uint = 11;
    pub const CIPHER_CHACHA20_POLY1305: c_uint = 23;

    unsafe extern "C" {
        pub fn gnutls_rnd(level: c_int, data: *mut c_void, len: usize) -> c_int;

        pub fn gnutls_privkey_init(key: *mut *mut Opaque) -> c_int;
        pub fn gnutls_privkey_deinit(key: *mut Opaque);
        pub fn gnutls_privkey_import_x509_raw(
            key: *mut Opaque,
            data: *const gnutls_datum_t,
            format: c_uint,
            password: *const i8,
            flags: c_uint,
        ) -> c_int;
        pub fn gnutls_privkey_sign_data2(
            key: *mut Opaque,
            algo: c_uint,
            flags: c_uint,
            data: *const gnutls_datum_t,
            signature: *mut gnutls_datum_t,
        ) -> c_int;
        pub fn gnutls_pubkey_init(key: *mut *mut Opaque) -> c_int;
        pub fn gnutls_pubkey_deinit(key: *mut Opaque);
        pub fn gnutls_pubkey_import(key: *mut Opaque, data: *const gnutls_datum_t, format: c_uint) -> c_int;
        pub fn gnutls_pubkey_verify_data2(
            key: *mut Opaque,
            algo: c_uint,
            flags: c_uint,
            data: *const gnutls_datum_t,
            signature: *const gnutls_datum_t,
        ) -> c_int;

        pub fn gnutls_hmac_fast(
            algo: c_uint,
            key: *const c_void,
            key_len: usize,
            text: *const c_void,
            text_len: usize,
            digest: *mut c_void,
        ) -> c_int;
        pub fn gnutls_hmac_init(
            handle: *mut *mut Opaque,
            algo: c_uint,
            key: *const c_void,
            len: usize,
        ) -> c_int;
        pub fn gnutls_hmac(handle: *mut Opaque, text: *const c_void, len: usize) -> c_int;
        pub fn gnutls_hmac_output(handle: *mut Opaque, digest: *mut c_void);
        pub fn gnutls_hmac_deinit(handle: *mut Opaque, digest: *mut c_void);
        pub fn gnutls_hmac_get_len(algo: c_uint) -> c_uint;

        pub fn gnutls_aead_cipher_init(
            handle: *mut *mut Opaque,
            cipher: c_uint,
            key: *const gnutls_datum_t,
        ) -> c_int;
        pub fn gnutls_aead_cipher_deinit(handle: *mut Opaque);
        pub fn gnutls_aead_cipher_encrypt(
            handle: *mut Opaque,
            nonce: *const c_void,
            nonce_len: usize,
            auth: *const c_void,
            auth_len: usize,
            tag_size: usize,
            ptext: *const c_void,
            ptext_len: usize,
            ctext: *mut c_void,
            ctext_len: *mut usize,
        ) -> c_int;
        pub fn gnutls_aead_cipher_encryptv(
            handle: *mut Opaque,
            nonce: *const c_void,
            nonce_len: usize,
            auth_iov: *const IoVec,
            auth_iovcnt: c_int,
            tag_size: usize,
            iov: *const IoVec,
            iovcnt: c_int,
            ctext: *mut c_void,
            ctext_len: *mut usize,
        ) -> c_int;
        pub fn gnutls_aead_cipher_decrypt(
            handle: *mut Opaque,
            nonce: *const c_void,
            nonce_len: usize,
            auth: *const c_void,
            auth_len: usize,
            tag_size: usize,
            ctext: *const c_void,
            ctext_len: usize,
            ptext: *mut c_void,
            ptext_len: *mut usize,
        ) -> c_int;

        pub fn nettle_version_major() -> c_int;
        pub fn nettle_version_minor() -> c_int;
        pub fn nettle_curve25519_mul_g(q: *mut u8, n: *const u8);
        pub fn nettle_curve25519_mul(q: *mut u8, n: *const u8, p: *const u8);
        pub fn nettle_get_secp_256r1() -> *const EccCurve;
        pub fn nettle_get_secp_384r1() -> *const EccCurve;
        pub fn nettle_ecc_point_init(p: *mut EccPoint, ecc: *const EccCurve);
        pub fn nettle_ecc_point_clear(p: *mut EccPoint);
        pub fn nettle_ecc_point_set(p: *mut EccPoint, x: *const Mpz, y: *const Mpz) -> c_int;
        pub fn nettle_ecc_point_get(p: *const EccPoint, x: *mut Mpz, y: *mut Mpz);
        pub fn nettle_ecc_scalar_init(s: *mut EccScalar, ecc: *const EccCurve);
        pub fn nettle_ecc_scalar_clear(s: *mut EccScalar);
        pub fn nettle_ecc_point_mul(r: *mut EccPoint, n: *const EccScalar, p: *const EccPoint);
        pub fn nettle_ecdsa_generate_keypair(
            public: *mut EccPoint,
            key: *mut EccScalar,
            random_ctx: *mut c_void,
            random: Option<RandomFn>,
        );
        pub fn nettle_mpz_get_str_256(length: usize, s: *mut u8, x: *const Mpz);
        pub fn nettle_mpz_set_str_256_u(x: *mut Mpz, length: usize, s: *const u8);

        pub fn __gmpz_init(x: *mut Mpz);
        pub fn __gmpz_clear(x: *mut Mpz);
    }
}

/// An AEAD tag, in bytes.
const TAG_LEN: usize = 16;
/// An X25519 key's length, private or public, and its shared secret's.
const X25519_LEN: usize = 32;

/// GnuTLS's crypto (nettle, and GnuTLS's own accelerated AES-GCM) as the
/// floor of GnuTLS.
#[derive(Default)]
pub struct GnuTlsCrypto;

/// nettle's random function for GnuTLS's key generation (its
/// `rnd_key_func`): `gnutls_rnd(GNUTLS_RND_KEY)`.
unsafe extern "C" fn random_key(_ctx: *mut c_void, length: usize, dst: *mut u8) {
    // SAFETY: nettle passes `length` writable bytes. GnuTLS's own
    // function ignores a failure here too (it cannot return one).
    unsafe { ext::gnutls_rnd(ext::RND_KEY, dst.cast(), length) };
}

/// A GMP integer, cleared when dropped.
struct Mpz(Box<ext::Mpz>);

impl Mpz {
    fn new() -> Mpz {
        // SAFETY: GMP's all-zero struct is overwritten by its init.
        let mut z = Mpz(Box::new(unsafe { std::mem::zeroed() }));
        // SAFETY: initialised once, here.
        unsafe { ext::__gmpz_init(&mut *z.0) };
        z
    }

    /// The integer of the big-endian `bytes`.
    fn from_bytes(bytes: &[u8]) -> Mpz {
        let mut z = Mpz::new();
        // SAFETY: an initialised integer; `bytes` is read for its length.
        unsafe { ext::nettle_mpz_set_str_256_u(&mut *z.0, bytes.len(), bytes.as_ptr()) };
        z
    }

    /// Appends the integer as `len` big-endian bytes to `out`.
    fn put(&self, len: usize, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + len, 0);
        // SAFETY: an initialised integer; `len` writable bytes.
        unsafe { ext::nettle_mpz_get_str_256(len, out[at..].as_mut_ptr(), &*self.0) };
    }
}

impl Drop for Mpz {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, cleared once.
        unsafe { ext::__gmpz_clear(&mut *self.0) };
    }
}

/// A point on a NIST curve, cleared when dropped.
struct Point(Box<ext::EccPoint>);

impl Point {
    fn new(curve: *const ext::EccCurve) -> Point {
        // SAFETY: the all-zero struct is overwritten by its init.
        let mut p = Point(Box::new(unsafe { std::mem::zeroed() }));
        // SAFETY: initialised once, here, on a curve of nettle's.
        unsafe { ext::nettle_ecc_point_init(&mut *p.0, curve) };
        p
    }

    /// Its coordinates.
    fn get(&self) -> (Mpz, Mpz) {
        let (mut x, mut y) = (Mpz::new(), Mpz::new());
        // SAFETY: an initialised point and integers.
        unsafe { ext::nettle_ecc_point_get(&*self.0, &mut *x.0, &mut *y.0) };
        (x, y)
    }
}

impl Drop for Point {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, cleared once.
        unsafe { ext::nettle_ecc_point_clear(&mut *self.0) };
    }
}

/// A scalar (a private key) on a NIST curve, cleared when dropped.
pub struct Scalar(Box<ext::EccScalar>);

impl Scalar {
    fn new(curve: *const ext::EccCurve) -> Scalar {
        // SAFETY: the all-zero struct is overwritten by its init.
        let mut s = Scalar(Box::new(unsafe { std::mem::zeroed() }));
        // SAFETY: initialised once, here, on a curve of nettle's.
        unsafe { ext::nettle_ecc_scalar_init(&mut *s.0, curve) };
        s
    }
}

impl Drop for Scalar {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, cleared once.
        unsafe { ext::nettle_ecc_scalar_clear(&mut *self.0) };
    }
}

/// An ephemeral private key.
pub enum Private {
    /// An X25519 private key.
    X25519([u8; X25519_LEN]),
    /// A NIST-curve private key, with its curve and field size in bytes.
    Ec(Scalar, *const ext::EccCurve, usize),
}

/// A GnuTLS key handle (private or public), freed when dropped.
pub struct Key {
    handle: *mut ext::Opaque,
    private: bool,
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: made by the matching `_init`, freed once.
        unsafe {
            if self.private {
                ext::gnutls_privkey_deinit(self.handle)
            } else {
                ext::gnutls_pubkey_deinit(self.handle)
            }
        }
    }
}

/// A keyed AEAD handle, freed when dropped.
pub struct AeadKey(*mut ext::Opaque);

impl Drop for AeadKey {
    fn drop(&mut self) {
        // SAFETY: made by gnutls_aead_cipher_init, freed once.
        unsafe { ext::gnutls_aead_cipher_deinit(self.0) };
    }
}

/// nettle's NIST curve of `kx` and its field size in bytes.
fn curve(kx: Kx) -> Result<(*const ext::EccCurve, usize)> {
    // SAFETY: static curve descriptions.
    Ok(match kx {
        Kx::P256 => (unsafe { ext::nettle_get_secp_256r1() }, 32),
        Kx::P384 => (unsafe { ext::nettle_get_secp_384r1() }, 48),
        _ => bail!("{kx:?} is not a NIST curve"),
    })
}

fn no_ml_kem() -> String {
    format!("{}: no ML-KEM (GnuTLS 3.7 has no post-quantum key exchange)", library_name())
}

/// GnuTLS's signature algorithm for `sig`.
fn sign_algorithm(sig: Sig) -> c_uint {
    match sig {
        Sig::EcdsaP256Sha256 => ext::SIGN_ECDSA_SECP256R1_SHA256,
        Sig::EcdsaP384Sha384 => ext::SIGN_ECDSA_SECP384R1_SHA384,
        Sig::RsaPssSha256(_) => ext::SIGN_RSA_PSS_RSAE_SHA256,
        Sig::RsaPkcs1Sha256(_) => ext::SIGN_RSA_SHA256,
    }
}

/// GnuTLS's MAC for `hash`, and its length.
fn mac(hash: Hash) -> (c_uint, usize) {
    let algo = if hash == Hash::Sha384 { ext::MAC_SHA384 } else { ext::MAC_SHA256 };
    // SAFETY: a lookup of a known algorithm.
    (algo, unsafe { ext::gnutls_hmac_get_len(algo) } as usize)
}

/// GnuTLS 3.7 over the system's nettle 3.8 (exported functions only: the
/// system's builds have no other symbols). Its nettle backend
/// (lib/nettle/pk.c) makes X25519 shares with `nettle_curve25519_mul_g` and
/// agrees with `nettle_curve25519_mul`, makes every NIST-curve key with
/// `nettle_ecdsa_generate_keypair` and agrees with `nettle_ecc_point_mul`
/// (`ecc_shared_secret`); signs with `nettle_ecdsa_sign`,
/// `nettle_rsa_pss_sha256_sign_digest_tr` or `nettle_rsa_pkcs1_sign_tr` and
/// verifies with `nettle_ecdsa_verify`, `nettle_rsa_pss_sha256_verify_digest`
/// or `nettle_rsa_pkcs1_verify`. HMACs: where GnuTLS computes them with
/// nettle, each (the HKDF's, the Finished's, TLS 1.2's PRF) ends in
/// `hmac_sha256_digest` or `hmac_sha384_digest`, called through the MAC's
/// function pointer; on x86 with SSSE3 GnuTLS uses its own accelerated
/// HMAC-SHA256/384 (lib/accelerated/x86/hmac-x86-ssse3.c), static
/// functions a system build does not show, and the count says the class
/// is not counted.
pub const GNUTLS_NETTLE: Profile = Profile {
    name: "GnuTLS (nettle)",
    functions: &[
        (Class::KeyPairX25519, &["nettle_curve25519_mul_g"]),
        (Class::AgreeX25519, &["nettle_curve25519_mul"]),
        (Class::KeyPairEc, &["nettle_ecdsa_generate_keypair"]),
        (Class::AgreeEc, &["nettle_ecc_point_mul"]),
        (Class::SignEcdsa, &["nettle_ecdsa_sign"]),
        (Class::VerifyEcdsa, &["nettle_ecdsa_verify"]),
        (Class::SignRsa, &["nettle_rsa_pss_sha256_sign_digest_tr", "nettle_rsa_pkcs1_sign_tr"]),
        (Class::VerifyRsa, &["nettle_rsa_pss_sha256_verify_digest", "nettle_rsa_pkcs1_verify"]),
        (Class::Hmac, &["nettle_hmac_sha256_digest", "nettle_hmac_sha384_digest"]),
    ],
    own_checks: &[],
    fewer: &[],
    merged: &[],
    not_from: &[],
};

impl Backend for GnuTlsCrypto {
    type Private = Private;
    type SigningKey = Key;
    type AeadKey = AeadKey;
    type VerifyKey = Key;

    /// `nettle-<version>+gnutls-<version>`, e.g. `nettle-3.8+gnutls-3.7.9`:
    /// nettle's version as it reports it (major and minor), and GnuTLS's.
    fn name() -> String {
        // SAFETY: plain getters.
        let (major, minor) = unsafe { (ext::nettle_version_major(), ext::nettle_version_minor()) };
        format!("nettle-{major}.{minor}+{}", library_name())
    }

    fn profile() -> Option<&'static Profile> {
        Some(&GNUTLS_NETTLE)
    }

    fn unsupported(op: Op) -> Option<String> {
        op.is_ml_kem().then(no_ml_kem)
    }

    fn key_gen(kx: Kx) -> Result<(Private, Vec<u8>)> {
        match kx {
            Kx::X25519 => {
                let mut private = [0u8; X25519_LEN];
                let mut public = vec![0u8; X25519_LEN];
                // SAFETY: `private` and `public` hold an X25519 key each.
                unsafe {
                    let ret = ext::gnutls_rnd(ext::RND_KEY, private.as_mut_ptr().cast(), private.len());
                    check(ret, "gnutls_rnd")?;
                    ext::nettle_curve25519_mul_g(public.as_mut_ptr(), private.as_ptr());
                }
                Ok((Private::X25519(private), public))
            }
            Kx::P256 | Kx::P384 => {
                let (curve, size) = curve(kx)?;
                let (mut public, mut key) = (Point::new(curve), Scalar::new(curve));
                // SAFETY: an initialised point and scalar on `curve`;
                // GnuTLS's random function.
                unsafe {
                    ext::nettle_ecdsa_generate_keypair(
                        &mut *public.0,
                        &mut *key.0,
                        ptr::null_mut(),
                        Some(random_key),
                    )
                };
                let (x, y) = public.get();
                let mut encoded = Vec::with_capacity(1 + 2 * size);
                encoded.push(4);
                x.put(size, &mut encoded);
                y.put(size, &mut encoded);
                Ok((Private::Ec(key, curve, size), encoded))
            }
            Kx::MlKem768 => bail!("{}", no_ml_kem()),
        }
    }

    fn agree(kx: Kx, private: Private, peer: &[u8]) -> Result<Vec<u8>> {
        match (kx, private) {
            (Kx::X25519, Private::X25519(key)) => {
                ensure!(peer.len() == X25519_LEN, "an X25519 public key of {} bytes", peer.len());
                let mut secret = vec![0u8; X25519_LEN];
                // SAFETY: 32-byte key, peer key and output.
                unsafe { ext::nettle_curve25519_mul(secret.as_mut_ptr(), key.as_ptr(), peer.as_ptr()) };
                ensure!(secret.iter().any(|b| *b != 0), "X25519: an all-zero shared secret");
                Ok(secret)
            }
            (Kx::P256 | Kx::P384, Private::Ec(key, curve, size)) => {
                ensure!(
                    peer.len() == 1 + 2 * size && peer[0] == 4,
                    "{kx}: not an uncompressed point of {size}-byte coordinates"
                );
                let (x, y) = (Mpz::from_bytes(&peer[1..=size]), Mpz::from_bytes(&peer[1 + size..]));
                let mut point = Point::new(curve);
                // SAFETY: an initialised point and integers.
                let on_curve = unsafe { ext::nettle_ecc_point_set(&mut *point.0, &*x.0, &*y.0) };
                ensure!(on_curve != 0, "{kx}: the peer's point is not on the curve");
                let mut product = Point::new(curve);
                // SAFETY: initialised points and scalar on one curve.
                unsafe { ext::nettle_ecc_point_mul(&mut *product.0, &*key.0, &*point.0) };
                let mut secret = Vec::with_capacity(size);
                product.get().0.put(size, &mut secret);
                Ok(secret)
            }
            (kx, _) => bail!("{kx}: a private key of another group"),
        }
    }

    fn encapsulate(_kx: Kx, _peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        bail!("{}", no_ml_kem())
    }

    fn decapsulate(_kx: Kx, _private: Private, _ciphertext: &[u8]) -> Result<Vec<u8>> {
        bail!("{}", no_ml_kem())
    }

    /// `gnutls_privkey_import_x509_raw` of the PKCS#8 document (DER).
    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<Key> {
        let mut handle = ptr::null_mut();
        // SAFETY: `handle` is written by the init.
        check(unsafe { ext::gnutls_privkey_init(&mut handle) }, "gnutls_privkey_init")?;
        let key = Key { handle, private: true };
        let der = datum(pkcs8);
        // SAFETY: a fresh key; the DER is read (and copied) by the call.
        let ret =
            unsafe { ext::gnutls_privkey_import_x509_raw(key.handle, &der, ext::FMT_DER, ptr::null(), 0) };
        check(ret, &format!("{sig}: gnutls_privkey_import_x509_raw"))?;
        Ok(key)
    }

    fn sign(key: &Key, sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
        let data = datum(msg);
        let mut out = sys::gnutls_datum_t { data: ptr::null_mut(), size: 0 };
        // SAFETY: an imported key; `data` is read; `out` receives a buffer
        // GnuTLS allocates, freed below.
        let ret =
            unsafe { ext::gnutls_privkey_sign_data2(key.handle, sign_algorithm(sig), 0, &data, &mut out) };
        check(ret, &format!("{sig}: gnutls_privkey_sign_data2"))?;
        // SAFETY: GnuTLS's buffer of `size` bytes.
        let signature = unsafe { std::slice::from_raw_parts(out.data, out.size as usize) }.to_vec();
        free(out.data.cast());
        Ok(signature)
    }

    /// `gnutls_pubkey_import` of the SubjectPublicKeyInfo (DER).
    fn verify_key(sig: Sig, public: &PublicKey) -> Result<Key> {
        let mut handle = ptr::null_mut();
        // SAFETY: `handle` is written by the init.
        check(unsafe { ext::gnutls_pubkey_init(&mut handle) }, "gnutls_pubkey_init")?;
        let key = Key { handle, private: false };
        let der = datum(&public.spki);
        // SAFETY: a fresh key; the DER is read (and copied) by the call.
        let ret = unsafe { ext::gnutls_pubkey_import(key.handle, &der, ext::FMT_DER) };
        check(ret, &format!("{sig}: gnutls_pubkey_import"))?;
        Ok(key)
    }

    fn verify(sig: Sig, key: &Key, msg: &[u8], signature: &[u8]) -> Result<()> {
        let (data, signature) = (datum(msg), datum(signature));
        // SAFETY: an imported key; both datums are read.
        let ret =
            unsafe { ext::gnutls_pubkey_verify_data2(key.handle, sign_algorithm(sig), 0, &data, &signature) };
        check(ret, &format!("{sig}: the signature does not verify (gnutls_pubkey_verify_data2)"))?;
        Ok(())
    }

    /// `gnutls_hmac_fast`, keyed anew.
    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
        let (algo, len) = mac(hash);
        let mut out = vec![0u8; len];
        // SAFETY: the key and data are read for their lengths; `out` holds
        // the MAC's length.
        let ret = unsafe {
            ext::gnutls_hmac_fast(
                algo,
                key.as_ptr().cast(),
                key.len(),
                data.as_ptr().cast(),
                data.len(),
                out.as_mut_ptr().cast(),
            )
        };
        check(ret, "gnutls_hmac_fast")?;
        Ok(out)
    }

    /// One handle keyed once (`gnutls_hmac_init`); `gnutls_hmac_output`
    /// leaves it keyed for the next input.
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        let (algo, len) = mac(hash);
        let mut handle = ptr::null_mut();
        // SAFETY: `handle` is written by the init; the key is read (copied).
        let ret = unsafe { ext::gnutls_hmac_init(&mut handle, algo, key.as_ptr().cast(), key.len()) };
        check(ret, "gnutls_hmac_init")?;
        let mut outs = Vec::with_capacity(data.len());
        let mut result = Ok(());
        for d in data {
            let mut out = vec![0u8; len];
            // SAFETY: a live handle; `d` is read, `out` holds the MAC.
            let ret = unsafe { ext::gnutls_hmac(handle, d.as_ptr().cast(), d.len()) };
            if let Err(e) = check(ret, "gnutls_hmac") {
                result = Err(e);
                break;
            }
            // SAFETY: as above.
            unsafe { ext::gnutls_hmac_output(handle, out.as_mut_ptr().cast()) };
            outs.push(out);
        }
        // SAFETY: made above, freed once; no final output wanted.
        unsafe { ext::gnutls_hmac_deinit(handle, ptr::null_mut()) };
        result.map(|()| outs)
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        let (cipher, len) = match aead {
            Aead::Aes128Gcm => (ext::CIPHER_AES_128_GCM, 16),
            Aead::Aes256Gcm => (ext::CIPHER_AES_256_GCM, 32),
            Aead::Chacha20Poly1305 => (ext::CIPHER_CHACHA20_POLY1305, 32),
        };
        ensure!(key.len() == len, "a {aead:?} key of {} bytes", key.len());
        let mut handle = ptr::null_mut();
        let key = datum(key);
        // SAFETY: `handle` is written by the init; the key is read (copied).
        let ret = unsafe { ext::gnutls_aead_cipher_init(&mut handle, cipher, &key) };
        check(ret, "gnutls_aead_cipher_init")?;
        Ok(AeadKey(handle))
    }

    fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        let len = in_out.len();
        in_out.resize(len + TAG_LEN, 0);
        let mut written = in_out.len();
        // SAFETY: a keyed handle; in place: the plaintext's `len` bytes are
        // read and the ciphertext and tag written over `in_out`, which
        // holds both (`written` gives its size and receives the output's).
        let ret = unsafe {
            ext::gnutls_aead_cipher_encrypt(
                key.0,
                nonce.as_ptr().cast(),
                nonce.len(),
                aad.as_ptr().cast(),
                aad.len(),
                TAG_LEN,
                in_out.as_ptr().cast(),
                len,
                in_out.as_mut_ptr().cast(),
                &mut written,
            )
        };
        check(ret, "gnutls_aead_cipher_encrypt")?;
        ensure!(
            written == len + TAG_LEN,
            "gnutls_aead_cipher_encrypt wrote {written} bytes of {}",
            len + TAG_LEN
        );
        Ok(())
    }

    /// `gnutls_aead_cipher_encryptv` of the fragment and the content type
    /// into `out`, as `encrypt_packet_tls13` seals a record.
    fn seal_from(
        key: &AeadKey,
        nonce: [u8; 12],
        aad: &[u8],
        fragment: &[u8],
        content_type: u8,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let size = fragment.len() + 1 + TAG_LEN;
        out.clear();
        out.resize(size, 0);
        let auth = [ext::IoVec { base: aad.as_ptr().cast(), len: aad.len() }];
        let iov = [
            ext::IoVec { base: fragment.as_ptr().cast(), len: fragment.len() },
            ext::IoVec { base: (&raw const content_type).cast(), len: 1 },
        ];
        let mut written = size;
        // SAFETY: a keyed handle; the gather lists point at live buffers
        // of their lengths; `out` holds the ciphertext and the tag.
        let ret = unsafe {
            ext::gnutls_aead_cipher_encryptv(
                key.0,
                nonce.as_ptr().cast(),
                nonce.len(),
                auth.as_ptr(),
                1,
                TAG_LEN,
                iov.as_ptr(),
                2,
                out.as_mut_ptr().cast(),
                &mut written,
            )
        };
        check(ret, "gnutls_aead_cipher_encryptv")?;
        ensure!(written == size, "gnutls_aead_cipher_encryptv wrote {written} bytes of {size}");
        Ok(())
    }

    fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        ensure!(in_out.len() >= TAG_LEN, "a record shorter than its tag");
        let mut written = in_out.len();
        // SAFETY: a keyed handle; in place: the ciphertext and tag are
        // read, the plaintext written over them.
        let ret = unsafe {
            ext::gnutls_aead_cipher_decrypt(
                key.0,
                nonce.as_ptr().cast(),
                nonce.len(),
                aad.as_ptr().cast(),
                aad.len(),
                TAG_LEN,
                in_out.as_ptr().cast(),
                in_out.len(),
                in_out.as_mut_ptr().cast(),
                &mut written,
            )
        };
        check(ret, "gnutls_aead_cipher_decrypt: the record does not authenticate")?;
        Ok(written)
    }
}
