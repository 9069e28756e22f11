//! The `memory` binary's report: its serde shape (written as JSON, read
//! back to draw the graph and the tables), summary statistics, and the
//! Markdown tables of heap per connection and allocations.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde::{Deserialize, Serialize};

use crate::table::{Align, Table};

/// Mean, sample standard deviation, minimum and maximum of one figure over
/// the measured connections (or, for per-write figures, over connections'
/// per-write averages).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// The mean.
    pub mean: f64,
    /// The sample standard deviation.
    pub stddev: f64,
    /// The lowest value.
    pub min: f64,
    /// The highest value.
    pub max: f64,
}

impl Stats {
    /// Statistics of `values`. Errors: no values.
    pub fn of(values: &[f64]) -> Result<Stats> {
        ensure!(!values.is_empty(), "no values to summarise");
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = if values.len() > 1 {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Ok(Stats { mean, stddev: var.sqrt(), min, max })
    }
}

/// A figure for the client, the server, and the pair (client + server).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sides {
    /// The client's figure.
    pub client: Stats,
    /// The server's figure.
    pub server: Stats,
    /// The pair's figure (client + server).
    pub pair: Stats,
}

/// Allocations per write in a steady send loop, server to client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteCost {
    /// Application bytes per write.
    pub write_size: usize,
    /// Allocation calls per write in the sender (server).
    pub sender_allocs: Stats,
    /// Bytes requested per write by the sender.
    pub sender_bytes: Stats,
    /// Allocation calls per write in the receiver (client).
    pub receiver_allocs: Stats,
    /// Bytes requested per write by the receiver.
    pub receiver_bytes: Stats,
}

/// The counters checked against glibc's own accounting over the creation
/// and handshake of all connections (see README, "Memory").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossCheck {
    /// The reported held bytes per pair (mean) plus glibc's 8-byte chunk
    /// header per block the pair holds, in bytes.
    pub project_bytes_per_pair: f64,
    /// Increase of glibc's `mallinfo2` in-use bytes (`uordblks + hblkhd`)
    /// over the same span, per pair, in bytes.
    pub glibc_bytes_per_pair: f64,
    /// Of glibc's figure, what the harness itself held per pair (transport,
    /// bookkeeping), in bytes: the expected difference.
    pub harness_bytes_per_pair: f64,
}

/// One library and parameter set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Library id, e.g. `openssl-3.6.3`.
    pub library: String,
    /// The parameters, as in benchmark ids.
    pub params: String,
    /// `server-auth`, `mTLS` or `resumption`.
    pub kind: String,
    /// Certificate chain, e.g. `ECDSA-P256`.
    pub chain: String,
    /// Connection pairs measured (all alive together).
    pub connections: usize,
    /// Heap held after the handshake, usable bytes per connection.
    pub held: Sides,
    /// Highest client+server heap during creation and handshake, above
    /// what was live before, usable bytes per pair.
    pub peak_pair: Stats,
    /// Heap held by connections made with buffer release on (see
    /// `buffer_release`), after the handshake, writes of each size and a
    /// one-byte exchange each way; usable bytes per connection.
    pub idle: Sides,
    /// How buffers were released for `idle`.
    pub buffer_release: String,
    /// Allocation calls during creation and handshake (and, for resumption,
    /// taking the next ticket).
    pub handshake_allocs: Sides,
    /// Bytes requested by those calls.
    pub handshake_bytes: Sides,
    /// Per-write allocations, one entry per write size.
    pub writes: Vec<WriteCost>,
    /// The held bytes checked against glibc's own count.
    pub cross_check: CrossCheck,
}

/// A parameter set a library could not run, with its reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skip {
    /// Library id.
    pub library: String,
    /// The parameters, as in benchmark ids.
    pub params: String,
    /// Why the library could not run them.
    pub reason: String,
}

/// One run of the `memory` binary (one build).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// UTC date of the run, `YYYY-MM-DD`.
    pub date: String,
    /// CPU model (from /proc/cpuinfo).
    pub cpu: String,
    /// The allocator measured, e.g. `glibc 2.36 malloc`.
    pub allocator: String,
    /// Warm-up connections per library and parameter set (not measured).
    pub warmup: usize,
    /// Measured writes per connection and write size.
    pub writes_per_size: usize,
    /// One row per library and parameter set measured.
    pub rows: Vec<Row>,
    /// The parameter sets a library could not run.
    pub skipped: Vec<Skip>,
}

impl Report {
    /// Reads a report written by [`Report::write_json`].
    pub fn read_json(path: &Path) -> Result<Report> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// Writes the report as pretty JSON.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
    }
}

impl Row {
    /// Every figure of the row as (name, unit, statistics).
    pub fn figures(&self) -> Vec<(String, &'static str, Stats)> {
        let mut out = Vec::new();
        let sides = |name: &str, unit: &'static str, s: &Sides, out: &mut Vec<_>| {
            for (side, st) in [("client", s.client), ("server", s.server), ("pair", s.pair)] {
                out.push((format!("{name}_{side}"), unit, st));
            }
        };
        sides("held", "bytes", &self.held, &mut out);
        out.push(("peak_pair".into(), "bytes", self.peak_pair));
        sides("idle", "bytes", &self.idle, &mut out);
        sides("handshake_allocs", "allocations", &self.handshake_allocs, &mut out);
        sides("handshake_bytes", "bytes", &self.handshake_bytes, &mut out);
        for w in &self.writes {
            let n = w.write_size;
            out.push((format!("write{n}_sender_allocs"), "allocations/write", w.sender_allocs));
            out.push((format!("write{n}_sender_bytes"), "bytes/write", w.sender_bytes));
            out.push((format!("write{n}_receiver_allocs"), "allocations/write", w.receiver_allocs));
            out.push((format!("write{n}_receiver_bytes"), "bytes/write", w.receiver_bytes));
        }
        out
    }
}

/// The reports of `inputs`, each a report file or a directory of them
/// (its `*.json` files in file-name order), with their paths, in order.
/// Errors: an unreadable or unparsable input, or a directory without
/// reports; each names the path.
pub fn read_reports(inputs: &[PathBuf]) -> Result<Vec<(PathBuf, Report)>> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let found = json_files(input)?;
            ensure!(!found.is_empty(), "no reports (*.json) in {}", input.display());
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    files.into_iter().map(|f| Report::read_json(&f).map(|r| (f, r))).collect()
}

/// The `*.json` files directly in `dir`, sorted by name. Errors: an
/// unreadable directory.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry.with_context(|| format!("reading {}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every row of `reports`, in order. Errors: the same library and
/// parameters in two places (both named), which one graph cannot show.
pub fn merged_rows(reports: &[(PathBuf, Report)]) -> Result<Vec<Row>> {
    let mut rows: Vec<(&Path, &Row)> = Vec::new();
    for (path, report) in reports {
        for row in &report.rows {
            if let Some((first, _)) =
                rows.iter().find(|(_, r)| r.library == row.library && r.params == row.params)
            {
                let (first, path) = (first.display(), path.display());
                let place = if first.to_string() == path.to_string() {
                    format!("twice in {path}")
                } else {
                    format!("in both {first} and {path}")
                };
                bail!("{} {} is {place}", row.library, row.params);
            }
            rows.push((path, row));
        }
    }
    Ok(rows.into_iter().map(|(_, r)| r.clone()).collect())
}

/// Bytes as KiB with one decimal.
fn kib(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

/// The protocol version of a row: the second of its parameters
/// (`server-auth,TLSv1.3,...`).
pub fn protocol(row: &Row) -> &str {
    row.params.split(',').nth(1).unwrap_or_default()
}

/// The Markdown tables for `rows`: heap per connection (KiB: mean ±
/// standard deviation over the pairs, the pair's peak, idle after buffer
/// release), then allocation calls per handshake and per write. A
/// `protocol` column follows the library when the rows are of more than
/// one protocol version.
pub fn markdown(rows: &[Row]) -> String {
    let protocols: Vec<&str> = rows.iter().map(protocol).fold(Vec::new(), |mut v, p| {
        if !v.contains(&p) {
            v.push(p);
        }
        v
    });
    let several = protocols.len() > 1;
    // The library and, with several protocols, the protocol: cells and headers.
    let who = |r: &Row| {
        if several { vec![r.library.clone(), protocol(r).to_string()] } else { vec![r.library.clone()] }
    };
    let who_headers: &[&str] = if several { &["library", "protocol"] } else { &["library"] };
    // Each table: `who`, handshake, chain, then its figures, right-aligned.
    let table = |figures: &[String]| {
        let fixed = ["handshake", "chain"].map(String::from);
        let headers: Vec<String> =
            who_headers.iter().map(|h| h.to_string()).chain(fixed).chain(figures.iter().cloned()).collect();
        Table::new(&headers).align(who_headers.len() + 2.., Align::Right)
    };
    let held = ["held client KiB", "held server KiB", "peak pair KiB", "idle client KiB", "idle server KiB"];
    let mut held = table(&held.map(String::from));
    for r in rows {
        held.row(who(r).into_iter().chain([
            r.kind.clone(),
            r.chain.clone(),
            format!("{} ± {}", kib(r.held.client.mean), kib(r.held.client.stddev)),
            format!("{} ± {}", kib(r.held.server.mean), kib(r.held.server.stddev)),
            kib(r.peak_pair.mean),
            kib(r.idle.client.mean),
            kib(r.idle.server.mean),
        ]));
    }
    let sizes: Vec<usize> =
        rows.first().map(|r| r.writes.iter().map(|w| w.write_size).collect()).unwrap_or_default();
    let allocs_headers: Vec<String> = ["allocs client".to_string(), "allocs server".to_string()]
        .into_iter()
        .chain(sizes.iter().map(|n| format!("{n} B write: sender / receiver allocs")))
        .collect();
    let mut allocs = table(&allocs_headers);
    for r in rows {
        let writes =
            r.writes.iter().map(|w| format!("{:.2} / {:.2}", w.sender_allocs.mean, w.receiver_allocs.mean));
        allocs.row(
            who(r)
                .into_iter()
                .chain([
                    r.kind.clone(),
                    r.chain.clone(),
                    format!("{:.0}", r.handshake_allocs.client.mean),
                    format!("{:.0}", r.handshake_allocs.server.mean),
                ])
                .chain(writes),
        );
    }
    format!("{held}\n{allocs}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_values() {
        let s = Stats::of(&[1.0, 2.0, 3.0, 6.0]).unwrap();
        assert_eq!((s.mean, s.min, s.max), (3.0, 1.0, 6.0));
        assert!((s.stddev - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0]).unwrap().stddev, 0.0);
        assert!(Stats::of(&[]).is_err());
    }

    fn row(library: &str, params: &str) -> Row {
        let st = Stats { mean: 2048.0, stddev: 0.0, min: 2048.0, max: 2048.0 };
        let sides = Sides { client: st, server: st, pair: st };
        Row {
            library: library.into(),
            params: params.into(),
            kind: "server-auth".into(),
            chain: "ECDSA-P256".into(),
            connections: 2,
            held: sides,
            peak_pair: st,
            idle: sides,
            buffer_release: "none".into(),
            handshake_allocs: sides,
            handshake_bytes: sides,
            writes: vec![WriteCost {
                write_size: 1024,
                sender_allocs: st,
                sender_bytes: st,
                receiver_allocs: st,
                receiver_bytes: st,
            }],
            cross_check: CrossCheck {
                project_bytes_per_pair: 0.0,
                glibc_bytes_per_pair: 0.0,
                harness_bytes_per_pair: 0.0,
            },
        }
    }

    #[test]
    fn the_tables_name_the_protocol_only_when_rows_differ_in_it() {
        let one = markdown(&[row("a-1", "server-auth,TLSv1.3,x"), row("b-2", "server-auth,TLSv1.3,x")]);
        assert!(one.starts_with("| library | handshake | chain | held client KiB |"), "{one}");
        assert!(
            one.contains("| a-1 | server-auth | ECDSA-P256 | 2.0 ± 0.0 | 2.0 ± 0.0 | 2.0 | 2.0 | 2.0 |"),
            "{one}"
        );
        let two = markdown(&[row("a-1", "server-auth,DTLSv1.2,x"), row("a-1", "server-auth,TLSv1.2,x")]);
        assert!(two.starts_with("| library | protocol | handshake |"), "{two}");
        assert!(two.contains("\n|---|---|---|---|--:|"), "{two}");
        assert!(
            two.contains("| a-1 | DTLSv1.2 | server-auth | ECDSA-P256 | 2048 | 2048 | 2048.00 / 2048.00 |"),
            "{two}"
        );
        assert!(two.contains("| a-1 | TLSv1.2 | server-auth |"), "{two}");
    }
}
