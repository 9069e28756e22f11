//! Where a tool's results go: checked before any work, written whole or not
//! at all, and compared by what they name rather than how they are spelt.
//!
//! A run writes into a fresh staging directory beside its `--out`
//! (`.NAME.partial-PID`) and [`RunDir::commit`] moves it into place when
//! the run is whole, so an interrupted or failed run leaves the previous
//! one intact, and a results directory never mixes files of two runs.
//! Concurrent runs stage apart; the last to finish holds the directory.

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail, ensure};

/// A results directory being written: [`RunDir::path`] while the run
/// writes, the `--out` directory once [`RunDir::commit`]ted. Dropped
/// without a commit (a failed run), the staging directory is removed and
/// `--out` is left as it was.
#[derive(Debug)]
pub struct RunDir {
    target: PathBuf,
    staging: PathBuf,
    owns: fn(&str) -> bool,
    committed: bool,
}

impl RunDir {
    /// Checks `target` before any work and makes its staging directory.
    /// `owns` says which entry names a run of the tool writes (a directory
    /// holding only such entries is a previous run's, and is replaced
    /// whole; an empty one too). Missing directories above `target` are
    /// created. Errors, each naming the path: `target` is not a directory,
    /// it holds an entry a run does not write (the name is given: it is not
    /// replaced), or the staging directory cannot be created beside it.
    pub fn prepare(target: &Path, owns: fn(&str) -> bool) -> Result<RunDir> {
        let name = target
            .file_name()
            .with_context(|| format!("{}: name a directory (not `..` or `/`)", target.display()))?
            .to_string_lossy()
            .into_owned();
        check_replaceable(target, owns)?;
        check_not_mount_point(target)?;
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).with_context(|| {
            format!("creating {} (the directory of {})", parent.display(), target.display())
        })?;
        remove_stale_staging(&parent, &name);
        check_movable(target, &parent.join(format!(".{name}.old-{}", std::process::id())))?;
        let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if staging.exists() {
            fs::remove_dir_all(&staging).with_context(|| format!("removing {}", staging.display()))?;
        }
        fs::create_dir(&staging).with_context(|| {
            format!("cannot write the results directory {}: creating {}", target.display(), staging.display())
        })?;
        Ok(RunDir { target: target.to_path_buf(), staging, owns, committed: false })
    }

    /// Where the run writes its files until [`RunDir::commit`].
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The `--out` directory the run ends in.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Moves the staged run into place, replacing a previous run's
    /// directory. Errors: something other than a run's files appeared in
    /// `--out` meanwhile (the staged run is kept, and the error says
    /// where), or a rename failed (naming both paths).
    pub fn commit(mut self) -> Result<()> {
        if let Err(e) = check_replaceable(&self.target, self.owns) {
            self.committed = true; // keep the staged run: it is whole
            return Err(e.context(format!("the run is kept in {}", self.staging.display())));
        }
        let old = self.staging.with_file_name(format!(
            ".{}.old-{}",
            self.target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id()
        ));
        let had_previous = self.target.exists();
        if had_previous && let Err(e) = fs::rename(&self.target, &old) {
            self.committed = true; // keep the staged run: it is whole
            return Err(e).with_context(|| {
                format!(
                    "moving the previous run {} aside (the run is kept in {})",
                    self.target.display(),
                    self.staging.display()
                )
            });
        }
        if let Err(e) = fs::rename(&self.staging, &self.target) {
            if had_previous {
                let _restored = fs::rename(&old, &self.target);
            }
            self.committed = true;
            return Err(e).with_context(|| {
                format!(
                    "moving {} to {} (the run is kept there)",
                    self.staging.display(),
                    self.target.display()
                )
            });
        }
        self.committed = true;
        if had_previous {
            fs::remove_dir_all(&old)
                .with_context(|| format!("removing the previous run {}", old.display()))?;
        }
        Ok(())
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.committed {
            // A failed run: nothing of it stays. Best effort, in a drop.
            let _removed = fs::remove_dir_all(&self.staging);
        }
    }
}

/// Errors when `target` is a mount point (on another device than its
/// parent, as mountpoint(1) tells): a run replaces its directory whole by a
/// rename, which a mount point refuses (EBUSY), so it would measure, then
/// lose the run.
fn check_not_mount_point(target: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::metadata(target) else { return Ok(()) };
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let parent_meta = fs::metadata(parent).with_context(|| format!("reading {}", parent.display()))?;
    ensure!(
        meta.dev() == parent_meta.dev(),
        "{} is a mount point: a run replaces its results directory whole (a rename, which a mount point \
         refuses); give a directory inside it",
        target.display()
    );
    Ok(())
}

/// Errors when a previous run's `target` cannot be moved aside (an
/// immutable directory, `chattr +i`; a parent that refuses it), found by
/// moving it to `aside` and back before any work, instead of at the end
/// of a run. Missing: nothing to move.
fn check_movable(target: &Path, aside: &Path) -> Result<()> {
    if fs::symlink_metadata(target).is_err() {
        return Ok(());
    }
    fs::rename(target, aside).with_context(|| {
        format!(
            "{}: a previous run that cannot be moved aside (a run replaces it whole at its end); \
             give another directory",
            target.display()
        )
    })?;
    fs::rename(aside, target).with_context(|| {
        format!("moving {} back to {} (a trial move before any work)", aside.display(), target.display())
    })
}

/// Errors unless `target` is missing, an empty directory, or one whose
/// every entry `owns` accepts.
fn check_replaceable(target: &Path, owns: fn(&str) -> bool) -> Result<()> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", target.display())),
        Ok(m) => ensure!(
            m.is_dir(),
            "{} exists and is not a directory: give a new directory, or one a previous run wrote",
            target.display()
        ),
    }
    let entries = fs::read_dir(target).with_context(|| format!("reading {}", target.display()))?;
    let mut foreign = Vec::new();
    for entry in entries {
        let name = entry.with_context(|| format!("reading {}", target.display()))?.file_name();
        let name = name.to_string_lossy();
        if !owns(&name) {
            foreign.push(name.into_owned());
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        bail!(
            "{} holds {}, which a run does not write: give a new or empty directory, or one a previous \
             run wrote (a run replaces the whole directory)",
            target.display(),
            foreign.join(", ")
        );
    }
    Ok(())
}

/// Removes the staging directories of `name` left by runs that were
/// killed (their process is gone). Linux only (`/proc`); elsewhere
/// nothing is removed.
fn remove_stale_staging(parent: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else { continue };
        let pid = rest.strip_prefix("partial-").or_else(|| rest.strip_prefix("old-"));
        if let Some(pid) = pid.filter(|p| p.parse::<u32>().is_ok())
            && !Path::new("/proc").join(pid).exists()
        {
            let _removed = fs::remove_dir_all(entry.path());
        }
    }
}

/// Creates the directory `path` and those above it, before any work, for a
/// tool that keeps results there across runs. Errors: a path that exists
/// and is not a directory, or cannot be created (naming it and `what`, the
/// option it came from).
pub fn ensure_dir(path: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(path)
        .with_context(|| format!("{what} {}: cannot create the directory", path.display()))?;
    ensure!(path.is_dir(), "{what} {}: not a directory", path.display());
    Ok(())
}

/// The file `path` names, spelt one way: the canonical path of the file
/// when it exists, else of its directory joined with its name, so
/// `/tmp/../tmp/x.json` and `/tmp/x.json` compare equal. Errors: the
/// directory does not exist, or `path` ends in `..` or `/`.
pub fn resolved(path: &Path) -> Result<PathBuf> {
    if let Ok(p) = fs::canonicalize(path) {
        return Ok(p);
    }
    let name = path.file_name().with_context(|| format!("{}: name a file", path.display()))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = fs::canonicalize(parent).with_context(|| format!("resolving {}", parent.display()))?;
    Ok(dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owns(name: &str) -> bool {
        name == "results.json" || name.ends_with(".svg")
    }

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tls-bench-outdir-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_committed_run_replaces_the_previous_one_whole() {
        let dir = scratch("replace");
        let out = dir.join("out");
        let first = RunDir::prepare(&out, owns).unwrap();
        fs::write(first.path().join("results.json"), "1").unwrap();
        fs::write(first.path().join("throughput.svg"), "1").unwrap();
        first.commit().unwrap();
        let second = RunDir::prepare(&out, owns).unwrap();
        fs::write(second.path().join("results.json"), "2").unwrap();
        second.commit().unwrap();
        assert_eq!(fs::read_to_string(out.join("results.json")).unwrap(), "2");
        assert!(!out.join("throughput.svg").exists(), "a stale file of the first run stayed");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["out"], "staging or old directories left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_run_leaves_the_previous_one_intact() {
        let dir = scratch("failed");
        let out = dir.join("out");
        let first = RunDir::prepare(&out, owns).unwrap();
        fs::write(first.path().join("results.json"), "1").unwrap();
        first.commit().unwrap();
        let second = RunDir::prepare(&out, owns).unwrap();
        fs::write(second.path().join("results.json"), "2").unwrap();
        drop(second);
        assert_eq!(fs::read_to_string(out.join("results.json")).unwrap(), "1");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_or_a_directory_with_other_files_is_refused_before_any_work() {
        let dir = scratch("refused");
        let file = dir.join("f");
        fs::write(&file, "x").unwrap();
        let e = format!("{:#}", RunDir::prepare(&file, owns).unwrap_err());
        assert!(e.contains("is not a directory") && e.contains("/f"), "{e}");
        let notes = dir.join("d");
        fs::create_dir(&notes).unwrap();
        fs::write(notes.join("notes.md"), "mine").unwrap();
        fs::write(notes.join("results.json"), "run").unwrap();
        let e = format!("{:#}", RunDir::prepare(&notes, owns).unwrap_err());
        assert!(e.contains("holds notes.md"), "{e}");
        assert_eq!(fs::read_to_string(notes.join("notes.md")).unwrap(), "mine");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "a staging directory was left");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// `chattr FLAG path`; false when this file system or machine cannot.
    fn chattr(flag: &str, path: &Path) -> bool {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    #[test]
    fn a_previous_run_that_cannot_be_moved_is_refused_before_any_work() {
        let dir = scratch("immutable");
        let out = dir.join("out");
        let first = RunDir::prepare(&out, owns).unwrap();
        fs::write(first.path().join("results.json"), "1").unwrap();
        first.commit().unwrap();
        if !chattr("+i", &out) {
            println!("skip: chattr +i is not available here (not root, or a file system without it)");
            fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let refused = RunDir::prepare(&out, owns).map(|_| ());
        chattr("-i", &out);
        let e = format!("{:#}", refused.unwrap_err());
        assert!(e.contains("cannot be moved aside") && e.contains("/out"), "{e}");
        assert_eq!(fs::read_to_string(out.join("results.json")).unwrap(), "1");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(!left.iter().any(|n| n.to_string_lossy().contains(".old-")), "{left:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_whose_previous_one_cannot_be_moved_at_its_commit_is_kept() {
        let dir = scratch("kept");
        let out = dir.join("out");
        let first = RunDir::prepare(&out, owns).unwrap();
        fs::write(first.path().join("results.json"), "1").unwrap();
        first.commit().unwrap();
        let second = RunDir::prepare(&out, owns).unwrap();
        fs::write(second.path().join("results.json"), "2").unwrap();
        let staging = second.path().to_path_buf();
        if !chattr("+i", &out) {
            println!("skip: chattr +i is not available here (not root, or a file system without it)");
            drop(second);
            fs::remove_dir_all(&dir).unwrap();
            return;
        }
        let e = second.commit().map_err(|e| format!("{e:#}"));
        chattr("-i", &out);
        let e = e.unwrap_err();
        assert!(e.contains("the run is kept in") && e.contains(".out.partial-"), "{e}");
        assert_eq!(fs::read_to_string(staging.join("results.json")).unwrap(), "2");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resolved_paths_compare_equal_whatever_the_spelling() {
        let dir = scratch("resolved");
        let a = resolved(&dir.join("x.json")).unwrap();
        let b = resolved(&dir.join("..").join(dir.file_name().unwrap()).join("x.json")).unwrap();
        assert_eq!(a, b);
        assert!(resolved(&dir.join("missing-dir").join("x.json")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
