//! Build script of the tools: exports the locked version of gungraun (the
//! gungraun-runner the instruction counts need must match it) and the
//! compiler's version, recorded beside `compare`'s results. The harness's
//! own build script (crates/harness/build.rs) exports the TLS crates'
//! versions and the cfgs of their APIs. The AWS-LC backends' features
//! (`openssl-aws-lc`, `s2n-tls-fips`, `rustls-fips`) set the cfgs their
//! aws-lc-config files add to rustflags, here as in the harness.

use std::{env, fs, path::Path};

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let lock_path = Path::new(&manifest).join("Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock_path.display());
    let lock = fs::read_to_string(&lock_path).unwrap_or_default();
    let mut lines = lock.lines();
    let mut gungraun = "unknown".to_string();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"gungraun\""
            && let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = \""))
        {
            gungraun = v.trim_end_matches('"').to_string();
        }
    }
    println!("cargo::rustc-env=TLS_BENCH_GUNGRAUN_VERSION={gungraun}");
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
