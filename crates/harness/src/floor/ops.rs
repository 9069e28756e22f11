//! The operation table: which cryptographic primitives one handshake of a
//! parameter set performs on each side, in the order of its flights. The
//! one place the list is derived from the parameters: the floor's
//! connections ([`crate::floor::library`]) run exactly this list, and
//! `compare` and the docs show it.
//!
//! What is counted (RFC 8446 for TLS 1.3, RFC 5246 with RFC 5288/8422 for
//! TLS 1.2):
//! - key exchange: one ephemeral key pair per side and one agreement per
//!   side (section 4.2.8); for X25519MLKEM768 (draft-ietf-tls-ecdhe-mlkem)
//!   the client makes an X25519 and an ML-KEM-768 key pair, the server an
//!   X25519 key pair and an encapsulation, the client a decapsulation;
//! - signatures: the server's CertificateVerify (TLS 1.3, section 4.4.3)
//!   or ServerKeyExchange (TLS 1.2, RFC 8422 section 5.4), the client's
//!   CertificateVerify under mTLS; each peer's chain is the leaf and the
//!   intermediate (the CA is the trust anchor), so verifying it is two
//!   signature verifications, plus the CertificateVerify's;
//! - the key schedule and Finished as HMAC computations: TLS 1.3's
//!   HKDF-Extract and HKDF-Expand-Label of section 7.1 (each one HMAC for
//!   outputs up to the hash's length), TLS 1.2's PRF (section 5: one HMAC
//!   for A(i) and one per output block);
//! - session tickets as one AEAD seal (issued) or open (received) of the
//!   ticket.
//!
//! Not counted: transcript hashing (a few KiB of SHA-2 per handshake) and
//! the random numbers; certificate parsing and name checks are the
//! library's own work, as are the libraries' different ticket formats.

use std::fmt;

use crate::{
    params::{CertChain, HandshakeKind, KxGroup, Params, Protocol},
    transport::Side,
};

/// A key-exchange primitive's algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kx {
    /// X25519, RFC 7748.
    X25519,
    /// ECDH over secp256r1.
    P256,
    /// ECDH over secp384r1.
    P384,
    /// ML-KEM-768, FIPS 203.
    MlKem768,
}

/// A signature scheme, named as in the TLS SignatureScheme registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sig {
    /// `ecdsa_secp256r1_sha256`.
    EcdsaP256Sha256,
    /// `ecdsa_secp384r1_sha384`.
    EcdsaP384Sha384,
    /// `rsa_pss_rsae_sha256` with a key of this many bits: TLS 1.3's
    /// CertificateVerify and TLS 1.2's ServerKeyExchange.
    RsaPssSha256(u16),
    /// `rsa_pkcs1_sha256` with a key of this many bits: the certificates'
    /// own signatures (`sha256WithRSAEncryption`).
    RsaPkcs1Sha256(u16),
}

/// The hash of a key schedule's HMACs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hash {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
}

/// One primitive operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// An ephemeral key pair and its public key's encoding.
    KeyGen(Kx),
    /// A key agreement with the peer's public key.
    Agree(Kx),
    /// An encapsulation to the peer's ML-KEM public key.
    Encapsulate(Kx),
    /// A decapsulation of the peer's ciphertext.
    Decapsulate(Kx),
    /// A signature over a handshake's transcript hash.
    Sign(Sig),
    /// A signature verification.
    Verify(Sig),
    /// One HMAC over up to a hash's length of input (a key-schedule step or
    /// a Finished).
    Hmac(Hash),
    /// A session ticket sealed with AES-256-GCM (issued).
    TicketSeal,
    /// A session ticket opened with AES-256-GCM (received).
    TicketOpen,
}

impl Op {
    /// Whether the operation is ML-KEM-768's (a key pair, an encapsulation
    /// or a decapsulation): what an implementation without ML-KEM skips.
    pub fn is_ml_kem(self) -> bool {
        matches!(
            self,
            Op::KeyGen(Kx::MlKem768) | Op::Agree(Kx::MlKem768) | Op::Encapsulate(_) | Op::Decapsulate(_)
        )
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::KeyGen(k) => write!(f, "key pair {k}"),
            Op::Agree(k) => write!(f, "agreement {k}"),
            Op::Encapsulate(k) => write!(f, "encapsulation {k}"),
            Op::Decapsulate(k) => write!(f, "decapsulation {k}"),
            Op::Sign(s) => write!(f, "sign {s}"),
            Op::Verify(s) => write!(f, "verify {s}"),
            Op::Hmac(h) => write!(f, "HMAC-{h}"),
            Op::TicketSeal => f.write_str("ticket seal"),
            Op::TicketOpen => f.write_str("ticket open"),
        }
    }
}

impl fmt::Display for Kx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kx::X25519 => "x25519",
            Kx::P256 => "secp256r1",
            Kx::P384 => "secp384r1",
            Kx::MlKem768 => "ML-KEM-768",
        })
    }
}

impl fmt::Display for Sig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sig::EcdsaP256Sha256 => f.write_str("ecdsa_secp256r1_sha256"),
            Sig::EcdsaP384Sha384 => f.write_str("ecdsa_secp384r1_sha384"),
            Sig::RsaPssSha256(bits) => write!(f, "rsa_pss_rsae_sha256 ({bits} bits)"),
            Sig::RsaPkcs1Sha256(bits) => write!(f, "rsa_pkcs1_sha256 ({bits} bits)"),
        }
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Hash::Sha256 => "SHA256",
            Hash::Sha384 => "SHA384",
        })
    }
}

/// The flights of one handshake: each side's operations, flight by flight
/// in the order they run. The client runs `client[0]` (ClientHello), the
/// server `server[0]` (its first flight), the client `client[1]` (its
/// second flight), the server `server[1]` (reading it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flights {
    /// The client's two flights.
    pub client: [Vec<Op>; 2],
    /// The server's two flights.
    pub server: [Vec<Op>; 2],
}

impl Flights {
    /// Every operation of `side`, in order.
    pub fn of(&self, side: Side) -> impl Iterator<Item = Op> + '_ {
        let flights = match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        };
        flights.iter().flatten().copied()
    }

    /// How many times `side` runs each operation, in [`Op`] order.
    pub fn counts(&self, side: Side) -> Vec<(Op, usize)> {
        let mut counts = std::collections::BTreeMap::new();
        for op in self.of(side) {
            *counts.entry(op).or_insert(0) += 1;
        }
        counts.into_iter().collect()
    }
}

/// The key-exchange primitive of a (non-hybrid) group.
fn kx(group: KxGroup) -> Kx {
    match group {
        KxGroup::X25519 | KxGroup::X25519Mlkem768 => Kx::X25519,
        KxGroup::Secp256r1 => Kx::P256,
        KxGroup::Secp384r1 => Kx::P384,
    }
}

/// The signature scheme a handshake signature with `cert`'s leaf key uses.
pub fn handshake_sig(cert: CertChain) -> Sig {
    match cert {
        CertChain::EcdsaP256 => Sig::EcdsaP256Sha256,
        CertChain::EcdsaP384 => Sig::EcdsaP384Sha384,
        CertChain::Rsa2048 => Sig::RsaPssSha256(2048),
        CertChain::Rsa3072 => Sig::RsaPssSha256(3072),
        CertChain::Rsa4096 => Sig::RsaPssSha256(4096),
    }
}

/// The signature of the committed chains' certificates (each issuer's key
/// is of the leaf's type and size: `generate-certs`).
pub fn cert_sig(cert: CertChain) -> Sig {
    match cert {
        CertChain::EcdsaP256 => Sig::EcdsaP256Sha256,
        CertChain::EcdsaP384 => Sig::EcdsaP384Sha384,
        CertChain::Rsa2048 => Sig::RsaPkcs1Sha256(2048),
        CertChain::Rsa3072 => Sig::RsaPkcs1Sha256(3072),
        CertChain::Rsa4096 => Sig::RsaPkcs1Sha256(4096),
    }
}

/// The hash of the suite's key schedule and PRF.
pub fn suite_hash(params: &Params) -> Hash {
    use crate::params::CipherSuite::*;
    match params.suite {
        TLS_AES_256_GCM_SHA384
        | TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
        | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => Hash::Sha384,
        _ => Hash::Sha256,
    }
}

/// HMACs of TLS 1.3's key schedule (RFC 8446 section 7.1) on one side of
/// a full handshake: Early, Handshake and Master Secret (3 Extracts), two
/// "derived" secrets, the four traffic secrets, the exporter and
/// resumption master secrets (8 Derive-Secrets), a key and an IV from each
/// of the four traffic secrets (8, section 7.3), and the two finished_keys
/// (section 4.4.4).
const TLS13_SCHEDULE: usize = 3 + 8 + 2 + 8 + 2;

/// HMACs of a TLS 1.3 PSK binder (section 4.2.11.2): the binder key, its
/// finished_key and the binder itself.
const TLS13_BINDER: usize = 3;

/// HMACs of TLS 1.2's PRF (RFC 5246 section 5) for `len` output bytes with
/// a hash of `hash_len` bytes: A(i) and one HMAC per block.
fn prf_hmacs(len: usize, hash_len: usize) -> usize {
    2 * len.div_ceil(hash_len)
}

/// HMACs of a TLS 1.2 handshake's PRF uses on one side: the master secret
/// (48 bytes, RFC 7627's extended form alike), the key block (two AEAD keys
/// and two 4-byte implicit IVs, RFC 5288 section 3), and both Finished
/// (12 bytes each).
fn tls12_prf(params: &Params, hash: Hash, with_master: bool) -> usize {
    let hash_len = match hash {
        Hash::Sha256 => 32,
        Hash::Sha384 => 48,
    };
    let key_len = match params.suite.aead() {
        crate::params::Aead::Aes128Gcm => 16,
        _ => 32,
    };
    let master = if with_master { prf_hmacs(48, hash_len) } else { 0 };
    master + prf_hmacs(2 * key_len + 2 * 4, hash_len) + 2 * prf_hmacs(12, hash_len)
}

/// The operations of the full handshake that gets a resumption case its
/// first ticket (before the timed handshakes): a server-auth handshake with
/// a ticket sealed at the end of the server's first flight.
pub fn first_of_resumption(params: &Params) -> Flights {
    let mut f = handshake(&Params { kind: HandshakeKind::ServerAuth, ..*params });
    f.server[0].push(Op::TicketSeal);
    f
}

/// The operations of one handshake with `params`, by side and flight.
/// TLS 1.2 resumption resumes from a ticket with no key exchange (RFC
/// 5077); TLS 1.3 resumption is `psk_dhe_ke` (RFC 8446 section 4.2.9),
/// with a fresh ticket issued each time (the benchmarks keep resuming).
pub fn handshake(params: &Params) -> Flights {
    let hash = suite_hash(params);
    let hmac = |n: usize| vec![Op::Hmac(hash); n];
    let mut f = Flights { client: [vec![], vec![]], server: [vec![], vec![]] };
    let tls13 = params.protocol().stream_version() == Protocol::Tls13;
    let resumed = params.kind == HandshakeKind::Resumption;
    let mtls = params.kind == HandshakeKind::MutualAuth;
    let x = kx(params.group);
    let hybrid = params.group == KxGroup::X25519Mlkem768;

    if tls13 || !resumed {
        // The key exchange: ClientHello's share, the server's reply, the
        // client's agreement.
        f.client[0].push(Op::KeyGen(x));
        if hybrid {
            f.client[0].push(Op::KeyGen(Kx::MlKem768));
        }
        f.server[0].push(Op::KeyGen(x));
        if hybrid {
            f.server[0].push(Op::Encapsulate(Kx::MlKem768));
        }
        f.server[0].push(Op::Agree(x));
        f.client[1].push(Op::Agree(x));
        if hybrid {
            f.client[1].push(Op::Decapsulate(Kx::MlKem768));
        }
    }
    if resumed {
        if tls13 {
            f.client[0].extend(hmac(TLS13_BINDER));
            f.server[0].push(Op::TicketOpen);
            f.server[0].extend(hmac(TLS13_BINDER));
            f.server[0].extend(hmac(TLS13_SCHEDULE));
            f.client[1].extend(hmac(TLS13_SCHEDULE));
        } else {
            f.server[0].push(Op::TicketOpen);
            f.server[0].extend(hmac(tls12_prf(params, hash, false)));
            f.client[1].extend(hmac(tls12_prf(params, hash, false)));
        }
        // The fresh ticket's PSK (TLS 1.3: from the resumption master
        // secret, section 4.6.1), and the ticket, sealed last.
        if tls13 {
            f.server[0].extend(hmac(1));
            f.client[1].extend(hmac(1));
        }
        f.server[0].push(Op::TicketSeal);
        return f;
    }
    // A full handshake: the server signs, the client verifies its chain
    // and that signature (and, for mTLS, the other way round).
    let (sig, chain) = (handshake_sig(params.cert), cert_sig(params.cert));
    let schedule = if tls13 { TLS13_SCHEDULE } else { tls12_prf(params, hash, true) };
    f.server[0].extend(hmac(schedule));
    f.server[0].push(Op::Sign(sig));
    f.client[1].extend(hmac(schedule));
    f.client[1].extend([Op::Verify(chain), Op::Verify(chain), Op::Verify(sig)]);
    if mtls {
        f.client[1].push(Op::Sign(sig));
        f.server[1].extend([Op::Verify(chain), Op::Verify(chain), Op::Verify(sig)]);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CipherSuite, Protocol};

    fn count(f: &Flights, side: Side, op: Op) -> usize {
        f.of(side).filter(|o| *o == op).count()
    }

    fn centre() -> Params {
        Params::default()
    }

    #[test]
    fn the_sweep_centre_is_two_key_pairs_two_agreements_one_signature_three_verifications() {
        let f = handshake(&centre());
        for side in [Side::Client, Side::Server] {
            assert_eq!(count(&f, side, Op::KeyGen(Kx::X25519)), 1);
            assert_eq!(count(&f, side, Op::Agree(Kx::X25519)), 1);
            assert_eq!(count(&f, side, Op::Hmac(Hash::Sha256)), TLS13_SCHEDULE);
        }
        assert_eq!(count(&f, Side::Server, Op::Sign(Sig::EcdsaP256Sha256)), 1);
        assert_eq!(count(&f, Side::Client, Op::Verify(Sig::EcdsaP256Sha256)), 3);
        assert_eq!(count(&f, Side::Client, Op::Sign(Sig::EcdsaP256Sha256)), 0);
        assert!(f.server[1].is_empty());
        // The client's agreement comes after the server's first flight.
        assert_eq!(f.client[0], vec![Op::KeyGen(Kx::X25519)]);
    }

    #[test]
    fn mtls_adds_the_client_signature_and_the_server_verifications() {
        let f = handshake(&Params { kind: HandshakeKind::MutualAuth, ..centre() });
        assert_eq!(count(&f, Side::Client, Op::Sign(Sig::EcdsaP256Sha256)), 1);
        assert_eq!(count(&f, Side::Server, Op::Verify(Sig::EcdsaP256Sha256)), 3);
        assert_eq!(f.server[1].len(), 3);
    }

    #[test]
    fn tls13_resumption_keeps_the_key_exchange_and_drops_every_signature() {
        let f = handshake(&Params { kind: HandshakeKind::Resumption, ..centre() });
        for side in [Side::Client, Side::Server] {
            assert_eq!(count(&f, side, Op::KeyGen(Kx::X25519)), 1);
            assert_eq!(count(&f, side, Op::Agree(Kx::X25519)), 1);
            assert!(f.of(side).all(|o| !matches!(o, Op::Sign(_) | Op::Verify(_))));
        }
        assert_eq!(count(&f, Side::Server, Op::TicketOpen), 1);
        assert_eq!(count(&f, Side::Server, Op::TicketSeal), 1);
    }

    #[test]
    fn tls12_resumption_has_no_key_exchange() {
        let p = Params { kind: HandshakeKind::Resumption, ..centre() }.with_protocol(Protocol::Tls12);
        let f = handshake(&p);
        for side in [Side::Client, Side::Server] {
            assert!(f.of(side).all(|o| matches!(o, Op::Hmac(_) | Op::TicketOpen | Op::TicketSeal)));
        }
        // Key block (2 x 16 + 2 x 4 = 40 bytes: 2 blocks) and two Finished.
        assert_eq!(count(&f, Side::Client, Op::Hmac(Hash::Sha256)), 4 + 2 * 2);
    }

    #[test]
    fn tls12_full_handshake_signs_the_server_key_exchange() {
        let p = centre().with_protocol(Protocol::Tls12);
        assert_eq!(p.suite, CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256);
        let f = handshake(&p);
        assert_eq!(count(&f, Side::Server, Op::Sign(Sig::EcdsaP256Sha256)), 1);
        assert_eq!(count(&f, Side::Client, Op::Verify(Sig::EcdsaP256Sha256)), 3);
        // Master secret (48 bytes: 2 blocks), key block (40: 2), Finished 2 x 1.
        assert_eq!(count(&f, Side::Server, Op::Hmac(Hash::Sha256)), 4 + 4 + 4);
    }

    #[test]
    fn groups_and_chains_choose_the_primitives() {
        let f = handshake(&Params { group: KxGroup::X25519Mlkem768, ..centre() });
        assert_eq!(f.client[0], vec![Op::KeyGen(Kx::X25519), Op::KeyGen(Kx::MlKem768)]);
        assert_eq!(count(&f, Side::Server, Op::Encapsulate(Kx::MlKem768)), 1);
        assert_eq!(count(&f, Side::Client, Op::Decapsulate(Kx::MlKem768)), 1);
        for (group, x) in [(KxGroup::Secp256r1, Kx::P256), (KxGroup::Secp384r1, Kx::P384)] {
            let f = handshake(&Params { group, ..centre() });
            assert_eq!(count(&f, Side::Client, Op::Agree(x)), 1);
            assert_eq!(count(&f, Side::Server, Op::KeyGen(x)), 1);
        }
        let rsa = handshake(&centre().with_cert(CertChain::Rsa4096));
        assert_eq!(count(&rsa, Side::Server, Op::Sign(Sig::RsaPssSha256(4096))), 1);
        assert_eq!(count(&rsa, Side::Client, Op::Verify(Sig::RsaPkcs1Sha256(4096))), 2);
        assert_eq!(count(&rsa, Side::Client, Op::Verify(Sig::RsaPssSha256(4096))), 1);
        let p384 = handshake(&centre().with_cert(CertChain::EcdsaP384));
        assert_eq!(count(&p384, Side::Client, Op::Verify(Sig::EcdsaP384Sha384)), 3);
        let sha384 = handshake(&centre().with_aead(crate::params::Aead::Aes256Gcm));
        assert_eq!(count(&sha384, Side::Client, Op::Hmac(Hash::Sha384)), TLS13_SCHEDULE);
    }

    #[test]
    fn every_matrix_point_has_a_table() {
        for p in Params::full_matrix() {
            let f = handshake(&p);
            let resumed = p.kind == HandshakeKind::Resumption;
            let signs = f.of(Side::Server).filter(|o| matches!(o, Op::Sign(_))).count();
            assert_eq!(signs, usize::from(!resumed), "{p}");
            assert!(f.client[0].len() + f.server[0].len() > 0, "{p}");
        }
    }
}
