//! Build script: exports the resolved versions of the Rust TLS crates (from
//! the workspace's Cargo.lock) so benchmark ids can name them, and turns OpenSSL's version
//! number (exported by openssl-sys as DEP_OPENSSL_VERSION_NUMBER) into cfgs
//! that select the negotiated-group API (`ossl300`, `ossl320`; `openssl_awslc` when
//! openssl-sys links AWS-LC), and marks s2n-tls releases older than the
//! negotiated-group getters the s2n-tls stack uses (`s2n_no_kx_group_getter`,
//! `s2n_no_kem_group_getter`, `s2n_no_curve_getter`) or older than the API it
//! is written against (`s2n_raw_api`), and says whether the crypto floor
//! has an aws-lc-rs backend (`aws_lc_rs_floor`) and whether that aws-lc-rs
//! predates ML-KEM-768 (`aws_lc_rs_before_1_10`), and whether the `openssl`
//! crate is built (`openssl_crate`: feature `openssl` or `openssl-floor`).

use std::{env, fs, path::Path};

/// Versions of `crate_name` in the lock file, in its order.
fn locked_versions(lock: &str, crate_name: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{crate_name}\"")
            && let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = \""))
        {
            found.push(v.trim_end_matches('"').to_string());
        }
    }
    found
}

/// Version of `crate_name` in the lock file, or "unknown" if it is not there
/// exactly once.
fn locked_version(lock: &str, crate_name: &str) -> String {
    match locked_versions(lock, crate_name).as_slice() {
        [one] => one.clone(),
        _ => "unknown".to_string(),
    }
}

/// The patch number of a `0.<minor>.<patch>` version, if it is one.
fn minor_patch(version: &str, minor: u64) -> Option<u64> {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    match (parts.next()??, parts.next()??, parts.next()??) {
        (0, m, patch) if m == minor => Some(patch),
        _ => None,
    }
}

/// The AWS-LC backends: each feature (as `CARGO_FEATURE_*` names it) and
/// the cfg its aws-lc-config file adds to rustflags.
const AWS_LC_BACKENDS: [(&str, &str); 3] = [
    ("OPENSSL_AWS_LC", "tls_bench_openssl_aws_lc"),
    ("S2N_TLS_FIPS", "tls_bench_s2n_fips"),
    ("RUSTLS_FIPS", "tls_bench_rustls_fips"),
];

fn main() {
    // GnuTLS: the system's, located (and linked) by pkg-config; its error
    // names the package to install.
    #[cfg(feature = "gnutls")]
    if let Err(e) = pkg_config::Config::new().atleast_version("3.7.3").probe("gnutls") {
        panic!("feature `gnutls` needs GnuTLS 3.7.3 or later (apt-get install libgnutls28-dev): {e}");
    }
    // Its crypto floor calls nettle (hogweed: the public-key half) and GMP
    // directly, as GnuTLS's nettle backend does: the packages GnuTLS's own
    // development package depends on (nettle-dev, libgmp-dev).
    #[cfg(all(feature = "gnutls", feature = "crypto-floor"))]
    {
        for lib in ["hogweed", "nettle"] {
            if let Err(e) = pkg_config::Config::new().atleast_version("3.6").probe(lib) {
                panic!(
                    "feature `gnutls` with `crypto-floor` needs nettle 3.6 or later (apt-get install nettle-dev): {e}"
                );
            }
        }
        // hogweed.pc lists GMP as private (for static links) only.
        println!("cargo::rustc-link-lib=gmp");
    }
    #[cfg(feature = "mbedtls")]
    mbedtls_bindings();
    println!("cargo::rustc-check-cfg=cfg(ossl300)");
    println!("cargo::rustc-check-cfg=cfg(ossl320)");
    println!("cargo::rustc-check-cfg=cfg(openssl_awslc)");
    println!("cargo::rustc-check-cfg=cfg(s2n_no_kx_group_getter)");
    println!("cargo::rustc-check-cfg=cfg(s2n_no_kem_group_getter)");
    println!("cargo::rustc-check-cfg=cfg(rustls_0_22)");
    println!("cargo::rustc-check-cfg=cfg(rustls_0_21)");
    println!("cargo::rustc-check-cfg=cfg(rustls_0_20)");
    println!("cargo::rustc-check-cfg=cfg(ring_0_16)");
    println!("cargo::rustc-check-cfg=cfg(s2n_before_0_3)");
    println!("cargo::rustc-check-cfg=cfg(s2n_no_session_tickets)");
    println!("cargo::rustc-check-cfg=cfg(s2n_no_system_certs_switch)");
    println!("cargo::rustc-check-cfg=cfg(s2n_system_libcrypto)");
    println!("cargo::rustc-check-cfg=cfg(s2n_no_curve_getter)");
    println!("cargo::rustc-check-cfg=cfg(s2n_raw_api)");
    println!("cargo::rustc-check-cfg=cfg(aws_lc_rs_floor)");
    println!("cargo::rustc-check-cfg=cfg(aws_lc_rs_before_1_10)");
    println!("cargo::rustc-check-cfg=cfg(openssl_crate)");
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // The lock file of the workspace this crate is built in: its root is
    // two folders up (crates/harness/), in the repository and in
    // historical-perf's generated builds alike.
    let lock_path = Path::new(&manifest).join("../../Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock_path.display());
    let lock = fs::read_to_string(&lock_path).unwrap_or_default();
    for (krate, var) in [
        ("rustls", "TLS_BENCH_RUSTLS_VERSION"),
        ("s2n-tls", "TLS_BENCH_S2N_TLS_VERSION"),
        ("boring", "TLS_BENCH_BORING_VERSION"),
        ("aws-lc-rs", "TLS_BENCH_AWS_LC_RS_VERSION"),
    ] {
        println!("cargo::rustc-env={var}={}", locked_version(&lock, krate));
    }
    // Older s2n-tls releases, built by historical-perf: the negotiated-group
    // getters they lack (`Connection::selected_key_exchange_group` came in
    // 0.3.15, `kem_group_name` in 0.3.10).
    // rustls 0.22 (historical-perf): the config and stack read negotiated
    // values back through counting wrappers (src/libs/rustls/observe.rs).
    if minor_patch(&locked_version(&lock, "rustls"), 22).is_some() {
        println!("cargo::rustc-cfg=rustls_0_22");
    }
    // rustls 0.21 and 0.20: their own config and stack modules
    // (src/libs/rustls/config_0_21.rs, stack_0_21.rs), with cfg `rustls_0_20` for 0.20's differences.
    let rustls = locked_version(&lock, "rustls");
    if minor_patch(&rustls, 21).or(minor_patch(&rustls, 20)).is_some() {
        println!("cargo::rustc-cfg=rustls_0_21");
    }
    if minor_patch(&rustls, 20).is_some() {
        println!("cargo::rustc-cfg=rustls_0_20");
    }
    // *ring*: one version, or rustls 0.20's two (historical-perf): its own
    // crypto on *ring* 0.16 and its webpki's verifications on 0.17, as the
    // floor's compat module then calls them (src/libs/rustls/ring_0_16.rs).
    let rings = locked_versions(&lock, "ring");
    match rings.iter().find(|v| minor_patch(v, 16).is_some()) {
        Some(old) => {
            println!("cargo::rustc-cfg=ring_0_16");
            println!("cargo::rustc-env=TLS_BENCH_RING_VERSION={old}");
            let verify = rings.iter().find(|v| minor_patch(v, 17).is_some());
            println!("cargo::rustc-env=TLS_BENCH_WEBPKI_RING_VERSION={}", verify.map_or("unknown", |v| v));
        }
        None => println!("cargo::rustc-env=TLS_BENCH_RING_VERSION={}", locked_version(&lock, "ring")),
    }
    let s2n_tls = locked_version(&lock, "s2n-tls");
    if minor_patch(&s2n_tls, 0).or(minor_patch(&s2n_tls, 1)).or(minor_patch(&s2n_tls, 2)).is_some() {
        // Before 0.3: no application context, `resumed`, session getters,
        // FIPS mode or send-only shutdown; the group getters below are
        // missing too.
        println!("cargo::rustc-cfg=s2n_before_0_3");
        println!("cargo::rustc-cfg=s2n_no_kx_group_getter");
        println!("cargo::rustc-cfg=s2n_no_kem_group_getter");
    }
    if let Some(s2n) = minor_patch(&s2n_tls, 0) {
        // 0.0.x: linked to the system's libcrypto through openssl-sys (AWS-LC
        // came with 0.1); session tickets came in 0.0.36, `with_system_certs`
        // in 0.0.32, `selected_curve` in 0.0.29; up to 0.0.8 the API was
        // `s2n_tls::raw` (src/libs/s2n/raw.rs).
        println!("cargo::rustc-cfg=s2n_system_libcrypto");
        if s2n < 29 {
            println!("cargo::rustc-cfg=s2n_no_curve_getter");
        }
        if s2n < 9 {
            println!("cargo::rustc-cfg=s2n_raw_api");
        }
        if s2n < 36 {
            println!("cargo::rustc-cfg=s2n_no_session_tickets");
        }
        if s2n < 32 {
            println!("cargo::rustc-cfg=s2n_no_system_certs_switch");
        }
    }
    if let Some(s2n) = minor_patch(&s2n_tls, 3) {
        if s2n < 15 {
            println!("cargo::rustc-cfg=s2n_no_kx_group_getter");
        }
        if s2n < 10 {
            println!("cargo::rustc-cfg=s2n_no_kem_group_getter");
        }
    }
    // The aws-lc-rs floor (src/floor/aws_lc_rs.rs), with `crypto-floor`
    // where the library under test links aws-lc-rs: rustls from 0.22 (its
    // default provider) and s2n-tls from 0.1 (its AWS-LC: historical-perf's
    // builds of 0.1.0-0.1.4, which link aws-lc-sys alone, add an aws-lc-rs
    // on the same aws-lc-sys; 0.0 links the system's libcrypto, and its
    // builds have no aws-lc-rs).
    let feature = |name: &str| env::var_os(format!("CARGO_FEATURE_{name}")).is_some();
    // The AWS-LC backends' features give the code the cfgs the
    // aws-lc-config files set through rustflags (both ways, one stack).
    for (name, cfg) in AWS_LC_BACKENDS {
        if feature(name) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
    let rustls_aws_lc_rs =
        feature("RUSTLS") && minor_patch(&rustls, 21).or(minor_patch(&rustls, 20)).is_none();
    let s2n_aws_lc_rs = feature("S2N_TLS") && minor_patch(&s2n_tls, 0).is_none();
    if feature("CRYPTO_FLOOR") && (rustls_aws_lc_rs || s2n_aws_lc_rs) {
        println!("cargo::rustc-cfg=aws_lc_rs_floor");
    }
    // The `openssl` crate (src/libs/openssl/config.rs's aliases, the floor's
    // backend src/libs/openssl/floor/ossl.rs): with the OpenSSL stack, or alone for the
    // floor of s2n-tls 0.0's system libcrypto (`openssl-floor`).
    if feature("OPENSSL") || feature("OPENSSL_FLOOR") {
        println!("cargo::rustc-cfg=openssl_crate");
    }
    // aws-lc-rs before 1.10.0 (s2n-tls 0.1.2, 0.2.3 and 0.3.1's era in
    // historical-perf): no ML-KEM-768 in `kem` (1.5.2 has no `kem`).
    let before_1_10 = |v: &String| {
        let mut parts = v.split('.').map(|p| p.parse::<u64>().ok());
        matches!((parts.next().flatten(), parts.next().flatten()), (Some(1), Some(minor)) if minor < 10)
    };
    if locked_versions(&lock, "aws-lc-rs").iter().any(before_1_10) {
        println!("cargo::rustc-cfg=aws_lc_rs_before_1_10");
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

/// Mbed TLS (feature `mbedtls`): the system's 3.6 LTS, located and linked
/// by pkg-config, and `$OUT_DIR/mbedtls.rs`, bindgen's bindings to the calls
/// src/libs/mbedtls/ makes, generated from the installed headers (the
/// structures it allocates have the layout of the installed configuration,
/// `mbedtls/mbedtls_config.h`). Panics, naming the package, when it is
/// missing or older.
#[cfg(feature = "mbedtls")]
fn mbedtls_bindings() {
    let install = "apt-get install ./libmbedtls-dev_3.6*.deb from Debian 13, as .ci/run does";
    let mut include = Vec::new();
    for lib in ["mbedtls", "mbedx509", "mbedcrypto"] {
        match pkg_config::Config::new().atleast_version("3.6").probe(lib) {
            Ok(found) => include.extend(found.include_paths),
            Err(e) => panic!("feature `mbedtls` needs Mbed TLS 3.6 or later ({install}): {e}"),
        }
    }
    let mut builder = bindgen::Builder::default()
        .header_contents(
            "mbedtls-wrapper.h",
            "#include <mbedtls/ssl.h>\n#include <mbedtls/ssl_ticket.h>\n#include <mbedtls/ctr_drbg.h>\n\
             #include <mbedtls/entropy.h>\n#include <mbedtls/error.h>\n#include <mbedtls/version.h>\n\
             #include <mbedtls/net_sockets.h>\n#include <mbedtls/md.h>\n#include <mbedtls/cipher.h>\n#include <mbedtls/ecdh.h>\n\
             #include <psa/crypto.h>\n",
        )
        .allowlist_function(
            "mbedtls_(ssl|x509_crt|pk|ctr_drbg|entropy|md|cipher|ecdh)_.*|mbedtls_(strerror|version_get_string|md)|\
             psa_crypto_init",
        )
        .allowlist_var("MBEDTLS_(ERR_SSL|SSL|ERR_NET)_.*|MBEDTLS_X509_BADCERT_CN_MISMATCH|MBEDTLS_ERR_X509_CERT_VERIFY_FAILED|\
             MBEDTLS_RSA_SALT_LEN_ANY")
        .allowlist_type(
            "mbedtls_ssl_protocol_version|mbedtls_cipher_type_t|mbedtls_ssl_states|mbedtls_pk_rsassa_pss_options|\
             mbedtls_operation_t",
        )
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate_comments(false);
    for dir in include {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    let bindings = builder.generate().expect("bindgen over the Mbed TLS headers");
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("mbedtls.rs");
    bindings.write_to_file(out).expect("writing the Mbed TLS bindings");
}
