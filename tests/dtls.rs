//! DTLS for every library of this build: each DTLS handshake of the
//! benchmark once (checked by the runner), the send loop once at each
//! payload (one datagram per write, its size against RFC 6347's record
//! overhead), the named skips of libraries without DTLS, the MTU, and the
//! loud failures a lost or reordered datagram must give.

use tls_bench_harness::{
    bench::{Case, SEND_LOOP_PAYLOADS, Workload, dtls_handshake_params, send_loop_params},
    harness::{ConfigureError, Handshaker, SideTimes, TlsLibrary},
    libs,
    params::{Aead, HandshakeKind, Params, Protocol},
    runner::{Prepared, prepare},
    transport::{IPV4_UDP_HEADERS, Side},
    workload::{
        SendLoop, pattern,
        send_loop::{SEND_LOOP_SENDER, SEND_LOOP_WRITES},
        udp::socket as udp,
    },
    writes::record_overhead,
};

/// The DTLS versions the library of `name` offers, as its registry entry
/// states ([`libs::offers`]); none for the plaintext floor.
fn dtls_offered(name: &str) -> &'static [Protocol] {
    libs::offers(name).map_or(&[], |o| o.dtls)
}

fn expected(name: &str, params: &Params) -> bool {
    !params.datagram || dtls_offered(name).contains(&params.protocol())
}

/// Runs `case` once; `Err(reason)` when its library skips it.
fn run_once(case: &Case, libs: &[Box<dyn TlsLibrary>]) -> Result<(), String> {
    match prepare(case, libs).unwrap_or_else(|e| panic!("{case}: {e:#}")) {
        Prepared::Ready { mut runner, .. } => {
            runner.run(2).unwrap_or_else(|e| panic!("{case}: {e:#}"));
            Ok(())
        }
        Prepared::Skipped(why) => Err(why),
    }
}

/// A library without DTLS says so; one without this version names the
/// version (`no DTLS 1.3`, or wolfSSL's reason about its DTLS 1.2 server).
fn check_skip(name: &str, params: &Params, why: &str) {
    let wanted = if dtls_offered(name).is_empty() {
        "no DTLS (TLS over a byte stream only)"
    } else if params.protocol() == Protocol::Dtls13 {
        "DTLS 1.3"
    } else {
        "DTLS 1.2"
    };
    assert!(why.contains(wanted), "{name} {params}: {why}");
}

#[test]
fn every_dtls_handshake_runs_or_is_a_named_skip() {
    let libs = libs::all();
    for lib in &libs {
        let name = lib.name();
        for params in dtls_handshake_params() {
            let case = Case { workload: Workload::HANDSHAKE, params, library: name.clone() };
            match run_once(&case, &libs) {
                Ok(()) => assert!(expected(&name, &params), "{case} ran: {name} has no such DTLS"),
                Err(why) => {
                    eprintln!("skip {case}: {why}");
                    assert!(!expected(&name, &params), "{case} skipped: {why}");
                    check_skip(&name, &params, &why);
                }
            }
        }
    }
}

#[test]
fn the_send_loop_sends_one_datagram_per_write_of_the_rfc_size() {
    let libs = libs::all();
    for lib in &libs {
        let name = lib.name();
        for params in send_loop_params() {
            for payload in SEND_LOOP_PAYLOADS {
                let case = Case { workload: SendLoop { payload }.into(), params, library: name.clone() };
                if let Err(why) = run_once(&case, &libs) {
                    assert!(!expected(&name, &params) || name.starts_with("s2n"), "{case}: {why}");
                    continue;
                }
                if !params.datagram {
                    continue;
                }
                // The sizes on the wire, from a pair of our own.
                let mut hs = Handshaker::new(lib.as_ref(), lib.as_ref(), params).unwrap();
                let (mut pair, _) = hs.handshake_checked().unwrap();
                let data = pattern(payload * 8);
                let mut scratch = vec![0; data.len()];
                let before = pair.duplex.stats(SEND_LOOP_SENDER);
                pair.send_loop(SEND_LOOP_SENDER, &data, payload, &mut scratch).unwrap();
                let after = pair.duplex.stats(SEND_LOOP_SENDER);
                assert_eq!(after.datagrams - before.datagrams, 8, "{case}");
                assert_eq!(after.records - before.records, 8, "{case}");
                if let Some(overhead) = record_overhead(params.protocol(), params.suite.aead()) {
                    assert_eq!(after.bytes - before.bytes, (8 * (payload + overhead)) as u64, "{case}");
                }
            }
        }
    }
}

/// A DTLS 1.2 library of this build, if any.
fn dtls_library() -> Option<Box<dyn TlsLibrary>> {
    libs::all().into_iter().find(|l| dtls_offered(&l.name()).contains(&Protocol::Dtls12))
}

fn dtls12() -> Params {
    send_loop_params()[0]
}

#[test]
fn a_small_mtu_fragments_the_handshake_and_refuses_larger_writes() {
    let Some(lib) = dtls_library() else { return };
    for kind in HandshakeKind::ALL {
        let params = Params { kind, ..dtls12() };
        let mut hs = Handshaker::new(lib.as_ref(), lib.as_ref(), params).unwrap();
        hs.set_mtu(576).unwrap();
        let (mut pair, _) = hs.handshake_checked().unwrap();
        let data = pattern(256 * 4);
        let mut scratch = vec![0; data.len()];
        pair.send_loop(Side::Client, &data, 256, &mut scratch).unwrap();
        // A write larger than the datagram is an error, never a silent
        // split into several datagrams.
        let big = pattern(1400);
        let mut times = SideTimes::default();
        assert!(pair.send_writes(Side::Client, &big, 1400, &mut times).is_err(), "{params}");
    }
    let mut hs = Handshaker::new(lib.as_ref(), lib.as_ref(), dtls12()).unwrap();
    assert!(hs.set_mtu(100).is_err());
    assert_eq!(hs.duplex().unwrap().max_datagram(), Some(1500 - IPV4_UDP_HEADERS));
}

#[test]
fn a_lost_or_reordered_datagram_fails_loudly() {
    let Some(lib) = dtls_library() else { return };
    let mut hs = Handshaker::new(lib.as_ref(), lib.as_ref(), dtls12()).unwrap();
    let data = pattern(1024 * 8);
    let mut scratch = vec![0; data.len()];
    let mut times = SideTimes::default();
    for (index, swap, wanted) in [(3, None, "no more queued (lost)"), (2, Some(5), "out of order")] {
        let (mut pair, _) = hs.handshake_checked().unwrap();
        pair.send_writes(Side::Client, &data, 1024, &mut times).unwrap();
        assert!(pair.duplex.tamper(Side::Server, index, swap));
        let e = pair.receive_writes(Side::Server, &data, 1024, &mut scratch, &mut times).unwrap_err();
        assert!(format!("{e:#}").contains(wanted), "{e:#}");
    }
}

#[test]
fn libraries_without_dtls_refuse_it_by_name() {
    for lib in libs::all() {
        let name = lib.name();
        let params = Params { ..dtls12() };
        match Handshaker::new(lib.as_ref(), lib.as_ref(), params) {
            Ok(_) => assert!(dtls_offered(&name).contains(&Protocol::Dtls12), "{name}"),
            Err(ConfigureError::Unsupported(why)) => {
                assert!(!dtls_offered(&name).contains(&Protocol::Dtls12), "{name}: {why}");
                check_skip(&name, &params, &why);
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    assert_eq!(dtls12().suite.aead(), Aead::Aes128Gcm);
}

#[test]
fn over_udp_handshakes_run_and_the_send_loop_counts_every_write() {
    use tls_bench_harness::transport::DEFAULT_MTU;
    for lib in libs::all() {
        let name = lib.name();
        for params in
            send_loop_params().into_iter().filter(|p| p.datagram && p.suite.aead() == Aead::Aes128Gcm)
        {
            if !expected(&name, &params) {
                continue;
            }
            for kind in [HandshakeKind::ServerAuth, HandshakeKind::MutualAuth] {
                let p = Params { kind, ..params };
                let m =
                    udp::handshakes(&name, p, DEFAULT_MTU, 2).unwrap_or_else(|e| panic!("{name} {p}: {e:#}"));
                assert_eq!(m.iters, 2);
                assert!(m.both >= m.sides.client.max(m.sides.server), "{name} {p}: {m:?}");
            }
            let m = udp::send_loop(&name, params, 1024, DEFAULT_MTU, 3)
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            let l = m.losses.expect("the send loop counts its writes");
            assert_eq!(l.sent, 3 * SEND_LOOP_WRITES as u64, "{name} {params}");
            assert_eq!(l.received + l.lost, l.sent, "{name} {params}: {l:?}");
            assert!(l.received > 0, "{name} {params}: {l:?}");
        }
    }
    let resumption = Params { kind: HandshakeKind::Resumption, ..dtls12() };
    assert!(udp::supports(&resumption).unwrap_err().contains("resumption"));
    assert!(
        udp::send_loop("openssl-0", dtls12(), 2, DEFAULT_MTU, 1).unwrap_err().to_string().contains("4-byte")
    );
}

/// Issue 23: a write larger than a datagram of the MTU carries is a named
/// skip decided before any handshake, naming the payload, the MTU and the
/// smallest MTU that fits; and should a library still hand the transport a
/// datagram over the size, the transport's own message comes back, not a
/// library's "unexpected EOF".
#[test]
fn a_write_larger_than_the_mtu_carries_is_a_named_skip_and_the_transport_error_reaches_the_user() {
    use tls_bench_harness::{
        transport::DEFAULT_MTU,
        workload::{Kind, Udp},
        writes::{check_datagram_payload, max_datagram_payload, min_mtu_for},
    };
    // The sizes: RFC 6347's 13-byte header, 8-byte explicit nonce and
    // 16-byte tag; RFC 9147's longest unified header, content type and tag.
    assert_eq!(max_datagram_payload(DEFAULT_MTU, Protocol::Dtls12, Aead::Aes128Gcm), Some(1435));
    assert_eq!(max_datagram_payload(DEFAULT_MTU, Protocol::Dtls12, Aead::Chacha20Poly1305), Some(1443));
    assert_eq!(max_datagram_payload(DEFAULT_MTU, Protocol::Dtls13, Aead::Aes256Gcm), Some(1450));
    assert_eq!(max_datagram_payload(600, Protocol::Dtls12, Aead::Aes128Gcm), Some(535));
    assert_eq!(min_mtu_for(1024, Protocol::Dtls12, Aead::Aes128Gcm), Some(1089));
    assert_eq!(max_datagram_payload(DEFAULT_MTU, Protocol::Tls12, Aead::Aes128Gcm), None);
    assert!(check_datagram_payload(1435, DEFAULT_MTU, Protocol::Dtls12, Aead::Aes128Gcm).is_ok());
    let why = check_datagram_payload(1024, 600, Protocol::Dtls12, Aead::Aes128Gcm).unwrap_err();
    for wanted in ["1024-byte", "MTU 600", "at most 535", "smallest MTU that fits 1024 bytes is 1089"] {
        assert!(why.contains(wanted), "{wanted:?} not in {why}");
    }
    let why = check_datagram_payload(70000, 600, Protocol::Dtls13, Aead::Aes128Gcm).unwrap_err();
    assert!(why.contains("no MTU up to 65535"), "{why}");
    // Every send loop of the matrix, in memory and over UDP, at MTU 600:
    // the DTLS ones do not fit, the TLS ones do.
    for params in send_loop_params() {
        for payload in SEND_LOOP_PAYLOADS {
            let fits = payload <= 535 || !params.datagram;
            let kind = SendLoop { payload };
            assert_eq!(kind.fits_mtu(&params, 600).is_ok(), fits, "{params} {payload}");
            assert_eq!(Udp(kind).fits_mtu(&params, 600).is_ok(), fits, "{params} {payload}");
            assert!(
                kind.fits_mtu(
                    &params,
                    min_mtu_for(payload, params.protocol(), params.suite.aead()).unwrap_or(DEFAULT_MTU)
                )
                .is_ok()
            );
        }
    }
    // The library under the check: the transport refuses the datagram, and
    // its message is the error.
    let Some(lib) = dtls_library() else { return };
    let mut hs = Handshaker::new(lib.as_ref(), lib.as_ref(), dtls12()).unwrap();
    hs.set_mtu(600).unwrap();
    let (mut pair, _) = hs.handshake_checked().unwrap();
    let big = pattern(1024);
    let mut times = SideTimes::default();
    let e = format!("{:#}", pair.send_writes(Side::Client, &big, 1024, &mut times).unwrap_err());
    // GnuTLS knows its MTU and refuses the write itself; OpenSSL writes the
    // datagram, which the transport refuses.
    let refused = e.contains("exceeds the largest of 572 (MTU 600)") && !e.contains("unexpected EOF");
    // Mbed TLS knows its MTU and refuses the write itself.
    let mbedtls = e.contains("exceeds the largest record payload of") && e.contains("at most 572 bytes");
    assert!(refused || mbedtls || e.contains("packet is too large (EMSGSIZE)"), "{e}");
}
