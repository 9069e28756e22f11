//! The siege-style HTTPS load client (`https-load`): `clients` users at
//! once, each sending `GET /` over one library's tokio adapter with hyper
//! 1.x's HTTP/1.1 client connection, `requests` times or for `duration`,
//! with no delay between requests (siege's `-b`); a new connection per
//! request (siege's default: `Connection: close`, the server closes after
//! its response) or one kept alive per client. Every response must be
//! `200 OK` with exactly the body `https-serve --body` serves (checked
//! byte for byte), and every handshake what the parameters say.
//!
//! A transaction (siege's word) is one request: on a new connection, from
//! the TCP connect to the last body byte (handshake included, as siege
//! times it); kept alive, from the request to the last body byte. The
//! report gives siege's fields in siege's units (seconds; its "MB" is 2^20
//! bytes, as its `data.c` computes it) and HdrHistogram percentiles.
//!
//! Differences from siege: a response other than `200 OK` with the exact
//! body is a failed transaction here (siege counts a 4xx or 5xx as a
//! transaction); data transferred counts response bodies only (siege
//! counts what it reads, headers included).
//!
//! Resumption ([`HandshakeKind::Resumption`]) works as in [`super::load`]:
//! each user's first connection fetches its ticket before the measured
//! window, every later one resumes the ticket of the one before.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use anyhow::{Result, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::{
    Request, StatusCode,
    client::conn::http1::{self, SendRequest},
    header,
};
use hyper_util::rt::TokioIo;
use tokio::{task::JoinHandle, time::timeout};

use super::{
    ErrorKind, Failure, Library, Stream, Ticket,
    driver::{Exchanged, Open, Plan, Protocol, Ran, Tally, Timed, close, run_clients, unix_seconds},
    load::latency_of,
};
use tls_bench_harness::{
    certs::SERVER_NAME,
    params::{HandshakeKind, Params},
};

/// What the siege-style client does.
#[derive(Clone, Debug)]
pub struct SiegeOptions {
    /// What every connection must negotiate.
    pub params: Params,
    /// The server's address.
    pub connect: SocketAddr,
    /// Users at once (siege's `-c`), at least 1.
    pub clients: usize,
    /// Requests per user (siege's `-r`); `None` with `duration`.
    pub requests: Option<u64>,
    /// How long to run (siege's `-t`); `None` with `requests`.
    pub duration: Option<Duration>,
    /// The body size the server answers with, bytes (checked).
    pub body: usize,
    /// One connection kept alive per user, instead of a new connection per
    /// request.
    pub keep_alive: bool,
    /// Worker threads of the client's runtime.
    pub threads: usize,
    /// Cores to pin the client's threads to; empty: not pinned.
    pub cores: Vec<usize>,
    /// Longest a connect, a handshake or a transaction may take.
    pub timeout: Duration,
    /// Draw a progress bar on stderr (when it is a terminal).
    pub progress: bool,
}

/// Bytes in siege's "MB" (its `data.c`: bytes / (1024 x 1024)).
pub const SIEGE_MB: f64 = 1024.0 * 1024.0;

pub use tls_bench_results::https::SiegeReport;

/// Runs `library`'s users against the HTTPS server at `options.connect`.
/// Errors: bad options, the library cannot do the parameters (unsupported
/// or failed configuration), the runtime cannot start. Failed transactions
/// are not errors here: they are counted by kind in the report.
pub fn run(library: &dyn Library, options: &SiegeOptions) -> Result<SiegeReport> {
    if options.clients == 0 || options.threads == 0 {
        bail!("clients and threads must be at least 1");
    }
    if options.requests.is_some() == options.duration.is_some() {
        bail!("give either a number of requests or a duration");
    }
    let client = library
        .client(&options.params, &super::https::CLIENT)
        .map_err(|e| anyhow::anyhow!("{}: {e}", library.name()))?;
    let threads = super::threads::start(options.threads, "tls-bench-https-load", &options.cores)?;
    let expected = super::https::body(options.body);
    // Kept connections, and resumption: every user connects (or fetches its
    // ticket) before the window, as `load` does.
    let warm = options.keep_alive || options.params.kind == HandshakeKind::Resumption;
    let plan = Plan {
        client,
        connect: options.connect,
        params: options.params,
        clients: options.clients,
        requests: options.requests,
        duration: options.duration,
        timeout: options.timeout,
        new_connection: !options.keep_alive,
        warm,
        rate: None,
        timed: Timed::Transaction,
        progress: options.progress,
    };
    let Ran { total, started, seconds, client_cpu_seconds } =
        run_clients(threads, plan, |_| Http { expected: expected.clone(), limit: options.timeout })?;
    let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    let failed = total.failed_requests;
    let ok = total.requests;
    let t = &total.request;
    let secs = |us: f64| us / 1e6;
    Ok(SiegeReport {
        client: library.name(),
        parameters: if library.plaintext() {
            "plaintext HTTP (no TLS)".to_string()
        } else {
            options.params.to_string()
        },
        server: options.connect.to_string(),
        mode: if options.keep_alive { "keep-alive" } else { "new-connection" }.to_string(),
        clients: options.clients,
        body_bytes: options.body,
        transactions: ok,
        availability: if ok + failed == 0 { 0.0 } else { ok as f64 * 100.0 / (ok + failed) as f64 },
        elapsed_time: seconds,
        data_transferred: total.bytes as f64 / SIEGE_MB,
        response_time: if ok == 0 { 0.0 } else { secs(t.mean()) },
        transaction_rate: per_s(ok as f64),
        throughput: per_s(total.bytes as f64 / SIEGE_MB),
        concurrency: per_s(secs(t.mean() * ok as f64)),
        successful_transactions: ok,
        failed_transactions: failed,
        longest_transaction: if ok == 0 { 0.0 } else { secs(t.max() as f64) },
        shortest_transaction: if ok == 0 { 0.0 } else { secs(t.min() as f64) },
        bytes: total.bytes,
        handshakes_full: total.full.len(),
        handshakes_resumed: total.resumed.len(),
        transaction_latency: latency_of(&total.request),
        full_handshake_latency: latency_of(&total.full),
        resumed_handshake_latency: latency_of(&total.resumed),
        client_cpu_seconds,
        client_cpu_share: per_s(client_cpu_seconds) / options.threads as f64,
        threads: options.threads,
        errors: total.errors,
        error_examples: total.examples,
        interrupted: super::interrupt::requested().is_some(),
        window_start_unix_s: Some(unix_seconds(started)),
    })
}

/// The task driving an HTTP/1.1 client connection: the stream back when
/// the connection is done.
type Driver = JoinHandle<hyper::Result<http1::Parts<TokioIo<Box<dyn Stream>>>>>;

/// An HTTP/1.1 client connection over a library's stream; its driver runs
/// as a task of its own and gives the stream back when the connection is
/// done.
struct HttpConn {
    sender: SendRequest<Empty<Bytes>>,
    driver: Driver,
    ticket_due: bool,
}

/// hyper's error as a failure of `what`.
fn http_failure(e: hyper::Error, what: &str) -> Failure {
    Failure::new(anyhow::Error::new(e).context(what.to_string()), ErrorKind::Http)
}

impl HttpConn {
    async fn new(stream: Box<dyn Stream>, ticket_due: bool) -> Result<HttpConn, Failure> {
        let (sender, connection) =
            http1::handshake(TokioIo::new(stream)).await.map_err(|e| http_failure(e, "HTTP/1.1 client"))?;
        let driver = tokio::spawn(connection.without_shutdown());
        Ok(HttpConn { sender, driver, ticket_due })
    }

    /// Ends the connection: its stream back from hyper, with `ticket` the
    /// ticket taken when due, then closed as [`close`] does.
    async fn finish(self, limit: Duration, ticket: bool) -> Result<Option<Ticket>, Failure> {
        drop(self.sender);
        let parts = match timeout(limit, self.driver).await {
            Err(_) => {
                return Err(Failure::exactly(
                    ErrorKind::Timeout,
                    anyhow::anyhow!("HTTP connection did not end"),
                ));
            }
            Ok(joined) => joined
                .map_err(|e| Failure::exactly(ErrorKind::Io, anyhow::anyhow!("HTTP connection task: {e}")))?
                .map_err(|e| http_failure(e, "HTTP connection"))?,
        };
        let mut stream = parts.io.into_inner();
        let ticket = if self.ticket_due && ticket {
            Some(stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?)
        } else {
            None
        };
        close(stream, limit).await?;
        Ok(ticket)
    }
}

/// `GET /` on `sender` (with `Connection: close` when `last`), the
/// response checked to be `200 OK` with `expected` as its body, frame by
/// frame as it arrives (nothing collected).
async fn get(sender: &mut SendRequest<Empty<Bytes>>, expected: &Bytes, last: bool) -> Result<(), Failure> {
    let mut request = Request::new(Empty::<Bytes>::new());
    request.headers_mut().insert(header::HOST, header::HeaderValue::from_static(SERVER_NAME));
    if last {
        request.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    }
    sender.ready().await.map_err(|e| http_failure(e, "HTTP connection"))?;
    let response = sender.send_request(request).await.map_err(|e| http_failure(e, "HTTP request"))?;
    if response.status() != StatusCode::OK {
        return Err(Failure::exactly(
            ErrorKind::Http,
            anyhow::anyhow!("the server answered {}, not 200 OK", response.status()),
        ));
    }
    let mut body = response.into_body();
    // Bytes read, and the first offset where they differ from `expected`.
    let (mut read, mut differ) = (0usize, None);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| http_failure(e, "HTTP response body"))?;
        let Ok(data) = frame.into_data() else { continue };
        let wanted = expected.get(read..).unwrap_or_default();
        let n = data.len().min(wanted.len());
        // Compared whole first (memcmp); the offset only when they differ.
        if differ.is_none() && data[..n] != wanted[..n] {
            differ = data.iter().zip(wanted).position(|(a, b)| a != b).map(|at| read + at);
        }
        read += data.len();
    }
    if differ.is_none() && read == expected.len() {
        return Ok(());
    }
    let why = match differ {
        Some(at) => format!("the bytes differ first at offset {at}"),
        None => format!(
            "{read} bytes where {} were expected (is the server's body {} bytes? --body says what to expect)",
            expected.len(),
            expected.len()
        ),
    };
    Err(Failure::exactly(
        ErrorKind::Corrupt,
        anyhow::anyhow!("the response body is not the one expected: {why}"),
    ))
}

/// `https-load`'s protocol: each request a `GET /` whose response must be
/// `200 OK` with exactly the expected body; a connection ends with hyper
/// giving its stream back, the ticket taken when due, then closed.
struct Http {
    expected: Bytes,
    limit: Duration,
}

impl Protocol for Http {
    type Conn = HttpConn;

    const TIMED_OUT: &'static str = "transaction not done in";

    async fn start(&mut self, open: Open) -> Result<HttpConn, Failure> {
        HttpConn::new(open.stream, open.ticket_due).await
    }

    async fn request(&mut self, conn: &mut HttpConn, last: bool) -> Result<Option<Exchanged>, Failure> {
        let began = Instant::now();
        get(&mut conn.sender, &self.expected, last).await?;
        Ok(Some(Exchanged { began, ended: Instant::now(), bytes: self.expected.len() as u64 }))
    }

    async fn end(&mut self, conn: HttpConn, ticket: bool) -> Result<Option<Ticket>, Failure> {
        conn.finish(self.limit, ticket).await
    }

    async fn finish(self, _tally: &mut Tally) {}
}
