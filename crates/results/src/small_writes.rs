//! A `small-writes` run's results as saved in its `results.json`, and the
//! Markdown tables printed from them (the p50 summary per protocol
//! version, the per-library percentile tables).

use std::{fs, path::Path};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::thousands;
use crate::{
    criterion_json::Measurement,
    table::{Align, Table},
};
use tls_bench_harness::writes::Wire;

/// Percentiles of iteration times, in ns, each the highest value
/// equivalent (within the histogram's 3 significant digits) to the
/// recorded one at that quantile (hdrhistogram's `value_at_quantile`; see
/// `latency::Latencies`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Iterations recorded.
    pub count: u64,
    /// Fastest, in ns.
    pub min: u64,
    /// Median, in ns.
    pub p50: u64,
    /// 90th percentile, in ns.
    pub p90: u64,
    /// 99th percentile, in ns.
    pub p99: u64,
    /// 99.9th percentile, in ns.
    pub p999: u64,
    /// Slowest, in ns.
    pub max: u64,
    /// Mean, in ns.
    pub mean: f64,
}

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
                let mut table = Table::new(&[
                    "strategy [buffers]",
                    "min",
                    "p50",
                    "p50 of rounds",
                    "p90",
                    "p99",
                    "p99.9",
                    "max",
                    "records",
                    "bytes on wire",
                    "overhead",
                    "Criterion mean [95% CI]",
                ])
                .align(1.., Align::Right);
                for r in rows {
                    let (Some(l), Some(w)) = (r.latency, r.wire) else { continue };
                    let criterion = criterion_mean(criterion, &r.id).unwrap_or_else(|| "-".to_string());
                    let rounds = r.p50_range().map_or("-".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
                    table.row([
                        r.label(),
                        l.min.to_string(),
                        l.p50.to_string(),
                        rounds,
                        l.p90.to_string(),
                        l.p99.to_string(),
                        l.p999.to_string(),
                        l.max.to_string(),
                        w.records.to_string(),
                        w.bytes.to_string(),
                        w.overhead(r.payload_bytes).to_string(),
                        criterion,
                    ]);
                }
                out.push_str(&table.markdown());
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
            let header: Vec<&str> =
                std::iter::once("message").chain(libraries.iter().map(String::as_str)).collect();
            let mut table = Table::new(&header).align(1.., Align::Right);
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
                table.row(std::iter::once(message.clone()).chain(libraries.iter().map(|l| cell(l))));
            }
            out.push_str(&table.markdown());
            out.push('\n');
        }
        out
    }
}

impl Report {
    /// One message's table for one protocol version (e.g. `TLSv1.3` and
    /// `50x20B`): a row per library (in run order) and strategy with the
    /// p50, the lowest and highest of the rounds' medians, p99 and p99.9 in
    /// ns; with Criterion's mean and 95% interval for the same id when
    /// `criterion` has any of them (the column is left out otherwise).
    /// Skipped cases have no row.
    pub fn message_table(&self, protocol: &str, message: &str, criterion: &[Measurement]) -> String {
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.protocol == protocol && r.message == message && r.latency.is_some())
            .collect();
        let strategies = distinct(rows.iter().copied(), |r| &r.strategy);
        let with_criterion = rows.iter().any(|r| criterion_mean(criterion, &r.id).is_some());
        let mut header = vec!["library", "strategy", "p50", "p50 of rounds", "p99", "p99.9"];
        if with_criterion {
            header.push("Criterion mean [95% CI]");
        }
        let mut table = Table::new(&header).align(2.., Align::Right);
        for library in self.libraries() {
            for strategy in &strategies {
                let Some(r) = rows.iter().find(|r| r.library == library && &r.strategy == strategy) else {
                    continue;
                };
                let Some(l) = r.latency else { continue };
                let rounds = r.p50_range().map_or("-".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
                let mut cells = vec![
                    library.clone(),
                    strategy.clone(),
                    l.p50.to_string(),
                    rounds,
                    l.p99.to_string(),
                    l.p999.to_string(),
                ];
                if with_criterion {
                    cells.push(criterion_mean(criterion, &r.id).unwrap_or_else(|| "-".to_string()));
                }
                table.row(cells);
            }
        }
        table.markdown()
    }

    /// Records and bytes on the wire per message (`messages` as ids write
    /// them, e.g. `50x20B`), written per buffer and in one write, for each
    /// protocol version: the TLS libraries' common figure (the plaintext
    /// floor left out). "One write" is `coalesced` and `vectored` alike.
    /// Errors: a message the run does not have, or libraries (or the two
    /// one-write strategies) that put different records or bytes on the
    /// wire for the same message, naming them.
    pub fn wire_table(&self, messages: &[&str]) -> Result<String> {
        let protocols = self.protocols();
        let mut header = vec!["message".to_string()];
        for p in &protocols {
            let v = p.replace("TLSv", "TLS ");
            header.extend([format!("per-buffer, {v}"), format!("one write, {v}")]);
        }
        let mut table = Table::new(&header).align(1.., Align::Right);
        for &message in messages {
            let mut cells = Vec::new();
            let mut label = None;
            for protocol in &protocols {
                for strategies in [&["per-buffer"][..], &["coalesced", "vectored"]] {
                    let measured: Vec<(&Row, Wire)> = self
                        .rows
                        .iter()
                        .filter(|r| {
                            &r.protocol == protocol
                                && r.message == message
                                && strategies.contains(&r.strategy.as_str())
                                && r.library != "plaintext"
                        })
                        .filter_map(|r| r.wire.map(|w| (r, w)))
                        .collect();
                    let Some(&(first, wire)) = measured.first() else {
                        anyhow::bail!(
                            "no {protocol} {} figure for message {message}",
                            strategies.join(" or ")
                        );
                    };
                    if let Some((other, w)) = measured.iter().find(|(_, w)| *w != wire) {
                        anyhow::bail!(
                            "{protocol} {message}: {} {} put {wire:?} on the wire, {} {} {w:?}",
                            first.library,
                            first.strategy,
                            other.library,
                            other.strategy
                        );
                    }
                    label.get_or_insert_with(|| message_label(&first.buffers));
                    let records = if wire.records == 1 { "record" } else { "records" };
                    cells.push(format!("{} {records}, {} B", wire.records, thousands(wire.bytes)));
                }
            }
            table.row(std::iter::once(label.unwrap_or_default()).chain(cells));
        }
        Ok(table.markdown())
    }
}

/// A message's buffers as `[50, 300, 100]`, or `[50]x20` for more than two
/// equal ones.
pub fn message_label(buffers: &[usize]) -> String {
    match buffers {
        [first, rest @ ..] if rest.len() > 1 && rest.iter().all(|b| b == first) => {
            format!("[{first}]x{}", buffers.len())
        }
        all => format!("[{}]", all.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(library: &str, strategy: &str, buffers: &[usize], p50: u64, wire: Option<(u64, u64)>) -> Row {
        let message = match buffers {
            [a, rest @ ..] if rest.len() > 1 && rest.iter().all(|b| b == a) => {
                format!("{a}x{}B", buffers.len())
            }
            _ => format!("{}B", buffers.iter().map(usize::to_string).collect::<Vec<_>>().join("+")),
        };
        Row {
            id: format!("small-writes/TLS_AES_256_GCM_SHA384,{strategy},{message}/{library}"),
            library: library.into(),
            protocol: "TLSv1.3".into(),
            suite: "TLS_AES_256_GCM_SHA384".into(),
            strategy: strategy.into(),
            buffers: buffers.to_vec(),
            payload_bytes: buffers.iter().sum(),
            message,
            latency: wire.map(|_| Percentiles {
                count: 10,
                min: p50 - 10,
                p50,
                p90: p50 + 5,
                p99: p50 + 20,
                p999: p50 + 90,
                max: p50 * 9,
                mean: p50 as f64,
            }),
            round_p50: if wire.is_some() { vec![p50 - 1, p50 + 2] } else { Vec::new() },
            wire: wire.map(|(records, bytes)| Wire { records, bytes }),
            skipped: wire.is_none().then(|| "no gather write".to_string()),
        }
    }

    fn report(rows: Vec<Row>) -> Report {
        Report { date: "d".into(), host: "h".into(), iterations: 10, warmup: 1, rounds: 2, rows }
    }

    #[test]
    fn the_message_table_has_a_row_per_library_and_measured_strategy() {
        let b = [50; 20];
        let r = report(vec![
            row("a-1", "per-buffer", &b, 4000, Some((20, 1440))),
            row("b-2", "per-buffer", &b, 7000, Some((20, 1440))),
            row("a-1", "vectored", &b, 400, Some((1, 1022))),
            row("b-2", "vectored", &b, 0, None),
        ]);
        let t = r.message_table("TLSv1.3", "50x20B", &[]);
        assert_eq!(
            t,
            "| library | strategy | p50 | p50 of rounds | p99 | p99.9 |\n|---|---|--:|--:|--:|--:|\n\
             | a-1 | per-buffer | 4000 | 3999-4002 | 4020 | 4090 |\n\
             | a-1 | vectored | 400 | 399-402 | 420 | 490 |\n\
             | b-2 | per-buffer | 7000 | 6999-7002 | 7020 | 7090 |\n"
        );
    }

    #[test]
    fn the_wire_table_needs_every_library_to_agree() {
        let b = [50, 300, 100];
        let mut rows = vec![
            row("a-1", "per-buffer", &b, 1000, Some((3, 516))),
            row("b-2", "per-buffer", &b, 1000, Some((3, 516))),
            row("a-1", "coalesced", &b, 400, Some((1, 472))),
            row("b-2", "vectored", &b, 400, Some((1, 472))),
            row("plaintext", "per-buffer", &b, 40, Some((3, 465))),
        ];
        let t = report(rows.clone()).wire_table(&["50+300+100B"]).unwrap();
        assert!(t.contains("| [50, 300, 100] | 3 records, 516 B | 1 record, 472 B |"), "{t}");
        rows[3].wire = Some(Wire { records: 1, bytes: 473 });
        let e = report(rows.clone()).wire_table(&["50+300+100B"]).unwrap_err().to_string();
        assert!(e.contains("a-1 coalesced") && e.contains("b-2 vectored"), "{e}");
        let e = report(rows).wire_table(&["50x20B"]).unwrap_err().to_string();
        assert!(e.contains("50x20B"), "{e}");
    }

    #[test]
    fn message_labels() {
        assert_eq!(message_label(&[50; 20]), "[50]x20");
        assert_eq!(message_label(&[100, 100]), "[100, 100]");
        assert_eq!(message_label(&[50]), "[50]");
    }
}
