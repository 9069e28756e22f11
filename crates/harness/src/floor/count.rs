//! The operation table checked against the libraries: how many times a
//! library's handshake calls the functions that perform each primitive,
//! counted by Callgrind on each side apart, beside what [`super::ops`] says.
//!
//! One handshake runs under Callgrind (`crypto-floor count`, one process per
//! library and parameter set, after a warm-up handshake) with
//! `--zero-before` and `--dump-after` on the side regions of
//! [`crate::callgrind`]: every dump holds one call into one side's library,
//! and the calls it made to every function (valgrind manual, "Callgrind
//! command-line options"). [`Profile`] names, per crypto implementation,
//! the functions whose calls count an operation: each the one function
//! every path to the primitive goes through once (e.g. AWS-LC's
//! `ECDSA_do_verify`, OpenSSL 3's `ossl_ecdsa_simple_verify_sig`, *ring*'s
//! `EcdsaVerificationAlgorithm::verify`), read from the implementations'
//! sources and checked on the floors themselves, whose calls are the
//! table's by construction.
//!
//! The rule ([`Class::exact`]): agreements, ML-KEM encapsulations and
//! decapsulations, the server's key pairs and every signature and
//! verification must be the table's number exactly, or the table misreads
//! the handshake (an error naming the operation). Two may be more, and the
//! excess is the library's choice, paid as protocol cost and shown: HMACs
//! (the table counts RFC 8446's key schedule; rustls and s2n-tls compute
//! more, OpenSSL's tickets add two) and the client's key pairs (s2n-tls's
//! client offers a secp256r1 share beside X25519MLKEM768). Fewer than the
//! table is always an error: the floor would count work the library does
//! not do.
//! Ticket seals and opens are not counted: every library has its own
//! ticket format (AES-GCM, AES-CBC with HMAC-SHA256, ChaCha20-Poly1305).
//! AEAD record protection is not counted either (the throughput floors
//! measure it).
//!
//! The same dumps give each side's instructions ([`Dump::instructions`]):
//! a floor must execute fewer than its library on each side (a floor above
//! its library is a bug in one of the two). Instruction counts, unlike
//! times, do not move with the machine's load.

use std::{
    collections::{BTreeMap, HashMap},
    fmt, fs,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, Result, bail, ensure};

use super::ops::{Flights, Kx, Op, Sig};
use crate::{
    callgrind::{Dump, GLIBC_TUNABLES, parse_dump},
    transport::Side,
};

/// What the check counts: an [`Op`] without the curve, key size or hash
/// that an implementation's functions do not tell apart (AWS-LC and OpenSSL
/// generate P-256 and P-384 keys in one function; every HMAC ends in one
/// `HMAC_Final`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// An X25519 key pair.
    KeyPairX25519,
    /// An X25519 agreement.
    AgreeX25519,
    /// A secp256r1 or secp384r1 key pair.
    KeyPairEc,
    /// A secp256r1 or secp384r1 agreement.
    AgreeEc,
    /// An ML-KEM-768 key pair.
    KeyPairMlKem,
    /// An ML-KEM-768 encapsulation.
    Encapsulate,
    /// An ML-KEM-768 decapsulation.
    Decapsulate,
    /// An ECDSA signature (P-256 or P-384).
    SignEcdsa,
    /// An ECDSA verification.
    VerifyEcdsa,
    /// An RSA signature (the private-key operation).
    SignRsa,
    /// An RSA verification (PSS or PKCS#1 v1.5).
    VerifyRsa,
    /// An HMAC (SHA-256 or SHA-384).
    Hmac,
}

impl Class {
    /// The class that counts `op`; `None` for tickets (not counted).
    pub fn of(op: Op) -> Option<Class> {
        let ec = |k: Kx| matches!(k, Kx::P256 | Kx::P384);
        let ecdsa = |s: Sig| matches!(s, Sig::EcdsaP256Sha256 | Sig::EcdsaP384Sha384);
        Some(match op {
            Op::KeyGen(Kx::X25519) => Class::KeyPairX25519,
            Op::Agree(Kx::X25519) => Class::AgreeX25519,
            Op::KeyGen(Kx::MlKem768) => Class::KeyPairMlKem,
            Op::KeyGen(k) if ec(k) => Class::KeyPairEc,
            Op::Agree(k) if ec(k) => Class::AgreeEc,
            Op::Encapsulate(_) => Class::Encapsulate,
            Op::Decapsulate(_) => Class::Decapsulate,
            Op::Sign(s) if ecdsa(s) => Class::SignEcdsa,
            Op::Verify(s) if ecdsa(s) => Class::VerifyEcdsa,
            Op::Sign(_) => Class::SignRsa,
            Op::Verify(_) => Class::VerifyRsa,
            Op::Hmac(_) => Class::Hmac,
            Op::KeyGen(_) | Op::Agree(_) | Op::TicketSeal | Op::TicketOpen => return None,
        })
    }

    /// Whether a library on `side` must do exactly the table's number, not
    /// more: every class but HMACs (a library may compute more than RFC
    /// 8446's key schedule needs) and the client's key pairs (a client may
    /// offer key shares for groups beyond the one negotiated, RFC 8446
    /// section 4.2.8). Fewer than the table is always a mismatch.
    pub fn exact(self, side: Side) -> bool {
        match self {
            Class::Hmac => false,
            Class::KeyPairX25519 | Class::KeyPairEc | Class::KeyPairMlKem => side == Side::Server,
            _ => true,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::KeyPairX25519 => "key pair x25519",
            Class::AgreeX25519 => "agreement x25519",
            Class::KeyPairEc => "key pair secp256r1/secp384r1",
            Class::AgreeEc => "agreement secp256r1/secp384r1",
            Class::KeyPairMlKem => "key pair ML-KEM-768",
            Class::Encapsulate => "encapsulation ML-KEM-768",
            Class::Decapsulate => "decapsulation ML-KEM-768",
            Class::SignEcdsa => "sign ECDSA",
            Class::VerifyEcdsa => "verify ECDSA",
            Class::SignRsa => "sign RSA",
            Class::VerifyRsa => "verify RSA",
            Class::Hmac => "HMAC",
        })
    }
}

/// The functions whose calls count each [`Class`] in one crypto
/// implementation: names as Callgrind shows them, without the
/// implementation's symbol prefix ([`function_name`]).
#[derive(Debug)]
pub struct Profile {
    /// The implementation, e.g. `AWS-LC`.
    pub name: &'static str,
    /// Each class and the functions whose calls, summed, count it.
    pub functions: &'static [(Class, &'static [&'static str])],
    /// Functions through which the library checks its own output, each
    /// call making one operation of its class more than the table's (a
    /// wolfSSL server verifies every RSA signature it makes): their calls
    /// are taken off the class's count before the check and shown apart,
    /// paid as protocol cost. Empty for most.
    pub own_checks: &'static [(Class, &'static str)],
    /// Classes of which the library may make fewer than the table, by at
    /// most the number given, because it skips an output of RFC 8446's key
    /// schedule nobody asked for (wolfSSL derives the exporter master
    /// secret only when it keeps its arrays). The floor still makes the
    /// table's, so its protocol cost is understated by that much. Empty
    /// for most.
    pub fewer: &'static [(Class, u64)],
    /// Classes whose functions this implementation does not tell apart,
    /// each counted as the second of its pair: the table's number of the
    /// first is added to the second's (Mbed TLS makes X25519 and NIST-curve
    /// key pairs and agreements in the same functions, and a system build
    /// shows Callgrind only its exported ones). Empty for most.
    pub merged: &'static [(Class, Class)],
    /// Functions whose own calls into the profile's functions are none of
    /// the table's operations: Mbed TLS's HMAC_DRBG, which deterministic
    /// ECDSA runs inside each signature for its nonce, computes its HMACs
    /// with the function TLS 1.2's PRF uses. Callgrind's call arcs tell
    /// them apart ([`compare_dump`]). Empty for most.
    pub not_from: &'static [&'static str],
}

impl Profile {
    /// `class`'s name in this profile's counts: with the classes merged
    /// into it ([`Profile::merged`]), e.g. `key pair
    /// x25519/secp256r1/secp384r1`.
    pub fn label(&self, class: Class) -> String {
        let mut label = class.to_string();
        for (from, _) in self.merged.iter().filter(|(_, into)| *into == class) {
            let from = from.to_string();
            label = match (from.rsplit_once(' '), label.rsplit_once(' ')) {
                (Some((what, a)), Some((same, b))) if what == same => format!("{what} {a}/{b}"),
                _ => format!("{label} and {from}"),
            };
        }
        label
    }

    /// The functions of `class`; empty when none is known.
    pub fn of(&self, class: Class) -> &'static [&'static str] {
        self.functions.iter().find(|(c, _)| *c == class).map_or(&[], |(_, f)| f)
    }
}

/// AWS-LC (aws-lc-sys, under aws-lc-rs, s2n-tls and the `openssl` crate).
/// s2n-tls computes its HMACs with its own `s2n_hmac_digest` over AWS-LC's
/// digests (s2n-tls's `crypto/s2n_hmac.c`), which never calls
/// `HMAC_Final`: both count. AWS-LC's own TLS layer (its libssl, under the
/// `openssl` crate) makes NIST-curve key shares below `EC_KEY`, as
/// BoringSSL's does: a key pair in `ECKeyShare::Offer`, an agreement in
/// `ECKeyShare::Finish` (ssl/ssl_key_share.cc, on a `BIGNUM` and
/// `EC_POINT_mul`; the server's `Accept` calls both), where aws-lc-rs and
/// the floors go through `EC_KEY_generate_key` and
/// `ECDH_compute_shared_secret` (`EVP_PKEY_derive`'s): one function per
/// path, none calling another.
/// ML-KEM-768 encapsulations are counted in the KEM method's
/// `ml_kem_768_encaps`, called through its function pointer (so never
/// inlined): AWS-LC 1.73 (aws-lc-sys 0.41, under the `openssl` crate)
/// inlines mlkem-native's `mlkem768_enc`.
pub const AWS_LC: Profile = Profile {
    name: "AWS-LC",
    functions: &[
        (Class::KeyPairX25519, &["X25519_public_from_private"]),
        (Class::AgreeX25519, &["X25519"]),
        (Class::KeyPairEc, &["EC_KEY_generate_key", "bssl::ECKeyShare::Offer"]),
        (Class::AgreeEc, &["ECDH_compute_shared_secret", "bssl::ECKeyShare::Finish"]),
        (Class::KeyPairMlKem, &["mlkem768_indcpa_keypair_derand"]),
        (Class::Encapsulate, &["ml_kem_768_encaps"]),
        (Class::Decapsulate, &["mlkem768_dec"]),
        (Class::SignEcdsa, &["ECDSA_do_sign"]),
        (Class::VerifyEcdsa, &["ECDSA_do_verify"]),
        (Class::SignRsa, &["rsa_default_sign_raw"]),
        (Class::VerifyRsa, &["rsa_verify_raw_no_self_test"]),
        (Class::Hmac, &["HMAC_Final", "s2n_hmac_digest"]),
    ],
    own_checks: &[],
    fewer: &[],
    merged: &[],
    not_from: &[],
};

/// OpenSSL 3: exported functions where one is called once per primitive
/// (a system libcrypto without debug symbols shows Callgrind only those),
/// the default provider's own for X25519 and ML-KEM-768 (visible with
/// symbols: the vendored build).
pub const OPENSSL_3: Profile = Profile {
    name: "OpenSSL 3",
    functions: &[
        (Class::KeyPairX25519, &["ossl_x25519_public_from_private"]),
        (Class::AgreeX25519, &["ossl_x25519"]),
        (Class::KeyPairEc, &["EC_KEY_generate_key"]),
        (Class::AgreeEc, &["ECDH_compute_key"]),
        (Class::KeyPairMlKem, &["ossl_ml_kem_genkey"]),
        (Class::Encapsulate, &["ossl_ml_kem_encap_rand"]),
        (Class::Decapsulate, &["ossl_ml_kem_decap"]),
        (Class::SignEcdsa, &["ECDSA_do_sign_ex"]),
        (Class::VerifyEcdsa, &["ECDSA_do_verify"]),
        (Class::SignRsa, &["RSA_private_encrypt"]),
        (Class::VerifyRsa, &["RSA_public_decrypt"]),
        (Class::Hmac, &["HMAC_Final"]),
    ],
    own_checks: &[],
    fewer: &[],
    merged: &[],
    not_from: &[],
};

/// *ring* 0.17: its algorithms' functions, called through the algorithm
/// structs' function pointers (so never inlined).
pub const RING: Profile = Profile {
    name: "ring",
    functions: &[
        (Class::KeyPairX25519, &["ring::ec::curve25519::x25519::x25519_public_from_private"]),
        (Class::AgreeX25519, &["ring::ec::curve25519::x25519::x25519_ecdh"]),
        (
            Class::KeyPairEc,
            &[
                "ring::ec::suite_b::curve::p256_generate_private_key",
                "ring::ec::suite_b::curve::p384_generate_private_key",
            ],
        ),
        (Class::AgreeEc, &["ring::ec::suite_b::ecdh::p256_ecdh", "ring::ec::suite_b::ecdh::p384_ecdh"]),
        (Class::SignEcdsa, &["ring::ec::suite_b::ecdsa::signing::EcdsaKeyPair::sign"]),
        (
            Class::VerifyEcdsa,
            &[
                "<ring::ec::suite_b::ecdsa::verification::EcdsaVerificationAlgorithm as ring::signature::VerificationAlgorithm>::verify",
            ],
        ),
        (Class::SignRsa, &["ring::rsa::keypair::KeyPair::sign"]),
        (Class::VerifyRsa, &["ring::rsa::verification::verify_rsa_"]),
        (Class::Hmac, &["ring::hmac::Context::try_sign"]),
    ],
    own_checks: &[],
    fewer: &[],
    merged: &[],
    not_from: &[],
};

/// BoringSSL (the `boring` crate's boring-sys build; C++ since 2025, so
/// its internal functions are namespaced). Its TLS layer makes NIST-curve
/// key shares below `EC_KEY` (the client's in `ECKeyShare::Generate`, the
/// server's in `ECKeyShare::Encap`, which makes its key pair without
/// `Generate`), the floor through `EC_KEY_generate_key`: one function per
/// path, none calling another.
pub const BORINGSSL: Profile = Profile {
    name: "BoringSSL",
    functions: &[
        (Class::KeyPairX25519, &["X25519_public_from_private"]),
        (Class::AgreeX25519, &["X25519"]),
        (Class::KeyPairEc, &["EC_KEY_generate_key", "bssl::ECKeyShare::Generate", "bssl::ECKeyShare::Encap"]),
        (Class::AgreeEc, &["bssl::ec_point_mul_scalar"]),
        (Class::KeyPairMlKem, &["MLKEM768_generate_key"]),
        (Class::Encapsulate, &["MLKEM768_encap"]),
        (Class::Decapsulate, &["MLKEM768_decap"]),
        (Class::SignEcdsa, &["bssl::ecdsa_sign_fixed"]),
        (Class::VerifyEcdsa, &["bssl::ecdsa_verify_fixed"]),
        (Class::SignRsa, &["bssl::rsa_default_sign_raw"]),
        (Class::VerifyRsa, &["bssl::rsa_verify_raw_no_self_test"]),
        (Class::Hmac, &["HMAC_Final"]),
    ],
    own_checks: &[],
    fewer: &[],
    merged: &[],
    not_from: &[],
};

/// The profile of a floor backend ([`super::Backend::name`]) shared by
/// several libraries or kept here: AWS-LC for `aws-lc-rs-*` and
/// `openssl-aws-lc-*`, OpenSSL 3 for `openssl-3.*`, *ring* for `ring-*`,
/// BoringSSL for `boring-*`; `None` for others. What
/// [`super::Backend::profile`] gives unless the backend's folder has its
/// own (wolfCrypt, Mbed TLS, GnuTLS: `crate::libs::<library>::floor`).
pub fn shared_profile(backend: &str) -> Option<&'static Profile> {
    if backend.starts_with("aws-lc-rs-") || backend.starts_with("openssl-aws-lc-") {
        Some(&AWS_LC)
    } else if backend.starts_with("openssl-3.") {
        Some(&OPENSSL_3)
    } else if backend.starts_with("ring-") {
        Some(&RING)
    } else if backend.starts_with("boring-") {
        Some(&BORINGSSL)
    } else {
        None
    }
}

/// A symbol as [`Profile`] names it: without aws-lc-sys's
/// `aws_lc_X_Y_Z_` (aws-lc-fips-sys's `aws_lc_fips_X_Y_Z_`) or *ring*'s
/// `ring_core_X_Y_Z_` prefix, and for a
/// demangled C++ name without `(anonymous namespace)::`, the argument
/// list (`bssl::ecdsa_sign_fixed(unsigned char const*, ...)` is
/// `bssl::ecdsa_sign_fixed`) and the inline namespace a prefixed build puts
/// its C++ in (aws-lc-sys's libssl: `bssl::aws_lc_0_41_0::`).
pub fn function_name(symbol: &str) -> String {
    let name = strip_version_prefix(symbol);
    if !name.contains('(') {
        return name.to_string();
    }
    let name = name.replace("(anonymous namespace)::", "");
    let name = match name.find('(') {
        Some(i) if i > 0 => &name[..i],
        _ => &name,
    };
    // A namespace named as a whole prefix, its trailing `_` left out.
    let prefix_namespace = |part: &str| strip_version_prefix(&format!("{part}_")).is_empty();
    name.split("::").filter(|part| !prefix_namespace(part)).collect::<Vec<_>>().join("::")
}

fn strip_version_prefix(symbol: &str) -> &str {
    for prefix in ["aws_lc_fips_", "aws_lc_", "ring_core_"] {
        if let Some(rest) = symbol.strip_prefix(prefix) {
            // Three version numbers, each followed by `_`.
            let mut s = rest;
            let mut ok = true;
            for _ in 0..3 {
                let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                match s[digits..].strip_prefix('_') {
                    Some(r) if digits > 0 => s = r,
                    _ => ok = false,
                }
            }
            if ok {
                return s;
            }
        }
    }
    symbol
}

/// What the table says `side` does, by class (tickets left out).
pub fn expected(flights: &Flights, side: Side) -> BTreeMap<Class, u64> {
    let mut out = BTreeMap::new();
    for op in flights.of(side) {
        if let Some(class) = Class::of(op) {
            *out.entry(class).or_insert(0) += 1;
        }
    }
    out
}

/// How many times `calls` (one side's, by symbol) called each class's
/// functions in `profile`, for every class the profile names, less the
/// calls of its own-check functions ([`Profile::own_checks`]); and those
/// calls, by class.
pub fn counted(
    profile: &Profile,
    calls: &HashMap<String, u64>,
) -> (BTreeMap<Class, u64>, BTreeMap<Class, u64>) {
    let mut out: BTreeMap<Class, u64> = profile.functions.iter().map(|(c, _)| (*c, 0)).collect();
    let mut own = BTreeMap::new();
    for (symbol, n) in calls {
        let name = function_name(symbol);
        for (class, functions) in profile.functions {
            if functions.contains(&name.as_str()) {
                *out.entry(*class).or_insert(0) += n;
            }
        }
        for (class, function) in profile.own_checks {
            if name == *function {
                *own.entry(*class).or_insert(0) += n;
            }
        }
    }
    for (class, n) in &own {
        let c = out.entry(*class).or_insert(0);
        *c = c.saturating_sub(*n);
    }
    (out, own)
}

/// One class on one side: the table's number and the library's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// The class.
    pub class: Class,
    /// The side.
    pub side: Side,
    /// The table's number.
    pub expected: u64,
    /// Calls counted in the library's functions for it, less its own
    /// checks.
    pub counted: u64,
    /// Operations of the class the library made to check its own output
    /// ([`Profile::own_checks`]), not in `counted`.
    pub own_checks: u64,
    /// How many fewer than the table the library may make
    /// ([`Profile::fewer`]).
    pub allowed_fewer: u64,
}

impl Check {
    /// Whether the count agrees with the table ([`Class::exact`]).
    pub fn ok(&self) -> bool {
        let least = self.expected.saturating_sub(self.allowed_fewer);
        if self.class.exact(self.side) {
            (least..=self.expected).contains(&self.counted)
        } else {
            self.counted >= least
        }
    }
}

/// [`compare`] of one side's dump: its calls less those the profile's
/// [`Profile::not_from`] functions made. Errors: as [`compare`].
pub fn compare_dump(profile: &Profile, flights: &Flights, side: Side, dump: &Dump) -> Result<Vec<Check>> {
    let mut calls = dump.calls.clone();
    for ((caller, callee), n) in &dump.arcs {
        if profile.not_from.contains(&function_name(caller).as_str())
            && let Some(c) = calls.get_mut(callee)
        {
            *c = c.saturating_sub(*n);
        }
    }
    compare(profile, flights, side, &calls)
}

/// Every class the table or the profile has for one side, compared. Errors
/// (unsupported by this check, not a mismatch): the table has a class the
/// profile names no function for.
pub fn compare(
    profile: &Profile,
    flights: &Flights,
    side: Side,
    calls: &HashMap<String, u64>,
) -> Result<Vec<Check>> {
    let mut want = expected(flights, side);
    for (from, into) in profile.merged {
        if let Some(n) = want.remove(from) {
            *want.entry(*into).or_insert(0) += n;
        }
    }
    let (got, own) = counted(profile, calls);
    let mut out = Vec::new();
    for class in want.keys().chain(got.keys()).copied().collect::<std::collections::BTreeSet<_>>() {
        let expected = want.get(&class).copied().unwrap_or(0);
        ensure!(
            expected == 0 || !profile.of(class).is_empty(),
            "{}: no function is known to count {class}",
            profile.name
        );
        out.push(Check {
            class,
            side,
            expected,
            counted: got.get(&class).copied().unwrap_or(0),
            own_checks: own.get(&class).copied().unwrap_or(0),
            allowed_fewer: profile.fewer.iter().find(|(c, _)| *c == class).map_or(0, |(_, n)| *n),
        });
    }
    Ok(out)
}

/// The classes of `floor_checks` (a floor's [`compare`] on one side) that
/// the floor performed (the table has them) but whose functions Callgrind
/// never saw called: not visible in this build (a system library without
/// debug symbols names only its exported functions), so neither the floor
/// nor its library can be counted for them.
pub fn invisible(floor_checks: &[Check]) -> Vec<Class> {
    floor_checks.iter().filter(|c| c.expected > 0 && c.counted == 0).map(|c| c.class).collect()
}

/// Each side's dumps of one run, summed: `[client, server]`.
pub type Sides = [Dump; 2];

/// The `--zero-before` and `--dump-after` options that make Callgrind dump
/// every call into either side's library ([`crate::callgrind::client_calls`],
/// [`crate::callgrind::server_calls`]; exact names: these options take no
/// wildcards).
const SIDE_FUNCTIONS: [&str; 2] =
    ["tls_bench_harness::callgrind::client_calls", "tls_bench_harness::callgrind::server_calls"];

/// Runs `program args` under Callgrind with a dump per call into either
/// side's library, in a fresh directory under `work` (removed after), and
/// sums each side's dumps. `program` must run one handshake inside the side
/// regions after its warm-up (`crypto-floor count`'s own runner).
/// Errors: valgrind is missing, the run failed (its output's end is in the
/// error), or a side made no call.
pub fn count_sides(program: &Path, args: &[String], work: &Path) -> Result<Sides> {
    let dir = unique_dir(work)?;
    let result = run_and_read(program, args, &dir);
    let _ = fs::remove_dir_all(&dir);
    result
}

/// What [`count_sides`] and [`check_valgrind`] say when valgrind is missing.
const NO_VALGRIND: &str =
    "valgrind is not installed: `apt-get install valgrind` (Debian, Ubuntu) or `dnf install valgrind`";

/// Checks that valgrind runs (`valgrind --version`), for a tool to call
/// before it prints or does anything. Errors: it is missing, or fails.
pub fn check_valgrind() -> Result<()> {
    match Command::new("valgrind").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            bail!("valgrind --version failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!("{NO_VALGRIND}"),
        Err(e) => Err(e).context("running valgrind"),
    }
}

fn unique_dir(work: &Path) -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = work.join(format!("count-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

fn run_and_read(program: &Path, args: &[String], dir: &Path) -> Result<Sides> {
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--cache-sim=no"]);
    for f in SIDE_FUNCTIONS {
        cmd.arg(format!("--zero-before={f}")).arg(format!("--dump-after={f}"));
    }
    cmd.arg(format!("--callgrind-out-file={}", dir.join("out").display()))
        .arg(program)
        .args(args)
        .env("GLIBC_TUNABLES", GLIBC_TUNABLES);
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!("{NO_VALGRIND}"),
        Err(e) => return Err(e).context("running valgrind"),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("==")).collect();
        bail!("{} {} failed under Callgrind: {}", program.display(), args.join(" "), tail.join("\n"));
    }
    let mut sides: Sides = Default::default();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        // `out` is the dump at the program's end; `out.N` the N-th dump.
        if path.extension().is_none() {
            continue;
        }
        let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let dump = parse_dump(&text).with_context(|| path.display().to_string())?;
        let Some(i) = SIDE_FUNCTIONS.iter().position(|f| dump.trigger == format!("--dump-after={f}")) else {
            bail!("{}: an unexpected dump trigger {:?}", path.display(), dump.trigger);
        };
        sides[i].instructions += dump.instructions;
        for (name, n) in dump.calls {
            *sides[i].calls.entry(name).or_insert(0) += n;
        }
        for (arc, n) in dump.arcs {
            *sides[i].arcs.entry(arc).or_insert(0) += n;
        }
    }
    for (side, d) in [Side::Client, Side::Server].iter().zip(&sides) {
        ensure!(d.instructions > 0, "no call into the {side}'s library was counted");
    }
    Ok(sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    #[test]
    fn prefixes_are_stripped_only_when_whole() {
        assert_eq!(function_name("aws_lc_0_47_0_HMAC_Final"), "HMAC_Final");
        assert_eq!(function_name("ring_core_0_17_14_x25519_sc_mask"), "x25519_sc_mask");
        assert_eq!(function_name("aws_lc_fips_0_13_7_HMAC_Final"), "HMAC_Final");
        assert_eq!(function_name("aws_lc_rs::hmac::sign"), "aws_lc_rs::hmac::sign");
        assert_eq!(function_name("HMAC_Final"), "HMAC_Final");
        assert_eq!(
            function_name("bssl::ecdsa_sign_fixed(unsigned char const*, unsigned long, ec_key_st const*)"),
            "bssl::ecdsa_sign_fixed"
        );
        assert_eq!(
            function_name("bssl::(anonymous namespace)::ECKeyShare::Generate(cbb_st*)"),
            "bssl::ECKeyShare::Generate"
        );
        // aws-lc-sys's libssl: its C++ in an inline namespace named as the prefix.
        assert_eq!(
            function_name("bssl::aws_lc_0_41_0::(anonymous namespace)::ECKeyShare::Offer(cbb_st*)"),
            "bssl::ECKeyShare::Offer"
        );
        assert_eq!(
            function_name(
                "bssl::aws_lc_0_41_0::(anonymous namespace)::ECKeyShare::Finish(bssl::aws_lc_0_41_0::Array<unsigned char>*, unsigned char*, bssl::aws_lc_0_41_0::Span<unsigned char const>)"
            ),
            "bssl::ECKeyShare::Finish"
        );
        assert_eq!(function_name("bssl::aws_lc_0_41::f(int)"), "bssl::aws_lc_0_41::f");
    }

    /// A profile with one function per class (named as the class), for
    /// the fixtures below to add one mechanism to.
    const FIXTURE: Profile = Profile {
        name: "fixture",
        functions: &[
            (Class::KeyPairX25519, &["key_pair_x25519"]),
            (Class::AgreeX25519, &["agree_x25519"]),
            (Class::KeyPairEc, &["key_pair_ec"]),
            (Class::AgreeEc, &["agree_ec"]),
            (Class::KeyPairMlKem, &["key_pair_ml_kem"]),
            (Class::Encapsulate, &["encapsulate"]),
            (Class::Decapsulate, &["decapsulate"]),
            (Class::SignEcdsa, &["sign_ecdsa"]),
            (Class::VerifyEcdsa, &["verify_ecdsa"]),
            (Class::SignRsa, &["sign_rsa"]),
            (Class::VerifyRsa, &["verify_rsa"]),
            (Class::Hmac, &["hmac"]),
        ],
        own_checks: &[],
        fewer: &[],
        merged: &[],
        not_from: &[],
    };

    fn calls(pairs: &[(&str, u64)]) -> HashMap<String, u64> {
        pairs.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    fn class(checks: &[Check], class: Class) -> Check {
        checks.iter().find(|c| c.class == class).cloned().unwrap()
    }

    #[test]
    fn a_check_of_its_own_signature_is_counted_apart() {
        use crate::params::CertChain;
        // As wolfSSL's server, which verifies each RSA signature it makes.
        const OWN: Profile = Profile { own_checks: &[(Class::VerifyRsa, "sign_and_check")], ..FIXTURE };
        let flights = super::super::ops::handshake(&Params { cert: CertChain::Rsa2048, ..Params::default() });
        // The server signs once and verifies that signature once inside
        // `sign_and_check`; the table has no verification on its side.
        let checks = compare(
            &OWN,
            &flights,
            Side::Server,
            &calls(&[("sign_rsa", 1), ("verify_rsa", 1), ("sign_and_check", 1)]),
        )
        .unwrap();
        assert_eq!((class(&checks, Class::SignRsa).counted, class(&checks, Class::SignRsa).ok()), (1, true));
        let verify = class(&checks, Class::VerifyRsa);
        assert_eq!((verify.expected, verify.counted, verify.own_checks, verify.ok()), (0, 0, 1, true));
        // Without the own check the same verification is one too many.
        let checks =
            compare(&OWN, &flights, Side::Server, &calls(&[("sign_rsa", 1), ("verify_rsa", 1)])).unwrap();
        assert!(!class(&checks, Class::VerifyRsa).ok());
    }

    #[test]
    fn merged_classes_count_together_and_no_more() {
        // As Mbed TLS, which makes X25519 and NIST-curve shares in the same
        // functions.
        // X25519 has no functions of its own (the first two of FIXTURE).
        const MERGED: Profile = Profile {
            functions: FIXTURE.functions.split_at(2).1,
            merged: &[(Class::KeyPairX25519, Class::KeyPairEc), (Class::AgreeX25519, Class::AgreeEc)],
            ..FIXTURE
        };
        // The default handshake's server: one X25519 key pair and agreement.
        let flights = super::super::ops::handshake(&Params::default());
        let checks =
            compare(&MERGED, &flights, Side::Server, &calls(&[("key_pair_ec", 1), ("agree_ec", 1)])).unwrap();
        for c in [Class::KeyPairEc, Class::AgreeEc] {
            let check = class(&checks, c);
            assert_eq!((check.expected, check.counted, check.ok()), (1, 1, true), "{c}");
        }
        assert!(checks.iter().all(|c| !matches!(c.class, Class::KeyPairX25519 | Class::AgreeX25519)));
        assert_eq!(MERGED.label(Class::KeyPairEc), "key pair x25519/secp256r1/secp384r1");
        assert_eq!(AWS_LC.label(Class::AgreeEc), "agreement secp256r1/secp384r1");
        // A second key pair (a share the table does not make) is an error.
        let checks =
            compare(&MERGED, &flights, Side::Server, &calls(&[("key_pair_ec", 2), ("agree_ec", 1)])).unwrap();
        assert!(!class(&checks, Class::KeyPairEc).ok());
    }

    #[test]
    fn calls_from_a_caller_not_the_tables_are_left_out_by_the_call_arcs() {
        // As Mbed TLS's HMAC_DRBG, which deterministic ECDSA runs for its
        // nonce, computing HMACs with the PRF's function.
        const NOT_FROM: Profile = Profile { not_from: &["drbg_update", "drbg_random"], ..FIXTURE };
        let flights = super::super::ops::handshake(&Params::default());
        let table = expected(&flights, Side::Server)[&Class::Hmac];
        let finish = "hmac".to_string();
        let mut dump = Dump::default();
        dump.calls.insert(finish.clone(), table + 7);
        dump.arcs.insert(("tls_prf".to_string(), finish.clone()), table);
        dump.arcs.insert(("drbg_update".to_string(), finish.clone()), 5);
        dump.arcs.insert(("drbg_random".to_string(), finish), 2);
        let hmac = |checks: Vec<Check>| class(&checks, Class::Hmac).counted;
        assert_eq!(hmac(compare_dump(&NOT_FROM, &flights, Side::Server, &dump).unwrap()), table);
        // Without the arcs every call counts.
        assert_eq!(hmac(compare(&NOT_FROM, &flights, Side::Server, &dump.calls).unwrap()), table + 7);
    }

    #[test]
    fn fewer_allows_that_many_fewer_and_no_more() {
        // As wolfSSL, which may skip the exporter secret's HMAC.
        const FEWER: Profile = Profile { fewer: &[(Class::Hmac, 1)], ..FIXTURE };
        let flights = super::super::ops::handshake(&Params::default());
        let table = expected(&flights, Side::Client)[&Class::Hmac];
        let hmac = |n: u64, profile: &Profile| {
            let c = calls(&[("hmac", n), ("HMAC_Final", n)]);
            class(&compare(profile, &flights, Side::Client, &c).unwrap(), Class::Hmac).ok()
        };
        assert!(hmac(table - 1, &FEWER));
        assert!(!hmac(table - 2, &FEWER));
        // Every other implementation makes at least the table's.
        assert!(!hmac(table - 1, &OPENSSL_3));
        assert!(hmac(table, &OPENSSL_3));
    }

    #[test]
    fn aws_lc_counts_nist_curve_shares_through_its_libssl_and_through_ec_key() {
        use crate::params::KxGroup;
        assert_eq!(shared_profile("openssl-aws-lc-1.73.0").map(|p| p.name), Some("AWS-LC"));
        assert_eq!(shared_profile("aws-lc-rs-1.19.0").map(|p| p.name), Some("AWS-LC"));
        let flights =
            super::super::ops::handshake(&Params { group: KxGroup::Secp256r1, ..Params::default() });
        let ec = |checks: &[Check]| -> Vec<(Class, u64, u64, bool)> {
            checks
                .iter()
                .filter(|c| matches!(c.class, Class::KeyPairEc | Class::AgreeEc))
                .map(|c| (c.class, c.expected, c.counted, c.ok()))
                .collect()
        };
        let calls = |symbols: &[&str]| -> HashMap<String, u64> {
            symbols.iter().map(|s| (s.to_string(), 1)).collect()
        };
        let want = vec![(Class::KeyPairEc, 1, 1, true), (Class::AgreeEc, 1, 1, true)];
        // AWS-LC's libssl (under the `openssl` crate): ECKeyShare on a
        // BIGNUM and EC_POINT_mul, neither EC_KEY nor ECDH.
        let libssl = calls(&[
            "bssl::aws_lc_0_41_0::(anonymous namespace)::ECKeyShare::Offer(cbb_st*)",
            "bssl::aws_lc_0_41_0::(anonymous namespace)::ECKeyShare::Finish(bssl::aws_lc_0_41_0::Array<unsigned char>*, unsigned char*, bssl::aws_lc_0_41_0::Span<unsigned char const>)",
            "aws_lc_0_41_0_EC_POINT_mul",
        ]);
        // aws-lc-rs and the floors: EC_KEY_generate_key, EVP_PKEY_derive's ECDH.
        let ec_key = calls(&[
            "aws_lc_0_41_0_EC_KEY_generate_key",
            "aws_lc_0_41_0_ECDH_compute_shared_secret",
            "aws_lc_0_41_0_ec_point_mul_scalar",
        ]);
        for side in [Side::Client, Side::Server] {
            for calls in [&libssl, &ec_key] {
                assert_eq!(ec(&compare(&AWS_LC, &flights, side, calls).unwrap()), want, "{side}");
            }
        }
    }

    #[test]
    fn the_sweep_centre_checks_exactly_and_hmacs_at_least() {
        let flights = super::super::ops::handshake(&Params::default());
        let calls = |hmacs: u64, verifies: u64| -> HashMap<String, u64> {
            [
                ("aws_lc_0_47_0_X25519_public_from_private", 1),
                ("aws_lc_0_47_0_X25519", 1),
                ("aws_lc_0_47_0_ECDSA_do_verify", verifies),
                ("aws_lc_0_47_0_HMAC_Final", hmacs),
                ("aws_lc_0_47_0_ECDSA_verify", 3),
            ]
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect()
        };
        let checks = compare(&AWS_LC, &flights, Side::Client, &calls(28, 3)).unwrap();
        assert!(checks.iter().all(Check::ok), "{checks:?}");
        let hmac = checks.iter().find(|c| c.class == Class::Hmac).unwrap();
        assert_eq!((hmac.expected, hmac.counted), (23, 28));
        let fewer = compare(&AWS_LC, &flights, Side::Client, &calls(22, 3)).unwrap();
        assert!(!fewer.iter().find(|c| c.class == Class::Hmac).unwrap().ok());
        let more = compare(&AWS_LC, &flights, Side::Client, &calls(23, 4)).unwrap();
        let verify = more.iter().find(|c| c.class == Class::VerifyEcdsa).unwrap();
        assert!(!verify.ok());
        // A class the library did and the table does not have is a mismatch too.
        let mut signed = calls(23, 3);
        signed.insert("aws_lc_0_47_0_ECDSA_do_sign".to_string(), 1);
        let checks = compare(&AWS_LC, &flights, Side::Client, &signed).unwrap();
        let sign = checks.iter().find(|c| c.class == Class::SignEcdsa).unwrap();
        assert_eq!((sign.expected, sign.counted, sign.ok()), (0, 1, false));
    }

    #[test]
    fn every_class_of_the_sweep_has_functions_in_every_profile_that_can_run_it() {
        for p in Params::handshake_sweep() {
            let f = super::super::ops::handshake(&p);
            for side in [Side::Client, Side::Server] {
                for class in expected(&f, side).keys() {
                    for profile in [&AWS_LC, &OPENSSL_3, &BORINGSSL] {
                        assert!(!profile.of(*class).is_empty(), "{} {class}", profile.name);
                    }
                    let ring_lacks =
                        matches!(class, Class::KeyPairMlKem | Class::Encapsulate | Class::Decapsulate);
                    assert_eq!(RING.of(*class).is_empty(), ring_lacks, "ring {class}");
                }
            }
        }
    }
}
