//! `serve`: a library's TLS echo server on a TCP address (or plaintext TCP),
//! every connection checked after its handshake, until SIGINT or SIGTERM;
//! then a summary. See docs/sockets.md.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result};
use clap::Parser;
use tls_bench::{
    error::exit_code,
    outdir::ensure_dir,
    sockets::{
        self,
        cli::{ParamsArgs, duration_arg},
        serve::{ServeOptions, start},
    },
};

/// A TLS echo server for one library and parameter set.
#[derive(Parser)]
#[command(name = "serve", version)]
struct Cli {
    /// The library: its id (`cargo run --release --bin serve -- --list`),
    /// its name (`s2n-tls`, `openssl`), name+backend (`rustls+ring`), or
    /// `plaintext-tcp`.
    #[arg(long, required_unless_present = "list")]
    library: Option<String>,
    #[command(flatten)]
    params: ParamsArgs,
    /// Address to listen on; port 0 picks a free one (printed).
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,
    /// Worker threads [default: the cores available].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Pin the worker threads to these cores, one each in turn
    /// (comma-separated; default: not pinned).
    #[arg(long, value_delimiter = ',')]
    cores: Vec<usize>,
    /// Longest a handshake may take (e.g. 500ms, 10s).
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    handshake_timeout: Duration,
    /// Longest a connection may idle before it is closed.
    #[arg(long, default_value = "60s", value_parser = duration_arg)]
    idle_timeout: Duration,
    /// Connections served at once; more are closed as they arrive.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Also write the summary as JSON to this file (checked first).
    #[arg(long)]
    json: Option<PathBuf>,
    /// List the libraries of this build and exit.
    #[arg(long)]
    list: bool,
}

fn main() -> ExitCode {
    exit_code(run(Cli::parse()))
}

fn run(cli: Cli) -> Result<()> {
    if cli.list {
        for lib in sockets::libraries() {
            println!("{}", lib.name());
        }
        return Ok(());
    }
    let library = sockets::find(cli.library.as_deref().unwrap_or_default())?;
    let params = cli.params.params()?;
    if let Some(json) = &cli.json {
        if let Some(dir) = json.parent().filter(|d| !d.as_os_str().is_empty()) {
            ensure_dir(dir, "--json's directory")?;
        }
        anyhow::ensure!(!json.is_dir(), "--json {}: is a directory", json.display());
    }
    let threads = cli.threads.map_or_else(sockets::cli::cores, usize::from);
    let options = ServeOptions {
        params,
        listen: cli.listen,
        threads,
        handshake_timeout: cli.handshake_timeout,
        idle_timeout: cli.idle_timeout,
        max_connections: cli.max_connections as usize,
        cores: cli.cores,
    };
    let running = start(&*library, &options)?;
    println!(
        "serving {} {params} on {} ({threads} threads); SIGINT or SIGTERM stops",
        library.name(),
        running.addr()
    );
    let summary = running.until_signal()?;
    print!("{}", summary.to_text());
    if let Some(json) = &cli.json {
        std::fs::write(json, serde_json::to_string_pretty(&summary)? + "\n")
            .with_context(|| format!("writing {}", json.display()))?;
    }
    Ok(())
}
