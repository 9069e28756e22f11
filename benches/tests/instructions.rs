//! The instruction counts count what they say: `run-case` under Callgrind
//! with each region's options ([`Counted::callgrind_args`]) counts only the
//! measured iterations (two iterations count twice one: configuration and
//! warm-up are outside), the whole handshake holds both sides' calls, and a
//! transfer's two sides add up to its both-sides figure. Needs valgrind
//! (`apt-get install valgrind`); fails without it.

#[path = "../../tests/common/support.rs"]
mod common;

use std::process::Command;

use tls_bench_harness::{
    bench::{Case, Figure, Workload},
    callgrind::GLIBC_TUNABLES,
    instructions::Counted,
    libs,
    params::Params,
    runner::{Prepared, prepare},
    workload::Throughput,
};

/// The TLS libraries of this build that can do `workload` at the sweep
/// centre (a FIPS build's rustls has no x25519, for one).
fn able(workload: Workload) -> Vec<String> {
    let libs = libs::tls_libraries();
    libs.iter()
        .map(|l| l.name())
        .filter(|name| {
            let case = Case { workload, params: Params::default(), library: name.clone() };
            matches!(prepare(&case, &libs).unwrap(), Prepared::Ready { .. })
        })
        .collect()
}

/// Instructions Callgrind collected running `counted` (its `Collected :`
/// line). Panics when valgrind is missing or `run-case` fails.
fn count(counted: &Counted) -> u64 {
    let dir = common::scratch("instructions", &counted.gungraun_id());
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", dir.join("callgrind.out").display()))
        .args(counted.callgrind_args())
        .arg(env!("CARGO_BIN_EXE_run-case"))
        .args(counted.run_case_args())
        .env("GLIBC_TUNABLES", GLIBC_TUNABLES)
        .output()
        .unwrap_or_else(|e| panic!("running valgrind ({e}): install it, e.g. `apt-get install valgrind`"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", counted.id());
    let line = stderr.lines().find(|l| l.contains("Collected :")).unwrap_or_else(|| panic!("{stderr}"));
    line.rsplit(':').next().unwrap().trim().parse().unwrap()
}

fn counted(workload: Workload, library: &str, figure: Figure, iterations: u64) -> Counted {
    let case = Case { workload, params: Params::default(), library: library.to_string() };
    Counted { case, figure, iterations }
}

/// `a` is within `pct` percent of `b`.
fn close(a: u64, b: u64, pct: f64) -> bool {
    (a as f64 - b as f64).abs() <= b as f64 * pct / 100.0
}

#[test]
fn handshake_counts_hold_only_the_measured_handshakes_and_both_sides() {
    let libs: Vec<String> =
        able(Workload::HANDSHAKE).into_iter().filter(|n| n.contains("rustls") || n.contains("s2n")).collect();
    // What this checks is the harness's (regions toggled only in counted
    // iterations), on libraries whose counts are linear in handshakes: a
    // build with neither (the system-OpenSSL and BoringSSL variants) leaves
    // it to the default build's run.
    if libs.is_empty() {
        if cfg!(any(feature = "rustls", feature = "s2n-tls")) {
            panic!("rustls or s2n-tls is built but cannot do the sweep centre");
        }
        eprintln!("no rustls nor s2n-tls in this build: nothing to count");
        return;
    }
    for lib in &libs {
        let n = |figure, iterations| count(&counted(Workload::HANDSHAKE, lib, figure, iterations));
        let (client, server, whole) = (n(Figure::First, 1), n(Figure::Second, 1), n(Figure::Both, 1));
        assert!(client > 100_000 && server > 100_000, "{lib}: client {client}, server {server}");
        // Setup (configuration, certificates, the warm-up handshake) costs
        // more than a handshake: were it counted, two would not cost twice one.
        let client_twice = n(Figure::First, 2);
        assert!(
            close(client_twice, 2 * client, 2.0),
            "{lib}: 2 handshakes {client_twice}, 1 handshake {client}"
        );
        // The whole handshake: both sides' calls and the harness between them
        // (a few thousand instructions; one handshake's count moves by up to
        // 0.7% from run to run, so the sides of other runs can add up to more).
        assert!(close(whole, client + server, 2.0), "{lib}: {whole} vs {client} + {server}");
    }
}

#[test]
fn transfer_sides_add_up_to_the_transfer() {
    let lib = able(Throughput { write_size: 16384 }.into()).into_iter().next().expect("no library can");
    let n = |figure| count(&counted(Throughput { write_size: 16384 }.into(), &lib, figure, 1));
    let (send, recv, both) = (n(Figure::First), n(Figure::Second), n(Figure::Both));
    // AES-GCM costs at least an instruction per byte each way.
    assert!(send > 65_536 && recv > 65_536, "{lib}: send {send}, receive {recv}");
    assert!(close(both, send + recv, 0.5), "{lib}: both {both} vs {send} + {recv}");
}
