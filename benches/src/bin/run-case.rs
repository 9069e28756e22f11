//! `run-case`: runs one benchmark case once, as the instruction-count
//! benchmark (`benches/benches/instructions.rs`) has Callgrind count it.
//!
//! Configures the case's library, runs one warm-up iteration (one-time and
//! lazy initialisation happen there, outside the count), then
//! `--iterations` measured iterations inside the regions Callgrind's
//! `--toggle-collect` selects ([`tls_bench_harness::callgrind`]), each checked as in
//! the wall-time benchmarks. Outside Callgrind it only runs and checks.
//!
//! ```text
//! run-case [--iterations N] [--fixed-random] ID
//! run-case --cpu-features
//! ```
//!
//! `--fixed-random` fixes rustls's protocol random values
//! (`tls_bench_harness::libs::rustls::config::fix_random`) in builds of rustls 0.22 and
//! later; rustls 0.20 and 0.21 (historical-perf builds, cfg `rustls_0_21`)
//! have no crypto providers to draw them from a constant, so they run
//! without fixed randomness, as the other libraries always do (the flag is
//! accepted and changes nothing).
//!
//! `--cpu-features` prints the x86-64 features this process sees (CPUID, as
//! the libraries' dispatch reads it): under Valgrind they differ from the
//! machine's (no AVX-512, no VAES), so the libraries take other code paths.
//!
//! Exit status: 0 when every iteration ran and checked; 2 when the library
//! cannot do the case (the reason on stderr); 1 on any other error.

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use tls_bench_harness::{
    bench::find_case,
    error::exit_code,
    libs, outln, parsed_or_exit,
    runner::{Prepared, prepare},
};

#[derive(Parser)]
#[command(about = "Runs one benchmark case once (what the instruction counts measure)")]
struct Args {
    /// Measured iterations (handshakes, or transfers of 64 KiB).
    #[arg(long, default_value_t = 1)]
    iterations: u64,
    /// rustls 0.22 and later only: draw the protocol's random bytes from a
    /// constant (`tls_bench_harness::libs::fix_random`). Other libraries,
    /// and rustls 0.20/0.21, cannot: for them it changes nothing.
    #[arg(long)]
    fixed_random: bool,
    /// Print the CPU features this process sees and exit.
    #[arg(long, exclusive = true)]
    cpu_features: bool,
    /// The benchmark id, `group/parameters/library`, e.g.
    /// `handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/openssl-3.6.3`.
    #[arg(required_unless_present = "cpu_features")]
    id: Option<String>,
}

fn main() -> ExitCode {
    let args = parsed_or_exit!(Args::try_parse());
    let Some(id) = args.id else {
        return exit_code(outln!("{}", cpu_features()).map_err(Into::into));
    };
    if args.fixed_random {
        libs::fix_random();
    }
    // The crypto floors too (`crypto-floor count` counts them beside their
    // libraries).
    let mut libs = libs::all();
    libs.extend(libs::crypto_floors());
    let prepared = find_case(&id, &libs)
        .and_then(|(case, _)| prepare(&case, &libs).with_context(|| format!("case {id}")));
    match prepared {
        Ok(Prepared::Skipped(why)) => {
            eprintln!("error: {id} is not supported: {why}");
            ExitCode::from(2)
        }
        // Every error names the case it came from.
        Ok(Prepared::Ready { mut runner, .. }) => {
            exit_code(runner.run_counted(args.iterations).with_context(|| format!("case {id}")))
        }
        Err(e) => exit_code(Err(e)),
    }
}

/// The x86-64 features the TLS libraries' dispatch looks at, each `+name`
/// when this process sees it and `-name` when not.
fn cpu_features() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! features {
            ($($f:tt),*) => { [$((($f), std::arch::is_x86_feature_detected!($f))),*] };
        }
        let seen = features!(
            "aes",
            "pclmulqdq",
            "avx",
            "avx2",
            "bmi2",
            "adx",
            "sha",
            "avx512f",
            "vaes",
            "vpclmulqdq"
        );
        seen.iter()
            .map(|(name, on)| format!("{}{name}", if *on { '+' } else { '-' }))
            .collect::<Vec<_>>()
            .join(" ")
    }
    #[cfg(not(target_arch = "x86_64"))]
    String::from("(not x86-64)")
}
