//! The crypto floors: every floor of this build runs every handshake of the
//! full matrix its implementation can do (checked as a library's are: what
//! was negotiated, and each side's Finished keyed with the shared secrets),
//! resumes, and moves data intact through its records.

#![cfg(feature = "crypto-floor")]

use std::rc::Rc;

use tls_bench_harness::{
    floor::{Backend, ops},
    harness::{ConfigureError, Configured, Handshaker},
    libs,
    params::{Aead, CertChain, HandshakeKind, KxGroup, Params},
    transport::{CONTENT_APPLICATION_DATA, Side},
};

#[test]
fn every_floor_runs_every_handshake_it_supports() {
    for floor in &libs::crypto_floors() {
        let mut ran = 0;
        for p in Params::full_matrix() {
            let mut h = match Handshaker::new(floor.as_ref(), floor.as_ref(), p) {
                Ok(h) => h,
                Err(ConfigureError::Unsupported(why)) => {
                    // Only ML-KEM may be missing (ring has none).
                    assert_eq!(p.group, KxGroup::X25519Mlkem768, "{} {p}: {why}", floor.name());
                    continue;
                }
                Err(e) => panic!("{} {p}: {e}", floor.name()),
            };
            // Resumption resumes twice in a row from fresh tickets.
            let times = if p.kind == HandshakeKind::Resumption { 2 } else { 1 };
            for _ in 0..times {
                h.handshake_checked().unwrap_or_else(|e| panic!("{} {p}: {e:#}", floor.name()));
            }
            ran += 1;
        }
        assert!(ran >= Params::full_matrix().len() * 3 / 4, "{}: ran {ran}", floor.name());
    }
}

#[cfg(all(feature = "rustls", not(tls_bench_rustls_fips)))]
#[test]
fn a_rustls_build_has_the_aws_lc_rs_and_ring_floors_and_every_library_names_a_built_one() {
    let names: Vec<String> = libs::crypto_floors().iter().map(|f| f.name()).collect();
    assert!(names.iter().any(|n| n.starts_with("crypto-floor-aws-lc-rs-1.")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("crypto-floor-ring-0.")), "{names:?}");
    // Every library of the build names a floor that is built.
    for lib in libs::tls_libraries() {
        if let Some(floor) = lib.crypto_floor() {
            assert!(names.contains(&floor), "{}: {floor} is not among {names:?}", lib.name());
        }
    }
}

#[test]
fn floors_move_data_intact_in_records() {
    for floor in libs::crypto_floors() {
        for p in [
            Params::default(),
            Params::default().with_aead(tls_bench_harness::params::Aead::Chacha20Poly1305),
        ] {
            let mut h = Handshaker::new(floor.as_ref(), floor.as_ref(), p).unwrap();
            let (mut pair, _) = h.handshake_checked().unwrap();
            pair.duplex.reset_stats();
            let data: Vec<u8> = (0..65536u32).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut scratch = Vec::new();
            pair.transfer(Side::Client, &data, 16384, &mut scratch).unwrap();
            let s = pair.duplex.stats(Side::Client);
            // 4 records of 16384 bytes, one content type byte, a 16-byte tag
            // and a 5-byte header each, as TLS 1.3 frames them.
            assert_eq!(s.records, 4, "{} {p}", floor.name());
            assert_eq!(s.bytes, 4 * (16384 + 1 + 16 + 5), "{} {p}", floor.name());
        }
    }
}

#[test]
fn a_signature_by_another_key_fails_the_handshake() {
    // The client expects the ECDSA-P256 chain; the server signs with the
    // ECDSA-P384 chain's key: the client's verification must fail.
    for floor in libs::crypto_floors() {
        let p = Params::default();
        let client: Rc<dyn Configured> = floor.configure(&p).unwrap().into();
        let server: Rc<dyn Configured> = floor.configure(&p.with_cert(CertChain::EcdsaP384)).unwrap().into();
        let mut h = Handshaker::from_configured(client, server, p).unwrap();
        let err = h
            .handshake_checked()
            .err()
            .unwrap_or_else(|| panic!("{}: a foreign signature passed", floor.name()));
        assert!(format!("{err:#}").contains("does not verify"), "{}: {err:#}", floor.name());
    }
}

#[test]
fn the_floor_settings_list_the_operation_table() {
    for floor in libs::crypto_floors() {
        let settings = floor.settings(&Params::default()).unwrap();
        assert!(settings.contains("client: 1x key pair x25519, 1x agreement x25519"), "{settings}");
        assert!(settings.contains("3x verify ecdsa_secp256r1_sha256"), "{settings}");
        assert!(settings.contains("server: 1x key pair x25519"), "{settings}");
        let f = ops::handshake(&Params::default());
        assert_eq!(f.counts(Side::Server).iter().map(|(_, n)| n).sum::<usize>(), f.of(Side::Server).count());
    }
}

/// `B`'s [`Backend::seal_from`] (out of place on BoringSSL and on AWS-LC
/// under the `openssl` crate) leaves what copying the fragment and the type
/// and sealing in place leaves, and opens back to the fragment and type:
/// for each AEAD, records from empty to 16 KiB, into an empty and then a
/// used buffer.
fn check_seal_from<B: Backend>() {
    let name = B::name();
    let header = [CONTENT_APPLICATION_DATA, 3, 3, 0x40, 0x11];
    let mut out = Vec::new();
    for aead in Aead::ALL {
        let key_len = if aead == Aead::Aes128Gcm { 16 } else { 32 };
        let key: Vec<u8> = (0..key_len).map(|i| i * 3 + 1).collect();
        let key = B::aead_key(aead, &key).unwrap();
        for len in [0usize, 1, 15, 16, 17, 255, 16384] {
            let fragment: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let mut nonce = [7u8; 12];
            nonce[4..].copy_from_slice(&(len as u64).to_be_bytes());
            B::seal_from(&key, nonce, &header, &fragment, CONTENT_APPLICATION_DATA, &mut out).unwrap();
            let mut copied = fragment.clone();
            copied.push(CONTENT_APPLICATION_DATA);
            B::seal(&key, nonce, &header, &mut copied).unwrap();
            assert_eq!(out.len(), len + 1 + 16, "{name} {aead:?} {len}");
            assert!(out == copied, "{name} {aead:?} {len}: seal_from differs from copying and sealing");
            let n = B::open(&key, nonce, &header, &mut out).unwrap();
            assert_eq!(n, len + 1, "{name} {aead:?} {len}");
            assert!(out[..len] == fragment[..], "{name} {aead:?} {len}: another fragment opened");
            assert_eq!(out[len], CONTENT_APPLICATION_DATA, "{name} {aead:?} {len}");
        }
    }
}

#[test]
fn every_backend_seals_from_the_fragment_as_copying_then_sealing_does() {
    struct SealFrom;
    impl tls_bench_harness::libs::BackendVisitor for SealFrom {
        fn visit<B: Backend>(&mut self) {
            check_seal_from::<B>();
        }
    }
    // Every backend of this build's floors (none in GnuTLS's build).
    tls_bench_harness::libs::visit_floor_backends(&mut SealFrom);
}
