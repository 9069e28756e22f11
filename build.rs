//! Build script of the tools: exports the compiler's version, recorded
//! beside `compare`'s results. The harness's own build script
//! (crates/harness/build.rs) exports the TLS crates' versions, the cfgs of
//! their APIs and those of the AWS-LC backends' features; the benchmarks'
//! (benches/build.rs) gungraun's version. No code of this package
//! reads a backend's cfg.

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
}
