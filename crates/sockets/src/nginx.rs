//! nginx as the reference HTTPS server: Debian's nginx (on the system's
//! OpenSSL) started on 127.0.0.1 with a configuration generated under a
//! directory of ours (never the system's), for the same parameter set,
//! certificate chain and body as `https-serve`, so the same load runs
//! against both.
//!
//! The parameters become nginx's directives (nginx's ngx_http_ssl_module
//! documentation): `ssl_protocols` (the suite's version),
//! `ssl_conf_command Ciphersuites` (TLS 1.3) or `ssl_ciphers` (TLS 1.2),
//! `ssl_ecdh_curve` (the group), `ssl_certificate`/`ssl_certificate_key`
//! (the chain's server files), `ssl_verify_client on` with the chain's CA
//! (mTLS), `ssl_session_tickets on` (resumption; otherwise no ticket and no
//! session cache, `ssl_conf_command NumTickets 0`); `listen ... ssl http2`
//! (HTTP/2 by ALPN, as `https-serve`). The body is a file of
//! [`super::https::body`]'s bytes, served for every path. nginx cannot
//! report what it negotiated per connection: the client checks every
//! handshake.

use std::{
    fmt::Write as _,
    fs,
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};

use crate::process::{self, Signal};

use tls_bench_harness::{
    certs::{self, CA_CERT, SERVER_CHAIN, SERVER_KEY},
    params::{HandshakeKind, Params, Protocol},
};

/// The nginx binary on `PATH`. Errors: none there, saying what to install.
pub fn binary() -> Result<PathBuf> {
    which("nginx").context("nginx is not installed: apt-get install nginx (or pass --no-nginx)")
}

/// `name` on `PATH`, or in `/usr/sbin` (where Debian puts nginx).
pub fn which(name: &str) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .with_context(|| format!("{name}: not found on PATH"))
}

/// nginx's configuration for `params` on `addr`, `workers` worker
/// processes (each bound to one of `cores` in turn, by
/// `worker_cpu_affinity`, when `cores` is not empty), its files under `dir`
/// (which holds the `body` file). Errors: a group nginx's OpenSSL has no
/// name for here (none today).
pub fn config(
    dir: &Path,
    addr: SocketAddr,
    params: &Params,
    workers: usize,
    cores: &[usize],
) -> Result<String> {
    let chain = std::path::absolute(certs::dir(params.cert)).unwrap_or_else(|_| certs::dir(params.cert));
    let d = dir.display();
    let mut c = String::new();
    // SAFETY: geteuid only reads.
    if unsafe { libc::geteuid() } == 0 {
        // As root, the workers would otherwise run as nobody, who may not
        // read the files under `dir`.
        c.push_str("user root root;\n");
    }
    writeln!(c, "worker_processes {workers};")?;
    if !cores.is_empty() {
        // One mask per worker, CPU 0 the rightmost digit.
        let masks: Vec<String> = (0..workers)
            .map(|w| {
                let core = cores[w % cores.len()];
                format!("1{}", "0".repeat(core))
            })
            .collect();
        writeln!(c, "worker_cpu_affinity {};", masks.join(" "))?;
    }
    writeln!(c, "daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;")?;
    c.push_str("events { worker_connections 16384; }\nhttp {\n");
    writeln!(c, "  access_log off;")?;
    for temp in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        writeln!(c, "  {temp}_temp_path {d}/tmp/{temp};")?;
    }
    c.push_str("  keepalive_requests 1000000;\n  keepalive_timeout 60s;\n");
    // `listen ... ssl http2`: HTTP/2 by ALPN, as https-serve offers it (the
    // form nginx 1.22 knows; later ones take it with a deprecation note).
    writeln!(c, "  server {{\n    listen {addr} ssl http2;\n    server_name {};", certs::SERVER_NAME)?;
    writeln!(c, "    ssl_certificate {};", chain.join(SERVER_CHAIN).display())?;
    writeln!(c, "    ssl_certificate_key {};", chain.join(SERVER_KEY).display())?;
    match params.protocol() {
        Protocol::Tls13 => {
            c.push_str("    ssl_protocols TLSv1.3;\n");
            writeln!(c, "    ssl_conf_command Ciphersuites {};", params.suite.openssl_name())?;
        }
        _ => {
            c.push_str("    ssl_protocols TLSv1.2;\n");
            writeln!(c, "    ssl_ciphers {};", params.suite.openssl_name())?;
        }
    }
    let groups: Vec<&str> = params.offered_groups().into_iter().map(|g| g.openssl_name()).collect();
    writeln!(c, "    ssl_ecdh_curve {};", groups.join(":"))?;
    if params.kind == HandshakeKind::Resumption {
        c.push_str("    ssl_session_tickets on;\n");
    } else {
        // No ticket and no session cache, as https-serve for these kinds:
        // a client that would resume (wrk keeps its session) does full
        // handshakes here too.
        c.push_str(
            "    ssl_session_tickets off;\n    ssl_session_cache off;\n    ssl_conf_command NumTickets 0;\n",
        );
    }
    if params.kind == HandshakeKind::MutualAuth {
        writeln!(c, "    ssl_client_certificate {};", chain.join(CA_CERT).display())?;
        c.push_str("    ssl_verify_client on;\n    ssl_verify_depth 3;\n");
    }
    writeln!(c, "    location / {{\n      root {d};\n      default_type application/octet-stream;")?;
    c.push_str("      try_files /body =404;\n    }\n  }\n}\n");
    Ok(c)
}

/// A running nginx; stopped (SIGQUIT, then SIGKILL after 5 s) when
/// dropped.
pub struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Nginx {
    /// Starts nginx for `params` answering with a body of `body` bytes,
    /// `workers` worker processes (on `cores` in turn, when not empty), in `dir` (made; its earlier contents
    /// replaced), on a free port of 127.0.0.1; returns once it accepts
    /// connections. Errors: nginx not installed (saying what to install),
    /// the configuration refused (nginx's error log quoted), no connection
    /// accepted in 10 s.
    pub fn start(dir: &Path, params: &Params, body: usize, workers: usize, cores: &[usize]) -> Result<Nginx> {
        let nginx = binary()?;
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir.join("tmp")).with_context(|| format!("creating {}", dir.display()))?;
        let dir = fs::canonicalize(dir).with_context(|| format!("resolving {}", dir.display()))?;
        fs::write(dir.join("body"), super::https::body(body)).context("writing nginx's body file")?;
        // A free port: bound, read, released; nginx binds it next.
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free port for nginx")?;
        let conf = dir.join("nginx.conf");
        fs::write(&conf, config(&dir, addr, params, workers, cores)?).context("writing nginx.conf")?;
        let mut cmd = Command::new(&nginx);
        cmd.arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child =
            super::interrupt::spawn(&mut cmd).with_context(|| format!("starting {}", nginx.display()))?;
        let mut running = Nginx { child, addr, dir };
        let started = Instant::now();
        loop {
            if let Some(status) = running.child.try_wait().context("polling nginx")? {
                bail!("nginx exited ({status}) at start: {}", running.error_log());
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(running);
            }
            if started.elapsed() > Duration::from_secs(10) {
                bail!("nginx accepted no connection on {addr} in 10 s: {}", running.error_log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The version line of `nginx -v`, for reports. Errors: it cannot run.
    pub fn version() -> Result<String> {
        let out = Command::new(binary()?).arg("-v").output().context("running nginx -v")?;
        Ok(String::from_utf8_lossy(&out.stderr).trim().trim_start_matches("nginx version: ").to_string())
    }

    /// Why nginx no longer serves, if it does not: its master exited or
    /// is stopped ([`super::child::process_down`]), with the last lines of
    /// its error log. `None`: it runs. (A worker that dies is replaced by
    /// the master; its requests fail, and the load counts them.)
    pub fn down(&mut self) -> Option<String> {
        let why = super::child::process_down(&mut self.child)?;
        Some(format!("nginx's master process {why}; its error log: {}", self.error_log()))
    }

    /// The last lines of its error log.
    fn error_log(&self) -> String {
        let log = fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }

    /// nginx's processes: the master, then its workers.
    fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.child.id()];
        pids.extend(process::children(self.child.id()));
        pids
    }

    /// The resident set size of nginx's processes (master and workers),
    /// KiB, from `/proc/PID/statm`. Errors: one cannot be read.
    pub fn rss_kib(&self) -> Result<u64> {
        self.pids().iter().map(|&pid| process::rss_kib(Some(pid))).sum()
    }

    /// CPU seconds (user + system) nginx's running processes (master and
    /// workers) have used so far, from `/proc/PID/stat` (utime and stime,
    /// proc(5)): what `https-serve` reports as its threads' CPU. Errors: one
    /// cannot be read or is not understood.
    pub fn cpu_seconds(&self) -> Result<f64> {
        self.pids().into_iter().map(process::cpu_seconds).sum()
    }
}

impl Drop for Nginx {
    /// SIGQUIT to the master (it stops its workers), then SIGKILL to the
    /// whole process group after 5 s, or at once when the master is gone
    /// already: workers whose master was killed keep serving otherwise,
    /// adopted by init.
    fn drop(&mut self) {
        let group = self.child.id() as i32;
        if matches!(self.child.try_wait(), Ok(None)) {
            // Our own child, not reaped; a failure is a master gone already.
            let _gone = process::signal(self.child.id(), Signal::SIGQUIT);
        }
        let started = Instant::now();
        // The group's id is not another's: the master is not reaped before
        // the SIGKILL (a zombie counts as gone), or, reaped by down(), its
        // workers still hold the group.
        while process::group_has_running(group) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Its process group (interrupt::spawn): the master and its workers,
        // whoever is left of them (none: done).
        let _gone = process::signal_group(self.child.id(), Signal::SIGKILL);
        let _reaped = self.child.wait();
        super::interrupt::forget(&self.child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tls_bench_harness::params::{CertChain, CipherSuite, KxGroup};

    #[test]
    fn config_says_what_the_parameters_say() {
        let addr: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let p = Params { kind: HandshakeKind::MutualAuth, group: KxGroup::Secp384r1, ..Params::default() };
        let c = config(Path::new("/d"), addr, &p, 2, &[0, 3]).unwrap();
        for line in [
            "worker_processes 2;",
            "worker_cpu_affinity 1 1000;",
            "listen 127.0.0.1:4433 ssl http2;",
            "ssl_protocols TLSv1.3;",
            "ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;",
            "ssl_ecdh_curve P-384;",
            "ssl_verify_client on;",
            "try_files /body =404;",
            "pid /d/nginx.pid;",
        ] {
            assert!(c.contains(line), "{line} not in\n{c}");
        }
        let tls12 = Params {
            suite: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            cert: CertChain::Rsa2048,
            ..Params::default()
        };
        let c = config(Path::new("/d"), addr, &tls12, 1, &[]).unwrap();
        assert!(
            c.contains("ssl_protocols TLSv1.2;") && c.contains("ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;"),
            "{c}"
        );
        assert!(c.contains("rsa2048/server-chain.pem") && !c.contains("ssl_verify_client"), "{c}");
        assert!(!c.contains("worker_cpu_affinity"), "{c}");
        assert!(c.contains("ssl_conf_command NumTickets 0;") && !c.contains("ssl_session_tickets on"), "{c}");
    }
}
