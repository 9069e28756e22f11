//! HTTPS over the socket runner: hyper 1.x's HTTP/1.1 server connection on
//! each library's tokio adapter ([`Http`], a [`Protocol`] of
//! [`super::serve`]; the `https-serve` binary), answering every `GET` with
//! one fixed body.
//!
//! HTTP/1.1 as hyper serves it: keep-alive unless the request says
//! `Connection: close` (then the server closes after its response, with
//! close_notify). The idle timeout is hyper's header read timeout: a
//! connection that does not send a whole request header within it, whether
//! idle between requests or sending it slowly (slowloris), is closed and
//! counted as closed idle.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::atomic::{AtomicU64, Ordering::Relaxed},
    time::Duration,
};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode, body::Incoming, header, server::conn::http1};
use hyper_util::rt::{TokioIo, TokioTimer};

use super::{
    ErrorKind, Failure, Stream,
    serve::{Conn, Protocol},
};
use crate::bench::pattern;

/// The body every `GET` is answered with: `len` bytes of
/// [`crate::bench::pattern`], which the client checks byte for byte.
pub fn body(len: usize) -> Bytes {
    Bytes::from(pattern(len))
}

/// The HTTP/1.1 server protocol: `200 OK` with [`body`] for every `GET`
/// (any path), `405 Method Not Allowed` otherwise.
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
    let answered = AtomicU64::new(0);
    let service = hyper::service::service_fn(|request: Request<Incoming>| {
        let response = respond(&request, body);
        if response.status() == StatusCode::OK {
            answered.fetch_add(1, Relaxed);
        }
        std::future::ready(Ok::<_, Infallible>(response))
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(conn.idle_timeout).keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let done = tokio::select! {
        r = connection.as_mut() => Some(r),
        () = conn.stopped() => None,
    };
    let result = match done {
        Some(r) => Some(r),
        // Stopping: the response under way may finish, for a second.
        None => {
            connection.as_mut().graceful_shutdown();
            tokio::time::timeout(STOP_GRACE, connection.as_mut()).await.ok()
        }
    };
    let n = answered.load(Relaxed);
    conn.answered(n);
    conn.moved(0, n * body.len() as u64);
    match result {
        None | Some(Ok(())) => Ok(()),
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
