//! The load client: `connections` clients at once against an echo server,
//! each sending a message of `message` bytes and reading it back, checked
//! byte for byte, `requests` times or for `duration`; on one connection
//! kept alive, or a new connection (and handshake) per request. Closed
//! loop: a client sends its next request when the previous one is back.
//!
//! Latencies (HdrHistogram, microseconds):
//! - `handshake`: from the client connection object's creation to its
//!   handshake done, TCP connect excluded (as tls-perf measures);
//! - `connect+handshake`: TCP connect and handshake (h2load's "time for
//!   connect");
//! - `request`: from the first byte of a message written to its last byte
//!   echoed back.
//!
//! Resumption ([`HandshakeKind::Resumption`]): each client's first
//! connection is a full handshake that fetches its ticket (checked as
//! server authentication, counted as full); every later one must resume
//! the ticket of the one before. With a new connection per request that
//! first connection (one message, then closed) comes before the measured
//! window, so the window's requests are resumed handshakes only.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    time::timeout,
};

use super::{Client, ErrorKind, Failure, Library, Stream, Ticket};
use tls_bench_harness::{
    params::{HandshakeKind, Params},
    workload::pattern,
};
use tls_bench_results::sockets::{errors_text, latency_rows};

/// What the load client does.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// What every connection must negotiate.
    pub params: Params,
    /// The server's address.
    pub connect: SocketAddr,
    /// Clients at once (each one connection at a time), at least 1.
    pub connections: usize,
    /// Requests per client; `None` with `duration`.
    pub requests: Option<u64>,
    /// How long to run; `None` with `requests`.
    pub duration: Option<Duration>,
    /// Bytes per message (each way); 0: no message, handshakes only (a
    /// new connection each time, closed once its handshake is done).
    pub message: usize,
    /// A new connection (and handshake) per request, instead of one kept
    /// alive per client.
    pub new_connection: bool,
    /// Open loop: requests per second in all (spread evenly over the
    /// clients, each sending on its own schedule whether or not the
    /// previous answer is back), latency measured from each request's
    /// intended send time (wrk2's correction for coordinated omission).
    /// `None`: closed loop.
    pub rate: Option<f64>,
    /// Worker threads of the client's runtime.
    pub threads: usize,
    /// Cores to pin the client's threads to, one each in turn; empty: not
    /// pinned.
    pub cores: Vec<usize>,
    /// Longest a TCP connect, a handshake or an exchange may take.
    pub timeout: Duration,
    /// Draw a progress bar on stderr (when it is a terminal).
    pub progress: bool,
}

pub use tls_bench_results::sockets::Latency;

/// The percentiles of `h`, in µs (all 0 when it is empty).
pub fn latency_of(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let q = |q: f64| h.value_at_quantile(q) as f64;
    Latency {
        count: h.len(),
        p50_us: q(0.5),
        p90_us: q(0.9),
        p99_us: q(0.99),
        p99_9_us: q(0.999),
        max_us: h.max() as f64,
    }
}

/// A histogram's recorded values as `[value µs, count]` pairs (HdrHistogram
/// buckets, 3 significant digits): what several clients' reports merge by.
pub type Recorded = Vec<(u64, u64)>;

/// The four latency histograms of a report, recorded values only.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Histograms {
    /// Request latency.
    pub request: Recorded,
    /// Full handshake latency.
    pub full_handshake: Recorded,
    /// Resumed handshake latency.
    pub resumed_handshake: Recorded,
    /// TCP connect and handshake.
    pub connect_handshake: Recorded,
}

pub(super) fn recorded(h: &Histogram<u64>) -> Recorded {
    h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
}

fn histogram(r: &Recorded) -> Result<Histogram<u64>> {
    let mut h = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_US, 3).context("making a histogram")?;
    for &(value, count) in r {
        h.record_n(value.clamp(1, MAX_LATENCY_US), count).context("recording a merged value")?;
    }
    Ok(h)
}

/// What a load run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The client library.
    pub client: String,
    /// The parameter set (`Params`'s id text).
    pub parameters: String,
    /// The server's address.
    pub server: String,
    /// Clients at once.
    pub connections: usize,
    /// Bytes per message, each way.
    pub message_bytes: usize,
    /// `keep-alive`, `new-connection` or `handshakes-only` (message 0).
    pub mode: String,
    /// The open loop's target rate, requests/s in all; `None`: closed loop.
    pub rate_per_s: Option<f64>,
    /// Wall-clock seconds of the measured window: from all clients
    /// connected (kept connections) or from the start (new connections)
    /// to the last client done.
    pub seconds: f64,
    /// Requests echoed back intact.
    pub requests: u64,
    /// Requests per second.
    pub requests_per_s: f64,
    /// Application bytes sent (in the window's requests echoed back
    /// intact; not the message that fetches a ticket before the window).
    pub bytes_sent: u64,
    /// Application bytes received back intact.
    pub bytes_received: u64,
    /// Sent, MB/s (10^6 B/s).
    pub send_mb_per_s: f64,
    /// Received, MB/s (10^6 B/s).
    pub receive_mb_per_s: f64,
    /// Full handshakes completed and checked.
    pub handshakes_full: u64,
    /// Resumed handshakes completed and checked.
    pub handshakes_resumed: u64,
    /// Full handshakes per second; `None` on kept connections (their
    /// handshakes come before the measured window) and for resumption on
    /// new connections (the full ones, fetching the tickets, come before).
    pub full_handshakes_per_s: Option<f64>,
    /// Resumed handshakes per second (`None` as above).
    pub resumed_handshakes_per_s: Option<f64>,
    /// Request latency.
    pub request_latency: Latency,
    /// Full handshake latency (connection object to done, TCP apart).
    pub full_handshake_latency: Latency,
    /// Resumed handshake latency.
    pub resumed_handshake_latency: Latency,
    /// TCP connect and handshake, full or resumed.
    pub connect_handshake_latency: Latency,
    /// CPU seconds (user + system) the client's threads used, its
    /// connects before the window included.
    pub client_cpu_seconds: f64,
    /// The client's share of its threads' capacity over the window
    /// (`client_cpu_seconds` / (seconds x threads)); near 1 the client,
    /// not the server, limited the rate.
    pub client_cpu_share: f64,
    /// The cores its threads were pinned to (empty: not pinned).
    pub cores: Vec<usize>,
    /// The client's worker threads.
    pub threads: usize,
    /// Failures by kind.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// The first few failures' messages.
    pub error_examples: Vec<String>,
    /// The latency histograms, for [`merge`].
    pub histograms: Histograms,
    /// Whether SIGINT or SIGTERM stopped the run before its end: the
    /// figures hold what was measured until then ([`super::interrupt`]).
    #[serde(default)]
    pub interrupted: bool,
    /// When the measured window started, seconds since the Unix epoch
    /// (what [`merge`] checks the clients ran at once by).
    #[serde(default)]
    pub window_start_unix_s: Option<f64>,
}

/// Several clients' reports of one run (clients on other hosts against one
/// server, started together) as one: counts and bytes summed, rates summed
/// (the clients ran at once), latencies from the merged histograms, the
/// longest window; the server named by every address the clients used
/// (one server may have one per network). Errors: no report; reports of
/// different parameters, message sizes or modes; a closed loop beside an
/// open one; servers on different ports (not one server); windows that do
/// not overlap (not run at once); one report given twice (the same run:
/// equal in every figure).
pub fn merge(reports: &[Report]) -> Result<Report> {
    let Some(first) = reports.first() else { bail!("no report to merge") };
    for (i, r) in reports.iter().enumerate() {
        if (&r.parameters, r.message_bytes, &r.mode) != (&first.parameters, first.message_bytes, &first.mode)
        {
            bail!(
                "reports differ: {} {} B {} vs {} {} B {}",
                first.parameters,
                first.message_bytes,
                first.mode,
                r.parameters,
                r.message_bytes,
                r.mode
            );
        }
        let looped =
            |r: &Report| r.rate_per_s.map_or("closed loop".to_string(), |x| format!("open loop at {x}/s"));
        if r.rate_per_s.is_some() != first.rate_per_s.is_some() {
            bail!(
                "reports differ: {} vs {}: a closed and an open loop do not add up",
                looped(first),
                looped(r)
            );
        }
        let port = |r: &Report| r.server.parse::<SocketAddr>().map(|a| a.port()).ok();
        if port(r) != port(first) {
            bail!("reports name different servers: {} vs {} (other ports)", first.server, r.server);
        }
        for (j, other) in reports.iter().enumerate().take(i) {
            if serde_json::to_value(r)? == serde_json::to_value(other)? {
                bail!(
                    "reports {} and {} are the same run (every figure equal): give each client's once",
                    j + 1,
                    i + 1
                );
            }
        }
    }
    let windows: Vec<(f64, f64)> =
        reports.iter().filter_map(|r| r.window_start_unix_s.map(|s| (s, s + r.seconds))).collect();
    let latest_start = windows.iter().map(|w| w.0).fold(f64::MIN, f64::max);
    let earliest_end = windows.iter().map(|w| w.1).fold(f64::MAX, f64::min);
    if windows.len() > 1 && latest_start > earliest_end {
        bail!(
            "the reports' windows do not overlap (one ended {:.1} s before another started): \
             their rates add up only for clients that ran at once",
            latest_start - earliest_end
        );
    }
    let mut servers: Vec<&str> = Vec::new();
    for r in reports {
        if !servers.contains(&r.server.as_str()) {
            servers.push(&r.server);
        }
    }
    let mut hs = [
        histogram(&Recorded::new())?,
        histogram(&Recorded::new())?,
        histogram(&Recorded::new())?,
        histogram(&Recorded::new())?,
    ];
    let sum = |f: &dyn Fn(&Report) -> f64| reports.iter().map(f).sum::<f64>();
    let mut errors: BTreeMap<ErrorKind, u64> = BTreeMap::new();
    for r in reports {
        let parts = [
            &r.histograms.request,
            &r.histograms.full_handshake,
            &r.histograms.resumed_handshake,
            &r.histograms.connect_handshake,
        ];
        for (h, part) in hs.iter_mut().zip(parts) {
            h.add(histogram(part)?).context("merging histograms")?;
        }
        for (k, n) in &r.errors {
            *errors.entry(*k).or_default() += n;
        }
    }
    let rates = |f: &dyn Fn(&Report) -> Option<f64>| -> Option<f64> { reports.iter().map(f).sum() };
    let clients: Vec<&str> = reports.iter().map(|r| r.client.as_str()).collect();
    Ok(Report {
        client: clients.join(" + "),
        parameters: first.parameters.clone(),
        server: servers.join(" + "),
        connections: reports.iter().map(|r| r.connections).sum(),
        message_bytes: first.message_bytes,
        mode: first.mode.clone(),
        rate_per_s: rates(&|r| r.rate_per_s),
        seconds: reports.iter().map(|r| r.seconds).fold(0.0, f64::max),
        requests: reports.iter().map(|r| r.requests).sum(),
        requests_per_s: sum(&|r| r.requests_per_s),
        bytes_sent: reports.iter().map(|r| r.bytes_sent).sum(),
        bytes_received: reports.iter().map(|r| r.bytes_received).sum(),
        send_mb_per_s: sum(&|r| r.send_mb_per_s),
        receive_mb_per_s: sum(&|r| r.receive_mb_per_s),
        handshakes_full: reports.iter().map(|r| r.handshakes_full).sum(),
        handshakes_resumed: reports.iter().map(|r| r.handshakes_resumed).sum(),
        full_handshakes_per_s: rates(&|r| r.full_handshakes_per_s),
        resumed_handshakes_per_s: rates(&|r| r.resumed_handshakes_per_s),
        request_latency: latency_of(&hs[0]),
        full_handshake_latency: latency_of(&hs[1]),
        resumed_handshake_latency: latency_of(&hs[2]),
        connect_handshake_latency: latency_of(&hs[3]),
        client_cpu_seconds: sum(&|r| r.client_cpu_seconds),
        client_cpu_share: sum(&|r| r.client_cpu_share * r.threads as f64)
            / reports.iter().map(|r| r.threads as f64).sum::<f64>(),
        cores: Vec::new(),
        threads: reports.iter().map(|r| r.threads).sum(),
        errors,
        error_examples: reports.iter().flat_map(|r| r.error_examples.iter().cloned()).take(5).collect(),
        histograms: Histograms {
            request: recorded(&hs[0]),
            full_handshake: recorded(&hs[1]),
            resumed_handshake: recorded(&hs[2]),
            connect_handshake: recorded(&hs[3]),
        },
        interrupted: reports.iter().any(|r| r.interrupted),
        window_start_unix_s: reports.iter().filter_map(|r| r.window_start_unix_s).reduce(f64::min),
    })
}

impl Report {
    /// The report as a Markdown table for people.
    pub fn to_table(&self) -> String {
        let mut out = format!(
            "{}load: {} against {}, {}, {} connections, {} B messages, {}, {} ({:.2} s, client CPU {:.2} s, {:.0}% of its {} threads{})\n\n",
            if self.interrupted { "INTERRUPTED (what was measured until the signal) " } else { "" },
            self.client,
            self.server,
            self.parameters,
            self.connections,
            self.message_bytes,
            self.mode,
            self.rate_per_s.map_or("closed loop".to_string(), |r| format!("open loop at {r} requests/s")),
            self.seconds,
            self.client_cpu_seconds,
            self.client_cpu_share * 100.0,
            self.threads,
            if self.cores.is_empty() { String::new() } else { format!(", pinned to cores {:?}", self.cores) },
        );
        out.push_str("| figure | value |\n|---|---|\n");
        out.push_str(&format!("| requests/s | {:.0} ({} requests) |\n", self.requests_per_s, self.requests));
        out.push_str(&format!(
            "| MB/s sent / received | {:.2} / {:.2} |\n",
            self.send_mb_per_s, self.receive_mb_per_s
        ));
        let rate = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.0}"));
        out.push_str(&format!(
            "| handshakes/s full / resumed | {} / {} ({} / {}{}) |\n",
            rate(self.full_handshakes_per_s),
            rate(self.resumed_handshakes_per_s),
            self.handshakes_full,
            self.handshakes_resumed,
            if self.full_handshakes_per_s.is_none() { ", before the window" } else { "" }
        ));
        out.push_str(
            "\n| latency, µs | count | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|\n",
        );
        out.push_str(&latency_rows(&[
            ("request", &self.request_latency),
            ("full handshake", &self.full_handshake_latency),
            ("resumed handshake", &self.resumed_handshake_latency),
            ("connect+handshake", &self.connect_handshake_latency),
        ]));
        out.push_str(&errors_text(&self.errors, &self.error_examples));
        out
    }
}

/// Largest latency recorded, in microseconds (longer ones are clamped).
const MAX_LATENCY_US: u64 = 600_000_000;

/// One client's tallies, merged into the report.
pub(super) struct Tally {
    /// Request (or transaction) latency.
    pub request: Histogram<u64>,
    pub full: Histogram<u64>,
    pub resumed: Histogram<u64>,
    pub connect_handshake: Histogram<u64>,
    pub requests: u64,
    /// Requests (transactions) that failed; the other errors are of
    /// connections outside a request (a close at the end, say).
    pub failed_requests: u64,
    pub bytes: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub examples: Vec<String>,
}

impl Tally {
    pub(super) fn new() -> Result<Tally> {
        let h = || Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_US, 3).context("making a histogram");
        Ok(Tally {
            request: h()?,
            full: h()?,
            resumed: h()?,
            connect_handshake: h()?,
            requests: 0,
            failed_requests: 0,
            bytes: 0,
            errors: BTreeMap::new(),
            examples: Vec::new(),
        })
    }

    pub(super) fn fail(&mut self, f: Failure) {
        *self.errors.entry(f.kind).or_default() += 1;
        if self.examples.len() < 5 {
            self.examples.push(f.to_string());
        }
    }

    pub(super) fn merge(&mut self, other: &Tally) -> Result<()> {
        self.request.add(&other.request).context("merging histograms")?;
        self.full.add(&other.full).context("merging histograms")?;
        self.resumed.add(&other.resumed).context("merging histograms")?;
        self.connect_handshake.add(&other.connect_handshake).context("merging histograms")?;
        self.requests += other.requests;
        self.failed_requests += other.failed_requests;
        self.bytes += other.bytes;
        for (k, n) in &other.errors {
            *self.errors.entry(*k).or_default() += n;
        }
        for e in &other.examples {
            if self.examples.len() < 5 {
                self.examples.push(e.clone());
            }
        }
        Ok(())
    }
}

/// `d` in µs, within the histograms' bounds (1 µs to [`MAX_LATENCY_US`],
/// past every timeout): `saturating_record` then records it exactly, and
/// no record can fail.
pub(super) fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, MAX_LATENCY_US)
}

/// Runs `library`'s clients against the server at `options.connect`.
/// Errors: bad options, the library cannot do the parameters (unsupported
/// or failed configuration), the runtime cannot start. Failed connections
/// are not errors here: they are counted by kind in the report.
pub fn run(library: &dyn Library, options: &LoadOptions) -> Result<Report> {
    if options.connections == 0 || options.threads == 0 {
        bail!("connections and threads must be at least 1");
    }
    if options.message == 0 && options.params.kind == HandshakeKind::Resumption {
        bail!(
            "a message of 0 bytes (handshakes only) reads nothing after the handshake, so no TLS 1.3 \
             ticket arrives to resume with: give a message size, or --kind server-auth"
        );
    }
    if options.requests.is_some() == options.duration.is_some() {
        bail!("give either a number of requests or a duration");
    }
    let client = library
        .client(&options.params, &super::Extensions::NONE)
        .map_err(|e| anyhow::anyhow!("{}: {e}", library.name()))?;
    let threads = super::threads::start(options.threads, "tls-bench-load", &options.cores)?;
    let runtime = &threads.runtime;
    if let Some(rate) = options.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        bail!("the request rate must be a positive number of requests per second, not {rate}");
    }
    let data: Arc<Vec<u8>> = Arc::new(pattern(options.message));
    let bar =
        progress(options.progress, options.requests.map(|r| (r, options.connections)), options.duration);
    // Kept connections: every client connects first; the window (and the
    // figures) start once all have (as tls-perf counts once all peers are
    // active), so a short run's MB/s holds no handshakes. Resumption on new
    // connections: every client first fetches its ticket on a full
    // handshake, so the window holds resumed handshakes only.
    let resumes = options.params.kind == HandshakeKind::Resumption;
    let warm = options.message > 0 && (!options.new_connection || resumes);
    let window = Arc::new(Window::new(options.connections, warm));
    let connecting = connecting_bar(options.progress && warm, options.connections);
    let (total, started) = runtime.block_on(async {
        let mut tasks = Vec::new();
        if !warm {
            window.open();
        }
        for index in 0..options.connections {
            let (client, data, options, bar, window, connecting) = (
                client.clone(),
                data.clone(),
                options.clone(),
                bar.clone(),
                window.clone(),
                connecting.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::new()?;
                one_client(&*client, &data, &options, index, &window, &bar, &connecting, &mut tally).await;
                anyhow::Ok(tally)
            }));
        }
        window.open_when_ready(&connecting).await;
        let mut total = Tally::new()?;
        for t in tasks {
            total.merge(&t.await.context("a client task panicked")??)?;
        }
        // Interrupted before every client had connected: an empty window.
        window.open();
        anyhow::Ok((total, window.started()))
    })?;
    connecting.finish_and_clear();
    let window_unix_start = unix_seconds(started);
    let seconds = started.elapsed().as_secs_f64();
    threads.check_pinned()?;
    let client_cpu_seconds = threads.finish(Duration::from_secs(1));
    bar.finish_and_clear();
    let per_s = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
    Ok(Report {
        client: library.name(),
        parameters: if library.plaintext() {
            "plaintext TCP (no TLS)".to_string()
        } else {
            options.params.to_string()
        },
        server: options.connect.to_string(),
        connections: options.connections,
        message_bytes: options.message,
        rate_per_s: options.rate,
        mode: match (options.message, options.new_connection) {
            (0, _) => "handshakes-only",
            (_, true) => "new-connection",
            (_, false) => "keep-alive",
        }
        .to_string(),
        seconds,
        requests: total.requests,
        requests_per_s: per_s(total.requests),
        bytes_sent: total.bytes,
        bytes_received: total.bytes,
        send_mb_per_s: per_s(total.bytes) / 1e6,
        receive_mb_per_s: per_s(total.bytes) / 1e6,
        handshakes_full: total.full.len(),
        handshakes_resumed: total.resumed.len(),
        // Resumption on new connections: the full ones came before the window.
        full_handshakes_per_s: (!warm).then(|| per_s(total.full.len())),
        resumed_handshakes_per_s: (!warm || options.new_connection).then(|| per_s(total.resumed.len())),
        request_latency: latency_of(&total.request),
        full_handshake_latency: latency_of(&total.full),
        resumed_handshake_latency: latency_of(&total.resumed),
        connect_handshake_latency: latency_of(&total.connect_handshake),
        client_cpu_seconds,
        client_cpu_share: per_s(1) * client_cpu_seconds / options.threads as f64,
        cores: options.cores.clone(),
        threads: options.threads,
        errors: total.errors,
        error_examples: total.examples,
        histograms: Histograms {
            request: recorded(&total.request),
            full_handshake: recorded(&total.full),
            resumed_handshake: recorded(&total.resumed),
            connect_handshake: recorded(&total.connect_handshake),
        },
        interrupted: super::interrupt::requested().is_some(),
        window_start_unix_s: Some(window_unix_start),
    })
}

/// The progress bar (hidden unless `show`): requests done of all
/// (`requests` per client, clients), or seconds of the `duration`.
pub(super) fn progress(
    show: bool,
    requests: Option<(u64, usize)>,
    duration: Option<Duration>,
) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let (len, unit) = match (requests, duration) {
        (Some((r, clients)), _) => (r.saturating_mul(clients as u64), "requests"),
        (None, Some(d)) => (d.as_secs().max(1), "s"),
        (None, None) => (0, ""),
    };
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {unit} (ETA {{eta}})"))
    {
        bar.set_style(style);
    }
    if duration.is_some() {
        let ticker = bar.clone();
        std::thread::spawn(move || {
            while !ticker.is_finished() && ticker.position() < ticker.length().unwrap_or(0) {
                std::thread::sleep(Duration::from_secs(1));
                ticker.inc(1);
            }
        });
    }
    bar
}

/// The bar of the clients' first connections (hidden unless `show`), so
/// that a run of many connections says what it does before its window.
pub(super) fn connecting_bar(show: bool, clients: usize) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(clients as u64);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} connected (ETA {eta})") {
        bar.set_style(style);
    }
    bar
}

/// `at` as seconds since the Unix epoch (0 if the clock is before it).
pub(super) fn unix_seconds(at: Instant) -> f64 {
    let since = std::time::SystemTime::now() - at.elapsed();
    since.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// When the measured window starts: after every client's first connection
/// (kept connections, `warm`), else at once.
pub(super) struct Window {
    pub ready: tokio::sync::Barrier,
    pub go: tokio::sync::Barrier,
    start: std::sync::OnceLock<Instant>,
    pub warm: bool,
}

impl Window {
    /// The window of `clients` clients, each waiting at `ready` and `go`
    /// (with the task that opens it) when `warm`.
    pub(super) fn new(clients: usize, warm: bool) -> Window {
        Window {
            ready: tokio::sync::Barrier::new(clients + 1),
            go: tokio::sync::Barrier::new(clients + 1),
            start: std::sync::OnceLock::new(),
            warm,
        }
    }

    /// Opens the window now, unless it is open.
    pub(super) fn open(&self) {
        let _ = self.start.set(Instant::now());
    }

    /// A client's first connection is made (or failed): it waits for the
    /// others and the window.
    pub(super) async fn join(&self, connecting: &indicatif::ProgressBar) {
        connecting.inc(1);
        self.ready.wait().await;
        self.go.wait().await;
    }

    /// The run's side of [`Window::join`] (when `warm`): once every client
    /// has joined, the window opens and they go. A signal ends the wait
    /// (the clients see it too).
    pub(super) async fn open_when_ready(&self, connecting: &indicatif::ProgressBar) {
        if !self.warm {
            return;
        }
        tokio::select! {
            () = super::interrupt::wait() => {}
            () = async {
                self.ready.wait().await;
                connecting.finish_and_clear();
                self.open();
                self.go.wait().await;
            } => {}
        }
    }

    pub(super) fn started(&self) -> Instant {
        *self.start.get().expect("the window is opened before any client measures")
    }
}

/// A connection of one client and whether it resumed.
pub(super) struct Open {
    pub stream: Box<dyn Stream>,
    /// Still to take its ticket (after its first response).
    pub ticket_due: bool,
}

/// One client's run (client `index` of `options.connections`): requests
/// until its count or the deadline, closed or open loop.
#[allow(clippy::too_many_arguments)]
async fn one_client(
    client: &dyn Client,
    data: &[u8],
    options: &LoadOptions,
    index: usize,
    window: &Window,
    bar: &indicatif::ProgressBar,
    connecting: &indicatif::ProgressBar,
    tally: &mut Tally,
) {
    let mut ticket: Option<Ticket> = None;
    let mut open: Option<Open> = None;
    let mut buf = vec![0u8; data.len()];
    let mut watchdog = Watchdog::new(options.timeout);
    let mut closer = Closer::new(options.timeout);
    let mut backoff = Backoff::default();
    let mut done = 0u64;
    // A signal ends the first connections where they are; later, a client
    // stops at its next request (one under way finishes, or times out),
    // keeping what it measured.
    let warmed = async {
        if !window.warm {
            return;
        }
        // The first connection is the first request's: its failure is that
        // request's (one failure per request asked).
        let mut warm_failure = None;
        match connect(client, options.connect, &options.params, options.timeout, None, tally).await {
            Ok(conn) => open = Some(conn),
            Err(f) => warm_failure = Some(f),
        }
        if options.new_connection
            && let Some(mut conn) = open.take()
        {
            // The ticket's connection: one message, not counted, then closed.
            let fetched = async {
                exchange(&mut conn.stream, data, &mut buf, &mut watchdog).await?;
                if conn.ticket_due {
                    ticket =
                        Some(conn.stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?);
                }
                close(conn.stream, options.timeout).await
            };
            if let Err(f) = fetched.await {
                warm_failure = Some(f);
            }
        }
        if let Some(f) = warm_failure {
            done = first_failed(f, tally, &mut backoff, options.requests.is_some().then_some(bar));
        }
        window.join(connecting).await;
    };
    let stopped = tokio::select! {
        () = super::interrupt::wait() => true,
        () = warmed => false,
    };
    if stopped {
        closer.finish(tally).await;
        return;
    }
    let start = window.started();
    let deadline = options.duration.map(|d| start + d);
    // Open loop: this client's schedule, its clients staggered evenly.
    let interval = options.rate.map(|r| Duration::from_secs_f64(options.connections as f64 / r));
    let mut intended = interval.map(|i| start + i.mul_f64(index as f64 / options.connections as f64));
    let mut free_at = start;
    loop {
        match (options.requests, deadline) {
            (Some(r), _) if done >= r => break,
            (None, Some(d)) if Instant::now() >= d => break,
            _ if super::interrupt::stopping() => break,
            _ => {}
        }
        if !backoff.wait(deadline).await {
            break;
        }
        // Open loop: a request sent late because the previous answer came
        // back after its intended time is timed from that time (the wait
        // was the server's); one the client was free for is timed from its
        // first byte (a timer waking late is not the server's wait).
        let mut origin = None;
        if let (Some(at), Some(every)) = (intended, interval) {
            // The next send is due after the window: none is sent, and the
            // client waits out the window (it lasts `-d`, not to that send).
            if let Some(d) = deadline
                && at >= d
            {
                super::interrupt::sleep_until(d).await;
                break;
            }
            if free_at > at {
                origin = Some(at);
            } else if !super::interrupt::sleep_until(at).await {
                break;
            }
            intended = Some(at + every);
        }
        done += 1;
        let result: Result<(), Failure> = async {
            if open.is_none() {
                open = Some(
                    connect(client, options.connect, &options.params, options.timeout, ticket.take(), tally)
                        .await?,
                );
            }
            let conn = open.as_mut().expect("opened above");
            if data.is_empty() {
                // Handshakes only: a request is a handshake.
                tally.requests += 1;
                if let Some(conn) = open.take() {
                    closer.close(conn.stream).await;
                }
                return Ok(());
            }
            let (began, ended) = exchange(&mut conn.stream, data, &mut buf, &mut watchdog).await?;
            tally.request.saturating_record(micros(ended - origin.unwrap_or(began)));
            tally.requests += 1;
            tally.bytes += data.len() as u64;
            if conn.ticket_due {
                conn.ticket_due = false;
                ticket = Some(conn.stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?);
            }
            if options.new_connection
                && let Some(conn) = open.take()
            {
                closer.close(conn.stream).await;
            }
            Ok(())
        }
        .await;
        free_at = Instant::now();
        if options.requests.is_some() {
            bar.inc(1);
        }
        match result {
            Ok(()) => backoff.reset(),
            Err(f) => {
                tally.failed_requests += 1;
                backoff.after(&f);
                tally.fail(f);
                // Start again from a full handshake: the ticket may be spent.
                open = None;
                ticket = None;
            }
        }
    }
    if let Some(conn) = open.take() {
        closer.close(conn.stream).await;
    }
    closer.finish(tally).await;
}

/// Counts `f`, a client's first connection failing before the window, as
/// its first request's failure (one failure per request asked), its
/// progress on `bar` (requests counted); returns the requests done: 1.
pub(super) fn first_failed(
    f: Failure,
    tally: &mut Tally,
    backoff: &mut Backoff,
    bar: Option<&indicatif::ProgressBar>,
) -> u64 {
    tally.failed_requests += 1;
    backoff.after(&f);
    tally.fail(f);
    if let Some(bar) = bar {
        bar.inc(1);
    }
    1
}

/// A client's pause after a failure that says the server is gone or
/// overwhelmed (refused, reset, unreachable, no port left): 10 ms, doubled
/// after each such failure in a row up to 1 s, back to none after a
/// success. Without it a client retries a dead server as fast as the kernel
/// refuses (a quarter of a million connects in 7 s), and an availability
/// measures the retry speed.
#[derive(Default)]
pub(super) struct Backoff {
    pause: Option<Duration>,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    /// Notes a failure: the pause grows when its kind is one backed off.
    pub(super) fn after(&mut self, f: &Failure) {
        if matches!(
            f.kind,
            ErrorKind::Refused | ErrorKind::Reset | ErrorKind::Unreachable | ErrorKind::PortsExhausted
        ) {
            self.pause = Some(self.pause.map_or(Self::FIRST, |p| (p * 2).min(Self::MAX)));
        }
    }

    /// Notes a success: no pause.
    pub(super) fn reset(&mut self) {
        self.pause = None;
    }

    /// Sleeps the pause, if any, but not past `deadline`; false when the
    /// deadline has come or a signal ([`super::interrupt::sleep_until`]).
    pub(super) async fn wait(&self, deadline: Option<Instant>) -> bool {
        let Some(pause) = self.pause else { return true };
        let until = Instant::now() + pause;
        match deadline {
            Some(d) if d <= until => {
                super::interrupt::sleep_until(d).await;
                false
            }
            _ => super::interrupt::sleep_until(until).await,
        }
    }
}

/// Connections closing at once per client, at most.
const MAX_CLOSING: usize = 64;

/// A client's connections closing in the background, each [`close`] a task
/// of its own: the client opens its next connection without waiting the
/// round trip for the server's close (`openssl s_time -new` does not wait
/// either), while the server still closes first and holds the TIME_WAIT.
/// At most [`MAX_CLOSING`] at once; their failures are counted at the end.
struct Closer {
    limit: Duration,
    closing: std::collections::VecDeque<tokio::task::JoinHandle<Result<(), Failure>>>,
    failures: Vec<Failure>,
}

impl Closer {
    fn new(limit: Duration) -> Closer {
        Closer { limit, closing: std::collections::VecDeque::new(), failures: Vec::new() }
    }

    async fn close(&mut self, stream: Box<dyn Stream>) {
        while self.closing.len() >= MAX_CLOSING || self.closing.front().is_some_and(|c| c.is_finished()) {
            let Some(oldest) = self.closing.pop_front() else { break };
            self.settle(oldest.await);
        }
        self.closing.push_back(tokio::spawn(close(stream, self.limit)));
    }

    fn settle(&mut self, closed: Result<Result<(), Failure>, tokio::task::JoinError>) {
        match closed {
            Ok(Ok(())) => {}
            Ok(Err(f)) => self.failures.push(f),
            Err(e) => self.failures.push(Failure::exactly(ErrorKind::Io, anyhow::anyhow!("close task: {e}"))),
        }
    }

    /// Waits for every close and counts the failures into `tally`.
    async fn finish(mut self, tally: &mut Tally) {
        while let Some(c) = self.closing.pop_front() {
            self.settle(c.await);
        }
        for f in self.failures {
            tally.fail(f);
        }
    }
}

/// A new connection to `addr`: TCP connect, then the handshake (resuming
/// `ticket`), each in `limit`, checked against `params` (a resuming
/// client's first handshake, without a ticket, as server authentication),
/// its latencies recorded in `tally`.
pub(super) async fn connect(
    client: &dyn Client,
    addr: SocketAddr,
    params: &Params,
    limit: Duration,
    ticket: Option<Ticket>,
    tally: &mut Tally,
) -> Result<Open, Failure> {
    let resumes = params.kind == HandshakeKind::Resumption;
    let start = Instant::now();
    let tcp = match timeout(limit, TcpStream::connect(addr)).await {
        Err(_) => {
            return Err(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("TCP connect: no answer")));
        }
        Ok(r) => r.map_err(|e| Failure::new(anyhow::Error::new(e).context("TCP connect"), ErrorKind::Io))?,
    };
    tcp.set_nodelay(true).map_err(|e| Failure::new(e.into(), ErrorKind::Io))?;
    let mut wanted = *params;
    if resumes && ticket.is_none() {
        wanted.kind = HandshakeKind::ServerAuth;
    }
    let handshake_start = Instant::now();
    let stream = match timeout(limit, client.connect(tcp, ticket)).await {
        Err(_) => return Err(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("handshake not done"))),
        Ok(r) => r.map_err(|e| Failure::new(e, ErrorKind::Handshake))?,
    };
    let end = Instant::now();
    let negotiated = stream.negotiated().map_err(|e| Failure::exactly(ErrorKind::Negotiated, e))?;
    if let Some(n) = negotiated {
        n.check(&wanted).map_err(|e| Failure::exactly(ErrorKind::Negotiated, e))?;
        let h = if n.resumed { &mut tally.resumed } else { &mut tally.full };
        h.saturating_record(micros(end - handshake_start));
        tally.connect_handshake.saturating_record(micros(end - start));
    }
    Ok(Open { stream, ticket_due: resumes && negotiated.is_some() })
}

/// Sends `data` and reads it back into `buf` (poisoned first), at once
/// (so that neither side waits on a full socket buffer), in the timeout.
/// Returns when the first byte was written and the last one read.
async fn exchange(
    stream: &mut Box<dyn Stream>,
    data: &[u8],
    buf: &mut [u8],
    watchdog: &mut Watchdog,
) -> Result<(Instant, Instant), Failure> {
    buf.fill(!data[0]);
    let start = Instant::now();
    match watchdog.run(write_and_read(stream, data, buf)).await {
        None => {
            let limit = watchdog.limit;
            return Err(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("echo not back in {limit:?}")));
        }
        Some(r) => {
            r.map_err(|e| Failure::new(anyhow::Error::new(e).context("echo"), ErrorKind::Handshake))?;
        }
    }
    let ended = Instant::now();
    if buf != data {
        let at = buf.iter().zip(data).position(|(a, b)| a != b).unwrap_or(0);
        return Err(Failure::exactly(
            ErrorKind::Corrupt,
            anyhow::anyhow!("echoed bytes differ from those sent, first at offset {at} of {}", data.len()),
        ));
    }
    Ok((start, ended))
}

/// A client's timeout for its exchanges: one timer, set once and moved
/// only when it fires, to the current exchange's start plus the limit (a
/// timer armed and cancelled per message takes the runtime's timer lock
/// twice a message, shared by every client).
struct Watchdog {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
}

impl Watchdog {
    fn new(limit: Duration) -> Watchdog {
        Watchdog { sleep: Box::pin(tokio::time::sleep(limit)), limit }
    }

    /// `work`'s output, or `None` when it took longer than the limit.
    async fn run<F: std::future::Future>(&mut self, work: F) -> Option<F::Output> {
        let due = Instant::now() + self.limit;
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                out = &mut work => return Some(out),
                () = self.sleep.as_mut() => {
                    if Instant::now() >= due {
                        return None;
                    }
                    self.sleep.as_mut().reset(due.into());
                }
            }
        }
    }
}

/// Writes all of `data` (then flushes) and reads exactly `buf.len()` bytes
/// on one stream, both going on at once in one task: whichever can go on
/// does, so neither end waits on a full socket buffer. (What
/// `tokio::io::split` and two futures would do, without its lock and its
/// allocation per message.) Errors: the stream's, or its end before `buf`
/// is full (`UnexpectedEof`).
async fn write_and_read(stream: &mut Box<dyn Stream>, data: &[u8], buf: &mut [u8]) -> std::io::Result<()> {
    use std::{io, pin::Pin, task::Poll};
    let (mut written, mut read, mut flushed) = (0, 0, false);
    std::future::poll_fn(|cx| {
        let mut s = Pin::new(&mut **stream);
        while written < data.len() {
            match s.as_mut().poll_write(cx, &data[written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        if written == data.len() && !flushed {
            match s.as_mut().poll_flush(cx) {
                Poll::Ready(Ok(())) => flushed = true,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {}
            }
        }
        while read < buf.len() {
            let mut into = tokio::io::ReadBuf::new(&mut buf[read..]);
            match s.as_mut().poll_read(cx, &mut into) {
                Poll::Ready(Ok(())) if into.filled().is_empty() => {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                Poll::Ready(Ok(())) => read += into.filled().len(),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        if flushed && read == buf.len() { Poll::Ready(Ok(())) } else { Poll::Pending }
    })
    .await
}

/// Closes a connection as a well-behaved client does: its close_notify
/// (no FIN: [`super::tcp`]), then waits for the server's close_notify and
/// its FIN, so that the server, which closed first, holds the TCP
/// TIME_WAIT and the client's port is free again once it drops the
/// connection. Plaintext TCP: FIN, then the server's (the client holds the
/// TIME_WAIT).
pub(super) async fn close(mut stream: Box<dyn Stream>, limit: Duration) -> Result<(), Failure> {
    let closing = async {
        stream.shutdown().await?;
        let mut rest = [0u8; 1];
        let n = stream.read(&mut rest).await?;
        if n != 0 {
            return Err(std::io::Error::other("the server sent data after the echo"));
        }
        if let Some(tcp) = stream.tcp() {
            tcp.until_fin().await?;
        }
        Ok(())
    };
    match timeout(limit, closing).await {
        Err(_) => {
            Err(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("close: the server did not close")))
        }
        Ok(r) => r.map_err(|e| Failure::new(anyhow::Error::new(e).context("close"), ErrorKind::Io)),
    }
}
