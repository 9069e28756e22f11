//! *ring* 0.16's API given 0.17's shapes, for [`super::ring`]: the three
//! calls whose signatures changed in 0.17, and the floor's version string
//! for the two *ring* versions. rustls 0.20 links *ring* 0.16 for its own
//! crypto (key shares, signing, HKDF, records), and its webpki 0.22.4 links
//! *ring* 0.17 for the certificates' and CertificateVerify's verifications;
//! historical-perf's build of 0.20 gives the floor both, the second as
//! `webpki_ring` (`ring_0_16`, set by build.rs from the lock file). Source:
//! *ring* 0.16.20's `agreement::agree_ephemeral` (an error value of the
//! caller's), `EcdsaKeyPair::from_pkcs8` (no random source: 0.17 added one
//! for the key's consistency check) and `RsaKeyPair::public_modulus_len`
//! (0.17's `public().modulus_len()`).

use anyhow::{Result, anyhow};
use ring::{agreement, signature};

/// The two versions, the verifications' after `-verify-`, e.g.
/// `0.16.20-verify-0.17.14`.
pub(super) fn version() -> &'static str {
    concat!(env!("TLS_BENCH_RING_VERSION"), "-verify-", env!("TLS_BENCH_WEBPKI_RING_VERSION"))
}

pub(super) fn ecdsa_from_pkcs8(
    alg: &'static signature::EcdsaSigningAlgorithm,
    pkcs8: &[u8],
) -> Result<signature::EcdsaKeyPair> {
    signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8).map_err(|e| anyhow!("an ECDSA key: {e}"))
}

pub(super) fn agree(
    private: agreement::EphemeralPrivateKey,
    peer: &agreement::UnparsedPublicKey<&[u8]>,
) -> Result<Vec<u8>> {
    agreement::agree_ephemeral(private, peer, anyhow!("the peer's key is invalid"), |secret| {
        Ok(secret.to_vec())
    })
}

pub(super) fn rsa_signature_len(k: &signature::RsaKeyPair) -> usize {
    k.public_modulus_len()
}
