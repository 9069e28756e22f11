//! `crypto-floor`: the crypto floor's operation table and its primitives'
//! speed ([`tls_bench_harness::floor`]).
//!
//! ```text
//! crypto-floor ops                          # the table of every handshake of the sweep
//! crypto-floor speed [--seconds S]          # each backend's primitives, openssl speed's units
//! crypto-floor speed --against-openssl-speed [--rounds N] [--seconds S]
//! crypto-floor count [--parameters P|all]... [--library NAME]...
//! ```
//!
//! `count` runs one handshake of each library and of its crypto floor
//! under Callgrind (valgrind), counts each side's calls to the functions
//! that perform each primitive ([`tls_bench_harness::floor::count`]) beside the
//! operation table, and each side's instructions beside its floor's; it
//! exits 1 naming every operation whose count disagrees with the table and
//! every floor that executes as many instructions as its library.
//!
//! `--against-openssl-speed` times this build's libcrypto floor and the
//! `openssl speed` command in interleaved rounds (both must be the same
//! OpenSSL: the system's, in the system-openssl build that
//! `scripts/speed-check.sh` makes), prints each primitive's rates and the
//! median of the rounds' ratios, and exits 1 when one lies more than 10%
//! from 1 ([`JUDGED`]).

use std::{
    process::{Command, ExitCode},
    time::Duration,
};

use anyhow::{Context, Result, bail, ensure};
use clap::{Parser, Subcommand};
mod count;
mod speed;

use speed::{NAMES, Speed};
use tls_bench_harness::{
    error::exit_code, floor::ops, out, outln, params::Params, parsed_or_exit, transport::Side,
};
use tls_bench_results::{stats::median, table::Table};

#[derive(Parser)]
#[command(about = "The crypto floor: its operation table, and its primitives' speed")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Prints the operations of every handshake of the sweep, by side
    /// (Markdown).
    Ops,
    /// Times each backend's primitives in `openssl speed`'s names and units.
    Speed {
        /// Seconds per primitive (and per `openssl speed` run), 0.1 to 60.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Also run `openssl speed` in interleaved rounds against this
        /// build's libcrypto floor, and require every ratio within 10%.
        #[arg(long)]
        against_openssl_speed: bool,
        /// Rounds of `--against-openssl-speed`, 1 to 20.
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
    /// Checks the operation table against each library's calls, counted
    /// under Callgrind, and each floor's instructions against its
    /// library's (one handshake each, per side).
    Count {
        /// A handshake's parameters as `crypto-floor ops` lists them (the
        /// handshake sweep); repeat for more; `all` for the whole sweep.
        /// Default: the sweep's centre.
        #[arg(long = "parameters", value_name = "P")]
        parameters: Vec<String>,
        /// A library of this build, by its benchmark-id name (e.g.
        /// `openssl-3.6.3`); repeat for more. Default: every library with a
        /// crypto floor in this build.
        #[arg(long = "library", value_name = "NAME")]
        libraries: Vec<String>,
    },
    /// Runs one handshake case as `count` has Callgrind count it (a
    /// warm-up, then one in the side regions).
    #[command(hide = true)]
    RunCounted {
        /// The benchmark id.
        id: String,
    },
}

/// The largest accepted distance of a ratio from 1.
const AGREEMENT: f64 = 0.10;

/// How many of [`NAMES`] are judged: all (the HMAC is keyed once, as
/// `openssl speed -hmac` keys it: [`speed`]).
const JUDGED: usize = NAMES.len();

fn main() -> ExitCode {
    exit_code(run(parsed_or_exit!(Cli::try_parse())))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Cmd::Ops => {
            out!("{}", ops_table())?;
            Ok(())
        }
        Cmd::Count { parameters, libraries } => count::run(&parameters, &libraries),
        Cmd::RunCounted { id } => count::run_one(&id),
        Cmd::Speed { seconds, against_openssl_speed, rounds } => {
            ensure!((0.1..=60.0).contains(&seconds), "--seconds {seconds}: valid from 0.1 to 60");
            ensure!((1..=20).contains(&rounds), "--rounds {rounds}: valid from 1 to 20");
            let each = Duration::from_secs_f64(seconds);
            if against_openssl_speed {
                return against_openssl(each, rounds);
            }
            let backends = speed::backends();
            ensure!(
                !backends.is_empty(),
                "this build has no crypto floor (build with rustls, openssl, boring or wolfssl, and tools)"
            );
            // Printed a line at a time: each backend's row as it is measured.
            let table = Table::new(&std::iter::once("backend").chain(NAMES).collect::<Vec<_>>());
            out!("{}", table.head())?;
            for b in backends {
                let rates = (b.measure)(each).with_context(|| b.backend.clone())?;
                let cells = rates.iter().map(|s| format!("{:.1}", s.rate));
                out!("{}", table.line(&std::iter::once(b.backend.clone()).chain(cells).collect::<Vec<_>>()))?;
            }
            outln!(
                "\n(operations per second; aes-128-gcm 16384: 1000s of bytes per second, as openssl speed)"
            )?;
            Ok(())
        }
    }
}

/// The operation table of the sweep: parameters, client, server.
fn ops_table() -> String {
    let mut table = Table::new(&["parameters", "client", "server"]);
    for p in Params::handshake_sweep() {
        let f = ops::handshake(&p);
        let list =
            |side| f.counts(side).iter().map(|(op, n)| format!("{n}x {op}")).collect::<Vec<_>>().join(", ");
        table.row([p.to_string(), list(Side::Client), list(Side::Server)]);
    }
    table.markdown()
}

/// `openssl speed`'s rates of [`NAMES`], from one run of each of its two
/// command lines. Errors: the command is missing or failed, or its output
/// lacks a figure.
fn openssl_speed(seconds: u64) -> Result<Vec<Speed>> {
    let run = |args: &[&str]| -> Result<String> {
        let out = Command::new("openssl")
            .arg("speed")
            .args(["-seconds", &seconds.to_string()])
            .args(args)
            .output()
            .context("running `openssl speed` (apt-get install openssl)")?;
        ensure!(
            out.status.success(),
            "openssl speed {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let ec = run(&["ecdsap256", "ecdhx25519"])?;
    let aes = run(&["-evp", "aes-128-gcm", "-bytes", "16384"])?;
    let hmac = run(&["-hmac", "sha256", "-bytes", "32"])?;
    // ` 256 bits ecdsa (nistp256)   0.0000s   0.0001s  50887.9  17149.1`
    let numbers = |text: &str, marker: &str| -> Result<Vec<f64>> {
        let line =
            text.lines().find(|l| l.contains(marker)).with_context(|| format!("no `{marker}` line"))?;
        Ok(line.split_whitespace().filter_map(|w| w.trim_end_matches('k').parse::<f64>().ok()).collect())
    };
    let ecdsa = numbers(&ec, "ecdsa (nistp256)")?;
    let x25519 = numbers(&ec, "ecdh (X25519)")?;
    let gcm = numbers(&aes, "AES-128-GCM")?;
    let hmac = numbers(&hmac, "hmac(sha256)")?;
    let last = |v: &[f64], n: usize| -> Result<f64> {
        ensure!(v.len() >= n, "openssl speed printed {v:?}");
        Ok(v[v.len() - n])
    };
    Ok(vec![
        Speed { name: NAMES[0], rate: last(&ecdsa, 2)? },
        Speed { name: NAMES[1], rate: last(&ecdsa, 1)? },
        Speed { name: NAMES[2], rate: last(&x25519, 1)? },
        Speed { name: NAMES[3], rate: last(&gcm, 1)? },
        Speed { name: NAMES[4], rate: last(&hmac, 1)? },
    ])
}

/// Interleaved rounds of this build's libcrypto floor and `openssl speed`.
fn against_openssl(each: Duration, rounds: u32) -> Result<()> {
    let ours = speed::backends()
        .into_iter()
        .find(|b| b.backend.starts_with("openssl-") && !b.backend.starts_with("openssl-aws-lc"))
        .context(
            "this build has no OpenSSL floor: build the system-openssl variant (scripts/speed-check.sh does)",
        )?;
    let version = Command::new("openssl").arg("version").output().context("running `openssl version`")?;
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let theirs = version.split_whitespace().nth(1).unwrap_or("?").to_string();
    if ours.backend != format!("openssl-{theirs}") {
        bail!(
            "the openssl command is OpenSSL {theirs}, this build's floor runs {}: build the system-openssl variant (scripts/speed-check.sh does)",
            ours.backend
        );
    }
    let seconds = each.as_secs().max(1);
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); NAMES.len()];
    let mut rates: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); NAMES.len()];
    for round in 0..rounds {
        eprintln!("round {} of {rounds}", round + 1);
        let (a, b) = if round % 2 == 0 {
            let a = (ours.measure)(Duration::from_secs(seconds))?;
            (a, openssl_speed(seconds)?)
        } else {
            let b = openssl_speed(seconds)?;
            ((ours.measure)(Duration::from_secs(seconds))?, b)
        };
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            ratios[i].push(x.rate / y.rate);
            rates[i].0.push(x.rate);
            rates[i].1.push(y.rate);
        }
    }
    let mut table = Table::new(&[
        "primitive".to_string(),
        format!("{} (floor)", ours.backend),
        "openssl speed".to_string(),
        format!("floor / openssl speed (median of {rounds} rounds)"),
    ]);
    let mut off = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let m = |v: &[f64]| median(v).unwrap_or(f64::NAN);
        let ratio = m(&ratios[i]);
        table.row([
            name.to_string(),
            format!("{:.1}", m(&rates[i].0)),
            format!("{:.1}", m(&rates[i].1)),
            format!("{ratio:.3}"),
        ]);
        if i < JUDGED && !((1.0 - AGREEMENT)..=(1.0 + AGREEMENT)).contains(&ratio) {
            off.push(format!("{name} ({ratio:.3})"));
        }
    }
    out!("{table}")?;
    outln!(
        "\n(operations per second; aes-128-gcm 16384 and hmac: 1000s of bytes per second; the hmac keyed once, \
         as openssl speed keys it)"
    )?;
    ensure!(off.is_empty(), "more than {:.0}% from openssl speed: {}", AGREEMENT * 100.0, off.join(", "));
    outln!("every primitive within {:.0}% of openssl speed", AGREEMENT * 100.0)?;
    Ok(())
}
