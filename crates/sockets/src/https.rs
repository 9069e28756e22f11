//! HTTPS over the socket runner: hyper 1.x's server connection on each
//! library's tokio adapter ([`Http`], a [`Protocol`] of [`super::serve`];
//! the `https-serve` binary), answering every `GET` with one fixed body.
//!
//! The protocol is the one ALPN chose (RFC 7301; [`SERVER`]): HTTP/2 when
//! the client offered `h2` (h2load, browsers), HTTP/1.1 otherwise (a client
//! that offers `http/1.1` or nothing: siege, wrk, `https-load`).
//!
//! HTTP/1.1 as hyper serves it: keep-alive unless the request says
//! `Connection: close` (then the server closes after its response, with
//! close_notify). The idle timeout is hyper's header read timeout: a
//! connection that does not send a whole request header within it, whether
//! idle between requests or sending it slowly (slowloris), is closed and
//! counted as closed idle. HTTP/2 has no such timeout in hyper: a
//! connection that reads nothing for the idle timeout is sent GOAWAY
//! (hyper's graceful shutdown) and counted the same way.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering::Relaxed},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Method, Request, Response, StatusCode,
    body::Incoming,
    header,
    server::conn::{http1, http2},
};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{
    ErrorKind, Extensions, Failure, Stream,
    serve::{Conn, Protocol},
};
use tls_bench_harness::{
    certs::SERVER_NAME,
    extensions::{H2, HTTP_1_1},
    workload::pattern,
};

/// What an HTTPS server accepts: ALPN's `h2`, then `http/1.1` (its order
/// of preference), and only its certificate's name
/// ([`tls_bench_harness::certs::SERVER_NAME`]) in SNI.
pub const SERVER: Extensions =
    Extensions { alpn: &[H2, HTTP_1_1], server_name: Some(SERVER_NAME), ..Extensions::NONE };

/// What the HTTP/1.1 clients (`https-load`, the attackers) offer: ALPN's
/// `http/1.1`, as curl does, and the certificate's name.
pub const CLIENT: Extensions = Extensions { alpn: &[HTTP_1_1], ..Extensions::NONE };

/// What an HTTP/2 client offers: ALPN's `h2` only.
pub const CLIENT_H2: Extensions = Extensions { alpn: &[H2], ..Extensions::NONE };

/// A client that names another host in SNI ([`super::attack::Attack::WrongSni`]):
/// `wrong.invalid` (a name that cannot exist, RFC 2606).
pub const CLIENT_WRONG_NAME: Extensions = Extensions { server_name: Some("wrong.invalid"), ..CLIENT };

/// The body every `GET` is answered with: `len` bytes of
/// [`tls_bench_harness::workload::pattern`], which the client checks byte for byte.
pub fn body(len: usize) -> Bytes {
    Bytes::from(pattern(len))
}

/// The HTTP server protocol (HTTP/2 or HTTP/1.1, as ALPN chose): `200 OK`
/// with [`body`] for every `GET` (any path), `405 Method Not Allowed`
/// otherwise.
pub struct Http {
    body: Bytes,
}

impl Http {
    /// Answers with a body of `body_bytes` bytes.
    pub fn new(body_bytes: usize) -> Http {
        Http { body: body(body_bytes) }
    }
}

/// How long a stopping server lets a connection finish its response.
const STOP_GRACE: Duration = Duration::from_secs(1);

impl Protocol for Http {
    fn extensions(&self) -> Extensions {
        SERVER
    }

    fn serve<'a>(
        &'a self,
        stream: Box<dyn Stream>,
        conn: Conn<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'a>> {
        Box::pin(serve_http(&self.body, stream, conn))
    }
}

/// A response to `request`.
fn respond(request: &Request<Incoming>, body: &Bytes) -> Response<Full<Bytes>> {
    if request.method() != Method::GET {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("GET"));
        return r;
    }
    let mut r = Response::new(Full::new(body.clone()));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/octet-stream"));
    r
}

async fn serve_http(body: &Bytes, stream: Box<dyn Stream>, mut conn: Conn<'_>) -> Result<(), Failure> {
    // Counted here, added to the server's counters once the connection ends.
    let answered = Arc::new(AtomicU64::new(0));
    // Requests whose response body hyper has not taken whole.
    let in_flight = Arc::new(AtomicU64::new(0));
    let h2 = stream.alpn() == Some(H2);
    let reads = Reads::new(stream);
    let last_read = reads.last.clone();
    let service = {
        let (answered, body, in_flight, last_read) =
            (answered.clone(), body.clone(), in_flight.clone(), last_read.clone());
        hyper::service::service_fn(move |request: Request<Incoming>| {
            last_read.read_since_dispatch.store(0, Relaxed);
            let response = respond(&request, &body);
            if response.status() == StatusCode::OK {
                answered.fetch_add(1, Relaxed);
            }
            // An empty body is taken whole at once (hyper may never poll it).
            let response = response.map(|body| {
                let counted = (!hyper::body::Body::is_end_stream(&body)).then(|| {
                    in_flight.fetch_add(1, Relaxed);
                    in_flight.clone()
                });
                Tracked { body, in_flight: counted }
            });
            std::future::ready(Ok::<_, Infallible>(response))
        })
    };
    let result = if h2 {
        conn.http2();
        let mut builder = http2::Builder::new(TokioExecutor::new());
        builder.timer(TokioTimer::new());
        let connection = builder.serve_connection(TokioIo::new(reads), service);
        drive(connection, |c| c.graceful_shutdown(), &mut conn, Some(last_read.clone())).await
    } else {
        let mut builder = http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(conn.idle_timeout).keep_alive(true);
        let connection = builder.serve_connection(TokioIo::new(reads), service);
        drive(connection, |c| c.graceful_shutdown(), &mut conn, None).await
    };
    let n = answered.load(Relaxed);
    conn.answered(n);
    conn.moved(0, n * body.len() as u64);
    match result {
        None | Some(Ok(())) => Ok(()),
        // The client reset, or closed without close_notify, a connection
        // with nothing in flight: it left (see [`Reads`]).
        Some(Err(e))
            if in_flight.load(Relaxed) == 0
                && (h2 || last_read.read_since_dispatch.load(Relaxed) == 0)
                && (last_read.reset.load(Relaxed) || reset_kind(&e)) =>
        {
            Ok(())
        }
        Some(Err(e)) if e.is_timeout() => {
            conn.idle_closed();
            Ok(())
        }
        Some(Err(e)) => {
            let kind = if e.is_parse() || e.is_parse_too_large() || e.is_parse_status() {
                Some(ErrorKind::Http)
            } else if e.is_incomplete_message() {
                Some(ErrorKind::Closed)
            } else {
                None
            };
            let e = anyhow::Error::new(e).context("serving HTTP");
            Err(match kind {
                Some(kind) => Failure::exactly(kind, e),
                None => Failure::new(e, ErrorKind::Handshake),
            })
        }
    }
}

/// A response body that counts its request out of those in flight once
/// hyper has taken it whole.
struct Tracked {
    body: Full<Bytes>,
    in_flight: Option<Arc<AtomicU64>>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        let r = Pin::new(&mut self.body).poll_frame(cx);
        if hyper::body::Body::is_end_stream(&self.body)
            && let Some(n) = self.in_flight.take()
        {
            n.fetch_sub(1, Relaxed);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Whether hyper's error holds an I/O error of a connection its peer has
/// left ([`left`]), h2's included (h2 says "broken pipe" for a connection
/// that ended under its pings or streams; its error carries the I/O error
/// without a `source`).
fn reset_kind(e: &hyper::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        let io = c.downcast_ref::<std::io::Error>().or_else(|| c.downcast_ref::<h2::Error>()?.get_io());
        if let Some(io) = io {
            return left(io);
        }
        cause = c.source();
    }
    false
}

/// Whether an I/O error says the peer left: a reset (ECONNRESET, EPIPE,
/// not connected), or the TLS session ended by TCP's end without a
/// close_notify (an "incomplete close", RFC 9112 section 9.8: no error when
/// no message is in progress).
fn left(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{BrokenPipe, ConnectionReset, NotConnected, UnexpectedEof};
    matches!(e.kind(), BrokenPipe | ConnectionReset | NotConnected | UnexpectedEof)
}

/// Serves `connection` (hyper's HTTP/1.1 or HTTP/2 server connection)
/// until it ends (`Some`), or until the server stops or, with `last_read`
/// (HTTP/2), the connection reads nothing for the idle timeout: then
/// `finish` (its graceful shutdown) lets it complete what it has, for at
/// most [`STOP_GRACE`] (`None` when that ran out). An idle one is counted
/// closed idle.
async fn drive<C: Future<Output = hyper::Result<()>>>(
    connection: C,
    finish: impl FnOnce(Pin<&mut C>),
    conn: &mut Conn<'_>,
    last_read: Option<Arc<LastRead>>,
) -> Option<hyper::Result<()>> {
    tokio::pin!(connection);
    let idle_timeout = conn.idle_timeout;
    let idle = tokio::time::sleep(idle_timeout);
    tokio::pin!(idle);
    loop {
        let idled = tokio::select! {
            r = connection.as_mut() => return Some(r),
            () = conn.stopped() => false,
            () = &mut idle, if last_read.is_some() => true,
        };
        if !idled {
            break;
        }
        let due = last_read.as_ref().map_or_else(Instant::now, |l| l.at()) + idle_timeout;
        if Instant::now() < due {
            idle.as_mut().reset(due.into());
            continue;
        }
        conn.idle_closed();
        break;
    }
    finish(connection.as_mut());
    tokio::time::timeout(STOP_GRACE, connection.as_mut()).await.ok()
}

/// When a stream last read bytes, shared with the task that watches it,
/// and what says whether its client left between requests.
struct LastRead {
    start: Instant,
    /// Milliseconds from `start`.
    ms: AtomicU64,
    /// Plaintext bytes read since the last request went to the service
    /// (HTTP/1.1: more than 0 is a request begun).
    read_since_dispatch: AtomicU64,
    /// A read or write found the peer gone ([`left`]): a reset, or TCP's
    /// end without a close_notify.
    reset: AtomicBool,
}

impl LastRead {
    fn at(&self) -> Instant {
        self.start + Duration::from_millis(self.ms.load(Relaxed))
    }
}

/// A server stream that notes when it last read bytes and whether its
/// client reset it ([`LastRead`]).
///
/// A client may leave a connection at any time between requests (RFC 9112
/// section 9.6), and leave without reading what the server sends after its
/// last response: a client that has sent its close_notify need not wait for
/// the server's (RFC 8446 section 6.1), an HTTP/2 client closes after its
/// GOAWAY without waiting for the server's. Its socket, closed with the
/// server's goodbye unread, answers with a reset; and a client may end the
/// TCP connection without a close_notify (an incomplete close, which RFC
/// 9112 section 9.8 lets a server take as complete when no message is in
/// progress). With every response body taken whole and (HTTP/1.1) no byte
/// of another request read, either is the client leaving, and
/// [`serve_http`] counts no failure; in the middle of a request or a
/// response it is one (`reset`, `closed`).
struct Reads {
    inner: Box<dyn Stream>,
    last: Arc<LastRead>,
}

impl Reads {
    fn new(inner: Box<dyn Stream>) -> Reads {
        let last = LastRead {
            start: Instant::now(),
            ms: AtomicU64::new(0),
            read_since_dispatch: AtomicU64::new(0),
            reset: AtomicBool::new(false),
        };
        Reads { inner, last: Arc::new(last) }
    }

    /// Notes a read's or a write's result: the peer left ([`left`]).
    fn noted<T>(&self, r: Poll<std::io::Result<T>>) -> Poll<std::io::Result<T>> {
        if let Poll::Ready(Err(e)) = &r
            && left(e)
        {
            self.last.reset.store(true, Relaxed);
        }
        r
    }
}

impl AsyncRead for Reads {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        if read > 0 {
            let ms = u64::try_from(self.last.start.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.last.ms.store(ms, Relaxed);
            self.last.read_since_dispatch.fetch_add(read as u64, Relaxed);
        }
        self.noted(r)
    }
}

impl AsyncWrite for Reads {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.noted(r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.noted(r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.noted(r)
    }
}
