//! The instruction counts' Markdown (`report --instructions`): tables of
//! the counts gungraun wrote (`cargo bench --bench instructions`, read by
//! [`crate::gungraun_json`]), in the format of the wall-time tables; and
//! with `--noise`, each count's difference from the run before it.

use std::collections::{BTreeMap, BTreeSet};

use crate::{gungraun_json::Count, table::Table};
use anyhow::{Result, bail};
use tls_bench_harness::params::Params;

/// Per-run noise the suite aims at (README, "Instruction counts"): every
/// figure, and the handshakes at the sweep centre, in percent.
const NOISE_GOAL_PCT: f64 = 0.3;
const CENTRE_NOISE_GOAL_PCT: f64 = 0.1;

/// One table per group: a row per parameter set, a column per TLS library
/// (instructions per handshake, or per byte moved, with the ratio to the
/// row's lowest), the plaintext floor beside them.
pub fn tables(counts: &[Count]) -> String {
    let mut groups: BTreeMap<&str, BTreeMap<&str, BTreeMap<&str, &Count>>> = BTreeMap::new();
    for c in counts {
        groups.entry(c.group()).or_default().entry(c.parameters()).or_default().insert(c.library(), c);
    }
    let mut out = String::new();
    for (group, rows) in &groups {
        let all = || rows.values().flat_map(|r| r.values());
        let libs: BTreeSet<&str> =
            rows.values().flat_map(|r| r.keys().copied()).filter(|l| *l != "plaintext").collect();
        let transfer = all().any(|c| c.is_transfer());
        let unit = if transfer { "instructions per byte" } else { "instructions per handshake" };
        let (first, last) = (
            all().map(|c| c.started_at.as_str()).min().unwrap_or_default(),
            all().map(|c| c.started_at.as_str()).max().unwrap_or_default(),
        );
        let mut iterations: Vec<u64> = all().map(|c| c.iterations).collect();
        iterations.sort();
        iterations.dedup();
        let iterations: Vec<String> = iterations.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "\n### {group} ({unit}; ratio to the row's lowest TLS library)\n\nCounted {} to {} (UTC), {} {} per count.\n\n",
            minute(first),
            minute(last),
            iterations.join(" or "),
            if transfer { "transfers of 64 KiB" } else { "handshakes" },
        ));
        let mut header = vec!["parameters".to_string()];
        header.extend(libs.iter().map(|l| l.to_string()));
        header.push("plaintext floor".into());
        let mut table = Table::new(&header);
        for (params, cells) in rows {
            let best = libs.iter().filter_map(|l| cells.get(l)).map(|c| c.per_unit()).reduce(f64::min);
            let mut row = vec![params.to_string()];
            for l in &libs {
                row.push(match (cells.get(l), best) {
                    (Some(c), Some(best)) => {
                        format!("{} ({:.2}x)", amount(c.per_unit(), transfer), c.per_unit() / best)
                    }
                    _ => "skipped".into(),
                });
            }
            row.push(match (cells.get("plaintext"), best) {
                (Some(c), Some(best)) => {
                    format!(
                        "{} ({:.2}% of the lowest TLS)",
                        amount(c.per_unit(), transfer),
                        c.per_unit() / best * 100.0
                    )
                }
                (Some(c), None) => amount(c.per_unit(), transfer),
                (None, _) => "-".into(),
            });
            table.row(row);
        }
        out.push_str(&table.markdown());
    }
    out
}

/// Each count's difference from the run before it, largest first, then the
/// largest overall and at the sweep centre against the goals. Errors: a
/// count without a previous run, or whose previous run counted another
/// number of iterations (run the suite twice in the same mode).
pub fn noise(counts: &[Count]) -> Result<String> {
    let centre = Params::default().to_string();
    let mut rows = Vec::new();
    for c in counts {
        let (Some((old_iterations, _)), Some(old)) = (c.previous, c.previous_per_unit()) else {
            bail!("{} has no previous run: run the suite twice (scripts/instructions-noise.sh does)", c.id);
        };
        if old_iterations != c.iterations {
            bail!(
                "{}: the previous run counted {old_iterations} iterations, this one {}: run the suite twice in the same mode",
                c.id,
                c.iterations
            );
        }
        let pct = (c.per_unit() - old) / old * 100.0;
        rows.push((pct, c));
    }
    rows.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
    let mut table = Table::new(&["benchmark", "previous run", "this run", "difference"]);
    for (pct, c) in &rows {
        let old = c.previous_per_unit().unwrap_or_default();
        let t = c.is_transfer();
        table.row([c.id.clone(), amount(old, t), amount(c.per_unit(), t), format!("{pct:+.4}%")]);
    }
    let mut out = table.markdown();
    let largest = |pred: &dyn Fn(&Count) -> bool| {
        rows.iter().filter(|(_, c)| pred(c)).map(|(p, c)| (p.abs(), *c)).next()
    };
    let verdict = |pct: f64, goal: f64| if pct <= goal { "within" } else { "OVER" };
    let tls = |c: &Count| c.library() != "plaintext";
    if let Some((pct, c)) = largest(&tls) {
        out.push_str(&format!(
            "\nLargest difference of a TLS library: {pct:.4}% ({}), {} the {NOISE_GOAL_PCT}% goal; {} counts.\n",
            c.id,
            verdict(pct, NOISE_GOAL_PCT),
            rows.iter().filter(|(_, c)| tls(c)).count()
        ));
    }
    if let Some((pct, c)) = largest(&|c: &Count| tls(c) && !c.is_transfer() && c.parameters() == centre) {
        out.push_str(&format!(
            "Largest at the sweep centre ({centre}): {pct:.4}% ({}), {} the {CENTRE_NOISE_GOAL_PCT}% goal.\n",
            c.id,
            verdict(pct, CENTRE_NOISE_GOAL_PCT)
        ));
    }
    if let Some((pct, c)) = largest(&|c: &Count| !tls(c)) {
        let change = (c.per_unit() - c.previous_per_unit().unwrap_or_default()).abs();
        let unit = if c.is_transfer() { "per byte" } else { "per handshake" };
        out.push_str(&format!(
            "The plaintext floor (the harness alone, no TLS; not held to the goals): largest {pct:.4}% ({}), {change:.1} instructions {unit}.\n",
            c.id
        ));
    }
    Ok(out)
}

/// `2026-11-23T00:31:15.98Z` as `2026-11-23 00:31`.
fn minute(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}

/// An instruction figure: per handshake in millions (`3.58 M`) or
/// thousands (`10.5 k`), per byte with two decimals (`4.56`).
fn amount(x: f64, transfer: bool) -> String {
    match x {
        _ if transfer => format!("{x:.2}"),
        x if x >= 1e6 => format!("{:.2} M", x / 1e6),
        x => format!("{:.1} k", x / 1e3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(id: &str, now: u64, before: Option<u64>) -> Count {
        Count {
            id: id.into(),
            iterations: 2,
            instructions: now,
            previous: before.map(|b| (2, b)),
            started_at: "2026-11-23T00:31:15.98Z".into(),
        }
    }

    #[test]
    fn tables_give_ratios_to_the_lowest_library_and_the_floor() {
        let p = Params::default().to_string();
        let t = tables(&[
            count(&format!("handshake/{p}/a-1"), 4_000_000, None),
            count(&format!("handshake/{p}/b-1"), 6_000_000, None),
            count(&format!("handshake/{p}/plaintext"), 20_000, None),
        ]);
        assert!(t.contains("### handshake (instructions per handshake;"), "{t}");
        assert!(t.contains("| a-1 | b-1 | plaintext floor |"), "{t}");
        assert!(t.contains("| 2.00 M (1.00x) | 3.00 M (1.50x) | 10.0 k (0.50% of the lowest TLS) |"), "{t}");
    }

    #[test]
    fn noise_needs_a_previous_run_and_reports_the_largest_difference() {
        let p = Params::default().to_string();
        assert!(noise(&[count("handshake/x/a", 10, None)]).unwrap_err().to_string().contains("twice"));
        let n = noise(&[
            count(&format!("handshake/{p}/a"), 1_000_000, Some(1_000_500)),
            count("throughput/y/a", 1_000, Some(1_010)),
            count(&format!("handshake/{p}/plaintext"), 1_100, Some(1_000)),
        ])
        .unwrap();
        assert!(
            n.contains(
                "plaintext floor (the harness alone, no TLS; not held to the goals): largest 10.0000%"
            ),
            "{n}"
        );
        assert!(n.contains("50.0 instructions per handshake"), "{n}");
        assert!(
            n.contains("Largest difference of a TLS library: 0.9901% (throughput/y/a), OVER the 0.3% goal"),
            "{n}"
        );
        assert!(n.contains("0.0500% (handshake/"), "{n}");
        assert!(n.contains("within the 0.1% goal"), "{n}");
    }
}
