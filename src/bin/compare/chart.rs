//! One SVG per group: for each row, every TLS library's time ratio to the
//! row's best with its 95% interval, drawn with tls-bench-charts.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use tls_bench_charts::{
    self as charts, Area, Categories, Drawn, Key, Orientation, Whisker,
    plotters::{
        coord::ranged1d::{AsRangedCoord, ValueFormatter},
        prelude::{BLACK, ChartBuilder, Color, IntoLogRange, LineSeries, RGBColor, Ranged},
    },
};

use crate::model::RowSummary;

/// Chart width, px.
const WIDTH: u32 = 1400;
/// Width of the legend column on the right, px.
const LEGEND_WIDTH: u32 = 260;
/// Height above and below the rows (title, x axis), px.
const FRAME_HEIGHT: u32 = 120;

/// Draws `rows` of one group (all with `group == group`) into the SVG file
/// `path` (creating its directory): one band per row, top to bottom in the
/// order given, labelled with the row's full parameters; in each band one
/// marker per TLS library at its time ratio to the row's best (1.0 = best,
/// above 1 slower) with an error bar over its 95% interval. The x axis starts at
/// 1.0 (lower if an interval reaches below it) and is logarithmic when the
/// largest interval bound exceeds 4, linear otherwise. A colour per library
/// (tab10), with a legend on the right; libraries without a ratio (skipped, or none
/// computed) and the plaintext floor are not drawn. Size: 1400 px wide,
/// 120 px plus 40 px or more per row high.
///
/// Errors: no rows, or the file cannot be written.
pub fn draw(path: &Path, group: &str, rows: &[RowSummary]) -> Result<()> {
    if rows.is_empty() {
        return Err(anyhow!("no {group} rows to draw into {}", path.display()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut libraries: Vec<&str> =
        rows.iter().flat_map(|r| r.libraries.iter().map(|l| l.library.as_str())).collect();
    libraries.sort_unstable();
    libraries.dedup();
    let row_height = 40.max(8 * libraries.len() as u32 + 12);
    let height = FRAME_HEIGHT + row_height * rows.len() as u32;

    let ratios = rows.iter().flat_map(|r| r.libraries.iter().filter_map(|l| l.ratio));
    let (low, high) = ratios.fold((1.0f64, 1.0f64), |(lo, hi), r| (lo.min(r.low), hi.max(r.high)));
    let x_min = (low * 0.98).min(0.98);

    charts::svg(path, (WIDTH, height), |root| {
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let title = format!("{group}: ratio to the best library (95% CI)");
        if high > 4.0 {
            plot(&plot_area, (x_min..high * 1.15).log_scale(), &title, rows, &libraries)?;
        } else {
            plot(&plot_area, x_min..(high + (high - x_min) * 0.05).max(1.1), &title, rows, &libraries)?;
        }
        legend(&legend_area, &libraries)
    })
}

/// The chart proper on `area`, x axis `x_spec` (linear or log ratio).
fn plot<X>(area: &Area, x_spec: X, title: &str, rows: &[RowSummary], libraries: &[&str]) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = rows.len();
    let categories = Categories::top_down(rows.iter().map(|r| r.parameters.clone()).collect());
    let longest = rows.iter().map(|r| r.parameters.chars().count()).max().unwrap_or(0);
    // ~6 px per character at 12 px.
    let label_width = (longest as f64 * 6.0) as u32 + 16;
    let mut chart = ChartBuilder::on(area)
        .caption(title, charts::font(22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(label_width.min(700))
        .build_cartesian_2d(x_spec, categories.range())
        .drawn()?;
    let ratio = |x: &f64| format!("{x:.2}");
    let mut mesh = charts::mesh(&mut chart);
    categories
        .on_y(&mut mesh)
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .x_label_formatter(&ratio)
        .x_desc("time ratio to the row's best (1.0 = best)")
        .axis_desc_style(charts::font(14))
        .draw()
        .drawn()?;

    // Row separators and the 1.0 line.
    let (x_lo, x_hi) = {
        let r = chart.x_range();
        (r.start, r.end)
    };
    let grey = RGBColor(0xcc, 0xcc, 0xcc);
    for k in 0..n.saturating_sub(1) {
        let y = k as f64 + 0.5;
        chart.draw_series(LineSeries::new([(x_lo, y), (x_hi, y)], grey)).drawn()?;
    }
    chart.draw_series(LineSeries::new([(1.0, -0.5), (1.0, n as f64 - 0.5)], BLACK.mix(0.5))).drawn()?;

    // One marker and error bar per library and row, the libraries spread
    // over the band in legend order (first at the top).
    let spread = 0.8 / libraries.len() as f64;
    for (j, library) in libraries.iter().enumerate() {
        let color = charts::tab10(j);
        let offset = (libraries.len() as f64 - 1.0) / 2.0 * spread - j as f64 * spread;
        let points: Vec<(f64, tls_bench_results::compare::Interval)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let l = r.libraries.iter().find(|l| l.library == *library)?;
                Some((categories.at(i) + offset, l.ratio?))
            })
            .collect();
        let whiskers =
            points.iter().map(|(y, r)| Whisker { at: *y, low: r.low, value: r.estimate, high: r.high });
        charts::error_bars(&mut chart, Orientation::Horizontal, whiskers, color, 5)?;
        charts::markers(&mut chart, points.iter().map(|(y, r)| (r.estimate, *y)), color)?;
    }
    Ok(())
}

/// The legend: a marker and the name of each library, in colour order.
fn legend(area: &Area, libraries: &[&str]) -> Result<()> {
    charts::text(area, "libraries", (10, 50), charts::font(15))?;
    for (j, library) in libraries.iter().enumerate() {
        let y = 80 + 22 * j as i32;
        charts::key(area, (18, y), Key { length: 0, stroke: 0, radius: 5 }, charts::tab10(j))?;
        charts::text(area, library, (30, y - 7), charts::font(charts::LEGEND_SIZE))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::fixture;

    #[test]
    fn writes_an_svg_naming_every_library() {
        let dir = std::env::temp_dir().join(format!("tls-bench-compare-chart-{}", std::process::id()));
        for (group, scale) in [("handshake", 1.0), ("throughput", 3.0)] {
            let mut rows: Vec<RowSummary> = fixture().into_iter().filter(|r| r.group == group).collect();
            // More rows, so every row label must be placed; the throughput
            // chart goes logarithmic (interval bounds up to 5.9).
            for k in 0..12 {
                let mut r = rows[0].clone();
                r.parameters = format!("{},variant-{k}", r.parameters);
                for l in r.libraries.iter_mut().filter(|l| !l.best) {
                    let i = l.ratio.as_mut().unwrap();
                    let f = 1.0 + scale * k as f64 / 12.0;
                    (i.estimate, i.low, i.high) = (i.estimate * f, i.low * f, i.high * f);
                }
                rows.push(r);
            }
            // Eight libraries in all.
            for r in rows.iter_mut() {
                let extra: Vec<_> = (0..6)
                    .map(|k| {
                        let mut l = r.libraries[1].clone();
                        l.library = format!("extra-{k}.0+backend");
                        l.ratio = l.ratio.map(|mut i| {
                            (i.estimate, i.low, i.high) =
                                (i.estimate + 0.05 * k as f64, i.low, i.high + 0.1 * k as f64);
                            i
                        });
                        l
                    })
                    .collect();
                r.libraries.extend(extra);
            }
            let path = dir.join(format!("nested/{group}.svg"));
            draw(&path, group, &rows).unwrap();
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.len() > 1000);
            assert!(svg.contains(&format!("{group}: ratio to the best library (95% CI)")));
            for r in &rows {
                assert!(svg.contains(&r.parameters), "{} missing from {}", r.parameters, path.display());
                for l in &r.libraries {
                    assert!(svg.contains(&l.library), "{} missing from {}", l.library, path.display());
                }
            }
        }
        assert!(draw(&dir.join("empty.svg"), "handshake", &[]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
