//! Negotiated-value read-back for rustls 0.22 (built by historical-perf),
//! which has neither `negotiated_key_exchange_group` nor `handshake_kind`
//! (both came in 0.23). What the library did is observed instead:
//!
//! - Key exchange group: each of the provider's groups is wrapped so that
//!   its `start` (a key share made: by the client for its ClientHello or
//!   ServerKeyExchange reply, by the server for its ServerHello) is counted
//!   per group and per role. The group a connection used is the one whose
//!   count rose by one between the connection's creation and the end of its
//!   handshake.
//! - Resumption, client: the server-certificate verifier is wrapped and
//!   counted. A handshake that ends without verifying the server's
//!   certificate resumed a session (a resumed handshake carries no
//!   Certificate message: RFC 8446 section 2.2, RFC 5077 section 3.1).
//! - Resumption, server: every server connection embeds [`RESUMPTION_MARK`]
//!   in its tickets (`ServerConnection::set_resumption_data`);
//!   `received_resumption_data` returns it only when the client presented a
//!   valid ticket of ours, from which rustls resumes.
//!
//! Counts are process-wide, so a connection's figures are changes between
//! two moments of its own life: connections of one role must not hand-
//! shake interleaved (the harness and the memory tool run one pair at a
//! time). Any other change (two key exchanges, as after a
//! HelloRetryRequest) is an error, never a guess.

use std::{
    collections::HashMap,
    fmt,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use anyhow::{Result, anyhow, bail};
use rustls::{
    DigitallySignedStruct, Error, NamedGroup, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::{ActiveKeyExchange, CryptoProvider, SupportedKxGroup},
    pki_types::{CertificateDer, ServerName, UnixTime},
};

/// Which side of a connection a provider or count belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Client,
    Server,
}

/// What every server connection embeds in its tickets and a resumed one
/// reads back.
pub const RESUMPTION_MARK: &[u8] = b"tls-bench";

/// A key exchange group that counts its key shares.
struct CountedKx {
    inner: &'static dyn SupportedKxGroup,
    role: Role,
    starts: AtomicU64,
}

impl fmt::Debug for CountedKx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountedKx({:?}, {:?})", self.inner.name(), self.role)
    }
}

impl SupportedKxGroup for CountedKx {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        self.starts.fetch_add(1, Ordering::Relaxed);
        self.inner.start()
    }

    fn name(&self) -> NamedGroup {
        self.inner.name()
    }
}

type KxKey = (usize, Role);

/// Every counted group made so far, by the wrapped group's address and role
/// (one each for the process: the provider's groups are statics).
fn counted_groups() -> &'static Mutex<HashMap<KxKey, &'static CountedKx>> {
    static GROUPS: OnceLock<Mutex<HashMap<KxKey, &'static CountedKx>>> = OnceLock::new();
    GROUPS.get_or_init(Default::default)
}

/// `provider` with each key exchange group counted for `role`.
pub fn counted(provider: Arc<CryptoProvider>, role: Role) -> Result<Arc<CryptoProvider>> {
    let mut p = (*provider).clone();
    let mut groups = counted_groups().lock().map_err(|_| anyhow!("key exchange counters poisoned"))?;
    for g in p.kx_groups.iter_mut() {
        let key = (*g as *const dyn SupportedKxGroup as *const () as usize, role);
        let wrapped: &'static CountedKx = groups
            .entry(key)
            .or_insert_with(|| Box::leak(Box::new(CountedKx { inner: *g, role, starts: AtomicU64::new(0) })));
        *g = wrapped;
    }
    Ok(Arc::new(p))
}

/// Client-side server certificate verifications, all configs together.
static VERIFICATIONS: AtomicU64 = AtomicU64::new(0);

/// rustls's webpki verifier, counting certificate verifications.
#[derive(Debug)]
struct CountedVerifier(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CountedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        VERIFICATIONS.fetch_add(1, Ordering::Relaxed);
        self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The webpki server verifier for `roots` with `provider`'s algorithms,
/// counted. Errors: the verifier cannot be built (no roots).
pub fn server_verifier(
    roots: Arc<RootCertStore>,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>> {
    let inner = WebPkiServerVerifier::builder_with_provider(roots, provider)
        .build()
        .map_err(|e| anyhow!("building rustls's server certificate verifier: {e}"))?;
    Ok(Arc::new(CountedVerifier(inner)))
}

/// The counts one role's connections can change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    role: Role,
    /// Key shares made per counted group: (its key, IANA code, count). One
    /// group code can have several wrappers (one per provider).
    starts: Vec<(KxKey, u16, u64)>,
    verifications: u64,
}

impl Snapshot {
    /// The counts now.
    pub fn take(role: Role) -> Result<Snapshot> {
        let groups = counted_groups().lock().map_err(|_| anyhow!("key exchange counters poisoned"))?;
        let mut starts: Vec<(KxKey, u16, u64)> = groups
            .iter()
            .filter(|(_, g)| g.role == role)
            .map(|(key, g)| (*key, g.inner.name().get_u16(), g.starts.load(Ordering::Relaxed)))
            .collect();
        starts.sort_unstable();
        Ok(Snapshot { role, starts, verifications: VERIFICATIONS.load(Ordering::Relaxed) })
    }

    /// What a handshake between `self` (taken before the connection was
    /// made) and now did: the key exchange group used (IANA code; `None` if
    /// no key share was made) and, for a client, whether it verified the
    /// server's certificate. Errors: more than one key share.
    pub fn since(&self) -> Result<Observed> {
        let now = Snapshot::take(self.role)?;
        let earlier = |key: KxKey| self.starts.iter().find(|(k, _, _)| *k == key).map_or(0, |(_, _, n)| *n);
        let used: Vec<(u16, u64)> = now
            .starts
            .iter()
            .map(|(key, code, n)| (*code, n - earlier(*key)))
            .filter(|(_, d)| *d > 0)
            .collect();
        let group = match used.as_slice() {
            [] => None,
            [(code, 1)] => Some(*code),
            other => bail!("rustls made {other:?} key shares (group, count) in one handshake"),
        };
        let verified = now.verifications > self.verifications;
        Ok(Observed { group, verified_server: verified })
    }
}

/// What one handshake did, as observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The key exchange group's IANA code, if a key share was made.
    pub group: Option<u16>,
    /// Whether (a client) verified the server's certificate.
    pub verified_server: bool,
}
