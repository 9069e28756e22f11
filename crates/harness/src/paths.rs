//! Where the repository's outputs are by default, as cargo and Criterion
//! put them: the target directory (`CARGO_TARGET_DIR` honoured) and
//! Criterion's output directory (`CRITERION_HOME` honoured). Every tool's
//! default output and input directories and every build it starts go
//! through these, never through a `target/` compiled in.

use std::path::{Path, PathBuf};

/// The repository (where the workspace's Cargo.toml is, two folders above
/// this crate's, crates/harness/), as built.
pub fn repo() -> &'static Path {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    package.parent().and_then(Path::parent).expect("crates/harness/ is two folders under the repository")
}

/// The target directory: `CARGO_TARGET_DIR` when set (a relative one
/// under the repository, where the tools run cargo), else
/// `<repository>/target`.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| repo().join("target"), |d| repo().join(PathBuf::from(d)))
}

/// Criterion's output directory, by Criterion's own rule: `CRITERION_HOME`
/// when set, else `criterion` in the [`target_dir`].
pub fn criterion_home() -> PathBuf {
    std::env::var_os("CRITERION_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| target_dir().join("criterion"), PathBuf::from)
}
