//! `crypto-floor count` at the sweep centre: every library of this build
//! with a crypto floor calls each primitive as often as the operation
//! table says (HMACs at least as often), and every floor executes fewer
//! instructions than its library on each side (Callgrind: instruction
//! counts do not move with the machine's load, so this holds on a busy
//! machine too). Needs valgrind (`apt-get install valgrind`); fails
//! without it.

#![cfg(feature = "tools")]

use std::process::Command;

use tls_bench_harness::libs;

fn crypto_floor(args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_crypto-floor")).args(args).output().expect("running crypto-floor");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_floor_is_below_its_library_and_the_counts_agree_at_the_sweep_centre() {
    let (ok, stdout, stderr) = crypto_floor(&["count"]);
    if libs::crypto_floors().is_empty() {
        // A build whose libraries have no floor (the plaintext floor alone): the count
        // fails, naming each library it could not count.
        assert!(!ok && stderr.contains("no library of this build can be counted"), "{stdout}\n{stderr}");
        for lib in libs::tls_libraries() {
            let wanted = format!("not counted: {} (no crypto floor in this build)", lib.name());
            assert!(stderr.contains(&wanted), "{stderr}");
        }
        return;
    }
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("Every count agrees with the operation table"), "{stdout}");
    let floors: Vec<String> = libs::crypto_floors().iter().map(|f| f.name()).collect();
    let mut counted = 0;
    for lib in libs::all() {
        let Some(floor) = lib.crypto_floor().filter(|f| floors.contains(f)) else { continue };
        if stderr.contains(&format!("not counted: {}", lib.name())) {
            continue;
        }
        for side in ["client", "server"] {
            let row = stdout
                .lines()
                .find(|l| l.starts_with(&format!("| {} | {side} |", lib.name())))
                .unwrap_or_else(|| panic!("no {side} row for {}:\n{stdout}", lib.name()));
            // `| library | side | calls | instructions | floor's | floor / library |`
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let ratio: f64 = cells[6].parse().unwrap_or_else(|_| panic!("{row}"));
            assert!(ratio > 0.0 && ratio < 1.0, "{floor} / {}: {row}", lib.name());
        }
        counted += 1;
    }
    assert!(counted > 0, "no library was counted:\n{stdout}\n{stderr}");
}

#[test]
fn a_bad_parameter_set_or_library_is_an_error_naming_it() {
    let (ok, _, stderr) = crypto_floor(&["count", "--parameters", "server-auth,TLSv1.9"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --parameters \"server-auth,TLSv1.9\": not a handshake of the sweep"),
        "{stderr}"
    );
    let (ok, _, stderr) = crypto_floor(&["count", "--library", "no-such-tls"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: --library: unknown library \"no-such-tls\"; this build has: "),
        "{stderr}"
    );
}
