//! tls-bench's harness: the measurement core every runner shares (the
//! Criterion benches, `compare`, the tests, the socket runner, historical-perf's
//! builds of past releases): benchmark parameters, the in-memory transport,
//! every library's configuration and stack, the workload kinds, the runner.
//! It depends on no tokio, hyper, clap or plotters (crates/harness/Cargo.toml).
//!
//! What belongs in each module, in layers: a module uses only those listed
//! before it (`tests/layers.rs` checks it, and that this list names every
//! module once). The crates above this one (tls-bench-results,
//! tls-bench-sockets, the tools) cannot be named here at all.
//!
//! - [`side`]: which end of a connection; used by everything below.
//! - [`callgrind`]: the named regions instruction counts cover (each
//!   side's calls, a whole handshake), entered only while counting, and
//!   the glibc tunables of a counted process.
//! - [`out`]: what the binaries print on stdout, and a closed or full
//!   stdout as an error (`out!`, `outln!`, `parsed_or_exit!`).
//! - [`paths`]: the target directory (`CARGO_TARGET_DIR`) and Criterion's
//!   output directory (`CRITERION_HOME`), the tools' defaults.
//! - [`error`]: [`error::ConfigureError`], unsupported (a named skip) vs
//!   failed; how a binary ends ([`error::exit_code`]).
//! - [`params`]: the benchmark dimensions (IANA names) and sweeps.
//! - [`certs`]: the committed certificate chains.
//! - [`memory`]: heap accounting by side, fed by the `memory` binary's
//!   allocator interposer.
//! - [`transport`]: the in-memory duplex, a byte stream (TLS) or datagrams
//!   of an MTU (DTLS), that counts bytes, records, writes, datagrams.
//! - [`writes`]: small writes as data: messages of several buffers, the
//!   ways to send them, a record's overhead on the wire.
//! - [`wire`]: the negotiated group and resumption read from the server's
//!   plaintext first flight, for libraries that cannot report them.
//! - [`extensions`]: ALPN, the server name and another client identity as
//!   the socket runner's HTTPS sets them, what every library shares (each
//!   library's own calls are in its folder).
//! - [`harness`]: the traits each library implements, what was negotiated,
//!   and the client/server [`harness::Pair`] driver.
//! - `floor` (feature `crypto-floor`, part of `tools`): the primitive
//!   operations of a handshake by parameters, the floor as a library over
//!   the transport, and the crypto implementation two libraries share
//!   (aws-lc-rs); each library's own floor is in its folder.
//! - [`libs`]: every library, one folder each (its configuration from
//!   parameters, shared by every runner; its stack over the in-memory
//!   transport; its ALPN and SNI; its crypto floor; the compat modules of
//!   its past releases), and the registry of built libraries.
//! - [`workload`]: the workload kinds, one module each (what one iteration
//!   does and what is timed, its id parameters, figures and bytes; the UDP
//!   kinds with their sockets), the catalogue that lists them, the data
//!   sent and what a run measured. The socket kinds reach the socket runner
//!   through the hook it installs ([`workload::over_sockets`]).
//! - [`bench`]: benchmarks as data: the [`bench::Case`] whose `Display` is
//!   its id, the matrices.
//! - [`select`]: choosing libraries by id, family or name, the one rule
//!   of every tool's `--library` and `--libraries`.
//! - [`filter`]: which benchmark ids a Criterion command line selects.
//! - [`skip`]: named skips, printed and, for tools, written as data.
//! - [`runner`]: the measurement core: a case configured, its buffers
//!   placed, its kind run, for every runner (Criterion, `compare`, tests).
//! - [`instructions`]: the instruction-count suite as data (regions,
//!   iterations, Callgrind options) for gungraun.

pub mod side;

pub mod callgrind;

pub mod out;

pub mod paths;

pub mod error;

pub mod params;

pub mod certs;

pub mod memory;

pub mod transport;

pub mod writes;

pub mod wire;

pub mod extensions;

pub mod harness;

#[cfg(feature = "crypto-floor")]
pub mod floor;

pub mod libs;

pub mod workload;

pub mod bench;

pub mod select;

pub mod filter;

pub mod skip;

pub mod runner;

pub mod instructions;
