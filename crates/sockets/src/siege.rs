//! The siege-style HTTPS load client (`https-load`): `clients` users at
//! once, each sending `GET /` in HTTP/1.1 over one library's tokio adapter,
//! `requests` times or for `duration`,
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
//! The client is wrk's shape, not hyper's: one fixed request written
//! whole, the response head parsed by httparse (hyper's own parser), the
//! body read to its `Content-Length` and compared as it arrives, and no
//! read past the response's end. A response framed otherwise (chunked, or
//! to the connection's close) is a failed transaction naming why: every
//! server the tools start (`https-serve`, nginx) sends a `Content-Length`.
//! A response saying `Connection: close` ends its connection, and the next
//! transaction opens another. hyper's client connection cost a third more
//! CPU per request (a task and channels per connection, a header map per
//! response, and one more read per response, which finds nothing): on
//! kept connections it held `https-load` to 0.77 of wrk's rate against the
//! same server (docs/https.md, "What is measured, and how").
//!
//! Resumption ([`HandshakeKind::Resumption`]) works as in [`super::load`]:
//! each user's first connection fetches its ticket before the measured
//! window, every later one resumes the ticket of the one before.

use std::{
    net::SocketAddr,
    sync::{Arc, atomic::AtomicBool},
    time::{Duration, Instant},
};

use anyhow::{Result, bail};
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{
    ErrorKind, Failure, Library, Stream, Ticket,
    capacity::{self, Demand},
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
    run_until(library, options, None)
}

/// [`run`], ended early when `stop` is set (by another thread: the
/// server's watcher, when it failed): each user stops at its next
/// transaction, and the report holds what was measured until then.
pub fn run_until(
    library: &dyn Library,
    options: &SiegeOptions,
    stop: Option<Arc<AtomicBool>>,
) -> Result<SiegeReport> {
    if options.clients == 0 || options.threads == 0 {
        bail!("clients and threads must be at least 1");
    }
    if options.requests.is_some() == options.duration.is_some() {
        bail!("give either a number of requests or a duration");
    }
    let client = library
        .client(&options.params, &super::https::CLIENT)
        .map_err(|e| anyhow::anyhow!("{}: {e}", library.name()))?;
    capacity::check(&Demand {
        library: &library.name(),
        clients: options.clients,
        message: options.body,
        target: options.connect,
    })?;
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
        stop,
    };
    let Ran { total, started, seconds, client_cpu_seconds, resident, unfinished } =
        run_clients(threads, plan, |_| Http::new(expected.clone(), options.timeout))?;
    if let Some(u) = unfinished {
        return Err(u.refusal(options.clients, "users", "-t", "users"));
    }
    let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    let failed = total.counts.failed_requests;
    let ok = total.counts.requests;
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
        data_transferred: total.counts.bytes as f64 / SIEGE_MB,
        response_time: if ok == 0 { 0.0 } else { secs(t.mean()) },
        transaction_rate: per_s(ok as f64),
        throughput: per_s(total.counts.bytes as f64 / SIEGE_MB),
        concurrency: per_s(secs(t.mean() * ok as f64)),
        successful_transactions: ok,
        failed_transactions: failed,
        longest_transaction: if ok == 0 { 0.0 } else { secs(t.max() as f64) },
        shortest_transaction: if ok == 0 { 0.0 } else { secs(t.min() as f64) },
        bytes: total.counts.bytes,
        handshakes_full: total.full.len(),
        handshakes_resumed: total.resumed.len(),
        transaction_latency: latency_of(&total.request),
        full_handshake_latency: latency_of(&total.full),
        resumed_handshake_latency: latency_of(&total.resumed),
        client_cpu_seconds,
        client_cpu_share: per_s(client_cpu_seconds) / options.threads as f64,
        threads: options.threads,
        errors: total.counts.errors.clone(),
        error_examples: total.counts.examples.clone(),
        interrupted: super::interrupt::requested().is_some(),
        window_start_unix_s: Some(unix_seconds(started)),
        resident_kib_per_connection: resident.map(|r| r.kib_per(options.clients)),
        resident_peak_kib: resident.map(|r| r.peak_kib),
    })
}

/// The most bytes of a user's read buffer: the longest response head it
/// takes (a longer one is a failed transaction), and the most read at once.
const READ_BUFFER: usize = 16 * 1024;

/// Room for a response head in a user's first read buffer, beside the
/// body: `https-serve`'s head is about 100 bytes, nginx's about 250. A
/// longer head grows the buffer, up to [`READ_BUFFER`].
const HEAD_ROOM: usize = 512;

/// Headers a response head may have (more is a failed transaction).
const MAX_HEADERS: usize = 64;

/// `GET /` as `https-load` sends it (RFC 9112, section 3): `Host` always,
/// `Connection: close` on a connection's last request.
fn request_bytes(last: bool) -> Vec<u8> {
    let close = if last { "connection: close\r\n" } else { "" };
    format!("GET / HTTP/1.1\r\nhost: {SERVER_NAME}\r\n{close}\r\n").into_bytes()
}

/// An HTTP/1.1 client connection over a library's stream.
struct HttpConn {
    stream: Box<dyn Stream>,
    ticket_due: bool,
    /// Whether the server said it ends the connection after its last
    /// response ([`Head::closing`]).
    server_ends: bool,
}

/// An I/O error of `what` as a failure.
fn io_failure(e: std::io::Error, what: &str) -> Failure {
    Failure::new(anyhow::Error::new(e).context(what.to_string()), ErrorKind::Io)
}

/// A response that is not HTTP/1.1 as `https-load` reads it.
fn http_failure(why: String) -> Failure {
    Failure::exactly(ErrorKind::Http, anyhow::anyhow!(why))
}

/// A response head as `https-load` reads it.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    /// Its bytes, the blank line included.
    len: usize,
    /// The body's `Content-Length`.
    body: usize,
    /// The server ends the connection after this response: `Connection:
    /// close`, or HTTP/1.0 without `keep-alive` (RFC 9112, section 9.3).
    closing: bool,
}

/// The complete response head at the start of `bytes`; `None` while it is
/// incomplete. Errors: the head does not parse (httparse), its status is
/// not `200 OK`, or its body is not framed by `Content-Length` (RFC 9112,
/// section 6.3).
fn response_head(bytes: &[u8]) -> Result<Option<Head>, Failure> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(bytes) {
        Ok(httparse::Status::Partial) => return Ok(None),
        Ok(httparse::Status::Complete(head)) => head,
        Err(e) => return Err(http_failure(format!("the response head does not parse: {e}"))),
    };
    if response.code != Some(200) {
        return Err(http_failure(format!(
            "the server answered {} {}, not 200 OK",
            response.code.unwrap_or_default(),
            response.reason.unwrap_or_default()
        )));
    }
    let mut length = None;
    // HTTP/1.1 keeps the connection unless it says otherwise; 1.0 closes it.
    let (mut close, mut keep_alive) = (false, false);
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for token in String::from_utf8_lossy(h.value).split(',') {
                close |= token.trim().eq_ignore_ascii_case("close");
                keep_alive |= token.trim().eq_ignore_ascii_case("keep-alive");
            }
        }
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(http_failure(
                "a body sent with Transfer-Encoding: https-load reads bodies of a Content-Length".into(),
            ));
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<usize>().ok());
            match (parsed, length) {
                (Some(n), None) => length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => return Err(http_failure("an invalid Content-Length".into())),
            }
        }
    }
    let body = length.ok_or_else(|| http_failure("a response without Content-Length".into()))?;
    let closing = close || (response.version == Some(0) && !keep_alive);
    Ok(Some(Head { len: head, body, closing }))
}

/// A body compared with the one expected as it arrives: bytes read, and
/// the first offset where they differ from `expected`.
struct BodyCheck<'a> {
    expected: &'a [u8],
    read: usize,
    differ: Option<usize>,
}

impl BodyCheck<'_> {
    fn take(&mut self, data: &[u8]) {
        let wanted = self.expected.get(self.read..).unwrap_or_default();
        let n = data.len().min(wanted.len());
        // Compared whole first (memcmp); the offset only when they differ.
        if self.differ.is_none() && data[..n] != wanted[..n] {
            self.differ = data.iter().zip(wanted).position(|(a, b)| a != b).map(|at| self.read + at);
        }
        self.read += data.len();
    }

    fn result(&self) -> Result<(), Failure> {
        if self.differ.is_none() && self.read == self.expected.len() {
            return Ok(());
        }
        let expected = self.expected.len();
        let why = match self.differ {
            Some(at) => format!("the bytes differ first at offset {at}"),
            None => format!(
                "{} bytes where {expected} were expected (is the server's body {expected} bytes? --body says what to expect)",
                self.read
            ),
        };
        Err(Failure::exactly(
            ErrorKind::Corrupt,
            anyhow::anyhow!("the response body is not the one expected: {why}"),
        ))
    }
}

impl HttpConn {
    /// Sends `request` (a `GET /`), then reads its response through `buf`
    /// (grown up to [`READ_BUFFER`] for a long head): `200 OK` with
    /// `expected` as its body, compared as it arrives (nothing collected).
    /// Reading stops at the body's last byte, as wrk's does: a kept
    /// connection has nothing pending between requests, and a byte past
    /// the response is a failure. Returns whether the server ends the
    /// connection after it ([`Head::closing`]).
    async fn get(&mut self, request: &[u8], expected: &[u8], buf: &mut Vec<u8>) -> Result<bool, Failure> {
        self.stream.write_all(request).await.map_err(|e| io_failure(e, "HTTP request"))?;
        self.stream.flush().await.map_err(|e| io_failure(e, "HTTP request"))?;
        let mut filled = 0;
        let head = loop {
            if filled == buf.len() && buf.len() < READ_BUFFER {
                buf.resize((2 * buf.len()).clamp(HEAD_ROOM, READ_BUFFER), 0);
            }
            let Some(room) = buf.get_mut(filled..).filter(|r| !r.is_empty()) else {
                return Err(http_failure(format!("a response head longer than {READ_BUFFER} bytes")));
            };
            let n = self.stream.read(room).await.map_err(|e| io_failure(e, "HTTP response"))?;
            if n == 0 {
                return Err(Failure::exactly(
                    ErrorKind::Io,
                    anyhow::anyhow!("the server closed the connection before its response"),
                ));
            }
            filled += n;
            if let Some(head) = response_head(&buf[..filled])? {
                break head;
            }
        };
        let mut body = BodyCheck { expected, read: 0, differ: None };
        let (first, length) = (&buf[head.len..filled], head.body);
        if first.len() > length {
            return Err(http_failure("bytes past the response's Content-Length".into()));
        }
        body.take(first);
        while body.read < length {
            let room = (length - body.read).min(buf.len());
            let n =
                self.stream.read(&mut buf[..room]).await.map_err(|e| io_failure(e, "HTTP response body"))?;
            if n == 0 {
                return Err(Failure::exactly(
                    ErrorKind::Io,
                    anyhow::anyhow!(
                        "the server closed the connection {} bytes into a {length}-byte body",
                        body.read
                    ),
                ));
            }
            body.take(&buf[..n]);
        }
        body.result().map(|()| head.closing)
    }
}

/// `https-load`'s protocol: each request a `GET /` whose response must be
/// `200 OK` with exactly the expected body; a connection ends with the
/// ticket taken when due, then closed as [`close`] does.
struct Http {
    expected: Bytes,
    limit: Duration,
    /// The request on a kept connection, and a connection's last.
    request: [Vec<u8>; 2],
    /// The user's read buffer: a head and the body, at most
    /// [`READ_BUFFER`]; allocated at the first request.
    buf: Vec<u8>,
}

impl Http {
    fn new(expected: Bytes, limit: Duration) -> Http {
        Http { expected, limit, request: [request_bytes(false), request_bytes(true)], buf: Vec::new() }
    }
}

impl Protocol for Http {
    type Conn = HttpConn;

    const TIMED_OUT: &'static str = "transaction not done in";

    async fn start(&mut self, open: Open) -> Result<HttpConn, Failure> {
        Ok(HttpConn { stream: open.stream, ticket_due: open.ticket_due, server_ends: false })
    }

    async fn request(&mut self, conn: &mut HttpConn, last: bool) -> Result<Option<Exchanged>, Failure> {
        if self.buf.is_empty() {
            self.buf = vec![0; (self.expected.len() + HEAD_ROOM).min(READ_BUFFER)];
        }
        let began = Instant::now();
        let closing = conn.get(&self.request[usize::from(last)], &self.expected, &mut self.buf).await?;
        conn.server_ends = closing;
        Ok(Some(Exchanged { began, ended: Instant::now(), bytes: self.expected.len() as u64, closing }))
    }

    async fn end(&mut self, conn: HttpConn, ticket: bool) -> Result<Option<Ticket>, Failure> {
        let mut stream = conn.stream;
        let ticket = if conn.ticket_due && ticket {
            Some(stream.ticket().map_err(|e| Failure::exactly(ErrorKind::Handshake, e))?)
        } else {
            None
        };
        close(stream, self.limit, conn.server_ends).await?;
        Ok(ticket)
    }

    async fn finish(self, _tally: &mut Tally) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(r: Result<Option<Head>, Failure>) -> ErrorKind {
        r.expect_err("a failure").kind
    }

    #[test]
    fn a_head_is_framed_by_its_content_length() {
        let head =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nContent-Length: 1024\r\n\r\n";
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(b"body");
        assert_eq!(
            response_head(&bytes).ok().flatten(),
            Some(Head { len: head.len(), body: 1024, closing: false })
        );
        assert!(matches!(response_head(&head[..head.len() - 1]), Ok(None)));
        assert!(matches!(response_head(b"HTTP/1.1 200"), Ok(None)));
    }

    #[test]
    fn a_head_says_when_the_server_ends_the_connection() {
        for (head, closing) in [
            (&b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"[..], false),
            (b"HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n", true),
            (b"HTTP/1.1 200 OK\r\nconnection: upgrade, close\r\ncontent-length: 0\r\n\r\n", true),
            (b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", true),
            (b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n", false),
        ] {
            let parsed = response_head(head).ok().flatten().expect("a head");
            assert_eq!(parsed.closing, closing, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn other_heads_are_failures_naming_why() {
        for (head, why) in [
            (&b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"[..], "404 Not Found, not 200 OK"),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", "Transfer-Encoding"),
            (b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n", "without Content-Length"),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\n", "invalid Content-Length"),
            (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "invalid Content-Length"),
            (b"HTTP/1.1 2000 OK\r\n\r\n", "does not parse"),
        ] {
            let failure = response_head(head).expect_err("a failure");
            assert_eq!(failure.kind, ErrorKind::Http, "{failure}");
            assert!(failure.to_string().contains(why), "{failure} lacks {why:?}");
        }
        assert_eq!(kind(response_head(b"HTTP/1.1 500 Oops\r\n\r\n")), ErrorKind::Http);
    }

    #[test]
    fn a_body_is_compared_across_its_pieces() {
        let expected = tls_bench_harness::workload::pattern(100);
        let mut body = BodyCheck { expected: &expected, read: 0, differ: None };
        body.take(&expected[..40]);
        body.take(&expected[40..]);
        assert!(body.result().is_ok());

        let mut changed = expected.clone();
        changed[57] ^= 1;
        let mut body = BodyCheck { expected: &expected, read: 0, differ: None };
        body.take(&changed[..40]);
        body.take(&changed[40..]);
        let failure = body.result().expect_err("a failure");
        assert_eq!(failure.kind, ErrorKind::Corrupt);
        assert!(failure.to_string().contains("differ first at offset 57"), "{failure}");

        let mut body = BodyCheck { expected: &expected, read: 0, differ: None };
        body.take(&expected[..99]);
        assert!(
            body.result().expect_err("a failure").to_string().contains("99 bytes where 100 were expected")
        );
    }

    #[test]
    fn the_last_request_asks_to_close() {
        let keep = String::from_utf8(request_bytes(false)).unwrap();
        let last = String::from_utf8(request_bytes(true)).unwrap();
        assert_eq!(keep, format!("GET / HTTP/1.1\r\nhost: {SERVER_NAME}\r\n\r\n"));
        assert_eq!(last, format!("GET / HTTP/1.1\r\nhost: {SERVER_NAME}\r\nconnection: close\r\n\r\n"));
    }
}
