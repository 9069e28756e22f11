//! Which benchmark ids a Criterion command line selects, read the way
//! Criterion 0.8 reads it (`Criterion::configure_from_args`): the first
//! positional argument is a regular expression searched for in each id
//! (`group/parameters/library`), or with `--exact` the whole id; `--ignored`
//! selects none. The benches use it to configure only the cases the run
//! keeps, and to say so when the filter matches nothing.

use std::fmt;

use anyhow::{Context, Result, bail};
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

/// The longest id Criterion 0.8 prints whole, in bytes: it cuts longer
/// ones to this length and appends `...` in its console output and
/// `--list` (`MAX_TITLE_LEN` in its `report.rs`).
pub const CRITERION_TITLE_MAX: usize = 100;

/// Whether a bench binary's arguments ask for Criterion's listing
/// (`--list`), which the benches print themselves, every id whole.
pub fn wants_list<I: IntoIterator<Item = String>>(args: I) -> bool {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            return false;
        }
        if arg == "--list" {
            return true;
        }
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        }
    }
    false
}

/// Checks the values of Criterion's options that Criterion 0.8 asserts (a
/// panic) rather than refuses, in a bench binary's arguments (without the
/// program name), `--name value` or `--name=value`: `--sample-size` a whole
/// number of at least 10; `--warm-up-time` and `--measurement-time` seconds
/// of at least 1 ns; `--nresamples` at least 1; `--noise-threshold` above
/// 0; `--confidence-level` and `--significance-level` strictly between 0
/// and 1; `--profile-time` at least 1 second (Criterion exits on less, but
/// panics on a value that is not finite).
///
/// Errors: the first bad value, naming the option, the value and what is
/// valid. Options that take no value, or values Criterion checks itself,
/// pass.
pub fn check_options<I: IntoIterator<Item = String>>(args: I) -> Result<()> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ if WITH_VALUE.contains(&arg.as_str()) => (arg.clone(), args.next()),
            _ => continue,
        };
        let Some(value) = value else { continue };
        let float = |v: &str| v.parse::<f64>().ok().filter(|x| x.is_finite());
        let seconds = |v: &str| float(v).and_then(|x| std::time::Duration::try_from_secs_f64(x).ok());
        let valid = match name.as_str() {
            "--sample-size" => value
                .parse::<usize>()
                .is_ok_and(|n| n >= 10)
                .then_some(())
                .ok_or("a whole number of at least 10"),
            "--nresamples" => value
                .parse::<usize>()
                .is_ok_and(|n| n > 0)
                .then_some(())
                .ok_or("a whole number of at least 1"),
            "--warm-up-time" | "--measurement-time" => seconds(&value)
                .is_some_and(|d| d.as_nanos() > 0)
                .then_some(())
                .ok_or("a number of seconds, at least 0.000000001 (1 ns)"),
            "--profile-time" => float(&value)
                .is_some_and(|x| x >= 1.0 && std::time::Duration::try_from_secs_f64(x).is_ok())
                .then_some(())
                .ok_or("a number of seconds, at least 1"),
            "--noise-threshold" => float(&value)
                .is_some_and(|x| x > 0.0)
                .then_some(())
                .ok_or("a number above 0 (e.g. 0.01 for 1%)"),
            "--confidence-level" | "--significance-level" => float(&value)
                .is_some_and(|x| x > 0.0 && x < 1.0)
                .then_some(())
                .ok_or("a number strictly between 0 and 1 (e.g. 0.95)"),
            _ => Ok(()),
        };
        if let Err(what) = valid {
            bail!("{name} {value:?}: valid values are {what}");
        }
    }
    Ok(())
}

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
            (false, Some(f), false) => IdFilter::Regex(Regex::new(&f).with_context(|| {
                format!(
                    "benchmark filter {f:?} is not a regular expression (valid: a regex searched in each \
                     id, group/parameters/library, or an id with --exact; list the ids with --list)"
                )
            })?),
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

    #[test]
    fn refuses_the_option_values_criterion_would_panic_on() {
        let check = |args: &[&str]| check_options(args.iter().map(|s| s.to_string()));
        for good in [
            &["--bench", "--sample-size", "10", "x"][..],
            &["--sample-size=50", "--warm-up-time", "0.5", "--measurement-time=1e-9"],
            &["--nresamples", "1", "--noise-threshold", "0.01", "--confidence-level", "0.95"],
            &["--significance-level=0.05", "--profile-time", "1", "--save-baseline", "5"],
            &["--exact", "--sample-size"],
        ] {
            check(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        }
        for (bad, wanted) in [
            (
                &["--sample-size", "5"][..],
                "--sample-size \"5\": valid values are a whole number of at least 10",
            ),
            (&["--sample-size=abc"], "at least 10"),
            (&["--warm-up-time", "0"], "--warm-up-time \"0\""),
            (&["--measurement-time", "-1"], "1 ns"),
            (&["--measurement-time", "1e-10"], "1 ns"),
            (&["--warm-up-time", "inf"], "seconds"),
            (&["--nresamples", "0"], "at least 1"),
            (&["--noise-threshold", "0"], "above 0"),
            (&["--noise-threshold", "NaN"], "above 0"),
            (&["--confidence-level", "1"], "between 0 and 1"),
            (&["--significance-level=0"], "between 0 and 1"),
            (&["--profile-time", "NaN"], "at least 1"),
        ] {
            let e = check(bad).unwrap_err().to_string();
            assert!(e.contains(wanted), "{bad:?}: {e}");
        }
        assert!(wants_list(["--bench".to_string(), "--list".to_string()]));
        assert!(!wants_list(["--save-baseline".to_string(), "--list".to_string()]));
        assert!(!wants_list(["--bench".to_string()]));
    }
}
