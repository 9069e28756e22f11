//! What the socket and HTTPS tests share.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    time::Duration,
};

use tls_bench_harness::params::{CipherSuite, HandshakeKind, KxGroup, Params};
use tls_bench_sockets::{child::ChildOptions, load::LoadOptions, serve::ServeOptions, siege::SiegeOptions};

/// What the tests negotiate: a suite and group every library of every build
/// (FIPS ones included) can do.
pub fn params(kind: HandshakeKind) -> Params {
    Params {
        kind,
        suite: CipherSuite::TLS_AES_128_GCM_SHA256,
        group: KxGroup::Secp256r1,
        ..Params::default()
    }
}

/// A server on a free port of 127.0.0.1, two threads, 10-s timeouts, 64
/// connections.
pub fn serve_options(params: Params) -> ServeOptions {
    ServeOptions {
        params,
        listen: "127.0.0.1:0".parse().unwrap(),
        threads: 2,
        handshake_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        max_connections: 64,
        cores: Vec::new(),
    }
}

/// Body bytes of the HTTPS tests' servers.
pub const BODY: usize = 1024;

/// Two users of four requests each against `connect`, [`BODY`]-byte
/// bodies, two threads, 10-s timeouts.
pub fn siege_options(params: Params, connect: SocketAddr, keep_alive: bool) -> SiegeOptions {
    SiegeOptions {
        params,
        connect,
        clients: 2,
        requests: Some(4),
        duration: None,
        body: BODY,
        keep_alive,
        threads: 2,
        cores: Vec::new(),
        timeout: Duration::from_secs(10),
        progress: false,
    }
}

/// A child server (another build's or another runtime's) of one thread,
/// 64 connections, [`BODY`]-byte bodies and its default timeouts, writing
/// its summary to `json`.
pub fn child_options(json: std::path::PathBuf) -> ChildOptions {
    ChildOptions {
        threads: 1,
        cores: Vec::new(),
        body: BODY,
        echo: false,
        max_connections: 64,
        timeouts: None,
        json,
    }
}

/// Two clients of 10 requests of 1 KiB each, kept connections, closed loop.
pub fn load_options(params: Params, connect: SocketAddr) -> LoadOptions {
    LoadOptions {
        params,
        connect,
        connections: 2,
        requests: Some(10),
        duration: None,
        message: 1024,
        new_connection: false,
        rate: None,
        threads: 2,
        cores: Vec::new(),
        timeout: Duration::from_secs(10),
        progress: false,
    }
}

/// A port on 127.0.0.1 where nothing listens, held so for as long as this
/// lives: a TCP socket bound there that never listens (Linux answers a
/// connect to it with a reset, ECONNREFUSED; no other socket can bind the
/// port meanwhile). A port read from a listener dropped at once is free
/// for a test running beside to bind, whose server then answers.
pub struct RefusingPort {
    _socket: OwnedFd,
    /// `127.0.0.1:PORT`.
    pub addr: SocketAddr,
}

/// See [`RefusingPort`].
pub fn refusing_port() -> RefusingPort {
    // SAFETY: plain socket calls on a descriptor this function owns, with
    // a `sockaddr_in` of the size given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        let socket = OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let sockaddr = (&raw mut addr).cast::<libc::sockaddr>();
        assert_eq!(libc::bind(socket.as_raw_fd(), sockaddr, len), 0, "bind: {}", io::Error::last_os_error());
        assert_eq!(libc::getsockname(socket.as_raw_fd(), sockaddr, &mut len), 0, "getsockname");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, u16::from_be(addr.sin_port)));
        RefusingPort { _socket: socket, addr }
    }
}

/// The processes whose parent is `pid`, and theirs, from `/proc` (zombies
/// left out).
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else { continue };
            let Some((_, rest)) = stat.rsplit_once(')') else { continue };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.len() > 1 && fields[1] == parent.to_string() && fields[0] != "Z" {
                found.push(child);
                parents.push(child);
            }
        }
    }
    found
}

/// Whether process `pid` runs (exists and is not a zombie).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, r)| !r.trim_start().starts_with('Z')))
}
