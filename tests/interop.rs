//! Cross-library interop: each client library against each server library,
//! server authentication, mTLS and resumption, with the negotiated values
//! checked on both sides and data both ways.

use tls_bench_harness::{
    harness::{ConfigureError, Handshaker},
    libs,
    params::{HandshakeKind, KxGroup, Params, Protocol},
    transport::Side,
    workload::pattern,
};

/// `group`: s2n-tls has no TLS 1.2 policy that prefers x25519, so the
/// TLS 1.2 run uses secp256r1, which every library supports.
fn interop(protocol: Protocol, group: KxGroup) {
    let data = pattern(64 * 1024);
    let mut scratch = Vec::new();
    let libs = libs::tls_libraries();
    let (mut ran, mut skipped) = (0, 0);
    for kind in HandshakeKind::ALL {
        let p = Params { kind, group, ..Params::default() }.with_protocol(protocol);
        for client in &libs {
            for server in &libs {
                let what = format!("{p}: {} client, {} server", client.name(), server.name());
                let mut h = match Handshaker::new(client.as_ref(), server.as_ref(), p) {
                    Ok(h) => h,
                    // FIPS mode forbids x25519; nothing else may be skipped.
                    Err(ConfigureError::Unsupported(why)) if why.contains("FIPS") => {
                        assert_eq!(group, KxGroup::X25519, "{what}: {why}");
                        eprintln!("skip {what}: {why}");
                        skipped += 1;
                        continue;
                    }
                    Err(e) => panic!("{what}: {e}"),
                };
                for _ in 0..2 {
                    let (mut pair, _) = h.handshake_checked().unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    for from in [Side::Client, Side::Server] {
                        pair.transfer(from, &data, 4096, &mut scratch)
                            .unwrap_or_else(|e| panic!("{what}: {e:#}"));
                    }
                }
                ran += 1;
            }
        }
    }
    // Only a FIPS build may skip (the match above allows nothing else).
    if !libs.iter().any(|l| l.name().contains("fips")) {
        assert_eq!(skipped, 0);
    }
    assert!(ran > 0);
}

#[test]
fn every_client_against_every_server_tls13() {
    interop(Protocol::Tls13, KxGroup::X25519);
}

#[test]
fn every_client_against_every_server_tls12() {
    interop(Protocol::Tls12, KxGroup::Secp256r1);
}
