//! Every library of this build over sockets, from the harness's registry
//! ([`tls_bench_harness::libs::registry`]): its own tokio adapter where it
//! has one (the registry's [`tls_bench_harness::libs::Sockets::Adapter`]),
//! else the [`crate::bridge`]; and the one a `--library` names.

use anyhow::Result;
use tls_bench_harness::select;

use crate::{bridge, library::Library, plaintext};

/// Every library of this build over sockets, in the registry's order
/// ([`tls_bench_harness::libs::registry`]), then plaintext TCP.
pub fn libraries() -> Vec<Box<dyn Library>> {
    let mut libs: Vec<Box<dyn Library>> =
        tls_bench_harness::libs::registry().iter().flat_map(|e| adapters(e.name)).collect();
    libs.push(Box::new(plaintext::Plaintext));
    libs
}

/// The adapters of the registry's library `name` ([`tls_bench_harness::libs::Entry::name`]):
/// its native ones ([`native`]), else the [`bridge`] over each of its
/// stacks (whose configurations say whether it can drive them:
/// [`tls_bench_harness::harness::TlsLibrary::configure_threaded`]).
fn adapters(name: &str) -> Vec<Box<dyn Library>> {
    native(name).unwrap_or_else(|| bridged(name, false))
}

/// The native tokio adapters of the registry's library `name`: one line
/// per library with an adapter file here; `None` for the others.
fn native(name: &str) -> Option<Vec<Box<dyn Library>>> {
    match name {
        #[cfg(feature = "s2n-tls")]
        "s2n" => Some(vec![Box::new(crate::s2n::S2n)]),
        #[cfg(feature = "rustls")]
        "rustls" => Some(
            tls_bench_harness::libs::rustls::config::Provider::ALL
                .into_iter()
                .map(|provider| Box::new(crate::rustls::Rustls { provider }) as _)
                .collect(),
        ),
        #[cfg(any(feature = "openssl", feature = "boring"))]
        "openssl" => Some(vec![Box::new(crate::openssl::OpenSsl)]),
        _ => None,
    }
}

/// The [`bridge`] over each stack of the registry's library `name`, its
/// name suffixed ([`bridge::SUFFIX`]) when `suffixed`.
fn bridged(name: &str, suffixed: bool) -> Vec<Box<dyn Library>> {
    let entries = tls_bench_harness::libs::registry();
    let stacks = entries.iter().filter(|e| e.name == name).flat_map(|e| (e.stacks)());
    stacks.map(|s| Box::new(bridge::Bridge { name: s.name(), suffixed }) as Box<dyn Library>).collect()
}

/// The [`bridge`] over the stacks of the libraries with a native adapter,
/// named `<library>+bridge`: what the bridge costs beside the native
/// adapter (`serve --library openssl+bridge`, `compare --sockets
/// --bridge`). Not in [`libraries`]; [`find`] finds them.
pub fn bridged_twins() -> Vec<Box<dyn Library>> {
    let entries = tls_bench_harness::libs::registry();
    entries.iter().filter(|e| native(e.name).is_some()).flat_map(|e| bridged(e.name, true)).collect()
}

/// Why the in-memory library `name` has no socket counterpart, if it is
/// one of this build ([`tls_bench_harness::libs::tls_libraries`]) without an adapter
/// ([`adapters`]): the reason of a named skip. `None` for a name no
/// library of the build has, or one with an adapter.
pub fn no_adapter(name: &str) -> Option<String> {
    let built = tls_bench_harness::libs::tls_libraries().iter().any(|l| l.name() == name);
    let adapted = libraries().iter().any(|l| l.name() == name);
    (built && !adapted).then(|| format!("{name} has no socket adapter (src/sockets/)"))
}

/// The one library `selector` names ([`tls_bench_harness::select`]): its
/// whole id, its family (`rustls+ring`), or the name before the backend
/// (`rustls`, which must then be the only one); with [`bridge::SUFFIX`], the bridge over a
/// library with a native adapter (`openssl+bridge`, [`bridged_twins`]).
/// Errors: no library or several match; the message lists the valid names.
pub fn find(selector: &str) -> Result<Box<dyn Library>> {
    let mut libs = libraries();
    if selector.ends_with(bridge::SUFFIX) {
        libs.extend(bridged_twins());
    }
    let names: Vec<String> = libs.iter().map(|l| l.name()).collect();
    let i = select::one(&names, selector)?;
    Ok(libs.into_iter().nth(i).expect("index in range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library has a native adapter here exactly when its registry entry
    /// says so ([`tls_bench_harness::libs::Offers::sockets`]).
    #[test]
    fn the_adapters_are_those_the_registry_states() {
        use tls_bench_harness::libs::Sockets;
        for e in tls_bench_harness::libs::registry() {
            assert_eq!(native(e.name).is_some(), e.offers.sockets == Sockets::Adapter, "{}", e.name);
        }
    }

    #[test]
    fn every_library_of_the_registry_has_its_adapter_here() {
        for lib in tls_bench_harness::libs::tls_libraries() {
            assert_eq!(no_adapter(&lib.name()), None);
            assert!(find(&lib.name()).is_ok(), "{}", lib.name());
        }
        assert_eq!(no_adapter("nosuch-1.0"), None, "not a library of the build: no adapter to miss");
    }
}
