//! The floor through *ring*: rustls's `ring` provider. *ring* has no
//! ML-KEM, so X25519MLKEM768 has no floor here (rustls's ring provider
//! cannot negotiate it either).

super::ring_like::ring_like_backend!(Ring, ring);

/// *ring* as a floor backend.
pub struct Ring;

/// An ephemeral private key of *ring*: an X25519 or ECDH key.
pub type Private = agreement::EphemeralPrivateKey;

fn version() -> &'static str {
    env!("TLS_BENCH_RING_VERSION")
}

fn kem_unsupported(op: Op) -> Option<String> {
    matches!(op, Op::KeyGen(Kx::MlKem768) | Op::Encapsulate(_) | Op::Decapsulate(_))
        .then(|| "ring has no ML-KEM".to_string())
}

fn ecdsa_from_pkcs8(
    alg: &'static signature::EcdsaSigningAlgorithm,
    pkcs8: &[u8],
) -> Result<signature::EcdsaKeyPair> {
    signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8, &SystemRandom::new())
        .map_err(|e| anyhow!("an ECDSA key: {e}"))
}

fn agree(
    private: agreement::EphemeralPrivateKey,
    peer: &agreement::UnparsedPublicKey<&[u8]>,
) -> Result<Vec<u8>> {
    agreement::agree_ephemeral(private, peer, |secret| secret.to_vec())
        .map_err(|_| anyhow!("the peer's key is invalid"))
}

fn rsa_signature_len(k: &signature::RsaKeyPair) -> usize {
    k.public().modulus_len()
}

fn from_agreement(k: agreement::EphemeralPrivateKey) -> Private {
    k
}

fn agreement_key(private: Private) -> Result<agreement::EphemeralPrivateKey> {
    Ok(private)
}

fn kem_key_gen() -> Result<(Private, Vec<u8>)> {
    bail!("ring has no ML-KEM")
}

fn kem_encapsulate(_peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    bail!("ring has no ML-KEM")
}

fn kem_decapsulate(_private: Private, _ciphertext: &[u8]) -> Result<Vec<u8>> {
    bail!("ring has no ML-KEM")
}
