//! The build variants, read from `variants.sh` (the one list the scripts
//! share), and building one variant's worker binary with cargo.

use std::{fs, path::Path, process::Command};

use anyhow::{Context, Result, bail, ensure};

/// One build variant: a name and the cargo arguments that build it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Name, e.g. `boringssl`.
    pub name: String,
    /// Cargo arguments, e.g. `--no-default-features --features boring`.
    pub cargo_args: Vec<String>,
}

/// The variants listed in `variants.sh` (`all_variants` and
/// `compare_variants`), in file order. Errors: the file is missing or lists
/// none.
pub fn read() -> Result<Vec<Variant>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("variants.sh");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let found = parse(&text);
    ensure!(!found.is_empty(), "{} lists no variant", path.display());
    Ok(found)
}

/// The `"name|cargo arguments"` lines of `text`.
pub fn parse(text: &str) -> Vec<Variant> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix('"')?.strip_suffix('"')?;
            let (name, args) = l.split_once('|')?;
            let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            ok.then(|| Variant {
                name: name.to_string(),
                cargo_args: args.split_whitespace().map(str::to_string).collect(),
            })
        })
        .collect()
}

/// The variants `names` picks (`all` for every one). Errors: an unknown
/// name, listing the valid ones; a name given twice.
pub fn select(known: &[Variant], names: &[String]) -> Result<Vec<Variant>> {
    if names.iter().any(|n| n == "all") {
        return Ok(known.to_vec());
    }
    let mut out: Vec<Variant> = Vec::new();
    for n in names {
        let Some(v) = known.iter().find(|v| &v.name == n) else {
            let valid: Vec<&str> = known.iter().map(|v| v.name.as_str()).collect();
            bail!("--variants: unknown variant {n:?}; valid: {}, all", valid.join(", "));
        };
        ensure!(!out.contains(v), "--variants: {n} given twice");
        out.push(v.clone());
    }
    Ok(out)
}

/// Builds the `compare` binary of `v` (release) and copies it to `exe`.
/// A variant whose arguments name a `--target-dir` builds there. Errors:
/// cargo failed (its output, inherited, says why).
pub fn build_worker(v: &Variant, exe: &Path) -> Result<()> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    eprintln!(
        "compare: building the {} worker: cargo build --release --bin compare {}",
        v.name,
        v.cargo_args.join(" ")
    );
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(manifest_dir).args(["build", "--release", "--bin", "compare"]).args(&v.cargo_args);
    // RUSTFLAGS would override the aws-lc-config files' build.rustflags.
    cmd.env_remove("RUSTFLAGS");
    // What `cargo run` set for this process: some build scripts watch
    // these (ring's watches CARGO_MANIFEST_DIR), so passing them on would
    // rebuild those crates here and again in the user's next build.
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(set_by_cargo_run) {
            cmd.env_remove(key);
        }
    }
    let status = cmd.status().with_context(|| format!("running {cargo}"))?;
    ensure!(status.success(), "building the {} worker failed ({status})", v.name);
    let target_dir = v
        .cargo_args
        .iter()
        .position(|a| a == "--target-dir")
        .and_then(|i| v.cargo_args.get(i + 1))
        .map_or_else(|| manifest_dir.join("target"), |d| manifest_dir.join(d));
    let built = target_dir.join("release").join("compare");
    if let Some(dir) = exe.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Copy to a temporary name, then rename: a running worker keeps its file.
    let tmp = exe.with_extension("new");
    fs::copy(&built, &tmp).with_context(|| format!("copying {} to {}", built.display(), tmp.display()))?;
    fs::rename(&tmp, exe).with_context(|| format!("renaming {} to {}", tmp.display(), exe.display()))?;
    Ok(())
}

/// Whether `cargo run` sets environment variable `key` for the program it
/// runs (the package's and crate's own variables and `OUT_DIR`), rather
/// than the user having set it for cargo (`CARGO_HOME`, `CARGO_TARGET_DIR`,
/// `CARGO_BUILD_*`, ...).
fn set_by_cargo_run(key: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_project_variants_and_rejects_unknown_names() {
        let known = read().unwrap();
        let names: Vec<&str> = known.iter().map(|v| v.name.as_str()).collect();
        assert!(names.starts_with(&["default", "system-openssl", "boringssl"]), "{names:?}");
        assert!(known[0].cargo_args.is_empty());
        let e = select(&known, &["boringsl".to_string()]).unwrap_err().to_string();
        assert!(e.contains("boringsl") && e.contains("boringssl"), "{e}");
        assert_eq!(select(&known, &["all".to_string()]).unwrap(), known);
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
