//! The yardstick for `load`'s own cost: a plain tokio TCP echo pair written
//! without tls-bench (a server task per connection echoing what it reads;
//! C clients each writing a message of S bytes and reading it back), and
//! tls-bench's `load` against its `serve`, both plaintext TCP on
//! 127.0.0.1, the same C, S, threads and window (from all clients
//! connected), server and client each on a runtime of its own as the two
//! processes of `serve` and `load` are. They take turns for ROUNDS rounds of SECONDS each (the
//! order swapped every round), so a slow spell of the machine lands on
//! both; prints each round's MB/s each way (10^6 B/s) on stderr, then the
//! medians and the median of the per-round ratios on stdout
//! (`scripts/record-sockets.sh` commits that as `baseline.txt`).
//!
//! cargo run --release --example tokio_echo_pair -- C S SECONDS ROUNDS

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use tls_bench_harness::params::Params;
use tls_bench_sockets::{
    self as sockets,
    cli::cores,
    load::{self, LoadOptions},
    serve::{self, ServeOptions},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::Barrier,
};

const USAGE: &str = "usage: cargo run --release --example tokio_echo_pair -- C S SECONDS ROUNDS";

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let numbers: Vec<u64> = args.iter().filter_map(|a| a.parse().ok().filter(|&n: &u64| n > 0)).collect();
    let [clients, size, seconds, rounds] = numbers[..] else {
        eprintln!(
            "error: {args:?}: give four whole numbers above 0: connections, message bytes, seconds, rounds"
        );
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    if numbers.len() != args.len() || clients > 1000 || size > 1 << 20 || seconds > 60 || rounds > 100 {
        eprintln!(
            "error: {args:?}: connections 1 to 1000, bytes 1 to 1048576, seconds 1 to 60, rounds 1 to 100"
        );
        std::process::exit(2);
    }
    let (clients, size, window) = (clients as usize, size as usize, Duration::from_secs(seconds));
    let plaintext = sockets::find(sockets::PLAINTEXT)?;
    let server = serve::start(
        &*plaintext,
        &ServeOptions {
            params: Params::default(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            threads: cores(),
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            cores: Vec::new(),
        },
    )?;
    let options = LoadOptions {
        params: Params::default(),
        connect: server.addr(),
        connections: clients,
        requests: None,
        duration: Some(window),
        message: size,
        new_connection: false,
        rate: None,
        threads: cores(),
        cores: Vec::new(),
        timeout: Duration::from_secs(10),
        progress: false,
    };
    let (mut pair, mut tls_bench, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let load_run = || -> Result<f64> {
            let report = load::run(&*plaintext, &options)?;
            if let Some(first) = report.error_examples.first() {
                bail!("load failed: {first}");
            }
            Ok(report.send_mb_per_s)
        };
        let (p, l) = if round % 2 == 0 {
            let p = plain_pair(clients, size, window)?;
            (p, load_run()?)
        } else {
            let l = load_run()?;
            (plain_pair(clients, size, window)?, l)
        };
        eprintln!(
            "round {}: plain tokio pair {p:.1} MB/s, load against serve {l:.1} MB/s, ratio {:.3}",
            round + 1,
            l / p
        );
        pair.push(p);
        tls_bench.push(l);
        ratios.push(l / p);
    }
    let summary = server.stop()?;
    if !summary.errors.is_empty() {
        bail!("serve counted failures: {:?} {:?}", summary.errors, summary.error_examples);
    }
    let (low, high) = (
        ratios.iter().copied().fold(f64::INFINITY, f64::min),
        ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    println!(
        "plaintext TCP on 127.0.0.1, {clients} connections, {size} B messages, {rounds} rounds of {seconds} s each, taking turns"
    );
    println!(
        "plain tokio echo pair (examples/tokio_echo_pair.rs): median {:.1} MB/s each way",
        median(&mut pair)
    );
    println!("load against serve: median {:.1} MB/s each way", median(&mut tls_bench));
    println!(
        "load / plain pair: median of the rounds' ratios {:.3} (from {low:.3} to {high:.3})",
        median(&mut ratios)
    );
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// One run of the plain pair: MB/s each way over `window` from all
/// clients connected. Errors: any socket error, or bytes echoed wrong.
fn plain_pair(clients: usize, size: usize, window: Duration) -> Result<f64> {
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores())
            .enable_all()
            .build()
            .context("a runtime")
    };
    // Server and clients on runtimes of their own, as `serve` and `load`
    // are (two processes): tasks of one runtime would hand each other
    // wake-ups on one thread, which two processes cannot.
    let (server_runtime, client_runtime) = (runtime()?, runtime()?);
    let listener = server_runtime.block_on(TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    client_runtime.block_on(async move {
        let server = server_runtime.spawn(async move {
            loop {
                let Ok((mut s, _)) = listener.accept().await else { return };
                tokio::spawn(async move {
                    let _ = s.set_nodelay(true);
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let start = Arc::new(Barrier::new(clients + 1));
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let start = start.clone();
            tasks.push(tokio::spawn(async move {
                let s = TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                let (mut r, mut w) = s.into_split();
                let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
                let mut back = vec![0u8; size];
                start.wait().await;
                let end = Instant::now() + window;
                let mut moved = 0u64;
                while Instant::now() < end {
                    back.fill(0xff);
                    let (wrote, read) = tokio::join!(w.write_all(&data), r.read_exact(&mut back));
                    wrote?;
                    read?;
                    anyhow::ensure!(back == data, "echoed bytes differ");
                    moved += size as u64;
                }
                anyhow::Ok(moved)
            }));
        }
        start.wait().await;
        let began = Instant::now();
        let mut total = 0;
        for t in tasks {
            total += t.await??;
        }
        let took = began.elapsed();
        server.abort();
        server_runtime.shutdown_background();
        Ok(total as f64 / took.as_secs_f64() / 1e6)
    })
}
