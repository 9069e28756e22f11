//! Build script of the tools: exports the compiler's version, recorded
//! beside `compare`'s results. The harness's own build script
//! (crates/harness/build.rs) exports the TLS crates' versions and the cfgs
//! of their APIs; the benchmarks' (crates/benches/build.rs) gungraun's
//! version. The AWS-LC backends' features
//! (`openssl-aws-lc`, `s2n-tls-fips`, `rustls-fips`) set the cfgs their
//! aws-lc-config files add to rustflags, here as in the harness.

use std::env;

fn main() {
    // A new compiler rebuilds every package anyway.
    println!("cargo::rerun-if-changed=build.rs");
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".to_string(), |v| v.trim().to_string());
    println!("cargo::rustc-env=TLS_BENCH_RUSTC_VERSION={version}");
    for (feature, cfg) in [
        ("OPENSSL_AWS_LC", "tls_bench_openssl_aws_lc"),
        ("S2N_TLS_FIPS", "tls_bench_s2n_fips"),
        ("RUSTLS_FIPS", "tls_bench_rustls_fips"),
    ] {
        if env::var_os(format!("CARGO_FEATURE_{feature}")).is_some() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
