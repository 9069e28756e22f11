//! Runs of `compare` side by side, with the intervals of
//! [`crate::stats::epoch_log_ratio`]: the change of each ratio between two
//! runs (`compare diff`), and how often one run's interval covers another
//! run's estimate over N runs (`compare coverage`, `scripts/coverage.sh`).
//!
//! Both work from the slices a `results.json` keeps (`cases`), so any two
//! libraries of a row can be compared, not only a library and its run's
//! best.

use std::{collections::BTreeMap, path::Path};

use anyhow::{Context, Result};

use crate::{
    compare::{CaseResult, Difference, RowSummary, Slice, differences, read_rows},
    stats::{LogRatio, Paired, epoch_excess, epoch_log_ratio, t_quantile, t_within},
    table::{Style, Table},
};

/// A `results.json` written by `compare`: its rows and its cases with
/// every slice.
pub struct RunData {
    /// Its row summaries.
    pub rows: Vec<RowSummary>,
    /// Its cases (empty in a file without them: its changes then have no
    /// intervals).
    pub cases: Vec<CaseResult>,
}

impl RunData {
    /// Reads `path` (a `results.json`, or the directory holding it).
    /// Errors: missing, unreadable, or not a compare results file, each
    /// naming it.
    pub fn read(path: &Path) -> Result<RunData> {
        let file = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
        let rows = read_rows(&file)?;
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        let cases = match v.get("cases") {
            None => Vec::new(),
            Some(c) => serde_json::from_value(c.clone())
                .with_context(|| format!("{}: unreadable cases", file.display()))?,
        };
        Ok(RunData { rows, cases })
    }

    /// The slices of `library` in `row` (none: it did not run there).
    fn slices(&self, row: &str, library: &str) -> Option<&[Slice]> {
        let c = self.cases.iter().find(|c| c.info.row == row && c.info.library == library)?;
        (c.failure.is_none() && !c.slices.is_empty()).then_some(c.slices.as_slice())
    }

    /// `library`'s and `reference`'s slices in `row`, paired by round.
    /// `None`: either did not run there.
    fn pairs(&self, row: &str, library: &str, reference: &str) -> Option<Vec<Paired>> {
        Some(paired(self.slices(row, library)?, self.slices(row, reference)?, |s| s.both_ns))
    }

    /// `library`'s time ratio to `reference` in `row` ([`epoch_log_ratio`]
    /// of their paired slices). `None`: either did not run there.
    pub fn log_ratio(&self, row: &str, library: &str, reference: &str) -> Option<LogRatio> {
        epoch_log_ratio(&self.pairs(row, library, reference)?)
    }
}

/// The rounds `a` and `b` both have, paired: `figure` of each, and the
/// epoch.
pub fn paired(a: &[Slice], b: &[Slice], figure: fn(&Slice) -> f64) -> Vec<Paired> {
    let b: BTreeMap<u32, &Slice> = b.iter().map(|s| (s.round, s)).collect();
    a.iter()
        .filter_map(|s| b.get(&s.round).map(|t| Paired { epoch: s.epoch, a: figure(s), b: figure(t) }))
        .collect()
}

/// A [`Difference`] with each run's ratio on the log scale, when both runs
/// kept the slices.
#[derive(Clone, Debug)]
pub struct Change {
    /// The libraries, the row and the point ratios.
    pub difference: Difference,
    /// Run A's and run B's ratio (`None`: a run without slices).
    pub logs: Option<(LogRatio, LogRatio)>,
}

impl Change {
    /// The change from A to B as a factor minus one, with its [`crate::stats::CONFIDENCE`]
    /// interval: `exp(B - A ± t · sqrt(seA² + seB²)) - 1`, `t` of the
    /// fewer units' degrees of freedom (a conservative Welch interval).
    /// `None` without slices.
    pub fn interval(&self) -> Option<(f64, f64, f64)> {
        let (a, b) = self.logs?;
        let d = b.mean - a.mean;
        let half = t_quantile(a.units.min(b.units).saturating_sub(1)) * (a.se.powi(2) + b.se.powi(2)).sqrt();
        Some((d.exp() - 1.0, (d - half).exp() - 1.0, (d + half).exp() - 1.0))
    }

    /// Whether the ratio moved beyond the noise both runs show (the
    /// change's interval excludes 0); `None` without slices.
    pub fn beyond_noise(&self) -> Option<bool> {
        self.interval().map(|(_, low, high)| low > 0.0 || high < 0.0)
    }

    /// The change in percent: from the log ratios when there are slices,
    /// else from the point ratios ([`Difference::percent`], unsigned).
    pub fn percent(&self) -> f64 {
        self.interval().map_or(self.difference.percent(), |(c, _, _)| c.abs() * 100.0)
    }

    /// What the change means: `no change` (within the noise), `slower` or
    /// `faster` (the library against its reference, beyond it), or
    /// `no interval` (a run without slices).
    pub fn verdict(&self) -> &'static str {
        match (self.beyond_noise(), self.interval()) {
            (Some(false), _) => "no change",
            (Some(true), Some((c, _, _))) if c > 0.0 => "slower",
            (Some(true), _) => "faster",
            (None, _) => "no interval",
        }
    }
}

/// [`differences`] of `a` and `b`, each with both runs' log ratios.
pub fn changes(a: &RunData, b: &RunData) -> Vec<Change> {
    differences(&a.rows, &b.rows)
        .into_iter()
        .map(|d| {
            let logs = a.log_ratio(&d.row, &d.library, &d.reference).zip(b.log_ratio(
                &d.row,
                &d.library,
                &d.reference,
            ));
            Change { difference: d, logs }
        })
        .collect()
}

/// A Markdown table of `changes` (each ratio with its interval, the
/// change with its interval and verdict), and closing lines with the
/// largest change at the sweep centre and overall, and how many moved
/// beyond the noise.
pub fn changes_markdown(changes: &[Change]) -> String {
    let mut table = Table::new(&[
        "row",
        "library",
        "against",
        "ratio A [95%]",
        "ratio B [95%]",
        "change [95%]",
        "verdict",
    ])
    .style(Style::Spaced);
    let ratio = |l: Option<LogRatio>, point: f64| match l {
        Some(l) => {
            let i = l.interval();
            format!("{:.3} [{:.3}, {:.3}]", i.estimate, i.low, i.high)
        }
        None => format!("{point:.3}"),
    };
    for c in changes {
        let d = &c.difference;
        let mark = if d.centre { " (centre)" } else { "" };
        let change = match c.interval() {
            Some((x, low, high)) => format!("{:+.2}% [{:+.2}, {:+.2}]", x * 100.0, low * 100.0, high * 100.0),
            None => format!("{:.2}%", d.percent()),
        };
        table.row([
            format!("{}{mark}", d.row),
            d.library.clone(),
            d.reference.clone(),
            ratio(c.logs.map(|l| l.0), d.a),
            ratio(c.logs.map(|l| l.1), d.b),
            change,
            c.verdict().to_string(),
        ]);
    }
    let mut out = table.markdown();
    let max = |centre: bool| {
        changes.iter().filter(|c| c.difference.centre || !centre).map(Change::percent).fold(0.0, f64::max)
    };
    let moved = |centre: bool| {
        changes.iter().filter(|c| (c.difference.centre || !centre) && c.beyond_noise() == Some(true)).count()
    };
    out.push_str(&format!(
        "\nlargest change: {:.2}% at the sweep centre, {:.2}% over all rows\n\
         beyond the noise (the change's 95% interval excludes 0): {} of {} ({} at the sweep centre)\n",
        max(true),
        max(false),
        moved(false),
        changes.len(),
        moved(true)
    ));
    out
}

/// The changes that fail a gate of `max_percent`: at the sweep centre,
/// moved more than `max_percent` and beyond the noise (without slices:
/// more than `max_percent`).
pub fn gate(changes: &[Change], max_percent: f64) -> Vec<&Change> {
    changes
        .iter()
        .filter(|c| c.difference.centre && c.percent() > max_percent && c.beyond_noise() != Some(false))
        .collect()
}

/// One kind of cell over N runs ([`coverage`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Coverage {
    /// `handshake`, `throughput`, ...: the rows' group.
    pub group: String,
    /// Cells (row, library against the row's reference) in every run.
    pub cells: usize,
    /// Ordered pairs of runs times cells.
    pub triples: usize,
    /// Of those, how many had the other run's estimate inside the first
    /// run's interval.
    pub inside: usize,
    /// The rate a calibrated interval gives, averaged over the triples:
    /// for two independent runs of equal precision and `k` units, the
    /// chance that Student's t with `k - 1` degrees of freedom lies within
    /// `t(0.975, k-1) / sqrt(2)`: about 83% for many units, 86% for 8.
    pub calibrated: f64,
}

/// A cell whose estimates spread over the runs more than its intervals are
/// wide.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// `group/parameters`.
    pub row: String,
    /// The library, against `reference`.
    pub library: String,
    /// The row's reference: the first run's fastest library present in
    /// every run.
    pub reference: String,
    /// (largest / smallest estimate - 1), percent.
    pub spread_percent: f64,
    /// The median over the runs of (high / low - 1), percent.
    pub interval_percent: f64,
    /// The median over the runs of [`epoch_excess`]: about 1 when the
    /// ratio's noise is per slice, above when it lasts an epoch (a
    /// process, or the machine's longer spells). NaN without epochs.
    pub epoch_excess: f64,
}

/// Over `runs` (two or more of the same filter): for each group, the
/// fraction of (run, other run, cell) triples whose other-run estimate lies
/// inside the run's interval, beside the calibrated rate; and each cell's
/// spread against its intervals' width. A cell is a library against the
/// first run's fastest library of its row that ran in every run.
pub fn coverage(runs: &[RunData]) -> (Vec<Coverage>, Vec<Spread>) {
    let mut by_group: BTreeMap<String, Coverage> = BTreeMap::new();
    let mut spreads = Vec::new();
    let Some(first) = runs.first() else { return (Vec::new(), Vec::new()) };
    for row in &first.rows {
        let everywhere = |library: &str| runs.iter().all(|r| r.slices(&row.row, library).is_some());
        let Some(reference) = row
            .libraries
            .iter()
            .filter(|l| everywhere(&l.library))
            .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
            .map(|l| l.library.clone())
        else {
            continue;
        };
        for lib in row.libraries.iter().filter(|l| l.library != reference && everywhere(&l.library)) {
            let logs: Option<Vec<LogRatio>> =
                runs.iter().map(|r| r.log_ratio(&row.row, &lib.library, &reference)).collect();
            let Some(logs) = logs else { continue };
            let g = by_group
                .entry(row.group.clone())
                .or_insert_with(|| Coverage { group: row.group.clone(), ..Default::default() });
            g.cells += 1;
            for (i, li) in logs.iter().enumerate() {
                let interval = li.interval();
                for (j, lj) in logs.iter().enumerate() {
                    if i == j {
                        continue;
                    }
                    g.triples += 1;
                    g.inside += usize::from(interval.contains(lj.mean.exp()));
                    let df = li.units.saturating_sub(1);
                    // Summed here, averaged over the triples below.
                    g.calibrated += t_within(t_quantile(df) / 2f64.sqrt(), df);
                }
            }
            let estimates: Vec<f64> = logs.iter().map(|l| l.mean.exp()).collect();
            let (lo, hi) =
                estimates.iter().fold((f64::INFINITY, 0f64), |(lo, hi), &e| (lo.min(e), hi.max(e)));
            let widths: Vec<f64> =
                logs.iter().map(|l| l.interval()).map(|i| (i.high / i.low - 1.0) * 100.0).collect();
            spreads.push(Spread {
                row: row.row.clone(),
                library: lib.library.clone(),
                reference: reference.clone(),
                spread_percent: (hi / lo - 1.0) * 100.0,
                interval_percent: crate::stats::median(&widths).unwrap_or(f64::NAN),
                epoch_excess: {
                    let excess: Option<Vec<f64>> = runs
                        .iter()
                        .map(|r| {
                            r.pairs(&row.row, &lib.library, &reference).as_deref().and_then(epoch_excess)
                        })
                        .collect();
                    excess.and_then(|e| crate::stats::median(&e)).unwrap_or(f64::NAN)
                },
            });
        }
    }
    let groups = by_group
        .into_values()
        .map(|g| Coverage { calibrated: g.calibrated / g.triples.max(1) as f64, ..g })
        .collect();
    (groups, spreads)
}

/// [`coverage`]'s result in Markdown: one line per group (cells,
/// triples, inside, calibrated), then every cell's spread and interval
/// width, a cell whose spread exceeds both 1% and its interval's width
/// marked.
pub fn coverage_markdown(runs: usize, groups: &[Coverage], spreads: &[Spread]) -> String {
    let mut out = format!(
        "{runs} runs. Coverage: of (run, other run, cell) triples, the share whose other-run ratio lies \
         inside the run's 95% interval, beside what calibrated intervals give.\n\n"
    );
    let mut table = Table::new(&["group", "cells", "triples", "inside", "calibrated"]).style(Style::Spaced);
    for g in groups {
        table.row([
            g.group.clone(),
            g.cells.to_string(),
            g.triples.to_string(),
            format!("{:.1}%", g.inside as f64 * 100.0 / g.triples.max(1) as f64),
            format!("{:.1}%", g.calibrated * 100.0),
        ]);
    }
    out.push_str(&table.markdown());
    out.push_str(
        "\nSpread of each ratio over the runs (largest / smallest - 1) beside its interval's width (high / \
         low - 1, the runs' median); `!` marks a spread above 1% and above the width. Epoch excess: how \
         much more a run's epochs differ than their rounds' noise predicts (the runs' median; about 1: \
         the noise is per slice; above: something lasts an epoch, a process's layout or the machine's \
         longer spells).\n\n",
    );
    // The last column, untitled, holds the mark.
    let mut table =
        Table::new(&["row", "library", "against", "spread", "interval width", "epoch excess", ""])
            .style(Style::Spaced);
    for s in spreads {
        let mark = if s.spread_percent > 1.0 && s.spread_percent > s.interval_percent { "!" } else { "" };
        table.row([
            s.row.clone(),
            s.library.clone(),
            s.reference.clone(),
            format!("{:.2}%", s.spread_percent),
            format!("{:.2}%", s.interval_percent),
            format!("{:.1}", s.epoch_excess),
            mark.to_string(),
        ]);
    }
    out.push_str(&table.markdown());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{CaseInfo, Interval, LibrarySummary};
    use tls_bench_harness::params::Params;

    /// A run of one sweep-centre row: libraries `a` and `b`, 8 epochs of 5
    /// rounds; `b` is `ratio` times `a` in epoch `e` times `1 + wobble(e)`.
    fn run(ratio: f64, wobble: impl Fn(u32) -> f64) -> RunData {
        let centre = Params::default().to_string();
        let row = format!("handshake/{centre}");
        let case = |library: &str, factor: &dyn Fn(u32) -> f64| CaseResult {
            failure: None,
            info: CaseInfo {
                id: format!("{row}/{library}"),
                row: row.clone(),
                group: "handshake".into(),
                parameters: centre.clone(),
                library: library.into(),
                variant: "default".into(),
                bytes_per_iteration: None,
                settings: None,
                skip: None,
                crypto_floor: None,
                plaintext: false,
            },
            slices: (0..40u32)
                .map(|round| {
                    let t = 1000.0 * factor(round / 5) * (1.0 + (round % 3) as f64 * 0.2);
                    Slice {
                        round,
                        epoch: round / 5,
                        iters: 1,
                        both_ns: t,
                        first_ns: t / 2.0,
                        second_ns: t / 2.0,
                    }
                })
                .collect(),
        };
        let summary = |library: &str, r: f64| LibrarySummary {
            library: library.into(),
            variant: "default".into(),
            settings: None,
            rounds: 40,
            median_ns: 1000.0 * r,
            first_median_ns: 500.0 * r,
            second_median_ns: 500.0 * r,
            mb_per_s: None,
            ratio: Some(Interval { estimate: r, low: r, high: r }),
            best: r == 1.0,
            protocol: None,
        };
        RunData {
            rows: vec![RowSummary {
                row: row.clone(),
                group: "handshake".into(),
                parameters: centre.clone(),
                libraries: vec![summary("a", 1.0), summary("b", ratio)],
                floor: None,
                crypto_floors: Vec::new(),
                skipped: Vec::new(),
                failed: Vec::new(),
            }],
            cases: vec![case("a", &|_| 1.0), case("b", &|e| ratio * (1.0 + wobble(e)))],
        }
    }

    /// Epoch `e`'s wobble, ±2% in a fixed pattern shifted by `seed`.
    fn wobble(seed: u32) -> impl Fn(u32) -> f64 {
        move |e| [0.02, -0.015, 0.005, -0.02, 0.01, 0.0, -0.005, 0.015][((e + seed) % 8) as usize]
    }

    #[test]
    fn a_rerun_within_the_noise_is_no_change_and_a_shift_beyond_it_is_named() {
        let a = run(1.5, wobble(0));
        // Another run of the same code: its epochs wobble differently.
        let same = run(1.5, wobble(3));
        let c = changes(&a, &same);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict(), "no change", "{:?}", c[0].interval());
        assert!(gate(&c, 0.0).is_empty());
        // 6% slower, the same wobble: beyond the noise, and past 3%.
        let slower = run(1.59, wobble(3));
        let c = changes(&a, &slower);
        assert_eq!(c[0].verdict(), "slower", "{:?}", c[0].interval());
        assert!((c[0].percent() - 6.0).abs() < 1.0, "{}", c[0].percent());
        assert_eq!(gate(&c, 3.0).len(), 1);
        assert!(gate(&c, 10.0).is_empty());
        let md = changes_markdown(&c);
        assert!(md.contains("| slower |") && md.contains("beyond the noise"), "{md}");
    }

    #[test]
    fn coverage_counts_each_ordered_pair_and_gives_the_calibrated_rate() {
        let runs: Vec<RunData> = (0..4).map(|seed| run(1.5, wobble(seed))).collect();
        let (groups, spreads) = coverage(&runs);
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!((g.cells, g.triples), (1, 12));
        assert!(g.inside <= 12);
        // 8 epochs: P(|T_7| < t(0.975, 7) / sqrt(2)) is about 0.86.
        assert!((g.calibrated - 0.86).abs() < 0.01, "{g:?}");
        assert_eq!(spreads.len(), 1);
        assert!(spreads[0].spread_percent < 2.0 && spreads[0].interval_percent > 0.0, "{spreads:?}");
        let md = coverage_markdown(runs.len(), &groups, &spreads);
        assert!(md.contains("| handshake | 1 | 12 |"), "{md}");
    }
}
