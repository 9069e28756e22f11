//! Build script of the benchmarks: exports the locked version of gungraun
//! (the gungraun-runner the instruction counts need must match it), and the
//! cfgs of the AWS-LC backends' features (`openssl-aws-lc`, `s2n-tls-fips`,
//! `rustls-fips`), which their aws-lc-config files add to rustflags, here as
//! in the harness (crates/harness/build.rs, which also exports the TLS
//! crates' versions).

use std::{env, fs, path::Path};

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // The workspace's lock file, two folders up (historical-perf's generated
    // builds keep the same layout).
    let lock_path = Path::new(&manifest).join("../Cargo.lock");
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
