//! The instruction-count suite as data: for each case of
//! [`bench::instruction_cases`] and each figure, what Callgrind counts
//! ([`Region`]), how many iterations, the `run-case` command line and the
//! Callgrind options. `benches/benches/instructions.rs` hands these to gungraun;
//! `report --instructions` reads the counts back ([`crate::gungraun_json`])
//! and divides by [`Counted::units`].

use std::env;

use anyhow::{Result, bail};

use crate::{
    bench::{self, Case, Figure},
    callgrind::Region,
    harness::TlsLibrary,
    side::Side,
    workload::Both,
};

/// Environment variable selecting the iterations per count: `full`
/// (default; [`HANDSHAKE_ITERATIONS`], [`TRANSFER_ITERATIONS`]) or `quick`
/// (one of each, for CI: the same paths, noisier figures).
pub const MODE_ENV: &str = "TLS_BENCH_INSTRUCTIONS";

/// Handshakes counted per handshake figure: one handshake's count moves by
/// up to 0.7% with the random values of its signatures and key shares; the
/// mean of 20 moves by under 0.05% (README, "Instruction counts").
pub const HANDSHAKE_ITERATIONS: u64 = 20;

/// Transfers of [`crate::workload::BLOCK_BYTES`] counted per transfer figure.
pub const TRANSFER_ITERATIONS: u64 = 4;

/// Iterations per count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// [`HANDSHAKE_ITERATIONS`] and [`TRANSFER_ITERATIONS`].
    Full,
    /// One iteration per count.
    Quick,
}

impl Mode {
    /// The mode named by [`MODE_ENV`]: `full` (or unset) or `quick`.
    /// Errors: another value.
    pub fn from_env() -> Result<Mode> {
        match env::var(MODE_ENV).as_deref() {
            Ok("full") | Err(env::VarError::NotPresent) => Ok(Mode::Full),
            Ok("quick") => Ok(Mode::Quick),
            Ok(v) => bail!("{MODE_ENV}={v:?}: valid values are full and quick"),
            Err(e) => bail!("{MODE_ENV}: {e}"),
        }
    }
}

/// One count: a case, one of its figures, the iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// The case.
    pub case: Case,
    /// Which figure: both sides (for a handshake, the whole handshake), or
    /// one side ([`Figure::First`]: the client, or the sender of a transfer).
    pub figure: Figure,
    /// Iterations counted together.
    pub iterations: u64,
}

/// Every count of the suite for `libs` in `mode`: each case of
/// [`bench::instruction_cases`], each figure.
pub fn suite(libs: &[Box<dyn TlsLibrary>], mode: Mode) -> Vec<Counted> {
    bench::instruction_cases(libs)
        .into_iter()
        .flat_map(|case| {
            [Figure::Both, Figure::First, Figure::Second].map(|figure| {
                let iterations = match (mode, case.workload.kind().both()) {
                    (Mode::Quick, _) => 1,
                    (Mode::Full, Both::Wall) => HANDSHAKE_ITERATIONS,
                    (Mode::Full, _) => TRANSFER_ITERATIONS,
                };
                Counted { case: case.clone(), figure, iterations }
            })
        })
        .collect()
}

impl Counted {
    /// The benchmark id of this figure ([`Case::id`]).
    pub fn id(&self) -> String {
        self.case.id(self.figure)
    }

    /// What Callgrind counts for this figure.
    pub fn region(&self) -> Region {
        let first = self.case.workload.first_side();
        let side = |s: Side| if s == Side::Client { Region::Client } else { Region::Server };
        match (self.case.workload.kind().both(), self.figure) {
            (Both::Wall, Figure::Both) => Region::Handshake,
            (Both::Sides, Figure::Both) => Region::BothSides,
            (Both::First, Figure::Both) | (_, Figure::First) => side(first),
            (_, Figure::Second) => side(first.peer()),
        }
    }

    /// The units the count is divided by: handshakes, or application bytes
    /// moved.
    pub fn units(&self) -> u64 {
        self.iterations * self.case.workload.bytes_per_iteration().unwrap_or(1)
    }

    /// The arguments of `run-case` for this count.
    pub fn run_case_args(&self) -> Vec<String> {
        vec!["--iterations".into(), self.iterations.to_string(), "--fixed-random".into(), self.id()]
    }

    /// Callgrind's options for this count: nothing counted outside the
    /// region's functions, no cache simulation (instructions are the
    /// figure; the simulation would more than double each run's time), and
    /// nothing instrumented before the counted iterations
    /// ([`crate::callgrind::INSTR_AT_START`]).
    pub fn callgrind_args(&self) -> Vec<String> {
        let mut args = vec!["--cache-sim=no".to_string(), "--collect-atstart=no".to_string()];
        args.extend(crate::callgrind::INSTR_AT_START.map(str::to_string));
        args.extend(self.region().patterns().iter().map(|p| format!("--toggle-collect={p}")));
        args
    }

    /// gungraun's id for this count (letters, digits and `_` only):
    /// the parameters and library of the id, each other character `_`,
    /// e.g. `server_auth_TLSv1_3_TLS_AES_128_GCM_SHA256_x25519_ECDSA_P256_openssl_3_6_3`.
    pub fn gungraun_id(&self) -> String {
        let text = format!("{}_{}", self.case.parameters(), self.case.library);
        text.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
    }

    /// The `binary_benchmark_group!` of `benches/benches/instructions.rs` this
    /// count belongs to: `handshake` or `throughput` (the transfers).
    pub fn gungraun_bench_group(&self) -> &'static str {
        if self.case.workload == bench::Workload::HANDSHAKE { "handshake" } else { "throughput" }
    }

    /// The path gungraun lists and filters this count by:
    /// `instructions::BENCH_GROUP::FIGURE_GROUP::ID`, e.g.
    /// `instructions::handshake::handshake_client::server_auth_..._openssl_3_6_3`.
    pub fn gungraun_path(&self) -> String {
        format!(
            "instructions::{}::{}::{}",
            self.gungraun_bench_group(),
            self.gungraun_group(),
            self.gungraun_id()
        )
    }

    /// gungraun's name for the figure's group, e.g. `handshake_client`.
    pub fn gungraun_group(&self) -> String {
        self.case.workload.group(self.figure).replace('-', "_")
    }
}

/// gungraun's environment variable holding the filter when the command line
/// has none.
pub const GUNGRAUN_FILTER_ENV: &str = "GUNGRAUN_FILTER";

/// gungraun-runner 0.20's options whose value may follow as the next
/// argument (`--home DIR`): one value, or (the `0..`/`1..` ones, second list)
/// every argument up to the next option. The others take theirs after `=`.
const GUNGRAUN_ONE_VALUE: &[&str] = &[
    "--bbv-args",
    "--cachegrind-args",
    "--cachegrind-limits",
    "--callgrind-args",
    "--callgrind-limits",
    "--default-tool",
    "--dhat-args",
    "--dhat-limits",
    "--drd-args",
    "--env-clear",
    "--format",
    "--helgrind-args",
    "--home",
    "--massif-args",
    "--memcheck-args",
    "--output-format",
    "--perf-args",
    "--perf-bin",
    "--perf-events",
    "--perf-limits",
    "--perf-record-args",
    "--perf-run-mode",
    "--tool-runner",
    "--tool-runner-args",
    "--tool-runner-dest",
    "--tool-runner-root",
    "--valgrind-args",
    "--valgrind-bin",
    "--workspace-root",
];
const GUNGRAUN_MANY_VALUES: &[&str] = &[
    "--color",
    "--logfile",
    "--shuffle-seed",
    "--skip",
    "--test-threads",
    "-Z",
    "--cachegrind-metrics",
    "--callgrind-metrics",
    "--dhat-metrics",
    "--drd-metrics",
    "--helgrind-metrics",
    "--memcheck-metrics",
    "--tools",
];

/// The filter of the instruction bench's arguments (without the program
/// name), read as gungraun-runner reads it: the first positional argument,
/// else `env_filter` ([`GUNGRAUN_FILTER_ENV`]'s value); `None`: every
/// count. A wildcard pattern ([`wildcard_matches`]) on
/// [`Counted::gungraun_path`].
pub fn gungraun_filter<I: IntoIterator<Item = String>>(
    args: I,
    env_filter: Option<String>,
) -> Option<String> {
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        if arg == "--" {
            return args.next().or(env_filter);
        }
        if !arg.starts_with('-') || arg == "-" {
            return Some(arg);
        }
        if GUNGRAUN_ONE_VALUE.contains(&arg.as_str()) {
            args.next_if(|a| !a.starts_with('-'));
        } else if GUNGRAUN_MANY_VALUES.contains(&arg.as_str()) {
            while args.next_if(|a| !a.starts_with('-')).is_some() {}
        }
    }
    env_filter
}

/// Whether the wildcard `pattern` matches all of `text`, as gungraun's
/// filter does: `*` any run of characters, `?` one character, `[abc]`,
/// `[a-z]` one of a set (`[!...]` one not in it), `\` takes the next
/// character literally.
pub fn wildcard_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // The pattern positions reachable after each character of the text.
    let mut states = closure(&p, vec![0]);
    for &c in &t {
        let mut next = Vec::new();
        for &i in &states {
            match p.get(i) {
                Some('*') => next.push(i),
                Some('?') => next.push(i + 1),
                Some('[') => match class(&p, i, c) {
                    Some((true, end)) => next.push(end),
                    Some((false, _)) => {}
                    None if c == '[' => next.push(i + 1),
                    None => {}
                },
                Some('\\') if p.get(i + 1) == Some(&c) => next.push(i + 2),
                Some('\\') => {}
                Some(&l) if l == c => next.push(i + 1),
                _ => {}
            }
        }
        states = closure(&p, next);
        if states.is_empty() {
            return false;
        }
    }
    states.contains(&p.len())
}

/// `states` with every position past a run of `*` added, deduplicated.
fn closure(p: &[char], mut states: Vec<usize>) -> Vec<usize> {
    let mut k = 0;
    while k < states.len() {
        if p.get(states[k]) == Some(&'*') {
            states.push(states[k] + 1);
        }
        k += 1;
    }
    states.sort_unstable();
    states.dedup();
    states
}

/// The class opening at `p[open]` (`[`) against `c`: whether it matches,
/// and the position after its `]`; `None` when no `]` closes it (the `[`
/// is then a literal).
fn class(p: &[char], open: usize, c: char) -> Option<(bool, usize)> {
    let mut i = open + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while let Some(&x) = p.get(i) {
        if x == ']' && !first {
            return Some((hit != negated, i + 1));
        }
        first = false;
        let x = if x == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            x
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            hit |= (x..=p[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= x == c;
            i += 1;
        }
    }
    None
}

/// Errors when two counts of `suite` would have the same gungraun group and
/// id (gungraun needs them unique; the sanitised ids could collide).
pub fn check_unique(suite: &[Counted]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for c in suite {
        if !seen.insert((c.gungraun_group(), c.gungraun_id())) {
            bail!("{} and another count share the gungraun id {}", c.id(), c.gungraun_id());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Workload;

    #[test]
    fn the_suite_counts_each_side_of_every_case_with_unique_ids() {
        let libs = crate::libs::all();
        if libs.is_empty() {
            // The harness alone (`cargo test -p tls-bench-harness`): no library's feature is on.
            eprintln!("no library in this build: nothing to count");
            return;
        }
        let suite = suite(&libs, Mode::Full);
        check_unique(&suite).unwrap();
        assert_eq!(suite.len(), bench::instruction_workloads().len() * libs.len() * 3);
        let transfer = suite.iter().find(|c| c.case.workload != Workload::HANDSHAKE).unwrap();
        assert_eq!(transfer.units(), TRANSFER_ITERATIONS * crate::workload::BLOCK_BYTES as u64);
        let sender = Counted { figure: Figure::First, ..transfer.clone() };
        assert_eq!(sender.region(), Region::Server);
        assert!(sender.id().starts_with("throughput-send/"));
        let handshake = &suite[0];
        assert_eq!(handshake.region(), Region::Handshake);
        assert_eq!(handshake.units(), HANDSHAKE_ITERATIONS);
        assert!(handshake.gungraun_id().chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        assert!(handshake.gungraun_path().starts_with("instructions::handshake::handshake::server_auth_"));
        let mut wanted = vec!["--cache-sim=no", "--collect-atstart=no"];
        wanted.extend(crate::callgrind::INSTR_AT_START);
        wanted.push("--toggle-collect=*tls_bench_harness::callgrind::handshake*");
        assert_eq!(handshake.callgrind_args(), wanted);
    }

    #[test]
    fn reads_the_filter_and_matches_as_gungraun_does() {
        let f = |args: &[&str], env: Option<&str>| {
            gungraun_filter(args.iter().map(|s| s.to_string()), env.map(String::from))
        };
        assert_eq!(f(&["--bench"], None), None);
        assert_eq!(f(&["--bench"], Some("*x*")).as_deref(), Some("*x*"));
        assert_eq!(f(&["--bench", "nosuch"], Some("*x*")).as_deref(), Some("nosuch"));
        assert_eq!(f(&["--bench", "--home", "/tmp/h", "*a*"], None).as_deref(), Some("*a*"));
        assert_eq!(f(&["--bench", "--parallel=2", "--save-baseline=b", "*a*"], None).as_deref(), Some("*a*"));
        assert_eq!(f(&["--bench", "--callgrind-metrics", "ir", "dr"], None), None);
        assert_eq!(f(&["--bench", "--list", "*a*"], None).as_deref(), Some("*a*"));
        let path = "instructions::handshake::handshake_client::server_auth_TLSv1_3_openssl_3_6_3";
        for yes in [
            "*openssl*",
            "*::handshake_client::*",
            "instructions::*",
            "*3_6_?",
            "*[o]penssl*",
            "*[a-p]penssl*",
            "*[!x]penssl*",
            path,
        ] {
            assert!(wildcard_matches(yes, path), "{yes}");
        }
        for no in
            ["openssl", "nosuch", "*rustls*", "*3_6_", "*[!o]penssl_3*", "*[x-z]penssl*", "instructions"]
        {
            assert!(!wildcard_matches(no, path), "{no}");
        }
        assert!(wildcard_matches("a\\*b", "a*b") && !wildcard_matches("a\\*b", "axb"));
        assert!(wildcard_matches("", "") && wildcard_matches("**", "") && !wildcard_matches("[", "x"));
    }
}
