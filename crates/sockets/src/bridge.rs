//! The bridge: any library of the harness over a tokio TCP stream, driven
//! from its in-memory connection ([`TlsLibrary::configure_threaded`]), for
//! the libraries with no maintained tokio adapter (GnuTLS). Each
//! connection gets its own in-memory [`Duplex`]: the library reads and
//! writes its side through its own I/O callbacks, as in memory, and the
//! bridge moves the bytes between the other side and the socket. What it
//! adds to a native adapter is one copy each way (the library's records
//! through the duplex's queue) and the queue's bookkeeping: on OpenSSL,
//! which has both, `compare --sockets` shows it as the row
//! `<library>+bridge` beside the native one (docs/sockets.md, "The bridge").
//!
//! ALPN, the server name and another client identity ([`Extensions`]) are
//! the library's to set, in its configuration for the bridge; one it does
//! not set is a named skip.

use std::{
    io,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll, ready},
};

use anyhow::{Context as _, Result, anyhow, bail};
use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf},
    net::TcpStream,
};

use super::{Client, Extensions, Handshaking, Library, Server, Stream, Ticket, tcp::Tcp};
use tls_bench_harness::{
    error::ConfigureError,
    harness::{Negotiated, SendConnections, Session, TlsConnection, TlsLibrary},
    params::Params,
    transport::{Duplex, Endpoint, Side},
};

/// The suffix of a bridged library's name when the library has a native
/// adapter too (`openssl-3.6.3+bridge`); a library with only the bridge
/// keeps its own name.
pub const SUFFIX: &str = "+bridge";

/// Bytes of records the bridge holds for the socket before a write waits:
/// four full TLS records.
const HELD: usize = 4 * (16384 + 256);

/// The harness library named `name` ([`TlsLibrary::name`]) over sockets;
/// `suffixed` when its name carries [`SUFFIX`] (it has a native adapter).
pub struct Bridge {
    /// The in-memory library's name.
    pub name: String,
    /// Whether the socket library's name adds [`SUFFIX`].
    pub suffixed: bool,
}

impl Bridge {
    /// The harness library, looked up by name (the harness's libraries are
    /// not `Send`, so the bridge keeps the name). Errors: no such library
    /// in this build.
    fn library(&self) -> Result<Box<dyn TlsLibrary>> {
        tls_bench_harness::libs::tls_libraries()
            .into_iter()
            .find(|l| l.name() == self.name)
            .ok_or_else(|| anyhow!("no library {} in this build", self.name))
    }

    fn configure(
        &self,
        params: &Params,
        extensions: &Extensions,
    ) -> Result<Arc<dyn SendConnections>, ConfigureError> {
        if params.datagram {
            return Err(anyhow!("{}: the bridge runs TLS over TCP, not {params}", self.name()).into());
        }
        self.library()?.configure_threaded(params, extensions)
    }
}

impl Library for Bridge {
    fn name(&self) -> String {
        if self.suffixed { format!("{}{SUFFIX}", self.name) } else { self.name.clone() }
    }

    fn server(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Server>, ConfigureError> {
        Ok(Arc::new(BridgeServer(self.configure(params, extensions)?)))
    }

    fn client(&self, params: &Params, extensions: &Extensions) -> Result<Arc<dyn Client>, ConfigureError> {
        Ok(Arc::new(BridgeClient(self.configure(params, extensions)?)))
    }
}

struct BridgeServer(Arc<dyn SendConnections>);

impl Server for BridgeServer {
    fn accept(&self, tcp: TcpStream) -> Handshaking<'_> {
        Box::pin(async move {
            let stream = Bridged::new(Side::Server, Tcp::server(tcp), |io| self.0.server(io))?;
            Ok(Box::new(stream.handshake().await?) as Box<dyn Stream>)
        })
    }
}

struct BridgeClient(Arc<dyn SendConnections>);

impl Client for BridgeClient {
    fn connect(&self, tcp: TcpStream, ticket: Option<Ticket>) -> Handshaking<'_> {
        Box::pin(async move {
            let session = match ticket {
                Some(Ticket(t)) => {
                    Some(t.downcast::<SendSession>().map_err(|_| anyhow!("not a bridged session"))?)
                }
                None => None,
            };
            let stream = Bridged::new(Side::Client, Tcp::client(tcp), |io| {
                self.0.client(io, session.as_ref().map(|s| &s.0))
            })?;
            drop(session);
            Ok(Box::new(stream.handshake().await?) as Box<dyn Stream>)
        })
    }
}

/// A session of a [`SendConnections`] library, which holds only `Send +
/// Sync` data (that trait's contract).
struct SendSession(Session);

// SAFETY: `SendConnections` promises its sessions hold only Send + Sync data.
unsafe impl Send for SendSession {}
// SAFETY: as for `Send`.
unsafe impl Sync for SendSession {}

/// One bridged connection: the library's connection, the other end of its
/// duplex (the wire), the socket, and the records waiting for the socket.
struct Bridged {
    conn: Box<dyn TlsConnection>,
    /// The connection's duplex (its queues shrunk after the handshake).
    duplex: Duplex,
    wire: Endpoint,
    tcp: Tcp,
    /// Records the library wrote, not yet written to the socket.
    out: Vec<u8>,
    /// How much of `out` the socket took.
    sent: usize,
    /// Whether the socket reached its end (the peer's FIN).
    eof: bool,
    /// Whether this side's close_notify was written.
    shut: bool,
}

// SAFETY: the connection comes from a `SendConnections` configuration: it
// shares nothing with other connections but through thread-safe types, and
// the duplex behind its endpoint and `wire` (their `Rc`s) is this
// connection's alone (made in `accept`/`connect`). The whole moves between
// threads together and is used from one at a time (`&mut self`).
unsafe impl Send for Bridged {}

impl Bridged {
    /// The `side` connection `make` creates on its own new duplex, over
    /// `tcp`. Errors: `make`'s.
    fn new(
        side: Side,
        tcp: Tcp,
        make: impl FnOnce(Endpoint) -> Result<Box<dyn TlsConnection>>,
    ) -> Result<Bridged> {
        let duplex = Duplex::new();
        let conn = make(duplex.endpoint(side))?;
        let wire = duplex.endpoint(side.peer());
        Ok(Bridged { conn, duplex, wire, tcp, out: Vec::new(), sent: 0, eof: false, shut: false })
    }

    /// Runs the handshake: each step's records to the socket, the socket's
    /// bytes to the library, until this side is done and its records are
    /// written. Errors: the library's, the socket's, or the peer closing.
    async fn handshake(mut self) -> Result<Bridged> {
        loop {
            let step = self.conn.handshake();
            self.take_records();
            let done = match step {
                Ok(done) => done,
                // The alert the library wrote for its error goes to the
                // peer first; the library's error is the one returned.
                Err(e) => {
                    return Err(match self.tcp.write_all(&self.out[self.sent..]).await {
                        Ok(()) => e,
                        Err(w) => e.context(format!("(its alert was not written either: {w})")),
                    });
                }
            };
            if !self.out.is_empty() {
                self.tcp.write_all(&self.out[self.sent..]).await.context("writing a handshake flight")?;
                self.out.clear();
                self.sent = 0;
            }
            if done {
                // The handshake's flights are sent: their room is freed
                // (an echo's records need far less, grown when written).
                self.out = Vec::new();
                self.duplex.shrink_queues();
                return Ok(self);
            }
            // Read on the stack of the poll, not into a buffer the
            // connection keeps while it waits for its peer (a connection's
            // handshake waits most of its time: with many at once, a
            // record-sized buffer each is most of their memory).
            let n = std::future::poll_fn(|cx| self.poll_feed(cx))
                .await
                .context("reading the peer's handshake")?;
            if n == 0 {
                bail!("the peer closed the connection during the handshake");
            }
        }
    }

    /// Reads what the socket has (at most a record) into the duplex, for
    /// the library; `Ready(0)` at the socket's end.
    fn poll_feed(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let mut scratch = [0u8; 16384 + 256];
        let mut read = ReadBuf::new(&mut scratch);
        ready!(Pin::new(&mut self.tcp).poll_read(cx, &mut read))?;
        self.wire.write_all_bytes(read.filled());
        Poll::Ready(Ok(read.filled().len()))
    }

    /// Moves what the library wrote from the duplex to `out`.
    fn take_records(&mut self) {
        let queued = self.wire.available();
        if queued > 0 {
            let at = self.out.len();
            self.out.resize(at + queued, 0);
            let n = self.wire.read_bytes(&mut self.out[at..]);
            self.out.truncate(at + n);
        }
    }

    /// Writes `out` to the socket as far as it takes without waiting;
    /// `Ready` once all is written.
    fn poll_send_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.out.len() {
            let n = ready!(Pin::new(&mut self.tcp).poll_write(cx, &self.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.out.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

/// The library's error as an I/O error.
fn io_error(e: anyhow::Error) -> io::Error {
    io::Error::other(format!("{e:#}"))
}

impl AsyncRead for Bridged {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let mut scratch = [0u8; 16384 + 256];
        loop {
            // Records a read produced (an alert, a reply to a key update)
            // and any a write left go first, without waiting.
            this.take_records();
            if let Poll::Ready(Err(e)) = this.poll_send_out(cx) {
                return Poll::Ready(Err(e));
            }
            let n = this.conn.recv(buf.initialize_unfilled()).map_err(io_error)?;
            if n > 0 {
                buf.advance(n);
                return Poll::Ready(Ok(()));
            }
            if this.eof || this.conn.peer_closed() {
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut scratch);
            ready!(Pin::new(&mut this.tcp).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.eof = true;
            } else {
                this.wire.write_all_bytes(read.filled());
            }
        }
    }
}

impl AsyncWrite for Bridged {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.out.len() - this.sent >= HELD {
            ready!(this.poll_send_out(cx))?;
        }
        this.conn.send(data).map_err(io_error)?;
        this.take_records();
        if let Poll::Ready(Err(e)) = this.poll_send_out(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_send_out(cx))?;
        Pin::new(&mut this.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.shut {
            this.conn.shutdown().map_err(io_error)?;
            this.take_records();
            this.shut = true;
        }
        ready!(this.poll_send_out(cx))?;
        Pin::new(&mut this.tcp).poll_shutdown(cx)
    }
}

impl Stream for Bridged {
    fn negotiated(&self) -> Result<Option<Negotiated>> {
        self.conn.negotiated().map(Some)
    }

    fn alpn(&self) -> Option<&[u8]> {
        self.conn.alpn()
    }

    fn ticket(&mut self) -> Result<Ticket> {
        let session = self.conn.take_session()?;
        Ok(Ticket(Box::new(SendSession(session))))
    }

    fn tcp(&mut self) -> Option<&mut Tcp> {
        Some(&mut self.tcp)
    }
}
