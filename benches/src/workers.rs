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
    // cargo puts the variant's binary where this build's own is
    // (`target/release/<bin>`): the one there before is put back once the
    // variant's is copied out, so a user's next `target/release/<bin>` is
    // still the build they made.
    let built = v.target_dir().join("release").join(bin);
    keeping(&built, || {
        let status = v.cargo(&["build", "--release", "--bin", bin]).status().context("running cargo")?;
        ensure!(status.success(), "building the {} variant's {bin} failed ({status})", v.name);
        install(&built, exe)
    })
}

/// Runs `f`, which may replace the file `path` (cargo's uplift removes it
/// and links a new one), then puts back the file that was there before, if
/// any (kept by a hard link under a name of this call's own). Errors: `f`'s,
/// or the file cannot be put back (naming both paths).
fn keeping(path: &Path, f: impl FnOnce() -> Result<()>) -> Result<()> {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let kept = path.with_file_name(format!(
        ".{name}.kept-{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    let had = fs::hard_link(path, &kept).is_ok();
    let result = f();
    if had {
        fs::rename(&kept, path)
            .with_context(|| format!("putting {} back as {}", kept.display(), path.display()))?;
    }
    result
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

    #[test]
    fn a_file_replaced_meanwhile_is_put_back() {
        let dir = std::env::temp_dir().join(format!("tls-bench-keeping-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("compare");
        fs::write(&path, "this build's").unwrap();
        // As cargo uplifts another variant's binary: removed, written anew.
        keeping(&path, || {
            fs::remove_file(&path)?;
            fs::write(&path, "a variant's")?;
            fs::copy(&path, dir.join("worker"))?;
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "this build's");
        assert_eq!(fs::read_to_string(dir.join("worker")).unwrap(), "a variant's");
        // A failure is returned, the file still put back; no file was there: none is made.
        let e = keeping(&path, || {
            fs::remove_file(&path)?;
            anyhow::bail!("cargo failed")
        });
        assert!(e.unwrap_err().to_string().contains("cargo failed"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "this build's");
        keeping(&dir.join("absent"), || Ok(())).unwrap();
        assert!(!dir.join("absent").exists());
        let left: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
