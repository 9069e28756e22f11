//! The server: a library's server side on a TCP address, each connection
//! checked after its handshake, then served by a [`Protocol`]: the echo
//! ([`Echo`], sending back every byte it reads; the `serve` binary) or
//! HTTP ([`super::https`]; `https-serve`).
//!
//! Runtime layout: one multi-threaded tokio runtime with `threads` workers;
//! one task accepts, and each connection is a task of its own, which the
//! runtime moves between workers (what a tokio server does). The limit on
//! connections is a semaphore: past it, a new connection is closed at once
//! and counted (`over-limit`).

use std::{
    collections::BTreeMap,
    future::Future,
    net::{SocketAddr, TcpListener as StdListener},
    os::fd::{AsRawFd, RawFd},
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::{Notify, Semaphore, watch},
    time::timeout,
};

use super::{
    ErrorKind, Extensions, Failure, Library, Server, Stream, check_server, rss::Sampler, threads::Threads,
};
use tls_bench_harness::params::Params;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// What every connection must negotiate.
    pub params: Params,
    /// The address to listen on (`127.0.0.1:0`: an ephemeral port).
    pub listen: SocketAddr,
    /// Worker threads of the runtime (at least 1).
    pub threads: usize,
    /// Longest a handshake may take, from the accept.
    pub handshake_timeout: Duration,
    /// Longest a connection may wait for its next bytes before it is closed
    /// (counted as `idle-closed`, not an error).
    pub idle_timeout: Duration,
    /// Connections served at once, counted from their first bytes: one that
    /// comes when all are taken is closed at once (`over_limit`). Until its
    /// first bytes a connection waits outside the limit, among at most as
    /// many silent ones; beyond, the oldest silent one is closed (counted
    /// `evicted`). A client starts its handshake as soon as it connects, so
    /// a flood of connections held silent cannot lock good clients out.
    pub max_connections: usize,
    /// Cores to pin the worker threads to, one each in turn; empty: not
    /// pinned.
    pub cores: Vec<usize>,
}

/// How often the server's RSS is sampled ([`super::rss`]).
pub const RSS_INTERVAL: Duration = Duration::from_secs(1);

/// How long after its accept a silent connection may still send its first
/// bytes when it is picked for eviction (a client's ClientHello follows its
/// connect at once, but may reach the server just after the accept): one
/// that does keeps its slot.
const GRACE: Duration = Duration::from_millis(10);

/// Largest read (and echoed write) at once, in bytes.
const READ_SIZE: usize = 64 * 1024;

/// What a server did, from start to stop: the saved model.
pub use tls_bench_results::sockets::ServerSummary as Summary;

/// The counters every connection task adds to.
#[derive(Default)]
struct Counters {
    connections: AtomicU64,
    over_limit: AtomicU64,
    full: AtomicU64,
    resumed: AtomicU64,
    idle_closed: AtomicU64,
    requests: AtomicU64,
    http2: AtomicU64,
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    errors: Mutex<(BTreeMap<ErrorKind, u64>, Vec<String>)>,
    evicted: AtomicU64,
    silent: Silent,
}

/// The connections that have not sent a byte yet, oldest first, each with
/// its socket and the signal that closes it. A connection enters when
/// accepted (before its task runs: a burst of connections is accepted
/// faster than their tasks start) and leaves when its first bytes came.
#[derive(Default)]
struct Silent {
    next: AtomicU64,
    waiting: Mutex<BTreeMap<u64, (RawFd, Arc<Notify>)>>,
}

impl Silent {
    /// A connection is accepted: its number and its signal.
    fn enter(&self, fd: RawFd) -> (u64, Arc<Notify>) {
        let id = self.next.fetch_add(1, Relaxed);
        let signal = Arc::new(Notify::new());
        if let Ok(mut w) = self.waiting.lock() {
            w.insert(id, (fd, signal.clone()));
        }
        (id, signal)
    }

    /// How many are silent now.
    fn len(&self) -> usize {
        self.waiting.lock().map_or(0, |w| w.len())
    }

    /// Its first bytes came (or its wait ended another way).
    fn leave(&self, id: u64) {
        if let Ok(mut w) = self.waiting.lock() {
            w.remove(&id);
        }
    }

    /// Signals the oldest connection with nothing to read (or closed by its
    /// peer) to close, and forgets it; false when there is none. One whose
    /// bytes have come but whose task has not seen them yet is passed over.
    fn evict_oldest(&self) -> bool {
        let Ok(mut w) = self.waiting.lock() else { return false };
        let mut evict = None;
        for (&id, (fd, _)) in w.iter() {
            let mut byte = 0u8;
            // SAFETY: the socket is open: its task holds it until it has
            // left this map, which it cannot do while the lock is held.
            let n = unsafe {
                libc::recv(*fd, (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
            };
            if n <= 0 {
                evict = Some(id);
                break;
            }
        }
        match evict.and_then(|id| w.remove(&id)) {
            Some((_, signal)) => {
                signal.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Failure messages kept for the summary.
const EXAMPLES: usize = 5;

impl Counters {
    fn fail(&self, f: Failure) {
        if let Ok(mut e) = self.errors.lock() {
            *e.0.entry(f.kind).or_default() += 1;
            if e.1.len() < EXAMPLES {
                e.1.push(f.to_string());
            }
        }
    }
}

/// The signals that stop a server ([`Running::stop_signals`]).
pub struct StopSignals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

/// A server running in the background.
pub struct Running {
    threads: Threads,
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    counters: Arc<Counters>,
    slots: Arc<Semaphore>,
    max_connections: usize,
    started: Instant,
    summary: Summary,
    rss: Sampler,
}

/// What a server does on a connection once its handshake is done and
/// checked.
pub trait Protocol: Send + Sync + 'static {
    /// What its connections accept beyond the parameter set (HTTP: ALPN's
    /// `h2` and `http/1.1`); the echo: nothing.
    fn extensions(&self) -> Extensions {
        Extensions::NONE
    }

    /// Serves `stream` until the peer closes it, it idles past
    /// [`Conn::idle_timeout`], or the server stops ([`Conn::stopped`]),
    /// counting into `conn`. Errors: a failure, by kind.
    fn serve<'a>(
        &'a self,
        stream: Box<dyn Stream>,
        conn: Conn<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'a>>;
}

/// A connection's view of its server, for its [`Protocol`].
pub struct Conn<'a> {
    /// The server's idle timeout.
    pub idle_timeout: Duration,
    stopped: watch::Receiver<bool>,
    counters: &'a Counters,
}

impl Conn<'_> {
    /// Resolves when the server stops.
    pub async fn stopped(&mut self) {
        let _ = self.stopped.changed().await;
    }

    /// Counts the connection as closed for idling.
    pub fn idle_closed(&self) {
        self.counters.idle_closed.fetch_add(1, Relaxed);
    }

    /// Counts the connection as served HTTP/2.
    pub fn http2(&self) {
        self.counters.http2.fetch_add(1, Relaxed);
    }

    /// Counts `n` HTTP requests answered.
    pub fn answered(&self, n: u64) {
        self.counters.requests.fetch_add(n, Relaxed);
    }

    /// Counts application bytes moved, `received` and `sent`.
    pub fn moved(&self, received: u64, sent: u64) {
        self.counters.bytes_received.fetch_add(received, Relaxed);
        self.counters.bytes_sent.fetch_add(sent, Relaxed);
    }
}

/// Starts `library`'s echo server with `options`: configured and listening
/// when this returns. Errors: as [`start_with`].
pub fn start(library: &dyn Library, options: &ServeOptions) -> Result<Running> {
    start_with(library, options, Arc::new(Echo))
}

/// Starts `library`'s server with `options`, each connection served by
/// `protocol` after its handshake: configured and listening when this
/// returns. Errors: the library cannot serve the parameters (unsupported
/// or failed configuration, named), the address cannot be bound (in use,
/// not local), the runtime or the RSS sampler cannot start.
pub fn start_with(
    library: &dyn Library,
    options: &ServeOptions,
    protocol: Arc<dyn Protocol>,
) -> Result<Running> {
    if options.threads == 0 || options.max_connections == 0 {
        bail!("threads and max_connections must be at least 1");
    }
    // Descriptors for every connection it may hold, as far as this process
    // may raise its limit (a connection past it is refused at accept).
    super::capacity::allow_descriptors(options.max_connections as u64 + super::capacity::SPARE_DESCRIPTORS);
    let server = library
        .server(&options.params, &protocol.extensions())
        .map_err(|e| anyhow::anyhow!("{}: {e}", library.name()))?;
    let listener = StdListener::bind(options.listen).map_err(|e| {
        let hint =
            if e.kind() == std::io::ErrorKind::AddrInUse { " (in use: pick another port, or 0)" } else { "" };
        anyhow::anyhow!("cannot listen on {}: {e}{hint}", options.listen)
    })?;
    listener.set_nonblocking(true).context("setting the listener non-blocking")?;
    let addr = listener.local_addr().context("reading the listening address")?;
    let threads = super::threads::start(options.threads, "tls-bench-serve", &options.cores)?;
    let runtime = &threads.runtime;
    let listener = {
        let _guard = runtime.enter();
        TcpListener::from_std(listener).context("registering the listener")?
    };
    let (stop, stopped) = watch::channel(false);
    let counters = Arc::new(Counters::default());
    let slots = Arc::new(Semaphore::new(options.max_connections));
    let rss = Sampler::start(RSS_INTERVAL)?;
    runtime.spawn(accept_loop(
        listener,
        server,
        protocol,
        options.clone(),
        counters.clone(),
        slots.clone(),
        stopped,
    ));
    let summary = Summary {
        library: library.name(),
        parameters: if library.plaintext() {
            "plaintext TCP (no TLS)".to_string()
        } else {
            options.params.to_string()
        },
        listen: addr.to_string(),
        cores: options.cores.clone(),
        ..Summary::default()
    };
    Ok(Running {
        threads,
        addr,
        stop,
        counters,
        slots,
        max_connections: options.max_connections,
        started: Instant::now(),
        summary,
        rss,
    })
}

impl Running {
    /// The address it listens on (the port chosen when asked for 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until SIGINT or SIGTERM, then stops ([`Running::stop`]).
    /// Errors: the signal handlers cannot be installed.
    pub fn until_signal(self) -> Result<Summary> {
        let signals = self.stop_signals()?;
        self.until(signals)
    }

    /// SIGINT's and SIGTERM's handlers, installed now: a signal that comes
    /// from here on stops the server at [`Running::until`] (one before it
    /// would end the process). Errors: a handler cannot be installed.
    pub fn stop_signals(&self) -> Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        let _guard = self.threads.runtime.enter();
        Ok(StopSignals {
            int: signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
            term: signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
        })
    }

    /// Serves until one of `signals` comes, then stops ([`Running::stop`]).
    /// Errors: as [`Running::stop`].
    pub fn until(self, mut signals: StopSignals) -> Result<Summary> {
        self.threads.runtime.block_on(async {
            tokio::select! {
                _ = signals.term.recv() => {}
                _ = signals.int.recv() => {}
            }
        });
        self.stop()
    }

    /// Stops accepting, tells every connection to close, waits for them (at
    /// most 5 s) and returns what the server did. Errors: an RSS sample
    /// failed.
    pub fn stop(self) -> Result<Summary> {
        // Every connection and the accept loop see it (none may be left
        // to: send_replace cannot fail).
        self.stop.send_replace(true);
        let all = u32::try_from(self.max_connections).unwrap_or(u32::MAX);
        let slots = self.slots.clone();
        let _ = self
            .threads
            .runtime
            .block_on(async { timeout(Duration::from_secs(5), slots.acquire_many(all)).await });
        let cpu_seconds = self.threads.finish(Duration::from_secs(1));
        let c = &self.counters;
        let handshakes = c.full.load(Relaxed) + c.resumed.load(Relaxed);
        let (errors, error_examples) = c.errors.lock().map(|e| e.clone()).unwrap_or_default();
        Ok(Summary {
            seconds: self.started.elapsed().as_secs_f64(),
            connections: c.connections.load(Relaxed),
            over_limit: c.over_limit.load(Relaxed),
            evicted: c.evicted.load(Relaxed),
            handshakes_full: c.full.load(Relaxed),
            handshakes_resumed: c.resumed.load(Relaxed),
            handshakes_unclassified: 0,
            idle_closed: c.idle_closed.load(Relaxed),
            bytes_received: c.bytes_received.load(Relaxed),
            bytes_sent: c.bytes_sent.load(Relaxed),
            cpu_seconds,
            cpu_us_per_handshake: (handshakes > 0).then(|| cpu_seconds * 1e6 / handshakes as f64),
            requests: c.requests.load(Relaxed),
            http2: c.http2.load(Relaxed),
            errors,
            error_examples,
            rss: self.rss.finish()?,
            ..self.summary
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    server: Arc<dyn Server>,
    protocol: Arc<dyn Protocol>,
    options: ServeOptions,
    counters: Arc<Counters>,
    slots: Arc<Semaphore>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stopped.changed() => return,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // EMFILE and the like: count, pause, go on.
                counters.fail(Failure::new(anyhow::Error::new(e).context("accept"), ErrorKind::Io));
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        counters.connections.fetch_add(1, Relaxed);
        // It waits for its first bytes outside the limit, among the silent
        // connections, as many at most as the limit: beyond, the oldest
        // silent one is closed.
        if counters.silent.len() >= options.max_connections {
            counters.silent.evict_oldest();
        }
        let silent = (counters.silent.enter(tcp.as_raw_fd()), Instant::now());
        let (server, protocol, options, counters, stopped, slots) = (
            server.clone(),
            protocol.clone(),
            options.clone(),
            counters.clone(),
            stopped.clone(),
            slots.clone(),
        );
        tokio::spawn(async move {
            let work =
                Work { server: &*server, protocol: &*protocol, options: &options, counters: &counters };
            if let Err(f) = connection(work, tcp, silent, &slots, stopped).await {
                counters.fail(f);
            }
        });
    }
}

/// What every connection of a server shares.
struct Work<'a> {
    server: &'a dyn Server,
    protocol: &'a dyn Protocol,
    options: &'a ServeOptions,
    counters: &'a Counters,
}

/// One connection: its first bytes (closed before them when the silent
/// ones are too many), then a slot (closed at once when none is free:
/// over the limit), the handshake (in the handshake timeout, from the
/// accept), check, then `protocol`.
async fn connection(
    work: Work<'_>,
    tcp: TcpStream,
    ((id, evict), accepted): ((u64, Arc<Notify>), Instant),
    slots: &Arc<Semaphore>,
    stopped: watch::Receiver<bool>,
) -> Result<(), Failure> {
    let Work { server, protocol, options, counters } = work;
    tcp.set_nodelay(true).map_err(|e| Failure::new(e.into(), ErrorKind::Io))?;
    let no_handshake = || {
        Failure::exactly(
            ErrorKind::Timeout,
            anyhow::anyhow!("handshake not done in {:?}", options.handshake_timeout),
        )
    };
    // Its first bytes (a ClientHello), or its eviction as the oldest of
    // too many silent connections.
    // `peek` waits for a byte (tokio's `readable` may be ready at once).
    let mut byte = [0u8; 1];
    let first = tokio::select! {
        r = timeout(options.handshake_timeout, tcp.peek(&mut byte)) => Some(r),
        _ = evict.notified() => None,
    };
    counters.silent.leave(id);
    let first = match first {
        Some(r) => r,
        // Picked for eviction: gone, unless its first bytes come within
        // its grace.
        None => match timeout(GRACE.saturating_sub(accepted.elapsed()), tcp.peek(&mut byte)).await {
            Ok(Ok(n)) if n > 0 => Ok(Ok(n)),
            _ => {
                counters.evicted.fetch_add(1, Relaxed);
                return Ok(());
            }
        },
    };
    match first {
        Err(_) => return Err(no_handshake()),
        Ok(Err(e)) => return Err(Failure::new(e.into(), ErrorKind::Io)),
        Ok(Ok(0)) => {
            return Err(Failure::exactly(
                ErrorKind::Closed,
                anyhow::anyhow!("closed by the client before its first byte"),
            ));
        }
        Ok(Ok(_)) => {}
    }
    let Ok(_permit) = slots.clone().try_acquire_owned() else {
        counters.over_limit.fetch_add(1, Relaxed);
        return Ok(());
    };
    let left = options.handshake_timeout.saturating_sub(accepted.elapsed());
    let stream = match timeout(left, server.accept(tcp)).await {
        Err(_) => return Err(no_handshake()),
        Ok(r) => r.map_err(|e| Failure::new(e, ErrorKind::Handshake))?,
    };
    if let Some(negotiated) = stream.negotiated().map_err(|e| Failure::exactly(ErrorKind::Negotiated, e))? {
        let resumed = check_server(&negotiated, &options.params)
            .map_err(|e| Failure::exactly(ErrorKind::Negotiated, e))?;
        if resumed { &counters.resumed } else { &counters.full }.fetch_add(1, Relaxed);
    }
    protocol.serve(stream, Conn { idle_timeout: options.idle_timeout, stopped, counters }).await
}

/// The echo: every byte read is written back.
pub struct Echo;

impl Protocol for Echo {
    fn serve<'a>(
        &'a self,
        stream: Box<dyn Stream>,
        conn: Conn<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<(), Failure>> + Send + 'a>> {
        Box::pin(echo(stream, conn))
    }
}

/// A connection's echoed bytes, added to the server's counters when it
/// ends (dropped), whichever way it ends.
struct Bytes<'a> {
    counters: &'a Counters,
    received: u64,
    sent: u64,
}

impl Drop for Bytes<'_> {
    fn drop(&mut self) {
        self.counters.bytes_received.fetch_add(self.received, Relaxed);
        self.counters.bytes_sent.fetch_add(self.sent, Relaxed);
    }
}

/// Echoes until the client closes, idles past the timeout, or the server
/// stops.
async fn echo(mut stream: Box<dyn Stream>, mut conn: Conn<'_>) -> Result<(), Failure> {
    let idle_timeout = conn.idle_timeout;
    let counters = conn.counters;
    let mut buf = vec![0u8; READ_SIZE];
    // The idle timer is set once and moved only when it fires (to the last
    // read plus the timeout), not re-armed on every read: a timer per read
    // was the server's largest cost beside a plain tokio echo.
    let idle = tokio::time::sleep(idle_timeout);
    tokio::pin!(idle);
    // One wait for the stop, made once: a new one per read would take the
    // channel's lock, which every connection shares, on every read.
    let stop = conn.stopped.changed();
    tokio::pin!(stop);
    let mut last_read = Instant::now();
    // Bytes counted here and added once the connection ends: an atomic add
    // per read on a counter every connection shares bounces its cache
    // line between the cores.
    let mut bytes = Bytes { counters, received: 0, sent: 0 };
    loop {
        let read = tokio::select! {
            r = stream.read(&mut buf) => r,
            () = &mut idle => {
                let due = last_read + idle_timeout;
                if Instant::now() < due {
                    idle.as_mut().reset(due.into());
                    continue;
                }
                counters.idle_closed.fetch_add(1, Relaxed);
                break;
            }
            _ = &mut stop => break,
        };
        last_read = Instant::now();
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                return Err(Failure::new(anyhow::Error::new(e).context("reading"), ErrorKind::Handshake));
            }
        };
        bytes.received += n as u64;
        stream
            .write_all(&buf[..n])
            .await
            .map_err(|e| Failure::new(anyhow::Error::new(e).context("echoing"), ErrorKind::Handshake))?;
        bytes.sent += n as u64;
    }
    // close_notify, then FIN; a peer already gone is not an error here.
    let _ = timeout(Duration::from_secs(1), stream.shutdown()).await;
    Ok(())
}
