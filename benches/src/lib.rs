//! tls-bench: benchmarks comparing TLS and DTLS libraries on the same work,
//! over an in-memory transport.
//!
//! This package (benches/) is what historical-perf builds against
//! each past release, with the harness and the results crates only: the
//! Criterion benches (`benches/`), the instruction counts, the `run-case`
//! binary Callgrind runs and the `memory` binary. Its library holds what
//! every tool reads about builds:
//!
//! - [`variants`]: the build variants, the one definition every tool and
//!   script reads.
//! - [`workers`]: a variant's binary built and installed for the tools
//!   that run variants side by side (`compare`, `memory variants`).
//!
//! The workspace's crates and the way their dependencies go are in
//! docs/contributing.md, "The crates".

pub mod variants;

pub mod workers;
