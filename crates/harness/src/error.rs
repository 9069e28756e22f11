//! Why a library does not run a parameter set: unsupported (a named skip)
//! or failed (an error), shared by the configuration layer, the stacks and
//! every runner; and how the binaries end on an error.

use std::{fmt, process::ExitCode};

/// Why a library does not run a parameter set.
#[derive(Debug)]
pub enum ConfigureError {
    /// The library cannot do this combination; the string says why. The
    /// benchmark skips it and prints the reason.
    Unsupported(String),
    /// Building the configuration failed: a bug or broken environment.
    Failed(anyhow::Error),
}

impl fmt::Display for ConfigureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigureError::Unsupported(why) => write!(f, "unsupported: {why}"),
            ConfigureError::Failed(e) => write!(f, "configuration failed: {e:#}"),
        }
    }
}

impl std::error::Error for ConfigureError {}

impl From<anyhow::Error> for ConfigureError {
    fn from(e: anyhow::Error) -> Self {
        ConfigureError::Failed(e)
    }
}

/// How a binary ends: `Ok` exits with status 0; an error prints
/// `error: <its cause chain>` on stderr and exits with status 1. No
/// backtrace, whatever `RUST_BACKTRACE` says: these are a user's errors (a
/// bad option, a missing file), to be read, not debugged. Stdout is
/// flushed first: a closed or full one is such an error
/// (`error: writing to stdout: ...`, [`crate::out`]).
pub fn exit_code(result: anyhow::Result<()>) -> ExitCode {
    let flushed = crate::out::flush();
    match result.and_then(|()| Ok(flushed?)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
