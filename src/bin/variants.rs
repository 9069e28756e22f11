//! `variants`: the build variants ([`tls_bench::variants`]): lists them,
//! and runs `cargo bench` once per variant so that every stack lands in
//! one Criterion report (what `scripts/bench-all.sh` runs).
//!
//! ```text
//! variants list
//! variants bench [CARGO BENCH ARGUMENTS]...
//! ```
//!
//! `bench` runs the variants `TLS_BENCH_VARIANTS` picks (names,
//! space-separated; default all but the compare-only ones), in table
//! order, each as `cargo bench <variant's arguments> <ARGUMENTS>`; an
//! unknown name is an error before any of them runs. It goes on after a
//! variant fails, then prints the variants run and failed. Exit status: 0
//! when every variant's `cargo bench` succeeded, 1 otherwise.

use std::{ffi::OsString, process::ExitCode};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use tls_bench::variants::{self, Scope, VARIANTS, Variant};
use tls_bench_harness::{error::exit_code, outln, parsed_or_exit};

#[derive(Parser)]
#[command(about = "The build variants: list them, or run cargo bench in each")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lists the variants, one a line: name, cargo arguments, stacks.
    List,
    /// Runs `cargo bench ARGUMENTS` once per variant (TLS_BENCH_VARIANTS
    /// picks some), then prints which ran and which failed; exits 1 when
    /// any failed. Every argument goes to cargo unchanged, `--` included
    /// (`variants bench -- --test`); extra `--config aws-lc-config/<lib>.toml`
    /// arguments apply to every variant.
    #[command(disable_help_flag = true)]
    Bench {
        /// Arguments for `cargo bench`, e.g. `--bench handshake -- --quick`.
        #[arg(num_args = 0.., trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

fn main() -> ExitCode {
    let cli = parsed_or_exit!(Cli::try_parse_from(raw_double_dash(std::env::args_os().collect())));
    let result = match cli.command {
        Cmd::List => list().map(|()| true),
        Cmd::Bench { args } => bench(&args),
    };
    match result {
        Ok(false) => ExitCode::FAILURE,
        result => exit_code(result.map(drop)),
    }
}

/// `variants list`. Errors: stdout cannot be written.
fn list() -> Result<()> {
    for v in VARIANTS {
        outln!("{}", line(v))?;
    }
    Ok(())
}

/// `argv` with a `--` right after `bench` doubled: clap takes the first
/// `--` as its own end of options, and cargo must see the one the user
/// typed (`variants bench -- --test` is `cargo bench -- --test`).
fn raw_double_dash(mut argv: Vec<OsString>) -> Vec<OsString> {
    if argv.get(1).is_some_and(|a| a == "bench") && argv.get(2).is_some_and(|a| a == "--") {
        argv.insert(2, "--".into());
    }
    argv
}

/// `variants list`'s line for `v`: name, cargo arguments (`(none)` for the
/// default build), stacks, and `[compare only]` for [`Scope::CompareOnly`].
fn line(v: &Variant) -> String {
    let args = v.cargo_args();
    let args = if args.is_empty() { "(none)".to_string() } else { args.join(" ") };
    let scope = if v.scope == Scope::CompareOnly { " [compare only]" } else { "" };
    format!("{}\t{args}\t{}{scope}", v.name, v.stacks)
}

/// `variants bench`: `cargo bench <variant> <args>` for each picked
/// variant. Returns whether all succeeded. Errors: `TLS_BENCH_VARIANTS`
/// names an unknown variant (before anything runs).
fn bench(args: &[OsString]) -> Result<bool> {
    let picked = variants::from_env()?;
    let shown: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let (mut ran, mut failed) = (Vec::new(), Vec::new());
    for v in picked {
        let mut words = vec!["cargo bench".to_string()];
        words.extend(v.cargo_args());
        words.extend(shown.iter().cloned());
        eprintln!("=== variant {}: {}", v.name, words.join(" "));
        let status = v.cargo(&["bench"]).args(args).status().context("running cargo");
        match status {
            Ok(s) if s.success() => ran.push(v.name),
            Ok(_) => failed.push(v.name),
            Err(e) => {
                eprintln!("error: variant {}: {e:#}", v.name);
                failed.push(v.name);
            }
        }
    }
    let none = || "none".to_string();
    eprintln!("=== variants run: {}", if ran.is_empty() { none() } else { ran.join(" ") });
    if !failed.is_empty() {
        eprintln!("=== variants FAILED: {}", failed.join(" "));
    }
    Ok(failed.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml_edit::DocumentMut;

    /// Every feature a variant names is one of Cargo.toml's: a typo fails
    /// here, not in a long run.
    #[test]
    fn variants_name_real_features() {
        let repo = variants::repo();
        let doc: DocumentMut = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap().parse().unwrap();
        let features = doc["features"].as_table().unwrap();
        assert!(features.contains_key(variants::TOOLS_FEATURE));
        for v in VARIANTS {
            for f in v.features.unwrap_or_default() {
                assert!(features.contains_key(f), "variant {}: no feature {f}", v.name);
            }
        }
    }

    #[test]
    fn a_leading_double_dash_reaches_cargo() {
        let parse = |args: &[&str]| {
            let argv = std::iter::once("variants").chain(args.iter().copied()).map(OsString::from).collect();
            match Cli::parse_from(raw_double_dash(argv)).command {
                Cmd::Bench { args } => args.into_iter().map(|a| a.into_string().unwrap()).collect::<Vec<_>>(),
                Cmd::List => panic!("list"),
            }
        };
        assert_eq!(parse(&["bench", "--", "--test"]), ["--", "--test"]);
        assert_eq!(
            parse(&["bench", "--bench", "handshake", "--", "--quick"]),
            ["--bench", "handshake", "--", "--quick"]
        );
        assert_eq!(parse(&["bench", "--help"]), ["--help"]);
        assert!(parse(&["bench"]).is_empty());
    }

    #[test]
    fn the_list_names_arguments_and_scope() {
        let lines: Vec<String> = VARIANTS.iter().map(line).collect();
        assert!(lines[0].starts_with("default\t(none)\t"), "{}", lines[0]);
        assert!(
            lines.iter().any(|l| l
                .starts_with("openssl-aws-lc\t--no-default-features --features openssl-aws-lc,tools")
                && l.ends_with("[compare only]"))
        );
    }
}
