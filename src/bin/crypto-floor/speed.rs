//! Single primitives timed one call at a time through a [`Backend`], with
//! the names and units of `openssl speed`, so that an independent tool can
//! check the floor: ECDSA P-256 signatures and verifications per second
//! (`ecdsap256`), X25519 derivations per second (`ecdhx25519`, the
//! derivation alone: the key pair, the peer key's decoding and the
//! derivation context are made outside the clock
//! ([`Backend::agree_prepared`]), as `openssl speed` makes them before its
//! loop; a handshake's floor times them all, as a library's handshake
//! does them all) and AES-128-GCM sealing of 16 KiB buffers
//! in 1000s of bytes per second (`-evp aes-128-gcm -bytes 16384`), and
//! HMAC-SHA256 of 32 bytes with a 32-byte key, a key-schedule step, in
//! 1000s of bytes per second (`-hmac sha256 -bytes 32`; keyed once and
//! restarted for each HMAC, as `openssl speed` does and TLS 1.2's PRF;
//! TLS 1.3's key schedule keys each step anew, which the handshake floors
//! time).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};

use tls_bench_harness::{
    certs,
    floor::{
        Backend, chain,
        ops::{Hash, Kx, Sig},
    },
    libs::{self, BackendVisitor},
    params::{Aead, CertChain},
};

/// One primitive's rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Speed {
    /// `openssl speed`'s name and column: `ecdsap256 sign`, `ecdsap256
    /// verify`, `ecdhx25519`, `aes-128-gcm 16384`.
    pub name: &'static str,
    /// Operations per second, or for `aes-128-gcm 16384` 1000s of bytes per
    /// second (`openssl speed`'s `k`).
    pub rate: f64,
}

/// The names [`measure`] reports, in order.
pub const NAMES: [&str; 5] =
    ["ecdsap256 sign", "ecdsap256 verify", "ecdhx25519", "aes-128-gcm 16384", "hmac(sha256) 32"];

/// Times each primitive of [`NAMES`] through `B` for about `each` (the
/// clock around every call, the setup of each call outside it). Errors: a
/// primitive failed, or the committed ECDSA-P256 chain is unreadable.
pub fn measure<B: Backend>(each: Duration) -> Result<Vec<Speed>> {
    let files = certs::load(CertChain::EcdsaP256)?;
    let server = chain(&files, true)?;
    let key = B::signing_key(&server.private, Sig::EcdsaP256Sha256)?;
    let msg = [0x5au8; 32];
    let signature = B::sign(&key, Sig::EcdsaP256Sha256, &msg)?;
    let (_, peer) = B::key_gen(Kx::X25519)?;
    let aead = B::aead_key(Aead::Aes128Gcm, &[7u8; 16])?;
    let mut buf = Vec::with_capacity(16384 + 16);

    let sign = timed(each, || B::sign(&key, Sig::EcdsaP256Sha256, &msg).map(drop))?;
    let leaf = B::verify_key(Sig::EcdsaP256Sha256, &server.leaf)?;
    let verify = timed(each, || B::verify(Sig::EcdsaP256Sha256, &leaf, &msg, &signature))?;
    let mut nonce = 0u64;
    let derive = timed_with_setup(
        each,
        || B::key_gen(Kx::X25519).and_then(|(k, _)| B::agree_prepared(Kx::X25519, k, &peer)),
        |derivation| derivation().map(drop),
    )?;
    let seal = timed(each, || {
        buf.clear();
        buf.resize(16384, 0x33);
        nonce += 1;
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&nonce.to_be_bytes());
        B::seal(&aead, n, &[], &mut buf)
    })?;
    let key = [0x11u8; 32];
    // Keyed once, as `openssl speed -hmac` keys its context before its
    // loop: a batch under one key ([`Backend::hmac_same_key`]), per HMAC.
    const BATCH: usize = 64;
    let batch = [&msg[..]; BATCH];
    let hmac = timed(each, || B::hmac_same_key(Hash::Sha256, &key, &batch).map(drop))? / BATCH as f64;
    Ok(vec![
        Speed { name: NAMES[0], rate: 1.0 / sign },
        Speed { name: NAMES[1], rate: 1.0 / verify },
        Speed { name: NAMES[2], rate: 1.0 / derive },
        Speed { name: NAMES[3], rate: 16384.0 / seal / 1e3 },
        Speed { name: NAMES[4], rate: 32.0 / hmac / 1e3 },
    ])
}

/// Seconds per call of `f`, timed call by call for about `each`.
fn timed(each: Duration, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    timed_with_setup(each, || Ok(()), |()| f())
}

/// Seconds per call of `f` on what `setup` made, only `f` timed.
fn timed_with_setup<T>(
    each: Duration,
    mut setup: impl FnMut() -> Result<T>,
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<f64> {
    // One untimed call: first-use initialisation (AWS-LC's, OpenSSL's
    // provider fetches) is not a primitive's cost.
    f(setup()?).context("the first call")?;
    let (mut inside, mut calls) = (Duration::ZERO, 0u64);
    let start = Instant::now();
    while start.elapsed() < each || calls < 10 {
        let input = setup()?;
        let t = Instant::now();
        f(input)?;
        inside += t.elapsed();
        calls += 1;
    }
    ensure!(!inside.is_zero(), "no time measured");
    Ok(inside.as_secs_f64() / calls as f64)
}

/// A backend of this build for [`measure`]: its name ([`Backend::name`])
/// and its measurement.
pub struct Measured {
    /// The implementation and its version.
    pub backend: String,
    /// [`measure`] through it.
    pub measure: fn(Duration) -> Result<Vec<Speed>>,
}

/// The backends of this build's floors ([`tls_bench_harness::libs::crypto_floors`]),
/// as [`libs::visit_floor_backends`] lists them.
pub fn backends() -> Vec<Measured> {
    struct Collect(Vec<Measured>);
    impl BackendVisitor for Collect {
        fn visit<B: Backend>(&mut self) {
            self.0.push(Measured { backend: B::name(), measure: measure::<B> });
        }
    }
    let mut all = Collect(Vec::new());
    libs::visit_floor_backends(&mut all);
    all.0
}
