//! `serve`: a library's TLS echo server on a TCP address (or plaintext TCP),
//! every connection checked after its handshake, until SIGINT or SIGTERM;
//! then a summary. See docs/sockets.md.

use std::{process::ExitCode, sync::Arc};

use clap::Parser;
use tls_bench_harness::{error::exit_code, parsed_or_exit};
use tls_bench_sockets::{cli::ServerArgs, serve::Echo};

/// A TLS echo server for one library and parameter set.
#[derive(Parser)]
#[command(name = "serve", version)]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
}

fn main() -> ExitCode {
    exit_code(parsed_or_exit!(Cli::try_parse()).server.run("echo", Arc::new(Echo)))
}
