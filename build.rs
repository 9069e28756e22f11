//! Build script: exports the resolved versions of the Rust TLS crates (from
//! Cargo.lock) so benchmark ids can name them, and turns OpenSSL's version
//! number (exported by openssl-sys as DEP_OPENSSL_VERSION_NUMBER) into cfgs
//! that select the negotiated-group API (`ossl300`, `ossl320`; `openssl_awslc` when
//! openssl-sys links AWS-LC).

use std::{env, fs, path::Path};

/// Version of `crate_name` in the lock file, or "unknown" if it is not there
/// exactly once.
fn locked_version(lock: &str, crate_name: &str) -> String {
    let mut found = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{crate_name}\"")
            && let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = \""))
        {
            found.push(v.trim_end_matches('"').to_string());
        }
    }
    match found.as_slice() {
        [one] => one.clone(),
        _ => "unknown".to_string(),
    }
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(ossl300)");
    println!("cargo::rustc-check-cfg=cfg(ossl320)");
    println!("cargo::rustc-check-cfg=cfg(openssl_awslc)");
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // The lock file of the workspace this package is built in.
    let lock_path = Path::new(&manifest).join("Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock_path.display());
    let lock = fs::read_to_string(&lock_path).unwrap_or_default();
    for (krate, var) in [
        ("rustls", "TLS_BENCH_RUSTLS_VERSION"),
        ("s2n-tls", "TLS_BENCH_S2N_TLS_VERSION"),
        ("boring", "TLS_BENCH_BORING_VERSION"),
    ] {
        println!("cargo::rustc-env={var}={}", locked_version(&lock, krate));
    }
    // openssl-sys on AWS-LC (feature `aws-lc`) exports DEP_OPENSSL_AWSLC.
    if env::var_os("DEP_OPENSSL_AWSLC").is_some() {
        println!("cargo::rustc-cfg=openssl_awslc");
    }
    if let Ok(hex) = env::var("DEP_OPENSSL_VERSION_NUMBER") {
        let number = u64::from_str_radix(&hex, 16).expect("openssl-sys exports a hex version");
        if number >= 0x3000_0000 {
            println!("cargo::rustc-cfg=ossl300");
        }
        if number >= 0x3020_0000 {
            println!("cargo::rustc-cfg=ossl320");
        }
    }
}
