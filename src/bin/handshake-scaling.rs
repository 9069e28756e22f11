//! `handshake-scaling`: full and resumed handshakes per second of one
//! library as its server's threads grow, over TCP on 127.0.0.1, with the
//! pinning, the server's CPU per handshake and which end limited the rate;
//! a table on stdout, JSON and an SVG. See docs/sockets.md.

use std::{fs, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, Result};
use clap::Parser;
use tls_bench_charts::{
    self as charts, Drawn, LegendPlace,
    plotters::prelude::{BLUE, ChartBuilder, RED},
};
use tls_bench_harness::{error::exit_code, parsed_or_exit, paths};
use tls_bench_results::{outdir::RunDir, sockets::Point};
use tls_bench_sockets::{
    self as sockets,
    cli::{ParamsArgs, duration_arg, print},
    scaling::{ScalingOptions, run},
    threads::allowed_cores,
};

/// Handshakes per second by server threads, for one library.
#[derive(Parser)]
#[command(name = "handshake-scaling", version)]
struct Cli {
    /// The library (server and client), as `serve --library`.
    #[arg(long)]
    library: String,
    /// The full handshake (server-auth or mTLS) and its parameters; the
    /// resumed handshakes resume it.
    #[command(flatten)]
    params: ParamsArgs,
    /// Server threads from 1 to this [default: the cores].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    max_threads: Option<u16>,
    /// Clients at once.
    #[arg(short = 'c', long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    connections: u32,
    /// Measured time per point.
    #[arg(short = 'd', long, default_value = "3s", value_parser = duration_arg)]
    duration: Duration,
    /// Where results.json and handshakes.svg go (a new or empty directory,
    /// or one a previous run wrote; checked first).
    #[arg(long, default_value_os_t = paths::target_dir().join("handshake-scaling"))]
    out: PathBuf,
}

fn main() -> ExitCode {
    exit_code(run_cli(parsed_or_exit!(Cli::try_parse())))
}

fn run_cli(cli: Cli) -> Result<()> {
    let library = sockets::find(&cli.library)?;
    let params = cli.params.params()?;
    let out =
        RunDir::prepare(&cli.out, |n| matches!(n, "results.json" | "handshakes.svg")).context("--out")?;
    let cores = allowed_cores()?.len();
    let options = ScalingOptions {
        params,
        max_threads: cli.max_threads.map_or(cores, usize::from),
        connections: cli.connections as usize,
        duration: cli.duration,
    };
    eprintln!(
        "handshake-scaling: {} {params}, server threads 1 to {}, {} s a point",
        library.name(),
        options.max_threads,
        cli.duration.as_secs_f64()
    );
    let scaling = run(&*library, &options)?;
    fs::write(out.path().join("results.json"), serde_json::to_string_pretty(&scaling)? + "\n")
        .context("writing results.json")?;
    draw(
        &out.path().join("handshakes.svg"),
        &format!("{}: handshakes/s per server thread", library.name()),
        &scaling.points,
    )?;
    out.commit()?;
    let printed = print(&scaling.markdown());
    eprintln!("handshake-scaling: results.json and handshakes.svg are in {}", cli.out.display());
    printed
}

/// Handshakes per second per server thread against server threads, one line
/// each for full and resumed handshakes, with plotters' legend. Errors:
/// the file cannot be written.
fn draw(path: &std::path::Path, title: &str, points: &[Point]) -> Result<()> {
    charts::svg(path, (900, 500), |root| {
        let max_threads = points.iter().map(|p| p.server_threads).max().unwrap_or(1);
        let top = points.iter().map(|p| p.per_thread).fold(0.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(root)
            .caption(title, charts::font(20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5..max_threads as f64 + 0.5, 0.0..top.max(1.0))
            .drawn()?;
        chart
            .configure_mesh()
            .x_desc("server threads")
            .y_desc("handshakes/s per thread")
            .x_labels(max_threads + 1)
            .draw()
            .drawn()?;
        for (name, color) in [("full", BLUE), ("resumed", RED)] {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.handshake == name)
                .map(|p| (p.server_threads as f64, p.per_thread))
                .collect();
            charts::line(&mut chart, line.iter().copied(), color)?
                .label(name)
                .legend(charts::line_key(color, 20, 1));
            charts::markers(&mut chart, line, color)?;
        }
        charts::series_legend(&mut chart, LegendPlace::MiddleRight)
    })
}
