//! One SVG per group: for each row, every TLS library's time ratio to the
//! row's best with its 95% interval, drawn with plotters.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::{
    coord::{
        Shift,
        ranged1d::{AsRangedCoord, ValueFormatter},
    },
    element::ErrorBar,
    prelude::*,
};

use crate::model::RowSummary;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Chart width, px.
const WIDTH: u32 = 1400;
/// Width of the legend column on the right, px.
const LEGEND_WIDTH: u32 = 260;
/// Height above and below the rows (title, x axis), px.
const FRAME_HEIGHT: u32 = 120;

/// A colour per library (matplotlib's tab10), reused past ten.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

fn plot_err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the chart: {e}")
}

/// Draws `rows` of one group (all with `group == group`) into the SVG file
/// `path` (creating its directory): one band per row, top to bottom in the
/// order given, labelled with the row's full parameters; in each band one
/// marker per TLS library at its time ratio to the row's best (1.0 = best,
/// above 1 slower) with an error bar over its 95% interval. The x axis starts at
/// 1.0 (lower if an interval reaches below it) and is logarithmic when the
/// largest interval bound exceeds 4, linear otherwise. A colour per library,
/// with a legend on the right; libraries without a ratio (skipped, or none
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

    let result = (|| {
        let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let title = format!("{group}: ratio to the best library (95% CI)");
        if high > 4.0 {
            plot(&plot_area, (x_min..high * 1.15).log_scale(), &title, rows, &libraries)?;
        } else {
            plot(&plot_area, x_min..(high + (high - x_min) * 0.05).max(1.1), &title, rows, &libraries)?;
        }
        legend(&legend_area, &libraries)?;
        root.present().map_err(plot_err)
    })();
    result.with_context(|| format!("writing {}", path.display()))
}

/// The chart proper on `area`, x axis `x_spec` (linear or log ratio).
fn plot<X>(area: &Area, x_spec: X, title: &str, rows: &[RowSummary], libraries: &[&str]) -> Result<()>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let n = rows.len();
    let longest = rows.iter().map(|r| r.parameters.chars().count()).max().unwrap_or(0);
    // ~6 px per character at 12 px.
    let label_width = (longest as f64 * 6.0) as u32 + 16;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(label_width.min(700))
        .build_cartesian_2d(x_spec, -0.5..(n as f64 - 0.5))
        .map_err(plot_err)?;
    let y_of = |i: usize| (n - 1 - i) as f64;
    let label = |y: &f64| {
        let i = y.round();
        if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
            rows[n - 1 - i as usize].parameters.clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(RGBColor(0xf2, 0xf2, 0xf2))
        .y_labels(n)
        .y_label_formatter(&label)
        .x_label_formatter(&|x| format!("{x:.2}"))
        .x_desc("time ratio to the row's best (1.0 = best)")
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(plot_err)?;

    // Row separators and the 1.0 line.
    let (x_lo, x_hi) = {
        let r = chart.x_range();
        (r.start, r.end)
    };
    let grey = RGBColor(0xcc, 0xcc, 0xcc);
    for k in 0..n.saturating_sub(1) {
        let y = k as f64 + 0.5;
        chart.draw_series(LineSeries::new([(x_lo, y), (x_hi, y)], grey)).map_err(plot_err)?;
    }
    chart
        .draw_series(LineSeries::new([(1.0, -0.5), (1.0, n as f64 - 0.5)], BLACK.mix(0.5)))
        .map_err(plot_err)?;

    // One marker and error bar per library and row, the libraries spread
    // over the band in legend order (first at the top).
    let spread = 0.8 / libraries.len() as f64;
    for (j, library) in libraries.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let offset = (libraries.len() as f64 - 1.0) / 2.0 * spread - j as f64 * spread;
        let points: Vec<(f64, tls_bench_results::compare::Interval)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let l = r.libraries.iter().find(|l| l.library == *library)?;
                Some((y_of(i) + offset, l.ratio?))
            })
            .collect();
        chart
            .draw_series(
                points.iter().map(|(y, r)| ErrorBar::new_horizontal(*y, r.low, r.estimate, r.high, color, 5)),
            )
            .map_err(plot_err)?;
        chart
            .draw_series(points.iter().map(|(y, r)| Circle::new((r.estimate, *y), 4, color.filled())))
            .map_err(plot_err)?;
    }
    Ok(())
}

/// The legend: a marker and the name of each library, in colour order.
fn legend(area: &Area, libraries: &[&str]) -> Result<()> {
    area.draw(&Text::new("libraries", (10, 50), ("sans-serif", 15))).map_err(plot_err)?;
    for (j, library) in libraries.iter().enumerate() {
        let y = 80 + 22 * j as i32;
        let color = PALETTE[j % PALETTE.len()];
        area.draw(&Circle::new((18, y), 5, color.filled())).map_err(plot_err)?;
        area.draw(&Text::new(library.to_string(), (30, y - 7), ("sans-serif", 13))).map_err(plot_err)?;
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
