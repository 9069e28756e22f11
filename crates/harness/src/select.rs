//! Choosing libraries by name: the one rule behind every tool's `--library`,
//! `--libraries` and `--servers` (compare, memory, small-writes,
//! crypto-floor, the socket and HTTPS tools).
//!
//! A selector names a library by
//! - its whole id: `rustls-0.23.46+ring`, `openssl-3.6.3`;
//! - its family, the id without its version ([`library_family`]):
//!   `rustls+ring`, `openssl`, `openssl-aws-lc`;
//! - the family's name without its backend: `rustls` (every rustls of the
//!   build, one per crypto provider).
//!
//! Names are compared exactly (ids are lower case).

use std::fmt;

use crate::bench::library_family;

/// Whether `selector` names the library `id` (see the module's rule).
pub fn matches(id: &str, selector: &str) -> bool {
    let family = library_family(id);
    selector == id || selector == family || family.split_once('+').is_some_and(|(bare, _)| selector == bare)
}

/// A selector that names no library, or several where one was wanted.
/// Its message lists every valid name: each library's family with its id,
/// `rustls+ring (rustls-0.23.46+ring)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// The selector as given.
    pub selector: String,
    /// Whether it named several libraries ([`one`]) rather than none.
    pub several: bool,
    /// Every library it could have named: `family (id)`.
    pub valid: Vec<String>,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.several {
            write!(f, "library {:?} names several of this build; pick one of: ", self.selector)?;
        } else {
            write!(f, "unknown library {:?}; this build has: ", self.selector)?;
        }
        f.write_str(&self.valid.join(", "))
    }
}

impl std::error::Error for Unknown {}

fn unknown<S: AsRef<str>>(ids: &[S], selector: &str, several: bool) -> Unknown {
    let valid = ids.iter().map(|id| format!("{} ({})", library_family(id.as_ref()), id.as_ref())).collect();
    Unknown { selector: selector.to_string(), several, valid }
}

/// The ids of `ids` that `selectors` name, each once, in the order of
/// `ids`; every id when `selectors` is empty. Errors: the first selector
/// that names none of them.
pub fn select<'a, S: AsRef<str>>(ids: &'a [S], selectors: &[String]) -> Result<Vec<&'a str>, Unknown> {
    if let Some(s) = selectors.iter().find(|s| !ids.iter().any(|id| matches(id.as_ref(), s))) {
        return Err(unknown(ids, s, false));
    }
    Ok(ids
        .iter()
        .map(AsRef::as_ref)
        .filter(|id| selectors.is_empty() || selectors.iter().any(|s| matches(id, s)))
        .collect())
}

/// The index in `ids` of the one library `selector` names. Errors: it
/// names none, or several (`rustls` where both providers are built).
pub fn one<S: AsRef<str>>(ids: &[S], selector: &str) -> Result<usize, Unknown> {
    let found: Vec<usize> = (0..ids.len()).filter(|&i| matches(ids[i].as_ref(), selector)).collect();
    match found[..] {
        [i] => Ok(i),
        [] => Err(unknown(ids, selector, false)),
        _ => Err(unknown(ids, selector, true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selector_is_an_id_a_family_or_a_bare_name() {
        for (id, sel, want) in [
            ("rustls-0.23.46+ring", "rustls", true),
            ("rustls-0.23.46+ring", "rustls+ring", true),
            ("rustls-0.23.46+ring", "rustls+aws-lc-rs", false),
            ("rustls-0.23.46+ring", "rustls-0.23.46+ring", true),
            ("rustls-0.23.46+ring", "rustls-0.23.46", false),
            ("s2n-tls-0.3.47+aws-lc", "s2n-tls", true),
            ("openssl-3.6.3", "openssl", true),
            ("openssl-aws-lc-1.73.0", "openssl", false),
            ("openssl-aws-lc-1.73.0", "openssl-aws-lc", true),
            ("plaintext", "plaintext", true),
            ("plaintext", "Plaintext", false),
        ] {
            assert_eq!(matches(id, sel), want, "{sel} for {id}");
        }
    }

    #[test]
    fn select_keeps_the_build_order_each_once_and_names_the_valid() {
        let ids =
            ["s2n-tls-0.3.47+aws-lc", "rustls-0.23.46+aws-lc-rs", "rustls-0.23.46+ring", "openssl-3.6.3"];
        let picked = select(&ids, &["openssl".into(), "rustls".into(), "rustls+ring".into()]).unwrap();
        assert_eq!(picked, ["rustls-0.23.46+aws-lc-rs", "rustls-0.23.46+ring", "openssl-3.6.3"]);
        assert_eq!(select(&ids, &[]).unwrap(), ids);
        let err = select(&ids, &["openssl".into(), "nosuch".into()]).unwrap_err();
        assert_eq!(err.selector, "nosuch");
        assert!(
            err.to_string().starts_with(
                "unknown library \"nosuch\"; this build has: s2n-tls+aws-lc (s2n-tls-0.3.47+aws-lc), "
            ) && err.to_string().ends_with(", openssl (openssl-3.6.3)"),
            "{err}"
        );
    }

    #[test]
    fn one_refuses_none_and_several() {
        let ids = ["rustls-0.23.46+aws-lc-rs", "rustls-0.23.46+ring"];
        assert_eq!(one(&ids, "rustls+ring"), Ok(1));
        assert!(one(&ids, "rustls").unwrap_err().to_string().starts_with("library \"rustls\" names several"));
        assert!(!one(&ids, "gnutls").unwrap_err().several);
    }
}
