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

use super::{
    ErrorKind, Failure, Library, RESUMPTIONS_PER_CHAIN, Stream, Ticket,
    capacity::{self, CHUNK, Demand, Estimate},
    driver::{
        Exchanged, MAX_LATENCY_US, Open, Plan, Protocol, Ran, Tally, Timed, close, run_clients, unix_seconds,
    },
};
use tls_bench_harness::{
    params::{HandshakeKind, Params},
    workload::pattern,
};
use tls_bench_results::{
    sockets::{errors_text, latency_table},
    table::Table,
};

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
    /// new connections (the full ones start the clients' chains of
    /// resumptions: each client's first before the window, then one per
    /// [`crate::RESUMPTIONS_PER_CHAIN`] resumptions in it).
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
    /// The client's resident memory per connection, KiB: its peak over the
    /// run less what it held before the first client, over the clients
    /// (the library's connection state, the client's own and the
    /// runtime's; [`crate::capacity`]). Merged: the clients' mean,
    /// weighted by their connections. `None`: not measured (not Linux).
    #[serde(default)]
    pub resident_kib_per_connection: Option<f64>,
    /// That peak: the client process's resident set at its highest, KiB.
    #[serde(default)]
    pub resident_peak_kib: Option<u64>,
    /// The memory estimate checked before the run
    /// ([`capacity::Estimate`]).
    #[serde(default)]
    pub memory_estimate: Option<Estimate>,
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
        // Clients on other hosts name one server by the address each
        // reaches it at (sockets_netns: one per veth pair); two loopback
        // addresses are two servers of this machine.
        let ip = |r: &Report| r.server.parse::<SocketAddr>().map(|a| a.ip()).ok();
        if let (Some(a), Some(b)) = (ip(first), ip(r))
            && a != b
            && a.is_loopback()
            && b.is_loopback()
        {
            bail!(
                "reports name different servers: {} vs {} (two loopback addresses of this machine)",
                first.server,
                r.server
            );
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
        resident_kib_per_connection: reports
            .iter()
            .map(|r| r.resident_kib_per_connection.map(|k| k * r.connections as f64))
            .sum::<Option<f64>>()
            .map(|k| k / reports.iter().map(|r| r.connections).sum::<usize>().max(1) as f64),
        resident_peak_kib: None,
        memory_estimate: None,
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
        let mut figures = Table::new(&["figure", "value"]);
        figures.row([
            "requests/s".to_string(),
            format!("{:.0} ({} requests)", self.requests_per_s, self.requests),
        ]);
        figures.row([
            "MB/s sent / received".to_string(),
            format!("{:.2} / {:.2}", self.send_mb_per_s, self.receive_mb_per_s),
        ]);
        let rate = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.0}"));
        let handshakes = format!(
            "{} / {} ({} / {}{})",
            rate(self.full_handshakes_per_s),
            rate(self.resumed_handshakes_per_s),
            self.handshakes_full,
            self.handshakes_resumed,
            match (self.full_handshakes_per_s, self.resumed_handshakes_per_s) {
                (Some(_), _) => String::new(),
                (None, Some(_)) => format!(
                    ", the full ones each chain's first: before the window, then one per {RESUMPTIONS_PER_CHAIN} \
                     resumptions"
                ),
                (None, None) => ", before the window".to_string(),
            }
        );
        figures.row(["handshakes/s full / resumed".to_string(), handshakes]);
        if let Some(kib) = self.resident_kib_per_connection {
            let peak = self
                .resident_peak_kib
                .map_or(String::new(), |p| format!("; the client's peak {}", capacity::size(p as f64)));
            let estimate = self.memory_estimate.as_ref().map_or(String::new(), |e| {
                format!(
                    "; estimated {:.0} KiB: the library's state {:.0}, the client's own {:.0}, the kernel's {:.0}",
                    e.kib_per_connection, e.library_kib, e.own_kib, e.kernel_kib
                )
            });
            figures.row([
                "resident memory per connection".to_string(),
                format!("{kib:.1} KiB ({} connections{peak}{estimate})", self.connections),
            ]);
        }
        out.push_str(&figures.markdown());
        out.push('\n');
        out.push_str(&latency_table(&[
            ("request", &self.request_latency),
            ("full handshake", &self.full_handshake_latency),
            ("resumed handshake", &self.resumed_handshake_latency),
            ("connect+handshake", &self.connect_handshake_latency),
        ]));
        out.push_str(&errors_text(&self.errors, &self.error_examples));
        out
    }
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
    if let Some(rate) = options.rate
        && !(rate.is_finite() && rate > 0.0)
    {
        bail!("the request rate must be a positive number of requests per second, not {rate}");
    }
    let (estimate, descriptors) = capacity::check(&Demand {
        library: &library.name(),
        clients: options.connections,
        message: options.message,
        target: options.connect,
    })?;
    // Connections each client may close in the background at once: as
    // many as the descriptors left over allow, at most MAX_CLOSING.
    let spare = descriptors.saturating_sub(capacity::SPARE_DESCRIPTORS + options.connections as u64);
    let closing = (spare / options.connections as u64).min(MAX_CLOSING as u64) as usize;
    let threads = super::threads::start(options.threads, "tls-bench-load", &options.cores)?;
    let data: Arc<[u8]> = pattern(options.message).into();
    // Kept connections: every client connects first; the window (and the
    // figures) start once all have (as tls-perf counts once all peers are
    // active), so a short run's MB/s holds no handshakes. Resumption on new
    // connections: every client first fetches its ticket on a full
    // handshake, so the window holds resumed handshakes only.
    let resumes = options.params.kind == HandshakeKind::Resumption;
    let warm = options.message > 0 && (!options.new_connection || resumes);
    let plan = Plan {
        client,
        connect: options.connect,
        params: options.params,
        clients: options.connections,
        requests: options.requests,
        duration: options.duration,
        timeout: options.timeout,
        // Handshakes only: a request is a connection's handshake.
        new_connection: options.new_connection || options.message == 0,
        warm,
        rate: options.rate,
        timed: Timed::Request,
        progress: options.progress,
        stop: None,
    };
    let Ran { total, started, seconds, client_cpu_seconds, resident, unfinished } =
        run_clients(threads, plan, |_| Echo {
            data: data.clone(),
            buf: Vec::new(),
            closer: Closer::new(options.timeout, closing),
        })?;
    if let Some(u) = unfinished {
        return Err(u.refusal(options.connections, "clients", "-d", "connections"));
    }
    let counts = &total.counts;
    let window_unix_start = unix_seconds(started);
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
        requests: counts.requests,
        requests_per_s: per_s(counts.requests),
        bytes_sent: counts.bytes,
        bytes_received: counts.bytes,
        send_mb_per_s: per_s(counts.bytes) / 1e6,
        receive_mb_per_s: per_s(counts.bytes) / 1e6,
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
        errors: counts.errors.clone(),
        error_examples: counts.examples.clone(),
        histograms: Histograms {
            request: recorded(&total.request),
            full_handshake: recorded(&total.full),
            resumed_handshake: recorded(&total.resumed),
            connect_handshake: recorded(&total.connect_handshake),
        },
        interrupted: super::interrupt::requested().is_some(),
        window_start_unix_s: Some(window_unix_start),
        resident_kib_per_connection: resident.map(|r| r.kib_per(options.connections)),
        resident_peak_kib: resident.map(|r| r.peak_kib),
        memory_estimate: Some(estimate),
    })
}

/// `load`'s protocol: each request a message of `data` echoed back,
/// checked byte for byte as it arrives (none with an empty message: the
/// handshake is the request); a connection ends with its ticket taken when
/// due, then closes in the background ([`Closer`]).
struct Echo {
    data: Arc<[u8]>,
    /// The read buffer: the message, at most [`CHUNK`] (the echo is
    /// compared a piece at a time); allocated at the first request.
    buf: Vec<u8>,
    closer: Closer,
}

impl Protocol for Echo {
    type Conn = Open;

    const TIMED_OUT: &'static str = "echo not back in";

    async fn start(&mut self, open: Open) -> Result<Open, Failure> {
        Ok(open)
    }

    async fn request(&mut self, conn: &mut Open, _last: bool) -> Result<Option<Exchanged>, Failure> {
        if self.data.is_empty() {
            return Ok(None);
        }
        if self.buf.is_empty() {
            self.buf = vec![0u8; self.data.len().min(CHUNK)];
        }
        let (began, ended) = exchange(&mut conn.stream, &self.data, &mut self.buf).await?;
        Ok(Some(Exchanged { began, ended, bytes: self.data.len() as u64, closing: false }))
    }

    async fn end(&mut self, mut conn: Open, ticket: bool) -> Result<Option<Ticket>, Failure> {
        let ticket = if ticket && conn.ticket_due {
            Some(conn.stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?)
        } else {
            None
        };
        self.closer.close(conn.stream).await;
        Ok(ticket)
    }

    async fn finish(self, tally: &mut Tally) {
        self.closer.finish(tally).await;
    }
}

/// Connections closing at once per client, at most.
const MAX_CLOSING: usize = 64;

/// A client's connections closing in the background, each [`close`] a task
/// of its own: the client opens its next connection without waiting the
/// round trip for the server's close (`openssl s_time -new` does not wait
/// either), while the server still closes first and holds the TIME_WAIT.
/// At most `at_once` (up to [`MAX_CLOSING`], as the descriptors allow; 0:
/// each close is waited for); their failures are counted at the end.
struct Closer {
    limit: Duration,
    at_once: usize,
    closing: std::collections::VecDeque<tokio::task::JoinHandle<Result<(), Failure>>>,
    failures: Vec<Failure>,
}

impl Closer {
    fn new(limit: Duration, at_once: usize) -> Closer {
        Closer { limit, at_once, closing: std::collections::VecDeque::new(), failures: Vec::new() }
    }

    async fn close(&mut self, stream: Box<dyn Stream>) {
        if self.at_once == 0 {
            if let Err(f) = close(stream, self.limit, false).await {
                self.failures.push(f);
            }
            return;
        }
        while self.closing.len() >= self.at_once || self.closing.front().is_some_and(|c| c.is_finished()) {
            let Some(oldest) = self.closing.pop_front() else { break };
            self.settle(oldest.await);
        }
        self.closing.push_back(tokio::spawn(close(stream, self.limit, false)));
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

/// Sends `data` and reads it back through `buf`, compared as it arrives,
/// at once (so that neither side waits on a full socket buffer); the
/// driver times the transaction out. Returns when the first byte was
/// written and the last one read.
async fn exchange(
    stream: &mut Box<dyn Stream>,
    data: &[u8],
    buf: &mut [u8],
) -> Result<(Instant, Instant), Failure> {
    let start = Instant::now();
    let differ = write_and_read(&mut **stream, data, buf)
        .await
        .map_err(|e| Failure::new(anyhow::Error::new(e).context("echo"), ErrorKind::Handshake))?;
    let ended = Instant::now();
    if let Some(at) = differ {
        return Err(Failure::exactly(
            ErrorKind::Corrupt,
            anyhow::anyhow!("echoed bytes differ from those sent, first at offset {at} of {}", data.len()),
        ));
    }
    Ok((start, ended))
}

/// Writes all of `data` (then flushes) and reads `data.len()` bytes back on
/// one stream, both going on at once in one task: whichever can go on
/// does, so neither end waits on a full socket buffer. (What
/// `tokio::io::split` and two futures would do, without its lock and its
/// allocation per message.) Each read goes into `buf` (at most its
/// length), poisoned first (every byte the complement of the first one
/// expected there), and is compared with what was sent at its offset.
/// Returns the first offset where the bytes read differ, if any. Errors:
/// the stream's, or its end before all is read (`UnexpectedEof`).
async fn write_and_read<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + ?Sized>(
    stream: &mut S,
    data: &[u8],
    buf: &mut [u8],
) -> std::io::Result<Option<usize>> {
    use std::{io, pin::Pin, task::Poll};
    let (mut written, mut read, mut flushed) = (0, 0, false);
    let (mut differ, mut poisoned) = (None, false);
    std::future::poll_fn(|cx| {
        let mut s = Pin::new(&mut *stream);
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
        while read < data.len() {
            let room = (data.len() - read).min(buf.len());
            if !poisoned {
                buf[..room].fill(!data[read]);
                poisoned = true;
            }
            let mut into = tokio::io::ReadBuf::new(&mut buf[..room]);
            match s.as_mut().poll_read(cx, &mut into) {
                Poll::Ready(Ok(())) if into.filled().is_empty() => {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                Poll::Ready(Ok(())) => {
                    let got = into.filled();
                    let sent = &data[read..read + got.len()];
                    if differ.is_none() && got != sent {
                        differ = got.iter().zip(sent).position(|(a, b)| a != b).map(|at| read + at);
                    }
                    read += got.len();
                    poisoned = false;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        if flushed && read == data.len() { Poll::Ready(Ok(differ)) } else { Poll::Pending }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo through `buf` (smaller than the message), with the byte at
    /// `flip` changed on its way back: the offset of the first difference.
    fn echo(len: usize, flip: Option<usize>) -> std::io::Result<Option<usize>> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            let (mut client, mut server) = tokio::io::duplex(4096);
            let echoer = tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let (mut at, mut piece) = (0, [0u8; 1000]);
                while at < len {
                    let n = server.read(&mut piece).await?;
                    for (i, b) in piece[..n].iter_mut().enumerate() {
                        if Some(at + i) == flip {
                            *b ^= 1;
                        }
                    }
                    server.write_all(&piece[..n]).await?;
                    at += n;
                }
                std::io::Result::Ok(server)
            });
            let data = pattern(len);
            let mut buf = vec![0u8; CHUNK.min(len)];
            let differ = write_and_read(&mut client, &data, &mut buf).await?;
            echoer.await??;
            Ok(differ)
        })
    }

    #[test]
    fn an_echo_is_compared_a_piece_at_a_time() {
        let len = 3 * CHUNK + 100;
        assert_eq!(echo(len, None).unwrap(), None);
        for at in [0, 5, CHUNK - 1, CHUNK, 2 * CHUNK + 7, len - 1] {
            assert_eq!(echo(len, Some(at)).unwrap(), Some(at), "flipped at {at}");
        }
        assert_eq!(echo(10, Some(9)).unwrap(), Some(9));
    }
}
