//! NIST-curve key shares (secp256r1, secp384r1) through libcrypto's
//! legacy `EC_KEY` interface: one C interface in AWS-LC under the
//! `openssl` crate and in BoringSSL ([`crate::libs::openssl::config::ossl`]),
//! shared by their floor backends ([`super::ossl`]'s AWS-LC module,
//! [`super::boringssl`]). A key pair is `EC_KEY_generate_key` and its
//! public point's uncompressed encoding (`EC_POINT_point2oct`, RFC 8446
//! section 4.2.8.2); the peer's share is its point decoded
//! (`EC_POINT_oct2point`) into a public key on a group the caller gives,
//! for ECDH through `EVP_PKEY_derive` (the crates' `Deriver`, which each
//! backend calls). Both libraries' TLS layers (`ECKeyShare`,
//! ssl/ssl_key_share.cc) make the same operations on a bare `BIGNUM` and
//! `EC_POINT`, which these calls wrap. OpenSSL 3 makes its shares through
//! its providers instead ([`super::ossl3`]).

use anyhow::{Result, bail};

use crate::{floor::ops::Kx, libs::openssl::config::ossl};
use ossl::{
    bn::BigNumContext,
    ec::{EcGroup, EcGroupRef, EcKey, EcPoint, PointConversionForm},
    nid::Nid,
    pkey::{PKey, Private, Public},
};

/// The group of the NIST curve `kx` (`EC_GROUP_new_by_curve_name`).
/// Errors: `kx` is not a NIST curve.
pub fn curve(kx: Kx) -> Result<EcGroup> {
    let nid = match kx {
        Kx::P256 => Nid::X9_62_PRIME256V1,
        Kx::P384 => Nid::SECP384R1,
        _ => bail!("{kx} is not a NIST curve"),
    };
    Ok(EcGroup::from_curve_name(nid)?)
}

/// A fresh key pair on `kx`'s curve, and its public key's uncompressed
/// point as TLS sends it. Errors: `kx` is not a NIST curve, or a failed
/// libcrypto call.
pub fn key_gen(kx: Kx) -> Result<(PKey<Private>, Vec<u8>)> {
    let group = curve(kx)?;
    let key = EcKey::generate(&group)?;
    let mut ctx = BigNumContext::new()?;
    let public = key.public_key().to_bytes(&group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
    Ok((PKey::from_ec_key(key)?, public))
}

/// The peer's public key: its encoded `point` on `group`. Errors: a point
/// that does not decode onto `group`.
pub fn peer(group: &EcGroupRef, point: &[u8]) -> Result<PKey<Public>> {
    let mut ctx = BigNumContext::new()?;
    let point = EcPoint::from_bytes(group, point, &mut ctx)?;
    Ok(PKey::from_ec_key(EcKey::from_public_key(group, &point)?)?)
}

/// The key exchange of a libcrypto whose TLS layer makes NIST-curve shares
/// through these calls and has no ML-KEM the floor can call (OpenSSL
/// 1.1.1, [`super::ossl111`]; AWS-LC under the `openssl` crate,
/// [`super::ossl`]): the compat module's `ec_key_gen`, `ec_peer` and
/// `mlkem_*` functions, each ML-KEM one an error saying `$why`.
#[cfg(openssl_crate)]
macro_rules! ec_key_kx_without_mlkem {
    ($why:expr) => {
        use anyhow::bail;

        use $crate::{
            floor::ops::Kx,
            libs::openssl::config::ossl::pkey::{PKey, Private, Public},
            libs::openssl::floor::ec_key,
        };

        /// A NIST-curve key pair and its public key's uncompressed point
        /// ([`ec_key::key_gen`]).
        pub fn ec_key_gen(kx: Kx) -> anyhow::Result<(PKey<Private>, Vec<u8>)> {
            ec_key::key_gen(kx)
        }

        /// The peer's point on `private`'s group ([`ec_key::peer`]).
        pub fn ec_peer(private: &PKey<Private>, point: &[u8]) -> anyhow::Result<PKey<Public>> {
            ec_key::peer(private.ec_key()?.group(), point)
        }

        pub fn mlkem_unsupported() -> Option<String> {
            Some($why.to_string())
        }

        pub fn mlkem_key_gen() -> anyhow::Result<(PKey<Private>, Vec<u8>)> {
            bail!($why)
        }

        pub fn mlkem_encapsulate(_peer: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
            bail!($why)
        }

        pub fn mlkem_decapsulate(_private: &PKey<Private>, _ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
            bail!($why)
        }
    };
}

#[cfg(openssl_crate)]
pub(crate) use ec_key_kx_without_mlkem;
