//! Pieces shared by the Criterion benchmarks (`benches/`): which parameter
//! sets run, how an unsupported combination is reported, and the data sent.

use std::env;

use crate::{
    harness::{ConfigureError, Handshaker, TlsLibrary},
    params::{Aead, Params, Protocol},
};

/// Environment variable selecting the matrix: `full` runs the cross
/// product; anything else (or unset) the one-dimension-at-a-time sweep.
pub const MATRIX_ENV: &str = "TLS_BENCH_MATRIX";

/// Whether [`MATRIX_ENV`] asks for the full cross product.
pub fn full_matrix() -> bool {
    env::var(MATRIX_ENV).is_ok_and(|v| v == "full")
}

/// The handshake benchmark's parameter sets: [`Params::handshake_sweep`],
/// or [`Params::full_matrix`] with `TLS_BENCH_MATRIX=full`.
pub fn handshake_params() -> Vec<Params> {
    if full_matrix() { Params::full_matrix() } else { Params::handshake_sweep() }
}

/// The throughput benchmark's parameter sets: server authentication,
/// x25519, ECDSA P-256, every TLS 1.3 suite (and with
/// `TLS_BENCH_MATRIX=full` every TLS 1.2 ECDHE-ECDSA suite too).
pub fn throughput_params() -> Vec<Params> {
    let protocols: &[Protocol] =
        if full_matrix() { &[Protocol::Tls13, Protocol::Tls12] } else { &[Protocol::Tls13] };
    let base = Params::default();
    protocols.iter().flat_map(|&p| Aead::ALL.map(move |aead| base.with_protocol(p).with_aead(aead))).collect()
}

/// Application-data write sizes of the throughput benchmark, in bytes.
pub const WRITE_SIZES: [usize; 4] = [256, 1024, 4096, 16384];

/// Application bytes moved per throughput iteration: 64 KiB, a multiple of
/// every write size, small enough to stay in cache.
pub const BLOCK_BYTES: usize = 64 * 1024;

/// `len` bytes of a fixed pseudo-random pattern (xorshift64), so that
/// corrupted or reordered data cannot compare equal by accident.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Configures `lib` for `params` as both client and server. `None` when the
/// library does not support the combination: the reason is printed to
/// stderr as `skip <group>/<params>/<library>: <reason>`.
///
/// Panics when configuring fails for another reason: a benchmark must not
/// go on with a broken library.
pub fn handshaker_or_skip(group: &str, lib: &dyn TlsLibrary, params: Params) -> Option<Handshaker> {
    match Handshaker::new(lib, lib, params) {
        Ok(h) => Some(h),
        Err(ConfigureError::Unsupported(why)) => {
            eprintln!("skip {group}/{params}/{}: {why}", lib.name());
            None
        }
        Err(e) => panic!("{group}/{params}/{}: {e}", lib.name()),
    }
}
