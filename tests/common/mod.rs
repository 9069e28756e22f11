//! What the integration tests share.

use std::{fs, path::PathBuf};

/// An empty scratch directory for one test, `<suite>/<test>` under cargo's
/// temporary directory for integration tests (`target/tmp`): removed if a
/// previous run left it, then created.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(suite).join(test);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}
