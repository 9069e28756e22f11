//! tls-bench: Criterion benchmarks comparing TLS libraries on the same work
//! over an in-memory transport.
//!
//! - [`params`]: the benchmark dimensions (IANA names) and sweeps.
//! - [`certs`]: the committed certificate chains.
//! - [`transport`]: the in-memory duplex that counts bytes, records, writes.
//! - [`harness`]: the traits each library implements, what was negotiated,
//!   and the client/server [`harness::Pair`] driver.
//! - [`config`]: per-library configuration objects from parameters,
//!   independent of the transport.
//! - [`stacks`]: each library over the in-memory transport, and the list of
//!   built libraries.
//! - [`bench`]: shared pieces of the Criterion benchmarks.
//! - [`criterion_json`]: Criterion's results read back from disk.
//! - [`host`]: the machine a measurement ran on.
//! - [`memory`]: heap accounting by side, fed by the `memory` binary's
//!   allocator interposer.
//! - [`wire`]: the negotiated group and resumption read from the server's
//!   plaintext first flight, for libraries that cannot report them.

pub mod bench;
pub mod certs;
pub mod config;
pub mod criterion_json;
pub mod harness;
pub mod host;
pub mod memory;
pub mod params;
pub mod stacks;
pub mod transport;
pub mod wire;
