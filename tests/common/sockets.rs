//! What the socket and HTTPS tests share.

use std::{net::SocketAddr, time::Duration};

use tls_bench::{
    params::{CipherSuite, HandshakeKind, KxGroup, Params},
    sockets::{load::LoadOptions, serve::ServeOptions},
};

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
