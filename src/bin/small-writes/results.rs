//! A small-writes run's results: what is saved as JSON and CSV, and the
//! Markdown tables printed from them.

use std::{fs, path::Path};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tls_bench::{criterion_json::Measurement, writes::Wire};

use crate::latency::Percentiles;

/// One run: how it was made, and one row per case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// When the run ended (UTC, RFC 3339).
    pub date: String,
    /// The CPU it ran on.
    pub host: String,
    /// Recorded iterations per case.
    pub iterations: u64,
    /// Discarded warm-up iterations per case.
    pub warmup: u64,
    /// Rounds the recorded iterations were interleaved over.
    pub rounds: u64,
    /// Every case, in the order of the run's selection: protocol, message,
    /// strategy, library.
    pub rows: Vec<Row>,
}

/// One case: a library sending one message one way.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The benchmark id, as Criterion's `small-writes` group has it.
    pub id: String,
    /// The library's name, e.g. `openssl-3.6.3`.
    pub library: String,
    /// `TLSv1.3` or `TLSv1.2`.
    pub protocol: String,
    /// The IANA cipher suite name.
    pub suite: String,
    /// `per-buffer`, `coalesced` or `vectored`.
    pub strategy: String,
    /// The buffers' sizes, in bytes.
    pub buffers: Vec<usize>,
    /// The message as ids write it, e.g. `50x20B`.
    pub message: String,
    /// The message's bytes (sum of `buffers`).
    pub payload_bytes: usize,
    /// The sender's time per message, in ns; `None` when skipped.
    pub latency: Option<Percentiles>,
    /// The median of each round's iterations, in ns, in round order: how
    /// far the median moves over the run (empty when skipped).
    pub round_p50: Vec<u64>,
    /// What each message put on the wire; `None` when skipped.
    pub wire: Option<Wire>,
    /// Why the library skips this case (it was not run).
    pub skipped: Option<String>,
}

impl Row {
    /// The lowest and highest of the rounds' medians, in ns.
    pub fn p50_range(&self) -> Option<(u64, u64)> {
        Some((*self.round_p50.iter().min()?, *self.round_p50.iter().max()?))
    }

    /// Bytes on the wire beyond the payload, when measured.
    pub fn overhead(&self) -> Option<i64> {
        self.wire.map(|w| w.overhead(self.payload_bytes))
    }

    /// `strategy [buffers]`, e.g. `per-buffer [50, 300, 100]`; twenty equal
    /// buffers as `[50 x 20]`.
    pub fn label(&self) -> String {
        let buffers = match self.buffers.as_slice() {
            [first, rest @ ..] if rest.len() > 2 && rest.iter().all(|b| b == first) => {
                format!("{first} x {}", self.buffers.len())
            }
            all => all.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
        };
        format!("{} [{buffers}]", self.strategy)
    }
}

impl Report {
    /// Writes the report as pretty JSON to `path`.
    pub fn save_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self).context("serialising the report")?;
        fs::write(path, text).with_context(|| format!("writing {}", path.display()))
    }

    /// Reads a report that [`Report::save_json`] wrote.
    pub fn load_json(path: &Path) -> Result<Report> {
        let text = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Writes one CSV line per row (skipped rows with empty figures and
    /// their reason).
    pub fn save_csv(&self, path: &Path) -> Result<()> {
        let mut w = csv::Writer::from_path(path).with_context(|| format!("writing {}", path.display()))?;
        w.write_record([
            "id",
            "library",
            "protocol",
            "suite",
            "strategy",
            "message",
            "payload_bytes",
            "count",
            "min_ns",
            "p50_ns",
            "p90_ns",
            "p99_ns",
            "p99_9_ns",
            "max_ns",
            "mean_ns",
            "records",
            "wire_bytes",
            "overhead_bytes",
            "skipped",
        ])?;
        for r in &self.rows {
            let l = r.latency.unwrap_or_default();
            let measured = r.latency.is_some();
            let n = |v: u64| if measured { v.to_string() } else { String::new() };
            let wire = |f: fn(&Wire) -> u64| r.wire.as_ref().map_or(String::new(), |w| f(w).to_string());
            w.write_record([
                r.id.clone(),
                r.library.clone(),
                r.protocol.clone(),
                r.suite.clone(),
                r.strategy.clone(),
                r.message.clone(),
                r.payload_bytes.to_string(),
                n(l.count),
                n(l.min),
                n(l.p50),
                n(l.p90),
                n(l.p99),
                n(l.p999),
                n(l.max),
                if measured { format!("{:.1}", l.mean) } else { String::new() },
                wire(|w| w.records),
                wire(|w| w.bytes),
                r.overhead().map_or(String::new(), |o| o.to_string()),
                r.skipped.clone().unwrap_or_default(),
            ])?;
        }
        w.flush().with_context(|| format!("writing {}", path.display()))
    }

    /// The protocol versions present, in order of first appearance.
    pub fn protocols(&self) -> Vec<String> {
        distinct(self.rows.iter(), |r| &r.protocol)
    }

    /// The libraries present, in order of first appearance.
    pub fn libraries(&self) -> Vec<String> {
        distinct(self.rows.iter(), |r| &r.library)
    }

    /// One Markdown table per protocol version and library (rows: strategy
    /// [buffers]; columns: the percentiles in ns, records and bytes on the
    /// wire, the overhead, and Criterion's mean with its 95% interval from
    /// `criterion` when it has the same id), then the skipped cases.
    pub fn markdown(&self, criterion: &[Measurement]) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "Small writes, {} ({}): sender's time per message in ns, {} iterations per case after {} \
             warm-up, interleaved over {} rounds.\n\n",
            self.date, self.host, self.iterations, self.warmup, self.rounds
        ));
        out.push_str(&self.summary());
        for protocol in self.protocols() {
            for library in self.libraries() {
                let rows: Vec<&Row> = self
                    .rows
                    .iter()
                    .filter(|r| r.protocol == protocol && r.library == library && r.latency.is_some())
                    .collect();
                let Some(first) = rows.first() else { continue };
                out.push_str(&format!("### {protocol}, {}: {library}\n\n", first.suite));
                out.push_str(
                    "| strategy [buffers] | min | p50 | p50 of rounds | p90 | p99 | p99.9 | max | records \
                     | bytes on wire | overhead | Criterion mean [95% CI] |\n",
                );
                out.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
                for r in rows {
                    let (Some(l), Some(w)) = (r.latency, r.wire) else { continue };
                    let criterion = criterion_mean(criterion, &r.id).unwrap_or_else(|| "-".to_string());
                    let rounds = r.p50_range().map_or("-".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
                    out.push_str(&format!(
                        "| {} | {} | {} | {rounds} | {} | {} | {} | {} | {} | {} | {} | {criterion} |\n",
                        r.label(),
                        l.min,
                        l.p50,
                        l.p90,
                        l.p99,
                        l.p999,
                        l.max,
                        w.records,
                        w.bytes,
                        w.overhead(r.payload_bytes)
                    ));
                }
                out.push('\n');
            }
        }
        let skipped: Vec<&Row> = self.rows.iter().filter(|r| r.skipped.is_some()).collect();
        if !skipped.is_empty() {
            out.push_str("Skipped:\n\n");
            let mut reasons: Vec<String> = Vec::new();
            for r in skipped {
                let line = format!("- {} {}: {}", r.library, r.strategy, r.skipped.as_deref().unwrap_or(""));
                if !reasons.contains(&line) {
                    reasons.push(line);
                }
            }
            out.push_str(&reasons.join("\n"));
            out.push('\n');
        }
        out
    }
}

impl Report {
    /// One table per protocol version: a row per message (in run order), a
    /// column per library, each cell the p50 in ns of per-buffer /
    /// coalesced / vectored (`-` where skipped or not selected).
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let libraries = self.libraries();
        for protocol in self.protocols() {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.protocol == protocol).collect();
            let Some(first) = rows.first() else { continue };
            out.push_str(&format!(
                "### {protocol}, {}: p50 ns, per-buffer / coalesced / vectored\n\n",
                first.suite
            ));
            out.push_str(&format!("| message | {} |\n", libraries.join(" | ")));
            out.push_str(&format!("|---|{}\n", "--:|".repeat(libraries.len())));
            for message in distinct(rows.iter().copied(), |r| &r.message) {
                let cell = |library: &str| {
                    let p50 = |strategy: &str| {
                        rows.iter()
                            .find(|r| r.message == message && r.library == library && r.strategy == strategy)
                            .and_then(|r| r.latency)
                            .map_or("-".to_string(), |l| l.p50.to_string())
                    };
                    format!("{} / {} / {}", p50("per-buffer"), p50("coalesced"), p50("vectored"))
                };
                let cells: Vec<String> = libraries.iter().map(|l| cell(l)).collect();
                out.push_str(&format!("| {message} | {} |\n", cells.join(" | ")));
            }
            out.push('\n');
        }
        out
    }
}

/// The values of `field` over `rows`, each once, in order of first
/// appearance.
pub fn distinct<'r>(rows: impl Iterator<Item = &'r Row>, field: fn(&Row) -> &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        if !out.iter().any(|v| v == field(r)) {
            out.push(field(r).to_string());
        }
    }
    out
}

/// Criterion's mean for the id `id` with its interval, e.g.
/// `1834 [1820, 1851]`, if `results` has it.
fn criterion_mean(results: &[Measurement], id: &str) -> Option<String> {
    let m = results.iter().find(|m| format!("{}/{}/{}", m.group, m.params, m.library) == id)?;
    let [lower, mean, upper] = m.mean_ns?;
    Some(format!("{mean:.0} [{lower:.0}, {upper:.0}]"))
}
