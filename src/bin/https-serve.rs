//! `https-serve`: a library's HTTPS server (hyper 1.x, HTTP/1.1, over the
//! library's tokio adapter; or plaintext HTTP) answering every `GET` with a
//! fixed body, every connection checked after its handshake, until SIGINT
//! or SIGTERM; then a summary with the server's RSS over the run (with
//! `--echo`, `serve`'s echo instead of HTTP). See docs/https.md.

use std::{process::ExitCode, sync::Arc};

use clap::Parser;
use tls_bench_harness::{error::exit_code, parsed_or_exit};
use tls_bench_sockets::{cli::ServerArgs, https::Http, serve::Echo};

/// An HTTPS server for one library and parameter set.
#[derive(Parser)]
#[command(name = "https-serve", version)]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    /// Bytes of the body every GET is answered with.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(0..=64 * 1024 * 1024))]
    body: u32,
    /// Echo every byte back instead of answering HTTP (`serve`'s protocol;
    /// `--body` then does not apply), as the other runtimes' servers take
    /// it: how `interop` runs another build's server.
    #[arg(long)]
    echo: bool,
}

fn main() -> ExitCode {
    let cli = parsed_or_exit!(Cli::try_parse());
    if cli.echo {
        return exit_code(cli.server.run("echo", Arc::new(Echo)));
    }
    exit_code(
        cli.server.run(&format!("HTTPS, {} B bodies,", cli.body), Arc::new(Http::new(cli.body as usize))),
    )
}
