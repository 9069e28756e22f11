//! Misbehaving clients, run against a server while good load goes on:
//! each kind of [`Attack`] opens connections that a server must reject or
//! time out, again and again until its deadline, bounded in count and
//! time, against one address (127.0.0.1 or a test's own namespaces). The
//! attacker side records how each attempt ended; the server's summary
//! counts what it saw by kind ([`super::serve::Summary`]).
//!
//! A ClientHello to replay or corrupt is the library client's own, captured
//! from a listener of ours ([`client_hello`]).

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    os::fd::AsRawFd,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    time::timeout,
};

use super::Client;
use tls_bench_harness::params::CertChain;

/// A kind of misbehaving client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attack {
    /// Plain text (an HTTP request) instead of a ClientHello.
    Garbage,
    /// A ClientHello, then silence: the handshake timeout's work.
    HelloThenSilence,
    /// A ClientHello with bytes of its body overwritten: a decode error.
    MalformedHello,
    /// A record header announcing more than TLS allows (2^14 + 2048 + 1
    /// bytes, RFC 8446 section 5.2): record_overflow.
    OversizedRecord,
    /// A ClientHello, the server's first bytes read, then a TCP reset.
    ResetMidHandshake,
    /// A handshake, half a request, then a TCP reset.
    ResetMidRequest,
    /// A handshake, then a request header sent one byte every interval
    /// (slowloris): the idle (header read) timeout's work.
    Slowloris,
    /// A ClientHello naming another host in SNI (`wrong.invalid`,
    /// [`super::https::CLIENT_WRONG_NAME`]): the server serves one name.
    WrongSni,
    /// For mTLS servers: a client that presents no certificate.
    MissingClientCert,
    /// For mTLS servers: a client that presents a certificate of another
    /// CA ([`another_ca`]), trusting the server's.
    UntrustedClientCert,
    /// Connections opened at once beyond the server's limit, held silent.
    Flood,
}

impl Attack {
    /// Every kind.
    pub const ALL: [Attack; 11] = [
        Attack::Garbage,
        Attack::HelloThenSilence,
        Attack::MalformedHello,
        Attack::OversizedRecord,
        Attack::ResetMidHandshake,
        Attack::ResetMidRequest,
        Attack::Slowloris,
        Attack::WrongSni,
        Attack::MissingClientCert,
        Attack::UntrustedClientCert,
        Attack::Flood,
    ];

    /// Its name in reports (`hello-then-silence`).
    pub fn name(self) -> &'static str {
        match self {
            Attack::Garbage => "garbage",
            Attack::HelloThenSilence => "hello-then-silence",
            Attack::MalformedHello => "malformed-hello",
            Attack::OversizedRecord => "oversized-record",
            Attack::ResetMidHandshake => "reset-mid-handshake",
            Attack::ResetMidRequest => "reset-mid-request",
            Attack::Slowloris => "slowloris",
            Attack::WrongSni => "wrong-sni",
            Attack::MissingClientCert => "missing-client-cert",
            Attack::UntrustedClientCert => "untrusted-client-cert",
            Attack::Flood => "flood",
        }
    }

    /// Whether the kind needs an mTLS server.
    pub fn needs_mtls(self) -> bool {
        matches!(self, Attack::MissingClientCert | Attack::UntrustedClientCert)
    }
}

/// Whether `head`, the first bytes of a server's answer to an unfinished
/// request, is an HTTP/1.1 client-error status (`HTTP/1.1 4xx`: 400, 408),
/// a refusal of the request.
fn refusal(head: &[u8]) -> bool {
    head.strip_prefix(b"HTTP/1.1 4")
        .is_some_and(|rest| rest.len() >= 2 && rest[..2].iter().all(u8::is_ascii_digit))
}

/// A chain of the same key type as `chain` but of another root CA (each
/// chain has its own, `certs/`): its client certificate is one `chain`'s
/// server must not trust.
pub fn another_ca(chain: CertChain) -> CertChain {
    match chain {
        CertChain::Rsa2048 => CertChain::Rsa3072,
        CertChain::Rsa3072 | CertChain::Rsa4096 => CertChain::Rsa2048,
        CertChain::EcdsaP256 => CertChain::EcdsaP384,
        CertChain::EcdsaP384 => CertChain::EcdsaP256,
    }
}

/// How an attacker's attempts ended: the saved shape, which
/// `report results` reads too.
pub use tls_bench_results::https::AttackCount;

/// The first record `client` sends (its ClientHello), captured from a
/// listener of ours on 127.0.0.1. Errors: no connection or no record in
/// 5 s.
pub async fn client_hello(client: Arc<dyn Client>) -> Result<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").await.context("binding the capture listener")?;
    let addr = listener.local_addr()?;
    let connecting = tokio::spawn(async move {
        if let Ok(tcp) = TcpStream::connect(addr).await {
            let _ = client.connect(tcp, None).await;
        }
    });
    let captured = timeout(Duration::from_secs(5), async {
        let (mut peer, _) = listener.accept().await?;
        let mut record = vec![0u8; 5];
        peer.read_exact(&mut record).await?;
        let len = u16::from_be_bytes([record[3], record[4]]) as usize;
        record.resize(5 + len, 0);
        peer.read_exact(&mut record[5..]).await?;
        std::io::Result::Ok(record)
    })
    .await;
    connecting.abort();
    match captured {
        Err(_) => bail!("no ClientHello captured in 5 s"),
        Ok(r) => {
            let record = r.context("capturing the ClientHello")?;
            if record[0] != 0x16 {
                bail!("the first record captured is of type {}, not a handshake (22)", record[0]);
            }
            Ok(record)
        }
    }
}

/// Sets SO_LINGER to 0: the close that follows sends a TCP reset.
fn reset_on_close(tcp: &TcpStream) -> Result<()> {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: a valid socket and a linger struct of the size given.
    let r = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if r != 0 {
        bail!("setsockopt(SO_LINGER): {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// What one attacker does.
#[derive(Clone)]
pub struct Attacker {
    /// The kind.
    pub attack: Attack,
    /// The server.
    pub addr: SocketAddr,
    /// The client (for the kinds that handshake; a server-auth client for
    /// [`Attack::MissingClientCert`], one naming another host for
    /// [`Attack::WrongSni`]).
    pub client: Arc<dyn Client>,
    /// A ClientHello of that client ([`client_hello`]).
    pub hello: Arc<Vec<u8>>,
    /// Slowloris: a byte every this long.
    pub interval: Duration,
    /// Longest one attempt is held open before the attacker gives up on
    /// the server closing it.
    pub hold: Duration,
    /// Flood: connections opened at once.
    pub flood: usize,
}

/// How one attempt ended.
enum Ended {
    Rejected(Duration),
    Dropped,
    StillOpen,
}

/// Reads until the server closes (or resets), at most `hold`.
async fn until_closed(tcp: &mut TcpStream, hold: Duration, started: Instant) -> Ended {
    let mut buf = [0u8; 4096];
    let closing = async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    match timeout(hold, closing).await {
        Ok(()) => Ended::Rejected(started.elapsed()),
        Err(_) => Ended::StillOpen,
    }
}

impl Attacker {
    /// Attempts until `deadline` (one at a time; a flood is one attempt of
    /// [`Attacker::flood`] connections), at most `max_attempts`, or until a
    /// signal ([`super::interrupt`]) once the attempt under way ends.
    pub async fn run(&self, deadline: Instant, max_attempts: u64) -> AttackCount {
        let mut count = AttackCount::default();
        while Instant::now() < deadline
            && count.attempts < max_attempts
            && super::interrupt::requested().is_none()
        {
            if self.attack == Attack::Flood {
                count.add(&self.flood().await);
                continue;
            }
            count.attempts += 1;
            match self.once().await {
                Err(_) => count.connect_failed += 1,
                Ok(Ended::Rejected(t)) => {
                    count.rejected += 1;
                    count.longest_close_ms = count.longest_close_ms.max(t.as_secs_f64() * 1e3);
                }
                Ok(Ended::Dropped) => count.dropped += 1,
                Ok(Ended::StillOpen) => count.still_open += 1,
            }
        }
        count
    }

    async fn once(&self) -> Result<Ended> {
        let started = Instant::now();
        let mut tcp =
            timeout(self.hold, TcpStream::connect(self.addr)).await.context("connect timed out")??;
        match self.attack {
            Attack::Garbage => {
                tcp.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").await?;
                Ok(until_closed(&mut tcp, self.hold, started).await)
            }
            Attack::HelloThenSilence => {
                tcp.write_all(&self.hello).await?;
                Ok(until_closed(&mut tcp, self.hold, started).await)
            }
            Attack::MalformedHello => {
                let mut hello = self.hello.to_vec();
                // Past the record and handshake headers and the version:
                // the random, session id and suites become junk lengths.
                for b in hello.iter_mut().skip(5 + 4 + 2 + 32) {
                    *b = 0xff;
                }
                tcp.write_all(&hello).await?;
                Ok(until_closed(&mut tcp, self.hold, started).await)
            }
            Attack::OversizedRecord => {
                let len: u16 = (1 << 14) + 2048 + 1;
                let mut record = vec![0x16, 0x03, 0x01];
                record.extend_from_slice(&len.to_be_bytes());
                record.extend(std::iter::repeat_n(0u8, 512));
                tcp.write_all(&record).await?;
                Ok(until_closed(&mut tcp, self.hold, started).await)
            }
            Attack::ResetMidHandshake => {
                reset_on_close(&tcp)?;
                tcp.write_all(&self.hello).await?;
                let mut first = [0u8; 1];
                match timeout(self.hold, tcp.read(&mut first)).await {
                    Ok(Ok(1)) => Ok(Ended::Dropped),
                    Ok(_) => Ok(Ended::Rejected(started.elapsed())),
                    Err(_) => Ok(Ended::StillOpen),
                }
            }
            Attack::WrongSni => match timeout(self.hold, self.client.connect(tcp, None)).await {
                Ok(Ok(_)) => bail!("the server accepted a ClientHello naming another host"),
                Ok(Err(_)) => Ok(Ended::Rejected(started.elapsed())),
                Err(_) => Ok(Ended::StillOpen),
            },
            Attack::ResetMidRequest
            | Attack::Slowloris
            | Attack::MissingClientCert
            | Attack::UntrustedClientCert => {
                if self.attack == Attack::ResetMidRequest {
                    reset_on_close(&tcp)?;
                }
                let mut stream = match timeout(self.hold, self.client.connect(tcp, None)).await {
                    Ok(Ok(s)) => s,
                    // Refused in the handshake (the missing certificate in
                    // TLS 1.2), or no handshake in time.
                    Ok(Err(_)) => return Ok(Ended::Rejected(started.elapsed())),
                    Err(_) => return Ok(Ended::StillOpen),
                };
                let request = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
                match self.attack {
                    Attack::ResetMidRequest => {
                        stream.write_all(&request[..8]).await?;
                        stream.flush().await?;
                        Ok(Ended::Dropped)
                    }
                    Attack::MissingClientCert | Attack::UntrustedClientCert => {
                        // TLS 1.3: the client is done before the server
                        // reads its Certificate (empty, or of another CA);
                        // the refusal comes on the first read.
                        // A server that refused at once leaves nothing to
                        // write to: refused as well.
                        if stream.write_all(request).await.and(stream.flush().await).is_err() {
                            return Ok(Ended::Rejected(started.elapsed()));
                        }
                        let mut buf = [0u8; 1024];
                        match timeout(self.hold, stream.read(&mut buf)).await {
                            Ok(Ok(0) | Err(_)) => Ok(Ended::Rejected(started.elapsed())),
                            Ok(Ok(_)) => bail!("the server answered a client {}", self.attack.name()),
                            Err(_) => Ok(Ended::StillOpen),
                        }
                    }
                    _ => {
                        for &b in request.iter() {
                            if stream.write_all(&[b]).await.and(stream.flush().await).is_err() {
                                return Ok(Ended::Rejected(started.elapsed()));
                            }
                            if started.elapsed() > self.hold {
                                return Ok(Ended::StillOpen);
                            }
                            let mut probe = [0u8; 12];
                            if let Ok(r) = timeout(self.interval, stream.read(&mut probe)).await {
                                return match r {
                                    Ok(0) | Err(_) => Ok(Ended::Rejected(started.elapsed())),
                                    // An error status for the unfinished
                                    // header (Go's net/http: 400) refuses it
                                    // too.
                                    Ok(n) if refusal(&probe[..n]) => Ok(Ended::Rejected(started.elapsed())),
                                    Ok(_) => bail!("the server answered a slowloris request"),
                                };
                            }
                        }
                        Ok(Ended::StillOpen)
                    }
                }
            }
            Attack::Flood => unreachable!("floods run in Attacker::flood"),
        }
    }

    /// [`Attacker::flood`] connections at once, each held silent until the
    /// server closes it (its limit, or its handshake timeout) or `hold`.
    async fn flood(&self) -> AttackCount {
        let mut tasks = Vec::new();
        for _ in 0..self.flood {
            let (addr, hold) = (self.addr, self.hold);
            tasks.push(tokio::spawn(async move {
                let started = Instant::now();
                match timeout(hold, TcpStream::connect(addr)).await {
                    Ok(Ok(mut tcp)) => Some(until_closed(&mut tcp, hold, started).await),
                    _ => None,
                }
            }));
        }
        let mut count = AttackCount { attempts: self.flood as u64, ..AttackCount::default() };
        for t in tasks {
            match t.await.ok().flatten() {
                None => count.connect_failed += 1,
                Some(Ended::Rejected(t)) => {
                    count.rejected += 1;
                    count.longest_close_ms = count.longest_close_ms.max(t.as_secs_f64() * 1e3);
                }
                Some(Ended::Dropped) => count.dropped += 1,
                Some(Ended::StillOpen) => count.still_open += 1,
            }
        }
        count
    }
}

/// Each attack's counts, by kind.
pub type AttackCounts = BTreeMap<Attack, AttackCount>;

/// What the attackers do.
#[derive(Clone, Debug)]
pub struct AttackOptions {
    /// The kinds, each run by `attackers` attackers at once.
    pub kinds: Vec<Attack>,
    /// Attackers per kind.
    pub attackers: usize,
    /// How long they attack.
    pub duration: Duration,
    /// Slowloris: a byte every this long.
    pub interval: Duration,
    /// Longest one attempt is held.
    pub hold: Duration,
    /// Flood: connections at once.
    pub flood: usize,
    /// Attempts per attacker at most.
    pub max_attempts: u64,
}

/// The clients the attackers handshake with, all of the server's library
/// and parameter set.
#[derive(Clone)]
pub struct AttackClients {
    /// A good client: its handshakes and its ClientHello.
    pub good: Arc<dyn Client>,
    /// A client without a certificate, for [`Attack::MissingClientCert`]
    /// (the kind is left out when `None`: the server is not mTLS).
    pub no_cert: Option<Arc<dyn Client>>,
    /// A client presenting another CA's certificate, for
    /// [`Attack::UntrustedClientCert`] (left out when `None`, as above).
    pub untrusted: Option<Arc<dyn Client>>,
    /// A client naming another host, for [`Attack::WrongSni`].
    pub wrong_name: Arc<dyn Client>,
}

impl AttackClients {
    /// The clients of `library` for a server of `params` (HTTPS's ALPN;
    /// [`super::https::CLIENT`]). Errors: the library cannot make one.
    pub fn of(
        library: &dyn super::Library,
        params: &tls_bench_harness::params::Params,
    ) -> Result<AttackClients> {
        use super::{
            Extensions,
            https::{CLIENT, CLIENT_WRONG_NAME},
        };
        use tls_bench_harness::params::HandshakeKind;
        let named = |e: tls_bench_harness::error::ConfigureError| anyhow::anyhow!("{}: {e}", library.name());
        let (no_cert, untrusted) = if params.kind == HandshakeKind::MutualAuth {
            let p = tls_bench_harness::params::Params { kind: HandshakeKind::ServerAuth, ..*params };
            let foreign = Extensions { client_identity: Some(another_ca(params.cert)), ..CLIENT };
            (
                Some(library.client(&p, &CLIENT).map_err(named)?),
                Some(library.client(params, &foreign).map_err(named)?),
            )
        } else {
            (None, None)
        };
        Ok(AttackClients {
            good: library.client(params, &CLIENT).map_err(named)?,
            no_cert,
            untrusted,
            wrong_name: library.client(params, &CLIENT_WRONG_NAME).map_err(named)?,
        })
    }
}

/// Runs `options`' attackers against `addr` on a runtime of their own (one
/// thread) until their duration is over, with `clients`. Errors: the
/// runtime cannot start, the ClientHello cannot be captured.
pub fn run_attackers(
    addr: SocketAddr,
    clients: AttackClients,
    options: &AttackOptions,
) -> Result<AttackCounts> {
    let AttackClients { good: client, no_cert: no_cert_client, untrusted, wrong_name } = clients;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the attackers' runtime")?;
    runtime.block_on(async {
        let hello = Arc::new(client_hello(client.clone()).await?);
        let deadline = Instant::now() + options.duration;
        let mut tasks = Vec::new();
        for &attack in &options.kinds {
            let client = match (attack, &no_cert_client) {
                (Attack::MissingClientCert, Some(c)) => c.clone(),
                (Attack::MissingClientCert, None) => continue,
                (Attack::UntrustedClientCert, _) => match &untrusted {
                    Some(c) => c.clone(),
                    None => continue,
                },
                (Attack::WrongSni, _) => wrong_name.clone(),
                _ => client.clone(),
            };
            for _ in 0..options.attackers {
                let attacker = Attacker {
                    attack,
                    addr,
                    client: client.clone(),
                    hello: hello.clone(),
                    interval: options.interval,
                    hold: options.hold,
                    flood: options.flood,
                };
                let max = options.max_attempts;
                tasks.push((attack, tokio::spawn(async move { attacker.run(deadline, max).await })));
            }
        }
        let mut counts = AttackCounts::new();
        for (attack, task) in tasks {
            let count = task.await.context("an attacker panicked")?;
            counts.entry(attack).or_default().add(&count);
        }
        Ok(counts)
    })
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn a_client_error_status_is_a_refusal_and_a_success_is_not() {
        assert!(refusal(b"HTTP/1.1 400"));
        assert!(refusal(b"HTTP/1.1 408 Request Timeout"));
        assert!(!refusal(b"HTTP/1.1 200"));
        assert!(!refusal(b"HTTP/1.1 4"));
        assert!(!refusal(b"garbage"));
    }
}
