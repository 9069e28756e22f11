//! The build variants as the scripts meet them (`scripts/bench-all.sh` runs
//! `variants bench`): bad input is refused before any variant runs. (CI runs
//! it over every variant; `memory variants`, which `memory/bench-memory.sh`
//! runs, is in benches/tests/memory_cli.rs.)

mod common;

use std::process::Command;

use tls_bench::variants::{Scope, VARIANTS};

const VARIANTS_BIN: &str = env!("CARGO_BIN_EXE_variants");

#[test]
fn an_unknown_variant_stops_bench_before_any_variant_runs() {
    let (code, err) = common::run_picking(VARIANTS_BIN, &["bench", "--", "--test"], Some("default boringsl"));
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

/// The packages `cargo tree` resolves for the root package and the
/// benchmarks' (benches, with criterion and gungraun) with `args`,
/// each as `name version (source) features` (its enabled features), but
/// for the workspace's own packages (whose features name the switch):
/// sorted, once each. `RUSTFLAGS` is dropped (it would override the
/// aws-lc-config files' `build.rustflags`).
fn resolved(args: &[&str]) -> Vec<String> {
    // The default variant's cargo: in the repository, without the
    // environment `cargo test` set, and no arguments of its own.
    let default = tls_bench::variants::find("default").expect("the default variant");
    let packages = ["-p", "tls-bench-tools", "-p", "tls-bench"];
    let mut cmd =
        default.cargo(&[&["tree"][..], &packages, &["--prefix", "none", "--format", "{p} {f}"]].concat());
    cmd.env_remove("RUSTFLAGS").args(args);
    let out = cmd.output().expect("running cargo tree");
    assert!(out.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("tls-bench"))
        .map(|l| l.trim_end_matches(" (*)").to_string())
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

/// Each AWS-LC backend's feature (`--features openssl-aws-lc` ...) resolves
/// every dependency with the same features as its aws-lc-config file
/// (rustflags `--cfg`, Cargo.toml's target tables), alone and all three
/// together: CI builds and tests the features, so the files build the same
/// stacks. The backend's own dependency feature is checked to be on, so
/// the comparison is not between two builds that switch nothing.
#[test]
fn each_aws_lc_config_file_resolves_as_its_feature() {
    let cases = [
        (&["openssl"][..], &["openssl-aws-lc"][..], "openssl-sys v", "aws-lc"),
        (&["s2n-tls"], &["s2n-tls-fips"], "s2n-tls v", "fips"),
        (&["rustls"], &["rustls-fips"], "rustls v", "fips"),
        (
            &["openssl", "s2n-tls", "rustls"],
            &["openssl-aws-lc", "s2n-tls-fips", "rustls-fips"],
            "aws-lc-fips-sys v",
            "",
        ),
    ];
    let files = [("openssl-aws-lc", "openssl"), ("s2n-tls-fips", "s2n"), ("rustls-fips", "rustls")];
    for (libraries, backends, package, feature) in cases {
        let mut by_files = Vec::new();
        for backend in backends {
            let file = files.iter().find(|(b, _)| b == backend).unwrap().1;
            by_files.extend(["--config".to_string(), format!("aws-lc-config/{file}.toml")]);
        }
        by_files.extend([
            "--no-default-features".into(),
            "--features".into(),
            [libraries, &["tools"]].concat().join(","),
        ]);
        let by_files = resolved(&by_files.iter().map(String::as_str).collect::<Vec<_>>());
        let by_features = [backends, &["tools"]].concat().join(",");
        let by_features = resolved(&["--no-default-features", "--features", &by_features]);
        assert_eq!(by_files, by_features, "{backends:?}");
        let switched = by_features.iter().find(|l| l.starts_with(package));
        assert!(
            switched.is_some_and(|l| l
                .rsplit(' ')
                .next()
                .unwrap()
                .split(',')
                .any(|f| f == feature || feature.is_empty())),
            "{backends:?}: {package} without {feature:?}: {switched:?}"
        );
    }
}

/// Every variant and the AWS-LC backends' features resolve syn, on which
/// every proc-macro is built, with the default build's features (Cargo.toml's
/// pins): otherwise such a build compiles syn, every proc-macro and every
/// crate above them (serde, tokio, clap, Criterion ...) a second time.
#[test]
fn every_build_resolves_syn_as_the_default_build_does() {
    let syn = |lines: Vec<String>| lines.into_iter().filter(|l| l.starts_with("syn v")).collect::<Vec<_>>();
    let default = syn(resolved(&[]));
    assert_eq!(default.len(), 2, "syn 2 and 3: {default:?}");
    for features in ["openssl,tools", "boring,tools", "openssl-aws-lc,s2n-tls-fips,rustls-fips,tools"] {
        assert_eq!(syn(resolved(&["--no-default-features", "--features", features])), default, "{features}");
    }
}
