//! The crypto floor: the primitive operations a handshake or a transfer
//! performs ([`ops`]), run through the crypto implementation a TLS library
//! uses, through that implementation's own API ([`Backend`]): aws-lc-rs
//! (rustls's default provider, and the AWS-LC that s2n-tls links), *ring*,
//! and libcrypto through the `openssl` crate (OpenSSL, AWS-LC) or the
//! `boring` crate (BoringSSL), and wolfCrypt (wolfSSL's, in its folder).
//! The floor's connections
//! ([`library`]) run over the same transport and
//! drivers as every library, so a floor is timed, checked and compared as
//! a library is; a library's time less its floor's is its protocol cost
//! (parsing, state machine, buffers, allocation, locking).
//!
//! Backends: aws-lc-rs with the `rustls` or the `s2n-tls` feature, *ring*
//! with `rustls`, libcrypto through the `openssl` crate with
//! `openssl` (OpenSSL, or AWS-LC under the crate), BoringSSL's libcrypto
//! through the `boring` crate (and `boring-sys` where the crate has no
//! interface) with `boring` ([`boringssl`]), wolfCrypt through
//! `wolfssl-sys` with `wolfssl` (`crate::libs::wolfssl::floor`), Mbed TLS's
//! libmbedcrypto with `mbedtls` (`crate::libs::mbedtls::floor`), nettle and
//! GnuTLS's crypto API with `gnutls` (`crate::libs::gnutls::floor`).

use anyhow::{Context, Result, anyhow, ensure};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

use crate::{
    certs::CertFiles,
    params::{Aead, CertChain},
};

pub mod count;
/// The crypto floor of an implementation, as a library.
#[cfg(any(
    feature = "rustls",
    aws_lc_rs_floor,
    openssl_crate,
    feature = "boring",
    feature = "wolfssl",
    feature = "mbedtls",
    feature = "gnutls"
))]
pub mod library;
pub mod ops;

/// Where the library under test links AWS-LC through aws-lc-rs (cfg
/// `aws_lc_rs_floor`, build.rs): rustls from 0.22, s2n-tls from 0.1 (its
/// AWS-LC). Shared by two libraries, so here; each library's own floor
/// is in its folder ([`crate::libs`]).
#[cfg(aws_lc_rs_floor)]
pub mod aws_lc_rs;
/// The parts aws-lc-rs and *ring* (rustls's) share.
#[cfg(any(feature = "rustls", aws_lc_rs_floor))]
pub(crate) mod ring_like;

/// A floor's library name: `crypto-floor-<backend>`, e.g.
/// `crypto-floor-aws-lc-rs-1.19.0`.
pub fn floor_name(backend: &str) -> String {
    format!("crypto-floor-{backend}")
}

use ops::{Hash, Kx, Op, Sig};

/// A crypto implementation as the floor calls it. Every call is one
/// primitive of [`Op`] (or a record's AEAD seal or open); nothing is cached
/// between handshakes but what a TLS library also keeps in its
/// configuration (the parsed private signing key, the ticket key).
pub trait Backend: 'static {
    /// An ephemeral private key: a key-agreement key or an ML-KEM
    /// decapsulation key.
    type Private: 'static;
    /// A private signing key, parsed once (as a library's configuration
    /// holds it).
    type SigningKey: 'static;
    /// A keyed AEAD.
    type AeadKey: 'static;
    /// A public key ready to verify with: decoded once where the
    /// implementation's API decodes keys apart from verifying (libcrypto's
    /// EVP_PKEY), the key's bytes where it decodes them in each
    /// verification (aws-lc-rs's and *ring*'s `UnparsedPublicKey`, as
    /// rustls calls them).
    type VerifyKey: 'static;

    /// The implementation and its version, e.g. `aws-lc-rs-1.19.0`.
    fn name() -> String;

    /// The functions whose calls count this implementation's primitives
    /// under Callgrind (`crypto-floor count`), `None` where none are known.
    /// Default: [`count::shared_profile`] of [`Backend::name`] (AWS-LC,
    /// OpenSSL 3, *ring*, BoringSSL); a library's folder gives its own.
    fn profile() -> Option<&'static count::Profile> {
        count::shared_profile(&Self::name())
    }

    /// Why this implementation cannot run `op` through the API the floor
    /// uses, `None` when it can.
    fn unsupported(op: Op) -> Option<String>;

    /// A fresh key pair for `kx`: its private half and its public key's
    /// encoding as TLS sends it (RFC 8446 section 4.2.8.2; an ML-KEM
    /// encapsulation key).
    fn key_gen(kx: Kx) -> Result<(Self::Private, Vec<u8>)>;

    /// The shared secret of `private` and the peer's public key `peer`.
    /// Errors: an invalid peer key.
    fn agree(kx: Kx, private: Self::Private, peer: &[u8]) -> Result<Vec<u8>>;

    /// An encapsulation to the encapsulation key `peer`: (ciphertext,
    /// shared secret).
    fn encapsulate(kx: Kx, peer: &[u8]) -> Result<(Vec<u8>, Vec<u8>)>;

    /// The shared secret in `ciphertext` for `private`.
    fn decapsulate(kx: Kx, private: Self::Private, ciphertext: &[u8]) -> Result<Vec<u8>>;

    /// A signing key from a PKCS#8 document (DER). Errors: a key of
    /// another type than `sig` names.
    fn signing_key(pkcs8: &[u8], sig: Sig) -> Result<Self::SigningKey>;

    /// A signature of `msg` with `sig`'s scheme.
    fn sign(key: &Self::SigningKey, sig: Sig, msg: &[u8]) -> Result<Vec<u8>>;

    /// `public` ready to verify `sig`'s scheme with (at configuration:
    /// decoding a certificate's key is the library's parsing, not a
    /// primitive). Errors: a key that does not decode.
    fn verify_key(sig: Sig, public: &PublicKey) -> Result<Self::VerifyKey>;

    /// Verifies `signature` of `msg` with `key` under `sig`'s scheme.
    /// Errors: a bad signature.
    fn verify(sig: Sig, key: &Self::VerifyKey, msg: &[u8], signature: &[u8]) -> Result<()>;

    /// HMAC of `data` under `key` (RFC 2104).
    fn hmac(hash: Hash, key: &[u8], data: &[u8]) -> Result<Vec<u8>>;

    /// The HMACs of each of `data` under one `key`, keyed once: RFC 2104's
    /// inner and outer states computed once and reused, as TLS 1.2's
    /// P_hash keys its HMAC once per PRF call (AWS-LC's and OpenSSL's
    /// TLS1-PRF, *ring*'s `hmac::Key`). Default: [`Backend::hmac`] for
    /// each (keyed anew: an upper bound, for a backend yet to override it).
    fn hmac_same_key(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
        data.iter().map(|d| Self::hmac(hash, key, d)).collect()
    }

    /// [`Backend::agree`] in two steps, for `crypto-floor speed`: what
    /// comes before the derivation (decoding the peer's key, a derivation
    /// context), and the derivation it returns, which `speed` times alone,
    /// as `openssl speed ecdhx25519` does. Default: the whole agreement in
    /// the returned step (an implementation that cannot split it).
    #[allow(clippy::type_complexity)]
    fn agree_prepared(
        kx: Kx,
        private: Self::Private,
        peer: &[u8],
    ) -> Result<Box<dyn FnOnce() -> Result<Vec<u8>>>> {
        let peer = peer.to_vec();
        Ok(Box::new(move || Self::agree(kx, private, &peer)))
    }

    /// An AEAD key of `aead` (16 or 32 bytes).
    fn aead_key(aead: Aead, key: &[u8]) -> Result<Self::AeadKey>;

    /// Encrypts `in_out` in place and appends the 16-byte tag.
    fn seal(key: &Self::AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut Vec<u8>) -> Result<()>;

    /// Seals a TLS 1.3 record's body from the caller's data: leaves in
    /// `out` (cleared first) the ciphertext of `fragment || content_type`
    /// (RFC 8446 section 5.2's TLSInnerPlaintext, no padding;
    /// `fragment.len() + 1` bytes) followed by the 16-byte tag, the
    /// record after its 5-byte header (`aad`). Errors: as
    /// [`Backend::seal`] (`out`'s contents are then unspecified).
    ///
    /// Default: copy `fragment` and the type into `out`, then
    /// [`Backend::seal`] in place, as rustls (the message copied into
    /// its `PrefixedPayload`) and OpenSSL's libssl (the data copied into
    /// the write buffer) seal. BoringSSL's and AWS-LC's libssl seal out
    /// of place instead, from the caller's buffer straight into the write
    /// buffer, the type as the AEAD's `extra_in`, so that its ciphertext
    /// and the tag land after the fragment's (`tls_seal_scatter_record`,
    /// `SSLAEADContext::SealScatter`, `EVP_AEAD_CTX_seal_scatter`): their
    /// backends override this.
    fn seal_from(
        key: &Self::AeadKey,
        nonce: [u8; 12],
        aad: &[u8],
        fragment: &[u8],
        content_type: u8,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        out.extend_from_slice(fragment);
        out.push(content_type);
        Self::seal(key, nonce, aad, out)
    }

    /// Decrypts `in_out` (ciphertext and tag) in place; returns the
    /// plaintext's length. Errors: the tag does not verify.
    fn open(key: &Self::AeadKey, nonce: [u8; 12], aad: &[u8], in_out: &mut [u8]) -> Result<usize>;
}

/// A public key as a certificate carries it.
#[derive(Clone, Debug)]
pub struct PublicKey {
    /// The whole SubjectPublicKeyInfo (DER), as libcrypto's decoders take it.
    pub spki: Vec<u8>,
    /// Its BIT STRING's contents (an EC point, or an RSAPublicKey), as
    /// aws-lc-rs and *ring* take it.
    pub key: Vec<u8>,
}

/// One certificate's signature, to verify with its issuer's key.
#[derive(Clone, Debug)]
pub struct SignedCert {
    /// The signed part (tbsCertificate, DER).
    pub tbs: Vec<u8>,
    /// The signature value.
    pub signature: Vec<u8>,
    /// The issuer's public key.
    pub issuer: PublicKey,
}

/// What a peer's chain gives its verifier: the leaf's key (for the
/// CertificateVerify or ServerKeyExchange) and the two certificate
/// signatures to verify (leaf by intermediate, intermediate by CA).
#[derive(Clone, Debug)]
pub struct Chain {
    /// The leaf's public key.
    pub leaf: PublicKey,
    /// The leaf's and the intermediate's signatures.
    pub signed: [SignedCert; 2],
    /// The leaf's private key (PKCS#8, DER), for the side that signs.
    pub private: Vec<u8>,
}

/// The server's (`server`) or the client's chain of `files`. Errors: not
/// a chain of leaf and intermediate under the CA, or a key that does not
/// parse.
pub fn chain(files: &CertFiles, server: bool) -> Result<Chain> {
    let (chain_pem, key_pem) = files.identity(server);
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(chain_pem).collect::<Result<_, _>>().context("reading the chain")?;
    ensure!(certs.len() == 2, "expected a leaf and an intermediate, found {} certificates", certs.len());
    let ca = CertificateDer::from_pem_slice(&files.ca_cert).context("reading the CA certificate")?;
    let (leaf, leaf_key) = parse(&certs[0])?;
    let (intermediate, intermediate_key) = parse(&certs[1])?;
    let (_, ca_key) = parse(&ca)?;
    let private = match PrivateKeyDer::from_pem_slice(key_pem).context("reading the private key")? {
        PrivateKeyDer::Pkcs8(k) => k.secret_pkcs8_der().to_vec(),
        _ => return Err(anyhow!("the private key is not PKCS#8")),
    };
    Ok(Chain {
        leaf: leaf_key,
        signed: [
            SignedCert { issuer: intermediate_key.clone(), ..leaf },
            SignedCert { issuer: ca_key, ..intermediate },
        ],
        private,
    })
}

/// A certificate's signed part and signature (with a placeholder issuer),
/// and its own public key.
fn parse(der: &[u8]) -> Result<(SignedCert, PublicKey)> {
    use x509_parser::prelude::{FromDer, X509Certificate};
    let (_, cert) = X509Certificate::from_der(der).map_err(|e| anyhow!("parsing a certificate: {e}"))?;
    let key = PublicKey {
        spki: cert.tbs_certificate.subject_pki.raw.to_vec(),
        key: cert.tbs_certificate.subject_pki.subject_public_key.data.to_vec(),
    };
    let signed = SignedCert {
        tbs: cert.tbs_certificate.as_ref().to_vec(),
        signature: cert.signature_value.data.to_vec(),
        issuer: key.clone(),
    };
    Ok((signed, key))
}

/// Whether `chain`'s certificates are signed with [`ops::cert_sig`]'s
/// scheme: the table's assumption, checked where the chains are read.
pub fn check_chain_scheme(cert: CertChain, chain: &Chain) -> Result<()> {
    let sig = ops::cert_sig(cert);
    let bits = |k: &PublicKey| k.key.len();
    for s in &chain.signed {
        let ok = match sig {
            Sig::EcdsaP256Sha256 => s.issuer.key.len() == 65,
            Sig::EcdsaP384Sha384 => s.issuer.key.len() == 97,
            Sig::RsaPkcs1Sha256(n) | Sig::RsaPssSha256(n) => s.signature.len() * 8 == usize::from(n),
        };
        ensure!(
            ok,
            "{cert}: a certificate is not signed with {sig} (issuer key of {} bytes)",
            bits(&s.issuer)
        );
    }
    Ok(())
}
