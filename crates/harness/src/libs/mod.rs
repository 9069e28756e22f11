//! Every library, one folder each (or one file: the plaintext floor), and
//! the registry the benchmarks, tools and tests take them from. A folder
//! holds a library's configuration from parameters (the objects every
//! runner uses: the in-memory stacks here, the socket runner's adapters),
//! its stack over the in-memory transport, its ALPN and SNI, its crypto
//! floor and the compat modules of its past releases, with the version
//! cfgs kept inside it. A library is in the registry when its cargo
//! feature is on.

#[cfg(feature = "gnutls")]
pub mod gnutls;
#[cfg(feature = "mbedtls")]
pub mod mbedtls;
#[cfg(any(openssl_crate, feature = "boring"))]
pub mod openssl;
#[cfg(feature = "plaintext")]
pub mod plaintext;
#[cfg(feature = "rustls")]
pub mod rustls;
#[cfg(feature = "s2n-tls")]
pub mod s2n;
#[cfg(feature = "wolfssl")]
pub mod wolfssl;

use crate::{harness::TlsLibrary, params::Protocol};

/// One library in the registry: what it offers this build.
pub struct Entry {
    /// Its folder under `src/libs/`: `s2n`, `rustls`, `openssl` (OpenSSL,
    /// AWS-LC under the `openssl` crate, or BoringSSL).
    pub name: &'static str,
    /// Its stacks over the in-memory transport, in id order (rustls: one
    /// per crypto provider). DTLS and gather writes are theirs to offer:
    /// [`TlsLibrary::configure_datagram`] and
    /// [`TlsLibrary::configure_vectored`] name what they cannot do.
    pub stacks: fn() -> Vec<Box<dyn TlsLibrary>>,
    /// The crypto floors of the implementations it calls ([`crate::floor`],
    /// feature `crypto-floor`), as [`TlsLibrary::crypto_floor`] names them;
    /// empty where none is built or checked.
    pub floors: fn() -> Vec<Box<dyn TlsLibrary>>,
    /// What its stacks offer in this build, stated once: the tests, tools
    /// and CI read it instead of keeping lists of library names.
    pub offers: Offers,
}

/// What a library offers, as its registry entry states it. The tests hold
/// each stack to it: what it claims runs, what it does not is a named skip
/// (tests/dtls.rs, tests/registry.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offers {
    /// The TLS versions its stacks negotiate (RFC 5246, RFC 8446).
    pub tls: &'static [Protocol],
    /// The DTLS versions its stacks negotiate over the in-memory datagram
    /// transport (RFC 6347, RFC 9147; [`TlsLibrary::configure_datagram`]);
    /// empty: TLS over a byte stream only.
    pub dtls: &'static [Protocol],
    /// Whether a message of several buffers goes out as one gather write
    /// ([`TlsLibrary::configure_vectored`]: the `small-writes` vectored
    /// strategy).
    pub vectored: bool,
    /// How the socket runner (crates/sockets) drives it over OS sockets.
    pub sockets: Sockets,
    /// The build variant of its own (`benches/src/variants.rs`), or `None`
    /// when the default build has it.
    pub variant: Option<&'static str>,
    /// Its licence, as SPDX names it.
    pub licence: &'static str,
}

/// How the socket runner drives a library over OS sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// Its own tokio adapter (tokio-rustls, s2n-tls-tokio, tokio-openssl,
    /// tokio-boring), in crates/sockets/src/.
    Adapter,
    /// The bridge: its in-memory stack over a socket, in the runner's own
    /// task (crates/sockets/src/bridge.rs).
    Bridge,
}

/// TLS 1.2 and 1.3, what every library here negotiates.
pub const TLS_12_13: &[Protocol] = &[Protocol::Tls12, Protocol::Tls13];

/// What the library whose stack is named `name` offers (its registry
/// entry's [`Offers`]); `None` for a name no stack of this build has (the
/// plaintext floor, a crypto floor, a typo).
pub fn offers(name: &str) -> Option<Offers> {
    registry().into_iter().find(|e| (e.stacks)().iter().any(|s| s.name() == name)).map(|e| e.offers)
}

/// The registry: one line per library, behind its feature, in id order.
/// Every list below is read from it; the socket runner maps each
/// [`Entry::name`] to its adapter (a library without one is a named
/// skip there).
pub fn registry() -> Vec<Entry> {
    vec![
        #[cfg(feature = "s2n-tls")]
        s2n::ENTRY,
        #[cfg(feature = "rustls")]
        rustls::ENTRY,
        #[cfg(any(feature = "openssl", feature = "boring"))]
        openssl::ENTRY,
        #[cfg(feature = "gnutls")]
        gnutls::ENTRY,
        #[cfg(feature = "wolfssl")]
        wolfssl::ENTRY,
        #[cfg(feature = "mbedtls")]
        mbedtls::ENTRY,
    ]
}

/// Every TLS library built (one per rustls provider), in id order.
pub fn tls_libraries() -> Vec<Box<dyn TlsLibrary>> {
    registry().iter().flat_map(|e| (e.stacks)()).collect()
}

/// The crypto floors of this build's crypto implementations, each once
/// (aws-lc-rs is both s2n-tls's and rustls's), in the order the registry
/// first names them: aws-lc-rs, *ring*, libcrypto through the `openssl`
/// crate, BoringSSL's through the `boring` crate, wolfCrypt. Not in [`all`]: `compare`
/// and the tests ask for them.
pub fn crypto_floors() -> Vec<Box<dyn TlsLibrary>> {
    let mut floors: Vec<Box<dyn TlsLibrary>> = Vec::new();
    for floor in registry().iter().flat_map(|e| (e.floors)()) {
        if !floors.iter().any(|f| f.name() == floor.name()) {
            floors.push(floor);
        }
    }
    floors
}

/// s2n-tls under each security policy that negotiates exactly one of
/// `params` but is not the one the benchmarks choose for it
/// ([`s2n::policy::policies_for`]): what choosing another policy costs. Empty
/// without the `s2n-tls` feature. Errors: probing failed (a broken chain).
#[cfg_attr(not(feature = "s2n-tls"), allow(unused_variables))]
pub fn s2n_policy_alternatives(
    params: &[crate::params::Params],
) -> Result<Vec<Box<dyn TlsLibrary>>, crate::error::ConfigureError> {
    #[allow(unused_mut)]
    let mut policies: Vec<&'static str> = Vec::new();
    #[cfg(feature = "s2n-tls")]
    for p in params {
        for policy in s2n::policy::policies_for(p)?.into_iter().skip(1) {
            if !policies.contains(&policy) {
                policies.push(policy);
            }
        }
    }
    #[cfg(feature = "s2n-tls")]
    return Ok(policies
        .into_iter()
        .map(|policy| Box::new(s2n::stack::S2nTlsPolicy { policy }) as Box<dyn TlsLibrary>)
        .collect());
    #[cfg(not(feature = "s2n-tls"))]
    Ok(Vec::new())
}

/// The plaintext floor (feature `plaintext`), replaying the handshake of the first TLS library
/// (of [`tls_libraries`]) that supports the parameters.
#[cfg(feature = "plaintext")]
pub fn plaintext() -> plaintext::Plaintext {
    plaintext::Plaintext { references: tls_libraries() }
}

/// Every TLS library, then the plaintext floor if built: what the
/// benchmarks run.
pub fn all() -> Vec<Box<dyn TlsLibrary>> {
    #[allow(unused_mut)]
    let mut libs = tls_libraries();
    #[cfg(feature = "plaintext")]
    libs.push(Box::new(plaintext()));
    libs
}

/// Draws the protocol's random bytes from a constant where a library
/// allows it: rustls from 0.22 ([`rustls::config::fix_random`]), so that
/// repeated instruction counts take the same paths. Other libraries, and
/// rustls 0.20/0.21, cannot: for them it changes nothing. For instruction
/// counts only; never in the wall-time benchmarks.
pub fn fix_random() {
    #[cfg(all(feature = "rustls", not(rustls_0_21)))]
    rustls::config::fix_random();
}

/// What runs over each crypto implementation of this build's floors
/// ([`visit_floor_backends`]), generic over its [`crate::floor::Backend`].
#[cfg(feature = "crypto-floor")]
pub trait BackendVisitor {
    /// Called once per backend.
    fn visit<B: crate::floor::Backend>(&mut self);
}

/// Calls `v` with each crypto implementation this build's floors run on,
/// in the order of [`crypto_floors`]: aws-lc-rs (where the library under
/// test links it, not on the FIPS provider), *ring* (with rustls), libcrypto
/// through the `openssl` crate, BoringSSL's through the `boring` crate,
/// wolfCrypt (with wolfSSL), Mbed TLS's libmbedcrypto, nettle and GnuTLS's
/// crypto API (with GnuTLS).
#[cfg(feature = "crypto-floor")]
#[allow(unused_variables)]
pub fn visit_floor_backends(v: &mut impl BackendVisitor) {
    #[cfg(all(aws_lc_rs_floor, not(tls_bench_rustls_fips)))]
    v.visit::<crate::floor::aws_lc_rs::AwsLcRs>();
    #[cfg(all(feature = "rustls", not(tls_bench_rustls_fips)))]
    v.visit::<rustls::ring::Ring>();
    #[cfg(openssl_crate)]
    v.visit::<openssl::floor::ossl::Ossl>();
    #[cfg(feature = "boring")]
    v.visit::<openssl::floor::boringssl::BoringSsl>();
    #[cfg(feature = "wolfssl")]
    v.visit::<wolfssl::floor::WolfCrypt>();
    #[cfg(feature = "mbedtls")]
    v.visit::<mbedtls::floor::MbedCrypto>();
    #[cfg(feature = "gnutls")]
    v.visit::<gnutls::floor::GnuTlsCrypto>();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every floor of the list is visited, once, and nothing else: a
    /// library's floor missing from [`visit_floor_backends`] escapes
    /// `crypto-floor speed` and the backend tests.
    #[cfg(feature = "crypto-floor")]
    #[test]
    fn the_backends_visited_are_the_floors_listed() {
        struct Names(Vec<String>);
        impl BackendVisitor for Names {
            fn visit<B: crate::floor::Backend>(&mut self) {
                self.0.push(crate::floor::floor_name(&B::name()));
            }
        }
        let mut visited = Names(Vec::new());
        visit_floor_backends(&mut visited);
        let mut listed: Vec<String> = crypto_floors().iter().map(|f| f.name()).collect();
        let mut visited = visited.0;
        listed.sort();
        visited.sort();
        assert_eq!(visited, listed);
    }

    #[test]
    fn the_lists_come_from_the_registry_each_floor_once() {
        let stacks: usize = registry().iter().map(|e| (e.stacks)().len()).sum();
        assert_eq!(tls_libraries().len(), stacks);
        let names: Vec<String> = crypto_floors().iter().map(|f| f.name()).collect();
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "a floor listed twice: {names:?}");
        // Every library's own floor, where it names one, is in the list.
        for lib in tls_libraries() {
            if let Some(floor) = lib.crypto_floor() {
                assert!(names.contains(&floor), "{}: {floor} not in {names:?}", lib.name());
            }
        }
    }

    /// Each stack configures what its entry's [`Offers`] claims and names
    /// what it does not as unsupported (secp256r1: FIPS builds refuse
    /// x25519): the tests and tools that read the registry can trust it.
    #[test]
    fn each_stack_does_what_its_entry_offers() {
        use crate::{
            error::ConfigureError,
            params::{KxGroup, Params},
        };
        let base = Params { group: KxGroup::Secp256r1, ..Params::default() };
        let claim = |name: &str,
                     what: String,
                     claimed: bool,
                     got: Result<Box<dyn crate::harness::Configured>, ConfigureError>| {
            match got {
                Ok(_) => assert!(claimed, "{name}: {what} runs; its entry does not offer it"),
                Err(ConfigureError::Unsupported(why)) => {
                    assert!(!claimed, "{name}: {what} offered, but unsupported: {why}")
                }
                Err(e) => panic!("{name}: {what}: {e}"),
            }
        };
        for entry in registry() {
            for stack in (entry.stacks)() {
                let name = stack.name();
                let o = entry.offers;
                assert_eq!(offers(&name), Some(o), "{name}");
                for p in Protocol::ALL {
                    claim(
                        &name,
                        format!("{p:?}"),
                        o.tls.contains(&p),
                        stack.configure(&base.with_protocol(p)),
                    );
                }
                for p in Protocol::DATAGRAM {
                    let params = base.with_protocol(p);
                    claim(&name, format!("{p:?}"), o.dtls.contains(&p), stack.configure_datagram(&params));
                }
                claim(&name, "a gather write".into(), o.vectored, stack.configure_vectored(&base));
                assert!(!o.licence.is_empty() && o.variant != Some("default"), "{name}: {o:?}");
            }
        }
    }
}
