//! The committed files of a folder by extension: listed, and those a run
//! did not write removed (committed results and graphs hold one run each).

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};

/// Removes the `.ext` files in `dir` that are not in `keep`.
pub fn remove_others(dir: &Path, ext: &str, keep: &[PathBuf]) -> Result<()> {
    for path in files_with(dir, ext)? {
        if !keep.contains(&path) {
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// The `.ext` files in `dir` (none if it does not exist).
pub fn files_with(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == ext) {
            files.push(path);
        }
    }
    Ok(files)
}
