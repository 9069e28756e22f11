//! Named skips: a case the library cannot do (never run with other
//! parameters) is reported as `skip ID: REASON` on stderr for people and,
//! when [`SKIPS_ENV`] names a file, appended to it as one JSON object per
//! line ([`Skip`]) for tools: historical-perf reads the skips of the
//! benchmark and memory runs it starts from there, not from their text.

use std::{
    env,
    fs::OpenOptions,
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Environment variable naming the file skips are appended to (JSON
/// lines); unset: stderr only.
pub const SKIPS_ENV: &str = "TLS_BENCH_SKIPS";

/// One skipped case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skip {
    /// The benchmark id, `group/parameters/library`.
    pub id: String,
    /// Why the library cannot do it.
    pub reason: String,
}

/// Prints `skip ID: REASON` to stderr and appends the skip to the
/// [`SKIPS_ENV`] file, if set. Errors: the file cannot be opened or
/// written (named in the error).
pub fn report(id: &str, reason: &str) -> Result<()> {
    eprintln!("skip {id}: {reason}");
    let Some(path) = env::var_os(SKIPS_ENV).map(PathBuf::from) else { return Ok(()) };
    let line = serde_json::to_string(&Skip { id: id.to_string(), reason: reason.to_string() })?;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("{SKIPS_ENV}: opening {}", path.display()))?;
    writeln!(file, "{line}").with_context(|| format!("{SKIPS_ENV}: writing {}", path.display()))
}

/// The skips in `path` (written by [`report`]), in order; none when the
/// file does not exist (nothing was skipped). Errors: an unreadable file
/// or a line that is not a [`Skip`] (the error names the line).
pub fn read(path: &Path) -> Result<Vec<Skip>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("{}, line {}", path.display(), i + 1)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_read_back_and_a_bad_line_is_an_error() {
        let dir = std::env::temp_dir().join(format!("tls-bench-skips-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("skips.jsonl");
        assert!(read(&path).unwrap().is_empty(), "no file: no skips");
        let a = Skip { id: "handshake/x/lib-1".into(), reason: "no \"DTLS\"\nhere".into() };
        std::fs::write(&path, format!("{}\n", serde_json::to_string(&a).unwrap())).unwrap();
        assert_eq!(read(&path).unwrap(), [a]);
        std::fs::write(&path, "skip handshake/x: text\n").unwrap();
        assert!(format!("{:#}", read(&path).unwrap_err()).contains("line 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
