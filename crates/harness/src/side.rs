//! Which end of a connection: the one type the transport, the memory
//! accounting and the harness all name (no module depends on another for it).

/// Which end of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The TLS client.
    Client,
    /// The TLS server.
    Server,
}

impl Side {
    /// The other side.
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

impl std::fmt::Display for Side {
    /// `client` or `server`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Server => "server",
        })
    }
}
