//! `memory/memory.svg`: horizontal bar charts (one bar per library and side,
//! whiskers from the minimum to the maximum over the connections), drawn
//! with tls-bench-charts from one or more reports.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use tls_bench_charts::{
    self as charts, Area, Categories, Drawn, LegendPlace, Orientation, TAB10, Whisker,
    plotters::prelude::{BLACK, ChartBuilder, Color, RGBColor, Rectangle},
};

use crate::{
    results::{Report, Row, Stats, WriteCost},
    unique,
};

/// One bar per library in a panel.
struct Series {
    label: String,
    color: RGBColor,
    values: Vec<Option<Stats>>,
}

const CLIENT: RGBColor = TAB10[0];
const SERVER: RGBColor = TAB10[1];
const CLIENT_IDLE: RGBColor = RGBColor(0x9e, 0xc5, 0xe8);
const SERVER_IDLE: RGBColor = RGBColor(0xff, 0xc6, 0x8f);
const PANEL_HEIGHT: u32 = 270;
const WIDTH: u32 = 1500;

/// The graph's subtitle for `reports`: date, CPU, allocator and connection
/// pairs, each the distinct values of the reports joined by " / ".
pub fn subtitle(reports: &[(PathBuf, Report)]) -> String {
    let distinct = |f: fn(&Report) -> &str| unique(reports.iter().map(|(_, r)| f(r))).join(" / ");
    let rows = reports.iter().flat_map(|(_, r)| &r.rows);
    let connections = unique(rows.map(|row| row.connections.to_string())).join(" / ");
    format!(
        "{} · {} · {} · {connections} connection pairs alive per library and parameter set · whiskers: min-max",
        distinct(|r| &r.date),
        distinct(|r| &r.cpu),
        distinct(|r| &r.allocator),
    )
}

/// Draws the graph of `rows` (from any number of reports) into `path`, with
/// `subtitle` (date, allocator, connections) under the title. Errors: no
/// rows, or the file cannot be written.
pub fn draw(rows: &[Row], subtitle: &str, path: &Path) -> Result<()> {
    // The plaintext floor last, below the libraries.
    let mut libs = unique(rows.iter().map(|r| r.library.clone()));
    libs.sort_by_key(|l| l == "plaintext");
    let kinds = unique(rows.iter().map(|r| r.kind.clone()));
    let chains = unique(rows.iter().map(|r| r.chain.clone()));
    let sizes = unique(rows.iter().flat_map(|r| r.writes.iter().map(|w| w.write_size)));
    if libs.is_empty() {
        return Err(anyhow!("no results to draw"));
    }
    let held_rows = kinds.len() as u32;
    let alloc_panels = chains.len() + sizes.len();
    let alloc_rows = alloc_panels.div_ceil(2) as u32;
    let height = 90 + PANEL_HEIGHT * (held_rows + alloc_rows);
    charts::svg(path, (WIDTH, height), |root| {
        let (title, body) = root.split_vertically(90);
        charts::text(&title, "tls-bench: heap per connection and allocations", (10, 10), charts::font(26))?;
        charts::text(&title, subtitle, (10, 50), charts::font(15))?;
        let (held_area, alloc_area) = body.split_vertically(PANEL_HEIGHT * held_rows);

        // The row of a library, handshake kind and chain.
        let row_of = |lib: &String, kind: &str, chain: &str| {
            rows.iter().find(|r| &r.library == lib && r.kind == kind && r.chain == chain)
        };
        // One bar series: per library, `value` of its row (None: no row).
        let series = |label: &str, color: RGBColor, value: &dyn Fn(&String) -> Option<Stats>| Series {
            label: label.into(),
            color,
            values: libs.iter().map(value).collect(),
        };

        // Heap per connection: one row per handshake kind, one column per chain.
        let held_panels = held_area.split_evenly((kinds.len(), chains.len()));
        let kind_chain = kinds.iter().flat_map(|k| chains.iter().map(move |c| (k, c)));
        for (panel, (kind, chain)) in held_panels.iter().zip(kind_chain) {
            let side = |f: fn(&Row) -> Stats| move |l: &String| row_of(l, kind, chain).map(f);
            bar_panel(
                panel,
                &format!("heap per connection: {kind}, {chain}"),
                "KiB per connection",
                &libs,
                &[
                    series("client, after handshake", CLIENT, &side(|r| r.held.client)),
                    series("server, after handshake", SERVER, &side(|r| r.held.server)),
                    series("client, idle, buffers released", CLIENT_IDLE, &side(|r| r.idle.client)),
                    series("server, idle, buffers released", SERVER_IDLE, &side(|r| r.idle.server)),
                ],
                1024.0,
            )?;
        }

        // Allocations: per handshake (server auth, each chain), per write (each size).
        let alloc_panels = alloc_area.split_evenly((alloc_rows as usize, 2));
        let mut panels = alloc_panels.iter();
        let server_auth: &str = kinds.first().map_or("", String::as_str);
        for chain in &chains {
            let side = |f: fn(&Row) -> Stats| move |l: &String| row_of(l, server_auth, chain).map(f);
            if let Some(panel) = panels.next() {
                bar_panel(
                    panel,
                    &format!("allocations per handshake: {server_auth}, {chain}"),
                    "allocations",
                    &libs,
                    &[
                        series("client", CLIENT, &side(|r| r.handshake_allocs.client)),
                        series("server", SERVER, &side(|r| r.handshake_allocs.server)),
                    ],
                    1.0,
                )?;
            }
        }
        let first_chain: &str = chains.first().map_or("", String::as_str);
        for &size in &sizes {
            let cost = |f: fn(&WriteCost) -> Stats| {
                move |l: &String| {
                    row_of(l, server_auth, first_chain)
                        .and_then(|r| r.writes.iter().find(|w| w.write_size == size))
                        .map(f)
                }
            };
            if let Some(panel) = panels.next() {
                bar_panel(
                    panel,
                    &format!("allocations per {size}-byte write (steady send loop)"),
                    "allocations per write",
                    &libs,
                    &[
                        series("sender (server)", SERVER, &cost(|w| w.sender_allocs)),
                        series("receiver (client)", CLIENT, &cost(|w| w.receiver_allocs)),
                    ],
                    1.0,
                )?;
            }
        }
        Ok(())
    })
}

/// One panel: a horizontal bar per library and series (value / `scale`),
/// whiskers from min to max; libraries top to bottom.
fn bar_panel(
    area: &Area,
    title: &str,
    x_desc: &str,
    libs: &[String],
    series: &[Series],
    scale: f64,
) -> Result<()> {
    let categories = Categories::top_down(libs.to_vec());
    let top =
        series.iter().flat_map(|s| s.values.iter().flatten().map(|v| v.max / scale)).fold(0.0f64, f64::max);
    // Room on the right for the legend.
    let room = if series.len() > 2 { 1.85 } else { 1.5 };
    let x_max = if top > 0.0 { top * room } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, charts::font(16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(190)
        .build_cartesian_2d(0.0..x_max, categories.range())
        .drawn()?;
    let mut mesh = charts::mesh(&mut chart);
    categories.on_y(&mut mesh).x_desc(x_desc).draw().drawn()?;
    let width = 0.8 / series.len() as f64;
    for (j, s) in series.iter().enumerate() {
        let bars = s.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v)));
        let y0 = |i: usize| categories.at(i) + 0.4 - width * (j as f64 + 1.0);
        chart
            .draw_series(bars.clone().map(|(i, v)| {
                Rectangle::new([(0.0, y0(i)), (v.mean / scale, y0(i) + width * 0.9)], s.color.filled())
            }))
            .drawn()?
            .label(s.label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], s.color.filled()));
        let whiskers = bars.map(|(i, v)| Whisker {
            at: y0(i) + width * 0.45,
            low: v.min / scale,
            value: v.mean / scale,
            high: v.max / scale,
        });
        charts::error_bars(&mut chart, Orientation::Horizontal, whiskers, BLACK, 6)?;
    }
    charts::series_legend(&mut chart, LegendPlace::LowerRight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CrossCheck, Sides, WriteCost};

    fn stats(v: f64) -> Stats {
        Stats { mean: v, stddev: 1.0, min: v - 2.0, max: v + 2.0 }
    }

    fn row(library: &str, kind: &str) -> Row {
        let sides = Sides { client: stats(30_000.0), server: stats(40_000.0), pair: stats(70_000.0) };
        Row {
            library: library.into(),
            params: format!("{kind},x"),
            kind: kind.into(),
            chain: "ECDSA-P256".into(),
            connections: 3,
            held: sides,
            peak_pair: stats(90_000.0),
            idle: sides,
            buffer_release: "none".into(),
            handshake_allocs: sides,
            handshake_bytes: sides,
            writes: vec![WriteCost {
                write_size: 1024,
                sender_allocs: stats(2.0),
                sender_bytes: stats(100.0),
                receiver_allocs: stats(0.0),
                receiver_bytes: stats(0.0),
            }],
            cross_check: CrossCheck {
                project_bytes_per_pair: 1.0,
                glibc_bytes_per_pair: 1.0,
                harness_bytes_per_pair: 0.0,
            },
        }
    }

    #[test]
    fn draws_every_library_from_fixture_rows() {
        let dir = std::env::temp_dir().join(format!("tls-bench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("memory.svg");
        let rows = [row("alpha-1.0", "server-auth"), row("beta-2.0", "server-auth"), row("beta-2.0", "mTLS")];
        draw(&rows, "fixture", &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        for text in [
            "alpha-1.0",
            "beta-2.0",
            "heap per connection: server-auth, ECDSA-P256",
            "allocations per 1024-byte write",
        ] {
            assert!(svg.contains(text), "{text} missing from the graph");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
