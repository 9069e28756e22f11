//! Which releases of each library are benchmarked: read from the crates.io
//! index (the sparse index, <https://index.crates.io>), ordered by crate
//! version, chosen per library as README's "Historical performance" says.

use std::{fmt, process::Command};

use anyhow::{Context, Result, bail, ensure};
use semver::Version;
use serde::Deserialize;

pub use tls_bench_results::historical::Library;

/// One release of a library: the crate version that brings it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    pub library: Library,
    /// The crate version (for OpenSSL, `openssl-src`'s, e.g. `300.0.13+3.0.8`).
    pub version: Version,
}

impl Release {
    /// The release's name: the OpenSSL version for OpenSSL (`3.0.8`,
    /// `1.1.1w`, from `openssl-src`'s build metadata), the crate version
    /// otherwise.
    pub fn label(&self) -> String {
        match self.library {
            Library::Openssl if !self.version.build.is_empty() => self.version.build.to_string(),
            _ => Version::new(self.version.major, self.version.minor, self.version.patch).to_string(),
        }
    }
}

impl Release {
    /// Whether tls-bench's code for this library can build against this
    /// release: `Err` says why not. Its stacks are written for the current
    /// APIs (rustls 0.23, s2n-tls 0.3, any OpenSSL from 1.1.1), with shims
    /// for rustls 0.20-0.22 and s2n-tls 0.0.8-0.3.14 (cfgs set by build.rs);
    /// older API eras need shims that do not exist yet, so they are
    /// reported without a build that is known to fail.
    pub fn supported(&self) -> Result<(), String> {
        let v = &self.version;
        match self.library {
            Library::Rustls if (v.major, v.minor) < (0, 20) => Err(format!(
                "no shim for the rustls 0.{} API (tls-bench is written for 0.23, with shims back to 0.20)",
                v.minor
            )),
            Library::S2nTls if *v < Version::new(0, 0, 8) => Err(format!(
                "no shim for s2n-tls {v} (tls-bench's shims reach back to 0.0.8's `s2n_tls::raw` API)"
            )),
            _ => Ok(()),
        }
    }

    /// Whether this s2n-tls release links AWS-LC, whose floor is aws-lc-rs
    /// (crates/harness/src/floor/aws_lc_rs.rs) on the release's own aws-lc-sys: from 0.1
    /// (s2n-tls-sys's dependencies; each recorded release's `libcrypto`).
    /// 0.1 links aws-lc-sys 0.12 alone: its build adds aws-lc-rs, which the
    /// era pin takes to 1.5.2 (the newest by 0.1.2's day), on the same
    /// aws-lc-sys ([`crate::build::floor_refusal`] refuses a second one);
    /// from 0.1.5 s2n-tls-sys links aws-lc-rs itself. False for other
    /// libraries, and for s2n-tls 0.0 (the system's libcrypto).
    pub fn s2n_on_aws_lc(&self) -> bool {
        self.library == Library::S2nTls && self.version >= Version::new(0, 1, 0)
    }

    /// The features this release's crypto floor needs besides
    /// `crypto-floor`: `openssl-floor` for s2n-tls 0.0, which links the
    /// system's libcrypto through openssl-sys (the floor calls it through
    /// the `openssl` crate on the same openssl-sys, crates/harness/src/libs/openssl/floor/ossl.rs);
    /// none for the others (their floor's crates come with the library's
    /// feature).
    pub fn floor_features(&self) -> &'static [&'static str] {
        if self.library == Library::S2nTls && !self.s2n_on_aws_lc() { &["openssl-floor"] } else { &[] }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.library, self.label())
    }
}

/// The path of `name` in the sparse index (crates.io's layout: `1/a`,
/// `2/ab`, `3/a/abc`, `ab/cd/abcd...`).
pub fn index_path(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.len() {
        1 => format!("1/{n}"),
        2 => format!("2/{n}"),
        3 => format!("3/{}/{n}", &n[..1]),
        _ => format!("{}/{}/{n}", &n[..2], &n[2..4]),
    }
}

#[derive(Deserialize)]
struct IndexLine {
    vers: String,
    #[serde(default)]
    yanked: bool,
    #[serde(default)]
    pubtime: Option<String>,
}

/// One published version of a crate, from its index file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    pub version: Version,
    /// When crates.io published it (RFC 3339 UTC, `2024-08-20T21:44:23Z`;
    /// the index's `pubtime`), if the index says.
    pub time: Option<String>,
}

/// The versions in an index file (one JSON object per line), without
/// yanked ones and pre-releases, in ascending order.
pub fn parse_index_entries(text: &str) -> Result<Vec<Published>> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let entry: IndexLine = serde_json::from_str(line).context("parsing an index line")?;
        let v = Version::parse(&entry.vers).with_context(|| format!("version {}", entry.vers))?;
        if !entry.yanked && v.pre.is_empty() {
            out.push(Published { version: v, time: entry.pubtime });
        }
    }
    out.sort_by(|a, b| a.version.cmp(&b.version));
    Ok(out)
}

/// An environment variable naming a directory laid out as the sparse index
/// (`ru/st/rustls`, ...), read instead of crates.io: offline runs and tests.
pub const INDEX_ENV: &str = "HISTORICAL_PERF_INDEX";

/// Fetches and parses `crate_name`'s index file from crates.io (with `curl`),
/// or reads it under [`INDEX_ENV`]'s directory when that is set.
pub fn fetch_index(crate_name: &str) -> Result<Vec<Published>> {
    if let Some(dir) = std::env::var_os(INDEX_ENV) {
        let path = std::path::Path::new(&dir).join(index_path(crate_name));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {} ({INDEX_ENV})", path.display()))?;
        return parse_index_entries(&text);
    }
    let url = format!("https://index.crates.io/{}", index_path(crate_name));
    let out = Command::new("curl")
        .args(["-sSfL", "--max-time", "60", &url])
        .output()
        .context("running curl to read the crates.io index")?;
    ensure!(out.status.success(), "fetching {url}: {}", String::from_utf8_lossy(&out.stderr).trim());
    parse_index_entries(&String::from_utf8(out.stdout)?)
}

/// [`fetch_index`]'s versions alone.
pub fn fetch_versions(crate_name: &str) -> Result<Vec<Version>> {
    Ok(fetch_index(crate_name)?.into_iter().map(|p| p.version).collect())
}

/// The newest of `entries` published no later than `deadline` (RFC 3339
/// UTC, compared as text, which orders such times) and semver-compatible
/// with `compatible` (same major, and same minor while the major is 0), so
/// that `cargo update --precise` can swap it in for the locked one.
pub fn newest_published_by(entries: &[Published], deadline: &str, compatible: &Version) -> Option<Version> {
    let same_series =
        |v: &Version| v.major == compatible.major && (compatible.major != 0 || v.minor == compatible.minor);
    entries
        .iter()
        .filter(|p| same_series(&p.version) && p.time.as_deref().is_some_and(|t| t <= deadline))
        .map(|p| p.version.clone())
        .max()
}

/// OpenSSL series followed: 1.1.1w, then the newest patch of each.
pub const OPENSSL_SERIES: [&str; 9] = ["1.1.1w", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "4.0"];
/// rustls minor versions followed (the newest patch of each).
pub const RUSTLS_MINORS: [u64; 4] = [20, 21, 22, 23];
/// The first s2n-tls crate release followed (s2n-tls C v1.3.16).
pub const S2N_FIRST: Version = Version::new(0, 0, 8);
/// s2n-tls releases in the default spread.
pub const S2N_SPREAD: usize = 12;

/// The releases of `library` benchmarked by default among `versions`
/// (ascending): OpenSSL's newest of each series in [`OPENSSL_SERIES`];
/// rustls's newest of each minor in [`RUSTLS_MINORS`]; s2n-tls from
/// [`S2N_FIRST`], all of them with `all`, else [`S2N_SPREAD`] spread evenly.
pub fn default_selection(library: Library, versions: &[Version], all: bool) -> Vec<Release> {
    let newest = |pred: &dyn Fn(&Version) -> bool| versions.iter().rev().find(|v| pred(v)).cloned();
    let picked: Vec<Version> = match library {
        Library::Openssl => OPENSSL_SERIES
            .iter()
            .filter_map(|series| {
                newest(&|v: &Version| {
                    let b = v.build.as_str();
                    if series.ends_with(|c: char| c.is_ascii_alphabetic()) {
                        b == *series
                    } else {
                        b.strip_prefix(series).is_some_and(|rest| rest.starts_with('.'))
                    }
                })
            })
            .collect(),
        Library::Rustls => RUSTLS_MINORS
            .iter()
            .filter_map(|&m| newest(&|v: &Version| v.major == 0 && v.minor == m))
            .collect(),
        Library::S2nTls => {
            let from: Vec<Version> = versions.iter().filter(|v| **v >= S2N_FIRST).cloned().collect();
            if all { from } else { spread(&from, S2N_SPREAD) }
        }
    };
    picked.into_iter().map(|version| Release { library, version }).collect()
}

/// `n` items of `items` spread evenly, first and last included (all of
/// them when there are no more than `n`).
pub fn spread<T: Clone>(items: &[T], n: usize) -> Vec<T> {
    if items.len() <= n {
        return items.to_vec();
    }
    if n < 2 {
        return items.last().filter(|_| n == 1).cloned().into_iter().collect();
    }
    let last = items.len() - 1;
    let mut idx: Vec<usize> = (0..n).map(|i| (i * last + (n - 1) / 2) / (n - 1)).collect();
    idx.dedup();
    idx.into_iter().map(|i| items[i].clone()).collect()
}

/// The releases named in `wanted` (a label such as `3.0.8` or `0.23.46`, or
/// a crate version), in version order. Errors: a name no release has,
/// listing the available ones.
pub fn named(library: Library, versions: &[Version], wanted: &[String]) -> Result<Vec<Release>> {
    let all: Vec<Release> = versions.iter().map(|v| Release { library, version: v.clone() }).collect();
    let mut out = Vec::new();
    for w in wanted {
        // The newest crate version of a label (openssl-src rebuilt 1.1.1w).
        match all.iter().rev().find(|r| r.label() == *w || r.version.to_string() == *w) {
            Some(r) => out.push(r.clone()),
            None => bail!("{library} has no release {w:?}; releases: {}", release_list(&all)),
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The names a user can give for `all` (ascending): each label once (a
/// label rebuilt as several crate versions names the newest), then the
/// openssl-src crate versions that carry no OpenSSL version to label them
/// (named by crate version).
fn release_list(all: &[Release]) -> String {
    let mut labels: Vec<String> = Vec::new();
    let mut unlabelled: Vec<String> = Vec::new();
    for r in all {
        if r.library == Library::Openssl && r.version.build.is_empty() {
            unlabelled.push(r.version.to_string());
        } else if !labels.contains(&r.label()) {
            labels.push(r.label());
        }
    }
    let mut text = labels.join(", ");
    if !unlabelled.is_empty() {
        text.push_str(&format!(
            "; openssl-src crate versions without an OpenSSL version: {}",
            unlabelled.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(index: &str) -> Vec<Version> {
        parse_index_entries(index).unwrap().into_iter().map(|p| p.version).collect()
    }

    const OPENSSL_SRC_INDEX: &str = r#"{"name":"openssl-src","vers":"111.28.1+1.1.1w","yanked":false}
{"name":"openssl-src","vers":"300.0.13+3.0.8","yanked":false}
{"name":"openssl-src","vers":"111.28.2+1.1.1w","yanked":false}
{"name":"openssl-src","vers":"111.27.0+1.1.1v","yanked":false}
{"name":"openssl-src","vers":"300.1.6+3.1.4","yanked":false}
{"name":"openssl-src","vers":"300.0.10+3.0.6","yanked":true}
{"name":"openssl-src","vers":"300.5.5+3.5.5","yanked":false}
{"name":"openssl-src","vers":"300.5.4+3.5.4","yanked":false}
{"name":"openssl-src","vers":"400.0.2+4.0.3","yanked":false}
"#;

    #[test]
    fn api_eras_without_a_shim_are_named() {
        let r = |library, major, minor| Release { library, version: Version::new(major, minor, 1) };
        assert!(r(Library::Rustls, 0, 23).supported().is_ok());
        assert!(r(Library::Rustls, 0, 22).supported().is_ok());
        assert!(r(Library::Rustls, 0, 21).supported().is_ok());
        assert!(r(Library::Rustls, 0, 20).supported().is_ok());
        assert!(r(Library::Rustls, 0, 19).supported().unwrap_err().contains("rustls 0.19"));
        assert!(r(Library::S2nTls, 0, 3).supported().is_ok());
        let s2n = |v: &str| Release { library: Library::S2nTls, version: Version::parse(v).unwrap() };
        assert!(s2n("0.0.7").supported().unwrap_err().contains("s2n_tls::raw"));
        assert!(s2n("0.0.8").supported().is_ok());
        assert!(s2n("0.0.28").supported().is_ok());
        assert!(s2n("0.1.2").supported().is_ok());
        assert!(r(Library::Openssl, 111, 28).supported().is_ok());
    }

    #[test]
    fn index_paths_follow_the_crates_io_layout() {
        assert_eq!(index_path("openssl-src"), "op/en/openssl-src");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
    }

    #[test]
    fn openssl_releases_are_ordered_by_crate_version_and_picked_per_series() {
        let versions = versions(OPENSSL_SRC_INDEX);
        assert_eq!(versions.len(), 8, "the yanked one is dropped");
        let labels: Vec<String> =
            default_selection(Library::Openssl, &versions, false).iter().map(Release::label).collect();
        assert_eq!(labels, ["1.1.1w", "3.0.8", "3.1.4", "3.5.5", "4.0.3"]);
    }

    #[test]
    fn rustls_takes_the_newest_patch_of_each_minor() {
        let text: String = ["0.20.8", "0.20.9", "0.21.12", "0.22.4", "0.23.0", "0.23.46", "0.24.0-dev.0"]
            .iter()
            .map(|v| format!("{{\"name\":\"rustls\",\"vers\":\"{v}\"}}\n"))
            .collect();
        let versions = versions(&text);
        let labels: Vec<String> =
            default_selection(Library::Rustls, &versions, false).iter().map(Release::label).collect();
        assert_eq!(labels, ["0.20.9", "0.21.12", "0.22.4", "0.23.46"]);
    }

    #[test]
    fn s2n_spreads_twelve_releases_from_0_0_8() {
        let mut versions: Vec<Version> = (0..=50).map(|p| Version::new(0, 0, p)).collect();
        versions.extend((0..=47).map(|p| Version::new(0, 3, p)));
        let picked = default_selection(Library::S2nTls, &versions, false);
        assert_eq!(picked.len(), 12);
        assert_eq!(picked.first().unwrap().label(), "0.0.8");
        assert_eq!(picked.last().unwrap().label(), "0.3.47");
        assert!(picked.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(default_selection(Library::S2nTls, &versions, true).len(), 43 + 48);
    }

    #[test]
    fn era_pins_take_the_newest_compatible_release_published_by_the_deadline() {
        let text = [
            ("1.8.1", "2024-07-30T10:00:00Z"),
            ("1.9.0", "2024-09-05T10:00:00Z"),
            ("1.8.0", "2024-07-10T10:00:00Z"),
            ("2.0.0", "2024-01-01T00:00:00Z"),
        ]
        .iter()
        .map(|(v, t)| format!(r#"{{"name":"aws-lc-rs","vers":"{v}","yanked":false,"pubtime":"{t}"}}"#))
        .collect::<Vec<_>>()
        .join("\n");
        let entries = parse_index_entries(&text).unwrap();
        let one = Version::new(1, 19, 0);
        assert_eq!(newest_published_by(&entries, "2024-08-20T21:44:23Z", &one), Some(Version::new(1, 8, 1)));
        assert_eq!(newest_published_by(&entries, "2023-01-01T00:00:00Z", &one), None);
        // 0.x series: the minor must match too.
        let old = r#"{"name":"aws-lc-sys","vers":"0.20.1","pubtime":"2024-07-01T00:00:00Z"}
{"name":"aws-lc-sys","vers":"0.21.0","pubtime":"2024-08-01T00:00:00Z"}"#;
        let entries = parse_index_entries(old).unwrap();
        let locked = Version::new(0, 20, 0);
        assert_eq!(
            newest_published_by(&entries, "2024-09-01T00:00:00Z", &locked),
            Some(Version::new(0, 20, 1))
        );
    }

    #[test]
    fn versions_sort_numerically_not_as_text() {
        let mut v = vec![Version::new(0, 3, 10), Version::new(0, 3, 9), Version::new(0, 10, 0)];
        v.sort();
        assert_eq!(v, [Version::new(0, 3, 9), Version::new(0, 3, 10), Version::new(0, 10, 0)]);
    }

    #[test]
    fn unknown_release_names_list_the_known_ones() {
        let versions = versions(OPENSSL_SRC_INDEX);
        let err = named(Library::Openssl, &versions, &["3.9.9".into()]).unwrap_err().to_string();
        assert!(err.contains("3.9.9") && err.contains("3.0.8"), "{err}");
        // 1.1.1w is two crate versions: listed once.
        assert_eq!(err.matches("1.1.1w").count(), 1, "{err}");
        let both = [
            super::tests::versions(OPENSSL_SRC_INDEX),
            super::tests::versions(r#"{"name":"openssl-src","vers":"110.0.0","yanked":false}"#),
        ]
        .concat();
        let err = named(Library::Openssl, &both, &["3.9.9".into()]).unwrap_err().to_string();
        assert!(err.contains("without an OpenSSL version: 110.0.0"), "{err}");
        let r = named(Library::Openssl, &versions, &["3.5.4".into(), "1.1.1w".into()]).unwrap();
        assert_eq!(r.iter().map(Release::label).collect::<Vec<_>>(), ["1.1.1w", "3.5.4"]);
        assert_eq!(r[0].version.to_string(), "111.28.2+1.1.1w");
    }
}
