//! tls-bench: benchmarks comparing TLS and DTLS libraries on the same work,
//! over an in-memory transport and over sockets.
//!
//! This package is the tools: every binary, the Criterion benches and the
//! integration tests, over the workspace's crates, whose dependencies go
//! one way (docs/contributing.md, "The crates"; the compiler keeps it):
//!
//! - `tls_bench_harness` (crates/harness/): the measurement core, every
//!   library's configuration and stack (one folder each), the runner.
//! - `tls_bench_results` (crates/results/): one model per saved file, the
//!   readers of Criterion's and gungraun's output, statistics, tables
//!   (feature `tools`).
//! - `tls_bench_sockets` (crates/sockets/): the socket runner, each library
//!   through its own tokio adapter (feature `sockets`, part of `tools`).
//!
//! This library holds what only the tools share:
//!
//! - [`variants`]: the build variants, the one definition every tool and
//!   script reads.
//! - [`workers`]: a variant's binary built and installed for the tools
//!   that run variants side by side.
//!
//! A module serving one tool lives in that tool's directory
//! (`src/bin/compare/`, `src/bin/small-writes/latency.rs`).

pub mod variants;

pub mod workers;
