//! Committed results and their Markdown: each tool's data model as it is
//! saved (`results.json`, the memory and historical-perf reports, gungraun's
//! summaries) and the tables rendered from it, shared by the tool that
//! writes the data and by `report results`, which renders
//! `results/README.md` from the committed files ([`readme`]).
//!
//! Only std, serde, serde_json and anyhow: measuring, plotting and the
//! command lines stay in the binaries.
//!
//! - [`compare`]: `compare`'s rows, environment, tables and `diff`.
//! - [`criterion`]: Criterion's figures as `report` tables them.
//! - [`small_writes`]: the `small-writes` report and its tables.
//! - [`memory`]: the `memory` report and its tables.
//! - [`historical`]: `historical-perf`'s per-release results and tables.
//! - [`instructions`]: the instruction counts' tables.
//! - [`sockets`]: `handshake-scaling`'s points and the socket tables.
//! - [`https`]: `https-compare`'s, `https-soak`'s and `https-attack`'s
//!   tables.
//! - [`readme`]: `results/README.md` and the README's headline.
//! - [`check`]: the headline's markers, and `--check`'s differences.

pub mod check;
pub mod compare;
pub mod criterion;
pub mod historical;
pub mod https;
pub mod instructions;
pub mod memory;
pub mod readme;
pub mod small_writes;
pub mod sockets;

/// `n` with commas between groups of three digits: `6,066`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A file of the repository, as text.
    fn committed(path: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_renderers_write_the_committed_reports_from_the_committed_data() {
        // compare's stdout report, as the runs saved it beside their data.
        for (dir, md) in [
            ("results/compare/2026-11-22/run-b", "tables.md"),
            ("results/dtls/2026-11-23/compare", "report.md"),
        ] {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let run = compare::Run::read(&root.join("results.json")).unwrap();
            let env: compare::Environment =
                serde_json::from_str(&committed(&format!("{dir}/environment.json"))).unwrap();
            assert_eq!(
                compare::markdown(&run.rows, &env, run.rounds),
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/dtls/2026-11-23/historical-openssl");
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/small-writes/2026-11-23");
        let report = small_writes::Report::load_json(&dir.join("results.json")).unwrap();
        assert!(committed("results/small-writes/2026-11-23/report.md").contains(&report.summary()));
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(72), "72");
        assert_eq!(thousands(1440), "1,440");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
