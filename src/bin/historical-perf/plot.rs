//! One SVG per benchmark: the release on x (version order), the median on y
//! with its confidence interval as error bars (or the instruction count,
//! which has none), drawn with tls-bench-charts. The DTLS suite draws a few graphs
//! of several lines instead ([`draw_dtls`]): the send loops' writes per
//! second, DTLS 1.2 beside TLS 1.2, and the allocations per write.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use tls_bench_charts::{
    self as charts, Area, Categories, Chart, Drawn, Key, Orientation, TAB10, Whisker,
    plotters::{
        coord::types::RangedCoordf64,
        prelude::{BLACK, Cartesian2d, ChartBuilder, RGBColor, Text},
    },
};

use crate::{
    allocations,
    releases::Library,
    results::{ReleaseResult, Shown, Unit, floor_keys, keys, table},
    suite::Suite,
};

/// A file name for benchmark `key`.
pub fn file_name(key: &str) -> String {
    let safe: String =
        key.chars().map(|c| if c.is_ascii_alphanumeric() || "-.+".contains(c) { c } else { '_' }).collect();
    format!("{safe}.svg")
}

/// Draws `library`'s graphs from `results` (version order, of `suite`)
/// into `dir`: one per benchmark ([`draw_all`]), or for DTLS the few of
/// [`draw_dtls`]; prints their table on stdout and where the graphs went
/// on stderr. Other graphs in `dir` (of benchmarks these results do not
/// have) are removed: the directory holds this drawing whole. Returns the
/// graph files. Errors: `results` is empty, or a graph cannot be written or
/// an old one removed.
pub fn report(suite: Suite, library: Library, results: &[ReleaseResult], dir: &Path) -> Result<Vec<PathBuf>> {
    ensure!(!results.is_empty(), "no results of {library} to draw");
    let files = match suite {
        Suite::Dtls => draw_dtls(results, dir, &note(results))?,
        Suite::Criterion | Suite::Instructions => draw_all(results, dir, &note(results))?,
    };
    crate::files::remove_others(dir, "svg", &files)?;
    tls_bench_harness::outln!("{}", table(library, results))?;
    eprintln!("historical-perf: {} graphs in {}", files.len(), dir.display());
    Ok(files)
}

/// The line under each graph's title, from the results alone (so the same
/// results draw the same graphs on any machine): the latest run date, the
/// CPU models recorded, what each figure is (a median, an instruction
/// count, or the DTLS suite's mean rates and allocation counts), and
/// whether a run was quick.
pub fn note(results: &[ReleaseResult]) -> String {
    let date = results.iter().map(|r| r.date.as_str()).max().unwrap_or("");
    let mut cpus: Vec<&str> =
        results.iter().flat_map(|r| r.cpu.split("; ")).filter(|c| !c.is_empty()).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let cpu = if cpus.is_empty() { "CPU not recorded".to_string() } else { cpus.join("; ") };
    let measured = || results.iter().filter(|r| r.failure.is_none()).map(|r| r.rounds);
    let (fewest, most) = (measured().min().unwrap_or(1), measured().max().unwrap_or(1));
    let units = || results.iter().flat_map(|r| &r.benchmarks).map(|b| b.shown().unit);
    let counts = units().any(Unit::is_count);
    let rates = units().any(|u| matches!(u, Unit::WritesPerSecond | Unit::AllocationsPerWrite));
    let figure = match (fewest, most) {
        _ if rates => {
            let rounds = match (fewest, most) {
                (_, 1) => String::new(),
                (n, m) if n == m => format!(", best of {m} rounds"),
                (n, m) => format!(", best of {n}-{m} rounds"),
            };
            format!(
                "writes/s from Criterion's mean and its 95% confidence interval; allocations: mean per write \
                 over connections (memory binary){rounds}"
            )
        }
        _ if counts => {
            let rounds = match (fewest, most) {
                (_, 1) => String::new(),
                (n, m) if n == m => format!(", lowest of {m} rounds"),
                (n, m) => format!(", lowest of {n}-{m} rounds"),
            };
            format!("instructions counted by Callgrind, mean of the counted iterations{rounds}")
        }
        (_, 1) => "median and its 95% confidence interval".to_string(),
        (n, m) if n == m => format!("lowest median of {m} rounds and its 95% confidence interval"),
        (n, m) => format!("lowest median of {n}-{m} rounds and its 95% confidence interval"),
    };
    let quick = if results.iter().any(|r| r.quick) { " · --quick run" } else { "" };
    format!("{date} · {cpu} · {figure}{quick}")
}

/// Draws every benchmark of `results` (one library, version order) into
/// `dir`; `note` (CPU, date) goes under each title. A benchmark with a
/// crypto floor ([`ReleaseResult::floor_of`]) is drawn with its floor as a
/// second line; a floor has no graph of its own. Returns the files.
pub fn draw_all(results: &[ReleaseResult], dir: &Path, note: &str) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the graphs directory {}", dir.display()))?;
    let floors = floor_keys(results);
    let mut files = Vec::new();
    for key in keys(results).into_iter().filter(|k| !floors.contains(k)) {
        let path = dir.join(file_name(&key));
        // Each floor the releases had, in release order: a library whose
        // crypto changed (s2n-tls 0.0's system libcrypto, AWS-LC from 0.1)
        // has a line per crypto library.
        let mut floors: Vec<String> = Vec::new();
        for r in results {
            let floor = r.benchmarks.iter().find(|b| b.key == key).and_then(|b| r.floor_of(b));
            if let Some(f) = floor.filter(|f| !floors.contains(&f.key)) {
                floors.push(f.key.clone());
            }
        }
        if floors.is_empty() {
            draw(results, &key, note, &path)?;
        } else {
            let lines: Vec<&String> = std::iter::once(&key).chain(&floors).collect();
            draw_lines(results, &key, &lines, note, &path)?;
        }
        files.push(path);
    }
    Ok(files)
}

/// The releases that ran on the system's libcrypto rather than their own
/// crypto crate (s2n-tls up to 0.0.41), said on the graph since their
/// figures measure another crypto library: `None` when there are none.
fn system_libcrypto_note(results: &[ReleaseResult]) -> Option<String> {
    let marker = "on the system's libcrypto";
    let on_system: Vec<&ReleaseResult> =
        results.iter().filter(|r| r.failure.is_none() && r.libcrypto.contains(marker)).collect();
    let first = on_system.first()?;
    let which = first.libcrypto.split(marker).nth(1).unwrap_or("").split('(').next().unwrap_or("").trim();
    let releases: Vec<&str> = on_system.iter().map(|r| r.release.as_str()).collect();
    Some(format!("{} on the system's libcrypto {which}", releases.join(", ")))
}

/// Draws benchmark `key` across `results` into `path`. Releases without the
/// benchmark (failed, or skipped it) keep their place on the x axis, empty.
/// The y axis names the unit ([`Unit::axis`]); error bars are drawn for
/// times, which have an interval, not for counts.
pub fn draw(results: &[ReleaseResult], key: &str, note: &str, path: &Path) -> Result<()> {
    let labels: Vec<String> = results.iter().map(|r| r.release.clone()).collect();
    let points: Vec<(usize, Shown)> = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.benchmarks.iter().find(|b| b.key == key).map(|b| (i, b.shown())))
        .collect();
    let unit = points.first().map_or(Unit::Micros, |(_, p)| p.unit);
    let top = points.iter().map(|(_, p)| p.high).fold(0.0f64, f64::max);
    let y_max = if top > 0.0 { top * 1.15 } else { 1.0 };
    let note = match system_libcrypto_note(results) {
        Some(extra) => format!("{note} · {extra}"),
        None => note.to_string(),
    };
    charts::svg(path, (1000, 520), |root| {
        let (title, body) = root.split_vertically(56);
        charts::text(&title, key, (10, 8), charts::font(16))?;
        charts::text(&title, &note, (10, 32), charts::font(NOTE_SIZE))?;
        let mut chart = release_chart(&body, labels, unit, y_max)?;
        draw_line(&mut chart, &points, PALETTE[0], BLACK, unit)?;
        mark_failures(&mut chart, results, y_max)
    })
}

/// The DTLS suite's graphs: which figures each holds (by group) and its
/// file name.
struct DtlsGraph {
    file: &'static str,
    title: &'static str,
    /// Figure groups drawn, each of their keys one line.
    groups: &'static [&'static str],
}

/// The DTLS suite's graphs ([`draw_dtls`]).
const DTLS_GRAPHS: [DtlsGraph; 3] = [
    DtlsGraph {
        file: "send-loop-writes-per-second.svg",
        title: "send loop, writes per second (DTLS: datagrams per second): 64 writes per iteration, sender and receiver time",
        groups: &["send-loop"],
    },
    DtlsGraph {
        file: "send-loop-sides-writes-per-second.svg",
        title: "send loop, writes per second of the sender's calls only (send) and the receiver's only (recv)",
        groups: &["send-loop-send", "send-loop-recv"],
    },
    DtlsGraph {
        file: "allocations-per-write.svg",
        title: "allocation calls per write (memory binary; its sender is the server, its receiver the client)",
        groups: &[allocations::SEND_GROUP, allocations::RECV_GROUP],
    },
];

/// The colours of a graph's lines, in turn: tab10's blue, red, green,
/// orange, purple and brown (a library and its floor blue and red).
const PALETTE: [RGBColor; 6] = [TAB10[0], TAB10[3], TAB10[2], TAB10[1], TAB10[4], TAB10[5]];

/// The size of the note under each title, px.
const NOTE_SIZE: u32 = 12;

/// Draws the DTLS suite's graphs of `results` (one library, version order)
/// into `dir`: writes per second of the send loop (`send-loop`: DTLS 1.2
/// and its TLS 1.2 contrast as two lines), of each side (`send-loop-send`,
/// `send-loop-recv`), and the allocation calls per write of sender and
/// receiver (DTLS 1.2 and TLS 1.2); a graph with no figure is not drawn.
/// `note` goes under each title. Returns the files.
pub fn draw_dtls(results: &[ReleaseResult], dir: &Path, note: &str) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the graphs directory {}", dir.display()))?;
    let all = keys(results);
    let mut files = Vec::new();
    for graph in &DTLS_GRAPHS {
        let lines: Vec<&String> = graph
            .groups
            .iter()
            .flat_map(|g| all.iter().filter(move |k| k.split('/').next() == Some(g)))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let path = dir.join(graph.file);
        draw_lines(results, graph.title, &lines, note, &path)?;
        files.push(path);
    }
    Ok(files)
}

/// Draws benchmarks `lines` (of one unit) across `results` into `path`,
/// one coloured line each, named in a legend under the title by their key's
/// group and parameters, or by their series when those are the same (a
/// library and its crypto floor). Releases without a figure keep their place on the
/// x axis, empty; error bars for figures with an interval.
pub fn draw_lines(
    results: &[ReleaseResult],
    title: &str,
    lines: &[&String],
    note: &str,
    path: &Path,
) -> Result<()> {
    let labels: Vec<String> = results.iter().map(|r| r.release.clone()).collect();
    let series: Vec<Vec<(usize, Shown)>> = lines
        .iter()
        .map(|key| {
            results
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.benchmarks.iter().find(|b| &&b.key == key).map(|b| (i, b.shown())))
                .collect()
        })
        .collect();
    let unit = series.iter().flatten().next().map_or(Unit::Micros, |(_, p)| p.unit);
    let top = series.iter().flatten().map(|(_, p)| p.high).fold(0.0f64, f64::max);
    let y_max = if top > 0.0 { top * 1.15 } else { 1.0 };
    let legend_row = 18;
    let head = 56 + legend_row * lines.len() as u32;
    let split = |key: &'_ String| key.rsplit_once('/').map(|(h, s)| (h.to_string(), s.to_string()));
    let one_head = lines.windows(2).all(|w| split(w[0]).map(|p| p.0) == split(w[1]).map(|p| p.0));
    charts::svg(path, (1000, 480 + head), |root| {
        let (top_area, body) = root.split_vertically(head);
        charts::text(&top_area, title, (10, 8), charts::font(16))?;
        charts::text(&top_area, note, (10, 32), charts::font(NOTE_SIZE))?;
        for (i, key) in lines.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let y = 56 + legend_row as i32 * i as i32 + 6;
            let shape = Key { length: 30, stroke: 3, radius: charts::MARKER_RADIUS };
            charts::key(&top_area, (14, y), shape, color)?;
            let name = match split(key) {
                Some((_, series)) if one_head && lines.len() > 1 => series,
                Some((head, _)) => head,
                None => key.to_string(),
            };
            charts::text(&top_area, &name, (52, y - 7), charts::font(charts::LEGEND_SIZE))?;
        }
        let mut chart = release_chart(&body, labels, unit, y_max)?;
        for (i, points) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            draw_line(&mut chart, points, color, color, unit)?;
        }
        mark_failures(&mut chart, results, y_max)
    })
}

/// A chart across releases on `body`: x the releases `labels` in version
/// order, y from 0 to `y_max` in `unit`, with its mesh drawn.
fn release_chart<'a, 'b>(
    body: &'a Area<'b>,
    labels: Vec<String>,
    unit: Unit,
    y_max: f64,
) -> Result<ReleaseChart<'a, 'b>> {
    let releases = Categories::along(labels);
    let mut chart = ChartBuilder::on(body)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(releases.range(), 0.0..y_max)
        .drawn()?;
    let tick = |y: &f64| unit.tick(*y).unwrap_or_default();
    let mut mesh = charts::mesh(&mut chart);
    releases.on_x(&mut mesh).x_desc("release (version order)").y_desc(unit.axis());
    if unit.tick(0.0).is_some() {
        mesh.y_label_formatter(&tick);
    }
    mesh.draw().drawn()?;
    Ok(chart)
}

/// A chart across releases ([`release_chart`]): x the release's index, y
/// the figure.
type ReleaseChart<'a, 'b> = Chart<'a, 'b, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One benchmark's line across releases (`points`: release index and
/// figure), with its points, and its error bars (in `bars`) when `unit` has
/// an interval.
fn draw_line(
    chart: &mut ReleaseChart<'_, '_>,
    points: &[(usize, Shown)],
    color: RGBColor,
    bars: RGBColor,
    unit: Unit,
) -> Result<()> {
    let xy = || points.iter().map(|(i, p)| (*i as f64, p.value));
    charts::line(chart, xy(), color)?;
    if unit.has_interval() {
        let whiskers =
            points.iter().map(|(i, p)| Whisker { at: *i as f64, low: p.low, value: p.value, high: p.high });
        charts::error_bars(chart, Orientation::Vertical, whiskers, bars, 8)?;
    }
    charts::markers(chart, xy(), color)
}

/// Writes "no result" at the place of each release that failed.
fn mark_failures(chart: &mut ReleaseChart<'_, '_>, results: &[ReleaseResult], y_max: f64) -> Result<()> {
    for (i, r) in results.iter().enumerate() {
        if r.failure.is_some() {
            chart
                .draw_series(std::iter::once(Text::new(
                    "no result",
                    (i as f64 - 0.15, y_max * 0.05),
                    charts::font(11),
                )))
                .drawn()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::{counts, dtls, fixture};

    #[test]
    fn draws_one_graph_per_benchmark_from_fixture_results() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-plot-{}", std::process::id()));
        let results = [
            fixture("1.1.1w", "111.28.2+1.1.1w", 1_000_000.0, None),
            fixture("3.0.8", "300.0.13+3.0.8", 0.0, Some("build failed")),
            fixture("3.6.3", "300.6.1+3.6.3", 1_200_000.0, None),
        ];
        let files = draw_all(&results, &dir, "fixture").unwrap();
        assert_eq!(files.len(), 2);
        let svg = std::fs::read_to_string(dir.join(file_name("handshake/server-auth,x/openssl"))).unwrap();
        for text in ["1.1.1w", "3.6.3", "no result", "µs per iteration"] {
            assert!(svg.contains(text), "{text} missing");
        }
        let svg =
            std::fs::read_to_string(dir.join(file_name("throughput/server-auth,x,1024B/openssl"))).unwrap();
        assert!(svg.contains("MB/s"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_drawing_removes_the_graphs_of_benchmarks_its_results_do_not_have() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-plot-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stale = dir.join(file_name("handshake/resumption,x/crypto-floor-openssl"));
        std::fs::write(&stale, "<svg/>").unwrap();
        std::fs::write(dir.join("notes.txt"), "kept").unwrap();
        let results = [fixture("3.6.3", "300.6.1+3.6.3", 1_200_000.0, None)];
        let files = report(Suite::Criterion, Library::Openssl, &results, &dir).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files.iter().all(|f| f.exists()) && !stale.exists());
        assert!(dir.join("notes.txt").exists(), "only graphs are removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_floor_is_a_second_line_on_its_librarys_graph_not_a_graph() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-plot-floor-{}", std::process::id()));
        let mut results = [
            fixture("1.1.1w", "111.28.2+1.1.1w", 1_000_000.0, None),
            fixture("3.6.3", "300.6.1+3.6.3", 1_200_000.0, None),
        ];
        for r in &mut results {
            let mut floor = r.benchmarks[0].clone();
            floor.key = "handshake/server-auth,x/crypto-floor-openssl".into();
            floor.library_id = format!("crypto-floor-openssl-{}", r.release);
            r.benchmarks[0].crypto_floor = Some("crypto-floor-openssl".into());
            r.benchmarks.push(floor);
        }
        let files = draw_all(&results, &dir, "fixture").unwrap();
        assert_eq!(files.len(), 2, "{files:?}");
        let svg = std::fs::read_to_string(dir.join(file_name("handshake/server-auth,x/openssl"))).unwrap();
        let legend = |name: &str| svg.lines().any(|l| l.trim() == name);
        assert!(legend("crypto-floor-openssl") && legend("openssl"), "both named in the legend");
        assert!(!dir.join(file_name("handshake/server-auth,x/crypto-floor-openssl")).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_note_comes_from_the_results_not_the_machine_drawing() {
        let mut results = [
            fixture("1.1.1w", "111.28.2+1.1.1w", 1_000_000.0, None),
            fixture("3.0.8", "300.0.13+3.0.8", 1_000_000.0, None),
        ];
        results[1].rounds = 2;
        results[1].date = "2026-11-22".into();
        assert_eq!(
            note(&results),
            "2026-11-22 · fixture CPU · lowest median of 1-2 rounds and its 95% confidence interval · --quick run"
        );
        results[0].cpu = "another CPU; fixture CPU".into();
        results[1].cpu = String::new();
        assert!(note(&results).contains(" · another CPU; fixture CPU · "), "{}", note(&results));
    }

    #[test]
    fn releases_on_the_system_libcrypto_are_named() {
        let mut old = fixture("0.0.35", "0.0.35", 1_000_000.0, None);
        old.libcrypto =
            "openssl-sys 0.9.118 on the system's libcrypto 3.0.22 (no aws-lc crate to pin)".into();
        let new = fixture("0.3.47", "0.3.47", 1_000_000.0, None);
        assert_eq!(system_libcrypto_note(std::slice::from_ref(&new)), None);
        assert_eq!(
            system_libcrypto_note(&[old, new]).as_deref(),
            Some("0.0.35 on the system's libcrypto 3.0.22")
        );
    }

    #[test]
    fn counts_are_drawn_in_instructions_without_error_bars() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-plot-counts-{}", std::process::id()));
        let mut results = [counts("0.21.12", 4_000_000), counts("0.22.4", 0), counts("0.23.46", 4_020_000)];
        results[1].benchmarks.clear();
        results[1].failure = Some("build failed".into());
        let files = draw_all(&results, &dir, &note(&results)).unwrap();
        assert_eq!(files.len(), 2);
        let svg =
            std::fs::read_to_string(dir.join(file_name("handshake/server-auth,x/rustls+ring"))).unwrap();
        for text in [
            "instructions per handshake (M = 10^6; Callgrind; lower is better)",
            "0.21.12",
            "0.23.46",
            "no result",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(
            svg.contains("instructions counted by Callgrind, mean of the counted iterations · --quick run")
        );
        assert!(!svg.contains("confidence interval") && !svg.contains("µs"));
        assert!(svg.contains(">\n4.5M\n<") && !svg.contains("4500000"), "ticks in millions");
        let svg =
            std::fs::read_to_string(dir.join(file_name("throughput-send/server-auth,x,1024B/rustls+ring")))
                .unwrap();
        assert!(svg.contains("instructions per byte (Callgrind; lower is better)"));
        // Error bars are drawn for times only (plotters draws each around an unfilled circle).
        let bars = |svg: &str| {
            svg.lines().filter(|l| l.starts_with("<circle") && l.contains("fill=\"none\"")).count()
        };
        assert_eq!(bars(&svg), 0, "{svg}");
        let times = [fixture("1.1.1w", "111.28.2+1.1.1w", 1_000_000.0, None)];
        draw_all(&times, &dir.join("times"), "fixture").unwrap();
        let timed =
            std::fs::read_to_string(dir.join("times").join(file_name("handshake/server-auth,x/openssl")))
                .unwrap();
        assert_eq!(bars(&timed), 1, "{timed}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_dtls_suite_draws_its_send_loops_and_allocations_as_lines() {
        let dir = std::env::temp_dir().join(format!("tls-bench-hist-plot-dtls-{}", std::process::id()));
        let mut results = [
            dtls("3.1.4", "300.1.6+3.1.4", 640_000.0, 2.0),
            fixture("3.2.1", "300.2.3+3.2.1", 0.0, Some("build failed")),
            dtls("3.3.2", "300.3.2+3.3.2", 1_280_000.0, 5.0),
        ];
        results[0].rounds = 2;
        let note = note(&results);
        assert!(
            note.contains("writes/s from Criterion's mean") && note.contains(", best of 1-2 rounds"),
            "{note}"
        );
        let files = report(Suite::Dtls, Library::Openssl, &results, &dir).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "send-loop-writes-per-second.svg",
                "send-loop-sides-writes-per-second.svg",
                "allocations-per-write.svg"
            ]
        );
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        for text in [
            "send-loop/DTLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B",
            "send-loop/TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,1024B",
            "writes/s (DTLS: datagrams/s",
            "3.1.4",
            "3.3.2",
            "no result",
            ">\n100k\n<",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(!svg.contains("send-loop-send/"), "the per-side figures have their own graph");
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("send-loop-send/DTLSv1.2") && svg.contains("send-loop-recv/TLSv1.2"));
        let svg = std::fs::read_to_string(&files[2]).unwrap();
        for text in [
            "allocations-per-write-send/DTLSv1.2,1024B",
            "allocations-per-write-recv/TLSv1.2,1024B",
            "allocation calls per write (lower is better)",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // No graph without figures.
        let failed = [fixture("3.2.1", "300.2.3+3.2.1", 0.0, Some("build failed"))];
        assert!(draw_dtls(&failed, &dir.join("none"), "fixture").unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
