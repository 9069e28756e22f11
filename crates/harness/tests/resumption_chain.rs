//! Resumption in a chain, each handshake resuming from the ticket the one
//! before received, as the benchmarks run it: every library of the build
//! resumes 300 times in a row at the sweep centre (with secp256r1 where it
//! has no x25519: a FIPS provider); a server that allows a
//! shorter chain (wolfSSL's, 255) names its limit, refuses the resumption
//! past it, and runs on when `Handshaker::renew_chain_if_due` starts a new
//! chain.

use tls_bench_harness::{
    harness::{ConfigureError, Configured, Handshaker},
    libs,
    params::{HandshakeKind, KxGroup, Params},
};

/// Longer than any limit a library names.
const CHAIN: u64 = 300;

#[test]
fn every_library_resumes_in_a_chain_past_its_servers_limit() {
    let centre = Params { kind: HandshakeKind::Resumption, ..Params::default() };
    for lib in libs::tls_libraries() {
        let name = lib.name();
        let (params, configured) = match lib.configure(&centre) {
            Ok(c) => (centre, c),
            Err(ConfigureError::Unsupported(why)) => {
                let params = Params { group: KxGroup::Secp256r1, ..centre };
                eprintln!("{name}: {why}; {params} instead");
                (params, lib.configure(&params).unwrap_or_else(|e| panic!("{name} {params}: {e}")))
            }
            Err(e) => panic!("{name}: {e}"),
        };
        let limit = configured.resumption_chain_limit();
        let configured: std::rc::Rc<dyn Configured> = configured.into();
        let mut h = Handshaker::from_configured(configured.clone(), configured.clone(), params)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for i in 0..CHAIN {
            h.handshake_checked().unwrap_or_else(|e| panic!("{name}, resumption {}: {e:#}", i + 1));
            h.renew_chain_if_due().unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
        // Without renewal, the server refuses the resumption past its limit.
        if let Some(limit) = limit {
            assert!(limit < CHAIN, "{name}: limit {limit}");
            let mut h = Handshaker::from_configured(configured.clone(), configured, params).unwrap();
            for i in 0..limit {
                h.handshake_checked().unwrap_or_else(|e| panic!("{name}, resumption {}: {e:#}", i + 1));
            }
            let past = h.handshake_checked().err().unwrap_or_else(|| panic!("{name}: resumed past {limit}"));
            assert!(format!("{past:#}").contains("nonce overflow"), "{name}: {past:#}");
        }
    }
}
