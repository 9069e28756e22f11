//! The build variants: the one definition every tool reads. Stacks that
//! cannot share one build each get a cargo invocation of their own: one
//! openssl-sys per build (vendored OpenSSL, the system's, AWS-LC), and
//! boring-sys's static libssl/libcrypto shadow OpenSSL's.
//!
//! Readers: `scripts/bench-all.sh` (`variants bench`, one `cargo bench` per
//! variant), `memory/bench-memory.sh` (`memory variants`, one
//! `memory measure` per variant), `compare --variants` (one worker binary
//! per variant) and `variants list`. Adding a variant is one entry in
//! [`VARIANTS`].
//!
//! `TLS_BENCH_VARIANTS` (names, space-separated) picks some of the
//! [`Scope::Every`] variants for the scripts ([`from_env`]); `compare`
//! takes names with `--variants` ([`select`]).

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Result, bail, ensure};

/// Which runs take a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every run over the variants: `scripts/bench-all.sh`, `memory/bench-memory.sh`
    /// (by default, or named in `TLS_BENCH_VARIANTS`) and `compare`.
    Every,
    /// Only `compare`, when named with `--variants`: a build the scripts
    /// leave out by default (AWS-LC under the `openssl` crate compiles
    /// another AWS-LC, with bindgen, for one more OpenSSL-API stack).
    CompareOnly,
}

/// One build variant: a name and what its cargo invocation is made of.
#[derive(Debug, PartialEq, Eq)]
pub struct Variant {
    /// Name, e.g. `boringssl` (letters, digits and `-`).
    pub name: &'static str,
    /// The stacks it builds, for listings and docs.
    pub stacks: &'static str,
    /// The library features (`--no-default-features --features ...`, with
    /// [`TOOLS_FEATURE`] added so the binaries build too); `None`: the
    /// default features.
    pub features: Option<&'static [&'static str]>,
    /// Which runs take it.
    pub scope: Scope,
}

/// The feature holding the binaries' dependencies (Cargo.toml): every
/// variant builds it, so `compare`'s worker and `memory` exist in each.
pub const TOOLS_FEATURE: &str = "tools";

/// Environment variable picking variants for the scripts: names,
/// space-separated (default: every [`Scope::Every`] variant).
pub const VARIANTS_ENV: &str = "TLS_BENCH_VARIANTS";

/// The build variants, in run order.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "default",
        stacks: "s2n-tls, rustls (aws-lc-rs, ring), OpenSSL 3.6 (vendored), plaintext floor",
        features: None,
        scope: Scope::Every,
    },
    Variant {
        name: "system-openssl",
        stacks: "the system's OpenSSL (Debian's libssl-dev, 3.0.x)",
        features: Some(&["openssl"]),
        scope: Scope::Every,
    },
    Variant {
        name: "boringssl",
        stacks: "BoringSSL (the `boring` crate)",
        features: Some(&["boring"]),
        scope: Scope::Every,
    },
    Variant {
        name: "gnutls",
        stacks: "GnuTLS (the system's libgnutls, Debian's libgnutls28-dev 3.7.x)",
        features: Some(&["gnutls"]),
        scope: Scope::Every,
    },
    Variant {
        name: "wolfssl",
        stacks: "wolfSSL (wolfssl-sys's vendored wolfSSL; GPL-2.0, in this variant only)",
        features: Some(&["wolfssl"]),
        scope: Scope::Every,
    },
    Variant {
        name: "mbedtls",
        stacks: "Mbed TLS 3.6 (the system's libmbedtls, Debian 13's libmbedtls-dev 3.6.x)",
        features: Some(&["mbedtls"]),
        scope: Scope::Every,
    },
    Variant {
        name: "openssl-aws-lc",
        stacks: "AWS-LC under the `openssl` crate (feature `openssl-aws-lc`, as aws-lc-config/openssl.toml)",
        features: Some(&["openssl-aws-lc"]),
        scope: Scope::CompareOnly,
    },
];

/// The repository (where the workspace's Cargo.toml is): cargo runs there
/// ([`tls_bench_harness::paths::repo`]).
pub fn repo() -> &'static Path {
    tls_bench_harness::paths::repo()
}

impl Variant {
    /// The cargo arguments that build this variant, after the subcommand:
    /// `--no-default-features --features LIB,...,tools` (none for the
    /// default features). E.g. `["--no-default-features", "--features",
    /// "boring,tools"]`.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(features) = self.features {
            let mut list: Vec<&str> = features.to_vec();
            list.push(TOOLS_FEATURE);
            args.extend(["--no-default-features".to_string(), "--features".to_string(), list.join(",")]);
        }
        args
    }

    /// The target directory every variant builds in: `CARGO_TARGET_DIR`
    /// when set, else `<repository>/target`
    /// ([`tls_bench_harness::paths::target_dir`]).
    pub fn target_dir(&self) -> PathBuf {
        tls_bench_harness::paths::target_dir()
    }

    /// `cargo SUBCOMMAND... <`[`Variant::cargo_args`]`>`, run in the
    /// repository; the caller appends the rest. The cargo is the one that
    /// ran this program (`CARGO`), else `cargo` on PATH. The environment
    /// `cargo run` set for this program is dropped (see
    /// [`set_by_cargo_run`]).
    pub fn cargo(&self, subcommand: &[&str]) -> Command {
        let mut cmd = Command::new(cargo());
        cmd.current_dir(repo()).args(subcommand).args(self.cargo_args());
        for (key, _) in std::env::vars_os() {
            if key.to_str().is_some_and(set_by_cargo_run) {
                cmd.env_remove(key);
            }
        }
        cmd
    }
}

/// The cargo to run: `CARGO` (set by cargo for what it runs), else `cargo`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Whether this build has the `default` variant's libraries: its features
/// (`s2n-tls`, `rustls`, `openssl-vendored`, `plaintext`; no `boring`) and
/// no cargo config switching a backend (the aws-lc-config files' cfgs). A
/// tool of such a build can answer for the default variant's cases without
/// building its worker.
pub fn built_as_default() -> bool {
    cfg!(all(
        feature = "s2n-tls",
        feature = "rustls",
        feature = "openssl-vendored",
        feature = "plaintext",
        not(feature = "boring"),
        not(tls_bench_openssl_aws_lc),
        not(tls_bench_s2n_fips),
        not(tls_bench_rustls_fips)
    ))
}

/// Whether environment variable `key` is one `cargo run` sets for the
/// program it runs (the package's and crate's own variables and `OUT_DIR`),
/// rather than one the user set for cargo (`CARGO_HOME`,
/// `CARGO_TARGET_DIR`, `CARGO_BUILD_*`, ...). Passed on to a nested cargo,
/// those would make build scripts that watch them (ring's watches
/// `CARGO_MANIFEST_DIR`) rebuild, here and again in the user's next build.
pub fn set_by_cargo_run(key: &str) -> bool {
    const USERS: [&str; 10] = [
        "CARGO_HOME",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_",
        "CARGO_REGISTR",
        "CARGO_NET_",
        "CARGO_TERM_",
        "CARGO_PROFILE_",
        "CARGO_HTTP_",
        "CARGO_INCREMENTAL",
        "CARGO_CACHE_",
    ];
    key == "OUT_DIR" || (key.starts_with("CARGO_") && !USERS.iter().any(|u| key.starts_with(u)))
}

/// The variant named `name`, if any.
pub fn find(name: &str) -> Option<&'static Variant> {
    VARIANTS.iter().find(|v| v.name == name)
}

/// The names of the variants of `scope`, in order.
pub fn names(scope: Scope) -> Vec<&'static str> {
    VARIANTS.iter().filter(|v| v.scope == scope).map(|v| v.name).collect()
}

/// The [`Scope::Every`] variants `value` (of [`VARIANTS_ENV`]: names,
/// space-separated) picks, in [`VARIANTS`] order; all of them for `None`
/// or an empty value. Errors: an unknown name, or a value naming none
/// (only spaces); each lists the valid names.
pub fn pick(value: Option<&str>) -> Result<Vec<&'static Variant>> {
    let valid = names(Scope::Every).join(" ");
    let every = VARIANTS.iter().filter(|v| v.scope == Scope::Every);
    let Some(value) = value.filter(|v| !v.is_empty()) else { return Ok(every.collect()) };
    let wanted: Vec<&str> = value.split_whitespace().collect();
    for name in &wanted {
        if !names(Scope::Every).contains(name) {
            bail!("{VARIANTS_ENV}: unknown variant \"{name}\"; valid: {valid}");
        }
    }
    ensure!(!wanted.is_empty(), "{VARIANTS_ENV}=\"{value}\" names no variant; valid: {valid}");
    Ok(every.filter(|v| wanted.contains(&v.name)).collect())
}

/// The variants [`VARIANTS_ENV`] picks in this process's environment
/// ([`pick`]). Errors: as [`pick`], or a value that is not UTF-8.
pub fn from_env() -> Result<Vec<&'static Variant>> {
    match std::env::var_os(VARIANTS_ENV) {
        None => pick(None),
        Some(v) => match v.to_str() {
            Some(v) => pick(Some(v)),
            None => bail!("{VARIANTS_ENV}={}: not UTF-8", v.to_string_lossy()),
        },
    }
}

/// The variants `names` picks (`all`: every variant, of both scopes), in
/// the order given: `compare --variants`. Errors: an unknown name, listing
/// the valid ones; a name given twice.
pub fn select(names: &[String]) -> Result<Vec<&'static Variant>> {
    if names.iter().any(|n| n == "all") {
        return Ok(VARIANTS.iter().collect());
    }
    let mut out: Vec<&'static Variant> = Vec::new();
    for n in names {
        let Some(v) = find(n) else {
            let valid: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
            bail!("--variants: unknown variant {n:?}; valid: {}, all", valid.join(", "));
        };
        ensure!(!out.contains(&v), "--variants: {n} given twice");
        out.push(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_plain() {
        for (i, v) in VARIANTS.iter().enumerate() {
            assert!(v.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{}", v.name);
            assert!(VARIANTS[..i].iter().all(|w| w.name != v.name), "{} twice", v.name);
            assert!(v.name != "all", "`all` is compare's word for every variant");
        }
        assert_eq!(VARIANTS[0].name, "default", "the default build runs first");
    }

    #[test]
    fn cargo_arguments_are_formed_from_the_entry() {
        assert!(find("default").unwrap().cargo_args().is_empty());
        assert_eq!(
            find("boringssl").unwrap().cargo_args(),
            ["--no-default-features", "--features", "boring,tools"]
        );
        assert_eq!(
            find("openssl-aws-lc").unwrap().cargo_args(),
            ["--no-default-features", "--features", "openssl-aws-lc,tools"]
        );
    }

    #[test]
    fn the_environment_picks_every_run_variants_in_table_order() {
        let listed = |v: Vec<&Variant>| v.iter().map(|v| v.name).collect::<Vec<_>>();
        let every = names(Scope::Every);
        assert!(every.starts_with(&["default", "system-openssl", "boringssl"]), "{every:?}");
        assert_eq!(listed(pick(None).unwrap()), every);
        assert_eq!(listed(pick(Some("")).unwrap()), every);
        assert_eq!(listed(pick(Some(" boringssl  default ")).unwrap()), ["default", "boringssl"]);
        let e = pick(Some("default boringsl")).unwrap_err().to_string();
        let valid = every.join(" ");
        assert_eq!(e, format!("TLS_BENCH_VARIANTS: unknown variant \"boringsl\"; valid: {valid}"));
        let e = pick(Some("openssl-aws-lc")).unwrap_err().to_string();
        assert!(e.contains("unknown variant \"openssl-aws-lc\""), "compare only: {e}");
        let e = pick(Some("   ")).unwrap_err().to_string();
        assert!(e.contains("names no variant"), "{e}");
    }

    #[test]
    fn compare_selects_by_name_or_all() {
        let e = select(&["boringsl".to_string()]).unwrap_err().to_string();
        assert!(e.contains("boringsl") && e.contains("boringssl") && e.contains("all"), "{e}");
        assert_eq!(select(&["all".to_string()]).unwrap().len(), VARIANTS.len());
        let picked = select(&["boringssl".to_string(), "default".to_string()]).unwrap();
        assert_eq!(picked.iter().map(|v| v.name).collect::<Vec<_>>(), ["boringssl", "default"]);
        assert!(select(&["default".to_string(), "default".to_string()]).is_err());
    }

    #[test]
    fn only_what_cargo_run_sets_is_dropped() {
        for k in
            ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "CARGO_BIN_NAME", "OUT_DIR", "CARGO_PRIMARY_PACKAGE"]
        {
            assert!(set_by_cargo_run(k), "{k}");
        }
        for k in ["CARGO", "CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_BUILD_JOBS", "PATH", "RUSTUP_HOME"] {
            assert!(!set_by_cargo_run(k), "{k}");
        }
    }
}
