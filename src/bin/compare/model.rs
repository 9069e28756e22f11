//! What `compare` measures and concludes: the cases the workers offer, the
//! slices they time, and each row's summary (medians, ratios to the row's
//! best with intervals). Serialised as is into `target/compare/results.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::{Interval, median, paired_ratio};

/// Name of the plaintext floor library: reported beside the TLS libraries,
/// never the row's best.
pub const FLOOR: &str = "plaintext";

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
}

/// One slice: a case's iterations in one round, per iteration in ns.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Slice {
    /// The round (0-based).
    pub round: u32,
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
    /// Time ratio to the row's best TLS library (>= 1 is slower), the
    /// median of the per-round paired ratios with its 95% bootstrap
    /// interval; for the best itself exactly 1. `None` for the floor.
    pub ratio: Option<Interval>,
    /// Whether this is the row's best TLS library (lowest median time).
    pub best: bool,
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
    /// `(library, reason)` of the libraries that skip this row.
    pub skipped: Vec<(String, String)>,
}

impl RowSummary {
    /// The row's best TLS library, if any library ran.
    pub fn best(&self) -> Option<&LibrarySummary> {
        self.libraries.iter().find(|l| l.best)
    }
}

/// Summarises `results` row by row, in the order rows first appear.
/// Rounds are paired by [`Slice::round`]: a ratio uses only the rounds both
/// libraries have.
pub fn summarise(results: &[CaseResult]) -> Vec<RowSummary> {
    let mut order: Vec<&str> = Vec::new();
    let mut rows: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for r in results {
        if !rows.contains_key(r.info.row.as_str()) {
            order.push(&r.info.row);
        }
        rows.entry(&r.info.row).or_default().push(r);
    }
    order.into_iter().map(|row| summarise_row(&rows[row])).collect()
}

fn summarise_row(cases: &[&CaseResult]) -> RowSummary {
    let first = &cases[0].info;
    let mut libraries = Vec::new();
    let mut floor = None;
    let mut skipped = Vec::new();
    for c in cases {
        if let Some(why) = &c.info.skip {
            skipped.push((c.info.library.clone(), why.clone()));
            continue;
        }
        let Some(summary) = library_summary(c) else { continue };
        if c.info.library == FLOOR { floor = Some(summary) } else { libraries.push(summary) }
    }
    libraries.sort_by(|a, b| a.library.cmp(&b.library));
    let best = libraries.iter().min_by(|a, b| a.median_ns.total_cmp(&b.median_ns)).map(|b| b.library.clone());
    if let Some(best) = best {
        let times = |lib: &str| -> BTreeMap<u32, f64> {
            let c = cases.iter().find(|c| c.info.library == lib).expect("a summarised library has a case");
            c.slices.iter().map(|s| (s.round, s.both_ns)).collect()
        };
        let best_times = times(&best);
        for l in &mut libraries {
            l.best = l.library == best;
            let mine = times(&l.library);
            let (a, b): (Vec<f64>, Vec<f64>) =
                mine.iter().filter_map(|(round, t)| best_times.get(round).map(|bt| (*t, *bt))).unzip();
            l.ratio = if l.best {
                Some(Interval { estimate: 1.0, low: 1.0, high: 1.0 })
            } else {
                paired_ratio(&a, &b)
            };
        }
    }
    RowSummary {
        row: first.row.clone(),
        group: first.group.clone(),
        parameters: first.parameters.clone(),
        libraries,
        floor,
        skipped,
    }
}

fn library_summary(c: &CaseResult) -> Option<LibrarySummary> {
    let col = |f: fn(&Slice) -> f64| median(&c.slices.iter().map(f).collect::<Vec<_>>());
    let median_ns = col(|s| s.both_ns)?;
    Some(LibrarySummary {
        library: c.info.library.clone(),
        variant: c.info.variant.clone(),
        settings: c.info.settings.clone(),
        rounds: c.slices.len(),
        median_ns,
        first_median_ns: col(|s| s.first_ns)?,
        second_median_ns: col(|s| s.second_ns)?,
        // bytes per ns * 1e3 = MB/s (10^6 B/s)
        mb_per_s: c.info.bytes_per_iteration.map(|b| b as f64 / median_ns * 1e3),
        ratio: None,
        best: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(library: &str, times: &[f64]) -> CaseResult {
        CaseResult {
            info: CaseInfo {
                id: format!("handshake/p/{library}"),
                row: "handshake/p".into(),
                group: "handshake".into(),
                parameters: "p".into(),
                library: library.into(),
                variant: "default".into(),
                bytes_per_iteration: None,
                settings: None,
                skip: None,
            },
            slices: times
                .iter()
                .enumerate()
                .map(|(i, &t)| Slice {
                    round: i as u32,
                    iters: 1,
                    both_ns: t,
                    first_ns: t / 2.0,
                    second_ns: t / 2.0,
                })
                .collect(),
        }
    }

    #[test]
    fn best_is_the_lowest_median_and_ratios_are_paired() {
        let speed = [1.0, 2.0, 1.0, 1.5, 1.0, 2.0, 1.1, 1.0, 1.2, 1.0];
        let a: Vec<f64> = speed.iter().map(|s| 100.0 * s).collect();
        let b: Vec<f64> = speed.iter().map(|s| 150.0 * s).collect();
        let floor: Vec<f64> = speed.iter().map(|s| 1.0 * s).collect();
        let rows = summarise(&[case("b-1", &b), case(FLOOR, &floor), case("a-1", &a)]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.best().unwrap().library, "a-1");
        let lb = r.libraries.iter().find(|l| l.library == "b-1").unwrap();
        let ratio = lb.ratio.unwrap();
        assert!((ratio.estimate - 1.5).abs() < 1e-9 && ratio.low > 1.49 && ratio.high < 1.51);
        assert!(lb.clear_difference());
        assert!(r.floor.as_ref().is_some_and(|f| f.ratio.is_none() && !f.best));
    }
}
