//! What one run did to each release it measured, the summary printed at its
//! end, and whether it ends in success. Only this run counts: a release kept
//! as failed by an earlier run does not fail a later one.

use std::fmt::Write as _;

use anyhow::{Result, bail};

use crate::releases::Release;

/// One release in one run: how many of its rounds measured it and why the
/// others failed (one reason per failed round, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub release: Release,
    /// Rounds that ran every benchmark and kept their figures.
    pub measured: u32,
    /// Why each failed round failed (build or run errors).
    pub failures: Vec<String>,
}

impl Outcome {
    /// A release not run yet.
    pub fn new(release: &Release) -> Outcome {
        Outcome { release: release.clone(), measured: 0, failures: Vec::new() }
    }

    fn failed(&self) -> bool {
        !self.failures.is_empty()
    }
}

/// The lines printed at the end of a run: how many releases it measured,
/// then one line per release with a failed round, naming each distinct
/// reason. Each line ends in a newline.
pub fn summary(outcomes: &[Outcome]) -> Result<String> {
    let measured = outcomes.iter().filter(|o| o.measured > 0).count();
    let failed = outcomes.iter().filter(|o| o.failed()).count();
    let mut s = format!(
        "historical-perf: {measured} of {} releases measured, {failed} with failures\n",
        outcomes.len()
    );
    for o in outcomes.iter().filter(|o| o.failed()) {
        let mut reasons: Vec<&str> = o.failures.iter().map(String::as_str).collect();
        reasons.dedup();
        let rounds = o.measured as usize + o.failures.len();
        let which =
            if rounds > 1 { format!(" ({} of {rounds} rounds)", o.failures.len()) } else { String::new() };
        writeln!(s, "historical-perf: FAILED {}{which}: {}", o.release, reasons.join(" | "))?;
    }
    Ok(s)
}

/// Success unless the run measured nothing (every release failed), or a
/// release named with `--versions` (`named`) had a failed round. Errors
/// name the releases; [`summary`] gives the reasons.
pub fn verdict(outcomes: &[Outcome], named: bool) -> Result<()> {
    let failed: Vec<String> = outcomes.iter().filter(|o| o.failed()).map(|o| o.release.to_string()).collect();
    let mut why = Vec::new();
    if outcomes.iter().all(|o| o.measured == 0) {
        why.push("nothing was measured");
    }
    if named && !failed.is_empty() {
        why.push("release(s) asked for with --versions failed");
    }
    if !why.is_empty() {
        bail!("{}: {}", why.join(" and "), failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use semver::Version;

    use super::*;
    use crate::releases::Library;

    fn outcome(patch: u64, measured: u32, failures: &[&str]) -> Outcome {
        let release = Release { library: Library::Rustls, version: Version::new(0, 23, patch) };
        Outcome { release, measured, failures: failures.iter().map(|f| f.to_string()).collect() }
    }

    #[test]
    fn a_run_that_measured_nothing_fails() {
        assert!(verdict(&[], false).is_err());
        let all_failed = [outcome(1, 0, &["build failed"]), outcome(2, 0, &["run failed"])];
        let err = verdict(&all_failed, false).unwrap_err().to_string();
        assert!(err.contains("nothing was measured") && err.contains("rustls 0.23.1"), "{err}");
    }

    #[test]
    fn a_named_release_that_failed_fails_the_run_a_default_one_does_not() {
        let some_failed = [outcome(1, 1, &[]), outcome(2, 0, &["build failed"])];
        assert!(verdict(&some_failed, false).is_ok());
        let err = verdict(&some_failed, true).unwrap_err().to_string();
        assert!(err.contains("--versions") && err.contains("rustls 0.23.2"), "{err}");
        // One failed round of two is a failure of a named release too.
        assert!(verdict(&[outcome(1, 1, &["noise"])], true).is_err());
        assert!(verdict(&[outcome(1, 2, &[])], true).is_ok());
    }

    #[test]
    fn the_summary_names_each_failure_with_its_reason() {
        let s = summary(&[outcome(1, 2, &[]), outcome(2, 1, &["x failed", "x failed"])]).unwrap();
        assert!(s.starts_with("historical-perf: 2 of 2 releases measured, 1 with failures\n"), "{s}");
        assert!(s.contains("FAILED rustls 0.23.2 (2 of 3 rounds): x failed\n"), "{s}");
        assert!(!s.contains("0.23.1:"), "{s}");
    }
}
