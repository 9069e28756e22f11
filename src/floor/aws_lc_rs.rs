//! The floor through aws-lc-rs: rustls's `aws-lc-rs` provider and, since
//! s2n-tls links the same AWS-LC through aws-lc-rs (one `aws-lc-sys` per
//! build), s2n-tls's crypto. ML-KEM-768 through `aws_lc_rs::kem` (FIPS
//! 203).

use aws_lc_rs::kem;

super::ring_like::ring_like_backend!(AwsLcRs, aws_lc_rs);

/// aws-lc-rs as a floor backend.
pub struct AwsLcRs;

/// An ephemeral private key of aws-lc-rs.
pub enum Private {
    /// An X25519 or ECDH key.
    Agreement(agreement::EphemeralPrivateKey),
    /// An ML-KEM decapsulation key.
    Kem(kem::DecapsulationKey),
}

fn version() -> &'static str {
    env!("TLS_BENCH_AWS_LC_RS_VERSION")
}

fn kem_unsupported(_op: Op) -> Option<String> {
    None
}

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

fn from_agreement(k: agreement::EphemeralPrivateKey) -> Private {
    Private::Agreement(k)
}

fn agreement_key(private: Private) -> Result<agreement::EphemeralPrivateKey> {
    match private {
        Private::Agreement(k) => Ok(k),
        Private::Kem(_) => bail!("an ML-KEM key where an agreement key was expected"),
    }
}

fn kem_key_gen() -> Result<(Private, Vec<u8>)> {
    let private =
        kem::DecapsulationKey::generate(&kem::ML_KEM_768).map_err(|_| anyhow!("ML-KEM-768 key pair"))?;
    let public =
        private.encapsulation_key().and_then(|k| k.key_bytes()).map_err(|_| anyhow!("ML-KEM-768 key"))?;
    let public = public.as_ref().to_vec();
    Ok((Private::Kem(private), public))
}

fn kem_encapsulate(peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let key =
        kem::EncapsulationKey::new(&kem::ML_KEM_768, peer).map_err(|e| anyhow!("ML-KEM-768 key: {e}"))?;
    let (ciphertext, secret) = key.encapsulate().map_err(|_| anyhow!("ML-KEM-768 encapsulation failed"))?;
    Ok((ciphertext.as_ref().to_vec(), secret.as_ref().to_vec()))
}

fn kem_decapsulate(private: Private, ciphertext: &[u8]) -> Result<Vec<u8>> {
    let Private::Kem(key) = private else { bail!("not an ML-KEM key") };
    let secret =
        key.decapsulate(ciphertext.into()).map_err(|_| anyhow!("ML-KEM-768 decapsulation failed"))?;
    Ok(secret.as_ref().to_vec())
}
