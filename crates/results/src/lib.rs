//! tls-bench's results: what each tool saves, one model per saved file,
//! used by the tool that writes it and by every reader (`report`, `report
//! results`, which renders `results/README.md` from the committed files,
//! and the tools that merge or compare runs); the readers of Criterion's
//! and gungraun's output; the statistics of interleaved runs; the
//! Markdown tables. It depends on the harness (parameters, workload kinds)
//! and on nothing that measures, plots or parses a command line.
//!
//! What belongs in each module, in layers: a module uses only those listed
//! before it (`tests/layers.rs` checks it, and that this list names every
//! module once).
//!
//! - [`table`]: the Markdown table (columns, alignment, separator style)
//!   tables are written with, and its numbers' grouping ([`thousands`]).
//! - [`criterion_json`]: Criterion's results read back from disk.
//! - [`gungraun_json`]: gungraun's instruction counts read back from disk.
//! - [`compare`]: `compare`'s rows, environment, tables and `diff`.
//! - [`stats`]: medians, and confidence intervals of paired ratios over
//!   `compare`'s epochs or (`https-compare`) a bootstrap of the rounds
//!   (whose [`compare::Interval`] is saved with the rows).
//! - [`criterion`]: Criterion's figures as `report` tables them.
//! - [`small_writes`]: the `small-writes` report and its tables.
//! - [`memory`]: the `memory` report and its tables.
//! - [`historical`]: `historical-perf`'s per-release results and tables.
//! - [`instructions`]: the instruction counts' tables.
//! - [`sockets`]: the socket tools' saved models (failure kinds, latency
//!   percentiles), `handshake-scaling`'s points and the socket tables.
//! - [`https`]: the HTTPS tools' saved models and tables (`https-load`,
//!   `https-compare`, `https-soak`, `https-attack`).
//! - [`check`]: the headline's markers, and `--check`'s differences.
//! - [`readme`]: `results/README.md` and the README's headline.
//! - [`reruns`]: runs of `compare` side by side: `compare diff`'s changes
//!   with intervals, `compare coverage`.
//! - [`host`]: the machine a measurement ran on.
//! - [`outdir`]: a tool's output directory, checked before any work and
//!   holding one whole run.

pub mod table;

pub mod criterion_json;

pub mod gungraun_json;

pub mod compare;

pub mod stats;

pub mod reruns;

pub mod criterion;

pub mod small_writes;

pub mod memory;

pub mod historical;

pub mod instructions;

pub mod sockets;

pub mod https;

pub mod check;

pub mod readme;

pub mod host;

pub mod outdir;

pub use table::thousands;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The repository: this crate is crates/results/ in it.
    const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

    /// A file of the repository, as text.
    fn committed(path: &str) -> String {
        let path = Path::new(REPO).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_renderers_write_the_committed_reports_from_the_committed_data() {
        // compare's stdout report, as the runs saved it beside their data.
        for (dir, md) in [
            ("results/compare/2026-11-22/run-b", "tables.md"),
            ("results/dtls/2026-11-23/compare", "report.md"),
        ] {
            let root = Path::new(REPO).join(dir);
            let run = compare::Run::read(&root.join("results.json")).unwrap();
            let env: compare::Environment =
                serde_json::from_str(&committed(&format!("{dir}/environment.json"))).unwrap();
            assert_eq!(
                compare::markdown(&run.rows, &env, run.rounds, compare::Intervals::of(&run.method)),
                committed(&format!("{dir}/{md}")),
                "{dir}"
            );
        }
        // https-compare's and https-soak's stdout, as the run saved it.
        let dir = "results/https/2026-11-25";
        let run: https::CompareRun =
            serde_json::from_str(&committed(&format!("{dir}/compare/results.json"))).unwrap();
        assert_eq!(run.markdown(), committed(&format!("{dir}/compare.md")));
        let soak: https::SoakRun =
            serde_json::from_str(&committed(&format!("{dir}/soak/results.json"))).unwrap();
        assert_eq!(soak.markdown(), committed(&format!("{dir}/soak.md")));
        // historical-perf's table of the DTLS suite.
        let dir = Path::new(REPO).join("results/dtls/2026-11-23/historical-openssl");
        let mut releases: Vec<historical::ReleaseResult> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| historical::ReleaseResult::read(&p).unwrap())
            .collect();
        releases.sort_by_cached_key(|r| historical::version_order(&r.crate_version));
        assert_eq!(
            historical::table_body(&releases),
            committed("results/dtls/2026-11-23/historical-openssl/table.md")
        );
        // small-writes' summary (its per-library tables add Criterion's
        // means, which are not committed).
        let dir = Path::new(REPO).join("results/small-writes/2026-11-23");
        let report = small_writes::Report::load_json(&dir.join("results.json")).unwrap();
        assert!(committed("results/small-writes/2026-11-23/report.md").contains(&report.summary()));
    }
}
