//! Benchmark parameters: one enum per dimension, each `Display`ing as its
//! component of a benchmark id, in the field's standard names (IANA cipher
//! suite and group names, RFC 8446 terms).
//!
//! Adding a parameter value is one enum variant plus its `ALL` entry; each
//! library then says whether it supports it (see
//! [`TlsLibrary::configure`](crate::harness::TlsLibrary::configure)).

use std::fmt;

/// Protocol version: TLS over a byte stream (RFC 5246, RFC 8446) or DTLS
/// over datagrams (RFC 6347, RFC 9147).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    /// TLS 1.2, RFC 5246.
    Tls12,
    /// TLS 1.3, RFC 8446.
    Tls13,
    /// DTLS 1.2, RFC 6347: TLS 1.2's handshake and suites over datagrams.
    Dtls12,
    /// DTLS 1.3, RFC 9147: TLS 1.3's handshake and suites over datagrams.
    Dtls13,
}

impl Protocol {
    /// Every TLS (byte-stream) version benchmarked.
    pub const ALL: [Protocol; 2] = [Protocol::Tls12, Protocol::Tls13];
    /// Every DTLS (datagram) version benchmarked.
    pub const DATAGRAM: [Protocol; 2] = [Protocol::Dtls12, Protocol::Dtls13];

    /// Whether this is a DTLS version (records in datagrams).
    pub fn is_datagram(self) -> bool {
        matches!(self, Protocol::Dtls12 | Protocol::Dtls13)
    }

    /// The TLS version whose handshake and cipher suites this version uses:
    /// itself for TLS, TLS 1.2 for DTLS 1.2 (RFC 6347 section 1), TLS 1.3
    /// for DTLS 1.3 (RFC 9147 section 1).
    pub fn stream_version(self) -> Protocol {
        match self {
            Protocol::Tls12 | Protocol::Dtls12 => Protocol::Tls12,
            Protocol::Tls13 | Protocol::Dtls13 => Protocol::Tls13,
        }
    }

    /// The DTLS version built on this TLS version (itself for DTLS).
    pub fn datagram_version(self) -> Protocol {
        match self.stream_version() {
            Protocol::Tls13 => Protocol::Dtls13,
            _ => Protocol::Dtls12,
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Tls12 => "TLSv1.2",
            Protocol::Tls13 => "TLSv1.3",
            Protocol::Dtls12 => "DTLSv1.2",
            Protocol::Dtls13 => "DTLSv1.3",
        })
    }
}

/// The bulk cipher of a suite, independent of the protocol version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Aead {
    /// AES-128 in Galois/Counter Mode.
    Aes128Gcm,
    /// AES-256 in Galois/Counter Mode.
    Aes256Gcm,
    /// ChaCha20-Poly1305, RFC 8439.
    Chacha20Poly1305,
}

impl Aead {
    /// Every AEAD benchmarked.
    pub const ALL: [Aead; 3] = [Aead::Aes128Gcm, Aead::Aes256Gcm, Aead::Chacha20Poly1305];
}

/// A cipher suite, named as in the IANA "TLS Cipher Suites" registry.
///
/// TLS 1.2 suites carry their authentication algorithm, so a TLS 1.2 suite is
/// usable only with a certificate of the matching key type.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CipherSuite {
    /// 0x1301, RFC 8446.
    TLS_AES_128_GCM_SHA256,
    /// 0x1302, RFC 8446.
    TLS_AES_256_GCM_SHA384,
    /// 0x1303, RFC 8446.
    TLS_CHACHA20_POLY1305_SHA256,
    /// 0xC02B, RFC 5289.
    TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    /// 0xC02C, RFC 5289.
    TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    /// 0xCCA9, RFC 7905.
    TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    /// 0xC02F, RFC 5289.
    TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    /// 0xC030, RFC 5289.
    TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    /// 0xCCA8, RFC 7905.
    TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

impl CipherSuite {
    /// Every suite benchmarked.
    pub const ALL: [CipherSuite; 9] = [
        CipherSuite::TLS_AES_128_GCM_SHA256,
        CipherSuite::TLS_AES_256_GCM_SHA384,
        CipherSuite::TLS_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ];

    /// The suite for `protocol` with bulk cipher `aead`, authenticated by a
    /// certificate of `key` type (the key type matters only for TLS 1.2).
    /// DTLS uses its TLS version's suites.
    pub fn for_protocol(protocol: Protocol, aead: Aead, key: KeyType) -> CipherSuite {
        use CipherSuite::*;
        match (protocol.stream_version(), key, aead) {
            (Protocol::Tls13, _, Aead::Aes128Gcm) => TLS_AES_128_GCM_SHA256,
            (Protocol::Tls13, _, Aead::Aes256Gcm) => TLS_AES_256_GCM_SHA384,
            (Protocol::Tls13, _, Aead::Chacha20Poly1305) => TLS_CHACHA20_POLY1305_SHA256,
            (Protocol::Tls12, KeyType::Ecdsa, Aead::Aes128Gcm) => TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            (Protocol::Tls12, KeyType::Ecdsa, Aead::Aes256Gcm) => TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            (Protocol::Tls12, KeyType::Ecdsa, Aead::Chacha20Poly1305) => {
                TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            }
            (Protocol::Tls12, KeyType::Rsa, Aead::Aes128Gcm) => TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            (Protocol::Tls12, KeyType::Rsa, Aead::Aes256Gcm) => TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            (Protocol::Tls12, KeyType::Rsa, Aead::Chacha20Poly1305) => {
                TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
            }
            (Protocol::Dtls12 | Protocol::Dtls13, ..) => unreachable!("stream_version is a TLS version"),
        }
    }

    /// The TLS version this suite belongs to (DTLS uses the same suites).
    pub fn protocol(self) -> Protocol {
        match self.auth() {
            None => Protocol::Tls13,
            Some(_) => Protocol::Tls12,
        }
    }

    /// The certificate key type a TLS 1.2 suite requires; `None` for TLS 1.3
    /// suites, which do not name the authentication algorithm.
    pub fn auth(self) -> Option<KeyType> {
        use CipherSuite::*;
        match self {
            TLS_AES_128_GCM_SHA256 | TLS_AES_256_GCM_SHA384 | TLS_CHACHA20_POLY1305_SHA256 => None,
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            | TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => Some(KeyType::Ecdsa),
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
            | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
            | TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => Some(KeyType::Rsa),
        }
    }

    /// The suite's bulk cipher.
    pub fn aead(self) -> Aead {
        use CipherSuite::*;
        match self {
            TLS_AES_128_GCM_SHA256
            | TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
            | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => Aead::Aes128Gcm,
            TLS_AES_256_GCM_SHA384
            | TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
            | TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => Aead::Aes256Gcm,
            TLS_CHACHA20_POLY1305_SHA256
            | TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            | TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => Aead::Chacha20Poly1305,
        }
    }

    /// The two-byte code point from the IANA registry.
    pub fn iana_code(self) -> u16 {
        use CipherSuite::*;
        match self {
            TLS_AES_128_GCM_SHA256 => 0x1301,
            TLS_AES_256_GCM_SHA384 => 0x1302,
            TLS_CHACHA20_POLY1305_SHA256 => 0x1303,
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => 0xC02B,
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => 0xC02C,
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => 0xCCA9,
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 0xC02F,
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => 0xC030,
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => 0xCCA8,
        }
    }

    /// The suite with IANA code point `code`, if it is one benchmarked here.
    pub fn from_iana_code(code: u16) -> Option<CipherSuite> {
        Self::ALL.into_iter().find(|s| s.iana_code() == code)
    }

    /// The IANA name, e.g. `TLS_AES_128_GCM_SHA256`.
    pub fn iana_name(self) -> &'static str {
        use CipherSuite::*;
        match self {
            TLS_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
            TLS_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
            TLS_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        }
    }

    /// The suite whose IANA name is `name` (libraries that report names, such
    /// as s2n-tls and OpenSSL's `SSL_CIPHER_standard_name`, use these).
    pub fn from_iana_name(name: &str) -> Option<CipherSuite> {
        Self::ALL.into_iter().find(|s| s.iana_name() == name)
    }

    /// Normalises a library's name for a suite: the IANA name, or OpenSSL's
    /// (which s2n-tls reports for TLS 1.2 suites). `None` for a suite not
    /// benchmarked here.
    pub fn from_library_name(name: &str) -> Option<CipherSuite> {
        Self::ALL.into_iter().find(|s| s.iana_name() == name || s.openssl_name() == name)
    }

    /// OpenSSL's name for the suite (`set_ciphersuites` for TLS 1.3,
    /// `set_cipher_list` for TLS 1.2), from OpenSSL's ciphers(1) manual.
    pub fn openssl_name(self) -> &'static str {
        use CipherSuite::*;
        match self {
            TLS_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
            TLS_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
            TLS_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
            TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305",
            TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
            TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
            TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        }
    }
}

impl fmt::Display for CipherSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.iana_name())
    }
}

/// A key exchange group, named as in the IANA "TLS Supported Groups" registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KxGroup {
    /// NIST P-256 ECDHE, code point 23.
    Secp256r1,
    /// NIST P-384 ECDHE, code point 24.
    Secp384r1,
    /// X25519 ECDHE, code point 29, RFC 8422/7748.
    X25519,
    /// X25519 + ML-KEM-768 hybrid, code point 4588 (0x11EC),
    /// draft-ietf-tls-ecdhe-mlkem. TLS 1.3 only.
    X25519Mlkem768,
}

impl KxGroup {
    /// Every group benchmarked.
    pub const ALL: [KxGroup; 4] =
        [KxGroup::Secp256r1, KxGroup::Secp384r1, KxGroup::X25519, KxGroup::X25519Mlkem768];

    /// The IANA name: `secp256r1`, `secp384r1`, `x25519`, `X25519MLKEM768`.
    pub fn iana_name(self) -> &'static str {
        match self {
            KxGroup::Secp256r1 => "secp256r1",
            KxGroup::Secp384r1 => "secp384r1",
            KxGroup::X25519 => "x25519",
            KxGroup::X25519Mlkem768 => "X25519MLKEM768",
        }
    }

    /// The group's name for OpenSSL's `SSL_CTX_set1_groups_list(3)`
    /// (OpenSSL 3.0+, AWS-LC), BoringSSL's `SSL_CTX_set1_curves_list` and
    /// nginx's `ssl_ecdh_curve`: `P-256`, `P-384`, `X25519`,
    /// `X25519MLKEM768`.
    pub fn openssl_name(self) -> &'static str {
        match self {
            KxGroup::Secp256r1 => "P-256",
            KxGroup::Secp384r1 => "P-384",
            KxGroup::X25519 => "X25519",
            KxGroup::X25519Mlkem768 => "X25519MLKEM768",
        }
    }

    /// The IANA code point.
    pub fn iana_code(self) -> u16 {
        match self {
            KxGroup::Secp256r1 => 23,
            KxGroup::Secp384r1 => 24,
            KxGroup::X25519 => 29,
            KxGroup::X25519Mlkem768 => 0x11EC,
        }
    }

    /// The group with IANA code point `code`, if it is one benchmarked here.
    pub fn from_iana_code(code: u16) -> Option<KxGroup> {
        Self::ALL.into_iter().find(|g| g.iana_code() == code)
    }

    /// Normalises a library's name for a group to the enum. This is the one
    /// place where names differ between stacks: IANA (`secp256r1`, `x25519`),
    /// OpenSSL 3.0 (`X25519`, `prime256v1`), AWS-LC and BoringSSL (`P-256`,
    /// `X25519`), s2n-tls (`secp256r1`, `x25519`, `X25519MLKEM768`).
    /// Comparison ignores ASCII case. `None` for a name not benchmarked here.
    pub fn from_library_name(name: &str) -> Option<KxGroup> {
        let n = name.to_ascii_lowercase();
        match n.as_str() {
            "secp256r1" | "prime256v1" | "p-256" | "p256" => Some(KxGroup::Secp256r1),
            "secp384r1" | "p-384" | "p384" => Some(KxGroup::Secp384r1),
            "x25519" => Some(KxGroup::X25519),
            "x25519mlkem768" | "x25519_mlkem768" | "x25519mlkem768_hybrid" => Some(KxGroup::X25519Mlkem768),
            _ => None,
        }
    }

    /// Whether the group can be used with `protocol` (hybrid ML-KEM groups are
    /// defined for TLS 1.3 only).
    pub fn usable_with(self, protocol: Protocol) -> bool {
        self != KxGroup::X25519Mlkem768 || protocol.stream_version() == Protocol::Tls13
    }
}

impl fmt::Display for KxGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.iana_name())
    }
}

/// The key type of a certificate, as TLS 1.2 suites name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// RSA (signatures RSA-PSS in TLS 1.3, RSA PKCS#1 v1.5 or PSS in TLS 1.2).
    Rsa,
    /// ECDSA.
    Ecdsa,
}

/// A certificate chain root -> intermediate -> leaf, every certificate of the
/// same key type and size; the directory under `certs/` holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CertChain {
    /// RSA 2048-bit keys, SHA-256 signatures.
    Rsa2048,
    /// RSA 3072-bit keys, SHA-256 signatures.
    Rsa3072,
    /// RSA 4096-bit keys, SHA-256 signatures.
    Rsa4096,
    /// ECDSA P-256 keys, ECDSA-SHA256 signatures.
    EcdsaP256,
    /// ECDSA P-384 keys, ECDSA-SHA384 signatures.
    EcdsaP384,
}

impl CertChain {
    /// Every chain benchmarked.
    pub const ALL: [CertChain; 5] = [
        CertChain::Rsa2048,
        CertChain::Rsa3072,
        CertChain::Rsa4096,
        CertChain::EcdsaP256,
        CertChain::EcdsaP384,
    ];

    /// The key type of every certificate in the chain.
    pub fn key_type(self) -> KeyType {
        match self {
            CertChain::Rsa2048 | CertChain::Rsa3072 | CertChain::Rsa4096 => KeyType::Rsa,
            CertChain::EcdsaP256 | CertChain::EcdsaP384 => KeyType::Ecdsa,
        }
    }

    /// The ECDSA curve of the chain's keys, as a key exchange group; `None`
    /// for RSA.
    pub fn ecdsa_curve(self) -> Option<KxGroup> {
        match self {
            CertChain::EcdsaP256 => Some(KxGroup::Secp256r1),
            CertChain::EcdsaP384 => Some(KxGroup::Secp384r1),
            _ => None,
        }
    }

    /// The directory name under `certs/`.
    pub fn dir_name(self) -> &'static str {
        match self {
            CertChain::Rsa2048 => "rsa2048",
            CertChain::Rsa3072 => "rsa3072",
            CertChain::Rsa4096 => "rsa4096",
            CertChain::EcdsaP256 => "ecdsa-p256",
            CertChain::EcdsaP384 => "ecdsa-p384",
        }
    }
}

impl fmt::Display for CertChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CertChain::Rsa2048 => "RSA-2048",
            CertChain::Rsa3072 => "RSA-3072",
            CertChain::Rsa4096 => "RSA-4096",
            CertChain::EcdsaP256 => "ECDSA-P256",
            CertChain::EcdsaP384 => "ECDSA-P384",
        })
    }
}

/// What the handshake authenticates and whether it resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HandshakeKind {
    /// Full handshake, the server authenticates with its certificate chain.
    ServerAuth,
    /// Full handshake, both sides authenticate with certificate chains (mTLS).
    MutualAuth,
    /// Resumed handshake from a session ticket (RFC 8446 section 4.6.1 with
    /// psk_dhe_ke in TLS 1.3; RFC 5077 in TLS 1.2), server authentication.
    Resumption,
}

impl HandshakeKind {
    /// Every handshake kind benchmarked.
    pub const ALL: [HandshakeKind; 3] =
        [HandshakeKind::ServerAuth, HandshakeKind::MutualAuth, HandshakeKind::Resumption];
}

impl fmt::Display for HandshakeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandshakeKind::ServerAuth => "server-auth",
            HandshakeKind::MutualAuth => "mTLS",
            HandshakeKind::Resumption => "resumption",
        })
    }
}

/// One point in the benchmark matrix. Its `Display` is the `parameters`
/// component of a benchmark id, e.g.
/// `server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Params {
    /// Full handshake with server or mutual authentication, or resumption.
    pub kind: HandshakeKind,
    /// The cipher suite; it fixes the protocol version.
    pub suite: CipherSuite,
    /// The key exchange group.
    pub group: KxGroup,
    /// The server's (and for mTLS the client's) certificate chain.
    pub cert: CertChain,
    /// DTLS over a datagram transport (the suite's TLS version's DTLS:
    /// RFC 6347, RFC 9147) instead of TLS over a byte stream.
    pub datagram: bool,
}

impl Default for Params {
    /// The centre of the one-dimension-at-a-time sweeps: server auth, TLS 1.3,
    /// TLS_AES_128_GCM_SHA256, x25519, ECDSA P-256.
    fn default() -> Self {
        Params {
            kind: HandshakeKind::ServerAuth,
            suite: CipherSuite::TLS_AES_128_GCM_SHA256,
            group: KxGroup::X25519,
            cert: CertChain::EcdsaP256,
            datagram: false,
        }
    }
}

impl Params {
    /// The protocol version (from the suite and [`Params::datagram`]).
    pub fn protocol(&self) -> Protocol {
        let tls = self.suite.protocol();
        if self.datagram { tls.datagram_version() } else { tls }
    }

    /// These parameters with the protocol changed to `protocol` (TLS or
    /// DTLS), keeping the suite's AEAD (and choosing the TLS 1.2 suite that
    /// matches the certificate's key type).
    pub fn with_protocol(self, protocol: Protocol) -> Params {
        Params {
            suite: CipherSuite::for_protocol(protocol, self.suite.aead(), self.cert.key_type()),
            datagram: protocol.is_datagram(),
            ..self
        }
    }

    /// These parameters with the suite's AEAD changed to `aead` (same
    /// protocol version and authentication).
    pub fn with_aead(self, aead: Aead) -> Params {
        Params { suite: CipherSuite::for_protocol(self.protocol(), aead, self.cert.key_type()), ..self }
    }

    /// These parameters with another certificate chain (for TLS 1.2 the suite
    /// follows the chain's key type).
    pub fn with_cert(self, cert: CertChain) -> Params {
        Params {
            cert,
            suite: CipherSuite::for_protocol(self.protocol(), self.suite.aead(), cert.key_type()),
            ..self
        }
    }

    /// The groups both sides offer, benchmarked group first. Exactly
    /// `[group]`, except in TLS 1.2 with an ECDSA chain on another curve:
    /// there the certificate's curve must be in supported_groups too
    /// (RFC 8422 section 5.1), so it is offered after the benchmarked group,
    /// and the negotiated group is still checked to be the benchmarked one.
    pub fn offered_groups(&self) -> Vec<KxGroup> {
        let mut groups = vec![self.group];
        if self.protocol().stream_version() == Protocol::Tls12
            && let Some(curve) = self.cert.ecdsa_curve()
            && curve != self.group
        {
            groups.push(curve);
        }
        groups
    }

    /// Whether the combination is meaningful at all, whatever the library:
    /// a TLS 1.2 suite must match the certificate's key type, and a hybrid
    /// group needs TLS 1.3. `Err` names why not.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(auth) = self.suite.auth()
            && auth != self.cert.key_type()
        {
            return Err(format!("{} cannot be used with a {} certificate", self.suite, self.cert));
        }
        if !self.group.usable_with(self.protocol()) {
            return Err(format!("{} is defined for TLS 1.3 only", self.group));
        }
        Ok(())
    }

    /// The handshake benchmark's parameter sets: one dimension at a time
    /// around [`Params::default`] (handshake kind, group, certificate chain,
    /// protocol version), without repeats.
    pub fn handshake_sweep() -> Vec<Params> {
        let base = Params::default();
        let mut out = vec![base];
        let mut push = |p: Params| {
            if !out.contains(&p) {
                out.push(p);
            }
        };
        for kind in HandshakeKind::ALL {
            push(Params { kind, ..base });
        }
        for group in KxGroup::ALL {
            push(Params { group, ..base });
        }
        for cert in CertChain::ALL {
            push(base.with_cert(cert));
        }
        for protocol in Protocol::ALL {
            push(base.with_protocol(protocol));
        }
        out
    }

    /// The full cross product of kind x protocol x AEAD x group x chain,
    /// minus combinations that [`Params::validate`] rejects.
    pub fn full_matrix() -> Vec<Params> {
        let mut out = Vec::new();
        for kind in HandshakeKind::ALL {
            for protocol in Protocol::ALL {
                for aead in Aead::ALL {
                    for group in KxGroup::ALL {
                        for cert in CertChain::ALL {
                            let suite = CipherSuite::for_protocol(protocol, aead, cert.key_type());
                            let p = Params { kind, suite, group, cert, datagram: false };
                            if p.validate().is_ok() {
                                out.push(p);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{},{},{}", self.kind, self.protocol(), self.suite, self.group, self.cert)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_codes_and_names_round_trip() {
        for s in CipherSuite::ALL {
            assert_eq!(CipherSuite::from_iana_code(s.iana_code()), Some(s));
            assert_eq!(CipherSuite::from_iana_name(s.iana_name()), Some(s));
            assert_eq!(CipherSuite::from_library_name(s.openssl_name()), Some(s));
            assert_eq!(CipherSuite::from_library_name(s.iana_name()), Some(s));
            assert_eq!(
                CipherSuite::for_protocol(s.protocol(), s.aead(), s.auth().unwrap_or(KeyType::Rsa)),
                s
            );
        }
    }

    #[test]
    fn group_names_normalise() {
        for (name, g) in [
            ("X25519", KxGroup::X25519),
            ("prime256v1", KxGroup::Secp256r1),
            ("P-256", KxGroup::Secp256r1),
            ("P-384", KxGroup::Secp384r1),
            ("X25519MLKEM768", KxGroup::X25519Mlkem768),
            ("secp384r1", KxGroup::Secp384r1),
        ] {
            assert_eq!(KxGroup::from_library_name(name), Some(g), "{name}");
        }
        assert_eq!(KxGroup::from_library_name("ffdhe2048"), None);
        for g in KxGroup::ALL {
            assert_eq!(KxGroup::from_iana_code(g.iana_code()), Some(g));
            assert_eq!(KxGroup::from_library_name(g.iana_name()), Some(g));
        }
    }

    #[test]
    fn sweep_covers_every_value_once() {
        let sweep = Params::handshake_sweep();
        for kind in HandshakeKind::ALL {
            assert!(sweep.iter().any(|p| p.kind == kind));
        }
        for group in KxGroup::ALL {
            assert!(sweep.iter().any(|p| p.group == group));
        }
        for cert in CertChain::ALL {
            assert!(sweep.iter().any(|p| p.cert == cert));
        }
        for protocol in Protocol::ALL {
            assert!(sweep.iter().any(|p| p.protocol() == protocol));
        }
        let mut dedup = sweep.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), sweep.len());
        assert!(sweep.iter().all(|p| p.validate().is_ok()));
    }

    #[test]
    fn matrix_rejects_mismatched_tls12_suites() {
        let m = Params::full_matrix();
        assert!(m.iter().all(|p| p.validate().is_ok()));
        assert!(!m.iter().any(|p| p.protocol() == Protocol::Tls12 && p.group == KxGroup::X25519Mlkem768));
        // 3 kinds x (TLS 1.3: 3 AEADs x 4 groups x 5 chains + TLS 1.2: 3 x 3 x 5)
        assert_eq!(m.len(), 3 * (3 * 4 * 5 + 3 * 3 * 5));
        let bad = Params { suite: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ..Params::default() };
        assert!(bad.validate().is_err());
    }
}
