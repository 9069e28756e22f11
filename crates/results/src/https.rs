//! The HTTPS tools' results as they are saved, one model per file that its
//! writer fills and its readers read (`https-load`'s report
//! [`SiegeReport`], `https-compare`'s [`CompareRun`], `https-soak`'s
//! [`SoakRun`]; `https-attack`'s [`AttackRun`] holds `https-load`'s report
//! and the server's counts), and the tables: `https-compare`'s siege-style table
//! per row with the independent tools beside ([`CompareRun`]),
//! `https-soak`'s RSS table ([`SoakRun`]) and `https-attack`'s good clients
//! with and without attackers and how each attack ended ([`AttackRun`]).
//! The tools print these same tables; `report results` renders them from
//! the committed files (`results/https/<date>/`).
//!
//! Units: transactions/s; availability %; response time and latencies ms
//! (saved as s and µs); RSS KiB; slopes KiB/min.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tls_bench_harness::params::CertChain;

use crate::{
    compare::Interval,
    sockets::{ErrorKind, Latency, RssTrace, ServerSummary, errors_text, latency_table},
    table::Table,
};

/// What a siege-style run measured: siege's fields (`siege -j`'s names and
/// units), then ours. The default (zeros) stands for a server that failed
/// before it was loaded once.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SiegeReport {
    /// The client library.
    pub client: String,
    /// The parameter set (`Params`'s id text).
    pub parameters: String,
    /// The server's address.
    pub server: String,
    /// `new-connection` or `keep-alive`.
    pub mode: String,
    /// Users at once.
    pub clients: usize,
    /// Response body, bytes.
    pub body_bytes: usize,
    /// Transactions completed: `200 OK` with the exact body.
    pub transactions: u64,
    /// Successful over all attempted, %.
    pub availability: f64,
    /// Seconds of the measured window.
    pub elapsed_time: f64,
    /// Response bodies received, siege's MB (2^20 bytes).
    pub data_transferred: f64,
    /// Mean transaction time, s.
    pub response_time: f64,
    /// Transactions per second.
    pub transaction_rate: f64,
    /// `data_transferred` per second (siege's MB/s, 2^20 B/s).
    pub throughput: f64,
    /// Mean transactions under way: total transaction time over elapsed.
    pub concurrency: f64,
    /// As `transactions`.
    pub successful_transactions: u64,
    /// Transactions that failed (connect, handshake, HTTP, body), counted
    /// by kind in `errors` (which also holds failures outside a
    /// transaction: a user's first connection, a kept connection's close).
    pub failed_transactions: u64,
    /// Longest transaction, s (HdrHistogram, 3 significant digits).
    pub longest_transaction: f64,
    /// Shortest transaction, s (as above).
    pub shortest_transaction: f64,
    /// Response body bytes received intact.
    pub bytes: u64,
    /// Full handshakes completed and checked (those before the window
    /// included).
    pub handshakes_full: u64,
    /// Resumed handshakes completed and checked.
    pub handshakes_resumed: u64,
    /// Transaction latency, µs.
    pub transaction_latency: Latency,
    /// Full handshake latency (connection object to done, TCP apart), µs.
    pub full_handshake_latency: Latency,
    /// Resumed handshake latency, µs.
    pub resumed_handshake_latency: Latency,
    /// CPU seconds the client's threads used.
    pub client_cpu_seconds: f64,
    /// The client's share of its threads' capacity over the window; near 1
    /// the client, not the server, limited the rate.
    pub client_cpu_share: f64,
    /// The client's worker threads.
    pub threads: usize,
    /// Failures by kind.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// The first few failures' messages.
    pub error_examples: Vec<String>,
    /// Whether SIGINT or SIGTERM stopped the run before its end: the
    /// figures hold what was measured until then (the socket runner's `interrupt`).
    #[serde(default)]
    pub interrupted: bool,
    /// When the measured window started, seconds since the Unix epoch.
    #[serde(default)]
    pub window_start_unix_s: Option<f64>,
    /// The client's resident memory per connection, KiB: the process's
    /// peak resident set over the run less its resident set before, over
    /// the users (`load`'s figure; `None`: not measured, not Linux).
    #[serde(default)]
    pub resident_kib_per_connection: Option<f64>,
    /// That peak, KiB.
    #[serde(default)]
    pub resident_peak_kib: Option<u64>,
}

/// An independent load tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// wrk 4 (HTTP/1.1).
    Wrk,
    /// siege 4 (HTTP/1.1).
    Siege,
    /// h2load over HTTP/1.1 (`--h1`; keep-alive only).
    #[serde(rename = "h2load-h1")]
    H2load,
    /// h2load over HTTP/2, chosen by ALPN (keep-alive only).
    #[serde(rename = "h2load-h2")]
    H2loadH2,
}

impl Tool {
    /// Every tool.
    pub const ALL: [Tool; 4] = [Tool::Wrk, Tool::Siege, Tool::H2load, Tool::H2loadH2];

    /// Its name in reports (`h2load-h2`).
    pub fn name(self) -> &'static str {
        match self {
            Tool::Wrk => "wrk",
            Tool::Siege => "siege",
            Tool::H2load => "h2load-h1",
            Tool::H2loadH2 => "h2load-h2",
        }
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a tool measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolRun {
    /// The tool.
    pub tool: Tool,
    /// The command line run.
    pub command: String,
    /// Transactions (requests answered) per second, as the tool reports.
    pub transaction_rate: f64,
    /// Transactions completed.
    pub transactions: u64,
    /// Failed requests or socket errors, as the tool counts them.
    pub failed: u64,
    /// CPU seconds the tool's process used (`getrusage(RUSAGE_CHILDREN)`
    /// across its run).
    #[serde(default)]
    pub cpu_seconds: f64,
    /// Its share of the cores it could use over its process's life; near
    /// 1 the tool, not the server, limited the rate.
    #[serde(default)]
    pub cpu_share: f64,
    /// How busy the servers' cores were over its run (0-1; `None`: not
    /// pinned), set by `https-compare`.
    #[serde(default)]
    pub server_cpu_share: Option<f64>,
}

/// A whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareRun {
    /// The client library.
    pub client: String,
    /// Users at once.
    pub concurrent: usize,
    /// Seconds per server per round.
    pub seconds: f64,
    /// Rounds.
    pub rounds: usize,
    /// Body bytes.
    pub body: usize,
    /// Threads of each side.
    pub threads: usize,
    /// The servers' cores (empty: not pinned).
    #[serde(default)]
    pub server_cores: Vec<usize>,
    /// The clients' cores (empty: not pinned).
    #[serde(default)]
    pub client_cores: Vec<usize>,
    /// nginx's version, when it ran.
    pub nginx: Option<String>,
    /// The rows.
    pub rows: Vec<CompareRow>,
}

/// One row: a parameter set and mode, every server.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareRow {
    /// The parameter set.
    pub parameters: String,
    /// `new-connection` or `keep-alive`.
    pub mode: String,
    /// Each server, fastest first.
    pub servers: Vec<CompareServer>,
    /// Servers skipped, with why.
    pub skipped: Vec<(String, String)>,
    /// The independent tools, each against a server.
    pub external: Vec<ToolResult>,
}

/// One server's figures in a row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareServer {
    /// The library (or `nginx`, `plaintext-tcp`).
    pub server: String,
    /// Transactions per second, each round.
    pub rates: Vec<f64>,
    /// Their median.
    pub rate: f64,
    /// The fastest TLS server's rate over this one's, paired by round (1
    /// for it; below 1 for plaintext HTTP), with its interval.
    pub slower_than_best: Option<Interval>,
    /// The median round's report.
    pub report: SiegeReport,
    /// Failed transactions over all rounds.
    pub failed: u64,
    /// Every failure over all rounds by kind, those outside a transaction
    /// (a kept connection's close) too.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// The first failure's message, if any.
    pub first_error: Option<String>,
    /// The build variant serving it (`default` for this process's).
    #[serde(default)]
    pub variant: String,
    /// The server's own failures by kind over the row, from its summary
    /// (empty for nginx, which gives none): a failed check of what a
    /// connection negotiated, or of the bytes, ends the run instead.
    #[serde(default)]
    pub server_errors: BTreeMap<ErrorKind, u64>,
    /// The server's CPU time per request it answered over the row (every
    /// client's, the tools' too), µs: its threads' CPU seconds over its
    /// requests, from its summary (nginx: its processes' CPU from
    /// `/proc`, over every client's transactions). A figure no client's
    /// cost enters, where the rate may be a client's limit. `None` for a
    /// server that answered nothing.
    #[serde(default)]
    pub server_cpu_us_per_request: Option<f64>,
    /// How busy the servers' cores were (0-1) while `https-load` loaded it,
    /// in the median round (the socket runner's `CoreTimes`): near 1 the
    /// server set the rate. `None` when nothing is pinned.
    #[serde(default)]
    pub server_cpu_share: Option<f64>,
    /// Why the server failed, when it did: it died or stopped answering
    /// during the run (its exit status and last stderr lines), failed to
    /// stop, or counted a failed check of a connection. Its figures (the
    /// rounds before) are then not results: its row says FAILED, it is
    /// no row's best, and the run exits 1 after writing every other row.
    #[serde(default)]
    pub failure: Option<String>,
}

/// An independent tool's figures against one server of a row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolResult {
    /// The server (a library's name, or `nginx`).
    pub server: String,
    /// Transactions per second, each round.
    pub rates: Vec<f64>,
    /// Their median.
    pub rate: f64,
    /// The tool's rate over `https-load`'s on the same server, paired by
    /// round, with its interval.
    pub over_https_load: Option<Interval>,
    /// The median round's run.
    pub run: ToolRun,
}

/// A whole soak.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SoakRun {
    /// The parameter set.
    pub parameters: String,
    /// Seconds each server's load ran (its window; setup and stop apart).
    pub seconds: f64,
    /// Users per server.
    pub concurrent: usize,
    /// `keep-alive` or `new-connection`.
    pub mode: String,
    /// The threshold, KiB/min.
    pub max_growth_kib_per_min: f64,
    /// Each server.
    pub servers: Vec<SoakServer>,
}

/// One server's memory over the soak.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SoakServer {
    /// The server.
    pub server: String,
    /// Its RSS over the run (all its processes).
    pub rss: RssTrace,
    /// Whether the last half grew faster than the threshold; `None` for a
    /// run too short to judge (fewer than the sampler's `MIN_SAMPLES` samples: a
    /// server's first seconds hold its warm-up).
    pub growing: Option<bool>,
    /// The load it served.
    pub load: SiegeReport,
    /// Why the server failed, when it did: it died or stopped during the
    /// soak (its exit status and last stderr lines), or did not stop well.
    /// Its row then says FAILED; the run exits 1 after writing the others.
    #[serde(default)]
    pub failure: Option<String>,
}

/// A client at or above this share of its cores set the rate itself: the
/// rate is the client's limit, not the server's. A server's cores as busy
/// under both clients: each measured the server's own limit.
pub const SATURATED: f64 = 0.9;

/// How far a tool (wrk, siege) and `https-load` may differ on the same
/// server and settings when neither client is saturated ([`SATURATED`]):
/// 10%.
pub const AGREEMENT: f64 = 0.10;

/// Whether `tool`'s rate in a row of `mode` must agree with
/// `https-load`'s ([`CompareRow::agreements`]): wrk's in every row;
/// siege's in the new-connection rows it runs (RSA-3072 and RSA-4096, where
/// the server sets the rate), not on kept connections, where its thread
/// per user holds it to a few thousand transactions/s (siege at 89-97% of
/// its core, the server's at about 20%: docs/https.md). h2load's figures
/// are shown, not judged.
pub fn judged(tool: &str, mode: &str) -> bool {
    tool == "wrk" || (tool == "siege" && mode == "new-connection")
}

/// A tool (wrk, siege) beside `https-load` on one server of a row.
#[derive(Clone, Debug)]
pub struct Agreement {
    /// `parameters mode`.
    pub row: String,
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The tool's rate over ours, paired by round.
    pub ratio: Interval,
    /// The tool's share of its cores (its median round's).
    pub tool_cpu: f64,
    /// `https-load`'s share of its cores (the median round's).
    pub ours_cpu: f64,
    /// How busy the server's cores were under the tool and under
    /// `https-load` (their median rounds'; `None`: not measured).
    pub server_cpu: Option<(f64, f64)>,
}

impl Agreement {
    /// The ratio's estimate lies within [`AGREEMENT`] of 1.
    pub fn agrees(&self) -> bool {
        (self.ratio.estimate - 1.0).abs() <= AGREEMENT
    }

    /// The lower rate came from a client at or above [`SATURATED`] of its
    /// cores: a saturated client can only measure too little, so that rate
    /// is the client's limit and the two need not agree. (Above the other
    /// by more than 10%, the unsaturated one still disagrees.)
    pub fn client_saturated(&self) -> bool {
        if self.ratio.estimate > 1.0 { self.ours_cpu >= SATURATED } else { self.tool_cpu >= SATURATED }
    }

    /// The server's cores were at or above [`SATURATED`] under both
    /// clients: both measured the server's limit, and what differs is the
    /// server's own cost per request under each client's pattern (on
    /// loopback a server pays, inside its `write`, for waking a client that
    /// sleeps between responses: docs/https.md).
    pub fn server_saturated(&self) -> bool {
        self.server_cpu.is_some_and(|(tool, ours)| tool >= SATURATED && ours >= SATURATED)
    }

    /// A saturated lower client or a server saturated under both.
    pub fn excused(&self) -> bool {
        self.client_saturated() || self.server_saturated()
    }

    /// Neither agreeing nor excused.
    pub fn disagrees(&self) -> bool {
        !self.agrees() && !self.excused()
    }

    /// One line for people.
    pub fn line(&self) -> String {
        let (low, cpu) = if self.ratio.estimate > 1.0 {
            ("https-load", self.ours_cpu)
        } else {
            (&*self.tool, self.tool_cpu)
        };
        let verdict = if self.agrees() {
            format!("agree within {:.0}%", AGREEMENT * 100.0)
        } else if let Some((tool, ours)) = self.server_cpu.filter(|_| self.server_saturated()) {
            let server = format!(
                "differ by more than {:.0}%; the server's cores were {:.0}% busy under {} and {:.0}% under https-load",
                AGREEMENT * 100.0,
                tool * 100.0,
                self.tool,
                ours * 100.0
            );
            if self.client_saturated() {
                // Both at their limits: which one set the rate is not
                // known from shares alone (wrk, handshaking, polls its
                // sockets without sleeping: docs/https.md).
                format!(
                    "{server}, and the lower, {low}, used {:.0}% of its cores: the server and that client were \
                     both at their limits",
                    cpu * 100.0
                )
            } else {
                format!("{server}: each measured the server's limit, which differs with the client")
            }
        } else if self.excused() {
            format!(
                "differ by more than {:.0}%; the lower, {low}, used {:.0}% of its cores: its client's limit, \
                 not the server's",
                AGREEMENT * 100.0,
                cpu * 100.0
            )
        } else {
            format!(
                "DISAGREE by more than {:.0}%; the lower, {low}, was not saturated ({:.0}% of its cores)",
                AGREEMENT * 100.0,
                cpu * 100.0
            )
        };
        format!(
            "{} / https-load on {}: {:.3} ({:.3}-{:.3}): {verdict}",
            self.tool, self.server, self.ratio.estimate, self.ratio.low, self.ratio.high
        )
    }
}

impl CompareRow {
    /// Each [`judged`] tool beside `https-load`, per server it loaded.
    pub fn agreements(&self) -> Vec<Agreement> {
        self.external
            .iter()
            .filter(|t| judged(t.run.tool.name(), &self.mode))
            .filter_map(|t| {
                let ours = self.servers.iter().find(|s| s.server == t.server)?;
                Some(Agreement {
                    row: format!("{} {}", self.parameters, self.mode),
                    server: t.server.clone(),
                    tool: t.run.tool.name().to_string(),
                    ratio: t.over_https_load?,
                    tool_cpu: t.run.cpu_share,
                    ours_cpu: ours.report.client_cpu_share,
                    server_cpu: t.run.server_cpu_share.zip(ours.server_cpu_share),
                })
            })
            .collect()
    }
}

impl CompareRun {
    /// Every tool's row whose rate differs from `https-load`'s by more than
    /// [`AGREEMENT`] unexcused ([`Agreement::disagrees`]).
    pub fn disagreements(&self) -> Vec<Agreement> {
        self.rows.iter().flat_map(|r| r.agreements()).filter(Agreement::disagrees).collect()
    }

    /// Per row, the siege-style table of every server (fastest first), the
    /// failures outside transactions, the skips, and the tools beside
    /// `https-load` with wrk's agreement, under `###` titles.
    pub fn markdown(&self) -> String {
        let cores = |c: &[usize]| {
            if c.is_empty() {
                "any core".to_string()
            } else {
                format!("cores {}", c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","))
            }
        };
        let mut out = format!(
            "Siege-style load: client {}, {} users, {} B bodies, {} rounds of {:.0} s per server and tool, \
             {} threads each side (servers on {}, clients on {}){}.\n",
            self.client,
            self.concurrent,
            self.body,
            self.rounds,
            self.seconds,
            self.threads,
            cores(&self.server_cores),
            cores(&self.client_cores),
            self.nginx.as_ref().map_or(String::new(), |v| format!(", nginx {v}"))
        );
        for row in &self.rows {
            out.push_str(&format!("\n### {} {}\n\n", row.parameters, row.mode));
            let mut table = Table::new(&[
                "server",
                "transactions/s",
                "fastest TLS server is x faster (95% CI)",
                "availability %",
                "response time ms",
                "p99 ms",
                "longest s",
                "client CPU %",
                "server CPU %",
                "server CPU µs/request",
                "failed",
            ]);
            for s in &row.servers {
                if s.failure.is_some() {
                    let failed = s.failed.to_string();
                    table.row(
                        [s.server.as_str(), "FAILED"].into_iter().chain(["-"; 8]).chain([failed.as_str()]),
                    );
                    continue;
                }
                let r = &s.report;
                table.row([
                    s.server.clone(),
                    format!("{:.0}", s.rate),
                    s.slower_than_best.as_ref().map_or("-".to_string(), |i| {
                        format!("{:.2} ({:.2}-{:.2})", i.estimate, i.low, i.high)
                    }),
                    format!("{:.2}", r.availability),
                    format!("{:.2}", r.response_time * 1e3),
                    format!("{:.2}", r.transaction_latency.p99_us / 1e3),
                    format!("{:.3}", r.longest_transaction),
                    format!("{:.0}", r.client_cpu_share * 100.0),
                    percent(s.server_cpu_share),
                    s.server_cpu_us_per_request.map_or("-".to_string(), |us| {
                        if us < 100.0 { format!("{us:.1}") } else { format!("{us:.0}") }
                    }),
                    s.failed.to_string(),
                ]);
            }
            out.push_str(&table.markdown());
            for s in &row.servers {
                if let Some(why) = &s.failure {
                    out.push_str(&format!("\nFAILED {}: {why}\n", s.server));
                }
            }
            for s in row.servers.iter().filter(|s| !s.errors.is_empty()) {
                let kinds = by_name(&s.errors);
                out.push_str(&format!(
                    "\nerrors with {}: {} (first: {})\n",
                    s.server,
                    kinds.join(", "),
                    s.first_error.as_deref().unwrap_or("-")
                ));
            }
            for s in row.servers.iter().filter(|s| !s.server_errors.is_empty()) {
                let kinds = by_name(&s.server_errors);
                out.push_str(&format!("\nthe server {} counted: {}\n", s.server, kinds.join(", ")));
            }
            let others: Vec<String> = row
                .servers
                .iter()
                .filter(|s| !s.variant.is_empty() && s.variant != "default" && s.variant != "system")
                .map(|s| format!("{} ({})", s.server, s.variant))
                .collect();
            if !others.is_empty() {
                out.push_str(&format!(
                    "\nserved by a child process (another build's https-serve, or another runtime's server): {}\n",
                    others.join(", ")
                ));
            }
            for (name, why) in &row.skipped {
                out.push_str(&format!("\nskip {name}: {why}\n"));
            }
            if !row.external.is_empty() {
                let mut table = Table::new(&[
                    "server",
                    "tool",
                    "transactions/s",
                    "https-load's",
                    "tool / https-load (95% CI)",
                    "tool CPU %",
                    "https-load CPU %",
                    "server CPU % (tool / https-load)",
                    "failed",
                ]);
                for t in &row.external {
                    let ours = row.servers.iter().find(|s| s.server == t.server);
                    table.row([
                        t.server.clone(),
                        t.run.tool.to_string(),
                        format!("{:.0}", t.rate),
                        ours.map_or("-".to_string(), |s| format!("{:.0}", s.rate)),
                        t.over_https_load.as_ref().map_or("-".to_string(), |i| {
                            format!("{:.3} ({:.3}-{:.3})", i.estimate, i.low, i.high)
                        }),
                        format!("{:.0}", t.run.cpu_share * 100.0),
                        ours.map_or("-".to_string(), |s| format!("{:.0}", s.report.client_cpu_share * 100.0)),
                        format!(
                            "{} / {}",
                            percent(t.run.server_cpu_share),
                            percent(ours.and_then(|s| s.server_cpu_share))
                        ),
                        t.run.failed.to_string(),
                    ]);
                }
                out.push('\n');
                out.push_str(&table.markdown());
                let agreements = row.agreements();
                if !agreements.is_empty() {
                    out.push('\n');
                    for a in agreements {
                        out.push_str(&format!("- {}\n", a.line()));
                    }
                }
            }
        }
        out
    }
}

/// Failure counts as `kind count`, in the order of the kinds' names.
fn by_name(errors: &BTreeMap<ErrorKind, u64>) -> Vec<String> {
    let mut kinds: Vec<(&str, u64)> = errors.iter().map(|(k, n)| (k.name(), *n)).collect();
    kinds.sort();
    kinds.into_iter().map(|(k, n)| format!("{k} {n}")).collect()
}

/// A share as a whole percentage, `-` when unknown.
fn percent(share: Option<f64>) -> String {
    share.map_or("-".to_string(), |s| format!("{:.0}", s * 100.0))
}

impl SoakRun {
    /// The RSS table: one line per server, with its load's rate,
    /// availability and mean response time (siege's, in ms: a server slowed
    /// by the others' load shows there, not only in its rate).
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "RSS under load: {}, {}, {} users per server, {:.0} s; flagged above {} KiB/min over the last half. \
             Every server is loaded at once on the same cores: a server's response time is its own and the \
             others' load.\n\n",
            self.parameters, self.mode, self.concurrent, self.seconds, self.max_growth_kib_per_min
        );
        let mut table = Table::new(&[
            "server",
            "transactions/s",
            "availability %",
            "response time ms",
            "RSS start KiB",
            "peak KiB",
            "end KiB",
            "last-half slope KiB/min",
            "growing",
        ]);
        for s in &self.servers {
            if s.failure.is_some() {
                table.row([s.server.as_str(), "FAILED"].into_iter().chain(["-"; 7]));
                continue;
            }
            table.row([
                s.server.clone(),
                format!("{:.0}", s.load.transaction_rate),
                format!("{:.2}", s.load.availability),
                format!("{:.1}", s.load.response_time * 1e3),
                s.rss.start_kib.to_string(),
                s.rss.peak_kib.to_string(),
                s.rss.end_kib.to_string(),
                s.rss.slope_last_half_kib_per_min.map_or("-".to_string(), |v| format!("{v:+.0}")),
                match s.growing {
                    Some(true) => "**yes**",
                    Some(false) => "no",
                    None => "too short to judge",
                }
                .to_string(),
            ]);
        }
        out.push_str(&table.markdown());
        for s in &self.servers {
            if let Some(why) = &s.failure {
                out.push_str(&format!("\nFAILED {}: {why}\n", s.server));
            }
        }
        out
    }
}

/// How an attack's attempts ended (`https-attack` counts into it).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AttackCount {
    /// Connections tried.
    pub attempts: u64,
    /// Closed or reset by the server.
    pub rejected: u64,
    /// Ended by the attacker (the resets).
    pub dropped: u64,
    /// Still open at the attacker's bound.
    pub still_open: u64,
    /// TCP connects that failed.
    pub connect_failed: u64,
    /// Longest the server took to close one, ms.
    pub longest_close_ms: f64,
}

/// An `https-attack` run (its `--json`), as `https-attack` writes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AttackRun {
    /// Good clients alone.
    pub alone: SiegeReport,
    /// Good clients beside the attackers; `None` when a signal stopped the
    /// run in its first phase.
    #[serde(default)]
    pub beside: Option<SiegeReport>,
    /// Each attack's attempts (none when stopped in the first phase).
    #[serde(default)]
    pub attacks: BTreeMap<String, AttackCount>,
    /// The server's summary (empty when it failed: it gave none).
    pub server: ServerSummary,
    /// Whether a signal stopped the run.
    #[serde(default)]
    pub interrupted: bool,
    /// Why the server failed, when it did: it died or stopped during a
    /// phase (its exit status and last stderr lines; for an attack tool,
    /// the finding), or did not stop well. The phases measured before are
    /// kept; the run exits 1.
    #[serde(default)]
    pub server_failure: Option<String>,
}

impl AttackRun {
    /// The good clients alone and beside the attackers, one line each.
    pub fn good_markdown(&self) -> String {
        let line = |name: &str, r: &SiegeReport| {
            [
                name.to_string(),
                format!("{:.0}", r.transaction_rate),
                format!("{:.2}", r.availability),
                format!("{:.2}", r.transaction_latency.p50_us / 1e3),
                format!("{:.2}", r.transaction_latency.p99_us / 1e3),
                r.failed_transactions.to_string(),
            ]
        };
        let mut table =
            Table::new(&["good clients", "transactions/s", "availability %", "p50 ms", "p99 ms", "failed"]);
        table.row(line("alone", &self.alone));
        match &self.beside {
            Some(b) => table.row(line("beside the attackers", b)),
            None => {
                let why = if self.server_failure.is_some() { "the server failed" } else { "interrupted" };
                let not_run = format!("not run ({why})");
                table.row(["beside the attackers", "-", "-", "-", "-", not_run.as_str()])
            }
        };
        table.markdown()
    }

    /// How each attack's attempts ended.
    pub fn attacks_markdown(&self) -> String {
        let mut table = Table::new(&[
            "attack",
            "attempts",
            "rejected by the server",
            "reset by the attacker",
            "still open at its bound",
            "connect failed",
            "longest to close, ms",
        ]);
        for (attack, c) in &self.attacks {
            table.row([
                attack.clone(),
                c.attempts.to_string(),
                c.rejected.to_string(),
                c.dropped.to_string(),
                c.still_open.to_string(),
                c.connect_failed.to_string(),
                format!("{:.0}", c.longest_close_ms),
            ]);
        }
        table.markdown()
    }

    /// The server's failures by kind, one line.
    pub fn server_line(&self) -> String {
        let kinds = by_name(&self.server.errors);
        format!(
            "the server counted: {}; closed idle {}; over the limit {}; evicted silent {}",
            if kinds.is_empty() { "no failures".to_string() } else { kinds.join(", ") },
            self.server.idle_closed,
            self.server.over_limit,
            self.server.evicted
        )
    }
}

impl AttackCount {
    pub fn add(&mut self, other: &AttackCount) {
        self.attempts += other.attempts;
        self.rejected += other.rejected;
        self.dropped += other.dropped;
        self.still_open += other.still_open;
        self.connect_failed += other.connect_failed;
        self.longest_close_ms = self.longest_close_ms.max(other.longest_close_ms);
    }
}

/// How each tool is run.
impl Tool {
    /// Its command.
    pub fn command(self) -> &'static str {
        match self {
            Tool::Wrk => "wrk",
            Tool::Siege => "siege",
            Tool::H2load | Tool::H2loadH2 => "h2load",
        }
    }

    /// The Debian package holding it.
    pub fn package(self) -> &'static str {
        match self {
            Tool::Wrk => "wrk",
            Tool::Siege => "siege",
            Tool::H2load | Tool::H2loadH2 => "nghttp2-client",
        }
    }

    /// The ALPN protocol h2load must report (`Application protocol:`).
    pub fn application_protocol(self) -> Option<&'static str> {
        match self {
            Tool::Wrk | Tool::Siege => None,
            Tool::H2load => Some("http/1.1"),
            Tool::H2loadH2 => Some("h2"),
        }
    }

    /// Whether it runs the new-connection rows of `cert`'s chain: wrk all
    /// of them; siege (its `connection = close`) those of RSA-3072 and
    /// RSA-4096 only, where the server's private-key operation holds a
    /// core to about 1,000 handshakes/s or fewer. Faster handshakes leave
    /// siege's figure to a 40 ms delayed-ACK stall per connection, not to
    /// the server (at most 100 users / 40 ms = 2,500/s; docs/https.md),
    /// and a 5-s slice at that rate fills loopback's ports with TIME_WAIT
    /// (against nginx siege once ran 30 s past its bound so).
    pub fn new_connections(self, cert: CertChain) -> bool {
        match self {
            Tool::Wrk => true,
            Tool::Siege => matches!(cert, CertChain::Rsa3072 | CertChain::Rsa4096),
            Tool::H2load | Tool::H2loadH2 => false,
        }
    }
}

/// What `https-compare` checks of its own run.
impl CompareRun {
    /// The rows that did not measure what was asked, one line each
    /// (`server, parameters, mode: why`): a server with a failed
    /// transaction, or none completed ([`SiegeReport::unmeasured`]). Empty: every row
    /// holds.
    pub fn unmeasured(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|row| {
                row.servers.iter().filter(|s| s.failure.is_none()).filter_map(move |s| {
                    s.report
                        .unmeasured()
                        .map(|why| format!("{}, {}, {}: {why}", s.server, row.parameters, row.mode))
                })
            })
            .collect()
    }

    /// The servers that failed ([`CompareServer::failure`]), one line each
    /// (`server, parameters, mode: why`). Empty: none did.
    pub fn failures(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|row| {
                row.servers.iter().filter_map(move |s| {
                    s.failure
                        .as_ref()
                        .map(|why| format!("{}, {}, {}: {why}", s.server, row.parameters, row.mode))
                })
            })
            .collect()
    }
}

/// The report printed.
impl SiegeReport {
    /// Why a load's figures do not hold what was asked, if they do not: failed
    /// transactions (by kind), or none completed. `None`: every transaction
    /// asked completed, checked.
    pub fn unmeasured(&self) -> Option<String> {
        let kinds: Vec<String> = self.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        if self.transactions == 0 {
            Some(format!("no transaction completed ({})", kinds.join(", ")))
        } else if self.failed_transactions > 0 {
            Some(format!(
                "{} failed transactions ({}), availability {:.2}%",
                self.failed_transactions,
                kinds.join(", "),
                self.availability
            ))
        } else {
            None
        }
    }

    /// The report as siege prints it, then the percentiles, for people.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}https-load: {} against {}, {}, {} users, {} B bodies, {} ({:.0}% of the client's {} threads)\n\n",
            if self.interrupted { "INTERRUPTED (what was measured until the signal) " } else { "" },
            self.client,
            self.server,
            self.parameters,
            self.clients,
            self.body_bytes,
            self.mode,
            self.client_cpu_share * 100.0,
            self.threads
        );
        let rows: [(&str, String); 12] = [
            ("Transactions", format!("{} hits", self.transactions)),
            ("Availability", format!("{:.2} %", self.availability)),
            ("Elapsed time", format!("{:.2} secs", self.elapsed_time)),
            ("Data transferred", format!("{:.2} MB", self.data_transferred)),
            ("Response time", format!("{:.4} secs", self.response_time)),
            ("Transaction rate", format!("{:.2} trans/sec", self.transaction_rate)),
            ("Throughput", format!("{:.2} MB/sec", self.throughput)),
            ("Concurrency", format!("{:.2}", self.concurrency)),
            ("Successful transactions", self.successful_transactions.to_string()),
            ("Failed transactions", self.failed_transactions.to_string()),
            ("Longest transaction", format!("{:.4}", self.longest_transaction)),
            ("Shortest transaction", format!("{:.4}", self.shortest_transaction)),
        ];
        for (name, value) in rows {
            out.push_str(&format!("{:<25}{value:>14}\n", format!("{name}:")));
        }
        if let Some(kib) = self.resident_kib_per_connection {
            out.push_str(&format!(
                "{:<25}{:>14}\n",
                "Memory per connection:",
                format!(
                    "{kib:.1} KiB ({} users, peak {} MiB)",
                    self.clients,
                    self.resident_peak_kib.unwrap_or(0) / 1024
                )
            ));
        }
        out.push_str(&format!(
            "\nhandshakes {} full + {} resumed\n\n",
            self.handshakes_full, self.handshakes_resumed
        ));
        out.push_str(&latency_table(&[
            ("transaction", &self.transaction_latency),
            ("full handshake", &self.full_handshake_latency),
            ("resumed handshake", &self.resumed_handshake_latency),
        ]));
        out.push_str(&errors_text(&self.errors, &self.error_examples));
        out
    }
}

/// What `https-soak` checks of its own run.
impl SoakRun {
    /// The servers whose load did not measure what was asked, one line each
    /// ([`super::https_compare::unmeasured`]). Empty: every row holds.
    pub fn unmeasured(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| s.failure.is_none())
            .filter_map(|s| s.load.unmeasured().map(|why| format!("{}: {why}", s.server)))
            .collect()
    }

    /// The servers that failed ([`SoakServer::failure`]), one line each
    /// (`server: why`). Empty: none did.
    pub fn failures(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter_map(|s| s.failure.as_ref().map(|why| format!("{}: {why}", s.server)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreement(ratio: f64, wrk_cpu: f64, ours_cpu: f64) -> Agreement {
        Agreement {
            row: "row".into(),
            server: "s".into(),
            tool: "wrk".into(),
            ratio: Interval { estimate: ratio, low: ratio - 0.01, high: ratio + 0.01 },
            tool_cpu: wrk_cpu,
            ours_cpu,
            server_cpu: None,
        }
    }

    #[test]
    fn only_a_saturated_lower_client_excuses_a_difference() {
        // Within 10%: agrees whatever the CPU.
        assert!(agreement(1.08, 0.2, 0.2).agrees() && !agreement(0.93, 1.0, 1.0).disagrees());
        // wrk 25% above: excused only when https-load (the lower) was
        // saturated; wrk's own saturation does not excuse it.
        assert!(!agreement(1.25, 0.99, 0.98).disagrees());
        assert!(agreement(1.25, 0.99, 0.5).disagrees());
        // wrk 40% below: excused only when wrk was saturated.
        assert!(!agreement(0.6, 0.98, 0.3).disagrees());
        assert!(agreement(0.6, 0.5, 0.99).disagrees());
        let line = agreement(0.6, 0.5, 0.99).line();
        assert!(line.contains("DISAGREE") && line.contains("the lower, wrk"), "{line}");
    }

    #[test]
    fn a_server_saturated_under_both_clients_excuses_a_difference() {
        let with = |server_cpu| Agreement { server_cpu, ..agreement(0.89, 0.82, 1.0) };
        // Neither the lower client (wrk at 82%) nor, unmeasured, the server.
        assert!(with(None).disagrees());
        // The server's cores busy under only one of the two: still a disagreement.
        assert!(with(Some((0.99, 0.7))).disagrees() && with(Some((0.7, 0.99))).disagrees());
        let both = with(Some((0.99, 0.97)));
        assert!(both.server_saturated() && !both.disagrees());
        let line = both.line();
        assert!(line.contains("99% busy under wrk") && line.contains("97% under"), "{line}");
        assert!(line.ends_with("each measured the server's limit, which differs with the client"), "{line}");
        // The lower client saturated as well (wrk polling its handshakes):
        // excused, and the line names both, the server's cores first.
        let spinning = Agreement { server_cpu: Some((0.99, 1.0)), ..agreement(0.84, 0.98, 0.15) };
        assert!(!spinning.disagrees());
        let line = spinning.line();
        assert!(
            line.contains("; the server's cores were 99% busy under wrk and 100% under https-load, and the lower, wrk, used 98% of its cores: the server and that client were both at their limits"),
            "{line}"
        );
    }
}
