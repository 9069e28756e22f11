//! `small-writes-<protocol>.svg`: the sender's median time per message, one
//! panel per library, one line per way of writing the message, drawn with
//! tls-bench-charts.

use std::path::Path;

use anyhow::{Result, anyhow};
use tls_bench_charts::{
    self as charts, Area, Categories, Drawn, Key,
    plotters::{
        prelude::{
            BLACK, BindKeyPoints, ChartBuilder, FontTransform, IntoLogRange, LabelAreaPosition, PathElement,
        },
        style::text_anchor::{HPos, Pos, VPos},
    },
};

use super::results::{Report, Row, distinct};

/// The strategies in the order of the legend; others found in a report
/// follow them.
const STRATEGIES: [&str; 3] = ["per-buffer", "coalesced", "vectored"];
const WIDTH: u32 = 1200;
const HEADER_HEIGHT: u32 = 100;
/// A panel's height without its x labels, in px.
const PANEL_HEIGHT: u32 = 260;
/// The x labels' font size (plotters' units), and the width of one of
/// their characters once rotated, in px (generous, digits are narrower).
const X_LABEL_SIZE: u32 = 12;
const X_LABEL_CHAR: u32 = 6;

/// The values `m` x 10^k (each `m` of `multiples`, any whole k) within
/// `range`, ascending: the ticks of a log axis.
fn ticks(range: &std::ops::Range<f64>, multiples: &[f64]) -> Vec<f64> {
    let first = range.start.log10().floor() as i32;
    let last = range.end.log10().ceil() as i32;
    (first..=last)
        .flat_map(|k| multiples.iter().map(move |m| m * 10f64.powi(k)))
        .filter(|v| range.contains(v))
        .collect()
}

/// Draws the p50 of every measured row of `protocol` (e.g. `TLSv1.3`) as
/// an SVG at `path`: one panel per library (in the order of
/// [`Report::libraries`]; two columns when there are several), x = the
/// messages in the order they first appear in the report (categorical,
/// labelled with [`Row::message`]), y = p50 in ns on a log scale shared by
/// all panels, one line with point markers per strategy (per-buffer,
/// coalesced, vectored; the same colour in every panel, one legend under
/// the title). Skipped rows (latency `None`) are absent from their line,
/// which is broken there. Errors: nothing measured for `protocol`, or the
/// graph cannot be drawn or written.
pub fn draw(report: &Report, protocol: &str, path: &Path) -> Result<()> {
    let rows: Vec<&Row> = report.rows.iter().filter(|r| r.protocol == protocol).collect();
    let p50s = || rows.iter().filter_map(|r| r.latency).map(|l| l.p50.max(1) as f64);
    let (Some(low), Some(high)) = (p50s().reduce(f64::min), p50s().reduce(f64::max)) else {
        return Err(anyhow!("nothing measured for {protocol} to draw"));
    };
    let libraries: Vec<String> =
        report.libraries().into_iter().filter(|l| rows.iter().any(|r| &r.library == l)).collect();
    let messages = distinct(rows.iter().copied(), |r| &r.message);
    let mut strategies: Vec<String> = STRATEGIES.iter().map(|s| s.to_string()).collect();
    for s in distinct(rows.iter().copied(), |r| &r.strategy) {
        if !strategies.contains(&s) {
            strategies.push(s);
        }
    }

    // The y range, shared by the panels: a margin around the extremes.
    let y_range = (low / 1.4)..(high * 1.4);
    let longest = messages.iter().map(|m| m.chars().count()).max().unwrap_or(1) as u32;
    let x_label_area = longest * X_LABEL_CHAR + 40;
    let columns = if libraries.len() > 1 { 2 } else { 1 };
    let panel_rows = libraries.len().div_ceil(columns);
    let height = HEADER_HEIGHT + (PANEL_HEIGHT + x_label_area) * panel_rows as u32;

    charts::svg(path, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(HEADER_HEIGHT);
        let title = format!("Small writes, {protocol}: sender's time per message, p50 (ns)");
        charts::text(&header, &title, (10, 10), charts::font(24))?;
        let subtitle = format!(
            "{} · {} · {} iterations per case after {} warm-up, over {} rounds · log scale · skipped cases left out",
            report.date, report.host, report.iterations, report.warmup, report.rounds
        );
        charts::text(&header, &subtitle, (10, 44), charts::font(14))?;
        legend(&header, &strategies, (10, 78))?;

        let panels = body.split_evenly((panel_rows, columns));
        for (panel, library) in panels.iter().zip(&libraries) {
            let mine: Vec<&Row> = rows.iter().copied().filter(|r| &r.library == library).collect();
            panel_of(panel, library, &mine, &messages, &strategies, y_range.clone(), x_label_area)?;
        }
        Ok(())
    })
}

/// The legend at `(x, y)` of `area`: a line and marker per strategy, in
/// its colour, then its name.
fn legend(area: &Area, strategies: &[String], (mut x, y): (i32, i32)) -> Result<()> {
    let style = charts::font(14).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, strategy) in strategies.iter().enumerate() {
        let shape = Key { length: 24, stroke: charts::LINE_WIDTH, radius: charts::MARKER_RADIUS };
        charts::key(area, (x, y), shape, charts::palette99(i))?;
        charts::text(area, strategy, (x + 30, y), style.clone())?;
        x += 40 + 9 * strategy.chars().count() as i32;
    }
    Ok(())
}

/// One library's panel: `rows` (that library's, one protocol) as one line
/// per strategy over `messages`, on the shared log-scale `y_range` (ns).
fn panel_of(
    area: &Area,
    library: &str,
    rows: &[&Row],
    messages: &[String],
    strategies: &[String],
    y_range: std::ops::Range<f64>,
    x_label_area: u32,
) -> Result<()> {
    let caption = match rows.first() {
        Some(first) if !first.suite.is_empty() => format!("{library} · {}", first.suite),
        _ => library.to_string(),
    };
    let categories = Categories::unlabelled(messages.len());
    let y_low = y_range.start;
    // Labels at 1, 2 and 5 x 10^k, or at the decades only over more than three.
    let (labelled, light): (&[f64], &[f64]) = if (y_range.end / y_range.start).log10() > 3.0 {
        (&[1.0], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        (&[1.0, 2.0, 5.0], &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0])
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, charts::font(16))
        .margin(10)
        .x_label_area_size(x_label_area)
        .y_label_area_size(70)
        .build_cartesian_2d(
            categories.range(),
            y_range
                .clone()
                .log_scale()
                .with_key_points(ticks(&y_range, labelled))
                .with_light_points(ticks(&y_range, light)),
        )
        .drawn()?;
    // The x labels are drawn below, rotated: the mesh's are left empty.
    let ns = |y: &f64| format!("{y:.0}");
    let mut mesh = charts::mesh(&mut chart);
    categories
        .on_x(&mut mesh)
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .y_label_formatter(&ns)
        .x_desc("message (buffer sizes)")
        .y_desc("p50, ns (log scale)")
        .draw()
        .drawn()?;

    // Message labels, read bottom to top, ending under their tick.
    let (base_x, base_y) = area.get_base_pixel();
    let label_style = charts::font(X_LABEL_SIZE)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, message) in messages.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(categories.at(i), y_low));
        let (x, y) = (x - base_x, y - base_y);
        area.draw(&PathElement::new(vec![(x, y), (x, y + 5)], BLACK)).drawn()?;
        charts::text(area, message, (x, y + 8), label_style.clone())?;
    }

    let mut measured = false;
    for (i, strategy) in strategies.iter().enumerate() {
        let color = charts::palette99(i);
        let points: Vec<Option<(f64, f64)>> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let row = rows.iter().find(|r| &r.strategy == strategy && &r.message == m)?;
                row.latency.map(|l| (i as f64, l.p50.max(1) as f64))
            })
            .collect();
        // One line per run of consecutive measured messages.
        for run in points.split(Option::is_none).filter(|run| !run.is_empty()) {
            let run: Vec<(f64, f64)> = run.iter().flatten().copied().collect();
            charts::line(&mut chart, run.iter().copied(), color)?;
            charts::markers(&mut chart, run, color)?;
            measured = true;
        }
    }
    if !measured {
        let (w, h) = area.dim_in_pixel();
        let style = charts::font(14).pos(Pos::new(HPos::Center, VPos::Center));
        charts::text(area, "every case skipped", (w as i32 / 2, h as i32 / 3), style)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tls_bench_results::small_writes::Percentiles;

    use super::*;

    fn row(library: &str, strategy: &str, message: &str, p50: u64, skipped: bool) -> Row {
        let latency = Percentiles {
            count: 100,
            min: p50 / 2,
            p50,
            p90: p50 * 2,
            p99: p50 * 3,
            p999: p50 * 4,
            max: p50 * 5,
            mean: p50 as f64,
        };
        Row {
            id: format!("small-writes/{message},{strategy}/{library}"),
            library: library.into(),
            protocol: "TLSv1.3".into(),
            suite: "TLS_AES_128_GCM_SHA256".into(),
            strategy: strategy.into(),
            buffers: vec![50, 300],
            message: message.into(),
            payload_bytes: 350,
            latency: (!skipped).then_some(latency),
            round_p50: Vec::new(),
            wire: None,
            skipped: skipped.then(|| "no vectored write".to_string()),
        }
    }

    #[test]
    fn log_ticks_are_one_two_five_per_decade() {
        assert_eq!(
            ticks(&(150.0..12_000.0), &[1.0, 2.0, 5.0]),
            [200.0, 500.0, 1000.0, 2000.0, 5000.0, 10_000.0]
        );
    }

    #[test]
    fn draws_a_panel_per_library_and_refuses_an_absent_protocol() {
        let mut rows = Vec::new();
        for (m, message) in ["50+300B", "1000+3000+2000B"].into_iter().enumerate() {
            for (s, strategy) in STRATEGIES.into_iter().enumerate() {
                for (l, library) in ["alpha-1.0", "beta-2.0"].into_iter().enumerate() {
                    let p50 = 1_000 * (m as u64 + 1) + 300 * s as u64 + 5_000 * l as u64;
                    let skipped = library == "beta-2.0" && strategy == "vectored" && m == 0;
                    rows.push(row(library, strategy, message, p50, skipped));
                }
            }
        }
        let report = Report {
            date: "2026-01-02T03:04:05Z".into(),
            host: "fixture CPU".into(),
            iterations: 100,
            warmup: 10,
            rounds: 2,
            rows,
        };
        let path =
            std::env::temp_dir().join(format!("tls-bench-small-writes-plot-{}.svg", std::process::id()));
        draw(&report, "TLSv1.3", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in ["alpha-1.0", "beta-2.0", "1000+3000+2000B", "vectored", "fixture CPU"] {
            assert!(svg.contains(text), "{text} missing from the graph");
        }
        std::fs::remove_file(&path).unwrap();

        let none =
            std::env::temp_dir().join(format!("tls-bench-small-writes-none-{}.svg", std::process::id()));
        let err = draw(&report, "TLSv1.2", &none).unwrap_err();
        assert!(err.to_string().contains("nothing measured"), "{err}");
        let _ = std::fs::remove_file(&none);
    }
}
