//! Every library x every parameter set of the full matrix: a checked
//! handshake, then 1 MiB each direction, compared byte for byte. Unsupported
//! combinations must be named skips, and only where a library really lacks
//! the feature.

use tls_bench_harness::{
    harness::{ConfigureError, Handshaker},
    libs,
    params::{HandshakeKind, KxGroup, Params},
    transport::Side,
    workload::pattern,
};

const MIB: usize = 1 << 20;

/// Runs every library over every parameter set of `kind`; returns the skips
/// as `(library, params, reason)`.
fn run_kind(kind: HandshakeKind) -> Vec<(String, Params, String)> {
    let data = pattern(MIB);
    let mut scratch = Vec::new();
    let mut skips = Vec::new();
    let mut ran = 0;
    for lib in libs::all() {
        for p in Params::full_matrix().into_iter().filter(|p| p.kind == kind) {
            let mut h = match Handshaker::new(lib.as_ref(), lib.as_ref(), p) {
                Ok(h) => h,
                Err(ConfigureError::Unsupported(why)) => {
                    assert!(!why.is_empty());
                    skips.push((lib.name(), p, why));
                    continue;
                }
                Err(e) => panic!("{p}/{}: {e}", lib.name()),
            };
            // Twice, so resumption resumes from a ticket of a resumed handshake too.
            for _ in 0..2 {
                let (mut pair, times) =
                    h.handshake_checked().unwrap_or_else(|e| panic!("{p}/{}: {e:#}", lib.name()));
                assert!(times.client > std::time::Duration::ZERO && times.server > std::time::Duration::ZERO);
                for from in [Side::Client, Side::Server] {
                    pair.transfer(from, &data, 16384, &mut scratch)
                        .unwrap_or_else(|e| panic!("{p}/{}: {from:?} sending: {e:#}", lib.name()));
                }
                pair.shutdown().unwrap_or_else(|e| panic!("{p}/{}: shutdown: {e:#}", lib.name()));
            }
            ran += 1;
        }
    }
    for (lib, p, why) in &skips {
        eprintln!("skip {p}/{lib}: {why}");
    }
    assert!(ran > 0);
    skips
}

/// Libraries that must support every combination of the matrix.
fn complete(lib: &str) -> bool {
    lib.starts_with("rustls") && lib.ends_with("+aws-lc-rs")
        || lib.starts_with("openssl-3.6")
        || lib.starts_with("openssl-aws-lc")
        || lib.starts_with("boring-")
        || lib == "plaintext"
}

/// OpenSSL before 3.5 has no ML-KEM.
fn openssl_without_mlkem(lib: &str) -> bool {
    ["openssl-3.0.", "openssl-3.1.", "openssl-3.2.", "openssl-3.3.", "openssl-3.4."]
        .iter()
        .any(|v| lib.starts_with(v))
}

fn check_skips(skips: &[(String, Params, String)]) {
    for (lib, p, why) in skips {
        assert!(!complete(lib), "{lib} should support {p}: {why}");
        if lib.ends_with("+ring") || openssl_without_mlkem(lib) {
            assert_eq!(p.group, KxGroup::X25519Mlkem768, "{lib} skipped {p}: {why}");
            assert!(why.contains("X25519MLKEM768"), "{why}");
        }
        if lib.contains("fips") {
            // FIPS mode forbids only algorithms that are not approved:
            // x25519, ChaCha20-Poly1305 (and what s2n-tls's policies lack anyway).
            assert!(why.contains("FIPS"), "{lib} skipped {p} without naming FIPS: {why}");
            if lib.starts_with("rustls") {
                assert!(
                    p.group == KxGroup::X25519
                        || p.suite.aead() == tls_bench_harness::params::Aead::Chacha20Poly1305,
                    "{lib} skipped an approved combination {p}: {why}"
                );
            }
        }
        if lib.starts_with("s2n-tls") {
            assert!(why.contains("no s2n-tls security policy"), "{why}");
        }
    }
}

#[test]
fn server_auth_every_library_every_parameter() {
    check_skips(&run_kind(HandshakeKind::ServerAuth));
}

#[test]
fn mutual_auth_every_library_every_parameter() {
    check_skips(&run_kind(HandshakeKind::MutualAuth));
}

#[test]
fn resumption_every_library_every_parameter() {
    check_skips(&run_kind(HandshakeKind::Resumption));
}

#[test]
fn every_library_runs_the_default_sweep_point() {
    for lib in libs::all() {
        let mut p = Params::default();
        if lib.name().contains("fips")
            && matches!(Handshaker::new(lib.as_ref(), lib.as_ref(), p), Err(ConfigureError::Unsupported(_)))
        {
            // rustls's FIPS provider has no x25519, the sweep's centre.
            p.group = KxGroup::Secp256r1;
        }
        let mut h =
            Handshaker::new(lib.as_ref(), lib.as_ref(), p).unwrap_or_else(|e| panic!("{}: {e}", lib.name()));
        h.handshake_checked().unwrap_or_else(|e| panic!("{}: {e:#}", lib.name()));
    }
}

#[test]
fn library_names_carry_versions() {
    for lib in libs::tls_libraries() {
        let name = lib.name();
        assert!(!name.contains("unknown"), "{name}");
        assert!(name.chars().any(|c| c.is_ascii_digit()), "{name}");
    }
}

#[test]
fn unsupported_combinations_are_named_skips() {
    let invalid = Params {
        suite: tls_bench_harness::params::CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        ..Params::default()
    };
    for lib in libs::all() {
        match Handshaker::new(lib.as_ref(), lib.as_ref(), invalid) {
            Err(ConfigureError::Unsupported(why)) => assert!(why.contains("ECDSA-P256"), "{why}"),
            other => panic!("{}: {invalid} should be unsupported, got {:?}", lib.name(), other.err()),
        }
    }
    #[cfg(feature = "rustls")]
    {
        use tls_bench_harness::harness::TlsLibrary;
        let ring = tls_bench_harness::libs::rustls::stack::Rustls {
            provider: tls_bench_harness::libs::rustls::config::Provider::Ring,
        };
        let pq = Params { group: KxGroup::X25519Mlkem768, ..Params::default() };
        match ring.configure(&pq) {
            Err(ConfigureError::Unsupported(why)) => assert!(why.contains("X25519MLKEM768"), "{why}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("ring has no ML-KEM"),
        }
    }
}
