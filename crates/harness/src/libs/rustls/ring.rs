//! The floor through *ring*: rustls's `ring` provider (before 0.22 its only
//! crypto). *ring* has no ML-KEM, so X25519MLKEM768 has no floor here
//! (rustls's ring provider cannot negotiate it either). rustls 0.20 links
//! two: its own calls on *ring* 0.16 (given 0.17's shapes by
//! [`super::ring_0_16`]), its webpki's verifications on 0.17, and so does
//! its floor.

#[cfg(not(ring_0_16))]
crate::floor::ring_like::ring_like_backend!(Ring, ring);
// rustls 0.20 verifies signatures through its webpki's *ring* 0.17
// (`webpki_ring`: historical-perf's build of 0.20 adds it).
#[cfg(ring_0_16)]
crate::floor::ring_like::ring_like_backend!(Ring, ring, verify: webpki_ring);

/// *ring* as a floor backend.
pub struct Ring;

crate::floor::ring_like::without_ml_kem!("ring has no ML-KEM".to_string());

// The version, and the calls whose signatures changed in *ring* 0.17:
// 0.17's own, or 0.16's given the same shapes (rustls 0.20 links 0.16).
#[cfg(ring_0_16)]
use super::ring_0_16::{agree, ecdsa_from_pkcs8, rsa_signature_len, version};
#[cfg(not(ring_0_16))]
use ring_0_17::{agree, ecdsa_from_pkcs8, rsa_signature_len, version};

/// *ring* 0.17's version, key parser, agreement and RSA signature length.
#[cfg(not(ring_0_16))]
mod ring_0_17 {
    use anyhow::{Result, anyhow};
    use ring::{agreement, rand::SystemRandom, signature};

    /// The *ring* version, e.g. `0.17.14`.
    pub(super) fn version() -> &'static str {
        env!("TLS_BENCH_RING_VERSION")
    }

    pub(super) fn ecdsa_from_pkcs8(
        alg: &'static signature::EcdsaSigningAlgorithm,
        pkcs8: &[u8],
    ) -> Result<signature::EcdsaKeyPair> {
        signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8, &SystemRandom::new())
            .map_err(|e| anyhow!("an ECDSA key: {e}"))
    }

    pub(super) fn agree(
        private: agreement::EphemeralPrivateKey,
        peer: &agreement::UnparsedPublicKey<&[u8]>,
    ) -> Result<Vec<u8>> {
        agreement::agree_ephemeral(private, peer, |secret| secret.to_vec())
            .map_err(|_| anyhow!("the peer's key is invalid"))
    }

    pub(super) fn rsa_signature_len(k: &signature::RsaKeyPair) -> usize {
        k.public().modulus_len()
    }
}
