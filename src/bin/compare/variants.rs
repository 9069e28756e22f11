//! Building one build variant's worker binary with cargo (the variants
//! themselves are [`tls_bench::variants`]).

use std::{fs, path::Path};

use anyhow::{Context, Result, ensure};
use tls_bench::variants::Variant;

/// Builds the `compare` binary of `v` (release) and copies it to `exe`.
/// A variant whose arguments name a `--target-dir` builds there. Errors:
/// cargo failed (its output, inherited, says why).
pub fn build_worker(v: &Variant, exe: &Path) -> Result<()> {
    eprintln!(
        "compare: building the {} worker: cargo build --release --bin compare {}",
        v.name,
        v.cargo_args().join(" ")
    );
    let mut cmd = v.cargo(&["build", "--release", "--bin", "compare"]);
    // RUSTFLAGS would override the aws-lc-config files' build.rustflags.
    cmd.env_remove("RUSTFLAGS");
    let status = cmd.status().context("running cargo")?;
    ensure!(status.success(), "building the {} worker failed ({status})", v.name);
    let built = v.target_dir().join("release").join("compare");
    if let Some(dir) = exe.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Copy to a temporary name, then rename: a running worker keeps its file.
    let tmp = exe.with_extension("new");
    fs::copy(&built, &tmp).with_context(|| format!("copying {} to {}", built.display(), tmp.display()))?;
    fs::rename(&tmp, exe).with_context(|| format!("renaming {} to {}", tmp.display(), exe.display()))?;
    Ok(())
}
