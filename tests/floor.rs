//! The plaintext floor moves what the TLS handshake it replays moved, and
//! the transport's counters see real TLS records.

#![cfg(feature = "plaintext")]

use tls_bench_harness::{
    harness::Handshaker,
    libs,
    params::{HandshakeKind, Params},
    transport::Side,
};

#[test]
fn plaintext_handshake_moves_the_same_bytes_records_and_writes() {
    let floor = libs::plaintext();
    for kind in HandshakeKind::ALL {
        let p = Params { kind, ..Params::default() };
        let source = floor.source_for(&p).unwrap();
        let reference = libs::tls_libraries().into_iter().find(|l| l.name() == source).unwrap();
        let mut real = Handshaker::new(reference.as_ref(), reference.as_ref(), p).unwrap();
        let mut plain = Handshaker::new(&floor, &floor, p).unwrap();
        let (real_pair, _) = real.handshake_checked().unwrap();
        let (plain_pair, _) = plain.handshake_checked().unwrap();
        for side in [Side::Client, Side::Server] {
            let (r, f) = (real_pair.duplex.stats(side), plain_pair.duplex.stats(side));
            // The same flights; bytes can differ by a few for variable-length
            // fields (ECDSA signatures), so compare writes and records exactly.
            assert_eq!(r.writes, f.writes, "{p} {side:?}");
            assert_eq!(r.records, f.records, "{p} {side:?}");
            let diff = r.bytes.abs_diff(f.bytes);
            assert!(diff <= 16, "{p} {side:?}: {} vs {} bytes", r.bytes, f.bytes);
            assert!(r.records >= 1 && r.bytes > 100);
        }
    }
}

#[test]
fn tls13_records_are_counted_on_the_wire() {
    for lib in libs::tls_libraries() {
        let mut h = Handshaker::new(lib.as_ref(), lib.as_ref(), Params::default()).unwrap();
        let (mut pair, _) = h.handshake_checked().unwrap();
        pair.duplex.reset_stats();
        let data = vec![7u8; 16384 * 4];
        let mut scratch = Vec::new();
        pair.transfer(Side::Server, &data, 16384, &mut scratch).unwrap();
        let s = pair.duplex.stats(Side::Server);
        // 4 full records of 16384 bytes + 1 content type byte + 16 byte tag
        // + 5 byte header each (RFC 8446 section 5.2).
        assert_eq!(s.records, 4, "{}", lib.name());
        assert_eq!(s.application_data_records, 4, "{}", lib.name());
        assert_eq!(s.bytes, 4 * (16384 + 1 + 16 + 5), "{}", lib.name());
        assert_eq!(pair.duplex.stats(Side::Client).bytes, 0, "{}", lib.name());
    }
}
