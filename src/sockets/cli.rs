//! The options `serve` and `load` share: the parameter set by its names
//! (those of the benchmark ids) and durations.

use std::time::Duration;

use anyhow::{Result, anyhow, bail};

use crate::params::{CertChain, CipherSuite, HandshakeKind, KxGroup, Params};

/// The parameter set, by the names of the benchmark ids.
#[derive(clap::Args, Clone, Debug)]
pub struct ParamsArgs {
    /// Handshake kind: server-auth, mTLS, resumption.
    #[arg(long, default_value = "server-auth")]
    pub kind: String,
    /// Cipher suite, IANA name (it fixes the TLS version), e.g.
    /// TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256.
    #[arg(long, default_value = "TLS_AES_128_GCM_SHA256")]
    pub suite: String,
    /// Key exchange group, IANA name: x25519, secp256r1, secp384r1,
    /// X25519MLKEM768.
    #[arg(long, default_value = "x25519")]
    pub group: String,
    /// Certificate chain: ECDSA-P256, ECDSA-P384, RSA-2048, RSA-3072,
    /// RSA-4096.
    #[arg(long, default_value = "ECDSA-P256")]
    pub cert: String,
}

/// The value of `all` whose name (its `Display`) is `given`, any case.
/// Errors: none is, with the valid names.
fn named<T: Copy + std::fmt::Display>(what: &str, given: &str, all: &[T]) -> Result<T> {
    all.iter().copied().find(|v| v.to_string().eq_ignore_ascii_case(given)).ok_or_else(|| {
        let valid: Vec<String> = all.iter().map(|v| v.to_string()).collect();
        anyhow!("unknown {what} {given:?}; valid: {}", valid.join(", "))
    })
}

impl ParamsArgs {
    /// The parameter set (TLS over TCP). Errors: an unknown name (listing
    /// the valid ones), or a combination no TLS version allows (a suite
    /// for another key type than the chain's, a group the version lacks).
    pub fn params(&self) -> Result<Params> {
        let params = Params {
            kind: named("handshake kind", &self.kind, &HandshakeKind::ALL)?,
            suite: named("cipher suite", &self.suite, &CipherSuite::ALL)?,
            group: named("group", &self.group, &KxGroup::ALL)?,
            cert: named("certificate chain", &self.cert, &CertChain::ALL)?,
            datagram: false,
        };
        params.validate().map_err(|why| anyhow!("{params}: {why}"))?;
        Ok(params)
    }
}

/// The cores this process may use (at least 1): the default thread count.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A duration written as a number and a unit: `500ms`, `10s`, `2m`.
/// Errors: no number, an unknown unit, zero.
pub fn duration(text: &str) -> Result<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 =
        number.parse().map_err(|_| anyhow!("{text:?} is not a duration; write e.g. 500ms, 10s, 2m"))?;
    let secs = match unit {
        "ms" => n / 1e3,
        "s" | "" => n,
        "m" => n * 60.0,
        _ => bail!("{text:?}: unknown unit {unit:?}; valid: ms, s, m"),
    };
    if !(secs > 0.0 && secs <= 86_400.0) {
        bail!("{text:?}: must be more than 0 and at most 24 h");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The same for clap (its value parsers give `String` errors).
pub fn duration_arg(text: &str) -> Result<Duration, String> {
    duration(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_names_parse_or_say_what_is_valid() {
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("2m").unwrap(), Duration::from_secs(120));
        assert!(duration("0s").is_err());
        assert!(duration("5h").unwrap_err().to_string().contains("valid: ms, s, m"));
        let mut args = ParamsArgs {
            kind: "mtls".into(),
            suite: "TLS_AES_256_GCM_SHA384".into(),
            group: "secp256r1".into(),
            cert: "ecdsa-p256".into(),
        };
        assert_eq!(args.params().unwrap().kind, HandshakeKind::MutualAuth);
        args.group = "x448".into();
        let e = args.params().unwrap_err().to_string();
        assert!(e.contains("unknown group \"x448\"") && e.contains("X25519MLKEM768"), "{e}");
    }
}
