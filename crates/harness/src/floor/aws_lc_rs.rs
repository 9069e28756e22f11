//! The floor through aws-lc-rs: rustls's `aws-lc-rs` provider and, since
//! s2n-tls links the same AWS-LC through aws-lc-rs (one `aws-lc-sys` per
//! build), s2n-tls's crypto. ML-KEM-768 through `aws_lc_rs::kem` (FIPS
//! 203), which has it from aws-lc-rs 1.10.0: historical-perf's builds of
//! s2n-tls 0.1.2, 0.2.3 and 0.3.1 link 1.5.2, 1.7.0 and 1.8.1, whose floor
//! has no ML-KEM (cfg `aws_lc_rs_before_1_10`, set by build.rs from the
//! lock file; those releases negotiate no ML-KEM group either).

super::ring_like::ring_like_backend!(AwsLcRs, aws_lc_rs);

/// aws-lc-rs as a floor backend.
pub struct AwsLcRs;

fn version() -> &'static str {
    env!("TLS_BENCH_AWS_LC_RS_VERSION")
}

#[cfg(aws_lc_rs_before_1_10)]
super::ring_like::without_ml_kem!(format!("aws-lc-rs {} has no ML-KEM-768 (it came in 1.10.0)", version()));
#[cfg(not(aws_lc_rs_before_1_10))]
pub use ml_kem::Private;
#[cfg(not(aws_lc_rs_before_1_10))]
use ml_kem::{agreement_key, from_agreement, kem_decapsulate, kem_encapsulate, kem_key_gen, kem_unsupported};

fn ecdsa_from_pkcs8(
    alg: &'static signature::EcdsaSigningAlgorithm,
    pkcs8: &[u8],
) -> Result<signature::EcdsaKeyPair> {
    signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8).map_err(|e| anyhow!("an ECDSA key: {e}"))
}

fn agree(
    private: agreement::EphemeralPrivateKey,
    peer: &agreement::UnparsedPublicKey<&[u8]>,
) -> Result<Vec<u8>> {
    agreement::agree_ephemeral(private, peer, anyhow!("the peer's key is invalid"), |secret| {
        Ok(secret.to_vec())
    })
}

fn rsa_signature_len(k: &signature::RsaKeyPair) -> usize {
    k.public_modulus_len()
}

/// ML-KEM-768 through `aws_lc_rs::kem` (aws-lc-rs 1.10.0 on).
#[cfg(not(aws_lc_rs_before_1_10))]
mod ml_kem {
    use anyhow::{Result, anyhow, bail};
    use aws_lc_rs::{agreement, kem};

    use crate::floor::ops::Op;

    /// An ephemeral private key of aws-lc-rs.
    pub enum Private {
        /// An X25519 or ECDH key.
        Agreement(agreement::EphemeralPrivateKey),
        /// An ML-KEM decapsulation key.
        Kem(kem::DecapsulationKey),
    }

    pub(super) fn kem_unsupported(_op: Op) -> Option<String> {
        None
    }

    pub(super) fn from_agreement(k: agreement::EphemeralPrivateKey) -> Private {
        Private::Agreement(k)
    }

    pub(super) fn agreement_key(private: Private) -> Result<agreement::EphemeralPrivateKey> {
        match private {
            Private::Agreement(k) => Ok(k),
            Private::Kem(_) => bail!("an ML-KEM key where an agreement key was expected"),
        }
    }

    pub(super) fn kem_key_gen() -> Result<(Private, Vec<u8>)> {
        let private =
            kem::DecapsulationKey::generate(&kem::ML_KEM_768).map_err(|_| anyhow!("ML-KEM-768 key pair"))?;
        let public =
            private.encapsulation_key().and_then(|k| k.key_bytes()).map_err(|_| anyhow!("ML-KEM-768 key"))?;
        let public = public.as_ref().to_vec();
        Ok((Private::Kem(private), public))
    }

    pub(super) fn kem_encapsulate(peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
        let key =
            kem::EncapsulationKey::new(&kem::ML_KEM_768, peer).map_err(|e| anyhow!("ML-KEM-768 key: {e}"))?;
        let (ciphertext, secret) =
            key.encapsulate().map_err(|_| anyhow!("ML-KEM-768 encapsulation failed"))?;
        Ok((ciphertext.as_ref().to_vec(), secret.as_ref().to_vec()))
    }

    pub(super) fn kem_decapsulate(private: Private, ciphertext: &[u8]) -> Result<Vec<u8>> {
        let Private::Kem(key) = private else { bail!("not an ML-KEM key") };
        let secret =
            key.decapsulate(ciphertext.into()).map_err(|_| anyhow!("ML-KEM-768 decapsulation failed"))?;
        Ok(secret.as_ref().to_vec())
    }
}
