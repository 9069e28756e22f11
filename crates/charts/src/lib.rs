//! tls-bench's charts: every SVG a tool draws (compare, small-writes,
//! historical-perf, handshake-scaling, https-soak, memory) is opened,
//! styled and written here, so what the graphs share is written once.
//!
//! What belongs here is what two or more charts share: opening an SVG file
//! on a white background and writing it ([`svg`]); plotters' errors as
//! anyhow's ([`Drawn`]); the font and the colours ([`font`], [`TAB10`],
//! [`palette99`]); the axes' styling ([`mesh`]) and categorical axes
//! ([`Categories`]); and the marks several charts draw: text ([`text`]),
//! lines and their markers ([`line()`], [`markers`]), error bars
//! ([`error_bars`]), legend keys drawn by hand ([`key`]) or by plotters
//! ([`line_key`], [`series_legend`]). What stays with each tool: its data
//! and how it shapes them into points, its layout (sizes, margins, panels,
//! titles), and a mark only it draws (memory's bars, small-writes' rotated
//! labels, compare's row separators), drawn with plotters, re-exported
//! here ([`plotters`]) so that no tool names plotters itself.
//!
//! Units: sizes and coordinates on an [`Area`] are pixels from its top
//! left corner; font sizes are pixels; a [`Chart`]'s marks are in its
//! data's coordinates (`f64` on both axes).
//!
//! Drawing is deterministic: the same calls write the same bytes, and the
//! committed graphs are compared byte for byte (memory/memory.svg by
//! `benches/tests/memory_cli.rs`, historical-perf/graphs/ by CI). A change
//! to a style or a mark here changes every graph drawing it: redraw the
//! committed ones with it.
//!
//! It depends on plotters and anyhow only; `tls-bench-harness` and
//! `tls-bench-results` do not depend on it (tests/layers.rs), so the
//! benchmarks build without it (benches' `tools` feature turns it on).

use std::{ops::Range, path::Path};

use anyhow::{Context, Result};
pub use plotters;
use plotters::{
    chart::{ChartContext, MeshStyle, SeriesAnno, SeriesLabelPosition},
    coord::{
        CoordTranslate, Shift,
        cartesian::Cartesian2d,
        ranged1d::{Ranged, ValueFormatter},
    },
    drawing::{DrawingArea, DrawingAreaErrorKind, IntoDrawingArea},
    element::{Circle, ErrorBar, PathElement, Text},
    prelude::SVGBackend,
    series::LineSeries,
    style::{BLACK, Color, Palette, Palette99, RGBColor, TextStyle, WHITE},
};

/// A drawing area of an SVG file being drawn ([`svg`]): the whole file or
/// a part split from it, in pixels from its top left corner.
pub type Area<'p> = DrawingArea<SVGBackend<'p>, Shift>;

/// A chart built on an [`Area`] (plotters' `ChartBuilder`), its
/// coordinates `CT` (e.g. `Cartesian2d<RangedCoordf64, RangedCoordf64>`).
pub type Chart<'a, 'p, CT> = ChartContext<'a, SVGBackend<'p>, CT>;

/// plotters' drawing errors as anyhow's.
pub trait Drawn<T> {
    /// The value, or the error as an [`anyhow::Error`] that says a chart
    /// was being drawn, plotters' error its source (a backend error is the
    /// file's I/O error; others are plotters' own, e.g. a coordinate it
    /// cannot map).
    fn drawn(self) -> Result<T>;
}

impl<T, E> Drawn<T> for std::result::Result<T, DrawingAreaErrorKind<E>>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn drawn(self) -> Result<T> {
        self.map_err(|e| anyhow::Error::new(e).context("drawing the chart"))
    }
}

/// Draws the SVG file `path`, `size` (width, height) pixels: a white
/// background, then `draw` on the whole area, then the file written.
/// Errors, naming `path`: `draw`'s, or the file cannot be written (its
/// directory must exist). A file whose drawing failed may be left
/// partly drawn.
pub fn svg(path: &Path, size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Result<()>) -> Result<()> {
    let root = SVGBackend::new(path, size).into_drawing_area();
    let drawn = root.fill(&WHITE).drawn().and_then(|()| draw(&root)).and_then(|()| root.present().drawn());
    drawn.with_context(|| format!("writing {}", path.display()))
}

/// The font family of every chart's text.
pub const FONT: &str = "sans-serif";

/// The size of the axes' tick labels and of plotters' series legends
/// ([`mesh`], [`series_legend`]), pixels.
pub const LABEL_SIZE: u32 = 12;

/// The size of the names in a legend drawn by hand beside a [`key`]
/// (historical-perf's and compare's), pixels.
pub const LEGEND_SIZE: u32 = 13;

/// Text in [`FONT`] of `size` pixels, black, anchored at its top left.
pub fn font(size: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, size))
}

/// matplotlib's tab10 colours, in its order: blue, orange, green, red,
/// purple, brown, pink, grey, olive, cyan.
pub const TAB10: [RGBColor; 10] = [
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

/// The `i`th colour of [`TAB10`], from the first again past ten.
pub fn tab10(i: usize) -> RGBColor {
    TAB10[i % TAB10.len()]
}

/// The `i`th colour of plotters' 99-colour palette (`Palette99`), from the
/// first again past 99: the series colours of small-writes and
/// https-soak.
pub fn palette99(i: usize) -> RGBColor {
    let (r, g, b) = Palette99::pick(i).rgb();
    RGBColor(r, g, b)
}

/// `chart`'s mesh (grid, axes, ticks) in the shared style: tick labels in
/// [`font`] of [`LABEL_SIZE`]. The caller adds its axes' descriptions,
/// formatters or [`Categories`], then draws it (`MeshStyle::draw`).
pub fn mesh<'a, 'b, 'p, X, Y, XT, YT>(
    chart: &'b mut Chart<'a, 'p, Cartesian2d<X, Y>>,
) -> MeshStyle<'a, 'b, X, Y, SVGBackend<'p>>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut mesh = chart.configure_mesh();
    mesh.label_style(font(LABEL_SIZE));
    mesh
}

/// Categories along one axis of a chart (releases, rows, libraries,
/// messages): category `i` at a whole position ([`Categories::at`]), the
/// axis from -0.5 to n - 0.5 ([`Categories::range`]), one tick and label
/// per category, no grid line across the axis ([`Categories::on_x`],
/// [`Categories::on_y`]).
pub struct Categories {
    len: usize,
    top_down: bool,
    label: Box<dyn Fn(&f64) -> String>,
}

impl Categories {
    /// `labels` along the axis, the first at 0 (an x axis, left to right).
    pub fn along(labels: Vec<String>) -> Categories {
        Categories::labelled(labels, false)
    }

    /// `labels` down a y axis, the first at the top (at n - 1).
    pub fn top_down(labels: Vec<String>) -> Categories {
        Categories::labelled(labels, true)
    }

    /// `n` categories along the axis, the first at 0, their ticks without
    /// labels (for a tool that draws its own, e.g. rotated).
    pub fn unlabelled(n: usize) -> Categories {
        Categories { len: n, top_down: false, label: Box::new(|_| String::new()) }
    }

    fn labelled(labels: Vec<String>, top_down: bool) -> Categories {
        let len = labels.len();
        let label = move |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < len {
                let i = i as usize;
                labels[if top_down { len - 1 - i } else { i }].clone()
            } else {
                String::new()
            }
        };
        Categories { len, top_down, label: Box::new(label) }
    }

    /// The number of places on the axis: the categories, at least 1.
    pub fn count(&self) -> usize {
        self.len.max(1)
    }

    /// The axis's range: -0.5 to [`Categories::count`] - 0.5.
    pub fn range(&self) -> Range<f64> {
        -0.5..(self.count() as f64 - 0.5)
    }

    /// The position of category `i` (0-based, in the order given): `i`
    /// along the axis, or n - 1 - `i` top down. `i` must be below the
    /// number of categories.
    pub fn at(&self, i: usize) -> f64 {
        if self.top_down { (self.len - 1 - i) as f64 } else { i as f64 }
    }

    /// The label at position `v`: its category's at a whole position
    /// (within 1e-6), empty elsewhere and for [`Categories::unlabelled`].
    pub fn label(&self, v: f64) -> String {
        (self.label)(&v)
    }

    /// Makes `mesh`'s x axis these categories: a tick and label at each,
    /// no vertical grid lines.
    pub fn on_x<'m, 'a, 'b, 'p, X, Y, YT>(
        &'b self,
        mesh: &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'p>>,
    ) -> &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'p>>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
    {
        mesh.disable_x_mesh().x_labels(self.count()).x_label_formatter(&*self.label)
    }

    /// Makes `mesh`'s y axis these categories: a tick and label at each,
    /// no horizontal grid lines.
    pub fn on_y<'m, 'a, 'b, 'p, X, Y, XT>(
        &'b self,
        mesh: &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'p>>,
    ) -> &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'p>>
    where
        X: Ranged<ValueType = XT> + ValueFormatter<XT>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        mesh.disable_y_mesh().y_labels(self.count()).y_label_formatter(&*self.label)
    }
}

/// Draws `text` on `area` at `at` (pixels; where the text's anchor goes,
/// its top left unless `style` says otherwise) in `style` (e.g.
/// [`font`]). Errors: plotters' ([`Drawn`]).
pub fn text<'s>(area: &Area<'_>, text: &str, at: (i32, i32), style: impl Into<TextStyle<'s>>) -> Result<()> {
    area.draw(&Text::new(text, at, style)).drawn()
}

/// The width of a [`line()`], pixels.
pub const LINE_WIDTH: u32 = 2;

/// The radius of a marker ([`markers`]), pixels.
pub const MARKER_RADIUS: i32 = 4;

/// Draws `points` (x, y in `chart`'s coordinates) joined in their order by
/// a line [`LINE_WIDTH`] pixels wide in `color`. Returns the series, to
/// name it in plotters' legend ([`line_key`], [`series_legend`]). Errors:
/// plotters' ([`Drawn`]).
pub fn line<'c, 'a, 'p, CT>(
    chart: &'c mut Chart<'a, 'p, CT>,
    points: impl IntoIterator<Item = (f64, f64)>,
    color: RGBColor,
) -> Result<&'c mut SeriesAnno<'a, SVGBackend<'p>>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart.draw_series(LineSeries::new(points, color.stroke_width(LINE_WIDTH))).drawn()
}

/// Draws a filled circle of [`MARKER_RADIUS`] in `color` at each of
/// `points` (x, y in `chart`'s coordinates). Errors: plotters'
/// ([`Drawn`]).
pub fn markers<CT>(
    chart: &mut Chart<'_, '_, CT>,
    points: impl IntoIterator<Item = (f64, f64)>,
    color: RGBColor,
) -> Result<()>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart.draw_series(points.into_iter().map(|p| Circle::new(p, MARKER_RADIUS, color.filled()))).drawn()?;
    Ok(())
}

/// One error bar ([`error_bars`]), in a chart's coordinates: at `at` on the
/// axis across it, from `low` to `high`, with `value` its centre.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Whisker {
    /// The position across the bar: an x for a vertical bar, a y for a
    /// horizontal one.
    pub at: f64,
    /// The lower end.
    pub low: f64,
    /// The value the bar is about (plotters marks it with a small circle).
    pub value: f64,
    /// The upper end.
    pub high: f64,
}

/// Which way an error bar runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// Along the y axis (`Whisker::at` an x).
    Vertical,
    /// Along the x axis (`Whisker::at` a y).
    Horizontal,
}

/// Draws an error bar for each of `whiskers`, running `orientation`, in
/// `color`, its end caps `cap` pixels wide. Errors: plotters'
/// ([`Drawn`]).
pub fn error_bars<CT>(
    chart: &mut Chart<'_, '_, CT>,
    orientation: Orientation,
    whiskers: impl IntoIterator<Item = Whisker>,
    color: RGBColor,
    cap: u32,
) -> Result<()>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let whiskers = whiskers.into_iter();
    match orientation {
        Orientation::Vertical => chart
            .draw_series(whiskers.map(|w| ErrorBar::new_vertical(w.at, w.low, w.value, w.high, color, cap)))
            .drawn()?,
        Orientation::Horizontal => chart
            .draw_series(whiskers.map(|w| ErrorBar::new_horizontal(w.at, w.low, w.value, w.high, color, cap)))
            .drawn()?,
    };
    Ok(())
}

/// The shape of a series' key in a legend drawn by hand ([`key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The line's length, pixels; 0 for a dot alone.
    pub length: i32,
    /// The line's width, pixels.
    pub stroke: u32,
    /// The dot's radius, pixels.
    pub radius: i32,
}

/// Draws a series' key on `area` at `(x, y)` (pixels): a line of
/// `shape.length` from there to the right (none when 0) and a filled dot
/// at its middle, in `color`. The series' name is the caller's
/// ([`text`]). Errors: plotters' ([`Drawn`]).
pub fn key(area: &Area<'_>, (x, y): (i32, i32), shape: Key, color: RGBColor) -> Result<()> {
    if shape.length > 0 {
        area.draw(&PathElement::new(vec![(x, y), (x + shape.length, y)], color.stroke_width(shape.stroke)))
            .drawn()?;
    }
    area.draw(&Circle::new((x + shape.length / 2, y), shape.radius, color.filled())).drawn()
}

/// The key plotters draws for a line series in its legend
/// ([`series_legend`]; pass it to `SeriesAnno::legend`): a line `length`
/// pixels long and `stroke` wide in `color`, from the key's place to the
/// right.
pub fn line_key(color: RGBColor, length: i32, stroke: u32) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + length, y)], color.stroke_width(stroke))
}

/// Where plotters puts a [`series_legend`] in the plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegendPlace {
    /// plotters' place (the middle of the right side), no background.
    MiddleRight,
    /// The lower right corner, on white at 80% opacity over what is drawn
    /// there.
    LowerRight,
}

/// Draws plotters' legend of `chart`'s named series (those given a
/// `label` and a `legend` key, e.g. [`line_key`]): a black border, names
/// in [`font`] of [`LABEL_SIZE`], at `place`. Errors: plotters'
/// ([`Drawn`]).
pub fn series_legend<'a, 'p: 'a, CT: CoordTranslate>(
    chart: &mut Chart<'a, 'p, CT>,
    place: LegendPlace,
) -> Result<()> {
    let mut legend = chart.configure_series_labels();
    legend.border_style(BLACK).label_font(font(LABEL_SIZE));
    if place == LegendPlace::LowerRight {
        legend.position(SeriesLabelPosition::LowerRight).background_style(WHITE.mix(0.8));
    }
    legend.draw().drawn()
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::ChartBuilder;

    #[test]
    fn categories_place_and_label_their_positions() {
        let names = || vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let along = Categories::along(names());
        assert_eq!((along.count(), along.range(), along.at(0)), (3, -0.5..2.5, 0.0));
        assert_eq!([along.label(0.0), along.label(2.0), along.label(0.5)], ["a", "c", ""]);
        assert_eq!([along.label(-1.0), along.label(3.0)], ["", ""]);
        let down = Categories::top_down(names());
        assert_eq!((down.at(0), down.at(2)), (2.0, 0.0));
        assert_eq!([down.label(2.0), down.label(0.0)], ["a", "c"]);
        let none = Categories::unlabelled(0);
        assert_eq!((none.count(), none.range(), none.label(0.0)), (1, -0.5..0.5, String::new()));
    }

    #[test]
    fn an_svg_holds_what_was_drawn_and_an_unwritable_one_names_its_file() {
        let dir = std::env::temp_dir().join(format!("tls-bench-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.svg");
        svg(&path, (300, 200), |root| {
            text(root, "a title", (10, 8), font(16))?;
            key(root, (14, 40), Key { length: 30, stroke: 3, radius: 4 }, tab10(0))?;
            let mut chart = ChartBuilder::on(root)
                .margin(10)
                .x_label_area_size(20)
                .build_cartesian_2d(-0.5..1.5, 0.0..2.0)
                .drawn()?;
            let categories = Categories::along(vec!["x0".into(), "x1".into()]);
            let mut mesh = mesh(&mut chart);
            categories.on_x(&mut mesh).draw().drawn()?;
            let points = [(0.0, 1.0), (1.0, 1.5)];
            line(&mut chart, points, palette99(1))?.label("series").legend(line_key(palette99(1), 16, 2));
            markers(&mut chart, points, palette99(1))?;
            let bar = Whisker { at: 0.0, low: 0.5, value: 1.0, high: 1.2 };
            error_bars(&mut chart, Orientation::Vertical, [bar], BLACK, 6)?;
            series_legend(&mut chart, LegendPlace::LowerRight)
        })
        .unwrap();
        let drawn = std::fs::read_to_string(&path).unwrap();
        for part in ["a title", "x0", "x1", "series", "#FFFFFF"] {
            assert!(drawn.contains(part), "{part} missing from {drawn}");
        }
        let missing = dir.join("no/such/dir/chart.svg");
        let err = svg(&missing, (10, 10), |_| Ok(())).unwrap_err();
        assert!(format!("{err:#}").contains(&missing.display().to_string()), "{err:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
