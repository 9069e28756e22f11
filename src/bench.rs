//! Pieces shared by the Criterion benchmarks (`benches/`): which parameter
//! sets run, how an unsupported combination is reported, and the data sent.

use std::env;

use crate::{
    harness::{ConfigureError, Handshaker, TlsLibrary},
    params::{Aead, CertChain, HandshakeKind, Params, Protocol},
};

/// Environment variable selecting the matrix: `full` runs the cross
/// product; anything else (or unset) the one-dimension-at-a-time sweep.
pub const MATRIX_ENV: &str = "TLS_BENCH_MATRIX";

/// Whether [`MATRIX_ENV`] asks for the full cross product.
pub fn full_matrix() -> bool {
    env::var(MATRIX_ENV).is_ok_and(|v| v == "full")
}

/// The handshake benchmark's parameter sets: [`Params::handshake_sweep`],
/// or [`Params::full_matrix`] with `TLS_BENCH_MATRIX=full`. With the
/// `historical-perf` feature, [`historical_handshake_params`] instead.
pub fn handshake_params() -> Vec<Params> {
    if cfg!(feature = "historical-perf") {
        historical_handshake_params()
    } else if full_matrix() {
        Params::full_matrix()
    } else {
        Params::handshake_sweep()
    }
}

/// What the historical benchmarks (`historical-perf/`) run across past
/// releases: every handshake kind with an ECDSA P-256 and an RSA-2048 chain,
/// at TLS 1.3, TLS_AES_128_GCM_SHA256 and x25519, which every release there
/// supports.
pub fn historical_handshake_params() -> Vec<Params> {
    HandshakeKind::ALL
        .into_iter()
        .flat_map(|kind| {
            [CertChain::EcdsaP256, CertChain::Rsa2048]
                .map(|c| Params { kind, ..Params::default() }.with_cert(c))
        })
        .collect()
}

/// The throughput benchmark's parameter sets: server authentication,
/// x25519, ECDSA P-256, every TLS 1.3 suite (and with
/// `TLS_BENCH_MATRIX=full` every TLS 1.2 ECDHE-ECDSA suite too).
///
/// With the `historical-perf` feature: TLS_AES_128_GCM_SHA256 only.
pub fn throughput_params() -> Vec<Params> {
    if cfg!(feature = "historical-perf") {
        return vec![Params::default()];
    }
    let protocols: &[Protocol] =
        if full_matrix() { &[Protocol::Tls13, Protocol::Tls12] } else { &[Protocol::Tls13] };
    let base = Params::default();
    protocols.iter().flat_map(|&p| Aead::ALL.map(move |aead| base.with_protocol(p).with_aead(aead))).collect()
}

/// Application-data write sizes of the throughput benchmark, in bytes.
pub const WRITE_SIZES: [usize; 4] = [256, 1024, 4096, 16384];

/// The write sizes the throughput benchmark runs: [`WRITE_SIZES`], or
/// 1 KiB and 16 KiB with the `historical-perf` feature.
pub fn write_sizes() -> &'static [usize] {
    if cfg!(feature = "historical-perf") { &[1024, 16384] } else { &WRITE_SIZES }
}

/// A library id without its version, keeping the backend: the name a
/// library goes by across releases, e.g. `rustls+ring` for
/// `rustls-0.23.46+ring`, `openssl` for `openssl-3.6.3`, `openssl-aws-lc`
/// for `openssl-aws-lc-1.73.0`, `plaintext` for `plaintext`.
pub fn library_family(name: &str) -> String {
    let end = name
        .char_indices()
        .find(|&(i, c)| c == '-' && name[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        .map_or(name.len(), |(i, _)| i);
    match name.split_once('+') {
        Some((_, backend)) if end < name.len() => format!("{}+{backend}", &name[..end]),
        _ => name[..end].to_string(),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_families_drop_the_version_and_keep_the_backend() {
        for (name, family) in [
            ("rustls-0.23.46+ring", "rustls+ring"),
            ("s2n-tls-0.3.47+aws-lc-fips", "s2n-tls+aws-lc-fips"),
            ("openssl-3.6.3", "openssl"),
            ("openssl-aws-lc-1.73.0", "openssl-aws-lc"),
            ("boring-5.4.0+boringssl", "boring+boringssl"),
            ("plaintext", "plaintext"),
        ] {
            assert_eq!(library_family(name), family);
        }
    }
}
