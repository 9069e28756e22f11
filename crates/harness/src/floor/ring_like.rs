//! The parts of [`super::Backend`] that aws-lc-rs and *ring* share: the two
//! crates have the same API for key agreement, signatures, HMAC and AEADs
//! (aws-lc-rs follows *ring*'s), so one body serves both, instantiated in
//! [`super::aws_lc_rs`] and [`super::ring`] with the crate's path. What
//! differs (the ECDSA key parser's arguments, the agreement call, ML-KEM)
//! each module writes itself as `ecdsa_from_pkcs8`, `agree`,
//! `agreement_key`, `from_agreement`,
//! `rsa_signature_len` and `kem_*` functions; a crate without ML-KEM-768
//! (*ring*, aws-lc-rs before 1.10.0) takes the last four from
//! [`without_ml_kem`].

/// Implements the shared methods of [`super::Backend`] for `$backend`
/// over crate `$c` (`aws_lc_rs` or `ring`); with `verify: $v`, the
/// signature verifications over crate `$v` instead (rustls 0.20 verifies
/// through its webpki's *ring* 0.17, [`super::ring_0_16`]).
macro_rules! ring_like_backend {
    ($backend:ident, $c:ident) => {
        $crate::floor::ring_like::ring_like_backend!($backend, $c, verify: $c);
    };
    ($backend:ident, $c:ident, verify: $v:ident) => {
        use anyhow::{Result, anyhow, bail};
        use $c::{aead, agreement, hmac, rand::SystemRandom, signature};

        use crate::{
            floor::{
                Backend, PublicKey,
                ops::{Hash, Kx, Op, Sig},
            },
            params::Aead,
        };

        /// A signing key of this crate.
        pub enum SigningKey {
            /// An ECDSA key pair.
            Ecdsa(signature::EcdsaKeyPair),
            /// An RSA key pair.
            Rsa(signature::RsaKeyPair),
        }

        fn agreement_alg(kx: Kx) -> Result<&'static agreement::Algorithm> {
            Ok(match kx {
                Kx::X25519 => &agreement::X25519,
                Kx::P256 => &agreement::ECDH_P256,
                Kx::P384 => &agreement::ECDH_P384,
                Kx::MlKem768 => bail!("ML-KEM-768 is a KEM, not an agreement"),
            })
        }

        fn verify_alg(sig: Sig) -> &'static dyn $v::signature::VerificationAlgorithm {
            use $v::signature as verification;
            match sig {
                Sig::EcdsaP256Sha256 => &verification::ECDSA_P256_SHA256_ASN1,
                Sig::EcdsaP384Sha384 => &verification::ECDSA_P384_SHA384_ASN1,
                Sig::RsaPssSha256(_) => &verification::RSA_PSS_2048_8192_SHA256,
                Sig::RsaPkcs1Sha256(_) => &verification::RSA_PKCS1_2048_8192_SHA256,
            }
        }

        impl Backend for $backend {
            type Private = Private;
            type SigningKey = SigningKey;
            type AeadKey = aead::LessSafeKey;
            type VerifyKey = Vec<u8>;

            fn name() -> String {
                format!("{}-{}", stringify!($c).replace('_', "-"), version())
            }

            fn unsupported(op: Op) -> Option<String> {
                kem_unsupported(op)
            }

            fn key_gen(kx: Kx) -> Result<(Private, Vec<u8>)> {
                if kx == Kx::MlKem768 {
                    return kem_key_gen();
                }
                let private =
                    agreement::EphemeralPrivateKey::generate(agreement_alg(kx)?, &SystemRandom::new())
                        .map_err(|_| anyhow!("{kx}: generating a key pair failed"))?;
                let public = private.compute_public_key().map_err(|_| anyhow!("{kx}: no public key"))?;
                let public = public.as_ref().to_vec();
                Ok((from_agreement(private), public))
            }

            fn agree(kx: Kx, private: Private, peer: &[u8]) -> Result<Vec<u8>> {
                agree(agreement_key(private)?, &agreement::UnparsedPublicKey::new(agreement_alg(kx)?, peer))
                    .map_err(|_| anyhow!("{kx}: the agreement failed"))
            }

            fn encapsulate(_kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
                kem_encapsulate(peer)
            }

            fn decapsulate(_kx: Kx, private: Private, ciphertext: &[u8]) -> Result<Vec<u8>> {
                kem_decapsulate(private, ciphertext)
            }

            fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<SigningKey> {
                Ok(match sig {
                    Sig::EcdsaP256Sha256 => SigningKey::Ecdsa(ecdsa_from_pkcs8(
                        &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                        pkcs8,
                    )?),
                    Sig::EcdsaP384Sha384 => SigningKey::Ecdsa(ecdsa_from_pkcs8(
                        &signature::ECDSA_P384_SHA384_ASN1_SIGNING,
                        pkcs8,
                    )?),
                    Sig::RsaPssSha256(_) | Sig::RsaPkcs1Sha256(_) => SigningKey::Rsa(
                        signature::RsaKeyPair::from_pkcs8(pkcs8).map_err(|e| anyhow!("an RSA key: {e}"))?,
                    ),
                })
            }

            fn sign(key: &SigningKey, sig: Sig, msg: &[u8]) -> Result<Vec<u8>> {
                let rng = SystemRandom::new();
                match (key, sig) {
                    (SigningKey::Ecdsa(k), Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384) => {
                        let s = k.sign(&rng, msg).map_err(|_| anyhow!("{sig}: signing failed"))?;
                        Ok(s.as_ref().to_vec())
                    }
                    (SigningKey::Rsa(k), Sig::RsaPssSha256(_) | Sig::RsaPkcs1Sha256(_)) => {
                        let mut out = vec![0; rsa_signature_len(k)];
                        let padding: &'static dyn signature::RsaEncoding = match sig {
                            Sig::RsaPssSha256(_) => &signature::RSA_PSS_SHA256,
                            _ => &signature::RSA_PKCS1_SHA256,
                        };
                        k.sign(padding, &rng, msg, &mut out).map_err(|_| anyhow!("{sig}: signing failed"))?;
                        Ok(out)
                    }
                    _ => bail!("{sig}: the key is of another type"),
                }
            }

            fn verify_key(_sig: Sig, public: &PublicKey) -> Result<Vec<u8>> {
                Ok(public.key.clone())
            }

            fn verify(sig: Sig, key: &Vec<u8>, msg: &[u8], signature: &[u8]) -> Result<()> {
                $v::signature::UnparsedPublicKey::new(verify_alg(sig), key)
                    .verify(msg, signature)
                    .map_err(|_| anyhow!("{sig}: the signature does not verify"))
            }

            fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
                let alg = match hash {
                    Hash::Sha256 => hmac::HMAC_SHA256,
                    Hash::Sha384 => hmac::HMAC_SHA384,
                };
                Ok(hmac::sign(&hmac::Key::new(alg, key), data).as_ref().to_vec())
            }

            fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
                let alg = match hash {
                    Hash::Sha256 => hmac::HMAC_SHA256,
                    Hash::Sha384 => hmac::HMAC_SHA384,
                };
                let key = hmac::Key::new(alg, key);
                Ok(data.iter().map(|d| hmac::sign(&key, d).as_ref().to_vec()).collect())
            }

            fn aead_key(aead: Aead, key: &[u8]) -> Result<aead::LessSafeKey> {
                let alg = match aead {
                    Aead::Aes128Gcm => &aead::AES_128_GCM,
                    Aead::Aes256Gcm => &aead::AES_256_GCM,
                    Aead::Chacha20Poly1305 => &aead::CHACHA20_POLY1305,
                };
                let key = aead::UnboundKey::new(alg, key)
                    .map_err(|_| anyhow!("an AEAD key of the wrong length"))?;
                Ok(aead::LessSafeKey::new(key))
            }

            fn seal(
                key: &aead::LessSafeKey,
                nonce: [u8; 12],
                aad: &[u8],
                in_out: &mut Vec<u8>,
            ) -> Result<()> {
                key.seal_in_place_append_tag(
                    aead::Nonce::assume_unique_for_key(nonce),
                    aead::Aad::from(aad),
                    in_out,
                )
                .map_err(|_| anyhow!("sealing failed"))
            }

            fn open(
                key: &aead::LessSafeKey,
                nonce: [u8; 12],
                aad: &[u8],
                in_out: &mut [u8],
            ) -> Result<usize> {
                let plain = key
                    .open_in_place(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(aad), in_out)
                    .map_err(|_| anyhow!("a record does not decrypt"))?;
                Ok(plain.len())
            }
        }
    };
}

pub(crate) use ring_like_backend;

/// The ML-KEM half of [`ring_like_backend`] for a crate without ML-KEM-768
/// (*ring*; aws-lc-rs before 1.10.0): ephemeral keys are agreement keys,
/// and every ML-KEM operation is unsupported for the reason `$why` (a
/// `String` expression). Built where one of them is.
#[cfg(any(feature = "rustls", aws_lc_rs_before_1_10))]
macro_rules! without_ml_kem {
    ($why:expr) => {
        /// An ephemeral private key: an X25519 or ECDH key.
        pub type Private = agreement::EphemeralPrivateKey;

        fn kem_unsupported(op: Op) -> Option<String> {
            op.is_ml_kem().then(|| $why)
        }

        fn from_agreement(k: agreement::EphemeralPrivateKey) -> Private {
            k
        }

        fn agreement_key(private: Private) -> Result<agreement::EphemeralPrivateKey> {
            Ok(private)
        }

        fn kem_key_gen() -> Result<(Private, Vec<u8>)> {
            bail!($why)
        }

        fn kem_encapsulate(_peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
            bail!($why)
        }

        fn kem_decapsulate(_private: Private, _ciphertext: &[u8]) -> Result<Vec<u8>> {
            bail!($why)
        }
    };
}

#[cfg(any(feature = "rustls", aws_lc_rs_before_1_10))]
pub(crate) use without_ml_kem;
