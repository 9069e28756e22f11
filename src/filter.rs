//! Which benchmark ids a Criterion command line selects, read the way
//! Criterion 0.8 reads it (`Criterion::configure_from_args`): the first
//! positional argument is a regular expression searched for in each id
//! (`group/parameters/library`), or with `--exact` the whole id; `--ignored`
//! selects none. The benches use it to configure only the cases the run
//! keeps, and to say so when the filter matches nothing.

use std::fmt;

use anyhow::{Context, Result};
use regex::Regex;

/// Criterion's options that take a value (long and short names): their
/// value is not the filter.
const WITH_VALUE: &[&str] = &[
    "-c",
    "--color",
    "--colour",
    "-s",
    "--save-baseline",
    "-b",
    "--baseline",
    "--baseline-lenient",
    "--format",
    "--profile-time",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--plotting-backend",
    "--output-format",
];

/// The ids a command line selects.
#[derive(Clone, Debug)]
pub enum IdFilter {
    /// No filter: every id.
    All,
    /// Ids in which the regular expression finds a match.
    Regex(Regex),
    /// The one id equal to the text (`--exact`).
    Exact(String),
    /// No id (`--ignored`).
    None,
}

impl IdFilter {
    /// The filter of a bench binary's arguments (without the program name),
    /// e.g. `["--bench", "handshake/.*ECDSA"]`.
    ///
    /// Errors: a filter that is not a valid regular expression (Criterion
    /// would panic on it later).
    pub fn from_args<I: IntoIterator<Item = String>>(args: I) -> Result<IdFilter> {
        let (mut filter, mut exact, mut ignored) = (None, false, false);
        let mut args = args.into_iter();
        let mut only_positional = false;
        while let Some(arg) = args.next() {
            if only_positional || !arg.starts_with('-') || arg == "-" {
                filter.get_or_insert(arg);
            } else if arg == "--" {
                only_positional = true;
            } else if arg == "--exact" {
                exact = true;
            } else if arg == "--ignored" {
                ignored = true;
            } else if WITH_VALUE.contains(&arg.as_str()) {
                args.next();
            }
        }
        Ok(match (ignored, filter, exact) {
            (true, _, _) => IdFilter::None,
            (false, None, _) => IdFilter::All,
            (false, Some(f), true) => IdFilter::Exact(f),
            (false, Some(f), false) => {
                IdFilter::Regex(Regex::new(&f).with_context(|| format!("benchmark filter {f:?}"))?)
            }
        })
    }

    /// Whether `id` is selected.
    pub fn matches(&self, id: &str) -> bool {
        match self {
            IdFilter::All => true,
            IdFilter::Regex(r) => r.is_match(id),
            IdFilter::Exact(e) => id == e,
            IdFilter::None => false,
        }
    }

    /// Whether the command line named a filter (a regular expression or an
    /// exact id).
    pub fn is_given(&self) -> bool {
        matches!(self, IdFilter::Regex(_) | IdFilter::Exact(_))
    }
}

impl fmt::Display for IdFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdFilter::All => f.write_str("no filter"),
            IdFilter::Regex(r) => write!(f, "filter {:?}", r.as_str()),
            IdFilter::Exact(e) => write!(f, "exact id {e:?}"),
            IdFilter::None => f.write_str("--ignored"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(args: &[&str]) -> IdFilter {
        IdFilter::from_args(args.iter().map(|s| s.to_string())).unwrap()
    }

    #[test]
    fn reads_the_filter_as_criterion_does() {
        let id = "handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/rustls-0.23.46+ring";
        assert!(filter(&["--bench"]).matches(id));
        assert!(filter(&["--bench", "ECDSA-P256/rustls"]).matches(id));
        assert!(!filter(&["--bench", "RSA-2048"]).matches(id));
        // Option values are not the filter.
        assert!(filter(&["--bench", "--sample-size", "10", "--save-baseline", "RSA", "--test"]).matches(id));
        assert!(!filter(&["--bench", "--measurement-time", "1", "RSA"]).matches(id));
        assert!(filter(&["--bench", "--measurement-time=1", "x25519"]).matches(id));
        assert!(filter(&["--bench", "--exact", id]).matches(id));
        assert!(!filter(&["--bench", "--exact", "handshake/"]).matches(id));
        assert!(!filter(&["--bench", "--ignored", "handshake"]).matches(id));
        assert!(filter(&["--bench", "handshake"]).is_given());
        assert!(!filter(&["--bench", "--test"]).is_given());
        assert!(IdFilter::from_args(["(".to_string()]).is_err());
    }
}
