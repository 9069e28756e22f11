//! One client driver for every load client, whatever it speaks: `load`'s
//! echo ([`super::load`]) and `https-load`'s HTTP/1.1 ([`super::siege`])
//! are each a [`Protocol`] (start a connection, make one request on it, end
//! it), and [`run_clients`] does the rest for both: the runtime and its
//! threads, the clients' tasks, TCP connect and the handshake checked
//! against the parameters ([`connect`]), the first connections before the
//! measured window, the open loop's schedule, one timeout per transaction,
//! the pause after failures, and every count and latency into the clients'
//! [`Tally`], merged.
//!
//! A transaction is one request: on a new connection with its connect,
//! handshake and end around it. What its latency spans is the protocol's
//! ([`Timed`]): the request alone (echo: first byte written to last byte
//! read back), or the whole transaction (HTTP: from the TCP connect, as
//! siege times it).

use std::{
    collections::BTreeMap,
    future::Future,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    time::timeout,
};

use super::{Client, ErrorKind, Failure, RESUMPTIONS_PER_CHAIN, Stream, Ticket};
use tls_bench_harness::params::{HandshakeKind, Params};

/// What a client speaks on its connections.
pub(super) trait Protocol: Send + 'static {
    /// A connection ready for requests.
    type Conn: Send;

    /// What a transaction out of time is called in its failure, before
    /// the limit ("echo not back in": "echo not back in 400ms").
    const TIMED_OUT: &'static str;

    /// Starts the protocol on `open`, a connection whose handshake is done
    /// and checked.
    fn start(&mut self, open: Open) -> impl Future<Output = Result<Self::Conn, Failure>> + Send;

    /// One request on `conn`, its answer checked; `last`: the connection
    /// ends after it. `None`: nothing was exchanged (a handshake is the
    /// request).
    fn request(
        &mut self,
        conn: &mut Self::Conn,
        last: bool,
    ) -> impl Future<Output = Result<Option<Exchanged>, Failure>> + Send;

    /// Ends `conn`; with `ticket`, first takes its session ticket when one
    /// is due ([`Open::ticket_due`]) for the next connection to resume.
    fn end(
        &mut self,
        conn: Self::Conn,
        ticket: bool,
    ) -> impl Future<Output = Result<Option<Ticket>, Failure>> + Send;

    /// Waits for whatever `end` left under way; its failures into `tally`.
    fn finish(self, tally: &mut Tally) -> impl Future<Output = ()> + Send;
}

/// One request's exchange: when it began and ended, and the payload bytes
/// it moved one way.
pub(super) struct Exchanged {
    pub began: Instant,
    pub ended: Instant,
    pub bytes: u64,
    /// The server ends the connection after this exchange (HTTP/1.1's
    /// `Connection: close`, RFC 9112 section 9.6): it is ended here too,
    /// and the next transaction opens a new one.
    pub closing: bool,
}

/// What a transaction's latency spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timed {
    /// The request's exchange ([`Exchanged`]); in an open loop, from the
    /// time it was due when it went out late.
    Request,
    /// The whole transaction: the connect, the handshake and the
    /// connection's end included when it has them.
    Transaction,
}

/// What every client of a run does.
pub(super) struct Plan {
    pub client: Arc<dyn Client>,
    pub connect: SocketAddr,
    pub params: Params,
    /// Clients at once.
    pub clients: usize,
    /// Requests per client; `None` with `duration`.
    pub requests: Option<u64>,
    /// How long the window lasts; `None` with `requests`.
    pub duration: Option<Duration>,
    /// Longest a connect, a handshake or a transaction may take.
    pub timeout: Duration,
    /// A new connection per request, instead of one kept per client.
    pub new_connection: bool,
    /// Every client makes its first connection before the window opens
    /// (and, on new connections, fetches its ticket on it).
    pub warm: bool,
    /// Open loop: requests per second of all clients together.
    pub rate: Option<f64>,
    pub timed: Timed,
    /// Draw progress bars on stderr.
    pub progress: bool,
    /// Set by the caller to end the run early (its server failed): each
    /// client stops at its next transaction, as on a signal.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Plan {
    /// Whether the caller asked the run to end ([`Plan::stop`]).
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Relaxed))
    }
}

/// What [`run_clients`] measured.
pub(super) struct Ran {
    pub total: Total,
    /// When the window opened.
    pub started: Instant,
    /// The window's length, seconds.
    pub seconds: f64,
    /// CPU time of the client's threads, seconds.
    pub client_cpu_seconds: f64,
    /// This process's resident memory over the run (`None`: not Linux).
    pub resident: Option<Resident>,
    /// The clients' first connections were not all made when `-d` had
    /// passed: the run stopped there ([`Unfinished`]).
    pub unfinished: Option<Unfinished>,
}

/// This process's resident memory over a run, KiB
/// ([`super::capacity::resident_kib`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Resident {
    /// Before the first client.
    pub before_kib: u64,
    /// The run's peak: `VmHWM` reset at its start, or (where it cannot
    /// be reset) the larger of the resident set when the window opened and
    /// at the end.
    pub peak_kib: u64,
}

impl Resident {
    /// The peak's growth over `connections`, KiB each.
    pub(super) fn kib_per(&self, connections: usize) -> f64 {
        self.peak_kib.saturating_sub(self.before_kib) as f64 / connections.max(1) as f64
    }
}

/// A run whose clients had not all made their first connection when its
/// duration (at least [`SETUP_AT_LEAST`]) had passed since the start.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unfinished {
    /// Clients whose first connection was made or had failed.
    pub joined: usize,
    /// How long the setup was given.
    pub after: Duration,
}

impl Unfinished {
    /// The run's error: `who` (`clients`, `users`) of `total` had not all
    /// connected within `option` (`-d`, `-t`); `fewer` names what to lower.
    pub(super) fn refusal(&self, total: usize, who: &str, option: &str, fewer: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "the {who}' first connections were not all made within {:?} ({option}, at least 2 s): {} of {total} \
             connected (or failed), so nothing was measured: give a longer {option}, or fewer {fewer}",
            self.after,
            self.joined
        )
    }
}

/// The least time the clients' first connections are given, whatever the
/// duration: a short run on a busy machine (`handshake-scaling`'s points,
/// a 300-ms `-d`) still gets its few handshakes.
pub(super) const SETUP_AT_LEAST: Duration = Duration::from_secs(2);

/// Runs `plan.clients` clients on `threads` (each speaking
/// `protocol(index)`), and returns their tallies merged. On kept
/// connections the clients' first connections must all be made within
/// the run's duration (at least [`SETUP_AT_LEAST`]), counted from the
/// start (`-d` holds for the setup too): past it the run stops there
/// ([`Ran::unfinished`]). Errors: the
/// runtime, a client task panicking, threads not on their cores. Failed
/// transactions are not errors: they are counted.
pub(super) fn run_clients<P: Protocol>(
    threads: super::threads::Threads,
    plan: Plan,
    protocol: impl Fn(usize) -> P,
) -> Result<Ran> {
    let plan = Arc::new(plan);
    let bar = progress(plan.progress, plan.requests.map(|r| (r, plan.clients)), plan.duration);
    let window = Arc::new(Window::new(plan.clients, plan.warm));
    let connecting = connecting_bar(plan.progress && plan.warm, plan.clients);
    let workers = threads.runtime.metrics().num_workers();
    let latencies = Arc::new(Latencies::new(plan.clients.min(2 * workers).max(1))?);
    let peak_reset = super::capacity::reset_peak();
    let before_kib = super::capacity::resident_kib().ok().map(|(now, _)| now);
    let setup = plan.duration.map(|d| d.max(SETUP_AT_LEAST));
    let setup_deadline = setup.map(|d| Instant::now() + d);
    let (counts, at_window) = threads.runtime.block_on(async {
        let mut tasks = Vec::with_capacity(plan.clients);
        if !plan.warm {
            window.open();
        }
        for index in 0..plan.clients {
            let (plan, bar, window, connecting) =
                (plan.clone(), bar.clone(), window.clone(), connecting.clone());
            let protocol = protocol(index);
            let recorder = Recorder::new(latencies.clone(), index);
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::new(recorder);
                drive(protocol, &plan, index, &window, &bar, &connecting, &mut tally).await;
                tally.flush();
                tally
            }));
        }
        window.open_when_ready(&connecting, setup_deadline).await;
        let at_window = super::capacity::resident_kib().ok().map(|(now, _)| now);
        let mut total = Counts::default();
        for t in tasks {
            total.add(t.await.context("a client task panicked")?);
        }
        // Interrupted before every client had connected: an empty window.
        window.open();
        anyhow::Ok((total, at_window))
    })?;
    connecting.finish_and_clear();
    let started = window.started();
    let seconds = started.elapsed().as_secs_f64();
    let resident = super::capacity::resident_kib().ok().zip(before_kib).map(|((now, hwm), before_kib)| {
        let peak_kib = if peak_reset { hwm } else { now.max(at_window.unwrap_or(0)) };
        Resident { before_kib, peak_kib }
    });
    let unfinished = window
        .expired
        .load(Relaxed)
        .then(|| Unfinished { joined: window.joined.load(Relaxed), after: setup.unwrap_or_default() });
    threads.check_pinned()?;
    let client_cpu_seconds = threads.finish(Duration::from_secs(1));
    bar.finish_and_clear();
    let latencies = Arc::try_unwrap(latencies).map_err(|_| anyhow::anyhow!("a client outlived its run"))?;
    let total = latencies.total(counts)?;
    Ok(Ran { total, started, seconds, client_cpu_seconds, resident, unfinished })
}

/// Client `index`'s run: its first connection (before the window, when
/// warm), then transactions until its count or the deadline, closed or
/// open loop; a resuming client resumes from each connection's ticket and
/// starts a new chain with a full handshake after
/// [`RESUMPTIONS_PER_CHAIN`] in a row. A signal ends the first connections
/// where they are; later, a client stops at its next transaction (one
/// under way finishes, or times out), keeping what it measured.
async fn drive<P: Protocol>(
    mut protocol: P,
    plan: &Plan,
    index: usize,
    window: &Window,
    bar: &indicatif::ProgressBar,
    connecting: &indicatif::ProgressBar,
    tally: &mut Tally,
) {
    let mut ticket: Option<Ticket> = None;
    // Resumptions in a row in this client's current chain.
    let mut chained = 0u64;
    let mut kept: Option<P::Conn> = None;
    let mut watchdog = Watchdog::new(plan.timeout);
    let mut backoff = Backoff::default();
    let mut done = 0u64;
    let warmed = async {
        if !window.warm {
            return;
        }
        let first = async {
            let mut conn = open(&mut protocol, plan, None, tally).await?;
            if !plan.new_connection {
                return Ok(Some(conn));
            }
            // The ticket's connection: one request, not counted, then ended.
            protocol.request(&mut conn, true).await?;
            ticket = protocol.end(conn, true).await?;
            Ok::<_, Failure>(None)
        };
        let failed = match watchdog.run(first).await {
            Some(Ok(conn)) => {
                kept = conn;
                None
            }
            Some(Err(f)) => Some(f),
            None => Some(Failure::exactly(
                ErrorKind::Timeout,
                anyhow::anyhow!("first connection not done in {:?}", plan.timeout),
            )),
        };
        // The first connection is the first transaction's: its failure is
        // that transaction's (one failure per transaction asked).
        if let Some(f) = failed {
            done = first_failed(f, tally, &mut backoff, plan.requests.is_some().then_some(bar));
        }
        window.join(connecting).await;
    };
    let stopped = tokio::select! {
        () = super::interrupt::wait() => true,
        () = window.abandoned() => true,
        () = warmed => false,
    };
    if stopped {
        protocol.finish(tally).await;
        return;
    }
    let start = window.started();
    let deadline = plan.duration.map(|d| start + d);
    // Open loop: this client's schedule, the clients staggered evenly.
    let interval = plan.rate.map(|r| Duration::from_secs_f64(plan.clients as f64 / r));
    let mut intended = interval.map(|i| start + i.mul_f64(index as f64 / plan.clients as f64));
    let mut free_at = start;
    loop {
        match (plan.requests, deadline) {
            (Some(r), _) if done >= r => break,
            (None, Some(d)) if Instant::now() >= d => break,
            _ if super::interrupt::stopping() || plan.stopped() => break,
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
        let began = Instant::now();
        let transaction = async {
            if kept.is_none() {
                if chained == RESUMPTIONS_PER_CHAIN {
                    // A new chain: this connection's handshake is a full one.
                    ticket = None;
                }
                let resuming = ticket.is_some();
                kept = Some(open(&mut protocol, plan, ticket.take(), tally).await?);
                chained = if resuming { chained + 1 } else { 0 };
            }
            let conn = kept.as_mut().expect("opened above");
            let exchanged = protocol.request(conn, plan.new_connection).await?;
            if (plan.new_connection || exchanged.as_ref().is_some_and(|x| x.closing))
                && let Some(conn) = kept.take()
            {
                ticket = protocol.end(conn, true).await?;
            }
            Ok::<_, Failure>(exchanged)
        };
        let result = match watchdog.run(transaction).await {
            Some(r) => r,
            None => Err(Failure::exactly(
                ErrorKind::Timeout,
                anyhow::anyhow!("{} {:?}", P::TIMED_OUT, plan.timeout),
            )),
        };
        let ended = Instant::now();
        free_at = ended;
        if plan.requests.is_some() {
            bar.inc(1);
        }
        match result {
            Ok(exchanged) => {
                backoff.reset();
                tally.counts.requests += 1;
                if let Some(x) = exchanged {
                    let span = match plan.timed {
                        Timed::Request => x.ended - origin.unwrap_or(x.began),
                        Timed::Transaction => ended - began,
                    };
                    tally.record(Which::Request, span);
                    tally.counts.bytes += x.bytes;
                }
            }
            Err(f) => {
                tally.counts.failed_requests += 1;
                backoff.after(&f);
                tally.fail(f);
                // Start again from a full handshake: the ticket may be spent.
                kept = None;
                ticket = None;
            }
        }
    }
    if let Some(conn) = kept.take()
        && let Err(f) = protocol.end(conn, false).await
    {
        tally.fail(f);
    }
    protocol.finish(tally).await;
}

/// A new connection ([`connect`]) with its protocol started.
async fn open<P: Protocol>(
    protocol: &mut P,
    plan: &Plan,
    ticket: Option<Ticket>,
    tally: &mut Tally,
) -> Result<P::Conn, Failure> {
    let o = connect(&*plan.client, plan.connect, &plan.params, plan.timeout, ticket, tally).await?;
    protocol.start(o).await
}

/// Largest latency recorded, in microseconds (longer ones are clamped).
pub(super) const MAX_LATENCY_US: u64 = 600_000_000;

/// A latency histogram of a run: 1 µs to [`MAX_LATENCY_US`], 3 significant
/// digits (172 KiB of counts each). Errors: none with these bounds.
fn histogram() -> Result<Histogram<u64>> {
    Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_US, 3).context("making a histogram")
}

/// Which latency a value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Which {
    Request = 0,
    Full = 1,
    Resumed = 2,
    ConnectHandshake = 3,
}

/// A run's latency histograms, in shards (each client records into one,
/// [`Recorder`]), merged at the end. One set of four histograms per client
/// cost 688 KiB per connection (`load -c 100000` took 23.5 GB before the
/// kernel killed it); the shards cost that per shard, a few per run.
pub(super) struct Latencies {
    shards: Box<[std::sync::Mutex<[Histogram<u64>; 4]>]>,
}

impl Latencies {
    fn new(shards: usize) -> Result<Latencies> {
        let shards = (0..shards)
            .map(|_| Ok(std::sync::Mutex::new([histogram()?, histogram()?, histogram()?, histogram()?])))
            .collect::<Result<Vec<_>>>()?;
        Ok(Latencies { shards: shards.into_boxed_slice() })
    }

    /// The shards merged, with the clients' `counts`. Errors: a shard's
    /// lock was poisoned (a client panicked while recording).
    fn total(self, counts: Counts) -> Result<Total> {
        let [mut request, mut full, mut resumed, mut connect_handshake] =
            [histogram()?, histogram()?, histogram()?, histogram()?];
        for shard in self.shards {
            let [r, f, s, c] =
                shard.into_inner().map_err(|_| anyhow::anyhow!("a latency shard is poisoned"))?;
            request.add(r).context("merging histograms")?;
            full.add(f).context("merging histograms")?;
            resumed.add(s).context("merging histograms")?;
            connect_handshake.add(c).context("merging histograms")?;
        }
        Ok(Total { request, full, resumed, connect_handshake, counts })
    }
}

/// Latencies one client keeps before it adds them to its shard (8 bytes
/// each): its shard's lock is taken once per this many.
const PENDING: usize = 64;

/// One client's latencies on their way to its shard of [`Latencies`]:
/// each value (µs, its [`Which`] in the top bits) waits in a buffer of at
/// most [`PENDING`], allocated at the first.
pub(super) struct Recorder {
    shared: Arc<Latencies>,
    shard: usize,
    pending: Vec<u64>,
}

impl Recorder {
    fn new(shared: Arc<Latencies>, index: usize) -> Recorder {
        let shard = index % shared.shards.len();
        Recorder { shared, shard, pending: Vec::new() }
    }

    fn record(&mut self, which: Which, d: Duration) {
        if self.pending.capacity() == 0 {
            self.pending.reserve_exact(PENDING);
        }
        self.pending.push((which as u64) << 48 | micros(d));
        if self.pending.len() >= PENDING {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // A poisoned lock (another client panicked recording) still holds
        // histograms: that client's panic is the run's error.
        let mut shard = self.shared.shards[self.shard].lock().unwrap_or_else(|p| p.into_inner());
        for v in self.pending.drain(..) {
            shard[(v >> 48) as usize].saturating_record(v & ((1 << 48) - 1));
        }
    }
}

/// The counts of one client, or of all.
#[derive(Default)]
pub(super) struct Counts {
    pub requests: u64,
    /// Requests (transactions) that failed; the other errors are of
    /// connections outside a request (a close at the end, say).
    pub failed_requests: u64,
    pub bytes: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
    pub examples: Vec<String>,
}

impl Counts {
    fn fail(&mut self, f: Failure) {
        *self.errors.entry(f.kind).or_default() += 1;
        if self.examples.len() < 5 {
            self.examples.push(f.to_string());
        }
    }

    fn add(&mut self, tally: Tally) {
        let other = tally.counts;
        self.requests += other.requests;
        self.failed_requests += other.failed_requests;
        self.bytes += other.bytes;
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
        for e in other.examples {
            if self.examples.len() < 5 {
                self.examples.push(e);
            }
        }
    }
}

/// One client's tallies: its counts, and its latencies on their way to
/// the run's histograms ([`Recorder`]). About a hundred bytes, and the
/// latencies' buffer: what a client keeps of its measuring.
pub(super) struct Tally {
    counts: Counts,
    latencies: Recorder,
}

impl Tally {
    fn new(latencies: Recorder) -> Tally {
        Tally { counts: Counts::default(), latencies }
    }

    pub(super) fn fail(&mut self, f: Failure) {
        self.counts.fail(f);
    }

    pub(super) fn record(&mut self, which: Which, d: Duration) {
        self.latencies.record(which, d);
    }

    fn flush(&mut self) {
        self.latencies.flush();
    }
}

/// Every client's tallies merged: the report's figures.
pub(super) struct Total {
    /// Request (or transaction) latency.
    pub request: Histogram<u64>,
    pub full: Histogram<u64>,
    pub resumed: Histogram<u64>,
    pub connect_handshake: Histogram<u64>,
    pub counts: Counts,
}

/// `d` in µs, within the histograms' bounds (1 µs to [`MAX_LATENCY_US`],
/// past every timeout): `saturating_record` then records it exactly, and
/// no record can fail.
pub(super) fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, MAX_LATENCY_US)
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
    /// Clients whose first connection was made or failed.
    joined: AtomicUsize,
    /// The setup was given up ([`Window::open_when_ready`]'s deadline):
    /// the clients stop where they are.
    expired: AtomicBool,
    given_up: tokio::sync::Notify,
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
            joined: AtomicUsize::new(0),
            expired: AtomicBool::new(false),
            given_up: tokio::sync::Notify::new(),
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
        self.joined.fetch_add(1, Relaxed);
        self.ready.wait().await;
        self.go.wait().await;
    }

    /// The run's side of [`Window::join`] (when `warm`): once every client
    /// has joined, the window opens and they go. A signal ends the wait
    /// (the clients see it too), and so does `deadline` when it comes
    /// first: the setup is given up ([`Window::abandoned`]).
    pub(super) async fn open_when_ready(
        &self,
        connecting: &indicatif::ProgressBar,
        deadline: Option<Instant>,
    ) {
        if !self.warm {
            return;
        }
        let expired = async {
            match deadline {
                Some(d) => {
                    super::interrupt::sleep_until(d).await;
                }
                None => std::future::pending().await,
            }
        };
        let all = tokio::select! {
            () = super::interrupt::wait() => false,
            () = expired => {
                if !super::interrupt::stopping() {
                    self.expired.store(true, Relaxed);
                    self.given_up.notify_waiters();
                }
                false
            }
            _ = self.ready.wait() => true,
        };
        if all {
            connecting.finish_and_clear();
            self.open();
            tokio::select! {
                () = super::interrupt::wait() => {}
                _ = self.go.wait() => {}
            }
        }
    }

    /// Resolves once the setup is given up ([`Window::open_when_ready`]).
    pub(super) async fn abandoned(&self) {
        loop {
            let notified = self.given_up.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.expired.load(Relaxed) {
                return;
            }
            notified.await;
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

/// Counts `f`, a client's first connection failing before the window, as
/// its first request's failure (one failure per request asked), its
/// progress on `bar` (requests counted); returns the requests done: 1.
pub(super) fn first_failed(
    f: Failure,
    tally: &mut Tally,
    backoff: &mut Backoff,
    bar: Option<&indicatif::ProgressBar>,
) -> u64 {
    tally.counts.failed_requests += 1;
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
        tally.record(if n.resumed { Which::Resumed } else { Which::Full }, end - handshake_start);
        tally.record(Which::ConnectHandshake, end - start);
    }
    Ok(Open { stream, ticket_due: resumes && negotiated.is_some() })
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

/// Closes a connection as a well-behaved client does: its close_notify
/// (no FIN: [`super::tcp`]), then waits for the server's close_notify and
/// its FIN (on TCP where the library cannot read after its close_notify,
/// [`Stream::reads_after_close_notify`]), so that the server, which closed first, holds the TCP
/// TIME_WAIT and the client's port is free again once it drops the
/// connection. Plaintext TCP: FIN, then the server's (the client holds the
/// TIME_WAIT).
///
/// `server_ends`: the server said it ends the connection after its
/// complete response (HTTP's `Connection: close`). Then a reset met by
/// this side's close_notify is the end, as it is in place of the server's
/// FIN ([`Tcp::until_fin`](super::tcp::Tcp::until_fin)): the server closed
/// first, and its socket may be gone before the client's goodbye arrives.
/// A late segment then draws a reset: Linux destroys a closed socket at
/// once, instead of keeping it in TIME_WAIT, when its TIME_WAIT table is
/// full (`net.ipv4.tcp_max_tw_buckets`; counted as
/// `TcpExtTCPTimeWaitOverflow`), as a load of short connections on one
/// host fills it. Nothing the client asked for is lost: the response was
/// read and checked whole (RFC 9112 section 9.8, incomplete close).
pub(super) async fn close(
    mut stream: Box<dyn Stream>,
    limit: Duration,
    server_ends: bool,
) -> Result<(), Failure> {
    let closing = async {
        match stream.shutdown().await {
            Err(e) if server_ends && gone(&e) => return Ok(()),
            r => r.context("close: sending close_notify")?,
        }
        if !stream.reads_after_close_notify() {
            let tcp = stream.tcp().context("close: a TLS stream without its TCP stream")?;
            return tcp
                .until_alert_then_fin()
                .await
                .context("close: waiting for the server's close_notify and FIN");
        }
        let mut rest = [0u8; 1];
        let n = stream.read(&mut rest).await.context("close: reading the server's close_notify")?;
        if n != 0 {
            return Err(anyhow::anyhow!("close: the server sent data after the response"));
        }
        if let Some(tcp) = stream.tcp() {
            tcp.until_fin().await.context("close: waiting for the server's FIN")?;
        }
        Ok(())
    };
    match timeout(limit, closing).await {
        Err(_) => {
            Err(Failure::exactly(ErrorKind::Timeout, anyhow::anyhow!("close: the server did not close")))
        }
        Ok(r) => r.map_err(|e| Failure::new(e, ErrorKind::Io)),
    }
}

/// Whether a write met the peer's reset: `ECONNRESET`, or `EPIPE` (Linux's
/// error for a reset that came after the peer's FIN).
fn gone(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe)
}
