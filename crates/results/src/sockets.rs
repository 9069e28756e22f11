//! The socket runner's saved results: `handshake-scaling`'s points (its
//! `results.json`), the failure kinds and latency percentiles every
//! socket report saves ([`ErrorKind`], [`Latency`]; their writers are in
//! the socket runner), and the tables `report results` makes of them and of
//! a `compare --sockets` run for the README's "Real sockets" block.

use std::{collections::BTreeMap, fmt, fs, io, path::Path, time::Duration};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{
    compare::{FLOOR, RowSummary},
    table::Table,
};

/// The kind of a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// TCP connect refused: nothing listens there (`ECONNREFUSED`).
    Refused,
    /// No route to the address, or the network is down.
    Unreachable,
    /// No local port left for a new connection (`EADDRNOTAVAIL`): closed
    /// sockets in TIME_WAIT hold them; not a library failure.
    PortsExhausted,
    /// A connect, handshake or read did not finish in its timeout.
    Timeout,
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`).
    Reset,
    /// The peer closed the connection before the exchange was done.
    Closed,
    /// The TLS library failed the handshake (or a record after it).
    Handshake,
    /// The handshake negotiated something other than the parameters ask.
    Negotiated,
    /// Echoed bytes differ from those sent, or an HTTP body from the one
    /// served.
    Corrupt,
    /// Malformed HTTP from the peer, or a response other than `200 OK`.
    Http,
    /// Any other I/O error.
    Io,
}

impl ErrorKind {
    /// The kind's name, as in reports (`ports-exhausted`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::PortsExhausted => "ports-exhausted",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Handshake => "handshake",
            ErrorKind::Negotiated => "negotiated",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Http => "http",
            ErrorKind::Io => "io",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Percentiles of one latency, in microseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p99_9_us: f64,
    /// Largest.
    pub max_us: f64,
}

/// One point of `handshake-scaling`: a handshake kind at a server thread
/// count.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    /// `full` or `resumed`.
    pub handshake: String,
    /// Server worker threads.
    pub server_threads: usize,
    /// Cores the server's threads were pinned to.
    pub server_cores: Vec<usize>,
    /// Cores the client's threads were pinned to (empty: not pinned, it
    /// shares the machine).
    pub client_cores: Vec<usize>,
    /// Client worker threads.
    pub client_threads: usize,
    /// Handshakes per second, all threads.
    pub handshakes_per_s: f64,
    /// Handshakes per second per server thread.
    pub per_thread: f64,
    /// Handshake latency (client connection object to done), µs: p50.
    pub p50_us: f64,
    /// p99, µs.
    pub p99_us: f64,
    /// Server CPU per handshake, µs (its threads' CPU over the handshakes
    /// they served, each connection's 1-byte echo included).
    pub server_cpu_us_per_handshake: Option<f64>,
    /// Server threads' CPU share over the run (1 = all busy).
    pub server_cpu_share: f64,
    /// Client threads' CPU share over the run.
    pub client_cpu_share: f64,
    /// `client`, `server`, `shared cores` (client and server on the same
    /// cores, together 90% busy or more), or `neither` (latency-bound):
    /// the end at 90% of its CPU or more, the client first.
    pub limited_by: String,
}

/// A `handshake-scaling` run: `results.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scaling {
    /// The library (server and client).
    pub library: String,
    /// The full handshake's parameters.
    pub parameters: String,
    /// Cores the process could use.
    pub cores: usize,
    /// Full then resumed, for 1 to N server threads.
    pub points: Vec<Point>,
}

impl Scaling {
    /// Reads a `results.json`. Errors: unreadable or not a scaling run,
    /// naming the file.
    pub fn read(path: &Path) -> Result<Scaling> {
        let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// The run as a Markdown table, one line a point.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "### handshakes/s by server threads: {}, {} ({} cores)\n\n",
            self.library, self.parameters, self.cores
        );
        let mut table = Table::new(&[
            "handshake",
            "server threads (cores)",
            "client threads (cores)",
            "handshakes/s",
            "per thread",
            "p50 µs",
            "p99 µs",
            "server CPU µs/handshake",
            "server CPU",
            "client CPU",
            "limited by",
        ]);
        for p in &self.points {
            let client = if p.client_cores.is_empty() {
                format!("{} (not pinned, shares the server's)", p.client_threads)
            } else {
                format!("{} ({:?})", p.client_threads, p.client_cores)
            };
            table.row([
                p.handshake.clone(),
                format!("{} ({:?})", p.server_threads, p.server_cores),
                client,
                format!("{:.0}", p.handshakes_per_s),
                format!("{:.0}", p.per_thread),
                format!("{:.0}", p.p50_us),
                format!("{:.0}", p.p99_us),
                cpu(p),
                format!("{:.0}%", p.server_cpu_share * 100.0),
                format!("{:.0}%", p.client_cpu_share * 100.0),
                p.limited_by.clone(),
            ]);
        }
        out.push_str(&table.markdown());
        out
    }

    /// The point of `handshake` at one server thread.
    fn one_thread(&self, handshake: &str) -> Option<&Point> {
        self.points.iter().find(|p| p.handshake == handshake && p.server_threads == 1)
    }
}

fn cpu(p: &Point) -> String {
    p.server_cpu_us_per_handshake.map_or("-".to_string(), |u| format!("{u:.0}"))
}

/// One line per library: full and resumed handshakes/s at one server
/// thread with their latency, the server's CPU per handshake, and which
/// end limited the rate.
pub fn handshakes_table(runs: &[Scaling]) -> String {
    let mut table = Table::new(&[
        "library",
        "full handshakes/s",
        "p50 / p99 µs",
        "server CPU µs",
        "resumed handshakes/s",
        "p50 / p99 µs",
        "server CPU µs",
        "limited by",
    ]);
    for s in runs {
        let (Some(f), Some(r)) = (s.one_thread("full"), s.one_thread("resumed")) else { continue };
        table.row([
            s.library.clone(),
            format!("{:.0}", f.handshakes_per_s),
            format!("{:.0} / {:.0}", f.p50_us, f.p99_us),
            cpu(f),
            format!("{:.0}", r.handshakes_per_s),
            format!("{:.0} / {:.0}", r.p50_us, r.p99_us),
            cpu(r),
            format!("{} / {}", f.limited_by, r.limited_by),
        ]);
    }
    table.markdown()
}

/// Echo MB/s each way of `rows` (one suite's, of a `compare --sockets`
/// run) as one line per library, a column per row (`C conns, S`), the
/// plaintext floor last. Cells are the medians of the run.
pub fn echo_table(rows: &[&RowSummary]) -> String {
    let mut libraries: Vec<String> = Vec::new();
    for r in rows {
        for l in &r.libraries {
            if !libraries.contains(&l.library) {
                libraries.push(l.library.clone());
            }
        }
    }
    libraries.sort();
    let column = |r: &RowSummary| {
        let parts: Vec<&str> = r.parameters.rsplitn(3, ',').collect();
        match parts.as_slice() {
            [size, conns, _] => format!("{} {}", conns.replace("conns", " conn"), size.replace("B", " B")),
            _ => r.parameters.clone(),
        }
    };
    let header = std::iter::once("MB/s each way".to_string()).chain(rows.iter().map(|r| column(r)));
    let mut table = Table::new(&header.collect::<Vec<_>>());
    let cell = |mb: Option<f64>| mb.map_or("-".to_string(), |m| format!("{m:.0}"));
    for lib in &libraries {
        let cells = rows.iter().map(|r| {
            let mb = r.libraries.iter().find(|l| &l.library == lib).and_then(|l| l.mb_per_s);
            let skipped = r.skipped.iter().any(|(s, _)| s == lib);
            if skipped { "skip".to_string() } else { cell(mb) }
        });
        table.row(std::iter::once(lib.clone()).chain(cells));
    }
    let floor = rows.iter().map(|r| cell(r.floor.as_ref().and_then(|f| f.mb_per_s)));
    table.row(std::iter::once(format!("{FLOOR} TCP (no TLS)")).chain(floor));
    table.markdown()
}

/// Handshakes per second of a `compare --sockets` run's
/// `socket-handshake` rows (`rows`: full, then resumed), one line per
/// library with the time ratio to the row's best and its 95% interval; the
/// plaintext floor (TCP connect, 1-byte echo, close) last. Cells are
/// 10^9 / the median ns per handshake.
pub fn handshake_rates_table(rows: &[&RowSummary]) -> String {
    let mut libraries: Vec<String> =
        rows.iter().flat_map(|r| r.libraries.iter().map(|l| l.library.clone())).collect();
    libraries.sort();
    libraries.dedup();
    let kinds = rows.iter().map(|r| if r.parameters.starts_with("resumption,") { "resumed" } else { "full" });
    let header: Vec<&str> =
        std::iter::once("handshakes/s (time ratio to the best, 95% CI)").chain(kinds).collect();
    let mut table = Table::new(&header);
    let rate = |ns: f64| format!("{:.0}", 1e9 / ns);
    for lib in &libraries {
        let cells = rows.iter().map(|r| match r.libraries.iter().find(|l| &l.library == lib) {
            Some(l) if l.best => format!("{} (best)", rate(l.median_ns)),
            Some(l) => match l.ratio {
                Some(i) => {
                    format!("{} ({:.2}x, {:.2}–{:.2})", rate(l.median_ns), i.estimate, i.low, i.high)
                }
                None => rate(l.median_ns),
            },
            None if r.skipped.iter().any(|(s, _)| s == lib) => "skip".to_string(),
            None => "-".to_string(),
        });
        table.row(std::iter::once(lib.clone()).chain(cells));
    }
    let floor = rows.iter().map(|r| r.floor.as_ref().map_or("-".to_string(), |f| rate(f.median_ns)));
    table.row(std::iter::once(format!("{FLOOR} TCP: connect, 1-byte echo, close")).chain(floor));
    table.markdown()
}

/// How a failure is classified (by the socket runner).
impl ErrorKind {
    /// The kind of an I/O error found in `e`'s chain, else `otherwise`.
    pub fn of(e: &anyhow::Error, otherwise: ErrorKind) -> ErrorKind {
        for cause in e.chain() {
            if let Some(io) = cause.downcast_ref::<io::Error>() {
                return ErrorKind::of_io(io, otherwise);
            }
        }
        otherwise
    }

    /// The kind of `e`: by its `io::ErrorKind`, else by its OS error
    /// number, else `otherwise` (a library's error carried in an
    /// `io::Error`, as tokio-rustls does).
    pub fn of_io(e: &io::Error, otherwise: ErrorKind) -> ErrorKind {
        match e.kind() {
            io::ErrorKind::ConnectionRefused => return ErrorKind::Refused,
            io::ErrorKind::AddrNotAvailable => return ErrorKind::PortsExhausted,
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionAborted => {
                return ErrorKind::Reset;
            }
            io::ErrorKind::TimedOut => return ErrorKind::Timeout,
            io::ErrorKind::UnexpectedEof => return ErrorKind::Closed,
            io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::NetworkDown => {
                return ErrorKind::Unreachable;
            }
            _ => {}
        }
        match e.raw_os_error() {
            Some(libc::EADDRNOTAVAIL) => ErrorKind::PortsExhausted,
            Some(_) => ErrorKind::Io,
            None => otherwise,
        }
    }
}

/// The latency table of a socket report (`load`'s, `https-load`'s):
/// `| latency, µs | count | p50 | p90 | p99 | p99.9 | max |`, then a row
/// per named latency of `latencies` that has samples, in their order (none
/// has: the heading alone).
pub fn latency_table(latencies: &[(&str, &Latency)]) -> String {
    let mut table = Table::new(&["latency, µs", "count", "p50", "p90", "p99", "p99.9", "max"]);
    for (name, l) in latencies.iter().filter(|(_, l)| l.count > 0) {
        table.row([
            name.to_string(),
            l.count.to_string(),
            format!("{:.0}", l.p50_us),
            format!("{:.0}", l.p90_us),
            format!("{:.0}", l.p99_us),
            format!("{:.0}", l.p99_9_us),
            format!("{:.0}", l.max_us),
        ]);
    }
    table.markdown()
}

/// Failures by kind and the first messages, for people (empty when none).
pub fn errors_text(errors: &BTreeMap<ErrorKind, u64>, examples: &[String]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let kinds: Vec<String> = errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let mut out = format!("\nerrors: {}\n", kinds.join(", "));
    for e in examples {
        out.push_str(&format!("  {e}\n"));
    }
    out
}

/// What a server did, from start to stop (`serve`'s and `https-serve`'s
/// summary; the server of an `https-attack` run).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerSummary {
    /// The server library.
    pub library: String,
    /// The parameter set (`Params`'s id text).
    pub parameters: String,
    /// The address it listened on.
    pub listen: String,
    /// Seconds from start to stop.
    pub seconds: f64,
    /// TCP connections accepted.
    pub connections: u64,
    /// Connections closed at their first bytes, all `max_connections`
    /// slots taken.
    pub over_limit: u64,
    /// Connections closed before their first byte, the oldest of more than
    /// `max_connections` silent ones.
    #[serde(default)]
    pub evicted: u64,
    /// Full handshakes completed and checked.
    pub handshakes_full: u64,
    /// Resumed handshakes completed and checked.
    pub handshakes_resumed: u64,
    /// Handshakes completed whose resumption the server cannot tell (Mozilla
    /// JSS's SSLSocket says nothing of it; the client checks each): neither
    /// of the two counts above. 0 for every other server.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub handshakes_unclassified: u64,
    /// Connections closed for idling past the idle timeout (HTTP: for not
    /// sending a whole request header in it, idle or slow).
    pub idle_closed: u64,
    /// HTTP requests answered (`https-serve`; 0 for the echo).
    pub requests: u64,
    /// Connections served HTTP/2 (ALPN `h2`; `https-serve`).
    pub http2: u64,
    /// Application bytes read (and as many echoed back, when no error).
    pub bytes_received: u64,
    /// Application bytes written back.
    pub bytes_sent: u64,
    /// CPU seconds (user + system) the server's worker threads used.
    pub cpu_seconds: f64,
    /// Server CPU per handshake, µs (`cpu_seconds` over all handshakes;
    /// echo included where there was any).
    pub cpu_us_per_handshake: Option<f64>,
    /// The cores its threads were pinned to (empty: not pinned).
    pub cores: Vec<usize>,
    /// Failed connections by kind.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// The first few failures' messages.
    pub error_examples: Vec<String>,
    /// The server's RSS over the run.
    pub rss: RssTrace,
}

impl ServerSummary {
    /// The summary as lines for people.
    pub fn to_text(&self) -> String {
        let errors = if self.errors.is_empty() {
            "none".to_string()
        } else {
            self.errors.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
        };
        // What moved, and the CPU per unit of the work the server did: per
        // HTTP request, or per handshake when it only hand-shook (with an
        // echo or kept connections, a handshake's share is not known).
        let moved = if self.requests > 0 {
            let h2 =
                if self.http2 > 0 { format!(" ({} connections HTTP/2)", self.http2) } else { String::new() };
            format!(
                "{} HTTP requests answered{h2}, {} B of response bodies sent, server CPU {:.2} s ({:.0} µs per request)",
                self.requests,
                self.bytes_sent,
                self.cpu_seconds,
                self.cpu_seconds * 1e6 / self.requests as f64
            )
        } else {
            let per = match self.cpu_us_per_handshake {
                Some(us) if self.bytes_received == 0 => format!(" ({us:.0} µs per handshake)"),
                _ => String::new(),
            };
            format!(
                "{} B received, {} B sent, server CPU {:.2} s{per}",
                self.bytes_received, self.bytes_sent, self.cpu_seconds
            )
        };
        let mut out = format!(
            "served {} on {} for {:.1} s: {} connections ({} over the limit, {} evicted silent, {} closed idle), \
             handshakes {} full + {} resumed{}, {moved}{}; errors: {errors}\n",
            self.library,
            self.listen,
            self.seconds,
            self.connections,
            self.over_limit,
            self.evicted,
            self.idle_closed,
            self.handshakes_full,
            self.handshakes_resumed,
            if self.handshakes_unclassified == 0 {
                String::new()
            } else {
                format!(" + {} not known to the server", self.handshakes_unclassified)
            },
            if self.cores.is_empty() { String::new() } else { format!(", pinned to cores {:?}", self.cores) },
        );
        for e in &self.error_examples {
            out.push_str(&format!("  {e}\n"));
        }
        out.push_str(&format!("{}\n", self.rss.to_text()));
        out
    }
}

/// RSS over a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RssTrace {
    /// Seconds between samples.
    pub interval_s: f64,
    /// The samples, KiB: the first at the start, then one per interval, the
    /// last at the stop.
    pub samples_kib: Vec<u64>,
    /// The first sample, KiB.
    pub start_kib: u64,
    /// The largest sample, KiB.
    pub peak_kib: u64,
    /// The last sample, KiB.
    pub end_kib: u64,
    /// Least-squares slope of the last half of the samples, KiB per
    /// minute; `None` with fewer than 4 samples in that half.
    pub slope_last_half_kib_per_min: Option<f64>,
}

/// The summary of samples.
impl RssTrace {
    /// The trace of `samples` taken `interval` apart.
    pub fn of(samples: Vec<u64>, interval: Duration) -> RssTrace {
        let half = &samples[samples.len() / 2..];
        let slope = (half.len() >= 4).then(|| {
            let n = half.len() as f64;
            let mean_x = (n - 1.0) / 2.0;
            let mean_y = half.iter().sum::<u64>() as f64 / n;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for (i, &y) in half.iter().enumerate() {
                let dx = i as f64 - mean_x;
                sxy += dx * (y as f64 - mean_y);
                sxx += dx * dx;
            }
            sxy / sxx * 60.0 / interval.as_secs_f64()
        });
        RssTrace {
            interval_s: interval.as_secs_f64(),
            start_kib: samples.first().copied().unwrap_or(0),
            peak_kib: samples.iter().copied().max().unwrap_or(0),
            end_kib: samples.last().copied().unwrap_or(0),
            slope_last_half_kib_per_min: slope,
            samples_kib: samples,
        }
    }

    /// One line for people: start, peak, end, slope.
    pub fn to_text(&self) -> String {
        format!(
            "RSS {} KiB at the start, {} KiB peak, {} KiB at the end, {} ({} samples, {} s apart)",
            self.start_kib,
            self.peak_kib,
            self.end_kib,
            self.slope_last_half_kib_per_min.map_or("too short for a slope".to_string(), |s| format!(
                "{s:+.0} KiB/min over the last half"
            )),
            self.samples_kib.len(),
            self.interval_s
        )
    }
}

/// Whether a count is 0 (serde's `skip_serializing_if`: a field most
/// servers never fill stays out of their saved summaries).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod error_kind_tests {
    use super::*;

    #[test]
    fn io_errors_map_to_their_kinds() {
        let e = |k| io::Error::from(k);
        assert_eq!(ErrorKind::of_io(&e(io::ErrorKind::ConnectionRefused), ErrorKind::Io), ErrorKind::Refused);
        assert_eq!(ErrorKind::of_io(&e(io::ErrorKind::BrokenPipe), ErrorKind::Io), ErrorKind::Reset);
        let exhausted = io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        assert_eq!(ErrorKind::of_io(&exhausted, ErrorKind::Io), ErrorKind::PortsExhausted);
        let library = io::Error::other("bad record mac");
        assert_eq!(ErrorKind::of_io(&library, ErrorKind::Handshake), ErrorKind::Handshake);
        let chained = anyhow::Error::new(e(io::ErrorKind::UnexpectedEof)).context("reading");
        assert_eq!(ErrorKind::of(&chained, ErrorKind::Io), ErrorKind::Closed);
        assert_eq!(ErrorKind::of(&anyhow::anyhow!("no io"), ErrorKind::Negotiated), ErrorKind::Negotiated);
    }
}
