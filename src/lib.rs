//! tls-bench: benchmarks comparing TLS and DTLS libraries on the same work
//! over an in-memory transport.
//!
//! What belongs in each module, and which way the arrows go (a module uses
//! only those listed before it, `stacks` and `config` aside):
//!
//! - [`side`]: which end of a connection; used by everything below.
//! - [`callgrind`]: the named regions instruction counts cover (each
//!   side's calls, a whole handshake), entered only while counting.
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
//! - [`config`]: per-library configuration objects from parameters,
//!   independent of the transport (shared by every runner).
//! - `floor` (feature `crypto-floor`, part of `tools`): the primitive
//!   operations of a handshake by parameters, and each crypto
//!   implementation as the floor calls it.
//! - [`stacks`]: each library over the in-memory transport, the crypto
//!   floors as libraries, and the list of built libraries.
//! - [`bench`]: benchmarks as data: the [`bench::Case`] whose `Display` is
//!   its id, the matrices, the data sent.
//! - [`filter`]: which benchmark ids a Criterion command line selects.
//! - [`skip`]: named skips, printed and, for tools, written as data.
//! - [`udp`]: DTLS handshakes and the send loop over UDP sockets on
//!   127.0.0.1, one thread per side (the kernel path beside the in-memory
//!   figures).
//! - [`workload`]: the workload kinds, one module each (what one iteration
//!   does and what is timed, its id parameters, figures and bytes), and
//!   the catalogue that lists them.
//! - [`runner`]: the measurement core: a case configured, its buffers
//!   placed, its kind run, for every runner (Criterion, `compare`, tests).
//! - `sockets` (feature `sockets`, part of `tools`): the socket runner,
//!   each library through its own tokio adapter on [`config`]: the `serve`
//!   echo server and the `load` client.
//! - [`instructions`]: the instruction-count suite as data (regions,
//!   iterations, Callgrind options) for gungraun.
//! - [`criterion_json`]: Criterion's results read back from disk.
//! - [`gungraun_json`]: gungraun's instruction counts read back from disk.
//! - [`results`]: each tool's saved results and their Markdown tables;
//!   `results/README.md` generated from the committed ones.
//! - [`stats`]: medians and bootstrap confidence intervals of paired ratios
//!   (whose [`stats::Interval`] is saved with [`results::compare`]).
//! - [`latency`]: per-iteration latency percentiles (HdrHistogram; its
//!   [`latency::Percentiles`] are saved with [`results::small_writes`]).
//! - [`host`]: the machine a measurement ran on.
//! - [`variants`]: the build variants, the one definition every tool and
//!   script reads; [`workers`]: a variant's binary built and installed for
//!   the tools that run variants side by side.
//!
//! The library depends on no crate only a tool uses: the binaries'
//! dependencies (clap, csv, chrono, plotters, ...) are behind the `tools`
//! feature (default), and a module serving one tool lives in that tool's
//! directory (`src/bin/compare/stats.rs`, `src/bin/small-writes/latency.rs`).

pub mod bench;
pub mod callgrind;
pub mod certs;
pub mod config;
pub mod criterion_json;
pub mod error;
pub mod filter;
#[cfg(feature = "crypto-floor")]
pub mod floor;
pub mod gungraun_json;
pub mod harness;
pub mod host;
pub mod instructions;
pub mod memory;
pub mod outdir;
pub mod params;
pub mod results;
pub mod runner;
pub mod side;
pub mod skip;
#[cfg(feature = "sockets")]
pub mod sockets;
pub mod stacks;
#[cfg(feature = "tools")]
pub mod stats;
pub mod transport;
pub mod udp;
pub mod variants;
pub mod wire;
pub mod workers;
pub mod workload;
pub mod writes;
