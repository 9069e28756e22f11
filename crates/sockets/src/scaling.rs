//! Handshake rates as the server's threads grow: for 1 to N server threads,
//! full and resumed handshakes per second (each on a new connection that
//! carries one 1-byte request, so that a resumed one has its ticket), with
//! latency percentiles, the server's CPU per handshake, the client's CPU
//! share, and which end limited the rate.
//!
//! Pinning: with at least 2n cores the server's n threads run on the first
//! n cores and the client on the others; with fewer, the server is pinned
//! and the client shares all cores (said in each row).

use std::{net::SocketAddr, time::Duration};

use anyhow::{Result, bail};

use super::{
    Library,
    load::{self, LoadOptions},
    serve::{self, ServeOptions},
    threads::allowed_cores,
};
use tls_bench_harness::params::{HandshakeKind, Params};
use tls_bench_results::sockets::{Point, Scaling};

/// What the scaling run does.
#[derive(Clone, Debug)]
pub struct ScalingOptions {
    /// The full handshakes' parameters (server authentication or mTLS);
    /// the resumed ones use the same with [`HandshakeKind::Resumption`].
    pub params: Params,
    /// Server threads from 1 to this.
    pub max_threads: usize,
    /// Clients at once.
    pub connections: usize,
    /// Measured time per point.
    pub duration: Duration,
}

/// The end that limited a run: the client when its threads were 90% busy
/// or more, else the server, else (when `shared` holds the share of the
/// cores both ends share) the shared cores, else neither.
pub fn limited_by(client_share: f64, server_share: f64, shared: Option<f64>) -> &'static str {
    if client_share >= 0.9 {
        "client"
    } else if server_share >= 0.9 {
        "server"
    } else if shared.is_some_and(|s| s >= 0.9) {
        "shared cores"
    } else {
        "neither"
    }
}

/// Runs `library` (server and client) over server threads 1 to
/// `max_threads`, full then resumed handshakes at each. Errors: bad
/// options, the library cannot do the parameters, a server that cannot
/// start, or any failed handshake (named by kind).
pub fn run(library: &dyn Library, options: &ScalingOptions) -> Result<Scaling> {
    if library.plaintext() {
        bail!("plaintext TCP has no handshake to scale");
    }
    if options.params.kind == HandshakeKind::Resumption {
        bail!("give the full handshake's kind (server-auth or mTLS): resumption is measured beside it");
    }
    let cores = allowed_cores()?;
    if options.max_threads == 0 || options.max_threads > cores.len() {
        bail!("server threads must be from 1 to the {} cores this process may use", cores.len());
    }
    let mut points = Vec::new();
    for n in 1..=options.max_threads {
        let server_cores = cores[..n].to_vec();
        let client_cores = if cores.len() >= 2 * n { cores[n..].to_vec() } else { Vec::new() };
        let client_threads = if client_cores.is_empty() { cores.len() } else { client_cores.len() };
        for (name, kind) in [("full", options.params.kind), ("resumed", HandshakeKind::Resumption)] {
            let params = Params { kind, ..options.params };
            let serve_options = ServeOptions {
                params,
                listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                threads: n,
                handshake_timeout: Duration::from_secs(10),
                idle_timeout: Duration::from_secs(10),
                max_connections: 100_000,
                cores: server_cores.clone(),
            };
            let running = serve::start(library, &serve_options)?;
            let load_options = LoadOptions {
                params,
                connect: running.addr(),
                connections: options.connections,
                requests: None,
                duration: Some(options.duration),
                message: 1,
                new_connection: true,
                rate: None,
                threads: client_threads,
                cores: client_cores.clone(),
                timeout: Duration::from_secs(10),
                progress: false,
            };
            let report = load::run(library, &load_options);
            let summary = running.stop()?;
            let report = report?;
            if let Some(first) = report.error_examples.first() {
                bail!("{} {name} handshakes, {n} server threads: {first}", library.name());
            }
            let (count, latency) = match name {
                "full" => (report.handshakes_full, &report.full_handshake_latency),
                _ => (report.handshakes_resumed, &report.resumed_handshake_latency),
            };
            let handshakes_per_s = count as f64 / report.seconds;
            let server_cpu_share = summary.cpu_seconds / (report.seconds * n as f64);
            points.push(Point {
                handshake: name.to_string(),
                server_threads: n,
                server_cores: server_cores.clone(),
                client_cores: client_cores.clone(),
                client_threads,
                handshakes_per_s,
                per_thread: handshakes_per_s / n as f64,
                p50_us: latency.p50_us,
                p99_us: latency.p99_us,
                server_cpu_us_per_handshake: summary.cpu_us_per_handshake,
                server_cpu_share,
                client_cpu_share: report.client_cpu_share,
                limited_by: limited_by(
                    report.client_cpu_share,
                    server_cpu_share,
                    client_cores.is_empty().then(|| {
                        (summary.cpu_seconds + report.client_cpu_seconds)
                            / (report.seconds * cores.len() as f64)
                    }),
                )
                .to_string(),
            });
        }
    }
    Ok(Scaling {
        library: library.name(),
        parameters: options.params.to_string(),
        cores: cores.len(),
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::limited_by;

    #[test]
    fn the_busy_end_is_named_the_client_first() {
        assert_eq!(limited_by(0.95, 0.95, None), "client");
        assert_eq!(limited_by(0.5, 0.92, None), "server");
        assert_eq!(limited_by(0.5, 0.5, Some(0.95)), "shared cores");
        assert_eq!(limited_by(0.5, 0.5, None), "neither");
    }
}
