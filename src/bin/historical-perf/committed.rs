//! The committed results and graphs: `<root>/data/<library>/<release>.json`
//! (the kept results, as [`ReleaseResult`]) and `<root>/graphs/<library>/*.svg`
//! drawn from exactly those, `<root>` being `historical-perf/` by default.
//! They change only on request (`--update-committed`) and only to a complete
//! set: a kept, measured, non-quick result of every release in the library's
//! default selection. Anything missing is an error before a file is touched.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::{
    files::{files_with, remove_others},
    plot,
    releases::{self, Library, Release},
    results::{self, Kept, ReleaseResult},
    suite::Suite,
};

/// Where the committed results of every library are (`<root>/data`).
pub fn results_dir(root: &Path) -> PathBuf {
    root.join("data")
}

/// Where `library`'s committed graphs are (`<root>/graphs/<library>`).
pub fn graphs_dir(root: &Path, library: Library) -> PathBuf {
    root.join("graphs").join(library.to_string())
}

/// The releases a complete set of `library` holds: its default selection
/// today (read from the crates.io index, see [`releases::fetch_index`]).
pub fn default_releases(library: Library) -> Result<Vec<Release>> {
    let versions = releases::fetch_versions(library.crate_name())?;
    Ok(releases::default_selection(library, &versions, false))
}

/// Why `kept` cannot stand for `release` in a committed set (`None`: it
/// can): no result, a `--quick` one, a failed one, or one of another crate
/// version than the selection takes.
pub fn gap(release: &Release, kept: Option<&ReleaseResult>) -> Option<String> {
    let label = release.label();
    let Some(k) = kept else { return Some(format!("{label} (no kept result)")) };
    if k.quick {
        return Some(format!("{label} (only a --quick result, never committed)"));
    }
    if let Some(why) = &k.failure {
        return Some(format!("{label} (failed: {why})"));
    }
    if k.crate_version != release.version.to_string() {
        return Some(format!(
            "{label} (kept from crate {}, the selection takes {})",
            k.crate_version, release.version
        ));
    }
    None
}

/// The kept results under `source` of every release in `wanted` (one
/// library, in order), with their releases. Releases in `measuring` (about
/// to be measured by the run asking) are skipped, for a check before the
/// run. Errors: a kept file that cannot be read, or gaps (see [`gap`]),
/// each named.
pub fn complete_set(
    library: Library,
    wanted: &[Release],
    source: &Path,
    measuring: &[Release],
) -> Result<Vec<(Release, ReleaseResult)>> {
    let mut set = Vec::new();
    let mut gaps = Vec::new();
    for release in wanted.iter().filter(|r| !measuring.contains(r)) {
        let kept = ReleaseResult::kept(source, release)?;
        match gap(release, kept.as_ref()) {
            Some(g) => gaps.push(g),
            None => set.extend(kept.map(|k| (release.clone(), k))),
        }
    }
    if !gaps.is_empty() {
        bail!(
            "{library} has no complete set under {}: {}",
            source.join(library.to_string()).display(),
            gaps.join(", ")
        );
    }
    Ok(set)
}

/// Checks, before a run with `--update-committed` that will measure
/// `measuring`, that its results will complete each library's set under
/// `source`: the releases of the default selection it will not measure must
/// be kept already. Errors: as [`complete_set`].
pub fn precheck(libraries: &[Library], source: &Path, measuring: &[Release]) -> Result<()> {
    let mut gaps = Vec::new();
    for &library in libraries {
        if let Err(e) = complete_set(library, &default_releases(library)?, source, measuring) {
            gaps.push(format!("{e:#}"));
        }
    }
    if !gaps.is_empty() {
        bail!(
            "--update-committed needs every release of the default selection: {}. Nothing was run; \
             run the whole library (e.g. `historical-perf/bench-past.sh <library> --rounds 2 --update-committed`)",
            gaps.join("; ")
        );
    }
    Ok(())
}

/// Replaces the committed results and graphs of each of `libraries` under
/// `root` with the complete set of kept results under `source` (which may be
/// `<root>/data` itself: a redraw); other results and graphs in those
/// directories are removed. Every set is checked before anything is written.
/// Errors: an incomplete set (nothing written), or a write failing.
pub fn update(libraries: &[Library], source: &Path, root: &Path) -> Result<()> {
    let mut sets = Vec::new();
    let mut gaps = Vec::new();
    for &library in libraries {
        match complete_set(library, &default_releases(library)?, source, &[]) {
            Ok(set) => sets.push((library, set)),
            Err(e) => gaps.push(format!("{e:#}")),
        }
    }
    if !gaps.is_empty() {
        bail!(
            "cannot update the committed results and graphs: {}. Nothing under {} was changed; run the \
             missing releases (without --quick) first",
            gaps.join("; "),
            root.display()
        );
    }
    for (library, set) in sets {
        write(library, &set, root)?;
    }
    Ok(())
}

/// Writes one library's complete set and its graphs under `root`, removing
/// the results and graphs that are not part of it.
fn write(library: Library, set: &[(Release, ReleaseResult)], root: &Path) -> Result<()> {
    let results_root = results_dir(root);
    let mut saved = Vec::new();
    for (release, result) in set {
        result.save(&results_root, release)?;
        saved.push(ReleaseResult::path(&results_root, release));
    }
    remove_others(&results_root.join(library.to_string()), "json", &saved)?;
    let results: Vec<ReleaseResult> = set.iter().map(|(_, r)| r.clone()).collect();
    let graphs = graphs_dir(root, library);
    plot::report(Suite::Criterion, library, &results, &graphs)?;
    eprintln!(
        "historical-perf: committed {} results of {library} in {}",
        saved.len(),
        results_root.join(library.to_string()).display()
    );
    Ok(())
}

/// `library`'s committed results under `root`, in version order, to redraw
/// its graphs. Errors: none committed; when committed graphs exist without
/// them, that those graphs predate committed data and how to replace them.
pub fn load(library: Library, root: &Path) -> Result<Vec<ReleaseResult>> {
    let results = results::load(&results_dir(root), library)?;
    if !results.is_empty() {
        return Ok(results);
    }
    let data = results_dir(root).join(library.to_string());
    let graphs = graphs_dir(root, library);
    let drawn = files_with(&graphs, "svg")?.len();
    if drawn > 0 {
        bail!(
            "{library}: no committed results in {}: the {drawn} graphs in {} predate committed data (the \
             results behind them were not kept), so they cannot be redrawn; re-run with \
             `historical-perf/bench-past.sh {library} --rounds 2 --update-committed` to replace them with \
             graphs and data together",
            data.display(),
            graphs.display()
        );
    }
    bail!(
        "{library}: no committed results in {} (a run with --update-committed commits them)",
        data.display()
    )
}

#[cfg(test)]
mod tests {
    use semver::Version;

    use std::fs;

    use super::*;
    use crate::results::tests::fixture;

    fn openssl(version: &str) -> Release {
        Release { library: Library::Openssl, version: Version::parse(version).unwrap() }
    }

    fn full(release: &str, version: &str) -> ReleaseResult {
        ReleaseResult { quick: false, ..fixture(release, version, 1_000_000.0, None) }
    }

    #[test]
    fn only_measured_full_results_of_the_selected_crate_fill_the_set() {
        let r = openssl("300.0.13+3.0.8");
        assert_eq!(gap(&r, Some(&full("3.0.8", "300.0.13+3.0.8"))), None);
        assert_eq!(gap(&r, None).unwrap(), "3.0.8 (no kept result)");
        let quick = fixture("3.0.8", "300.0.13+3.0.8", 1_000_000.0, None);
        assert!(gap(&r, Some(&quick)).unwrap().contains("--quick"));
        let failed = ReleaseResult { quick: false, ..fixture("3.0.8", "300.0.13+3.0.8", 0.0, Some("boom")) };
        assert!(gap(&r, Some(&failed)).unwrap().contains("failed: boom"));
        assert!(gap(&r, Some(&full("3.0.8", "300.0.12+3.0.8"))).unwrap().contains("300.0.12+3.0.8"));
    }

    #[test]
    fn an_incomplete_set_names_every_gap_and_a_run_can_fill_them() {
        let dir = std::env::temp_dir().join(format!("tls-bench-committed-{}", std::process::id()));
        let wanted = [openssl("111.28.2+1.1.1w"), openssl("300.0.13+3.0.8"), openssl("300.1.6+3.1.4")];
        full("3.0.8", "300.0.13+3.0.8").save(&dir, &wanted[1]).unwrap();
        fixture("3.1.4", "300.1.6+3.1.4", 1.0, None).save(&dir, &wanted[2]).unwrap();
        let err = format!("{:#}", complete_set(Library::Openssl, &wanted, &dir, &[]).unwrap_err());
        assert!(err.contains("1.1.1w (no kept result)") && err.contains("3.1.4 (only a --quick"), "{err}");
        assert!(!err.contains("3.0.8"), "{err}");
        let set =
            complete_set(Library::Openssl, &wanted, &dir, &[wanted[0].clone(), wanted[2].clone()]).unwrap();
        assert_eq!(set.len(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn graphs_without_committed_data_are_named_with_the_command_that_replaces_them() {
        let root = std::env::temp_dir().join(format!("tls-bench-committed-load-{}", std::process::id()));
        let err = format!("{:#}", load(Library::Rustls, &root).unwrap_err());
        assert!(err.contains("no committed results") && err.contains("--update-committed"), "{err}");
        fs::create_dir_all(graphs_dir(&root, Library::Rustls)).unwrap();
        fs::write(graphs_dir(&root, Library::Rustls).join("a.svg"), "<svg/>").unwrap();
        let err = format!("{:#}", load(Library::Rustls, &root).unwrap_err());
        assert!(err.contains("predate committed data"), "{err}");
        assert!(err.contains("bench-past.sh rustls --rounds 2 --update-committed"), "{err}");
        fs::remove_dir_all(&root).unwrap();
    }
}
