//! tls-bench: benchmarks comparing TLS and DTLS libraries on the same work
//! over an in-memory transport.
//!
//! What belongs in each module, in layers: a module uses only those listed
//! before it (`tests/layers.rs` checks it, and that this list names every
//! module once).
//!
//! - [`side`]: which end of a connection; used by everything below.
//! - [`callgrind`]: the named regions instruction counts cover (each
//!   side's calls, a whole handshake), entered only while counting, and
//!   the glibc tunables of a counted process.
//! - [`error`]: [`error::ConfigureError`], unsupported (a named skip) vs
//!   failed.
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
//! - [`harness`]: the traits each library implements, what was negotiated,
//!   and the client/server [`harness::Pair`] driver.
//! - [`extensions`]: ALPN and the server name as the socket runner's
//!   HTTPS sets them, what every library shares (each library's own calls
//!   are in its folder).
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
//! - [`filter`]: which benchmark ids a Criterion command line selects.
//! - [`skip`]: named skips, printed and, for tools, written as data.
//! - [`runner`]: the measurement core: a case configured, its buffers
//!   placed, its kind run, for every runner (Criterion, `compare`, tests).
//! - [`instructions`]: the instruction-count suite as data (regions,
//!   iterations, Callgrind options) for gungraun.
//! - [`criterion_json`]: Criterion's results read back from disk.
//! - [`gungraun_json`]: gungraun's instruction counts read back from disk.
//! - [`results`]: each tool's saved results and their Markdown tables;
//!   `results/README.md` generated from the committed ones.
//! - `stats` (feature `tools`): medians and bootstrap confidence intervals
//!   of paired ratios (whose `Interval` is saved with [`results::compare`]).
//! - [`host`]: the machine a measurement ran on.
//! - [`outdir`]: a tool's output directory, checked before any work and
//!   holding one whole run.
//! - `sockets` (feature `sockets`, part of `tools`): the socket runner,
//!   each library through its own tokio adapter on its configuration in
//!   [`libs`]: the `serve`
//!   echo server, the `load` client, HTTPS and the tools around them.
//! - [`variants`]: the build variants, the one definition every tool and
//!   script reads.
//! - [`workers`]: a variant's binary built and installed for the tools
//!   that run variants side by side.
//!
//! The library depends on no crate only a tool uses: the binaries'
//! dependencies (clap, csv, chrono, plotters, ...) are behind the `tools`
//! feature (default), and a module serving one tool lives in that tool's
//! directory (`src/bin/compare/`, `src/bin/small-writes/latency.rs`).

pub mod side;

pub mod callgrind;

pub mod error;

pub mod params;

pub mod certs;

pub mod memory;

pub mod transport;

pub mod writes;

pub mod wire;

pub mod harness;

pub mod extensions;

#[cfg(feature = "crypto-floor")]
pub mod floor;

pub mod libs;

pub mod workload;

pub mod bench;

pub mod filter;

pub mod skip;

pub mod runner;

pub mod instructions;

pub mod criterion_json;

pub mod gungraun_json;

pub mod results;

#[cfg(feature = "tools")]
pub mod stats;

pub mod host;

pub mod outdir;

#[cfg(feature = "sockets")]
pub mod sockets;

pub mod variants;

pub mod workers;
