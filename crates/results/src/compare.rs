//! `compare`'s results as committed: the cases and slices a run measured,
//! each row's summary (medians, ratios to the row's best with intervals),
//! the environment it ran in, and their Markdown (the tables `compare`
//! prints, the environment bullets, `compare diff`'s table). Read back from
//! a run's `results.json` and `environment.json`.

use std::{collections::BTreeSet, fs, path::Path};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use tls_bench_harness::params::Params;

use crate::table::{Style, Table};

/// An estimate with its 95% interval (see `stats::epoch_ratio`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The point estimate.
    pub estimate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Name of the plaintext floor library: reported beside the TLS libraries,
/// never the row's best.
pub const FLOOR: &str = "plaintext";

/// Whether `library` is a crypto floor (`crypto-floor-<implementation>`,
/// [`tls_bench_harness::libs::crypto_floors`]): reported beside the library whose
/// floor it is, never a column of its own or the row's best.
pub fn is_crypto_floor(library: &str) -> bool {
    library.starts_with("crypto-floor-")
}

/// One case as a worker offers it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseInfo {
    /// The benchmark id, `group/parameters/library`.
    pub id: String,
    /// `group/parameters`: the cases of a row differ by library only.
    pub row: String,
    /// `handshake` or `throughput`.
    pub group: String,
    /// The parameters component of the id.
    pub parameters: String,
    /// The library's name, with version and backend.
    pub library: String,
    /// The build variant of the worker that runs it (`default`, `boringssl`, ...).
    pub variant: String,
    /// Application bytes per iteration (throughput), `None` for a handshake.
    pub bytes_per_iteration: Option<u64>,
    /// Library settings that matter for this case and are not in the id
    /// (s2n-tls: its security policy).
    pub settings: Option<String>,
    /// Why the library skips this case; `None` when it runs.
    pub skip: Option<String>,
    /// The library's crypto floor (a library name), when the build has one.
    #[serde(default)]
    pub crypto_floor: Option<String>,
    /// Whether the library is a plaintext server of another runtime
    /// (Erlang's `gen_tcp` echo, `compare --sockets`): a floor beside the
    /// TLS libraries, shown with its ratio but never the row's best.
    #[serde(default)]
    pub plaintext: bool,
}

/// One slice: a case's iterations in one round, per iteration in ns.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Slice {
    /// The round (0-based).
    pub round: u32,
    /// The epoch (0-based): which worker processes ran it (a run of
    /// `--epochs` E over R rounds puts round `r` in epoch `r / ceil(R/E)`;
    /// 0 in results written before epochs were saved).
    #[serde(default)]
    pub epoch: u32,
    /// Iterations in the slice.
    pub iters: u64,
    /// The case's figure per iteration (handshake: wall time from creation
    /// to both done; throughput: sender + receiver time), ns.
    pub both_ns: f64,
    /// Client (handshake) or sender (throughput) time per iteration, ns.
    pub first_ns: f64,
    /// Server (handshake) or receiver (throughput) time per iteration, ns.
    pub second_ns: f64,
}

/// A case and its slices, one per round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case.
    pub info: CaseInfo,
    /// Its slices, in round order.
    pub slices: Vec<Slice>,
    /// Why the case failed during the run, when it did (a slice's error: a
    /// check that failed, a server that died, in the worker's words): it
    /// ran no more, its slices are not results, its row says `FAILED`.
    #[serde(default)]
    pub failure: Option<String>,
}

/// One library in a row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LibrarySummary {
    /// Library name.
    pub library: String,
    /// Build variant.
    pub variant: String,
    /// Settings not in the id (see [`CaseInfo::settings`]).
    pub settings: Option<String>,
    /// Rounds measured.
    pub rounds: usize,
    /// Median over rounds of the time per iteration, ns.
    pub median_ns: f64,
    /// Median client (handshake) or sender (throughput) time, ns.
    pub first_median_ns: f64,
    /// Median server (handshake) or receiver (throughput) time, ns.
    pub second_median_ns: f64,
    /// Throughput rows: application MB/s (10^6 B/s) at the median time.
    pub mb_per_s: Option<f64>,
    /// Time ratio to the row's best TLS library (>= 1 is slower), over
    /// the epochs with its 95% interval (`stats::epoch_ratio`; runs before
    /// 2026-12-07: the median of the per-round paired ratios with a
    /// bootstrap interval); for the best itself exactly 1. `None` for the
    /// floor.
    pub ratio: Option<Interval>,
    /// Whether this is the row's best TLS library (lowest median time).
    pub best: bool,
    /// The library's crypto floor in the same rounds, and the time beyond
    /// it; `None` without a floor (or for a floor).
    #[serde(default)]
    pub protocol: Option<ProtocolCost>,
}

/// A library's time split into its crypto floor and the rest (protocol
/// cost: parsing, state machine, buffers, allocation, locking), from the
/// same interleaved rounds. Times per iteration, ns; the differences are
/// medians of the per-round differences, so a slow round cancels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProtocolCost {
    /// The floor's library name (`crypto-floor-aws-lc-rs-1.19.0`).
    pub floor: String,
    /// The floor's median time, ns: [`LibrarySummary::median_ns`]'s figure.
    pub floor_ns: f64,
    /// The floor's median client (sender) time, ns.
    pub floor_first_ns: f64,
    /// The floor's median server (receiver) time, ns.
    pub floor_second_ns: f64,
    /// The median over rounds of the library's time less the floor's, ns.
    pub protocol_ns: f64,
    /// The same, client (sender) side, ns.
    pub protocol_first_ns: f64,
    /// The same, server (receiver) side, ns.
    pub protocol_second_ns: f64,
}

impl LibrarySummary {
    /// Whether the ratio's interval excludes 1.0: a clear difference from
    /// the best. False for the best itself and the floor.
    pub fn clear_difference(&self) -> bool {
        !self.best && self.ratio.is_some_and(|r| !r.contains(1.0))
    }
}

/// One row: the libraries of one `group/parameters`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowSummary {
    /// `group/parameters`.
    pub row: String,
    /// `handshake` or `throughput`.
    pub group: String,
    /// The parameters component of the ids.
    pub parameters: String,
    /// TLS libraries, in name order.
    pub libraries: Vec<LibrarySummary>,
    /// The plaintext floor, when built.
    pub floor: Option<LibrarySummary>,
    /// The crypto floors that ran the row, in name order.
    #[serde(default)]
    pub crypto_floors: Vec<LibrarySummary>,
    /// `(library, reason)` of the libraries that skip this row.
    pub skipped: Vec<(String, String)>,
    /// `(library, why)` of the libraries that failed during the run
    /// ([`CaseResult::failure`]).
    #[serde(default)]
    pub failed: Vec<(String, String)>,
}

impl RowSummary {
    /// The row's best TLS library, if any library ran.
    pub fn best(&self) -> Option<&LibrarySummary> {
        self.libraries.iter().find(|l| l.best)
    }
}

/// A `results.json` written by `compare`: the run's summaries and its
/// environment (the slices are not read).
#[derive(Clone, Debug, Deserialize)]
pub struct Run {
    /// The environment, as in `environment.json`.
    pub environment: Environment,
    /// Rounds run.
    pub rounds: usize,
    /// One summary per row, in the run's order.
    pub rows: Vec<RowSummary>,
    /// How the run formed its ratios and intervals, in words (empty in
    /// files without it): [`Intervals::of`] tells the two methods apart.
    #[serde(default)]
    pub method: String,
}

/// How a run's intervals were made: the method its report states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervals {
    /// Over the epochs (`stats::epoch_ratio`): every run since 2026-12-07.
    Epochs,
    /// A percentile bootstrap of the rounds: the runs before.
    RoundBootstrap,
}

impl Intervals {
    /// The method of a run whose `results.json` says `method`.
    pub fn of(method: &str) -> Intervals {
        if method.contains("epochs") { Intervals::Epochs } else { Intervals::RoundBootstrap }
    }

    /// The report's method line.
    fn sentence(self) -> &'static str {
        match self {
            Intervals::Epochs => METHOD,
            Intervals::RoundBootstrap => {
                "Method: interleaved rounds (every library of every row once per round, in a fresh random \
                 order); a cell's ratio is the median of the per-round paired ratios to the row's best \
                 library with a 95% percentile-bootstrap interval (10,000 resamples); ≈ marks an interval \
                 that includes 1.0."
            }
        }
    }
}

impl Run {
    /// Reads a `results.json` written by `compare`. Errors: the file is
    /// missing, unreadable or not such a file (each naming it).
    pub fn read(path: &Path) -> Result<Run> {
        let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("parsing {} (is it a compare results.json?)", path.display()))
    }
}

/// A library as built into the run's workers.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct LibraryInfo {
    /// The library's name, with version and backend (as in benchmark ids).
    pub library: String,
    /// The build variant of the worker that runs it (`default`, `boringssl`, ...).
    pub variant: String,
}

/// The environment of one `compare` run, serialised beside its results.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Environment {
    /// When the run started, UTC, RFC 3339 to the second (`2026-04-20T09:15:02Z`).
    pub date: String,
    /// Wall time of the run, s.
    pub duration_s: f64,
    /// CPU model (/proc/cpuinfo `model name`).
    pub cpu_model: String,
    /// The flags of interest present on the CPU, in a fixed order: among aes,
    /// vaes, pclmulqdq, vpclmulqdq, avx2, avx512f, avx512vl, sha_ni, adx, bmi2.
    pub cpu_flags: Vec<String>,
    /// Logical CPUs available to the process.
    pub cores: usize,
    /// Kernel release (/proc/sys/kernel/osrelease).
    pub kernel: String,
    /// CPU time stolen by the hypervisor over the run, in % of all CPU time
    /// (aggregate `cpu` line of /proc/stat: delta steal / delta total
    /// jiffies); `None` if /proc/stat was unreadable.
    pub steal_percent: Option<f64>,
    /// The rustc that built the binary (`rustc --version`), or `unknown`.
    pub rustc: String,
    /// The allocator ([`crate::host::allocator`]), e.g. `glibc 2.36 malloc`
    /// (`glibc malloc 2.36` in runs before 2026-12-08), or `system malloc`.
    pub allocator: String,
    /// The libraries compared, with their build variants.
    pub libraries: Vec<LibraryInfo>,
    /// The command line of the run.
    pub command: String,
}

impl Environment {
    /// Markdown lines (a bullet list, one `- name: value` per field,
    /// newline-terminated) for the report header.
    pub fn markdown(&self) -> String {
        let flags =
            if self.cpu_flags.is_empty() { "none of interest".to_string() } else { self.cpu_flags.join(" ") };
        let steal = self.steal_percent.map_or_else(|| "unknown".to_string(), |s| format!("{s:.2}%"));
        let libraries = self
            .libraries
            .iter()
            .map(|l| format!("{} ({})", l.library, l.variant))
            .collect::<Vec<_>>()
            .join(", ");
        let mut out = String::new();
        for (name, value) in [
            ("date", self.date.clone()),
            ("duration", format_duration(self.duration_s)),
            ("CPU", format!("{}, {} cores", self.cpu_model, self.cores)),
            ("CPU flags", flags),
            ("CPU steal over the run", steal),
            ("kernel", self.kernel.clone()),
            ("rustc", self.rustc.clone()),
            ("allocator", self.allocator.clone()),
            ("libraries", libraries),
            ("command", format!("`{}`", self.command)),
        ] {
            out.push_str(&format!("- {name}: {value}\n"));
        }
        out
    }
}

/// `seconds` as `1h 02m 03s`, `2m 03s` or `3.4s`.
pub fn format_duration(seconds: f64) -> String {
    if seconds < 60.0 {
        return format!("{seconds:.1}s");
    }
    let s = seconds.round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 { format!("{h}h {m:02}m {s:02}s") } else { format!("{m}m {s:02}s") }
}

/// The method line of the report header.
pub const METHOD: &str = "Method: interleaved rounds (every library of every row once per round, in a fresh random \
                      order) in epochs of new worker processes; a cell's ratio to the row's best library is \
                      the geometric mean over the epochs of each epoch's median per-round paired ratio, with \
                      a 95% Student-t interval over the epochs (docs/method.md); ≈ marks an interval that \
                      includes 1.0.";

/// Bytes of the unit the throughput per-side table is in (64 KiB).
const SIDE_BLOCK_BYTES: f64 = 65536.0;

/// The whole Markdown report: a header (`rounds`, the environment bullets,
/// the method line of `intervals`), then per group (`handshake`, then `throughput`, then
/// any other group in first-seen order) one table of figures and ratios
/// with the skip and settings notes under it, and a smaller per-side table.
///
/// Figures: handshake in µs per handshake (median), throughput in MB/s
/// (10^6 B/s) at the median time; ratios are time ratios to the row's best
/// TLS library (>= 1 is slower) with their 95% interval.
pub fn markdown(rows: &[RowSummary], env: &Environment, rounds: usize, intervals: Intervals) -> String {
    let mut out = String::from("## tls-bench compare\n\n");
    out.push_str(&format!("- rounds: {rounds}\n"));
    out.push_str(&env.markdown());
    out.push_str(&format!("\n{}\n", intervals.sentence()));
    for group in groups(rows) {
        let in_group: Vec<&RowSummary> = rows.iter().filter(|r| r.group == group).collect();
        out.push('\n');
        out.push_str(&group_markdown(&group, &in_group));
    }
    out
}

/// The groups of `rows`: `handshake`, `throughput`, then the others in
/// first-seen order.
pub fn groups(rows: &[RowSummary]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for r in rows {
        if !groups.contains(&r.group) {
            groups.push(r.group.clone());
        }
    }
    groups.sort_by_key(|g| match g.as_str() {
        "handshake" => 0,
        "throughput" => 1,
        _ => 2,
    });
    groups
}

/// Whether figures of `group` are throughputs (MB/s) rather than times (µs):
/// the throughput, the send loop and the socket echo.
fn is_throughput(group: &str) -> bool {
    group == "throughput" || group == "send-loop" || group == "echo"
}

/// The TLS libraries of `rows`, run or skipped, by name.
fn tls_libraries(rows: &[&RowSummary]) -> Vec<String> {
    let names: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| {
            r.libraries
                .iter()
                .map(|l| l.library.as_str())
                .chain(r.skipped.iter().map(|s| s.0.as_str()))
                .chain(r.failed.iter().map(|s| s.0.as_str()))
        })
        .filter(|l| *l != FLOOR && !is_crypto_floor(l))
        .collect();
    names.into_iter().map(str::to_string).collect()
}

/// `text` made safe inside a Markdown table cell.
fn cell_text(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A cell of a library in a row: its figure and ratio, `skipped`, or empty.
fn library_cell(row: &RowSummary, library: &str, throughput: bool) -> String {
    if let Some(l) = row.libraries.iter().find(|l| l.library == library) {
        return figure_cell(l, throughput);
    }
    if row.failed.iter().any(|(lib, _)| lib == library) {
        return "FAILED".to_string();
    }
    if row.skipped.iter().any(|(lib, _)| lib == library) { "skipped".to_string() } else { String::new() }
}

/// `412.3 (1.23x, 1.20–1.26)`, `404.8 (best)`, with ` ≈` when the interval
/// includes 1.0.
fn figure_cell(l: &LibrarySummary, throughput: bool) -> String {
    let figure = if throughput {
        l.mb_per_s.map_or_else(|| "?".to_string(), |m| format!("{m:.1}"))
    } else {
        format!("{:.1}", l.median_ns / 1e3)
    };
    if l.best {
        return format!("{figure} (best)");
    }
    match l.ratio {
        Some(r) => {
            let close = if r.contains(1.0) { " ≈" } else { "" };
            format!("{figure} ({:.2}x, {:.2}–{:.2}){close}", r.estimate, r.low, r.high)
        }
        None => format!("{figure} (no ratio)"),
    }
}

/// The floor's cell: handshake `1.19 (0.15% of the best)`, throughput
/// `10528 (13.0x the best)`; `skipped` or empty when it has no figure.
fn floor_cell(row: &RowSummary, throughput: bool) -> String {
    let Some(f) = &row.floor else {
        return if row.skipped.iter().any(|(lib, _)| lib == FLOOR) {
            "skipped".into()
        } else {
            String::new()
        };
    };
    let best = row.best();
    if throughput {
        let Some(mb) = f.mb_per_s else { return "?".into() };
        match best.and_then(|b| b.mb_per_s) {
            Some(b) => format!("{mb:.0} ({:.1}x the best)", mb / b),
            None => format!("{mb:.0}"),
        }
    } else {
        let us = f.median_ns / 1e3;
        match best {
            Some(b) => format!("{us:.2} ({:.2}% of the best)", f.median_ns / b.median_ns * 100.0),
            None => format!("{us:.2}"),
        }
    }
}

/// A per-side cell `first/second`, µs (throughput: per 64 KiB).
fn side_cell(l: &LibrarySummary, throughput: bool) -> String {
    // Throughput: bytes per iteration from MB/s and the median time.
    let per = match (throughput, l.mb_per_s) {
        (true, Some(mb)) if mb > 0.0 => SIDE_BLOCK_BYTES / (mb * l.median_ns / 1e3),
        _ => 1.0,
    };
    format!("{:.1}/{:.1}", l.first_median_ns * per / 1e3, l.second_median_ns * per / 1e3)
}

/// The Markdown of one group (`rows` are the group's rows): its `###`
/// heading and main table, the skip and settings notes, then the `####`
/// per-side table.
pub fn group_markdown(group: &str, rows: &[&RowSummary]) -> String {
    let throughput = is_throughput(group);
    let libraries = tls_libraries(rows);
    let has_floor = rows.iter().any(|r| r.floor.is_some() || r.skipped.iter().any(|(l, _)| l == FLOOR));
    let mut header: Vec<String> = vec!["parameters".into()];
    header.extend(libraries.iter().map(|l| cell_text(l)));
    if has_floor {
        header.push("plaintext floor".into());
    }
    let ratio = "ratio to the row's best TLS library, 95% CI";
    let mut out = String::new();
    out.push_str(&match group {
        "handshake" => format!("### handshake (median µs per handshake; {ratio})\n\n"),
        "throughput" => format!("### throughput (median MB/s, 10^6 B/s; {ratio})\n\n"),
        "send-loop" => format!(
            "### send-loop (median MB/s of payload, 10^6 B/s; writes (DTLS: datagrams) per second = MB/s x 10^6 / payload bytes; {ratio})\n\n"
        ),
        "echo" => format!(
            "### echo over TCP sockets (median MB/s each way, 10^6 B/s, of all connections; {ratio})\n\n"
        ),
        "socket-handshake" => format!(
            "### socket-handshake: handshakes on new TCP connections, 1-byte echo (median µs of wall time \
             per handshake, the clients together: handshakes/s = 10^6 / µs; {ratio})\n\n"
        ),
        other => format!("### {other} (median µs per iteration; {ratio})\n\n"),
    });
    let mut table = Table::new(&header).style(Style::Spaced);
    for r in rows {
        let mut cells = vec![cell_text(&r.parameters)];
        cells.extend(libraries.iter().map(|l| cell_text(&library_cell(r, l, throughput))));
        if has_floor {
            cells.push(floor_cell(r, throughput));
        }
        table.row(cells);
    }
    out.push_str(&table.markdown());

    let notes = notes(rows);
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&notes);
    }

    if group == "echo" || group == "socket-handshake" {
        // Both ends share the machine: no time per side.
        return out;
    }
    out.push_str(&floor_markdown(group, rows, throughput));
    out.push('\n');
    out.push_str(&match group {
        "throughput" | "send-loop" => {
            format!("#### {group} per side (median µs per 64 KiB: sender / receiver)\n\n")
        }
        "handshake" => "#### handshake per side (median µs: client / server)\n\n".to_string(),
        other => format!("#### {other} per side (median µs per iteration: first / second)\n\n"),
    });
    let mut sides = Table::new(&header).style(Style::Spaced);
    for r in rows {
        let mut cells = vec![cell_text(&r.parameters)];
        for lib in &libraries {
            cells.push(match r.libraries.iter().find(|l| &l.library == lib) {
                Some(l) => side_cell(l, throughput),
                None if r.skipped.iter().any(|(s, _)| s == lib) => "skipped".into(),
                None => String::new(),
            });
        }
        if has_floor {
            cells.push(match &r.floor {
                Some(f) => side_cell(f, throughput),
                None if r.skipped.iter().any(|(s, _)| s == FLOOR) => "skipped".into(),
                None => String::new(),
            });
        }
        sides.row(cells);
    }
    out.push_str(&sides.markdown());
    out
}

/// The `####` table of the libraries' crypto floors and protocol costs
/// (handshakes: µs, each side apart; transfers: the fraction of the
/// floor's rate the library reaches), empty when no library has a floor.
fn floor_markdown(group: &str, rows: &[&RowSummary], throughput: bool) -> String {
    let lines: Vec<(&RowSummary, &LibrarySummary, &ProtocolCost)> = rows
        .iter()
        .flat_map(|r| r.libraries.iter().filter_map(move |l| l.protocol.as_ref().map(|p| (*r, l, p))))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let us = |ns: f64| format!("{:.1}", ns / 1e3);
    // A floor slower than its library means the floor does more (or other)
    // work than the library: a defect of the floor, named under the table.
    let above: Vec<String> = lines
        .iter()
        .filter(|(_, l, p)| p.floor_ns > l.median_ns)
        .map(|(r, l, p)| format!("{} with {} ({})", l.library, p.floor, r.parameters))
        .collect();
    let mut out = String::new();
    if throughput {
        out.push_str(&format!(
            "\n#### {group}: the crypto floor (the same records sealed and opened by the library's AEAD \
             implementation over the same transport, in the same rounds)\n\n"
        ));
        let mut table = Table::new(&[
            "parameters",
            "library",
            "crypto floor",
            "MB/s",
            "floor MB/s",
            "fraction of the floor",
            "sender / receiver",
        ])
        .style(Style::Spaced);
        for (r, l, p) in lines {
            let mb = |ns: f64| l.mb_per_s.map_or("?".into(), |m| format!("{:.0}", m * l.median_ns / ns));
            let frac =
                |floor: f64, lib: f64| if lib > 0.0 { format!("{:.2}", floor / lib) } else { "?".into() };
            table.row([
                cell_text(&r.parameters),
                cell_text(&l.library),
                cell_text(&p.floor),
                mb(l.median_ns),
                mb(p.floor_ns),
                frac(p.floor_ns, l.median_ns),
                format!(
                    "{} / {}",
                    frac(p.floor_first_ns, l.first_median_ns),
                    frac(p.floor_second_ns, l.second_median_ns)
                ),
            ]);
        }
        out.push_str(&table.markdown());
    } else {
        out.push_str(&format!(
            "\n#### {group}: crypto floor and protocol cost (median µs; the floor runs the operation \
             table's primitives through the library's crypto implementation, in the same rounds; \
             protocol = the median over rounds of the library's time less its floor's)\n\n"
        ));
        let mut table = Table::new(&[
            "parameters",
            "library",
            "crypto floor",
            "µs",
            "floor µs",
            "protocol µs (share)",
            "client: floor + protocol",
            "server: floor + protocol",
        ])
        .style(Style::Spaced);
        for (r, l, p) in lines {
            table.row([
                cell_text(&r.parameters),
                cell_text(&l.library),
                cell_text(&p.floor),
                us(l.median_ns),
                us(p.floor_ns),
                format!("{} ({:.0}%)", us(p.protocol_ns), p.protocol_ns / l.median_ns * 100.0),
                format!("{} + {}", us(p.floor_first_ns), us(p.protocol_first_ns)),
                format!("{} + {}", us(p.floor_second_ns), us(p.protocol_second_ns)),
            ]);
        }
        out.push_str(&table.markdown());
    }
    if !above.is_empty() {
        out.push_str(&format!(
            "\n- a floor slower than its library (the floor does other work than the library there: a defect of \
             the floor, not a figure): {}\n",
            above.join("; ")
        ));
    }
    out
}

/// The notes under a group's table: one `- skipped: <library> <parameters>:
/// <reason>` per library and reason (the parameters of every row it skips for
/// that reason, `; `-separated), then one `- <library>: <settings>
/// (<parameters>)` per library and settings (`all rows` when the library
/// ran every row of the group with those settings).
fn notes(rows: &[&RowSummary]) -> String {
    // (library, text) -> parameters, in first-seen order.
    fn add(list: &mut Vec<((String, String), Vec<String>)>, key: (String, String), parameters: &str) {
        match list.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ps)) => {
                if !ps.iter().any(|p| p == parameters) {
                    ps.push(parameters.to_string());
                }
            }
            None => list.push((key, vec![parameters.to_string()])),
        }
    }
    let mut skips = Vec::new();
    let mut settings = Vec::new();
    for r in rows {
        for (library, reason) in &r.skipped {
            add(&mut skips, (library.clone(), reason.clone()), &r.parameters);
        }
        for l in r.libraries.iter().chain(&r.floor) {
            if let Some(s) = &l.settings {
                add(&mut settings, (l.library.clone(), s.clone()), &r.parameters);
            }
        }
    }
    let mut out = String::new();
    for r in rows {
        for (library, why) in &r.failed {
            out.push_str(&format!("- FAILED: {library} {}: {why}\n", r.parameters));
        }
    }
    for ((library, reason), parameters) in &skips {
        out.push_str(&format!("- skipped: {library} {}: {reason}\n", parameters.join("; ")));
    }
    for ((library, setting), parameters) in &settings {
        let where_ =
            if parameters.len() == rows.len() { "all rows".to_string() } else { parameters.join("; ") };
        out.push_str(&format!("- {library}: {setting} ({where_})\n"));
    }
    out
}

/// One library's time relative to another library of the same row, in
/// both runs. Each run's ratios are to its own best library, which may
/// differ between runs (other libraries taking part, or two close ones
/// swapping places); the quotient of two ratios of one run is the time
/// ratio of the two libraries whatever that best was, so runs are compared
/// library to library.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// `group/parameters`.
    pub row: String,
    /// The library.
    pub library: String,
    /// The library it is measured against: of the libraries with a ratio
    /// in both runs, the fastest in run A.
    pub reference: String,
    /// Its time ratio to `reference` in run A (its ratio to A's best over
    /// `reference`'s).
    pub a: f64,
    /// The same in run B.
    pub b: f64,
    /// Whether the row is at the centre of the sweep ([`Params::default`]):
    /// the handshake there and the throughput rows of those parameters.
    pub centre: bool,
}

impl Difference {
    /// `|b - a| / a`, in percent.
    pub fn percent(&self) -> f64 {
        (self.b - self.a).abs() / self.a * 100.0
    }
}

/// The rows of a `results.json` written by `compare`. Errors: the file is
/// missing or not such a file (naming it).
pub fn read_rows(path: &Path) -> Result<Vec<RowSummary>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    serde_json::from_value(v["rows"].clone())
        .with_context(|| format!("{}: no compare rows (is it a compare results.json?)", path.display()))
}

/// For every row of `a` also in `b` with at least two libraries that have
/// a ratio in both runs: each of those libraries but the reference (the
/// fastest of them in `a`), against the reference, in `a`'s order. A row
/// with fewer such libraries has nothing to compare and is left out.
pub fn differences(a: &[RowSummary], b: &[RowSummary]) -> Vec<Difference> {
    let centre = Params::default().to_string();
    let mut out = Vec::new();
    for ra in a {
        let Some(rb) = b.iter().find(|r| r.row == ra.row) else { continue };
        // (library, ratio in A, ratio in B) of the libraries in both runs.
        let both: Vec<(&str, f64, f64)> = ra
            .libraries
            .iter()
            .filter_map(|la| {
                let lb = rb.libraries.iter().find(|l| l.library == la.library)?;
                Some((la.library.as_str(), la.ratio?.estimate, lb.ratio?.estimate))
            })
            .collect();
        let Some(&(reference, ref_a, ref_b)) = both.iter().min_by(|x, y| x.1.total_cmp(&y.1)) else {
            continue;
        };
        for &(library, x, y) in both.iter().filter(|l| l.0 != reference) {
            out.push(Difference {
                row: ra.row.clone(),
                library: library.to_string(),
                reference: reference.to_string(),
                a: x / ref_a,
                b: y / ref_b,
                centre: ra.parameters == centre || ra.parameters.starts_with(&format!("{centre},")),
            });
        }
    }
    out
}

/// The largest [`Difference::percent`] of `diffs` at the sweep centre and
/// over all rows, in percent (0 when there is none).
pub fn largest_differences(diffs: &[Difference]) -> (f64, f64) {
    let max = |centre_only: bool| {
        diffs.iter().filter(|d| d.centre || !centre_only).map(Difference::percent).fold(0.0, f64::max)
    };
    (max(true), max(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(parameters: &str, ratios: &[(&str, f64)]) -> RowSummary {
        RowSummary {
            row: format!("handshake/{parameters}"),
            group: "handshake".into(),
            parameters: parameters.into(),
            libraries: ratios
                .iter()
                .map(|(l, r)| LibrarySummary {
                    library: l.to_string(),
                    variant: "default".into(),
                    settings: None,
                    rounds: 10,
                    median_ns: 1000.0 * r,
                    first_median_ns: 500.0 * r,
                    second_median_ns: 500.0 * r,
                    mb_per_s: None,
                    ratio: Some(Interval { estimate: *r, low: *r, high: *r }),
                    best: *r == 1.0,
                    protocol: None,
                })
                .collect(),
            floor: None,
            crypto_floors: Vec::new(),
            skipped: Vec::new(),
            failed: Vec::new(),
        }
    }

    #[test]
    fn the_floor_table_splits_each_library_and_floors_are_no_columns() {
        let mut r = row(&Params::default().to_string(), &[("x-1", 1.0), ("y-1", 1.5)]);
        r.libraries[0].protocol = Some(ProtocolCost {
            floor: "crypto-floor-z-1".into(),
            floor_ns: 600.0,
            floor_first_ns: 360.0,
            floor_second_ns: 240.0,
            protocol_ns: 400.0,
            protocol_first_ns: 160.0,
            protocol_second_ns: 240.0,
        });
        r.skipped.push(("crypto-floor-q-1".into(), "no ML-KEM".into()));
        let md = group_markdown("handshake", &[&r]);
        assert!(!md.contains("| crypto-floor-q-1 |"), "a floor became a column:\n{md}");
        let line = format!(
            "| {} | x-1 | crypto-floor-z-1 | 1.0 | 0.6 | 0.4 (40%) | 0.4 + 0.2 | 0.2 + 0.2 |",
            r.parameters
        );
        assert!(md.contains(&line), "{md}");
        assert!(!md.contains("| y-1 | crypto-floor"), "{md}");
    }

    #[test]
    fn durations_read_in_hours_minutes_seconds() {
        assert_eq!(format_duration(3723.0), "1h 02m 03s");
        assert_eq!(format_duration(123.0), "2m 03s");
        assert_eq!(format_duration(3.44), "3.4s");
    }

    #[test]
    fn a_missing_or_foreign_results_file_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("tls-bench-results-compare-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let e = format!("{:#}", Run::read(&missing).unwrap_err());
        assert!(e.contains("missing.json"), "{e}");
        let foreign = dir.join("foreign.json");
        fs::write(&foreign, "{\"rows\": 3}").unwrap();
        let e = format!("{:#}", Run::read(&foreign).unwrap_err());
        assert!(e.contains("foreign.json") && e.contains("compare results.json"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn differences_pair_rows_and_libraries_and_mark_the_centre() {
        let centre = Params::default().to_string();
        let a = [row(&centre, &[("x", 1.0), ("y", 1.50)]), row("other", &[("x", 1.0), ("y", 2.0)])];
        let b = [row("other", &[("x", 1.0), ("y", 2.2)]), row(&centre, &[("x", 1.0), ("y", 1.53)])];
        let d = differences(&a, &b);
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|d| d.library == "y" && d.reference == "x"));
        let y_centre = d.iter().find(|d| d.centre && d.library == "y").unwrap();
        assert!((y_centre.percent() - 2.0).abs() < 1e-9);
        let y_other = d.iter().find(|d| !d.centre && d.library == "y").unwrap();
        assert!((y_other.percent() - 10.0).abs() < 1e-9);
        let (centre, all) = largest_differences(&d);
        assert!((centre - 2.0).abs() < 1e-9 && (all - 10.0).abs() < 1e-9, "{centre} {all}");
    }

    #[test]
    fn differences_do_not_depend_on_which_library_was_a_runs_best() {
        // Run A: x and y only (x best). Run B: z too, faster than both; x
        // and y keep their times, so their ratios to the best grow alike.
        let a = [row("p", &[("x", 1.0), ("y", 1.5)])];
        let b = [row("p", &[("x", 1.211), ("y", 1.5 * 1.211), ("z", 1.0)])];
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].library.as_str(), d[0].reference.as_str()), ("y", "x"));
        assert!(d[0].percent() < 1e-9, "{d:?}");
        // A row with one shared library has nothing to compare.
        assert!(differences(&[row("p", &[("x", 1.0)])], &b).is_empty());
    }
}
