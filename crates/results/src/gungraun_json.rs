//! Reading gungraun's results from disk: the `summary.json` it writes for
//! each benchmark (`--save-summary=json`, which `benches/benches/instructions.rs`
//! turns on) under its output directory (`target/gungraun`). From each: the
//! benchmark id and iterations, read from the `run-case` command line it ran,
//! and Callgrind's instruction count (`Ir`) of this run and of the run
//! before it (gungraun keeps one previous run).
//!
//! Source: gungraun-runner 0.20 `summary::model::BenchmarkSummary` (summary
//! format version 7).

use std::{fs, path::Path};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use tls_bench_harness::workload::BLOCK_BYTES;

/// One count: a benchmark id's instructions over its iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    /// The benchmark id, `group/parameters/library`, e.g.
    /// `handshake-client/server-auth,.../openssl-3.6.3`.
    pub id: String,
    /// Iterations counted together (handshakes, or transfers of
    /// [`BLOCK_BYTES`]).
    pub iterations: u64,
    /// Instructions counted in this run.
    pub instructions: u64,
    /// The run before it, when gungraun kept one: its iterations and
    /// instructions.
    pub previous: Option<(u64, u64)>,
    /// When the run started (RFC 3339, UTC), as gungraun wrote it.
    pub started_at: String,
}

impl Count {
    /// The group component of the id, e.g. `handshake-client`.
    pub fn group(&self) -> &str {
        self.id.split('/').next().unwrap_or_default()
    }

    /// The parameters component of the id.
    pub fn parameters(&self) -> &str {
        self.id.split('/').nth(1).unwrap_or_default()
    }

    /// The library component of the id.
    pub fn library(&self) -> &str {
        self.id.rsplit('/').next().unwrap_or_default()
    }

    /// Whether the id is a transfer's (`throughput` groups): counts are then
    /// per byte of application data moved.
    pub fn is_transfer(&self) -> bool {
        self.group().starts_with("throughput")
    }

    /// What `iterations` iterations of this id stand for: handshakes, or
    /// bytes of application data moved.
    pub fn units(&self, iterations: u64) -> u64 {
        if self.is_transfer() { iterations * BLOCK_BYTES as u64 } else { iterations }
    }

    /// Instructions per handshake, or per byte moved.
    pub fn per_unit(&self) -> f64 {
        self.instructions as f64 / self.units(self.iterations) as f64
    }

    /// The previous run's instructions per unit, when there is one.
    pub fn previous_per_unit(&self) -> Option<f64> {
        self.previous.map(|(iterations, instructions)| instructions as f64 / self.units(iterations) as f64)
    }
}

#[derive(Deserialize)]
struct Summary {
    started_at: String,
    profiles: Vec<Profile>,
}

#[derive(Deserialize)]
struct Profile {
    data: ProfileData,
}

#[derive(Deserialize)]
struct ProfileData {
    parts: Vec<Part>,
    total: Total,
}

#[derive(Deserialize)]
struct Part {
    tool_run: NewOld<ToolRun>,
}

#[derive(Deserialize)]
struct ToolRun {
    command: String,
}

#[derive(Deserialize)]
struct Total {
    metrics: Metrics,
}

#[derive(Deserialize)]
struct Metrics {
    #[serde(rename = "Ir")]
    ir: Metric,
}

#[derive(Deserialize)]
struct Metric {
    values: NewOld<u64>,
}

#[derive(Deserialize)]
struct NewOld<T> {
    new: Option<T>,
    old: Option<T>,
}

/// The id and iterations of a `run-case` command line: its last argument
/// and the value of `--iterations`. Errors: another command.
fn parse_command(command: &str) -> Result<(String, u64)> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let is_run_case = words.first().is_some_and(|w| w.ends_with("run-case"));
    let iterations = words.windows(2).find(|w| w[0] == "--iterations").map(|w| w[1].parse::<u64>());
    match (is_run_case, iterations, words.last()) {
        (true, Some(Ok(n)), Some(id)) if id.contains('/') => Ok((id.to_string(), n)),
        _ => bail!("not a run-case command: {command:?}"),
    }
}

/// Reads one `summary.json`. Errors: unreadable, another schema, or a
/// benchmark that did not run `run-case` (the error names the file).
pub fn read(path: &Path) -> Result<Count> {
    let parsed = (|| -> Result<Count> {
        let summary: Summary = serde_json::from_slice(&fs::read(path)?)?;
        let profile = summary.profiles.first().context("no profile")?;
        let run = profile.data.parts.first().context("no part")?;
        let (id, iterations) = parse_command(&run.tool_run.new.as_ref().context("no command")?.command)?;
        let values = &profile.data.total.metrics.ir.values;
        let instructions = values.new.context("no instruction count")?;
        let previous = match (&run.tool_run.old, values.old) {
            (Some(old), Some(count)) => Some((parse_command(&old.command)?.1, count)),
            _ => None,
        };
        Ok(Count { id, iterations, instructions, previous, started_at: summary.started_at })
    })();
    parsed.with_context(|| format!("reading {}", path.display()))
}

/// Every `summary.json` under `dir`, sorted by id. Errors: any that
/// [`read`] rejects.
pub fn read_all(dir: &Path) -> Result<Vec<Count>> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "summary.json") {
                out.push(read(&path)?);
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_and_iterations_come_from_the_run_case_command() {
        let (id, n) = parse_command(
            "/x/target/release/run-case --iterations 20 --fixed-random handshake/a,b/openssl-3.6.3",
        )
        .unwrap();
        assert_eq!((id.as_str(), n), ("handshake/a,b/openssl-3.6.3", 20));
        assert!(parse_command("/bin/true --iterations 2 a/b/c").is_err());
        assert!(parse_command("/x/run-case a/b/c").is_err());
    }

    #[test]
    fn transfers_are_counted_per_byte() {
        let c = Count {
            id: "throughput-send/p/lib".into(),
            iterations: 2,
            instructions: 2 * BLOCK_BYTES as u64 * 3,
            previous: Some((1, BLOCK_BYTES as u64 * 4)),
            started_at: String::new(),
        };
        assert_eq!((c.group(), c.parameters(), c.library()), ("throughput-send", "p", "lib"));
        assert_eq!(c.per_unit(), 3.0);
        assert_eq!(c.previous_per_unit(), Some(4.0));
    }
}
