//! `compare diff A B`: how far two runs' ratios lie apart, row by row and
//! library by library: the stability check of the comparison (two
//! consecutive runs on one machine should agree within a few percent).

use std::{fs, path::Path};

use anyhow::{Context, Result};
use tls_bench::params::Params;

use crate::model::RowSummary;

/// One library's ratio in both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// `group/parameters`.
    pub row: String,
    /// The library.
    pub library: String,
    /// Its ratio to the row's best in run A and run B.
    pub a: f64,
    /// See `a`.
    pub b: f64,
    /// Whether the row is at the centre of the sweep ([`Params::default`]):
    /// the handshake there and the throughput rows of those parameters.
    pub centre: bool,
}

impl Difference {
    /// `|b - a| / a`, in percent.
    pub fn percent(&self) -> f64 {
        (self.b - self.a).abs() / self.a * 100.0
    }
}

/// The rows of a `results.json` written by `compare`. Errors: the file is
/// missing or not such a file (naming it).
pub fn read_rows(path: &Path) -> Result<Vec<RowSummary>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    serde_json::from_value(v["rows"].clone())
        .with_context(|| format!("{}: no compare rows (is it a compare results.json?)", path.display()))
}

/// Every (row, library) with a ratio in both `a` and `b`, in `a`'s order.
pub fn differences(a: &[RowSummary], b: &[RowSummary]) -> Vec<Difference> {
    let centre = Params::default().to_string();
    let mut out = Vec::new();
    for ra in a {
        let Some(rb) = b.iter().find(|r| r.row == ra.row) else { continue };
        for la in &ra.libraries {
            let Some(lb) = rb.libraries.iter().find(|l| l.library == la.library) else { continue };
            if let (Some(x), Some(y)) = (la.ratio, lb.ratio) {
                out.push(Difference {
                    row: ra.row.clone(),
                    library: la.library.clone(),
                    a: x.estimate,
                    b: y.estimate,
                    centre: ra.parameters == centre || ra.parameters.starts_with(&format!("{centre},")),
                });
            }
        }
    }
    out
}

/// A Markdown table of `diffs` and a closing line with the largest
/// difference, overall and at the centre of the sweep.
pub fn markdown(diffs: &[Difference]) -> String {
    let mut out =
        String::from("| row | library | ratio A | ratio B | difference |\n| --- | --- | --- | --- | --- |\n");
    for d in diffs {
        let mark = if d.centre { " (centre)" } else { "" };
        out.push_str(&format!(
            "| {}{mark} | {} | {:.3} | {:.3} | {:.2}% |\n",
            d.row,
            d.library,
            d.a,
            d.b,
            d.percent()
        ));
    }
    let max = |centre_only: bool| {
        diffs.iter().filter(|d| d.centre || !centre_only).map(Difference::percent).fold(0.0, f64::max)
    };
    out.push_str(&format!(
        "\nlargest difference: {:.2}% at the sweep centre, {:.2}% over all rows\n",
        max(true),
        max(false)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LibrarySummary;
    use crate::stats::Interval;

    fn row(parameters: &str, ratios: &[(&str, f64)]) -> RowSummary {
        RowSummary {
            row: format!("handshake/{parameters}"),
            group: "handshake".into(),
            parameters: parameters.into(),
            libraries: ratios
                .iter()
                .map(|(l, r)| LibrarySummary {
                    library: l.to_string(),
                    variant: "default".into(),
                    settings: None,
                    rounds: 10,
                    median_ns: 1000.0 * r,
                    first_median_ns: 500.0 * r,
                    second_median_ns: 500.0 * r,
                    mb_per_s: None,
                    ratio: Some(Interval { estimate: *r, low: *r, high: *r }),
                    best: *r == 1.0,
                })
                .collect(),
            floor: None,
            skipped: Vec::new(),
        }
    }

    #[test]
    fn differences_pair_rows_and_libraries_and_mark_the_centre() {
        let centre = Params::default().to_string();
        let a = [row(&centre, &[("x", 1.0), ("y", 1.50)]), row("other", &[("x", 1.0), ("y", 2.0)])];
        let b = [row("other", &[("x", 1.0), ("y", 2.2)]), row(&centre, &[("x", 1.0), ("y", 1.53)])];
        let d = differences(&a, &b);
        assert_eq!(d.len(), 4);
        let y_centre = d.iter().find(|d| d.centre && d.library == "y").unwrap();
        assert!((y_centre.percent() - 2.0).abs() < 1e-9);
        let y_other = d.iter().find(|d| !d.centre && d.library == "y").unwrap();
        assert!((y_other.percent() - 10.0).abs() < 1e-9);
        let text = markdown(&d);
        assert!(
            text.contains("largest difference: 2.00% at the sweep centre, 10.00% over all rows"),
            "{text}"
        );
    }
}
