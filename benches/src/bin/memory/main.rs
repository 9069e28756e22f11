//! `memory`: heap bytes per TLS connection and allocations per handshake and
//! per write, for every library built, counted by replacing the process's
//! C allocator (see README, "Memory"). `memory variants` (what
//! `memory/bench-memory.sh` runs) measures every build variant; its kept
//! results are `memory/data/<variant>.json`, drawn as `memory/memory.svg`.
//!
//! ```text
//! memory measure --json OUT.json [--csv OUT.csv] [--libraries ..] [--kinds ..] [--chains ..] [-n 100] [--quick]
//! memory variants [--update-committed] [measure options but --json, --csv]
//! memory plot [--svg OUT.svg] [--markdown] [REPORT.json | DIR]...
//! memory list
//! ```

mod interpose;
mod measure;
mod plot;
mod results;
mod variants;

use std::{
    fs::{self, OpenOptions},
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result, bail, ensure};
use clap::{CommandFactory, Parser, Subcommand};
use tls_bench_harness::{
    error::exit_code,
    harness::TlsLibrary,
    libs,
    memory::Snapshot,
    out, outln,
    params::{CertChain, HandshakeKind, Params, Protocol},
    parsed_or_exit, select,
};
use tls_bench_results::outdir;

use crate::{
    measure::Options,
    results::{Report, Skip},
};

/// The committed results (`memory/data/<variant>.json`, one report per
/// build variant, under the repository), read by `memory plot` when given no
/// reports.
fn committed_data() -> PathBuf {
    tls_bench::variants::repo().join("memory/data")
}

/// The committed graph, drawn from [`committed_data`].
fn committed_svg() -> PathBuf {
    tls_bench::variants::repo().join("memory/memory.svg")
}

/// Most connection pairs `-n` takes: all are alive together, and a pair of
/// some libraries holds over 100 KiB (about 1 GiB at this bound).
const MAX_CONNECTIONS: usize = 10_000;
/// Most measured writes per pair and write size `--writes` takes.
const MAX_WRITES: usize = 10_000;
/// Largest write size `--write-sizes` takes, in bytes (1 MiB).
const MAX_WRITE_SIZE: usize = 1 << 20;

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
    /// Measures every build variant (`cargo run --release <variant> --bin
    /// memory -- measure`, each into target/memory/<variant>.{json,csv};
    /// --quick: target/memory/quick/), then draws their graph
    /// (memory.svg beside them). TLS_BENCH_VARIANTS picks variants (names,
    /// space-separated); the options apply to every variant. This is what
    /// memory/bench-memory.sh runs.
    #[command(long_about = variants::LONG_ABOUT)]
    Variants(variants::VariantsArgs),
    /// Draws the graph (and optionally prints README tables) from reports;
    /// with none, redraws memory/memory.svg from the committed memory/data/.
    Plot(PlotArgs),
    /// Lists the built libraries, handshake kinds and chains.
    List,
}

#[derive(clap::Args)]
struct PlotArgs {
    /// Where to write the SVG (missing directories are created). Required
    /// with reports; without reports, memory/memory.svg of the source tree.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Also print the Markdown tables of the README to stdout.
    #[arg(long)]
    markdown: bool,
    /// Reports written by `memory measure --json`, or directories whose
    /// `*.json` files are such reports (read in file-name order). Default:
    /// the committed memory/data/ of the source tree.
    inputs: Vec<PathBuf>,
}

#[derive(clap::Args)]
struct MeasureArgs {
    #[command(flatten)]
    selection: Selection,
    /// JSON report path (missing directories are created; checked before
    /// measuring).
    #[arg(long)]
    json: PathBuf,
    /// CSV report path, one line per figure (as --json).
    #[arg(long)]
    csv: Option<PathBuf>,
}

/// What `measure` measures and how much: the options `memory variants`
/// passes on to each variant's `measure`.
#[derive(clap::Args)]
struct Selection {
    /// Libraries: full ids (`rustls-0.23.46+ring`), names without version
    /// (`rustls`, `openssl`, `s2n-tls`), or name+backend (`rustls+ring`).
    /// Default: every library built. Repeats are measured once.
    #[arg(long, value_delimiter = ',')]
    libraries: Vec<String>,
    /// Handshake kinds, any case (default: all). Repeats are measured once.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// Certificate chains, any case (default: ECDSA-P256,RSA-2048). Repeats
    /// are measured once.
    #[arg(long, value_delimiter = ',')]
    chains: Vec<String>,
    /// Connection pairs measured, all alive together, 1 to 10000 [default:
    /// 100; 10 with --quick].
    #[arg(short = 'n', long, value_parser = bounded("connection pairs", MAX_CONNECTIONS))]
    connections: Option<usize>,
    /// Write sizes of the steady send loop, in bytes, 1 to 1048576 [default:
    /// 1024,16384]. Repeats are measured once.
    #[arg(long, value_delimiter = ',', value_parser = bounded("bytes per write", MAX_WRITE_SIZE))]
    write_sizes: Vec<usize>,
    /// Writes measured per pair and size, 1 to 10000 [default: 32; 4 with --quick].
    #[arg(long, value_parser = bounded("writes", MAX_WRITES))]
    writes: Option<usize>,
    /// Small run to check the tool works (10 pairs, 1 warm-up, 4 writes).
    #[arg(long)]
    quick: bool,
    /// Protocol versions, any case: TLSv1.3 (the default), TLSv1.2,
    /// DTLSv1.2, DTLSv1.3 (DTLS over the in-memory datagram transport, MTU
    /// 1500). A library without a version is skipped with the reason.
    /// Repeats are measured once.
    #[arg(long, value_delimiter = ',', conflicts_with = "dtls")]
    protocols: Vec<String>,
    /// Short for `--protocols DTLSv1.2,DTLSv1.3`.
    #[arg(long)]
    dtls: bool,
}

/// Write sizes of the send loop without `--write-sizes`, in bytes.
const DEFAULT_WRITE_SIZES: [usize; 2] = [1024, 16384];

impl Selection {
    /// The options given, by name (`--quick`, `-n`, ...): empty for a
    /// complete run. Every field is read, so a new option cannot be missed.
    fn given(&self) -> Vec<&'static str> {
        let Selection { libraries, kinds, chains, connections, write_sizes, writes, quick, protocols, dtls } =
            self;
        [
            (!libraries.is_empty(), "--libraries"),
            (!kinds.is_empty(), "--kinds"),
            (!chains.is_empty(), "--chains"),
            (connections.is_some(), "-n"),
            (!write_sizes.is_empty(), "--write-sizes"),
            (writes.is_some(), "--writes"),
            (*quick, "--quick"),
            (!protocols.is_empty(), "--protocols"),
            (*dtls, "--dtls"),
        ]
        .into_iter()
        .filter_map(|(given, name)| given.then_some(name))
        .collect()
    }
}

/// A clap value parser for a count of `what` from 1 to `max`. Errors: not a
/// number, or out of range (the message names the value and the bound).
fn bounded(
    what: &'static str,
    max: usize,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text| {
        let n: u128 = text.parse().map_err(|e| format!("{text:?} is not a count of {what}: {e}"))?;
        match usize::try_from(n) {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(format!("{n} {what}: must be from 1 to {max}")),
        }
    }
}

fn main() -> ExitCode {
    let cli = parsed_or_exit!(Cli::try_parse());
    // `--update-committed` for less than a complete run is a usage error,
    // refused before any work (exit status 2, as clap's).
    if let Command::Variants(args) = &cli.command
        && let Some(why) = args.refusal(std::env::var(tls_bench::variants::VARIANTS_ENV).ok().as_deref())
    {
        let mut cmd = Cli::command().bin_name("memory");
        cmd.build();
        let sub = cmd.find_subcommand_mut("variants").expect("the variants subcommand");
        sub.error(clap::error::ErrorKind::ArgumentConflict, why).exit();
    }
    exit_code(run(cli))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Measure(args) => measure_all(args),
        Command::Variants(args) => variants::run(args),
        Command::Plot(args) => plot_reports(args),
        Command::List => {
            for lib in libs::all() {
                outln!("library {}", lib.name())?;
            }
            for k in HandshakeKind::ALL {
                outln!("kind {k}")?;
            }
            for c in CertChain::ALL {
                outln!("chain {c}")?;
            }
            Ok(())
        }
    }
}

/// `memory plot`: reads the reports (the committed data when none given),
/// draws the SVG and optionally prints the Markdown tables. Errors: no
/// `--svg` with reports given, an unreadable report or directory, the same
/// library and parameters in two reports, an unwritable SVG path.
fn plot_reports(args: PlotArgs) -> Result<()> {
    let (inputs, svg) = if args.inputs.is_empty() {
        (vec![committed_data()], args.svg.unwrap_or_else(committed_svg))
    } else {
        let svg = args.svg.with_context(|| {
            format!(
                "--svg is required with reports ({} is drawn from {} only)",
                committed_svg().display(),
                committed_data().display()
            )
        })?;
        (args.inputs, svg)
    };
    let reports = results::read_reports(&inputs)?;
    let rows = results::merged_rows(&reports)?;
    create_parent(&svg)?;
    plot::draw(&rows, &plot::subtitle(&reports), &svg)
        .with_context(|| format!("writing {}", svg.display()))?;
    eprintln!("memory: wrote {}", svg.display());
    if args.markdown {
        out!("{}", results::markdown(&rows))?;
    }
    Ok(())
}

/// Creates the missing directories above `path`. Errors: name the path.
fn create_parent(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir)
            .with_context(|| format!("creating {} (the directory of {})", dir.display(), path.display())),
        None => Ok(()),
    }
}

/// Checks, before any measuring, that a report can be written to `path`:
/// creates its missing directories and opens it for writing without
/// changing it (a file that did not exist is removed again). Errors: a
/// directory, or a path that cannot be created or written; each names it.
fn check_writable(path: &Path) -> Result<()> {
    create_parent(path)?;
    ensure!(!path.is_dir(), "cannot write the report {}: it is a directory", path.display());
    // A device (/dev/full) or a pipe takes an open and refuses, or loses,
    // the writes at the end of a run: a report is a file.
    ensure!(
        fs::metadata(path).map_or(true, |m| m.is_file()),
        "cannot write the report {}: not a regular file (give a file's path)",
        path.display()
    );
    let existed = path.exists();
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot write the report {}", path.display()))?;
    if !existed {
        fs::remove_file(path).with_context(|| format!("removing the probe {}", path.display()))?;
    }
    Ok(())
}

/// The measurement options of `args` (clap has checked the bounds); write
/// sizes each once.
fn options(args: &Selection) -> Options {
    let write_sizes = if args.write_sizes.is_empty() { &DEFAULT_WRITE_SIZES[..] } else { &args.write_sizes };
    Options {
        connections: args.connections.unwrap_or(if args.quick { 10 } else { 100 }),
        warmup: if args.quick { 1 } else { 3 },
        write_sizes: unique(write_sizes.iter().copied()),
        writes: args.writes.unwrap_or(if args.quick { 4 } else { 32 }),
    }
}

/// `memory measure`: checks the selection and the output paths, measures
/// every selected library, kind and chain once, and writes the report.
/// Errors: an unknown name, an unwritable path (before measuring), a
/// library failure, or nothing measured (the skip reasons).
fn measure_all(args: MeasureArgs) -> Result<()> {
    check_interposer()?;
    let MeasureArgs { selection: sel, json, csv } = args;
    let libs = select_libraries(libs::all(), &sel.libraries)?;
    let kinds = pick("kind", &sel.kinds, &HandshakeKind::ALL, &HandshakeKind::ALL)?;
    let chains = pick("chain", &sel.chains, &CertChain::ALL, &[CertChain::EcdsaP256, CertChain::Rsa2048])?;
    for path in std::iter::once(&json).chain(&csv) {
        check_writable(path)?;
    }
    // By the files they name, not their spelling (`/tmp/../tmp/x.json`).
    if let Some(csv) = &csv {
        ensure!(
            outdir::resolved(csv)? != outdir::resolved(&json)?,
            "--json {} and --csv {} are the same file",
            json.display(),
            csv.display()
        );
    }
    let opts = options(&sel);
    let mut report = Report {
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        cpu: tls_bench_results::host::cpu_model(),
        allocator: tls_bench_results::host::allocator(),
        warmup: opts.warmup,
        writes_per_size: opts.writes,
        rows: Vec::new(),
        skipped: Vec::new(),
    };
    const EVERY: [Protocol; 4] = [Protocol::Tls13, Protocol::Tls12, Protocol::Dtls12, Protocol::Dtls13];
    let protocols = if sel.dtls {
        Protocol::DATAGRAM.to_vec()
    } else {
        pick("protocol", &sel.protocols, &EVERY, &[Protocol::Tls13])?
    };
    for lib in &libs {
        for &kind in &kinds {
            for &cert in &chains {
                for &protocol in &protocols {
                    let params = Params { kind, ..Params::default() }.with_cert(cert).with_protocol(protocol);
                    measure_one(lib.as_ref(), params, &opts, &mut report)?;
                }
            }
        }
    }
    ensure_measured(&report)?;
    report.write_json(&json)?;
    if let Some(csv) = &csv {
        results::write_csv(&report, csv)?;
    }
    eprintln!("memory: wrote {}", json.display());
    Ok(())
}

/// Measures `lib` on `params` into `report` (a row, or the skip and its
/// reason), printing a line of the figures. Errors: a library failure.
fn measure_one(lib: &dyn TlsLibrary, params: Params, opts: &Options, report: &mut Report) -> Result<()> {
    let id = format!("memory/{params}/{}", lib.name());
    match measure::measure(lib, params, opts).with_context(|| id.clone())? {
        Ok(row) => {
            let writes: Vec<String> = row
                .writes
                .iter()
                .map(|w| {
                    format!(
                        "{} B: sender {:.2}, receiver {:.2}",
                        w.write_size, w.sender_allocs.mean, w.receiver_allocs.mean
                    )
                })
                .collect();
            eprintln!(
                "{id}: held client {:.0} B, server {:.0} B; {:.0} allocations per handshake; \
                 allocations per write {}",
                row.held.client.mean,
                row.held.server.mean,
                row.handshake_allocs.pair.mean,
                writes.join("; ")
            );
            report.rows.push(row);
        }
        Err(reason) => {
            tls_bench_harness::skip::report(&id, &reason)?;
            report.skipped.push(Skip { library: lib.name(), params: params.to_string(), reason });
        }
    }
    Ok(())
}

/// Errors when `report` has no rows: every selected case was skipped (the
/// message lists each skip and its reason) or nothing was selected.
fn ensure_measured(report: &Report) -> Result<()> {
    if !report.rows.is_empty() {
        return Ok(());
    }
    if report.skipped.is_empty() {
        bail!("nothing measured: the selection names no library, kind or chain");
    }
    let reasons: Vec<String> =
        report.skipped.iter().map(|s| format!("{}/{}: {}", s.library, s.params, s.reason)).collect();
    bail!("nothing measured: every selected case was skipped ({})", reasons.join("; "))
}

/// `items` in first-seen order, without repeats.
pub fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
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

/// The libraries `selectors` name (all when empty), each once, in build
/// order ([`tls_bench_harness::select`]). Errors: a selector naming no
/// built library, with the valid names.
fn select_libraries(all: Vec<Box<dyn TlsLibrary>>, selectors: &[String]) -> Result<Vec<Box<dyn TlsLibrary>>> {
    let names: Vec<String> = all.iter().map(|l| l.name()).collect();
    let chosen: Vec<String> = select::select(&names, selectors)
        .map_err(|e| anyhow::anyhow!("--libraries: {e}"))?
        .into_iter()
        .map(str::to_string)
        .collect();
    Ok(all.into_iter().filter(|l| chosen.contains(&l.name())).collect())
}

/// The values of `T` named in `given` (by their id text, any case), each
/// once in first-named order, or `default` when none given. Errors: an
/// unknown name, with the valid ones.
fn pick<T: Copy + PartialEq + std::fmt::Display>(
    what: &str,
    given: &[String],
    all: &[T],
    default: &[T],
) -> Result<Vec<T>> {
    if given.is_empty() {
        return Ok(default.to_vec());
    }
    let named = given
        .iter()
        .map(|g| {
            all.iter().copied().find(|v| v.to_string().eq_ignore_ascii_case(g)).with_context(|| {
                let valid: Vec<String> = all.iter().map(|v| v.to_string()).collect();
                format!("unknown {what} {g:?}; valid: {}", valid.join(", "))
            })
        })
        .collect::<Result<Vec<T>>>()?;
    Ok(unique(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(skipped: Vec<Skip>) -> Report {
        Report {
            date: "2026-01-01".into(),
            cpu: "cpu".into(),
            allocator: "glibc".into(),
            warmup: 1,
            writes_per_size: 1,
            rows: Vec::new(),
            skipped,
        }
    }

    #[test]
    fn measuring_nothing_is_an_error_naming_the_skips() {
        let skip = |library: &str, reason: &str| Skip {
            library: library.into(),
            params: "server-auth,x25519".into(),
            reason: reason.into(),
        };
        let err =
            ensure_measured(&report(vec![skip("s2n-tls", "x25519 is not FIPS"), skip("b", "no group")]))
                .unwrap_err()
                .to_string();
        for part in [
            "nothing measured",
            "s2n-tls/server-auth,x25519: x25519 is not FIPS",
            "b/server-auth,x25519: no group",
        ] {
            assert!(err.contains(part), "{part} missing: {err}");
        }
        let err = ensure_measured(&report(Vec::new())).unwrap_err().to_string();
        assert!(err.contains("nothing measured") && err.contains("selection"), "{err}");
    }

    #[test]
    fn repeated_names_are_picked_once() {
        let given = ["mTLS", "mtls", "server-auth", "MTLS"].map(String::from);
        assert_eq!(
            pick("kind", &given, &HandshakeKind::ALL, &[]).unwrap(),
            [HandshakeKind::MutualAuth, HandshakeKind::ServerAuth]
        );
    }

    #[test]
    fn counts_are_bounded() {
        let parse = bounded("pairs", 10);
        assert_eq!(parse("10"), Ok(10));
        for bad in ["0", "11", "1000000000000", "100000000000000000000000000000000000000000", "-1", "x"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
        assert!(parse("11").unwrap_err().contains("from 1 to 10"));
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
