//! Benchmarks as data: which parameter sets run ([`Matrix`]), the
//! [`Case`] type whose `Display` is a benchmark id, and the data sent.
//! Shared by the Criterion benchmarks (`benches/benches/`), the `compare` binary
//! and the tests; the loop that times a case is [`crate::runner`].

use std::{collections::HashSet, env, fmt};

use anyhow::{Result, bail};

use crate::{
    harness::TlsLibrary,
    params::{Aead, CertChain, CipherSuite, HandshakeKind, KxGroup, Params, Protocol},
    transport::{DEFAULT_MTU, MAX_MTU, MIN_MTU, check_mtu},
    workload::{Handshake, SendLoop, SmallWrites, Throughput, Udp},
    writes::{MESSAGES, Message, Strategy},
};

pub use crate::workload::{Figure, Workload};

/// Environment variable selecting the matrix: `sweep` (default) or `full`.
pub const MATRIX_ENV: &str = "TLS_BENCH_MATRIX";

/// Environment variable asking the Criterion benchmarks for the per-side
/// groups too (`handshake-client`, `handshake-server`, `throughput-send`,
/// `throughput-recv`): `1` for yes, `0` or unset for no.
pub const SIDES_ENV: &str = "TLS_BENCH_SIDES";

/// Environment variable asking the Criterion benchmarks for each built
/// crypto floor ([`crate::libs::crypto_floors`]) beside the libraries:
/// `1` for yes, `0` or unset for no. The floors run the handshake and
/// throughput cases (others are skipped with their reason); `report`
/// tables each library's floor and protocol cost
/// ([`tls_bench_results::criterion`]).
pub const FLOORS_ENV: &str = "TLS_BENCH_FLOORS";

/// Environment variable setting the path MTU of DTLS connections' in-memory
/// duplexes, in bytes: 576 to 65535, [`DEFAULT_MTU`] when unset.
pub const MTU_ENV: &str = "TLS_BENCH_MTU";

/// The MTU [`MTU_ENV`] sets, in bytes, [`DEFAULT_MTU`] when unset. Errors:
/// not a number, or outside [`MIN_MTU`] to [`MAX_MTU`]
/// ([`crate::transport::check_mtu`]); the message names the value and the
/// valid range.
pub fn mtu_from_env() -> Result<usize> {
    let v = match env::var(MTU_ENV) {
        Ok(v) => v,
        Err(env::VarError::NotPresent) => return Ok(DEFAULT_MTU),
        Err(e) => bail!("{MTU_ENV}: {e}; valid: a number of bytes from {MIN_MTU} to {MAX_MTU}"),
    };
    let mtu: usize = v.parse().map_err(|_| {
        anyhow::anyhow!(
            "{MTU_ENV}={v:?}: not a number of bytes; valid: {MIN_MTU} to {MAX_MTU} (default {DEFAULT_MTU})"
        )
    })?;
    check_mtu(mtu).map_err(|e| anyhow::anyhow!("{MTU_ENV}={v:?}: {e}"))?;
    Ok(mtu)
}

/// Which parameter sets run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// Handshakes one dimension at a time around the centre
    /// ([`Params::handshake_sweep`]); throughput for every TLS 1.3 suite at
    /// [`SWEEP_WRITE_SIZES`].
    Sweep,
    /// Handshakes over the cross product ([`Params::full_matrix`]);
    /// throughput for every TLS 1.3 and TLS 1.2 ECDHE-ECDSA suite at
    /// [`WRITE_SIZES`].
    Full,
}

impl Matrix {
    /// Every matrix, by name.
    pub const ALL: [(&'static str, Matrix); 2] = [("sweep", Matrix::Sweep), ("full", Matrix::Full)];

    /// The matrix named `name`. Errors: an unknown name (the error lists the
    /// valid ones).
    pub fn from_name(name: &str) -> Result<Matrix> {
        match Matrix::ALL.iter().find(|(n, _)| *n == name) {
            Some((_, m)) => Ok(*m),
            None => bail!("unknown matrix {name:?}; valid: sweep, full"),
        }
    }

    /// The matrix named by [`MATRIX_ENV`], [`Matrix::Sweep`] when unset.
    /// Errors: a value that names no matrix.
    pub fn from_env() -> Result<Matrix> {
        match env::var(MATRIX_ENV) {
            Ok(v) => Matrix::from_name(&v).map_err(|e| anyhow::anyhow!("{MATRIX_ENV}: {e}")),
            Err(env::VarError::NotPresent) => Ok(Matrix::Sweep),
            Err(e) => bail!("{MATRIX_ENV}: {e}"),
        }
    }

    /// The handshake benchmark's parameter sets. With the `historical-perf`
    /// feature, [`historical_handshake_params`] whatever the matrix.
    pub fn handshake_params(self) -> Vec<Params> {
        if cfg!(feature = "historical-perf") {
            historical_handshake_params()
        } else if self == Matrix::Full {
            Params::full_matrix()
        } else {
            Params::handshake_sweep()
        }
    }

    /// The throughput benchmark's parameter sets: server authentication,
    /// x25519, ECDSA P-256, every TLS 1.3 suite (and with [`Matrix::Full`]
    /// every TLS 1.2 ECDHE-ECDSA suite too). With the `historical-perf`
    /// feature: TLS_AES_128_GCM_SHA256 only.
    pub fn throughput_params(self) -> Vec<Params> {
        if cfg!(feature = "historical-perf") {
            return vec![Params::default()];
        }
        let protocols: &[Protocol] =
            if self == Matrix::Full { &[Protocol::Tls13, Protocol::Tls12] } else { &[Protocol::Tls13] };
        let base = Params::default();
        protocols
            .iter()
            .flat_map(|&p| Aead::ALL.map(move |aead| base.with_protocol(p).with_aead(aead)))
            .collect()
    }

    /// The write sizes of the throughput benchmark, in bytes.
    pub fn write_sizes(self) -> &'static [usize] {
        if cfg!(feature = "historical-perf") || self == Matrix::Sweep {
            &SWEEP_WRITE_SIZES
        } else {
            &WRITE_SIZES
        }
    }

    /// Every workload of this matrix, handshakes first: the rows of a
    /// comparison.
    pub fn workloads(self) -> Vec<(Workload, Params)> {
        let mut out: Vec<(Workload, Params)> =
            self.handshake_params().into_iter().map(|p| (Workload::HANDSHAKE, p)).collect();
        for p in self.throughput_params() {
            for &write_size in self.write_sizes() {
                out.push((Throughput { write_size }.into(), p));
            }
        }
        out
    }

    /// Every case of this matrix for `libs`: each workload, each library,
    /// in that order.
    pub fn cases(self, libs: &[Box<dyn TlsLibrary>]) -> Vec<Case> {
        cases_of(self.workloads(), libs)
    }

    /// The protocol versions of the small-writes benchmark: TLS 1.3 (and
    /// with [`Matrix::Full`] TLS 1.2 too), with AES-256-GCM. None with the
    /// `historical-perf` feature.
    pub fn small_write_params(self) -> Vec<Params> {
        if cfg!(feature = "historical-perf") {
            return Vec::new();
        }
        let protocols: &[Protocol] =
            if self == Matrix::Full { &[Protocol::Tls13, Protocol::Tls12] } else { &[Protocol::Tls13] };
        protocols.iter().map(|&p| small_write_params(p, Aead::Aes256Gcm)).collect()
    }

    /// The small-writes benchmark's workloads: for each of
    /// [`Matrix::small_write_params`], each of [`MESSAGES`], each
    /// [`Strategy`].
    pub fn small_write_workloads(self) -> Vec<(Workload, Params)> {
        small_write_workloads(&self.small_write_params(), &MESSAGES, &Strategy::ALL)
    }

    /// The DTLS benchmark's workloads (`benches/benches/dtls.rs`): handshakes for
    /// [`dtls_handshake_params`], then the send loop for
    /// [`send_loop_params`] at each of [`Matrix::send_loop_payloads`]. With
    /// the `historical-perf` feature: the send loop only, DTLS 1.2 and its
    /// TLS 1.2 contrast with AES-128-GCM, 1024-byte writes.
    pub fn dtls_workloads(self) -> Vec<(Workload, Params)> {
        let mut out: Vec<(Workload, Params)> = Vec::new();
        let loops = if cfg!(feature = "historical-perf") {
            send_loop_params()
                .into_iter()
                .filter(|p| {
                    p.suite.aead() == Aead::Aes128Gcm && p.protocol().stream_version() == Protocol::Tls12
                })
                .collect()
        } else {
            out.extend(dtls_handshake_params().into_iter().map(|p| (Workload::HANDSHAKE, p)));
            send_loop_params()
        };
        for p in loops {
            for &payload in self.send_loop_payloads() {
                out.push((SendLoop { payload }.into(), p));
            }
        }
        if !cfg!(feature = "historical-perf") {
            out.extend(udp_workloads(self.send_loop_payloads()));
        }
        out
    }

    /// Bytes per write of the send loop: 1024 (as in openssl/openssl issue
    /// 26055); with [`Matrix::Full`] also 256 and 1400 (the most a
    /// 1500-byte MTU carries with DTLS 1.2 AES-GCM's 37 bytes of record
    /// overhead and 28 of IPv4 and UDP headers, rounded down).
    pub fn send_loop_payloads(self) -> &'static [usize] {
        if self == Matrix::Full && !cfg!(feature = "historical-perf") { &SEND_LOOP_PAYLOADS } else { &[1024] }
    }

    /// Every case of every Criterion benchmark for `libs`: [`Matrix::cases`]
    /// then the small writes, then DTLS.
    pub fn all_cases(self, libs: &[Box<dyn TlsLibrary>]) -> Vec<Case> {
        let mut all = self.cases(libs);
        all.extend(cases_of(self.small_write_workloads(), libs));
        all.extend(cases_of(self.dtls_workloads(), libs));
        all
    }
}

/// Clients at once of the socket echo ([`echo_workloads`]): the seed's.
pub const ECHO_CONNECTIONS: [u32; 3] = [1, 10, 100];

/// Bytes per message of the socket echo: 1, 16 and 64 KiB.
pub const ECHO_MESSAGES: [u32; 3] = [1024, 16 * 1024, 64 * 1024];

/// Clients at once of the socket handshakes ([`socket_workloads`]).
pub const SOCKET_HANDSHAKE_CONNECTIONS: u32 = 10;

/// The Erlang seed's echo (tls_bench's `benchmark(Library, Port, 50,
/// Requests, 30720)`): 50 clients of 30 KiB messages.
pub const SEED_ECHO: crate::workload::Echo = crate::workload::Echo { connections: 50, message: 30 * 1024 };

/// The Erlang seed's suites, on an RSA-2048 chain (its ECDHE-RSA suite
/// needs one): TLS_AES_128_GCM_SHA256 and TLS_CHACHA20_POLY1305_SHA256
/// with x25519, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 with secp256r1
/// (Erlang/OTP's ssl has no x25519 in TLS 1.2).
pub fn seed_echo_params() -> [Params; 3] {
    let rsa = Params { cert: CertChain::Rsa2048, ..Params::default() };
    [
        rsa,
        Params { suite: CipherSuite::TLS_CHACHA20_POLY1305_SHA256, ..rsa },
        Params {
            suite: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            group: KxGroup::Secp256r1,
            ..rsa
        },
    ]
}

/// `compare --sockets`'s workloads: the socket echo
/// ([`crate::workload::echo`]) of every TLS 1.3 suite (AES-GCM and
/// ChaCha20) x [`ECHO_CONNECTIONS`] x [`ECHO_MESSAGES`] (server
/// authentication, x25519, ECDSA P-256), the Erlang seed's echo
/// ([`SEED_ECHO`] x [`seed_echo_params`]), then full and resumed
/// handshakes on new connections ([`crate::workload::socket_handshake`],
/// [`SOCKET_HANDSHAKE_CONNECTIONS`] clients, TLS_AES_128_GCM_SHA256,
/// x25519, ECDSA P-256).
pub fn socket_workloads() -> Vec<(Workload, Params)> {
    let base = Params::default();
    let mut out = Vec::new();
    for aead in Aead::ALL {
        for connections in ECHO_CONNECTIONS {
            for message in ECHO_MESSAGES {
                out.push((crate::workload::Echo { connections, message }.into(), base.with_aead(aead)));
            }
        }
    }
    out.extend(seed_echo_params().map(|p| (SEED_ECHO.into(), p)));
    let handshakes = crate::workload::SocketHandshake { connections: SOCKET_HANDSHAKE_CONNECTIONS };
    for kind in [HandshakeKind::ServerAuth, HandshakeKind::Resumption] {
        out.push((handshakes.into(), Params { kind, ..base }));
    }
    out
}

/// The UDP workloads ([`crate::workload::udp::socket`]): handshakes with server
/// authentication and mTLS, then the send loop at each of `payloads`; DTLS
/// 1.2 and 1.3, AES-128-GCM, the send loop's secp256r1 and ECDSA P-256.
pub fn udp_workloads(payloads: &[usize]) -> Vec<(Workload, Params)> {
    let mut out = Vec::new();
    let loops: Vec<Params> =
        send_loop_params().into_iter().filter(|p| p.datagram && p.suite.aead() == Aead::Aes128Gcm).collect();
    for kind in [HandshakeKind::ServerAuth, HandshakeKind::MutualAuth] {
        out.extend(loops.iter().map(|&p| (Udp(Handshake).into(), Params { kind, ..p })));
    }
    for &p in &loops {
        out.extend(payloads.iter().map(|&payload| (Udp(SendLoop { payload }).into(), p)));
    }
    out
}

/// Send-loop write sizes of [`Matrix::Full`], in bytes.
pub const SEND_LOOP_PAYLOADS: [usize; 3] = [256, 1024, 1400];

/// The DTLS handshakes: every handshake kind x DTLS 1.2 and 1.3 x AES-128-GCM
/// and AES-256-GCM x x25519 and secp256r1, with the ECDSA P-256 chain (DTLS
/// 1.2 with ECDHE-ECDSA suites).
pub fn dtls_handshake_params() -> Vec<Params> {
    let mut out = Vec::new();
    for kind in HandshakeKind::ALL {
        for protocol in Protocol::DATAGRAM {
            for aead in [Aead::Aes128Gcm, Aead::Aes256Gcm] {
                for group in [KxGroup::X25519, KxGroup::Secp256r1] {
                    out.push(
                        Params { kind, group, ..Params::default() }.with_protocol(protocol).with_aead(aead),
                    );
                }
            }
        }
    }
    out
}

/// The send loop's parameter sets: server authentication, secp256r1, ECDSA
/// P-256; DTLS 1.2 and DTLS 1.3 with AES-128-GCM and AES-256-GCM; then TLS
/// 1.2 with AES-128-GCM over the byte stream, the contrast openssl/openssl
/// issue 26055 draws (every library runs it). secp256r1 as in
/// [`small_write_params`]: the group does not touch the record layer, and
/// every library negotiates it in TLS 1.2.
pub fn send_loop_params() -> Vec<Params> {
    let base = Params { group: KxGroup::Secp256r1, ..Params::default() };
    let mut out = Vec::new();
    for protocol in Protocol::DATAGRAM {
        for aead in [Aead::Aes128Gcm, Aead::Aes256Gcm] {
            out.push(base.with_protocol(protocol).with_aead(aead));
        }
    }
    out.push(base.with_protocol(Protocol::Tls12));
    out
}

/// The parameters of a small-writes run: server authentication,
/// secp256r1, ECDSA P-256 (fixed: small-write ids name only the suite), and
/// the suite of `protocol` with `aead`. The group does not touch the record
/// layer; secp256r1 is the one every library and build negotiates in both
/// versions (s2n-tls has no TLS 1.2 policy that prefers x25519, FIPS builds
/// of rustls have no x25519).
pub fn small_write_params(protocol: Protocol, aead: Aead) -> Params {
    Params { group: KxGroup::Secp256r1, ..Params::default() }.with_protocol(protocol).with_aead(aead)
}

/// Small-writes workloads: each of `params`, each message, each strategy,
/// in that order.
pub fn small_write_workloads(
    params: &[Params],
    messages: &[Message],
    strategies: &[Strategy],
) -> Vec<(Workload, Params)> {
    let mut out = Vec::new();
    for &p in params {
        for &message in messages {
            for &strategy in strategies {
                out.push((SmallWrites { message, strategy }.into(), p));
            }
        }
    }
    out
}

/// Each workload for each library, in that order.
pub fn cases_of(workloads: Vec<(Workload, Params)>, libs: &[Box<dyn TlsLibrary>]) -> Vec<Case> {
    workloads
        .into_iter()
        .flat_map(|(workload, params)| {
            libs.iter().map(move |lib| Case { workload, params, library: lib.name() })
        })
        .collect()
}

/// Whether [`SIDES_ENV`] asks for the per-side groups. Errors: a value
/// other than `0` or `1`.
pub fn sides_from_env() -> Result<bool> {
    flag_from_env(SIDES_ENV)
}

/// Whether [`FLOORS_ENV`] asks for the crypto floors. Errors: a value
/// other than `0` or `1`.
pub fn floors_from_env() -> Result<bool> {
    flag_from_env(FLOORS_ENV)
}

/// A `1`/`0` environment flag, unset meaning `0`. Errors: any other value
/// (named, with the valid ones), or one that is not Unicode.
fn flag_from_env(name: &str) -> Result<bool> {
    match env::var(name) {
        Ok(v) if v == "1" => Ok(true),
        Ok(v) if v == "0" => Ok(false),
        Ok(v) => bail!("{name}={v:?}: valid values are 1 and 0"),
        Err(env::VarError::NotPresent) => Ok(false),
        Err(e) => bail!("{name}: {e}"),
    }
}

/// What the historical benchmarks (`historical-perf/`) run across past
/// releases: every handshake kind with an ECDSA P-256 and an RSA-2048 chain,
/// at TLS 1.3, TLS_AES_128_GCM_SHA256 and x25519, which every release there
/// supports.
pub fn historical_handshake_params() -> Vec<Params> {
    HandshakeKind::ALL
        .into_iter()
        .flat_map(|kind| {
            [CertChain::EcdsaP256, CertChain::Rsa2048]
                .map(|c| Params { kind, ..Params::default() }.with_cert(c))
        })
        .collect()
}

/// The instruction-count suite (`benches/benches/instructions.rs`): handshakes at
/// the sweep centre ([`Params::default`]) and its one-step neighbours for
/// kind (mTLS, resumption), chain (RSA-2048) and group (secp256r1,
/// X25519MLKEM768); transfers at the centre's parameters in writes of
/// [`SWEEP_WRITE_SIZES`]. With the `historical-perf` feature, without
/// X25519MLKEM768 (no past release has it).
pub fn instruction_workloads() -> Vec<(Workload, Params)> {
    let base = Params::default();
    let mut groups = vec![KxGroup::Secp256r1];
    if !cfg!(feature = "historical-perf") {
        groups.push(KxGroup::X25519Mlkem768);
    }
    let handshakes = [base, Params { kind: HandshakeKind::MutualAuth, ..base }]
        .into_iter()
        .chain([Params { kind: HandshakeKind::Resumption, ..base }, base.with_cert(CertChain::Rsa2048)])
        .chain(groups.into_iter().map(|group| Params { group, ..base }));
    let mut out: Vec<(Workload, Params)> = handshakes.map(|p| (Workload::HANDSHAKE, p)).collect();
    out.extend(SWEEP_WRITE_SIZES.map(|write_size| (Throughput { write_size }.into(), base)));
    out
}

/// The cases of [`instruction_workloads`] for `libs`: each workload, each
/// library.
pub fn instruction_cases(libs: &[Box<dyn TlsLibrary>]) -> Vec<Case> {
    cases_of(instruction_workloads(), libs)
}

/// The case and figure whose id ([`Case::id`]) is `id`, among the
/// instruction-count cases and the full matrix of `libs`. Errors: no such
/// id in this build (the error gives an example).
pub fn find_case(id: &str, libs: &[Box<dyn TlsLibrary>]) -> Result<(Case, Figure)> {
    let cases = instruction_cases(libs).into_iter().chain(Matrix::Full.all_cases(libs));
    let figures = [Figure::Both, Figure::First, Figure::Second];
    let mut example = None;
    for case in cases {
        if let Some(&figure) = figures.iter().find(|&&f| case.id(f) == id) {
            return Ok((case, figure));
        }
        example.get_or_insert_with(|| case.to_string());
    }
    bail!(
        "no benchmark of this build has the id {id:?}; ids read group/parameters/library, e.g. {}",
        example.unwrap_or_default()
    )
}

/// Application-data write sizes of the full throughput benchmark, in bytes.
pub const WRITE_SIZES: [usize; 4] = [256, 1024, 4096, 16384];

/// Write sizes of the default (sweep) throughput benchmark, in bytes: a
/// small write and a full record (RFC 8446 section 5.1: 2^14).
pub const SWEEP_WRITE_SIZES: [usize; 2] = [1024, 16384];

/// One benchmark: a workload, its parameters and the library that runs it.
/// `Display` is its id, `group/parameters/library`, e.g.
/// `handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/openssl-3.6.3`
/// or `throughput/server-auth,...,ECDSA-P256,16384B/s2n-tls-0.3.47+aws-lc`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Case {
    /// What an iteration does.
    pub workload: Workload,
    /// The parameters, checked against what was negotiated every iteration.
    pub params: Params,
    /// The library's name ([`TlsLibrary::name`]).
    pub library: String,
}

impl Case {
    /// The `parameters` component of the id ([`crate::workload::Kind::parameters`]),
    /// e.g. `server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256,1024B`.
    pub fn parameters(&self) -> String {
        self.workload.kind().parameters(&self.params)
    }

    /// The Criterion bench (`benches/benches/<name>.rs`) that runs this case:
    /// `handshake`, `throughput`, `small-writes` or `dtls` (DTLS handshakes
    /// and every send loop).
    pub fn bench_target(&self) -> &'static str {
        self.workload.kind().bench_target(&self.params)
    }

    /// The id of `figure`: the group of that figure, the parameters, the library.
    pub fn id(&self, figure: Figure) -> String {
        format!("{}/{}/{}", self.workload.group(figure), self.parameters(), self.library)
    }

    /// The row the case belongs to, `group/parameters`: the cases of one row
    /// differ only by library.
    pub fn row(&self) -> String {
        format!("{}/{}", self.workload.group(Figure::Both), self.parameters())
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id(Figure::Both))
    }
}

/// Errors when two of `cases` have the same id, naming it.
pub fn check_unique(cases: &[Case]) -> Result<()> {
    let mut seen = HashSet::new();
    for c in cases {
        if !seen.insert(c.to_string()) {
            bail!("benchmark id {c} appears twice");
        }
    }
    Ok(())
}

/// A library id without its version, keeping the backend: the name a
/// library goes by across releases, e.g. `rustls+ring` for
/// `rustls-0.23.46+ring`, `openssl` for `openssl-3.6.3`, `openssl-aws-lc`
/// for `openssl-aws-lc-1.73.0`, `plaintext` for `plaintext`.
pub fn library_family(name: &str) -> String {
    let end = name
        .char_indices()
        .find(|&(i, c)| c == '-' && name[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        .map_or(name.len(), |(i, _)| i);
    match name.split_once('+') {
        Some((_, backend)) if end < name.len() => format!("{}+{backend}", &name[..end]),
        _ => name[..end].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_read_group_parameters_library() {
        let libs = crate::libs::all();
        for m in [Matrix::Sweep, Matrix::Full] {
            let cases = m.cases(&libs);
            check_unique(&cases).unwrap();
            assert_eq!(cases.len(), m.workloads().len() * libs.len());
            let all = m.all_cases(&libs);
            check_unique(&all).unwrap();
            let dtls =
                (24 + 5 * m.send_loop_payloads().len() + 4 + 2 * m.send_loop_payloads().len()) * libs.len();
            assert_eq!(all.len(), cases.len() + m.small_write_params().len() * 10 * 3 * libs.len() + dtls);
        }
        let small = Case {
            workload: SmallWrites { message: MESSAGES[9], strategy: Strategy::Vectored }.into(),
            params: small_write_params(Protocol::Tls12, Aead::Aes256Gcm),
            library: "x-1".into(),
        };
        assert_eq!(
            small.to_string(),
            "small-writes/TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,vectored,50x20B/x-1"
        );
        let c = Case {
            workload: Throughput { write_size: 1024 }.into(),
            params: Params::default(),
            library: "x-1".into(),
        };
        assert_eq!(
            c.to_string(),
            "throughput/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256,1024B/x-1"
        );
        assert_eq!(c.id(Figure::First), c.to_string().replace("throughput/", "throughput-send/"));
        let dtls = Case {
            workload: SendLoop { payload: 1024 }.into(),
            params: send_loop_params()[0],
            library: "x-1".into(),
        };
        assert_eq!(
            dtls.id(Figure::Second),
            "send-loop-recv/DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B/x-1"
        );
        assert_eq!(dtls.bench_target(), "dtls");
        let hs = dtls_handshake_params();
        assert_eq!(hs.len(), 24);
        assert!(hs.iter().all(|p| p.datagram && p.validate().is_ok()));
        assert_eq!(hs.iter().filter(|p| p.protocol() == Protocol::Dtls13).count(), 12);
        let twice = [c.clone(), c];
        assert!(check_unique(&twice).unwrap_err().to_string().contains("appears twice"));
    }

    #[test]
    fn matrix_names_are_checked() {
        assert_eq!(Matrix::from_name("full").unwrap(), Matrix::Full);
        for bad in ["FULL", "bogus", ""] {
            let e = Matrix::from_name(bad).unwrap_err().to_string();
            assert!(e.contains("sweep, full"), "{e}");
        }
    }

    #[test]
    fn library_families_drop_the_version_and_keep_the_backend() {
        for (name, family) in [
            ("rustls-0.23.46+ring", "rustls+ring"),
            ("s2n-tls-0.3.47+aws-lc-fips", "s2n-tls+aws-lc-fips"),
            ("openssl-3.6.3", "openssl"),
            ("openssl-aws-lc-1.73.0", "openssl-aws-lc"),
            ("boring-5.4.0+boringssl", "boring+boringssl"),
            ("plaintext", "plaintext"),
        ] {
            assert_eq!(library_family(name), family);
        }
    }
}
