//! Building a binary of another build variant with cargo, for the tools
//! that run variants side by side: `compare --variants` (its `compare`
//! worker) and `https-compare --variants` (its `https-serve`). The
//! variants themselves are [`crate::variants`].

use std::{
    fs,
    path::Path,
    sync::atomic::{AtomicU64, Ordering},
};

use crate::variants::Variant;
use anyhow::{Context, Result, ensure};

/// Builds binary `bin` of `v` (release) and copies it to `exe`. Errors:
/// cargo failed (its output, inherited, says why).
pub fn build_binary(v: &Variant, bin: &str, exe: &Path) -> Result<()> {
    eprintln!(
        "building the {} variant's {bin}: cargo build --release --bin {bin} {}",
        v.name,
        v.cargo_args().join(" ")
    );
    let status = v.cargo(&["build", "--release", "--bin", bin]).status().context("running cargo")?;
    ensure!(status.success(), "building the {} variant's {bin} failed ({status})", v.name);
    install(&v.target_dir().join("release").join(bin), exe)
}

/// Takes the lock of the workers under `dir` (the file `dir/.lock`),
/// waiting, with a message, while another run holds it: a variant's build
/// rewrites `target/release/<bin>`, so a concurrent run could otherwise
/// copy another variant's binary as its own. Released when the file is
/// dropped (or the process ends). Errors: the lock file cannot be made.
pub fn lock_workers(dir: &Path) -> Result<fs::File> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(".lock");
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            eprintln!(
                "another run is building its variants' binaries under {}; waiting for it",
                dir.display()
            );
            file.lock().with_context(|| format!("locking {}", path.display()))?;
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", path.display()));
        }
    }
    Ok(file)
}

/// Copies `built` to `exe` under a name of this call's own, then renames
/// it into place: a running worker keeps its file (no "Text file busy"),
/// and concurrent runs installing the same worker never write one file
/// (the last rename wins; each is a whole copy). Errors name the paths.
fn install(built: &Path, exe: &Path) -> Result<()> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    if let Some(dir) = exe.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let tmp = exe.with_extension(format!("new-{}-{call}", std::process::id()));
    let copied = fs::copy(built, &tmp)
        .with_context(|| format!("copying {} to {}", built.display(), tmp.display()))
        .and_then(|_| {
            fs::rename(&tmp, exe).with_context(|| format!("renaming {} to {}", tmp.display(), exe.display()))
        });
    if copied.is_err() {
        let _removed = fs::remove_file(&tmp);
    }
    copied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_installs_of_one_worker_all_succeed_whole() {
        let dir = std::env::temp_dir().join(format!("tls-bench-install-{}", std::process::id()));
        let built = dir.join("built");
        fs::create_dir_all(&dir).unwrap();
        let body = vec![7u8; 1 << 20];
        fs::write(&built, &body).unwrap();
        let exe = dir.join("workers").join("compare");
        std::thread::scope(|s| {
            let runs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..10).map(|_| install(&built, &exe)).collect::<Result<Vec<()>>>()))
                .collect();
            for r in runs {
                r.join().unwrap().unwrap();
            }
        });
        assert_eq!(fs::read(&exe).unwrap(), body);
        let left = fs::read_dir(dir.join("workers")).unwrap().count();
        assert_eq!(left, 1, "temporary copies left behind");
        fs::remove_dir_all(&dir).unwrap();
    }
}
