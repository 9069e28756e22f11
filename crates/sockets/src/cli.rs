//! The options the socket tools share: the parameter set by its names
//! (those of the benchmark ids), durations, JSON outputs, and the whole
//! command line of a server (`serve`, `https-serve`).

use std::{net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use anyhow::{Context, Result, anyhow, bail};

use super::serve::{Protocol, ServeOptions, start_with};
use tls_bench_harness::{
    error::ConfigureError,
    params::{CertChain, CipherSuite, HandshakeKind, KxGroup, Params},
};
use tls_bench_results::outdir::ensure_dir;

/// The parameter set, by the names of the benchmark ids.
#[derive(clap::Args, Clone, Debug)]
pub struct ParamsArgs {
    /// Handshake kind: server-auth, mTLS, resumption.
    #[arg(long, default_value = "server-auth")]
    pub kind: String,
    /// Cipher suite, IANA name (it fixes the TLS version), e.g.
    /// TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256.
    #[arg(long, default_value = "TLS_AES_128_GCM_SHA256")]
    pub suite: String,
    /// Key exchange group, IANA name: x25519, secp256r1, secp384r1,
    /// X25519MLKEM768.
    #[arg(long, default_value = "x25519")]
    pub group: String,
    /// Certificate chain: ECDSA-P256, ECDSA-P384, RSA-2048, RSA-3072,
    /// RSA-4096.
    #[arg(long, default_value = "ECDSA-P256")]
    pub cert: String,
}

/// The value of `all` whose name (its `Display`) is `given`, any case.
/// Errors: none is, with the valid names.
fn named<T: Copy + std::fmt::Display>(what: &str, given: &str, all: &[T]) -> Result<T> {
    all.iter().copied().find(|v| v.to_string().eq_ignore_ascii_case(given)).ok_or_else(|| {
        let valid: Vec<String> = all.iter().map(|v| v.to_string()).collect();
        anyhow!("unknown {what} {given:?}; valid: {}", valid.join(", "))
    })
}

impl ParamsArgs {
    /// The parameter set (TLS over TCP). Errors: an unknown name (listing
    /// the valid ones), or a combination no TLS version allows (a suite
    /// for another key type than the chain's, a group the version lacks).
    pub fn params(&self) -> Result<Params> {
        let params = Params {
            kind: named("handshake kind", &self.kind, &HandshakeKind::ALL)?,
            suite: named("cipher suite", &self.suite, &CipherSuite::ALL)?,
            group: named("group", &self.group, &KxGroup::ALL)?,
            cert: named("certificate chain", &self.cert, &CertChain::ALL)?,
            datagram: false,
        };
        params.validate().map_err(|why| anyhow!("{params}: {why}"))?;
        Ok(params)
    }
}

/// The client library of `https-compare` and `https-soak`: the one
/// `name` selects ([`super::find`]), or the build's first TLS library.
/// Errors: no such library, plaintext TCP (the servers are TLS servers),
/// or a build without TLS.
pub fn client_library(name: Option<&str>) -> Result<Box<dyn super::Library>> {
    match name {
        Some(name) => {
            let library = super::find(name)?;
            if library.plaintext() {
                let tls: Vec<String> =
                    super::libraries().iter().filter(|l| !l.plaintext()).map(|l| l.name()).collect();
                bail!(
                    "--client {name}: the servers speak TLS (nginx's and every library's), so their \
                     client must too; pick one of: {}",
                    tls.join(", ")
                );
            }
            Ok(library)
        }
        None => match super::libraries().into_iter().find(|l| !l.plaintext()) {
            Some(l) => Ok(l),
            None => bail!("this build has no TLS library"),
        },
    }
}

/// The cores this process may use (at least 1): the default thread count.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A duration written as a number and a unit: `500ms`, `10s`, `2m`.
/// Errors: no number, an unknown unit, zero.
pub fn duration(text: &str) -> Result<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 =
        number.parse().map_err(|_| anyhow!("{text:?} is not a duration; write e.g. 500ms, 10s, 2m"))?;
    let secs = match unit {
        "ms" => n / 1e3,
        "s" | "" => n,
        "m" => n * 60.0,
        _ => bail!("{text:?}: unknown unit {unit:?}; valid: ms, s, m"),
    };
    if !(secs > 0.0 && secs <= 86_400.0) {
        bail!("{text:?}: must be more than 0 and at most 24 h");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// An address written as an IP address and a port (`127.0.0.1:4433`,
/// `[::1]:4433`), for clap. Errors: anything else, saying that a host name
/// (`localhost:4433`) is not taken: the tools never resolve names, so a
/// run's address is the one it names.
pub fn socket_addr_arg(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| {
        format!(
            "{text:?} is not an IP address and port (e.g. 127.0.0.1:4433, [::1]:4433); \
             host names such as localhost are not resolved: give the address"
        )
    })
}

/// The same for clap (its value parsers give `String` errors).
pub fn duration_arg(text: &str) -> Result<Duration, String> {
    duration(text).map_err(|e| e.to_string())
}

/// Checks a `--json` output path before any work: its directory is made
/// if missing, it must not be a directory, and it must take a write (a
/// file there is opened to append, nothing written; a missing one is
/// created, written and removed), so a read-only file system or a file
/// without write permission is found before the measuring, not after.
/// Errors: any of these fails, naming the path.
pub fn check_json(json: Option<&PathBuf>) -> Result<()> {
    use std::io::Write;
    if let Some(json) = json {
        if let Some(dir) = json.parent().filter(|d| !d.as_os_str().is_empty()) {
            ensure_dir(dir, "--json's directory")?;
        }
        anyhow::ensure!(!json.is_dir(), "--json {}: is a directory", json.display());
        let cannot = |e: std::io::Error| anyhow!("--json {}: cannot be written: {e}", json.display());
        if json.exists() {
            std::fs::OpenOptions::new().append(true).open(json).map_err(cannot)?;
        } else {
            let mut probe =
                std::fs::OpenOptions::new().write(true).create_new(true).open(json).map_err(cannot)?;
            let written = probe.write_all(b"{}").and_then(|()| probe.sync_all());
            drop(probe);
            std::fs::remove_file(json).with_context(|| format!("removing the probe {}", json.display()))?;
            written.map_err(cannot)?;
        }
    }
    Ok(())
}

/// Writes `text` to stdout ([`tls_bench_harness::out::print`]). Errors:
/// stdout is closed or full (a pipe whose reader is gone: `serve | head
/// -1`), said as an error, never a panic. A tool prints its report with
/// this, keeps going to write its files, and returns this error last.
pub fn print(text: &str) -> Result<()> {
    Ok(tls_bench_harness::out::print(text)?)
}

/// `--list`: the libraries of this build, a name a line (the servers' and
/// the clients' are the same). Errors: stdout cannot be written.
pub fn print_libraries() -> Result<()> {
    let names: Vec<String> = super::libraries().iter().map(|l| l.name() + "\n").collect();
    print(&names.concat())
}

/// `--probe`: prints `supported` or `unsupported: <why>` for `configured`,
/// `library`'s server or client configured for `params` (what
/// [`crate::child::probe`] reads). Errors: configuring failed (not
/// unsupported), or stdout cannot be written.
pub fn print_probe(
    library: &dyn super::Library,
    params: &Params,
    configured: Result<(), ConfigureError>,
) -> Result<()> {
    match configured {
        Ok(()) => print("supported\n"),
        Err(ConfigureError::Unsupported(why)) => print(&format!("unsupported: {why}\n")),
        Err(ConfigureError::Failed(e)) => Err(e.context(format!("{} {params}", library.name()))),
    }
}

/// Writes `value` as pretty JSON to `json`, when given. Errors: the file
/// cannot be written.
pub fn write_json<T: serde::Serialize>(json: Option<&PathBuf>, value: &T) -> Result<()> {
    if let Some(json) = json {
        std::fs::write(json, serde_json::to_string_pretty(value)? + "\n")
            .with_context(|| format!("writing {}", json.display()))?;
    }
    Ok(())
}

/// A load client's run options (`load`, `https-load`).
#[derive(clap::Args, Clone, Debug)]
pub struct ClientArgs {
    /// Worker threads [default: the cores available].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Pin the client's threads to these cores, one each in turn
    /// (comma-separated; default: not pinned).
    #[arg(long, value_delimiter = ',')]
    pub cores: Vec<usize>,
    /// Longest a connect, a handshake or a request may take.
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub timeout: Duration,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// A server's command line (`serve`, `https-serve`).
#[derive(clap::Args, Clone, Debug)]
pub struct ServerArgs {
    /// The library: its id (`--list`), its name (`s2n-tls`, `openssl`),
    /// name+backend (`rustls+ring`), or `plaintext-tcp`.
    #[arg(long, required_unless_present = "list")]
    pub library: Option<String>,
    #[command(flatten)]
    pub params: ParamsArgs,
    /// Address to listen on; port 0 picks a free one (printed).
    #[arg(long, default_value = "127.0.0.1:4433", value_parser = socket_addr_arg)]
    pub listen: SocketAddr,
    /// Worker threads [default: the cores available].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Pin the worker threads to these cores, one each in turn
    /// (comma-separated; default: not pinned).
    #[arg(long, value_delimiter = ',')]
    pub cores: Vec<usize>,
    /// Longest a handshake may take (e.g. 500ms, 10s).
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub handshake_timeout: Duration,
    /// Longest a connection may idle before it is closed (HTTP: the
    /// longest it may take to send a whole request header).
    #[arg(long, default_value = "60s", value_parser = duration_arg)]
    pub idle_timeout: Duration,
    /// Connections served at once, counted from their first bytes (more
    /// are closed at once); as many more may wait silent, the oldest closed
    /// beyond.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Also write the summary as JSON to this file (checked first).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// List the libraries of this build and exit.
    #[arg(long)]
    pub list: bool,
    /// Configure the server for the parameters, print `supported` or
    /// `unsupported: <why>`, and exit (0 both; 1 if configuring failed).
    /// `https-compare` asks another build's server this before starting it.
    #[arg(long)]
    pub probe: bool,
}

impl ServerArgs {
    /// Runs the server these arguments describe, each connection served by
    /// `protocol` (`what` names it in the first line), until SIGINT or
    /// SIGTERM; prints the summary (and writes it as JSON). Errors: a bad
    /// argument (named, with what is valid), the server cannot start.
    pub fn run(&self, what: &str, protocol: Arc<dyn Protocol>) -> Result<()> {
        if self.list {
            return print_libraries();
        }
        let library = super::find(self.library.as_deref().unwrap_or_default())?;
        let params = self.params.params()?;
        if self.probe {
            return print_probe(
                &*library,
                &params,
                library.server(&params, &protocol.extensions()).map(|_| ()),
            );
        }
        check_json(self.json.as_ref())?;
        let threads = self.threads.map_or_else(cores, usize::from);
        let options = ServeOptions {
            params,
            listen: self.listen,
            threads,
            handshake_timeout: self.handshake_timeout,
            idle_timeout: self.idle_timeout,
            max_connections: self.max_connections as usize,
            cores: self.cores.clone(),
        };
        let running = start_with(&*library, &options, protocol)?;
        // The handlers first: a signal sent on reading the banner stops the
        // server with its summary.
        let signals = running.stop_signals()?;
        // A banner nobody reads (stdout closed) does not stop the server:
        // its error is returned with the summary's.
        let banner = print(&format!(
            "serving {what} with {} {} on {} ({threads} threads); SIGINT or SIGTERM stops\n",
            library.name(),
            if library.plaintext() {
                "(no TLS: the parameters do not apply)".to_string()
            } else {
                params.to_string()
            },
            running.addr()
        ));
        let summary = running.until(signals)?;
        let printed = print(&summary.to_text());
        write_json(self.json.as_ref(), &summary)?;
        banner.and(printed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_names_parse_or_say_what_is_valid() {
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("2m").unwrap(), Duration::from_secs(120));
        assert!(duration("0s").is_err());
        assert!(duration("5h").unwrap_err().to_string().contains("valid: ms, s, m"));
        let mut args = ParamsArgs {
            kind: "mtls".into(),
            suite: "TLS_AES_256_GCM_SHA384".into(),
            group: "secp256r1".into(),
            cert: "ecdsa-p256".into(),
        };
        assert_eq!(args.params().unwrap().kind, HandshakeKind::MutualAuth);
        args.group = "x448".into();
        let e = args.params().unwrap_err().to_string();
        assert!(e.contains("unknown group \"x448\"") && e.contains("X25519MLKEM768"), "{e}");
    }
}
