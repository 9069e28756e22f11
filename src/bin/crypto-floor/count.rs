//! `crypto-floor count`: the operation table checked against each
//! library's calls, and each floor's instructions against its library's,
//! under Callgrind ([`tls_bench_harness::floor::count`]).

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail, ensure};
use tls_bench_harness::{
    bench::{Case, find_case},
    floor::{
        Backend,
        count::{self, Check, Profile, Sides},
        floor_name, ops,
    },
    harness::TlsLibrary,
    libs::{self, BackendVisitor},
    out, outln,
    params::Params,
    runner::{Prepared, prepare},
    select,
    transport::Side,
    workload::{Figure, Workload},
};
use tls_bench_results::table::{Align, Style, Table};

/// The floor's name prefix ([`tls_bench_harness::floor::floor_name`]).
const FLOOR_PREFIX: &str = "crypto-floor-";

/// This build's libraries and crypto floors.
fn libraries() -> Vec<Box<dyn TlsLibrary>> {
    let mut libs = libs::all();
    libs.extend(libs::crypto_floors());
    libs
}

/// `crypto-floor run-counted ID`: one warm-up handshake, then one in the
/// side regions. Errors: no such id, the library cannot do it, a failed
/// handshake.
pub fn run_one(id: &str) -> Result<()> {
    let libs = libraries();
    let (case, _) = find_case(id, &libs)?;
    match prepare(&case, &libs)? {
        Prepared::Ready { mut runner, .. } => runner.run_counted(1),
        Prepared::Skipped(why) => bail!("{id} is not supported: {why}"),
    }
}

/// The parameter sets `--parameters` selects. Errors: one that is not in
/// the handshake sweep (the error lists how to see them).
fn select_parameters(asked: &[String]) -> Result<Vec<Params>> {
    let sweep = Params::handshake_sweep();
    if asked.is_empty() {
        return Ok(vec![Params::default()]);
    }
    if asked.iter().any(|a| a == "all") {
        return Ok(sweep);
    }
    asked
        .iter()
        .map(|a| {
            sweep.iter().find(|p| p.to_string() == *a).copied().with_context(|| {
                format!(
                    "--parameters {a:?}: not a handshake of the sweep; valid: `all` or one of the \
                     parameters `crypto-floor ops` lists, e.g. {}",
                    Params::default()
                )
            })
        })
        .collect()
}

/// A library to count, with its floor's name and the functions that count
/// its primitives.
struct Counted<'a> {
    library: &'a dyn TlsLibrary,
    floor: String,
    profile: &'static Profile,
}

/// The libraries `--library` selects (default: every one with a floor and
/// a profile), each with its floor. Errors: a name this build lacks, or
/// one with no floor or no profile.
fn select_libraries<'a>(libs: &'a [Box<dyn TlsLibrary>], asked: &[String]) -> Result<Vec<Counted<'a>>> {
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    let candidates: Vec<&dyn TlsLibrary> =
        libs.iter().map(|l| l.as_ref()).filter(|l| !l.name().starts_with(FLOOR_PREFIX)).collect();
    let ids: Vec<String> = candidates.iter().map(|l| l.name()).collect();
    let chosen = select::select(&ids, asked).map_err(|e| anyhow::anyhow!("--library: {e}"))?;
    for lib in candidates {
        if !chosen.contains(&lib.name().as_str()) {
            continue;
        }
        let floor = lib.crypto_floor().filter(|f| libs.iter().any(|l| l.name() == *f));
        let profile = floor.as_deref().and_then(profile_of);
        match (floor, profile) {
            (Some(floor), Some(profile)) => out.push(Counted { library: lib, floor, profile }),
            (floor, _) => left_out.push(match floor {
                None => format!("{} (no crypto floor in this build)", lib.name()),
                Some(f) => format!("{} ({f}: no functions known to count)", lib.name()),
            }),
        }
    }
    for l in &left_out {
        if asked.is_empty() {
            eprintln!("not counted: {l}");
        } else {
            bail!("--library {l}");
        }
    }
    ensure!(!out.is_empty(), "no library of this build can be counted");
    Ok(out)
}

/// The Callgrind profile of the floor named `floor` (`crypto-floor-<backend>`):
/// its backend's [`Backend::profile`], found among this build's backends
/// ([`libs::visit_floor_backends`]); `None` when none is known.
fn profile_of(floor: &str) -> Option<&'static Profile> {
    struct Find<'a> {
        floor: &'a str,
        found: Option<&'static Profile>,
    }
    impl BackendVisitor for Find<'_> {
        fn visit<B: Backend>(&mut self) {
            if floor_name(&B::name()) == self.floor {
                self.found = B::profile();
            }
        }
    }
    let mut find = Find { floor, found: None };
    libs::visit_floor_backends(&mut find);
    find.found
}

/// One side's counts as a table cell: `class counted` each, with the
/// table's number where it differs, then the classes this build does not
/// show ([`count::invisible`]).
fn cell(profile: &count::Profile, checks: &[Check], hidden: &[count::Class]) -> String {
    let mut parts: Vec<String> = checks
        .iter()
        .filter(|c| c.counted > 0 || c.expected > 0 || c.own_checks > 0)
        .map(|c| {
            let mut part = if c.counted == c.expected {
                format!("{} {}", profile.label(c.class), c.counted)
            } else {
                format!("{} {} (table {})", profile.label(c.class), c.counted, c.expected)
            };
            if c.own_checks > 0 {
                part.push_str(&format!(" (and {} checking its own output)", c.own_checks));
            }
            part
        })
        .collect();
    if !hidden.is_empty() {
        let names: Vec<String> = hidden.iter().map(|c| profile.label(*c)).collect();
        parts.push(format!("not counted, no symbols in this build: {}", names.join(", ")));
    }
    parts.join(", ")
}

/// Counts `library` on `params` under Callgrind; `None` (with the reason)
/// when it cannot do them.
fn count_one(
    exe: &Path,
    work: &Path,
    libs: &[Box<dyn TlsLibrary>],
    params: Params,
    library: &str,
) -> Result<std::result::Result<Sides, String>> {
    let case = Case { workload: Workload::HANDSHAKE, params, library: library.to_string() };
    let id = case.id(Figure::Both);
    match prepare(&case, libs)? {
        Prepared::Skipped(why) => Ok(Err(why)),
        Prepared::Ready { .. } => {
            eprintln!("counting {id}");
            Ok(Ok(count::count_sides(exe, &["run-counted".to_string(), id], work)?))
        }
    }
}

/// `crypto-floor count`.
pub fn run(parameters: &[String], asked: &[String]) -> Result<()> {
    let params = select_parameters(parameters)?;
    let libs = libraries();
    let selected = select_libraries(&libs, asked)?;
    count::check_valgrind()?;
    let exe = std::env::current_exe().context("finding this program's path")?;
    let work: PathBuf = std::env::temp_dir();
    let mut failures = Vec::new();
    outln!(
        "Calls to each primitive's functions per handshake, counted by Callgrind on each side \
         (table: the operation table's number, shown where it differs; HMACs may exceed it), \
         and instructions per side beside the crypto floor's.\n"
    )?;
    for p in params {
        let flights = ops::handshake(&p);
        outln!("### {p}\n")?;
        // Printed a line at a time: each library's row as it is counted.
        let table = Table::new(&[
            "library",
            "side",
            "calls counted",
            "instructions",
            "crypto floor",
            "floor / library",
        ])
        .align(3.., Align::Right)
        .style(Style::Dashes);
        out!("{}", table.head())?;
        let mut floors: HashMap<String, std::result::Result<Sides, String>> = HashMap::new();
        for c in &selected {
            let name = c.library.name();
            let sides = match count_one(&exe, &work, &libs, p, &name)? {
                Ok(s) => s,
                Err(why) => {
                    out!("{}", table.line(&[name.clone(), format!("skip: {why}")]))?;
                    continue;
                }
            };
            if !floors.contains_key(&c.floor) {
                let floor = count_one(&exe, &work, &libs, p, &c.floor)?;
                floors.insert(c.floor.clone(), floor);
            }
            let floor = &floors[&c.floor];
            for (i, side) in [Side::Client, Side::Server].into_iter().enumerate() {
                // Classes whose functions this build does not show
                // (the floor performed them, Callgrind saw no call).
                let hidden = match floor {
                    Ok(f) => count::invisible(&count::compare_dump(c.profile, &flights, side, &f[i])?),
                    Err(_) => Vec::new(),
                };
                let checks: Vec<Check> = count::compare_dump(c.profile, &flights, side, &sides[i])
                    .with_context(|| format!("{name}, {side}"))?
                    .into_iter()
                    .filter(|k| !hidden.contains(&k.class))
                    .collect();
                for bad in checks.iter().filter(|k| !k.ok()) {
                    failures.push(format!(
                        "{p}/{name}, {side}: {} called {} times, the table says {}{}{} ({} of {})",
                        c.profile.label(bad.class),
                        bad.counted,
                        if bad.class.exact(side) { "" } else { "at least " },
                        bad.expected,
                        if bad.allowed_fewer > 0 {
                            format!(" less {}", bad.allowed_fewer)
                        } else {
                            String::new()
                        },
                        c.profile.of(bad.class).join(", "),
                        c.profile.name
                    ));
                }
                let ir = sides[i].instructions;
                let (floor_ir, ratio) = match floor {
                    Ok(f) => {
                        let f_ir = f[i].instructions;
                        if f_ir >= ir {
                            failures.push(format!(
                                "{p}/{name}, {side}: its floor {} executes {f_ir} instructions, the library {ir}",
                                c.floor
                            ));
                        }
                        (f_ir.to_string(), format!("{:.3}", f_ir as f64 / ir as f64))
                    }
                    Err(why) => (format!("skip: {why}"), String::new()),
                };
                out!(
                    "{}",
                    table.line(&[
                        name.clone(),
                        side.to_string(),
                        cell(c.profile, &checks, &hidden),
                        ir.to_string(),
                        floor_ir,
                        ratio,
                    ])
                )?;
            }
        }
        // Each floor's own calls: the table's by construction, so a check
        // of the functions the profiles name (those this build shows).
        let mut names: Vec<&String> = floors.keys().collect();
        names.sort();
        for floor in names {
            let Ok(sides) = &floors[floor] else { continue };
            let profile = selected
                .iter()
                .find(|c| c.floor == *floor)
                .map(|c| c.profile)
                .context("a floor of no selected library")?;
            for (i, side) in [Side::Client, Side::Server].into_iter().enumerate() {
                let checks = count::compare_dump(profile, &flights, side, &sides[i])?;
                let hidden = count::invisible(&checks);
                let checks: Vec<Check> = checks.into_iter().filter(|k| !hidden.contains(&k.class)).collect();
                for bad in checks.iter().filter(|k| k.counted != k.expected) {
                    failures.push(format!(
                        "{p}/{floor}, {side}: {} called {} times, the table says {} ({} of {}): the profile's functions miss or double-count it",
                        profile.label(bad.class),
                        bad.counted,
                        bad.expected,
                        profile.of(bad.class).join(", "),
                        profile.name
                    ));
                }
                // No floor of its own: the last two cells blank.
                out!(
                    "{}",
                    table.line(&[
                        floor.clone(),
                        side.to_string(),
                        cell(profile, &checks, &hidden),
                        sides[i].instructions.to_string(),
                    ])
                )?;
            }
        }
        outln!()?;
    }
    if !failures.is_empty() {
        bail!(
            "{} disagreement(s) with the operation table or the floors:\n- {}",
            failures.len(),
            failures.join("\n- ")
        );
    }
    outln!(
        "Every count agrees with the operation table, and every floor is below its library on each side."
    )?;
    Ok(())
}
