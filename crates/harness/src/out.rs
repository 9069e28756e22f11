//! What the binaries print on stdout, and how a closed or full stdout ends
//! them: `error: writing to stdout: <the OS error>` on stderr and exit
//! status 1, never a panic (`println!`'s) nor a silent success.
//!
//! Every binary prints through [`out!`](crate::out!) and
//! [`outln!`](crate::outln!) (or [`print`]), which return
//! [`StdoutError`] for the caller to pass on with `?`; ends through
//! [`crate::error::exit_code`], which flushes stdout ([`flush`]) and maps an
//! error there too; and parses its command line through
//! [`parsed_or_exit!`](crate::parsed_or_exit!), which prints clap's help
//! and version itself (clap's own `exit` ignores a failed write). SIGPIPE
//! stays ignored, as Rust sets it: a reader that closes first (`| head`)
//! is this error too (`Broken pipe`).

use std::{
    fmt,
    io::{self, Write},
};

/// Writing to stdout failed: it is closed (a pipe whose reader is gone)
/// or full (`/dev/full`). Its `Display` is `writing to stdout`, its source
/// the OS error, so that `{:#}` (anyhow's chain) says both.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("writing to stdout")
    }
}

impl std::error::Error for StdoutError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Writes `args` to stdout and flushes it, so that a failure is seen at
/// the write that meets it, not later. What [`out!`](crate::out!) and
/// [`outln!`](crate::outln!) call. Errors: stdout is closed or full.
pub fn write_fmt(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let mut out = io::stdout().lock();
    out.write_fmt(args).and_then(|()| out.flush()).map_err(StdoutError)
}

/// Writes `text` to stdout and flushes it. Errors: as [`write_fmt`].
pub fn print(text: &str) -> Result<(), StdoutError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(StdoutError)
}

/// Flushes stdout (what any other writer left in its buffer). Errors: as
/// [`write_fmt`].
pub fn flush() -> Result<(), StdoutError> {
    io::stdout().lock().flush().map_err(StdoutError)
}

/// Ends the process after clap did not return a command line: `to_stdout`
/// for help and version (exit status `code`, 0, when `printed` succeeded;
/// 1 with `error: writing to stdout: ...` when it failed), else a usage
/// error already printed on stderr (exit status `code`, clap's 2).
pub fn exit_usage(to_stdout: bool, code: i32, printed: io::Result<()>) -> ! {
    match printed {
        Err(e) if to_stdout => {
            eprintln!("error: {:#}", anyhow::Error::new(StdoutError(e)));
            std::process::exit(1)
        }
        _ => std::process::exit(code),
    }
}

/// `print!` to stdout, as a `Result<(), StdoutError>` to pass on with `?`
/// ([`write_fmt`]).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_fmt(::std::format_args!($($arg)*))
    };
}

/// `println!` to stdout, as a `Result<(), StdoutError>` to pass on with `?`
/// ([`write_fmt`]).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out::print("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::write_fmt(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// The value of `$parsed`, a clap parse (`Cli::try_parse()`,
/// `Cli::try_parse_from(argv)`, ...: a `Result<T, clap::Error>`), or the
/// end of the process as [`exit_usage`] says: help and version printed on
/// stdout (exit 0, or 1 when stdout cannot take them), a usage error on
/// stderr (exit 2). Every binary's one way to parse its command line.
#[macro_export]
macro_rules! parsed_or_exit {
    ($parsed:expr) => {
        match $parsed {
            ::std::result::Result::Ok(parsed) => parsed,
            ::std::result::Result::Err(e) => {
                $crate::out::exit_usage(!e.use_stderr(), e.exit_code(), e.print())
            }
        }
    };
}
