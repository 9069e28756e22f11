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
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
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
    Client, ErrorKind, Failure, Library, Stream, Ticket,
    load::{
        Backoff, Tally, Window, close, connect, connecting_bar, first_failed, latency_of, micros, progress,
        unix_seconds,
    },
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
    let bar = progress(options.progress, options.requests.map(|r| (r, options.clients)), options.duration);
    // Kept connections, and resumption: every user connects (or fetches its
    // ticket) before the window, as `load` does.
    let warm = options.keep_alive || options.params.kind == HandshakeKind::Resumption;
    let window = Arc::new(Window::new(options.clients, warm));
    let connecting = connecting_bar(options.progress && warm, options.clients);
    let total = threads.runtime.block_on(async {
        let mut tasks = Vec::new();
        if !warm {
            window.open();
        }
        for _ in 0..options.clients {
            let (client, expected, options, bar, window, connecting) = (
                client.clone(),
                expected.clone(),
                options.clone(),
                bar.clone(),
                window.clone(),
                connecting.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::new()?;
                one_user(&*client, &expected, &options, &window, &bar, &connecting, &mut tally).await;
                anyhow::Ok(tally)
            }));
        }
        window.open_when_ready(&connecting).await;
        let mut total = Tally::new()?;
        for t in tasks {
            total.merge(&t.await.context("a user task panicked")??)?;
        }
        // Interrupted before every user had connected: an empty window.
        window.open();
        anyhow::Ok(total)
    })?;
    connecting.finish_and_clear();
    let seconds = window.started().elapsed().as_secs_f64();
    let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    threads.check_pinned()?;
    let client_cpu_seconds = threads.finish(Duration::from_secs(1));
    bar.finish_and_clear();
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
        window_start_unix_s: Some(unix_seconds(window.started())),
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

impl HttpConn {
    async fn new(stream: Box<dyn Stream>, ticket_due: bool) -> Result<HttpConn, Failure> {
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Failure::new(anyhow::Error::new(e).context("HTTP/1.1 client"), ErrorKind::Http))?;
        let driver = tokio::spawn(connection.without_shutdown());
        Ok(HttpConn { sender, driver, ticket_due })
    }

    /// `GET /` (with `Connection: close` when `last`), the response checked
    /// to be `200 OK` with `expected` as its body.
    async fn get(&mut self, expected: &Bytes, last: bool) -> Result<(), Failure> {
        let http = |e: hyper::Error, what: &str| {
            Failure::new(anyhow::Error::new(e).context(what.to_string()), ErrorKind::Http)
        };
        let mut request = Request::new(Empty::<Bytes>::new());
        request.headers_mut().insert(header::HOST, header::HeaderValue::from_static(SERVER_NAME));
        if last {
            request.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
        }
        self.sender.ready().await.map_err(|e| http(e, "HTTP connection"))?;
        let response = self.sender.send_request(request).await.map_err(|e| http(e, "HTTP request"))?;
        if response.status() != StatusCode::OK {
            return Err(Failure::exactly(
                ErrorKind::Http,
                anyhow::anyhow!("the server answered {}, not 200 OK", response.status()),
            ));
        }
        let body =
            response.into_body().collect().await.map_err(|e| http(e, "HTTP response body"))?.to_bytes();
        if body != *expected {
            let why = match body.iter().zip(expected.iter()).position(|(a, b)| a != b) {
                Some(at) => format!("the bytes differ first at offset {at}"),
                None => format!(
                    "{} bytes where {} were expected (is the server's body {} bytes? --body says what to expect)",
                    body.len(),
                    expected.len(),
                    expected.len()
                ),
            };
            return Err(Failure::exactly(
                ErrorKind::Corrupt,
                anyhow::anyhow!("the response body is not the one expected: {why}"),
            ));
        }
        Ok(())
    }

    /// Ends the connection: its stream back from hyper, the ticket taken
    /// when due, then closed as [`close`] does.
    async fn finish(self, limit: Duration) -> Result<Option<Ticket>, Failure> {
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
                .map_err(|e| {
                    Failure::new(anyhow::Error::new(e).context("HTTP connection"), ErrorKind::Http)
                })?,
        };
        let mut stream = parts.io.into_inner();
        let ticket = if self.ticket_due {
            Some(stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?)
        } else {
            None
        };
        close(stream, limit).await?;
        Ok(ticket)
    }
}

/// A new connection with its handshake checked, as HTTP.
async fn open(
    client: &dyn Client,
    options: &SiegeOptions,
    ticket: Option<Ticket>,
    tally: &mut Tally,
) -> Result<HttpConn, Failure> {
    let o = connect(client, options.connect, &options.params, options.timeout, ticket, tally).await?;
    HttpConn::new(o.stream, o.ticket_due).await
}

/// One user's run: transactions until its count or the deadline.
async fn one_user(
    client: &dyn Client,
    expected: &Bytes,
    options: &SiegeOptions,
    window: &Window,
    bar: &indicatif::ProgressBar,
    connecting: &indicatif::ProgressBar,
    tally: &mut Tally,
) {
    let mut ticket: Option<Ticket> = None;
    let mut kept: Option<HttpConn> = None;
    let mut backoff = Backoff::default();
    let mut done = 0u64;
    // A signal ends the first connections where they are; later, a user
    // stops at its next transaction (one under way finishes, or times
    // out), keeping what it measured.
    let warmed = async {
        if !window.warm {
            return;
        }
        let first = async {
            let mut conn = open(client, options, None, tally).await?;
            if options.keep_alive {
                return Ok(Some(conn));
            }
            // The ticket's connection: one request, not counted, then closed.
            conn.get(expected, true).await?;
            ticket = conn.finish(options.timeout).await?;
            Ok::<_, Failure>(None)
        };
        let failed = match timeout(options.timeout, first).await {
            Ok(Ok(conn)) => {
                kept = conn;
                None
            }
            Ok(Err(f)) => Some(f),
            Err(_) => Some(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("first connection"))),
        };
        // The first connection is the first transaction's: its failure is
        // that transaction's (one failure per transaction asked).
        if let Some(f) = failed {
            done = first_failed(f, tally, &mut backoff, options.requests.is_some().then_some(bar));
        }
        window.join(connecting).await;
    };
    let stopped = tokio::select! {
        () = super::interrupt::wait() => true,
        () = warmed => false,
    };
    if stopped {
        return;
    }
    let deadline = options.duration.map(|d| window.started() + d);
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
        done += 1;
        let began = Instant::now();
        let transaction = async {
            if options.keep_alive {
                if kept.is_none() {
                    kept = Some(open(client, options, None, tally).await?);
                }
                kept.as_mut().expect("opened above").get(expected, false).await
            } else {
                let mut conn = open(client, options, ticket.take(), tally).await?;
                conn.get(expected, true).await?;
                ticket = conn.finish(options.timeout).await?;
                Ok(())
            }
        };
        let result = match timeout(options.timeout, transaction).await {
            Ok(r) => r,
            Err(_) => Err(Failure::exactly(
                ErrorKind::Timeout,
                anyhow::anyhow!("transaction not done in {:?}", options.timeout),
            )),
        };
        if options.requests.is_some() {
            bar.inc(1);
        }
        match result {
            Ok(()) => {
                backoff.reset();
                tally.request.saturating_record(micros(began.elapsed()));
                tally.requests += 1;
                tally.bytes += expected.len() as u64;
            }
            Err(f) => {
                backoff.after(&f);
                tally.fail(f);
                tally.failed_requests += 1;
                // Start again from a full handshake: the ticket may be spent.
                kept = None;
                ticket = None;
            }
        }
    }
    if let Some(conn) = kept.take()
        && let Err(f) = conn.finish(options.timeout).await
    {
        tally.fail(f);
    }
}
