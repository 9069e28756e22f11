//! `memory`: heap bytes per TLS connection and allocations per handshake and
//! per write, for every library built, counted by replacing the process's
//! C allocator (see README, "Memory"). `memory/bench-memory.sh` runs it for
//! every build variant and draws `memory/memory.svg`.
//!
//! ```text
//! memory measure --json OUT.json --csv OUT.csv [--libraries ..] [--kinds ..] [--chains ..] [-n 100] [--quick]
//! memory plot --svg memory/memory.svg [--markdown] REPORT.json...
//! memory list
//! ```

mod interpose;
mod measure;
mod plot;
mod results;

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Context, Result, bail, ensure};
use clap::{Parser, Subcommand};
use tls_bench::{
    bench::library_family,
    harness::TlsLibrary,
    memory::Snapshot,
    params::{CertChain, HandshakeKind, Params},
    stacks,
};

use crate::{
    measure::Options,
    results::{Report, Skip},
};

#[derive(Parser)]
#[command(about = "Heap per TLS connection and allocations per handshake and per write")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measures the built libraries and writes the report.
    Measure(MeasureArgs),
    /// Draws the graph (and optionally prints README tables) from reports.
    Plot {
        /// Where to write the SVG.
        #[arg(long)]
        svg: PathBuf,
        /// Also print the Markdown tables of the README to stdout.
        #[arg(long)]
        markdown: bool,
        /// Reports written by `memory measure --json`.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
    },
    /// Lists the built libraries, handshake kinds and chains.
    List,
}

#[derive(clap::Args)]
struct MeasureArgs {
    /// Libraries: full ids (`rustls-0.23.46+ring`), names without version
    /// (`rustls`, `openssl`, `s2n-tls`), or name+backend (`rustls+ring`).
    /// Default: every library built.
    #[arg(long, value_delimiter = ',')]
    libraries: Vec<String>,
    /// Handshake kinds (default: all).
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Certificate chains (default: ECDSA-P256,RSA-2048).
    #[arg(long, value_delimiter = ',')]
    chains: Vec<String>,
    /// Connection pairs measured, all alive together [default: 100; 10 with --quick].
    #[arg(short = 'n', long)]
    connections: Option<usize>,
    /// Write sizes of the steady send loop, in bytes.
    #[arg(long, value_delimiter = ',', default_value = "1024,16384")]
    write_sizes: Vec<usize>,
    /// Writes measured per pair and size [default: 32; 4 with --quick].
    #[arg(long)]
    writes: Option<usize>,
    /// Small run to check the tool works (10 pairs, 1 warm-up, 4 writes).
    #[arg(long)]
    quick: bool,
    /// JSON report path.
    #[arg(long)]
    json: PathBuf,
    /// CSV report path (one line per figure).
    #[arg(long)]
    csv: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memory: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Measure(args) => measure_all(args),
        Command::Plot { svg, markdown, reports } => {
            let reports = reports.iter().map(|p| Report::read_json(p)).collect::<Result<Vec<_>>>()?;
            let rows: Vec<_> = reports.iter().flat_map(|r| r.rows.iter().cloned()).collect();
            let first = reports.first().context("no reports")?;
            let subtitle = format!(
                "{} · {} · {} · {} connection pairs alive per library and parameter set · whiskers: min-max",
                first.date,
                first.cpu,
                first.allocator,
                rows.first().map_or(0, |r| r.connections)
            );
            plot::draw(&rows, &subtitle, &svg)?;
            eprintln!("memory: wrote {}", svg.display());
            if markdown {
                print!("{}", results::markdown(&rows));
            }
            Ok(())
        }
        Command::List => {
            for lib in stacks::all() {
                println!("library {}", lib.name());
            }
            for k in HandshakeKind::ALL {
                println!("kind {k}");
            }
            for c in CertChain::ALL {
                println!("chain {c}");
            }
            Ok(())
        }
    }
}

fn measure_all(args: MeasureArgs) -> Result<()> {
    check_interposer()?;
    let libs = select_libraries(stacks::all(), &args.libraries)?;
    let kinds = pick("kind", &args.kinds, &HandshakeKind::ALL, &HandshakeKind::ALL)?;
    let chains = pick("chain", &args.chains, &CertChain::ALL, &[CertChain::EcdsaP256, CertChain::Rsa2048])?;
    ensure!(args.write_sizes.iter().all(|&s| s > 0), "write sizes must be positive");
    let opts = Options {
        connections: args.connections.unwrap_or(if args.quick { 10 } else { 100 }),
        warmup: if args.quick { 1 } else { 3 },
        write_sizes: args.write_sizes,
        writes: args.writes.unwrap_or(if args.quick { 4 } else { 32 }),
    };
    ensure!(opts.connections > 0 && opts.writes > 0, "--connections and --writes must be positive");
    let mut report = Report {
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        cpu: tls_bench::host::cpu_model(),
        allocator: interpose::allocator(),
        warmup: opts.warmup,
        writes_per_size: opts.writes,
        rows: Vec::new(),
        skipped: Vec::new(),
    };
    for lib in &libs {
        for &kind in &kinds {
            for &cert in &chains {
                let params = Params { kind, ..Params::default() }.with_cert(cert);
                let id = format!("memory/{params}/{}", lib.name());
                match measure::measure(lib.as_ref(), params, &opts).with_context(|| id.clone())? {
                    Ok(row) => {
                        eprintln!(
                            "{id}: held client {:.0} B, server {:.0} B; {:.0} allocations per handshake",
                            row.held.client.mean, row.held.server.mean, row.handshake_allocs.pair.mean
                        );
                        report.rows.push(row);
                    }
                    Err(reason) => {
                        eprintln!("skip {id}: {reason}");
                        report.skipped.push(Skip { library: lib.name(), params: params.to_string(), reason });
                    }
                }
            }
        }
    }
    for path in std::iter::once(&args.json).chain(&args.csv) {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    report.write_json(&args.json)?;
    if let Some(csv) = &args.csv {
        report.write_csv(csv)?;
    }
    eprintln!("memory: wrote {}", args.json.display());
    Ok(())
}

/// Checks that allocations by Rust and by C code reach the counters.
fn check_interposer() -> Result<()> {
    let before = Snapshot::take();
    let boxed = std::hint::black_box(Box::new([0u8; 100]));
    drop(boxed);
    let rust = Snapshot::take().since_all(&before).allocs;
    // glibc's strdup allocates inside libc, as the libraries' C code does.
    // SAFETY: strdup of a valid C string; the copy is freed right away.
    unsafe { libc::free(std::hint::black_box(libc::strdup(c"tls-bench".as_ptr())).cast()) };
    let c = Snapshot::take().since_all(&before).allocs - rust;
    ensure!(rust >= 1 && c >= 1, "the allocator interposer does not see allocations (Rust: {rust}, C: {c})");
    Ok(())
}

/// The libraries `selectors` name (all when empty). Errors: a selector
/// naming no built library, with the valid names.
fn select_libraries(all: Vec<Box<dyn TlsLibrary>>, selectors: &[String]) -> Result<Vec<Box<dyn TlsLibrary>>> {
    if selectors.is_empty() {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|l| l.name()).collect();
    for s in selectors {
        if !names.iter().any(|n| library_matches(n, s)) {
            bail!("unknown library {s:?}; built libraries: {}", names.join(", "));
        }
    }
    Ok(all.into_iter().filter(|l| selectors.iter().any(|s| library_matches(&l.name(), s))).collect())
}

/// Whether library id `name` (e.g. `rustls-0.23.46+ring`) is what `selector`
/// asks for: the whole id, the name before the version (`rustls`), or that
/// name with the backend (`rustls+ring`, see [`library_family`]).
fn library_matches(name: &str, selector: &str) -> bool {
    let family = library_family(name);
    selector == name || selector == family || family.split_once('+').is_some_and(|(bare, _)| selector == bare)
}

/// The values of `T` named in `given` (by their id text, any case), or
/// `default` when none given. Errors: an unknown name, with the valid ones.
fn pick<T: Copy + std::fmt::Display>(
    what: &str,
    given: &[String],
    all: &[T],
    default: &[T],
) -> Result<Vec<T>> {
    if given.is_empty() {
        return Ok(default.to_vec());
    }
    given
        .iter()
        .map(|g| {
            all.iter().copied().find(|v| v.to_string().eq_ignore_ascii_case(g)).with_context(|| {
                let valid: Vec<String> = all.iter().map(|v| v.to_string()).collect();
                format!("unknown {what} {g:?}; valid: {}", valid.join(", "))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_selectors() {
        for (name, sel, want) in [
            ("rustls-0.23.46+ring", "rustls", true),
            ("rustls-0.23.46+ring", "rustls+ring", true),
            ("rustls-0.23.46+ring", "rustls+aws-lc-rs", false),
            ("rustls-0.23.46+ring", "rustls-0.23.46+ring", true),
            ("s2n-tls-0.3.47+aws-lc", "s2n-tls", true),
            ("openssl-aws-lc-1.73.0", "openssl", false),
            ("openssl-aws-lc-1.73.0", "openssl-aws-lc", true),
            ("openssl-3.6.3", "openssl", true),
            ("plaintext", "plaintext", true),
        ] {
            assert_eq!(library_matches(name, sel), want, "{name} {sel}");
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = pick("kind", &["tls13".to_string()], &HandshakeKind::ALL, &[]).unwrap_err().to_string();
        assert!(
            err.contains("unknown kind \"tls13\"") && err.contains("server-auth, mTLS, resumption"),
            "{err}"
        );
        assert_eq!(
            pick("kind", &["MTLS".to_string()], &HandshakeKind::ALL, &[]).unwrap(),
            [HandshakeKind::MutualAuth]
        );
    }
}
