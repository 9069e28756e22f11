//! The build variants as the scripts meet them (`./bench-all.sh` runs
//! `variants bench`, `memory/bench-memory.sh` runs `memory variants`): bad
//! input is refused before any variant runs. (CI runs both over every
//! variant.)

use std::process::Command;

use tls_bench::variants::{Scope, VARIANTS};

/// Runs `exe` with `args` and `TLS_BENCH_VARIANTS` set to `picked` (unset
/// for `None`): (exit code, stderr).
fn run(exe: &str, args: &[&str], picked: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    match picked {
        Some(v) => cmd.env("TLS_BENCH_VARIANTS", v),
        None => cmd.env_remove("TLS_BENCH_VARIANTS"),
    };
    let out = cmd.output().expect("running the binary");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into())
}

const VARIANTS_BIN: &str = env!("CARGO_BIN_EXE_variants");
const MEMORY_BIN: &str = env!("CARGO_BIN_EXE_memory");

#[test]
fn an_unknown_variant_stops_bench_before_any_variant_runs() {
    let (code, err) = run(VARIANTS_BIN, &["bench", "--", "--test"], Some("default boringsl"));
    assert_eq!(code, Some(1), "{err}");
    let valid = tls_bench::variants::names(Scope::Every).join(" ");
    assert!(err.contains(&format!("unknown variant \"boringsl\"; valid: {valid}")), "{err}");
    assert!(!err.contains("=== variant"), "a variant ran: {err}");
}

#[test]
fn the_list_is_the_table() {
    let out = Command::new(VARIANTS_BIN).arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = text.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(names, VARIANTS.iter().map(|v| v.name).collect::<Vec<_>>());
    let compare_only = VARIANTS.iter().filter(|v| v.scope == Scope::CompareOnly).count();
    assert_eq!(text.matches("[compare only]").count(), compare_only);
}

#[test]
fn update_committed_refuses_a_partial_memory_run_before_any_work() {
    for (args, picked) in [
        (&["variants", "--update-committed", "--quick"][..], None),
        (&["variants", "--libraries", "plaintext", "--update-committed"][..], None),
        (&["variants", "--update-committed", "-n", "5"][..], None),
        (&["variants", "--update-committed"][..], Some("default")),
    ] {
        let (code, err) = run(MEMORY_BIN, args, picked);
        assert_eq!(code, Some(2), "{args:?} {picked:?}: {err}");
        assert!(err.contains("needs a complete run") && err.contains("refused for: "), "{err}");
        assert!(!err.contains("=== memory"), "a variant ran: {err}");
    }
    let (code, err) = run(MEMORY_BIN, &["variants", "--quick"], Some("nonesuch"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("unknown variant \"nonesuch\"") && !err.contains("=== memory"), "{err}");
}

#[test]
fn memory_variants_help_is_the_scripts_usage() {
    let out = Command::new(MEMORY_BIN).args(["variants", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for part in ["memory/bench-memory.sh --update-committed", "--quick", "TLS_BENCH_VARIANTS", "--libraries"]
    {
        assert!(help.contains(part), "{part} missing:\n{help}");
    }
}
