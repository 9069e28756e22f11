//! The wire reader ([`tls_bench_harness::wire`]) against the libraries' own
//! reports: for every library and parameter set of the full matrix, the
//! group, resumption and version read from the server's first flight equal
//! what the server says it negotiated. historical-perf relies on the reader
//! for rustls 0.20 and 0.21, which cannot report these values.

use tls_bench_harness::{
    harness::{ConfigureError, Handshaker, SideTimes},
    libs,
    params::{HandshakeKind, Params, Protocol},
    transport::{Duplex, Side},
    wire,
};

#[test]
fn the_server_flight_says_what_the_server_negotiated() {
    let mut checked = 0;
    // One cipher suite per (kind, version, group, chain): the suite does not
    // change what is read.
    let mut params: Vec<Params> = Vec::new();
    for p in Params::full_matrix() {
        let same =
            |q: &Params| (q.kind, q.protocol(), q.group, q.cert) == (p.kind, p.protocol(), p.group, p.cert);
        if !params.iter().any(same) {
            params.push(p);
        }
    }
    for lib in libs::tls_libraries() {
        for &p in &params {
            let mut h = match Handshaker::new(lib.as_ref(), lib.as_ref(), p) {
                Ok(h) => h,
                Err(ConfigureError::Unsupported(_)) => continue,
                Err(e) => panic!("{p}/{}: {e}", lib.name()),
            };
            // A resumption twice: it also resumes from a ticket of a resumed handshake.
            let runs = if p.kind == HandshakeKind::Resumption { 2 } else { 1 };
            for _ in 0..runs {
                let duplex = Duplex::new();
                duplex.start_capture();
                let pair = h
                    .run_on(duplex, &mut SideTimes::default())
                    .unwrap_or_else(|e| panic!("{p}/{}: {e:#}", lib.name()))
                    .pair;
                let from_server: Vec<u8> = pair
                    .duplex
                    .take_capture()
                    .into_iter()
                    .filter(|w| w.from == Side::Server)
                    .flat_map(|w| w.bytes)
                    .collect();
                pair.check(&p).unwrap_or_else(|e| panic!("{p}/{}: {e:#}", lib.name()));
                let said = pair.server.negotiated().unwrap();
                let seen =
                    wire::server_flight(&from_server).unwrap_or_else(|e| panic!("{p}/{}: {e:#}", lib.name()));
                let id = format!("{p}/{}", lib.name());
                assert_eq!(seen.tls13, said.protocol == Protocol::Tls13, "{id}");
                assert_eq!(seen.resumed, said.resumed, "{id}");
                if said.protocol == Protocol::Tls13 || !said.resumed {
                    assert_eq!(seen.group, said.group.map(|g| g.iana_code()), "{id}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}
