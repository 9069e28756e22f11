//! The floor through wolfCrypt, wolfSSL's own crypto (the `wc_*` calls of
//! the same vendored build), called the way wolfSSL's TLS layer calls it
//! (src/tls.c, src/internal.c, src/tls13.c, src/keys.c of wolfSSL 5.9):
//!
//! - X25519: `wc_curve25519_make_key` and the little-endian public key
//!   (`TLSX_KeyShare_GenX25519Key`); the peer's key checked
//!   (`wc_curve25519_check_public`), imported and agreed with
//!   (`wc_curve25519_shared_secret_ex`);
//! - ECDH over secp256r1/secp384r1: `wc_ecc_make_key_ex` and the X9.63
//!   point (`EccMakeKey`); the peer's point imported on the curve
//!   (`wc_ecc_import_x963_ex`) and `wc_ecc_shared_secret` with the
//!   private key's RNG set, as `EccSharedSecret` does;
//! - ML-KEM-768 (X25519MLKEM768's): `wc_MlKemKey_MakeKey`,
//!   `wc_MlKemKey_DecodePublicKey` + `wc_MlKemKey_Encapsulate`,
//!   `wc_MlKemKey_Decapsulate`;
//! - signatures over a digest the caller makes, as `EccSign`/`EccVerify`
//!   and `RsaSign`/`RsaVerify` take one: `wc_ecc_sign_hash` and
//!   `wc_ecc_verify_hash`; RSA-PSS through `wc_RsaPSS_Sign` and
//!   `wc_RsaPSS_VerifyInline` + `wc_RsaPSS_CheckPadding`, PKCS#1 v1.5
//!   through `wc_RsaSSL_Sign`/`wc_RsaSSL_VerifyInline` on the DigestInfo
//!   (`wc_EncodeSignature`), as certificates are checked. wolfSSL's TLS
//!   layer also verifies each RSA signature it makes (`VerifyRsaSign`,
//!   always in TLS 1.3): that check is the library's own choice, counted
//!   as protocol cost, not here;
//! - HMAC: `wc_HmacSetKey`, `wc_HmacUpdate`, `wc_HmacFinal` (the HKDF of
//!   TLS 1.3's key schedule and TLS 1.2's PRF are built on them), keyed
//!   anew each call; TLS 1.2's P_hash keys once and reuses the keyed state,
//!   which `wc_HmacFinal` restores;
//! - AEAD: an `Aes` keyed once (`wc_AesGcmSetKey`) and `wc_AesGcmEncrypt`
//!   / `wc_AesGcmDecrypt` in place, as `EncryptTls13` does; ChaCha20 keyed
//!   once (`wc_Chacha_SetKey`) and `wc_ChaCha20Poly1305_Encrypt_ex` /
//!   `_Decrypt_ex` with its Poly1305, as TLS 1.3's `ChaCha20Poly1305_Encrypt`
//!   does. A record is copied into the output buffer and sealed there (the
//!   default [`Backend::seal_from`]), as `BuildTls13Message` does.
//!
//! Random numbers come from one `WC_RNG` per thread (a wolfSSL session
//! makes its own, at creation: the library's cost).

use std::{
    cell::RefCell,
    ffi::{c_int, c_void},
    ptr,
};

use anyhow::{Context, Result, bail, ensure};
use wolfssl_sys as sys;

use super::config::library_name;
use crate::{
    floor::{
        Backend, PublicKey,
        count::{Class, Profile},
        ops::{Hash, Kx, Op, Sig},
    },
    params::Aead,
};

/// An X25519 key's length, private or public, and its shared secret's.
const X25519_LEN: usize = 32;
/// An AEAD tag, in bytes.
const TAG_LEN: usize = 16;
/// An AEAD nonce, in bytes.
const NONCE_LEN: usize = 12;
/// `INVALID_DEVID`: no crypto callback device, software only.
const NO_DEVICE: c_int = -2;

/// The calls of the two wolfCrypt headers wolfssl-sys's bindings leave out
/// (its wrapper.h reaches neither `curve25519.h` nor `wc_mlkem.h`), as
/// wolfSSL 5.9 declares them there; both built into its library. Their
/// keys are made and freed by wolfCrypt (`_new`/`_delete`, `_New`/
/// `_Delete`), so their layouts stay wolfCrypt's.
mod ext {
    use std::ffi::{c_int, c_uchar, c_void};

    use super::sys::{WC_RNG, word32};

    /// `curve25519_key`, opaque here.
    #[repr(C)]
    pub struct Curve25519Key {
        _private: [u8; 0],
    }

    /// `MlKemKey`, opaque here.
    #[repr(C)]
    pub struct MlKemKey {
        _private: [u8; 0],
    }

    /// `EC25519_LITTLE_ENDIAN`: keys as TLS sends them (RFC 7748).
    pub const EC25519_LITTLE_ENDIAN: c_int = 0;
    /// `WC_ML_KEM_768` (wc_mlkem.h's enum).
    pub const WC_ML_KEM_768: c_int = 1;

    unsafe extern "C" {
        pub fn wc_curve25519_new(heap: *mut c_void, dev_id: c_int, result: *mut c_int) -> *mut Curve25519Key;
        pub fn wc_curve25519_delete(key: *mut Curve25519Key, key_p: *mut *mut Curve25519Key) -> c_int;
        pub fn wc_curve25519_make_key(rng: *mut WC_RNG, size: c_int, key: *mut Curve25519Key) -> c_int;
        pub fn wc_curve25519_export_public_ex(
            key: *mut Curve25519Key,
            out: *mut c_uchar,
            out_len: *mut word32,
            endian: c_int,
        ) -> c_int;
        pub fn wc_curve25519_check_public(public: *const c_uchar, len: word32, endian: c_int) -> c_int;
        pub fn wc_curve25519_import_public_ex(
            public: *const c_uchar,
            len: word32,
            key: *mut Curve25519Key,
            endian: c_int,
        ) -> c_int;
        pub fn wc_curve25519_shared_secret_ex(
            private: *mut Curve25519Key,
            public: *mut Curve25519Key,
            out: *mut c_uchar,
            out_len: *mut word32,
            endian: c_int,
        ) -> c_int;

        pub fn wc_MlKemKey_New(kind: c_int, heap: *mut c_void, dev_id: c_int) -> *mut MlKemKey;
        pub fn wc_MlKemKey_Delete(key: *mut MlKemKey, key_p: *mut *mut MlKemKey) -> c_int;
        pub fn wc_MlKemKey_MakeKey(key: *mut MlKemKey, rng: *mut WC_RNG) -> c_int;
        pub fn wc_MlKemKey_PublicKeySize(key: *mut MlKemKey, len: *mut word32) -> c_int;
        pub fn wc_MlKemKey_CipherTextSize(key: *mut MlKemKey, len: *mut word32) -> c_int;
        pub fn wc_MlKemKey_SharedSecretSize(key: *mut MlKemKey, len: *mut word32) -> c_int;
        pub fn wc_MlKemKey_EncodePublicKey(key: *mut MlKemKey, out: *mut c_uchar, len: word32) -> c_int;
        pub fn wc_MlKemKey_DecodePublicKey(key: *mut MlKemKey, input: *const c_uchar, len: word32) -> c_int;
        pub fn wc_MlKemKey_Encapsulate(
            key: *mut MlKemKey,
            ct: *mut c_uchar,
            ss: *mut c_uchar,
            rng: *mut WC_RNG,
        ) -> c_int;
        pub fn wc_MlKemKey_Decapsulate(
            key: *mut MlKemKey,
            ss: *mut c_uchar,
            ct: *const c_uchar,
            len: word32,
        ) -> c_int;
    }
}

/// wolfCrypt, as a floor backend.
pub struct WolfCrypt;

/// `ret` of a `wc_*` call, 0 on success; the error names the call and
/// wolfCrypt's error text.
fn wc(ret: c_int, what: &str) -> Result<()> {
    ensure!(ret == 0, "{what}: {} ({ret})", error_text(ret));
    Ok(())
}

/// wolfCrypt's text for an error code (`wc_GetErrorString`).
fn error_text(code: c_int) -> String {
    // SAFETY: wc_GetErrorString returns a static string for any code.
    let text = unsafe { sys::wc_GetErrorString(code) };
    if text.is_null() {
        return format!("error {code}");
    }
    // SAFETY: a NUL-terminated static string.
    unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// A zeroed wolfCrypt structure on the heap, for its `_init` call.
fn zeroed<T>() -> Box<T> {
    // SAFETY: wolfCrypt's key and cipher structures are plain C data, for
    // which all-zero bytes are a valid (uninitialised) value; each is
    // initialised by its `_init` call before any other use.
    Box::new(unsafe { std::mem::zeroed() })
}

thread_local! {
    /// This thread's random number generator (`wc_InitRng`), made once.
    static RNG: RefCell<Option<Box<sys::WC_RNG>>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's `WC_RNG`, made on first use. Errors: the
/// generator could not be seeded.
fn with_rng<R>(f: impl FnOnce(*mut sys::WC_RNG) -> Result<R>) -> Result<R> {
    RNG.with(|cell| {
        let mut rng = cell.borrow_mut();
        if rng.is_none() {
            let mut new = zeroed::<sys::WC_RNG>();
            // SAFETY: a zeroed WC_RNG, initialised here once.
            wc(unsafe { sys::wc_InitRng(&mut *new) }, "wc_InitRng")?;
            *rng = Some(new);
        }
        let rng: &mut sys::WC_RNG = rng.as_mut().expect("made above");
        f(rng)
    })
}

/// Frees a wolfCrypt structure with its `_free` call when dropped.
macro_rules! owned {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $free:path) => {
        $(#[$doc])*
        pub struct $name(Box<$ty>);

        impl $name {
            fn ptr(&mut self) -> *mut $ty {
                &mut *self.0
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: initialised by its `_init` call when made, freed
                // once, here.
                unsafe {
                    $free(&mut *self.0);
                }
            }
        }
    };
}

owned!(
    /// An ECC key (`wc_ecc_init`).
    EccKey,
    sys::ecc_key,
    sys::wc_ecc_free
);
owned!(
    /// An RSA key (`wc_InitRsaKey`).
    RsaKey,
    sys::RsaKey,
    sys::wc_FreeRsaKey
);
owned!(
    /// An AES key (`wc_AesInit`).
    AesKey,
    sys::Aes,
    sys::wc_AesFree
);
owned!(
    /// An HMAC state (`wc_HmacInit`).
    HmacState,
    sys::Hmac,
    sys::wc_HmacFree
);

/// An X25519 key (`wc_curve25519_new`; freed by `wc_curve25519_delete`).
pub struct X25519Key(ptr::NonNull<ext::Curve25519Key>);

impl X25519Key {
    fn new() -> Result<X25519Key> {
        let mut ret: c_int = 0;
        // SAFETY: no heap hint, no device; `ret` is writable.
        let key = unsafe { ext::wc_curve25519_new(ptr::null_mut(), NO_DEVICE, &mut ret) };
        wc(ret, "wc_curve25519_new")?;
        ptr::NonNull::new(key).map(X25519Key).context("wc_curve25519_new: no key")
    }

    fn ptr(&mut self) -> *mut ext::Curve25519Key {
        self.0.as_ptr()
    }
}

impl Drop for X25519Key {
    fn drop(&mut self) {
        // SAFETY: made by wc_curve25519_new, freed once, here.
        unsafe {
            ext::wc_curve25519_delete(self.0.as_ptr(), ptr::null_mut());
        }
    }
}

impl EccKey {
    fn new() -> Result<EccKey> {
        let mut key = EccKey(zeroed());
        // SAFETY: a zeroed key, initialised here.
        wc(unsafe { sys::wc_ecc_init(key.ptr()) }, "wc_ecc_init")?;
        Ok(key)
    }
}

/// An ML-KEM-768 key (`wc_MlKemKey_New`; freed by `wc_MlKemKey_Delete`).
pub struct MlKemKey(ptr::NonNull<ext::MlKemKey>);

impl MlKemKey {
    fn new() -> Result<MlKemKey> {
        // SAFETY: no heap hint, no device.
        let key = unsafe { ext::wc_MlKemKey_New(ext::WC_ML_KEM_768, ptr::null_mut(), NO_DEVICE) };
        ptr::NonNull::new(key).map(MlKemKey).context("wc_MlKemKey_New: no key")
    }

    fn ptr(&mut self) -> *mut ext::MlKemKey {
        self.0.as_ptr()
    }

    /// The size `size` reports, in bytes.
    fn size(
        &mut self,
        size: unsafe extern "C" fn(*mut ext::MlKemKey, *mut sys::word32) -> c_int,
    ) -> Result<usize> {
        let mut len: sys::word32 = 0;
        // SAFETY: a made key; `len` is writable.
        wc(unsafe { size(self.ptr(), &mut len) }, "an ML-KEM size")?;
        Ok(len as usize)
    }
}

impl Drop for MlKemKey {
    fn drop(&mut self) {
        // SAFETY: made by wc_MlKemKey_New, freed once, here.
        unsafe {
            ext::wc_MlKemKey_Delete(self.0.as_ptr(), ptr::null_mut());
        }
    }
}

impl RsaKey {
    fn new() -> Result<RsaKey> {
        let mut key = RsaKey(zeroed());
        // SAFETY: a zeroed key, initialised here.
        wc(unsafe { sys::wc_InitRsaKey(key.ptr(), ptr::null_mut()) }, "wc_InitRsaKey")?;
        Ok(key)
    }
}

/// An ephemeral private key.
pub enum Private {
    /// An X25519 key pair.
    X25519(X25519Key),
    /// An ECDH key pair on a NIST curve.
    Ec(EccKey),
    /// An ML-KEM-768 decapsulation key.
    MlKem768(MlKemKey),
}

/// A signing or verifying key, decoded once; wolfCrypt's calls take it
/// mutably (they keep scratch state in it).
pub enum SchemeKey {
    /// An ECDSA key.
    Ec(RefCell<EccKey>),
    /// An RSA key.
    Rsa(RefCell<RsaKey>),
}

/// A record key, keyed once: wolfCrypt's calls take it mutably.
pub enum AeadKey {
    /// AES-GCM (`wc_AesGcmSetKey`).
    Gcm(RefCell<AesKey>),
    /// ChaCha20 keyed (`wc_Chacha_SetKey`), with the Poly1305 state
    /// `wc_ChaCha20Poly1305_Encrypt_ex` keys per record.
    ChaCha(RefCell<Box<(sys::ChaCha, sys::Poly1305)>>),
}

/// The wolfCrypt curve of a NIST group, and its field size in bytes.
fn curve(kx: Kx) -> Result<(c_int, usize)> {
    Ok(match kx {
        Kx::P256 => (sys::ecc_curve_ids_ECC_SECP256R1 as c_int, 32),
        Kx::P384 => (sys::ecc_curve_ids_ECC_SECP384R1 as c_int, 48),
        _ => bail!("{kx:?} is not a NIST curve"),
    })
}

/// `msg`'s digest under `sig`'s hash (`wc_Sha256Hash`, `wc_Sha384Hash`).
fn digest(sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
    let sha384 = matches!(sig, Sig::EcdsaP384Sha384);
    let mut out = vec![0u8; if sha384 { 48 } else { 32 }];
    // SAFETY: `msg` is read for its length; `out` holds the digest's length.
    let ret = unsafe {
        if sha384 {
            sys::wc_Sha384Hash(msg.as_ptr(), msg.len() as sys::word32, out.as_mut_ptr())
        } else {
            sys::wc_Sha256Hash(msg.as_ptr(), msg.len() as sys::word32, out.as_mut_ptr())
        }
    };
    wc(ret, "hashing")?;
    Ok(out)
}

/// A DigestInfo of a SHA-256 `digest` (RFC 8017 section 9.2), as PKCS#1
/// v1.5 signs and verifies it (`wc_EncodeSignature`).
fn digest_info(digest: &[u8]) -> Result<Vec<u8>> {
    let mut out = vec![0u8; digest.len() + 32];
    // SAFETY: `out` holds the encoding (19 bytes of header for SHA-256);
    // `digest` is read for its length.
    let len = unsafe {
        sys::wc_EncodeSignature(
            out.as_mut_ptr(),
            digest.as_ptr(),
            digest.len() as sys::word32,
            sys::Hash_Sum_SHA256h as c_int,
        )
    };
    ensure!(len > 0, "wc_EncodeSignature: {len}");
    out.truncate(len as usize);
    Ok(out)
}

/// `key` checked to be `sig`'s type.
fn check_type(key: &SchemeKey, sig: Sig) -> Result<()> {
    let ec = matches!(sig, Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384);
    ensure!(matches!(key, SchemeKey::Ec(_)) == ec, "{sig}: a key of another type");
    Ok(())
}

/// The PSS hash and mask generation function (SHA-256, MGF1 with SHA-256).
const PSS_HASH: c_int = sys::wc_HashType_WC_HASH_TYPE_SHA256 as c_int;
const PSS_MGF: c_int = sys::WC_MGF1SHA256 as c_int;

/// wolfCrypt (wolfssl-sys's vendored build, under wolfSSL): the `wc_*`
/// calls wolfSSL's TLS layer makes and the floor makes, each the one whose
/// every path to the primitive goes through it once (wolfcrypt/src/rsa.c:
/// `wc_RsaPSS_VerifyInline` calls `wc_RsaPSS_VerifyInline_ex`, which
/// certificate checks call directly; `wc_RsaPSS_Sign` calls
/// `wc_RsaPSS_Sign_ex`). A wolfSSL server verifies each RSA signature it
/// makes (`VerifyRsaSign`, src/tls13.c, which calls one of the two
/// verifications once): counted apart ([`Profile::own_checks`]). It
/// derives TLS 1.3's exporter master secret only when it keeps its arrays
/// (`DeriveMasterSecret`, src/tls13.c; `wolfSSL_KeepArrays`, off here):
/// one HMAC fewer than the table's ([`Profile::fewer`]).
pub const WOLFCRYPT: Profile = Profile {
    name: "wolfCrypt",
    functions: &[
        (Class::KeyPairX25519, &["wc_curve25519_make_key"]),
        (Class::AgreeX25519, &["wc_curve25519_shared_secret_ex"]),
        (Class::KeyPairEc, &["wc_ecc_make_key_ex"]),
        (Class::AgreeEc, &["wc_ecc_shared_secret"]),
        (Class::KeyPairMlKem, &["wc_MlKemKey_MakeKey"]),
        (Class::Encapsulate, &["wc_MlKemKey_Encapsulate"]),
        (Class::Decapsulate, &["wc_MlKemKey_Decapsulate"]),
        (Class::SignEcdsa, &["wc_ecc_sign_hash"]),
        (Class::VerifyEcdsa, &["wc_ecc_verify_hash"]),
        (Class::SignRsa, &["wc_RsaPSS_Sign_ex", "wc_RsaSSL_Sign"]),
        (Class::VerifyRsa, &["wc_RsaPSS_VerifyInline_ex", "wc_RsaSSL_VerifyInline"]),
        (Class::Hmac, &["wc_HmacFinal"]),
    ],
    own_checks: &[(Class::VerifyRsa, "VerifyRsaSign")],
    fewer: &[(Class::Hmac, 1)],
    merged: &[],
    not_from: &[],
};

impl Backend for WolfCrypt {
    type Private = Private;
    type SigningKey = SchemeKey;
    type AeadKey = AeadKey;
    type VerifyKey = SchemeKey;

    /// `wolfcrypt-<version>`, e.g. `wolfcrypt-5.9.4`: wolfSSL's version,
    /// whose build it is.
    fn name() -> String {
        library_name().replacen("wolfssl", "wolfcrypt", 1)
    }

    fn profile() -> Option<&'static Profile> {
        Some(&WOLFCRYPT)
    }

    fn unsupported(_op: Op) -> Option<String> {
        None
    }

    fn key_gen(kx: Kx) -> Result<(Private, Vec<u8>)> {
        with_rng(|rng| match kx {
            Kx::X25519 => {
                let mut key = X25519Key::new()?;
                let mut public = vec![0u8; X25519_LEN];
                let mut len = X25519_LEN as sys::word32;
                // SAFETY: an initialised key and RNG; `public` holds `len`
                // bytes.
                unsafe {
                    wc(
                        ext::wc_curve25519_make_key(rng, X25519_LEN as c_int, key.ptr()),
                        "wc_curve25519_make_key",
                    )?;
                    let ret = ext::wc_curve25519_export_public_ex(
                        key.ptr(),
                        public.as_mut_ptr(),
                        &mut len,
                        ext::EC25519_LITTLE_ENDIAN,
                    );
                    wc(ret, "wc_curve25519_export_public_ex")?;
                }
                public.truncate(len as usize);
                Ok((Private::X25519(key), public))
            }
            Kx::P256 | Kx::P384 => {
                let (id, size) = curve(kx)?;
                let mut key = EccKey::new()?;
                let mut public = vec![0u8; 2 * size + 1];
                let mut len = public.len() as sys::word32;
                // SAFETY: an initialised key and RNG; `public` holds `len`
                // bytes.
                unsafe {
                    wc(sys::wc_ecc_make_key_ex(rng, size as c_int, key.ptr(), id), "wc_ecc_make_key_ex")?;
                    wc(
                        sys::wc_ecc_export_x963(key.ptr(), public.as_mut_ptr(), &mut len),
                        "wc_ecc_export_x963",
                    )?;
                }
                public.truncate(len as usize);
                Ok((Private::Ec(key), public))
            }
            Kx::MlKem768 => {
                let mut key = MlKemKey::new()?;
                // SAFETY: an initialised key and RNG.
                wc(unsafe { ext::wc_MlKemKey_MakeKey(key.ptr(), rng) }, "wc_MlKemKey_MakeKey")?;
                let mut public = vec![0u8; key.size(ext::wc_MlKemKey_PublicKeySize)?];
                // SAFETY: `public` holds the encoding's length.
                let ret = unsafe {
                    ext::wc_MlKemKey_EncodePublicKey(
                        key.ptr(),
                        public.as_mut_ptr(),
                        public.len() as sys::word32,
                    )
                };
                wc(ret, "wc_MlKemKey_EncodePublicKey")?;
                Ok((Private::MlKem768(key), public))
            }
        })
    }

    fn agree(kx: Kx, private: Private, peer: &[u8]) -> Result<Vec<u8>> {
        match (kx, private) {
            (Kx::X25519, Private::X25519(mut key)) => {
                let mut public = X25519Key::new()?;
                let mut secret = vec![0u8; X25519_LEN];
                let mut len = X25519_LEN as sys::word32;
                let le = ext::EC25519_LITTLE_ENDIAN;
                // SAFETY: initialised keys; `peer` is read for its length,
                // `secret` holds `len` bytes.
                unsafe {
                    let ret = ext::wc_curve25519_check_public(peer.as_ptr(), peer.len() as sys::word32, le);
                    wc(ret, "wc_curve25519_check_public")?;
                    let ret = ext::wc_curve25519_import_public_ex(
                        peer.as_ptr(),
                        peer.len() as sys::word32,
                        public.ptr(),
                        le,
                    );
                    wc(ret, "wc_curve25519_import_public_ex")?;
                    let ret = ext::wc_curve25519_shared_secret_ex(
                        key.ptr(),
                        public.ptr(),
                        secret.as_mut_ptr(),
                        &mut len,
                        le,
                    );
                    wc(ret, "wc_curve25519_shared_secret_ex")?;
                }
                secret.truncate(len as usize);
                Ok(secret)
            }
            (Kx::P256 | Kx::P384, Private::Ec(mut key)) => {
                let (id, size) = curve(kx)?;
                let mut public = EccKey::new()?;
                let mut secret = vec![0u8; size];
                let mut len = size as sys::word32;
                with_rng(|rng| {
                    // SAFETY: initialised keys and RNG; `peer` is read for
                    // its length, `secret` holds `len` bytes.
                    unsafe {
                        let ret = sys::wc_ecc_import_x963_ex(
                            peer.as_ptr(),
                            peer.len() as sys::word32,
                            public.ptr(),
                            id,
                        );
                        wc(ret, "wc_ecc_import_x963_ex")?;
                        wc(sys::wc_ecc_set_rng(key.ptr(), rng), "wc_ecc_set_rng")?;
                        let ret =
                            sys::wc_ecc_shared_secret(key.ptr(), public.ptr(), secret.as_mut_ptr(), &mut len);
                        wc(ret, "wc_ecc_shared_secret")
                    }
                })?;
                secret.truncate(len as usize);
                Ok(secret)
            }
            (kx, _) => bail!("{kx:?}: not an agreement of this key"),
        }
    }

    fn encapsulate(_kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        let mut key = MlKemKey::new()?;
        // SAFETY: an initialised key; `peer` is read for its length.
        let ret =
            unsafe { ext::wc_MlKemKey_DecodePublicKey(key.ptr(), peer.as_ptr(), peer.len() as sys::word32) };
        wc(ret, "wc_MlKemKey_DecodePublicKey")?;
        let mut ciphertext = vec![0u8; key.size(ext::wc_MlKemKey_CipherTextSize)?];
        let mut secret = vec![0u8; key.size(ext::wc_MlKemKey_SharedSecretSize)?];
        with_rng(|rng| {
            // SAFETY: a key holding the peer's public key; the buffers
            // hold the sizes the key reported.
            let ret = unsafe {
                ext::wc_MlKemKey_Encapsulate(key.ptr(), ciphertext.as_mut_ptr(), secret.as_mut_ptr(), rng)
            };
            wc(ret, "wc_MlKemKey_Encapsulate")
        })?;
        Ok((ciphertext, secret))
    }

    fn decapsulate(_kx: Kx, private: Private, ciphertext: &[u8]) -> Result<Vec<u8>> {
        let Private::MlKem768(mut key) = private else { bail!("not an ML-KEM key") };
        let mut secret = vec![0u8; key.size(ext::wc_MlKemKey_SharedSecretSize)?];
        // SAFETY: an initialised key pair; `ciphertext` is read for its
        // length, `secret` holds the size the key reported.
        let ret = unsafe {
            ext::wc_MlKemKey_Decapsulate(
                key.ptr(),
                secret.as_mut_ptr(),
                ciphertext.as_ptr(),
                ciphertext.len() as sys::word32,
            )
        };
        wc(ret, "wc_MlKemKey_Decapsulate")?;
        Ok(secret)
    }

    /// An ECC key from the PKCS#8 document (`wc_EccPrivateKeyDecode`
    /// takes it whole), or an RSA key from the RSAPrivateKey inside it
    /// (`wc_GetPkcs8TraditionalOffset`, `wc_RsaPrivateKeyDecode`).
    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<SchemeKey> {
        let mut der = pkcs8.to_vec();
        let len = der.len() as sys::word32;
        let mut at: sys::word32 = 0;
        match sig {
            Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384 => {
                let mut key = EccKey::new()?;
                // SAFETY: an initialised key; `der` is read for `len` bytes.
                let ret = unsafe { sys::wc_EccPrivateKeyDecode(der.as_ptr(), &mut at, key.ptr(), len) };
                wc(ret, &format!("{sig}: wc_EccPrivateKeyDecode"))?;
                Ok(SchemeKey::Ec(RefCell::new(key)))
            }
            Sig::RsaPssSha256(_) | Sig::RsaPkcs1Sha256(_) => {
                let mut key = RsaKey::new()?;
                // SAFETY: `der` is read for `len` bytes; `at` is advanced
                // to the key inside; an initialised key.
                unsafe {
                    let ret = sys::wc_GetPkcs8TraditionalOffset(der.as_mut_ptr(), &mut at, len);
                    ensure!(ret >= 0, "{sig}: not a PKCS#8 key ({})", error_text(ret));
                    let ret = sys::wc_RsaPrivateKeyDecode(der.as_ptr(), &mut at, key.ptr(), len);
                    wc(ret, &format!("{sig}: wc_RsaPrivateKeyDecode"))?;
                }
                Ok(SchemeKey::Rsa(RefCell::new(key)))
            }
        }
    }

    fn sign(key: &SchemeKey, sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
        check_type(key, sig)?;
        let hash = digest(sig, msg)?;
        with_rng(|rng| match key {
            SchemeKey::Ec(key) => {
                let mut key = key.borrow_mut();
                // SAFETY: an initialised key; sizes as below.
                let mut out = vec![0u8; unsafe { sys::wc_ecc_sig_size(key.ptr()) }.max(0) as usize];
                let mut len = out.len() as sys::word32;
                // SAFETY: an initialised key and RNG; `hash` is read for its
                // length, `out` holds `len` bytes.
                let ret = unsafe {
                    sys::wc_ecc_sign_hash(
                        hash.as_ptr(),
                        hash.len() as sys::word32,
                        out.as_mut_ptr(),
                        &mut len,
                        rng,
                        key.ptr(),
                    )
                };
                wc(ret, "wc_ecc_sign_hash")?;
                out.truncate(len as usize);
                Ok(out)
            }
            SchemeKey::Rsa(key) => {
                let mut key = key.borrow_mut();
                // SAFETY: an initialised key.
                let size = unsafe { sys::wc_RsaEncryptSize(key.ptr()) };
                ensure!(size > 0, "wc_RsaEncryptSize: {size}");
                let mut out = vec![0u8; size as usize];
                // SAFETY: an initialised key and RNG; the input is read for
                // its length, `out` holds the modulus's size.
                let ret = unsafe {
                    match sig {
                        Sig::RsaPssSha256(_) => sys::wc_RsaPSS_Sign(
                            hash.as_ptr(),
                            hash.len() as sys::word32,
                            out.as_mut_ptr(),
                            out.len() as sys::word32,
                            PSS_HASH as _,
                            PSS_MGF,
                            key.ptr(),
                            rng,
                        ),
                        _ => {
                            let info = digest_info(&hash)?;
                            sys::wc_RsaSSL_Sign(
                                info.as_ptr(),
                                info.len() as sys::word32,
                                out.as_mut_ptr(),
                                out.len() as sys::word32,
                                key.ptr(),
                                rng,
                            )
                        }
                    }
                };
                ensure!(ret > 0, "{sig}: signing failed: {}", error_text(ret));
                out.truncate(ret as usize);
                Ok(out)
            }
        })
    }

    /// `wc_EccPublicKeyDecode` or `wc_RsaPublicKeyDecode` of the
    /// SubjectPublicKeyInfo.
    fn verify_key(sig: Sig, public: &PublicKey) -> Result<SchemeKey> {
        let len = public.spki.len() as sys::word32;
        let mut at: sys::word32 = 0;
        let key = match sig {
            Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384 => {
                let mut key = EccKey::new()?;
                // SAFETY: an initialised key; the SPKI is read for `len` bytes.
                let ret =
                    unsafe { sys::wc_EccPublicKeyDecode(public.spki.as_ptr(), &mut at, key.ptr(), len) };
                wc(ret, &format!("{sig}: wc_EccPublicKeyDecode"))?;
                SchemeKey::Ec(RefCell::new(key))
            }
            Sig::RsaPssSha256(_) | Sig::RsaPkcs1Sha256(_) => {
                let mut key = RsaKey::new()?;
                // SAFETY: an initialised key; the SPKI is read for `len` bytes.
                let ret =
                    unsafe { sys::wc_RsaPublicKeyDecode(public.spki.as_ptr(), &mut at, key.ptr(), len) };
                wc(ret, &format!("{sig}: wc_RsaPublicKeyDecode"))?;
                SchemeKey::Rsa(RefCell::new(key))
            }
        };
        Ok(key)
    }

    fn verify(sig: Sig, key: &SchemeKey, msg: &[u8], signature: &[u8]) -> Result<()> {
        check_type(key, sig)?;
        let hash = digest(sig, msg)?;
        match key {
            SchemeKey::Ec(key) => {
                let mut verified: c_int = 0;
                // SAFETY: an initialised key; the signature and the digest are
                // read for their lengths; `verified` is writable.
                let ret = unsafe {
                    sys::wc_ecc_verify_hash(
                        signature.as_ptr(),
                        signature.len() as sys::word32,
                        hash.as_ptr(),
                        hash.len() as sys::word32,
                        &mut verified,
                        key.borrow_mut().ptr(),
                    )
                };
                ensure!(
                    ret == 0 && verified == 1,
                    "{sig}: the signature does not verify ({})",
                    error_text(ret)
                );
            }
            SchemeKey::Rsa(key) => {
                let mut key = key.borrow_mut();
                // Verified in place (the `Inline` calls), on a copy.
                let mut sig_copy = signature.to_vec();
                let mut out: *mut u8 = ptr::null_mut();
                let len = sig_copy.len() as sys::word32;
                // SAFETY: an initialised key; `sig_copy` is read and written
                // in place for its length; `out` points into it after.
                let ret = unsafe {
                    match sig {
                        Sig::RsaPssSha256(_) => sys::wc_RsaPSS_VerifyInline(
                            sig_copy.as_mut_ptr(),
                            len,
                            &mut out,
                            PSS_HASH as _,
                            PSS_MGF,
                            key.ptr(),
                        ),
                        _ => sys::wc_RsaSSL_VerifyInline(sig_copy.as_mut_ptr(), len, &mut out, key.ptr()),
                    }
                };
                ensure!(
                    ret > 0 && !out.is_null(),
                    "{sig}: the signature does not verify ({})",
                    error_text(ret)
                );
                // SAFETY: wolfCrypt points `out` at `ret` bytes of the
                // recovered message inside `sig_copy`.
                let recovered = unsafe { std::slice::from_raw_parts(out, ret as usize) };
                match sig {
                    Sig::RsaPssSha256(_) => {
                        // SAFETY: both buffers are read for their lengths.
                        let ret = unsafe {
                            sys::wc_RsaPSS_CheckPadding(
                                hash.as_ptr(),
                                hash.len() as sys::word32,
                                out,
                                recovered.len() as sys::word32,
                                PSS_HASH as _,
                            )
                        };
                        ensure!(ret == 0, "{sig}: the signature does not verify ({})", error_text(ret));
                    }
                    _ => ensure!(recovered == digest_info(&hash)?, "{sig}: the signature does not verify"),
                }
            }
        }
        Ok(())
    }

    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
        Ok(hmacs(hash, key, &[data])?.remove(0))
    }

    /// One HMAC state keyed once: each `wc_HmacFinal` leaves it keyed
    /// again for the next, as wolfCrypt's TLS 1.2 PRF (`wc_PRF`) uses it.
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        hmacs(hash, key, data)
    }

    fn aead_key(aead: Aead, key: &[u8]) -> Result<AeadKey> {
        match aead {
            Aead::Aes128Gcm | Aead::Aes256Gcm => {
                let want = if aead == Aead::Aes128Gcm { 16 } else { 32 };
                ensure!(key.len() == want, "an AES-GCM key of {} bytes", key.len());
                let mut aes = AesKey(zeroed());
                // SAFETY: a zeroed Aes, initialised then keyed; `key` is read
                // for its length.
                unsafe {
                    wc(sys::wc_AesInit(aes.ptr(), ptr::null_mut(), NO_DEVICE), "wc_AesInit")?;
                    wc(
                        sys::wc_AesGcmSetKey(aes.ptr(), key.as_ptr(), key.len() as sys::word32),
                        "wc_AesGcmSetKey",
                    )?;
                }
                Ok(AeadKey::Gcm(RefCell::new(aes)))
            }
            Aead::Chacha20Poly1305 => {
                ensure!(key.len() == 32, "a ChaCha20 key of {} bytes", key.len());
                let mut state: Box<(sys::ChaCha, sys::Poly1305)> = zeroed();
                // SAFETY: a zeroed ChaCha, keyed here; `key` is read for
                // its length.
                let ret =
                    unsafe { sys::wc_Chacha_SetKey(&mut state.0, key.as_ptr(), key.len() as sys::word32) };
                wc(ret, "wc_Chacha_SetKey")?;
                Ok(AeadKey::ChaCha(RefCell::new(state)))
            }
        }
    }

    fn seal(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()> {
        let len = in_out.len();
        in_out.resize(len + TAG_LEN, 0);
        let (data, tag) = in_out.split_at_mut(len);
        let data = data.as_mut_ptr();
        // SAFETY: a keyed state; `data` is the input and the output, exactly
        // aliased (wolfCrypt encrypts in place, as the record layer calls
        // it), of `len` bytes; `tag` holds TAG_LEN bytes; the nonce and the
        // AAD are read for their lengths.
        let ret = unsafe {
            match key {
                AeadKey::Gcm(aes) => sys::wc_AesGcmEncrypt(
                    aes.borrow_mut().ptr(),
                    data,
                    data,
                    len as sys::word32,
                    nonce.as_ptr(),
                    NONCE_LEN as sys::word32,
                    tag.as_mut_ptr(),
                    TAG_LEN as sys::word32,
                    aad.as_ptr(),
                    aad.len() as sys::word32,
                ),
                AeadKey::ChaCha(state) => {
                    let state = &mut **state.borrow_mut();
                    sys::wc_ChaCha20Poly1305_Encrypt_ex(
                        &mut state.0,
                        &mut state.1,
                        data,
                        data,
                        len as sys::word32,
                        nonce.as_ptr(),
                        tag.as_mut_ptr(),
                        aad.as_ptr(),
                        aad.len() as sys::word32,
                    )
                }
            }
        };
        wc(ret, "sealing a record")
    }

    fn open(key: &AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize> {
        let plain = in_out.len().checked_sub(TAG_LEN).context("a record shorter than its tag")?;
        let (data, tag) = in_out.split_at_mut(plain);
        let data = data.as_mut_ptr();
        // SAFETY: as in `seal`; the tag is read.
        let ret = unsafe {
            match key {
                AeadKey::Gcm(aes) => sys::wc_AesGcmDecrypt(
                    aes.borrow_mut().ptr(),
                    data,
                    data,
                    plain as sys::word32,
                    nonce.as_ptr(),
                    NONCE_LEN as sys::word32,
                    tag.as_ptr(),
                    TAG_LEN as sys::word32,
                    aad.as_ptr(),
                    aad.len() as sys::word32,
                ),
                AeadKey::ChaCha(state) => {
                    let state = &mut **state.borrow_mut();
                    sys::wc_ChaCha20Poly1305_Decrypt_ex(
                        &mut state.0,
                        &mut state.1,
                        data,
                        data,
                        plain as sys::word32,
                        nonce.as_ptr(),
                        tag.as_ptr(),
                        aad.as_ptr(),
                        aad.len() as sys::word32,
                    )
                }
            }
        };
        ensure!(ret == 0, "a record does not decrypt ({})", error_text(ret));
        Ok(plain)
    }
}

/// The HMACs of each of `data` under `key`, keyed once
/// (`wc_HmacSetKey`, then `wc_HmacUpdate` and `wc_HmacFinal` each).
fn hmacs(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
    let (kind, len) = match hash {
        Hash::Sha256 => (sys::wc_HashType_WC_HASH_TYPE_SHA256, 32),
        Hash::Sha384 => (sys::wc_HashType_WC_HASH_TYPE_SHA384, 48),
    };
    let mut state = HmacState(zeroed());
    // SAFETY: a zeroed Hmac, initialised then keyed; `key` is read for its
    // length.
    unsafe {
        wc(sys::wc_HmacInit(state.ptr(), ptr::null_mut::<c_void>(), NO_DEVICE), "wc_HmacInit")?;
        wc(
            sys::wc_HmacSetKey(state.ptr(), kind as c_int, key.as_ptr(), key.len() as sys::word32),
            "wc_HmacSetKey",
        )?;
    }
    let mut out = Vec::with_capacity(data.len());
    for d in data {
        let mut mac = vec![0u8; len];
        // SAFETY: a keyed state; `d` is read for its length, `mac` holds
        // the digest's length.
        unsafe {
            wc(sys::wc_HmacUpdate(state.ptr(), d.as_ptr(), d.len() as sys::word32), "wc_HmacUpdate")?;
            wc(sys::wc_HmacFinal(state.ptr(), mac.as_mut_ptr()), "wc_HmacFinal")?;
        }
        out.push(mac);
    }
    Ok(out)
}
