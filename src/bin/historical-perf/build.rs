//! Building tls-bench's benchmarks against one release, without touching
//! tracked files: a workspace generated under `target/historical-perf/build/`
//! holds the benchmarks' package (benches), the harness and the
//! results crates, and nothing else: the benches (and the suite's binaries)
//! against the harness with only the library under test, its version
//! pinned; the repository's sources, build scripts and lock file are reused
//! where they are. OpenSSL
//! releases are first built on their own by `openssl-src` and then linked
//! statically through `OPENSSL_DIR`.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use anyhow::{Context, Result, bail, ensure};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::{
    releases::{self, Library, Release},
    suite::Suite,
};

/// Paths of one run.
pub struct Paths {
    /// The repository (where Cargo.toml is).
    pub repo: PathBuf,
    /// Cargo's target directory, shared with the repository's own builds so
    /// unchanged dependencies are not rebuilt (OpenSSL releases' openssl-sys
    /// and the crates above it are units of their own there:
    /// [`OPENSSL_SYS_PROFILE`]).
    pub target: PathBuf,
    /// Generated manifests and OpenSSL builds: `target/historical-perf`.
    pub work: PathBuf,
}

/// A release ready to build: its manifest and environment.
pub struct Prepared {
    /// The generated workspace's root manifest.
    pub manifest: PathBuf,
    /// The floor's own crypto crates as the build asks for them
    /// ([`Generated::floor_crates`]).
    pub floor: Vec<(String, semver::VersionReq)>,
    pub env: Vec<(String, String)>,
    /// Which crypto library the build links, for the report.
    pub libcrypto: String,
    /// How the crypto crates were pinned to the release's era (s2n-tls).
    pub era: Option<String>,
}

/// Why a failed command failed, from its standard error
/// ([`reason_from_stderr`]).
pub fn failure_reason(out: &Output) -> String {
    reason_from_stderr(&String::from_utf8_lossy(&out.stderr))
}

/// At most this many reasons in a failure ([`reason_from_stderr`]).
const MAX_REASONS: usize = 3;

/// Why a failed command failed, from its standard error `text`: each panic
/// with its whole message, then the error lines (`error...`, `...error:`),
/// at most [`MAX_REASONS`] in all (panics first); without either, the
/// last three lines. A panic's message is every line after `panicked at`
/// (blank ones left out) up to the `note: run with RUST_BACKTRACE` line
/// Rust prints after it, a backtrace, the next panic, or cargo's closing
/// `error: bench failed`: a multi-line message (an `anyhow` error's
/// `Caused by:` list) is kept whole. Lines and reasons are joined with
/// " / ", so the failure stays one line.
fn reason_from_stderr(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let (mut panics, mut errors) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.contains("panicked at") {
            let mut panic = vec![line.trim_start()];
            while i < lines.len() && !ends_panic_message(lines[i]) {
                if !lines[i].trim().is_empty() {
                    panic.push(lines[i]);
                }
                i += 1;
            }
            panics.push(panic.join(" / "));
        } else if line.starts_with("error") || line.contains("error:") || line.contains("panicked") {
            errors.push(line.to_string());
        }
    }
    let reasons: Vec<String> = panics.into_iter().chain(errors).take(MAX_REASONS).collect();
    if reasons.is_empty() { lines[lines.len().saturating_sub(3)..].join(" / ") } else { reasons.join(" / ") }
}

/// Whether `line` ends a panic's message in a command's standard error
/// ([`reason_from_stderr`]).
fn ends_panic_message(line: &str) -> bool {
    line.starts_with("note: run with `RUST_BACKTRACE")
        || line.starts_with("stack backtrace:")
        || line.contains("panicked at")
        || ["error: bench failed", "error: test failed", "error: process didn't exit successfully"]
            .iter()
            .any(|cargo| line.starts_with(cargo))
}

/// Runs `cmd`; errors with the failure reason.
pub fn run(cmd: &mut Command, what: &str) -> Result<Output> {
    let out = cmd.output().with_context(|| format!("starting {what}"))?;
    if !out.status.success() {
        bail!("{what} failed: {}", failure_reason(&out));
    }
    Ok(out)
}

/// The workspace crates a generated build holds: the benchmarks' package,
/// the harness, and the results (the benches record each library's crypto
/// floor beside Criterion's output; the `memory` binary's reports). Not the
/// socket runner (no suite runs over sockets), nor the tools' root package.
/// The charts ([`CHARTS`]) join them when the suite's binaries need them.
const MEMBERS: [&str; 3] = ["benches", "crates/harness", "crates/results"];

/// The charts crate (`tls-bench-charts`), a member of a generated build
/// whose benchmarks' package keeps it: the suites that keep benches'
/// `tools` feature (the `memory` binary draws its graph with it).
const CHARTS: &str = "crates/charts";

/// A generated build of one release: the manifests of a workspace that
/// mirrors the repository's layout (so the members' relative paths hold),
/// every source and build script an absolute path into the repository.
pub struct Generated {
    /// `Cargo.toml`: the workspace alone, no package: its members
    /// ([`MEMBERS`]), the dependency versions the members inherit (where
    /// the library's is pinned), lints and profiles.
    pub root: DocumentMut,
    /// `benches/Cargo.toml`: the benchmarks' package with only the
    /// suite's benches and binaries, and the features it turns on.
    pub benches: DocumentMut,
    /// `crates/harness/Cargo.toml`: the harness with only the library under
    /// test (and its floor's crates).
    pub harness: DocumentMut,
    /// `crates/results/Cargo.toml`.
    pub results: DocumentMut,
    /// `crates/charts/Cargo.toml`, when the benchmarks' package keeps
    /// the charts ([`CHARTS`]).
    pub charts: Option<DocumentMut>,
}

impl Generated {
    /// Each manifest with its path under the build directory.
    pub fn files(&self) -> Vec<(&'static str, &DocumentMut)> {
        let mut files = vec![
            ("Cargo.toml", &self.root),
            ("benches/Cargo.toml", &self.benches),
            ("crates/harness/Cargo.toml", &self.harness),
            ("crates/results/Cargo.toml", &self.results),
        ];
        files.extend(self.charts.as_ref().map(|charts| ("crates/charts/Cargo.toml", charts)));
        files
    }

    /// A dependency of the harness as the build resolves its entry: its
    /// own table, or the workspace's where it says `workspace = true`.
    pub fn harness_dependency(&self, key: &str) -> Option<&Item> {
        let item = self.harness.get("dependencies")?.get(key)?;
        if item.get("workspace").and_then(Item::as_bool) == Some(true) {
            self.root.get("workspace")?.get("dependencies")?.get(key)
        } else {
            Some(item)
        }
    }

    /// The floor's own crypto crates (*ring*, aws-lc-rs) as the harness
    /// asks for them: each dependency on one, by package name, with its
    /// version requirement (rustls 0.20's build names *ring* twice,
    /// [`manifest`]). Errors: a requirement does not parse.
    pub fn floor_crates(&self) -> Result<Vec<(String, semver::VersionReq)>> {
        let Some(deps) = self.harness.get("dependencies").and_then(Item::as_table_like) else {
            return Ok(Vec::new());
        };
        let mut crates = Vec::new();
        for (key, _) in deps.iter() {
            let item = self.harness_dependency(key).with_context(|| format!("{key}: no workspace entry"))?;
            let package = item.get("package").and_then(Item::as_str).unwrap_or(key);
            if !FLOOR_CRATES.contains(&package) {
                continue;
            }
            let version = item.as_str().or_else(|| item.get("version").and_then(Item::as_str)).unwrap_or("*");
            let req = semver::VersionReq::parse(version).with_context(|| format!("{key} = {version}"))?;
            crates.push((package.to_string(), req));
        }
        Ok(crates)
    }
}

/// Reads and parses `repo`'s manifest at `path`. Errors: it cannot be read
/// or does not parse.
fn read_manifest(repo: &Path, path: &str) -> Result<DocumentMut> {
    let text = fs::read_to_string(repo.join(path)).with_context(|| format!("reading {path}"))?;
    text.parse().with_context(|| format!("parsing {path}"))
}

/// The workspace that builds `suite`'s benchmarks against `release`
/// ([`Generated`]): the repository's workspace tables without its root
/// package (the tools); in the benchmarks' package only the suite's
/// binaries and benches ([`Suite::bins`], [`Suite::benches`]) at absolute
/// paths, no tests, only the features [`features`] names (so no `tools`
/// dependencies for the Criterion suite) and the dev-dependencies the suite
/// uses ([`OPTIONAL_DEV_DEPENDENCIES`]); in the harness only the library
/// under test, no aws-lc-config target tables; the library's version pinned
/// in the workspace's dependencies (`=x.y.z`; for rustls 0.20 the crypto
/// floor's *ring* at the 0.16 the release links), and the features of the
/// crates it shares with the repository's own build pinned to that build's
/// ([`SHARED_FEATURES`], [`share_features`]). Errors: the repository's
/// manifests or Cargo.lock cannot be read or lack a table this edits.
pub fn manifest(repo: &Path, release: &Release, suite: Suite) -> Result<Generated> {
    let abs = |p: &str| value(repo.join(p).display().to_string());
    let kept = self::features(release, suite);
    let workspace = read_manifest(repo, "Cargo.toml")?;
    let mut root = DocumentMut::new();
    for table in ["workspace", "profile"] {
        let item = workspace.get(table).with_context(|| format!("Cargo.toml has no [{table}]"))?;
        root.insert(table, item.clone());
    }
    // Not the repository's comments on its root package.
    root["workspace"].as_table_mut().context("[workspace] is not a table")?.decor_mut().set_prefix(format!(
        "# Generated by historical-perf (src/bin/historical-perf/build.rs) for {release}: the\n\
         # repository's workspace tables, with the benchmarks, the harness and the results only.\n"
    ));

    let mut benches = read_manifest(repo, "benches/Cargo.toml")?;
    let package = benches["package"].as_table_mut().context("benches: no [package]")?;
    package.insert("build", abs("benches/build.rs"));
    for auto in ["autobins", "autoexamples", "autotests", "autobenches"] {
        package.insert(auto, value(false));
    }
    benches["lib"]["path"] = abs("benches/src/lib.rs");
    benches.remove("test");
    let bins = benches["bin"].as_array_of_tables_mut().context("benches: no [[bin]]")?;
    keep_targets(bins, suite.bins(), |name| abs(&bin_path(repo, name)))?;
    for bin in bins.iter_mut() {
        let name = bin.get("name").and_then(Item::as_str).map(past_bin).context("a [[bin]] without name")?;
        bin.insert("name", value(name));
    }
    if bins.is_empty() {
        benches.remove("bin");
    }
    let targets = benches["bench"].as_array_of_tables_mut().context("benches: no [[bench]]")?;
    keep_targets(targets, suite.benches(), |name| abs(&format!("benches/benches/{name}.rs")))?;
    let dev = benches["dev-dependencies"].as_table_mut().context("benches: no [dev-dependencies]")?;
    for dep in OPTIONAL_DEV_DEPENDENCIES.into_iter().filter(|d| !suite.dev_dependencies().contains(d)) {
        dev.remove(dep);
    }
    prune(&mut benches, &kept)?;

    let mut harness = read_manifest(repo, "crates/harness/Cargo.toml")?;
    harness["package"]["build"] = abs("crates/harness/build.rs");
    harness["lib"]["path"] = abs("crates/harness/src/lib.rs");
    harness.remove("target");
    prune(&mut harness, &kept)?;
    let mut results = read_manifest(repo, "crates/results/Cargo.toml")?;
    results["lib"]["path"] = abs("crates/results/src/lib.rs");
    let keeps_charts = benches["dependencies"].get("tls-bench-charts").is_some();
    let charts = if keeps_charts {
        let mut charts = read_manifest(repo, "crates/charts/Cargo.toml")?;
        charts["lib"]["path"] = abs("crates/charts/src/lib.rs");
        Some(charts)
    } else {
        None
    };

    let ws = root["workspace"]["dependencies"].as_table_mut().context("no [workspace.dependencies]")?;
    let pinned = format!("={}", release.version);
    match release.library {
        Library::Rustls => {
            let rustls = &mut ws["rustls"];
            rustls["version"] = value(pinned);
            // rustls 0.22 has neither `std` nor `prefer-post-quantum`; 0.21 has
            // no providers (ring always), so tls-bench's aws-lc-rs is left out.
            match release.version.minor {
                22 => {
                    rustls["features"] =
                        value(toml_edit::Array::from_iter(["tls12", "logging", "aws_lc_rs", "ring"]))
                }
                ..22 => {
                    rustls["features"] = value(toml_edit::Array::from_iter(["tls12", "logging"]));
                    harness["features"]["rustls"] = value(toml_edit::Array::from_iter(["dep:rustls"]));
                    let deps = harness["dependencies"].as_table_mut().context("no [dependencies]")?;
                    deps.remove("aws-lc-rs");
                    // 0.20 calls *ring* 0.16, and its webpki 0.22.4 *ring* 0.17
                    // for verifications: the crypto floor calls the same
                    // (crates/harness/src/libs/rustls/ring_0_16.rs), the second as `webpki_ring`.
                    if release.version.minor < 21 && deps.contains_key("ring") {
                        ws["ring"] = value("0.16");
                        let mut webpki_ring = toml_edit::InlineTable::new();
                        webpki_ring.insert("package", "ring".into());
                        webpki_ring.insert("version", "0.17".into());
                        webpki_ring.insert("optional", true.into());
                        deps.insert("webpki-ring", Item::Value(webpki_ring.into()));
                        harness["features"]["crypto-floor"]
                            .as_array_mut()
                            .context("no crypto-floor feature")?
                            .push("dep:webpki-ring");
                    }
                }
                _ => {}
            }
        }
        Library::S2nTls => {
            // s2n-tls pins its own s2n-tls-sys to the same version.
            ws["s2n-tls-sys"] = value(pinned.clone());
            ws["s2n-tls"] = value(pinned);
            s2n_aws_lc_rs(&mut harness, ws, release)?;
        }
        // The newest `openssl` crate, on the OpenSSL built beforehand, its
        // openssl-sys of a profile of its own (OPENSSL_SYS_PROFILE).
        Library::Openssl => {
            let (key, setting) = OPENSSL_SYS_PROFILE;
            root["profile"]["release"]["package"]["openssl-sys"][key] = value(setting);
        }
    }
    let members = MEMBERS.into_iter().chain(charts.is_some().then_some(CHARTS));
    root["workspace"]["members"] = value(toml_edit::Array::from_iter(members));
    root["workspace"].as_table_mut().context("no [workspace]")?.remove("default-members");
    // Only the workspace's dependencies a kept manifest inherits stay.
    let mut inherited = BTreeSet::new();
    for doc in [&benches, &harness, &results].into_iter().chain(&charts) {
        for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
            for (key, item) in doc.get(table).and_then(Item::as_table_like).into_iter().flat_map(|t| t.iter())
            {
                if item.get("workspace").and_then(Item::as_bool) == Some(true) {
                    inherited.insert(key.to_string());
                }
            }
        }
    }
    root["workspace"]["dependencies"]
        .as_table_mut()
        .context("no [workspace.dependencies]")?
        .retain(|key, _| inherited.contains(key));
    let lock = fs::read_to_string(repo.join("Cargo.lock")).context("reading Cargo.lock")?;
    share_features(&mut benches, &lock)?;
    Ok(Generated { root, benches, harness, results, charts })
}

/// The aws-lc-rs of an s2n-tls build, which the crypto floor calls
/// (crates/harness/src/floor/aws_lc_rs.rs): from s2n-tls 0.1, whatever 1.x the release's
/// era has (requirement "1"; [`pin_crypto_to_era`] then takes it to the
/// release's day): from 0.1.5 the release's own, in 0.1.0-0.1.4 one on
/// the release's aws-lc-sys ([`Release::s2n_on_aws_lc`]); in 0.0 (the
/// system's libcrypto) none, as the `s2n-tls` feature's `dep:aws-lc-rs`
/// would add an AWS-LC the release does not call (its floor is the
/// `openssl` crate's, [`Release::floor_features`]). The floor's *ring*
/// (rustls's) goes. `harness` is the harness's manifest, `ws` the
/// workspace's dependencies. Errors: a manifest lacks a table this edits.
fn s2n_aws_lc_rs(harness: &mut DocumentMut, ws: &mut Table, release: &Release) -> Result<()> {
    let features = harness["features"].as_table_mut().context("no [features]")?;
    let links = release.s2n_on_aws_lc();
    let mut dropped = vec![("crypto-floor", "dep:ring")];
    if !links {
        dropped.push(("s2n-tls", "dep:aws-lc-rs"));
    }
    for (feature, dep) in dropped {
        if let Some(list) = features.get_mut(feature).and_then(Item::as_array_mut) {
            list.retain(|v| v.as_str() != Some(dep));
        }
    }
    let deps = harness["dependencies"].as_table_mut().context("no [dependencies]")?;
    deps.remove("ring");
    if links {
        let aws_lc_rs = ws.get_mut("aws-lc-rs").context("no aws-lc-rs dependency")?;
        aws_lc_rs["version"] = value("1");
        // Its AWS-LC (aws-lc-rs 1.5 builds nothing without it; s2n-tls-sys
        // turns it on from 0.1.5).
        aws_lc_rs["features"] = value(toml_edit::Array::from_iter(["aws-lc-sys"]));
    } else {
        deps.remove("aws-lc-rs");
    }
    Ok(())
}

/// A crate whose features a historical build pins ([`SHARED_FEATURES`]):
/// added to `table` as `krate = { version = req, default-features,
/// features }` (under another name if the table already has `krate`).
struct SharedFeatures {
    table: &'static str,
    krate: &'static str,
    req: &'static str,
    default_features: bool,
    features: &'static [&'static str],
}

/// The features the repository's own build resolves (default features,
/// dev-dependencies included: `cargo test --release`, `cargo bench`, into
/// the same target directory) for crates that every historical build also
/// compiles but would resolve differently: the `tools` crates (clap's
/// `derive` and default features, plotters' `errorbar` and `area_series`,
/// serde_core's defaults and `alloc`), crates other libraries' dependencies extend (cc's `parallel`
/// through aws-lc-sys, num-traits' `i128`, smallvec's `const_*`), and
/// syn's for the proc-macros. A different feature set of any one of them
/// is a different build of it and of everything above it (Criterion,
/// pprof, serde ...), compiled again by each build that differs. With
/// these, the builds of CI's smoke run (two releases of each library, every
/// suite) compile none of them after `cargo test --release`, and each once
/// on their own. None is a TLS or crypto crate: the features add code paths
/// the benchmarks do not take, or change only how C code is compiled (cc's
/// `parallel`), not what is measured. A pin whose crate Cargo.lock does not
/// hold is left out (it would add a crate). A change to the repository's
/// dependencies can change what its build resolves: the historical builds
/// then compile these crates again (slower, same figures) until this list
/// follows (docs/historical-perf.md, "One build per release", says how to
/// compare).
const SHARED_FEATURES: [SharedFeatures; 8] = [
    SharedFeatures {
        table: "build-dependencies",
        krate: "cc",
        req: "1",
        default_features: true,
        features: &["parallel"],
    },
    SharedFeatures {
        table: "build-dependencies",
        krate: "syn",
        req: "2",
        default_features: true,
        features: &["full", "extra-traits", "visit", "visit-mut"],
    },
    SharedFeatures {
        table: "build-dependencies",
        krate: "syn",
        req: "3",
        default_features: true,
        features: &["full", "extra-traits", "visit-mut"],
    },
    SharedFeatures {
        table: "dev-dependencies",
        krate: "clap",
        req: "4",
        default_features: true,
        features: &["derive"],
    },
    SharedFeatures {
        table: "dev-dependencies",
        krate: "plotters",
        req: "0.3.7",
        default_features: false,
        features: &["svg_backend", "errorbar", "line_series", "area_series"],
    },
    SharedFeatures {
        table: "dev-dependencies",
        krate: "serde_core",
        req: "1",
        default_features: true,
        features: &["alloc"],
    },
    SharedFeatures {
        table: "dev-dependencies",
        krate: "num-traits",
        req: "0.2",
        default_features: true,
        features: &["i128"],
    },
    SharedFeatures {
        table: "dev-dependencies",
        krate: "smallvec",
        req: "1",
        default_features: true,
        features: &["const_generics", "const_new"],
    },
];

/// Adds [`SHARED_FEATURES`] to `doc` (build-dependencies for the host's
/// crates: build scripts and proc-macros; dev-dependencies for the
/// benches' crates), each whose crate `lock` (Cargo.lock's text) holds at
/// a version its requirement matches. Errors: `lock` or a requirement does
/// not parse.
fn share_features(doc: &mut DocumentMut, lock: &str) -> Result<()> {
    let lock: DocumentMut = lock.parse().context("parsing Cargo.lock")?;
    let locked: Vec<(&str, semver::Version)> = lock
        .get("package")
        .and_then(Item::as_array_of_tables)
        .context("Cargo.lock without [[package]]")?
        .iter()
        .filter_map(|p| {
            let version = semver::Version::parse(p.get("version")?.as_str()?).ok()?;
            Some((p.get("name")?.as_str()?, version))
        })
        .collect();
    let mut commented = Vec::new();
    for pin in &SHARED_FEATURES {
        let req = semver::VersionReq::parse(pin.req).with_context(|| format!("{} {}", pin.krate, pin.req))?;
        if !locked.iter().any(|(name, v)| *name == pin.krate && req.matches(v)) {
            continue;
        }
        let mut entry = toml_edit::InlineTable::new();
        entry.insert("version", pin.req.into());
        if !pin.default_features {
            entry.insert("default-features", false.into());
        }
        if !pin.features.is_empty() {
            entry.insert("features", toml_edit::Array::from_iter(pin.features.iter().copied()).into());
        }
        let table = doc
            .entry(pin.table)
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_mut()
            .with_context(|| format!("[{}] is not a table", pin.table))?;
        // A second version of a crate (syn 2 and 3) under its own name.
        let key = if table.contains_key(pin.krate) {
            entry.insert("package", pin.krate.into());
            format!("{}-{}", pin.krate, pin.req.replace('.', "-"))
        } else {
            pin.krate.to_string()
        };
        table.insert(&key, Item::Value(entry.into()));
        if !commented.contains(&pin.table)
            && let Some(mut key) = table.key_mut(&key)
        {
            commented.push(pin.table);
            key.leaf_decor_mut()
                .set_prefix("# historical-perf: the default build's features (SHARED_FEATURES)\n");
        }
    }
    Ok(())
}

/// Where the benchmarks' binary `name`'s crate root is, relative to `repo`,
/// as Cargo finds it: `benches/src/bin/<name>.rs`, or
/// `benches/src/bin/<name>/main.rs` for a binary of several files
/// (`memory`).
fn bin_path(repo: &Path, name: &str) -> String {
    let single = format!("benches/src/bin/{name}.rs");
    if repo.join(&single).is_file() { single } else { format!("benches/src/bin/{name}/main.rs") }
}

/// The name a generated build gives the repository's binary `name`
/// (`past-run-case`, `past-memory`). Its builds share the repository's
/// target directory, where Cargo puts every package's binaries side by side
/// (`target/release/<name>`): under the same name, a build of the
/// repository's own binaries while a release's benchmarks run would swap
/// the binary they run (benches/benches/instructions.rs runs whichever `run-case`
/// its package has).
pub fn past_bin(name: &str) -> String {
    format!("past-{name}")
}

/// The executable Cargo built for binary target `name`, from the JSON
/// messages (`--message-format=json...`) on a build's standard output.
/// Errors: no such artifact among them.
pub fn executable(stdout: &[u8], name: &str) -> Result<PathBuf> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .filter(|m| m["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .with_context(|| format!("the build names no executable of binary {name}"))
}

/// Keeps only the targets named in `wanted` (each whose name is there),
/// each with its path from `path` (absolute: the manifest lives elsewhere).
/// Errors: a target without a name, or a wanted one missing.
fn keep_targets(targets: &mut ArrayOfTables, wanted: &[&str], path: impl Fn(&str) -> Item) -> Result<()> {
    targets.retain(|t| t.get("name").and_then(Item::as_str).is_some_and(|n| wanted.contains(&n)));
    let mut found = Vec::new();
    for target in targets.iter_mut() {
        let name = target.get("name").and_then(Item::as_str).context("a target without name")?.to_string();
        target.insert("path", path(&name));
        found.push(name);
    }
    let missing: Vec<&&str> = wanted.iter().filter(|w| !found.iter().any(|f| f == *w)).collect();
    ensure!(missing.is_empty(), "Cargo.toml has no target {missing:?}");
    Ok(())
}

/// The features a build of `release` for `suite` turns on (`cargo bench
/// --no-default-features --features ...`): the library's, `historical-perf`,
/// [`Suite::features`], and with the floors [`Release::floor_features`].
/// The generated manifest keeps only these.
pub fn features(release: &Release, suite: Suite) -> Vec<&'static str> {
    let mut features = vec![release.library.feature(), "historical-perf"];
    features.extend(suite.features());
    if suite.floors() {
        features.extend(release.floor_features());
    }
    features
}

/// The benchmarks' dev-dependencies only one suite uses: gungraun, the
/// instruction counts' ([`Suite::dev_dependencies`]). Every other suite's
/// build drops it (it would be compiled with every bench).
const OPTIONAL_DEV_DEPENDENCIES: [&str; 1] = ["gungraun"];

/// The dependency an entry of a feature's list names: `dep:x`, `x/f` and
/// `x?/f` name `x`; another feature's name names none.
fn dependency_of(entry: &str) -> Option<&str> {
    entry.strip_prefix("dep:").or_else(|| entry.split_once('/').map(|(d, _)| d.trim_end_matches('?')))
}

/// The dependency an entry of a feature's list turns on: as
/// [`dependency_of`], but `x?/f` turns on none (only a feature of `x`, if
/// something else turns `x` on).
fn enabled_by(entry: &str) -> Option<&str> {
    if entry.split_once('/').is_some_and(|(d, _)| d.ends_with('?')) { None } else { dependency_of(entry) }
}

/// Leaves only what the features `kept` turn on in manifest `doc`: every
/// other feature is emptied (kept by name, so `cfg(feature = ..)` stays a
/// known name), `default` is empty, the optional dependencies no kept
/// feature turns on are removed (the other libraries', the socket runner,
/// the tools' unless the suite needs them), and a kept feature's entries
/// naming a removed dependency or an emptied feature go too (`tools` turns
/// on `sockets`, whose crate is gone). An old release then resolves with
/// nothing of the other libraries in its lock file. Errors: `doc` has no
/// `[dependencies]`.
fn prune(doc: &mut DocumentMut, kept: &[&str]) -> Result<()> {
    let mut used = BTreeSet::new();
    if let Some(features) = doc.get_mut("features").and_then(Item::as_table_mut) {
        for (name, item) in features.iter_mut() {
            if kept.contains(&name.get()) {
                let list = item.as_array().into_iter().flatten().filter_map(|v| v.as_str());
                used.extend(list.filter_map(enabled_by).map(str::to_string));
            } else {
                *item = value(toml_edit::Array::new());
            }
        }
    }
    let deps = doc["dependencies"].as_table_mut().context("no [dependencies]")?;
    deps.retain(|key, item| item.get("optional").and_then(Item::as_bool) != Some(true) || used.contains(key));
    let deps = deps.clone();
    if let Some(features) = doc.get_mut("features").and_then(Item::as_table_mut) {
        for (_, item) in features.iter_mut() {
            if let Some(list) = item.as_array_mut() {
                list.retain(|v| match v.as_str() {
                    Some(f) => match dependency_of(f) {
                        Some(d) => deps.contains_key(d),
                        None => kept.contains(&f),
                    },
                    None => true,
                });
            }
        }
    }
    Ok(())
}

/// Writes the release's build directory for `suite`
/// (`<work>/build/<`[`Suite::build_dir_name`]`>`: manifest, a copy of the
/// lock file, a link to the certificates) and, for OpenSSL, builds OpenSSL
/// (shared by both suites). Errors: a file cannot be written, or a build
/// or pin fails.
pub fn prepare(paths: &Paths, release: &Release, suite: Suite) -> Result<Prepared> {
    let dir = paths.work.join("build").join(suite.build_dir_name(release));
    let generated = manifest(&paths.repo, release, suite)?;
    for (path, doc) in generated.files() {
        let path = dir.join(path);
        let parent = path.parent().context("a manifest's folder")?;
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        fs::write(&path, doc.to_string()).with_context(|| format!("writing {}", path.display()))?;
    }
    let manifest_path = dir.join("Cargo.toml");
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        fs::copy(paths.repo.join("Cargo.lock"), &lock).context("copying Cargo.lock")?;
    }
    let certs = dir.join("certs");
    if !certs.exists() {
        std::os::unix::fs::symlink(paths.repo.join("certs"), &certs).context("linking certs/")?;
    }
    let mut env = Vec::new();
    let libcrypto = match release.library {
        Library::Openssl => {
            let install = build_openssl(paths, release)?;
            env.push(("OPENSSL_DIR".to_string(), install.display().to_string()));
            env.push(("OPENSSL_STATIC".to_string(), "1".to_string()));
            format!("OpenSSL {} (openssl-src {}, static)", release.label(), release.version)
        }
        _ => String::new(),
    };
    let era = match release.library {
        Library::S2nTls => Some(pin_crypto_to_era(paths, &manifest_path, release)?),
        _ => None,
    };
    Ok(Prepared { manifest: manifest_path, floor: generated.floor_crates()?, env, libcrypto, era })
}

/// The profile setting OpenSSL releases' builds give openssl-sys
/// (`[profile.release.package.openssl-sys]`): no debug info, where the
/// repository's builds have line tables. openssl-sys's build script watches
/// `OPENSSL_DIR` and `OPENSSL_STATIC`, which these builds set: with the
/// repository's profile its build-script run, openssl-sys and every crate
/// above it would be the repository's own units in the shared target
/// directory, rebuilt here for each release and again by the repository's
/// next system-OpenSSL build. Debug info is part of a build-script run's
/// profile (Cargo hashes it into the unit's name), so this one setting
/// makes them units of their own, while Criterion, serde and the rest stay
/// the repository's (compiled once). openssl-sys holds bindings only: no
/// code whose debug info a benchmark could see.
const OPENSSL_SYS_PROFILE: (&str, bool) = ("debug", false);

/// `cargo`, without the variables `cargo run` set for this program
/// ([`tls_bench::variants::set_by_cargo_run`]): build scripts that watch
/// them (ring's `CARGO_MANIFEST_DIR`) would rebuild in every build here,
/// and again in the user's next build of the same target directory.
pub fn cargo() -> Command {
    let mut cmd = Command::new("cargo");
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(tls_bench::variants::set_by_cargo_run) {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// The crates pinned to an s2n-tls release's era: its libcrypto bindings.
const ERA_PINNED: [&str; 2] = ["aws-lc-rs", "aws-lc-sys"];

/// Locked versions of `krate` in the build at `manifest` (`cargo metadata`,
/// which also brings the copied lock file in line with the manifest).
fn locked_versions(paths: &Paths, manifest: &Path, krate: &str) -> Result<Vec<semver::Version>> {
    let out = run(
        cargo()
            .args(["metadata", "--all-features", "--format-version", "1", "--manifest-path"])
            .arg(manifest)
            .env("CARGO_TARGET_DIR", &paths.target),
        "reading the build's lock (cargo metadata)",
    )?;
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).context("parsing cargo metadata")?;
    let packages = meta["packages"].as_array().context("cargo metadata without packages")?;
    let mut found: Vec<semver::Version> = packages
        .iter()
        .filter(|p| p["name"] == krate)
        .filter_map(|p| p["version"].as_str().and_then(|v| semver::Version::parse(v).ok()))
        .collect();
    found.sort();
    found.dedup();
    Ok(found)
}

/// Pins aws-lc-rs and aws-lc-sys (where the build has them) to the newest
/// compatible versions published by the s2n-tls release's own publish time
/// (crates.io index `pubtime`), with `cargo update --precise` in the
/// generated build's lock file, so that an old s2n-tls runs on the
/// libcrypto of its day rather than on today's. Returns what was done, for
/// the report. Errors: the index cannot be read, or cargo refuses a pin.
fn pin_crypto_to_era(paths: &Paths, manifest: &Path, release: &Release) -> Result<String> {
    let s2n = releases::fetch_index(release.library.crate_name())?;
    let Some(deadline) = s2n.iter().find(|p| p.version == release.version).and_then(|p| p.time.clone())
    else {
        return Ok(format!("not pinned: the index has no publish time for s2n-tls {}", release.version));
    };
    let (mut pinned, mut kept, mut updated) = (0, Vec::new(), false);
    for krate in ERA_PINNED {
        let locked = locked_versions(paths, manifest, krate)?;
        if locked.is_empty() {
            continue;
        }
        let index = releases::fetch_index(krate)?;
        for current in locked {
            let Some(era) = releases::newest_published_by(&index, &deadline, &current) else {
                kept.push(format!("{krate} {current} kept: none of its series was out by then"));
                continue;
            };
            if era != current {
                run(
                    cargo()
                        .args(["update", "--manifest-path"])
                        .arg(manifest)
                        .args(["-p", &format!("{krate}@{current}"), "--precise", &era.to_string()])
                        .env("CARGO_TARGET_DIR", &paths.target),
                    &format!("pinning {krate} to {era}"),
                )?;
                updated = true;
            }
            pinned += 1;
        }
    }
    if updated {
        relock_unpinned(paths, manifest)?;
    }
    let day = deadline.split('T').next().unwrap_or(&deadline);
    let mut note = if pinned > 0 {
        format!("pinned to the newest published by {day}, the release's date")
    } else {
        "no aws-lc crate to pin".to_string()
    };
    for k in kept {
        note.push_str("; ");
        note.push_str(&k);
    }
    Ok(note)
}

/// The registry packages of a lock file (`name version`) and the packages
/// each depends on (`name version`: a dependency written without its
/// version is the lock file's only package of that name). Errors: the
/// text does not parse as a lock file.
fn lock_edges(lock: &str) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let lock: DocumentMut = lock.parse().context("parsing a lock file")?;
    let packages =
        lock.get("package").and_then(Item::as_array_of_tables).context("a lock file without [[package]]")?;
    let field = |p: &Table, key: &str| p.get(key).and_then(Item::as_str).map(str::to_string);
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in packages.iter() {
        if let (Some(name), Some(version)) = (field(p, "name"), field(p, "version")) {
            versions.entry(name).or_default().push(version);
        }
    }
    let mut edges = BTreeMap::new();
    for p in packages.iter().filter(|p| p.contains_key("source")) {
        let (Some(name), Some(version)) = (field(p, "name"), field(p, "version")) else { continue };
        let deps = p.get("dependencies").and_then(Item::as_array).into_iter().flatten();
        let deps: BTreeSet<String> = deps
            .filter_map(|d| d.as_str())
            .filter_map(|d| {
                let mut words = d.split(' ');
                let dep = words.next()?;
                let version = match words.next() {
                    Some(v) => v.to_string(),
                    None => versions.get(dep).filter(|v| v.len() == 1)?[0].clone(),
                };
                Some(format!("{dep} {version}"))
            })
            .collect();
        edges.insert(format!("{name} {version}"), deps);
    }
    Ok(edges)
}

/// The packages of `ours` (a build's [`lock_edges`]) at a version `repo`
/// (the repository's) has, depending on the same crates there at other
/// versions, neither side naming an era-pinned crate: what
/// [`relock_unpinned`] locks again.
fn retargeted(
    repo: &BTreeMap<String, BTreeSet<String>>,
    ours: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let names = |deps: &BTreeSet<String>| -> BTreeSet<String> {
        deps.iter().filter_map(|d| d.split(' ').next()).map(str::to_string).collect()
    };
    let era = |deps: &BTreeSet<String>| names(deps).iter().any(|n| ERA_PINNED.contains(&n.as_str()));
    ours.iter()
        .filter(|(pkg, deps)| {
            repo.get(*pkg).is_some_and(|theirs| {
                theirs != *deps && names(theirs) == names(deps) && !era(theirs) && !era(deps)
            })
        })
        .map(|(pkg, _)| pkg.clone())
        .collect()
}

/// Gives back the repository's dependencies to the packages that the era
/// pins' `cargo update --precise` re-resolved on the way (cargo 1.95, taking
/// aws-lc-rs from 1.19.0 to 1.18.2, also moved tempfile from getrandom 0.4
/// to 0.3): each registry package of the build's lock file, at a version
/// the repository's lock file has, that depends on the same crates there
/// at other versions, neither side naming an era-pinned crate, is locked
/// again at its own version (`cargo update -p name@v --precise v`), which
/// takes the repository's versions back. Otherwise it, and everything above
/// it (pprof), would be a build of its own, for nothing the benchmarks
/// measure. Stops when a pass finds nothing, or only packages it found in
/// an earlier pass (locking one again can move another back: s2n-tls
/// 0.2.3's era, whose aws-lc-sys build tools hold windows-sys 0.59 beside
/// the repository's 0.61, turned tempfile, rustix, errno and is-terminal
/// round in a cycle of passes). Errors: a lock file cannot be read, or
/// cargo refuses.
fn relock_unpinned(paths: &Paths, manifest: &Path) -> Result<()> {
    let repo = lock_edges(&fs::read_to_string(paths.repo.join("Cargo.lock")).context("reading Cargo.lock")?)?;
    let lock = manifest.with_file_name("Cargo.lock");
    let mut seen = BTreeSet::new();
    loop {
        let text = fs::read_to_string(&lock).with_context(|| format!("reading {}", lock.display()))?;
        let changed = retargeted(&repo, &lock_edges(&text)?);
        if changed.iter().all(|pkg| seen.contains(pkg)) {
            return Ok(());
        }
        for pkg in &changed {
            let (name, version) = pkg.split_once(' ').context("a package without version")?;
            run(
                cargo()
                    .args(["update", "--manifest-path"])
                    .arg(manifest)
                    .args(["-p", &format!("{name}@{version}"), "--precise", version])
                    .env("CARGO_TARGET_DIR", &paths.target),
                &format!("locking {name} {version} as the repository does"),
            )?;
        }
        seen.extend(changed);
    }
}

/// Builds OpenSSL `release` with `openssl-src` (a generated crate whose
/// build script does it) into `target/historical-perf/openssl-build/<crate version>/`;
/// returns the install directory. Reuses an earlier build.
fn build_openssl(paths: &Paths, release: &Release) -> Result<PathBuf> {
    let out = paths.work.join("openssl-build").join(release.version.to_string());
    let install = out.join("install");
    if install.join("lib").join("libssl.a").exists() || install.join("lib64").join("libssl.a").exists() {
        return Ok(install);
    }
    let krate = paths.work.join("openssl-src-build").join(release.version.to_string());
    fs::create_dir_all(krate.join("src"))?;
    fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"openssl-src-build\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [build-dependencies]\nopenssl-src = \"={}\"\n\n[workspace]\n",
            release.version
        ),
    )?;
    fs::write(krate.join("src/lib.rs"), "//! Builds OpenSSL in its build script.\n")?;
    fs::write(
        krate.join("build.rs"),
        "fn main() {\n    let out = std::env::var(\"TLS_BENCH_OPENSSL_OUT\").expect(\"TLS_BENCH_OPENSSL_OUT\");\n    \
         println!(\"cargo::rerun-if-env-changed=TLS_BENCH_OPENSSL_OUT\");\n    \
         openssl_src::Build::new().out_dir(out).build();\n}\n",
    )?;
    run(
        cargo()
            .args(["build", "--release", "--manifest-path"])
            .arg(krate.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &paths.target)
            .env("TLS_BENCH_OPENSSL_OUT", &out),
        &format!("building OpenSSL {}", release.label()),
    )?;
    ensure!(install.exists(), "openssl-src left no {}", install.display());
    Ok(install)
}

/// The crates a floor backend calls for a Rust library
/// ([`Generated::floor_crates`]).
const FLOOR_CRATES: [&str; 2] = ["ring", "aws-lc-rs"];

/// A floor crate and the crate under it that holds the C library: a graph
/// with two versions of the second has two libraries, of which the floor
/// calls one (s2n-tls 0.1's build adds aws-lc-rs beside the release's
/// aws-lc-sys, [`s2n_aws_lc_rs`]: on another aws-lc-sys it would measure
/// another AWS-LC).
const FLOOR_SYS_CRATES: [(&str, &str); 1] = [("aws-lc-rs", "aws-lc-sys")];

/// Why a release's crypto floor must not run, `None` when it may: the
/// release's graph (`libcrypto`, [`libcrypto_of`]) holds a version of a
/// floor crate that none of the floor's own dependencies on it
/// ([`Generated::floor_crates`]) resolves to, or more versions of it than the floor
/// has dependencies on it, or two versions of the C library under a floor
/// crate ([`FLOOR_SYS_CRATES`]). Then the release calls crypto the floor
/// does not (rustls 0.20 on *ring* 0.16 beside a floor on *ring* 0.17), and
/// its floor would measure another crypto library. rustls 0.20's build gives
/// the floor both its *ring* versions ([`manifest`]), so it runs.
pub fn floor_refusal(libcrypto: &str, floor: &[(String, semver::VersionReq)]) -> Option<String> {
    let crates: Vec<(&str, &str)> = libcrypto.split(", ").filter_map(|c| c.split_once(' ')).collect();
    let foreign: Vec<String> = FLOOR_CRATES
        .into_iter()
        .filter_map(|name| {
            let linked: Vec<&str> = crates.iter().filter(|(n, _)| *n == name).map(|(_, v)| *v).collect();
            let reqs: Vec<&semver::VersionReq> =
                floor.iter().filter(|(n, _)| n == name).map(|(_, r)| r).collect();
            let called =
                |v: &&str| semver::Version::parse(v).is_ok_and(|v| reqs.iter().any(|r| r.matches(&v)));
            (linked.len() > reqs.len().max(1) || !linked.iter().all(called))
                .then(|| format!("{name} {}", linked.join(" and ")))
        })
        .chain(FLOOR_SYS_CRATES.into_iter().filter_map(|(floor_crate, sys)| {
            let linked: Vec<&str> = crates.iter().filter(|(n, _)| *n == sys).map(|(_, v)| *v).collect();
            (linked.len() > 1 && floor.iter().any(|(n, _)| n == floor_crate))
                .then(|| format!("{sys} {}", linked.join(" and ")))
        }))
        .collect();
    (!foreign.is_empty()).then(|| {
        format!(
            "it links {}: a crypto crate of another version than the floor's, whose figures would measure \
             another crypto library",
            foreign.join("; ")
        )
    })
}

/// The crypto library a non-OpenSSL build links: the crypto crates in its
/// dependency graph (`cargo tree` with the features built; the lock file
/// would also list optional crates that are not built).
pub fn libcrypto_of(paths: &Paths, prepared: &Prepared, release: &Release) -> Result<String> {
    if !prepared.libcrypto.is_empty() {
        return Ok(prepared.libcrypto.clone());
    }
    let out = run(
        cargo()
            .args(["tree", "--manifest-path"])
            .arg(&prepared.manifest)
            .args(["--no-default-features", "--features"])
            .arg(features(release, Suite::Criterion).join(","))
            .args(["-e", "normal", "--prefix", "none"])
            .env("CARGO_TARGET_DIR", &paths.target),
        "listing the crypto crates (cargo tree)",
    )?;
    let wanted = ["aws-lc-rs", "aws-lc-sys", "aws-lc-fips-sys", "openssl-sys", "ring"];
    let mut found: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (name, version) = (words.next()?, words.next()?);
            wanted.contains(&name).then(|| format!("{name} {}", version.trim_start_matches('v')))
        })
        .collect();
    found.sort();
    found.dedup();
    let mut linked = if found.is_empty() {
        "system libcrypto (no crypto crate in the build)".to_string()
    } else {
        found.join(", ")
    };
    // openssl-sys without OPENSSL_DIR (s2n-tls up to 0.0.41): the system's libcrypto.
    if found.iter().any(|c| c.starts_with("openssl-sys")) {
        let version = Command::new("pkg-config")
            .args(["--modversion", "libcrypto"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        linked.push_str(&format!(
            " on the system's libcrypto {}",
            version.as_deref().unwrap_or("(version unknown)")
        ));
    }
    Ok(match &prepared.era {
        Some(era) => format!("{linked} ({era})"),
        None => linked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use semver::Version;

    #[test]
    fn generated_manifest_points_at_the_repository_and_pins_the_release() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let release = Release { library: Library::Rustls, version: Version::new(0, 22, 4) };
        let generated = manifest(repo, &release, Suite::Criterion).unwrap();
        let (root, doc, harness) = (&generated.root, &generated.benches, &generated.harness);
        assert_eq!(generated.harness_dependency("rustls").unwrap()["version"].as_str(), Some("=0.22.4"));
        for (doc, path) in [(doc, "benches/src/lib.rs"), (harness, "crates/harness/src/lib.rs")] {
            let lib = doc["lib"]["path"].as_str().unwrap();
            assert!(Path::new(lib).is_absolute() && lib.ends_with(path), "{lib}");
        }
        assert!(doc.get("bin").is_none() && harness.get("target").is_none());
        // The workspace alone: no package of the tools.
        for table in ["package", "dependencies", "bin", "test", "example", "features"] {
            assert!(root.get(table).is_none(), "[{table}] in the generated workspace");
        }
        assert!(root.to_string().starts_with("# Generated by historical-perf"), "{root}");
        // The benchmarks, the harness and the results (library-free), no socket
        // runner, and no charts: the Criterion benches draw nothing.
        assert_eq!(strings(root["workspace"].get("members")), MEMBERS);
        assert!(generated.charts.is_none() && generated.files().len() == 4);
        let ws = root["workspace"]["dependencies"].as_table().unwrap();
        for gone in ["tls-bench-sockets", "tokio", "s2n-tls", "clap", "hyper"] {
            assert!(!ws.contains_key(gone), "{gone} left in [workspace.dependencies]");
        }
        let benches = doc["bench"].as_array_of_tables().unwrap();
        let names: Vec<&str> = benches.iter().map(|b| b["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["handshake", "throughput"]);
        for bench in benches {
            assert!(Path::new(bench["path"].as_str().unwrap()).exists());
        }
        assert!(!doc["dev-dependencies"].as_table().unwrap().contains_key("gungraun"));
        assert!(doc["features"].get("historical-perf").is_some());
        // Only rustls's dependencies stay; other features are emptied.
        let deps = harness["dependencies"].as_table().unwrap();
        assert!(deps.contains_key("rustls") && deps.contains_key("aws-lc-rs"));
        for other in ["s2n-tls", "openssl", "openssl-sys", "boring", "boring-sys"] {
            assert!(!deps.contains_key(other), "{other} left in");
        }
        assert!(harness["features"]["boring"].as_array().unwrap().is_empty());
        let deps = doc["dependencies"].as_table().unwrap();
        // No binary's crates, no tests: the Criterion benches need neither.
        for tool in ["clap", "csv", "chrono", "tls-bench-charts"] {
            assert!(!deps.contains_key(tool), "{tool} left in");
        }
        assert!(doc["features"]["tools"].as_array().unwrap().is_empty());
        assert!(doc.get("test").is_none());
        assert!(doc["features"]["boring"].as_array().unwrap().is_empty());
        assert!(doc["features"]["default"].as_array().unwrap().is_empty());
        assert!(!doc["features"]["rustls"].as_array().unwrap().is_empty());
        assert_eq!(
            strings(generated.harness_dependency("rustls").unwrap().get("features")),
            ["tls12", "logging", "aws_lc_rs", "ring"],
            "0.22's own feature names"
        );
    }

    #[test]
    fn rustls_0_20s_floor_is_on_the_ring_it_links() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let ring = |minor| {
            let release = Release { library: Library::Rustls, version: Version::new(0, minor, 9) };
            let generated = manifest(repo, &release, Suite::Criterion).unwrap();
            generated.harness_dependency("ring").unwrap().as_str().unwrap().to_string()
        };
        assert_eq!(ring(20), "0.16");
        assert_eq!(ring(21), "0.17");
        let release = Release { library: Library::Rustls, version: Version::new(0, 20, 9) };
        let doc = manifest(repo, &release, Suite::Criterion).unwrap().harness;
        let webpki_ring = &doc["dependencies"]["webpki-ring"];
        assert_eq!(
            (webpki_ring["package"].as_str(), webpki_ring["version"].as_str()),
            (Some("ring"), Some("0.17"))
        );
        assert!(strings(doc["features"].get("crypto-floor")).contains(&"dep:webpki-ring".to_string()));
    }

    #[test]
    fn s2n_tls_floor_is_aws_lc_rs_on_the_release_s_aws_lc_and_the_openssl_crate_on_the_system_libcrypto() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let s2n = |v: &str| Release { library: Library::S2nTls, version: Version::parse(v).unwrap() };
        let doc = |release: &Release, suite| manifest(repo, release, suite).unwrap();
        for (suite, v) in [(Suite::Criterion, "0.2.3"), (Suite::Instructions, "0.1.2")] {
            let generated = doc(&s2n(v), suite);
            let on = &generated.harness;
            // The release's aws-lc-rs, whichever 1.x the era pin picks; no *ring*.
            let aws_lc_rs = generated.harness_dependency("aws-lc-rs").unwrap();
            assert_eq!(aws_lc_rs["version"].as_str(), Some("1"));
            assert_eq!(strings(aws_lc_rs.get("features")), ["aws-lc-sys"]);
            assert!(!on["dependencies"].as_table().unwrap().contains_key("ring"));
            assert!(strings(on["features"].get("s2n-tls")).contains(&"dep:aws-lc-rs".to_string()));
            assert!(!strings(on["features"].get("crypto-floor")).contains(&"dep:ring".to_string()));
            assert_eq!(generated.floor_crates().unwrap().len(), 1);
            assert_eq!(generated.harness_dependency("s2n-tls").unwrap().as_str(), Some(&*format!("={v}")));
            // 0.0: no aws-lc-rs, on the system's libcrypto.
            let generated = doc(&s2n("0.0.8"), suite);
            let off = &generated.harness;
            assert!(!off["dependencies"].as_table().unwrap().contains_key("aws-lc-rs"));
            assert!(!strings(off["features"].get("s2n-tls")).contains(&"dep:aws-lc-rs".to_string()));
            assert!(generated.floor_crates().unwrap().is_empty());
            // Its floor, with the Criterion suite only: the `openssl` crate on the
            // release's openssl-sys (no OpenSSL stack, no vendored OpenSSL).
            let deps = off["dependencies"].as_table().unwrap();
            let floors = suite == Suite::Criterion;
            for dep in ["openssl", "foreign-types"] {
                assert_eq!(deps.contains_key(dep), floors, "{dep} in {suite:?}");
            }
            assert_eq!(
                strings(off["features"].get("openssl-floor")).len(),
                if floors { 3 } else { 0 },
                "{suite:?}"
            );
            assert!(!strings(off["features"].get("openssl")).iter().any(|f| f.contains("vendored")));
            assert!(!generated.benches["dependencies"].as_table().unwrap().contains_key("tls-bench-sockets"));
        }
        for v in ["0.1.2", "0.2.3", "0.3.47"] {
            assert!(s2n(v).floor_features().is_empty(), "{v}");
        }
        assert_eq!(s2n("0.0.35").floor_features(), ["openssl-floor"]);
        assert_eq!(
            features(&s2n("0.0.35"), Suite::Criterion),
            ["s2n-tls", "historical-perf", "crypto-floor", "openssl-floor"]
        );
        assert_eq!(features(&s2n("0.0.35"), Suite::Instructions), ["s2n-tls", "historical-perf", "tools"]);
        let floor = doc(&s2n("0.3.1"), Suite::Criterion).floor_crates().unwrap();
        assert_eq!(floor_refusal("aws-lc-rs 1.8.1, aws-lc-sys 0.20.1", &floor), None);
        // 0.1.2's aws-lc-rs on another aws-lc-sys than the release's.
        let refusal = floor_refusal("aws-lc-rs 1.6.0, aws-lc-sys 0.12.1, aws-lc-sys 0.13.0", &floor).unwrap();
        assert!(refusal.starts_with("it links aws-lc-sys 0.12.1 and 0.13.0: "), "{refusal}");
        assert_eq!(floor_refusal("aws-lc-rs 1.5.2, aws-lc-sys 0.12.1", &floor), None);
        // Two aws-lc-sys without an aws-lc-rs floor: not the floor's concern.
        assert_eq!(floor_refusal("aws-lc-sys 0.12.1, aws-lc-sys 0.13.0", &[]), None);
        assert_eq!(
            features(&s2n("0.3.47"), Suite::Criterion),
            ["s2n-tls", "historical-perf", "crypto-floor"]
        );
    }

    /// The `[[bin]]` or `[[bench]]` (`kind`) targets of a generated
    /// manifest: name and path.
    fn targets(doc: &DocumentMut, kind: &str) -> Vec<(String, String)> {
        doc[kind]
            .as_array_of_tables()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap().to_string(), t["path"].as_str().unwrap().to_string()))
            .collect()
    }

    #[test]
    fn the_instruction_counts_manifest_keeps_run_case_its_bench_and_gungraun() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let release = Release { library: Library::Rustls, version: Version::new(0, 21, 12) };
        let generated = manifest(repo, &release, Suite::Instructions).unwrap();
        let doc = &generated.benches;
        let names = |kind: &str| targets(doc, kind);
        let bins = names("bin");
        assert_eq!(bins.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["past-run-case"]);
        let benches = names("bench");
        assert_eq!(benches.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["instructions"]);
        for (_, path) in bins.iter().chain(&benches) {
            assert!(Path::new(path).is_absolute() && Path::new(path).is_file(), "{path}");
        }
        let dev = doc["dev-dependencies"].as_table().unwrap();
        assert!(dev.contains_key("gungraun"));
        // run-case needs `tools` (clap).
        let deps = doc["dependencies"].as_table().unwrap();
        assert!(deps.contains_key("clap"));
        let tools: Vec<&str> =
            doc["features"]["tools"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
        assert!(tools.contains(&"dep:clap"), "{tools:?}");
        // The release's own adjustments are the Criterion build's.
        let criterion = manifest(repo, &release, Suite::Criterion).unwrap();
        for key in ["rustls", "aws-lc-rs"] {
            assert_eq!(
                generated.harness_dependency(key).map(Item::to_string),
                criterion.harness_dependency(key).map(Item::to_string),
                "{key}"
            );
        }
        assert_eq!(
            generated.harness["features"]["rustls"].to_string(),
            criterion.harness["features"]["rustls"].to_string()
        );
        // No socket runner.
        assert!(doc["dependencies"].get("tls-bench-sockets").is_none());
        assert_eq!(features(&release, Suite::Instructions), ["rustls", "historical-perf", "tools"]);
        assert_eq!(features(&release, Suite::Criterion), ["rustls", "historical-perf", "crypto-floor"]);
        let floor = |reqs: &[(&str, &str)]| -> Vec<(String, semver::VersionReq)> {
            reqs.iter().map(|(n, r)| (n.to_string(), semver::VersionReq::parse(r).unwrap())).collect()
        };
        let today = floor(&[("ring", "0.17"), ("aws-lc-rs", "1.19")]);
        assert_eq!(floor_refusal("aws-lc-rs 1.19.0, aws-lc-sys 0.47.0, ring 0.17.14", &today), None);
        // rustls 0.20: refused with the floor on *ring* 0.17 alone, run with
        // the floor on both (its manifest's `ring` and `webpki-ring`).
        let refusal = floor_refusal("ring 0.16.20, ring 0.17.14", &today).unwrap();
        assert!(refusal.starts_with("it links ring 0.16.20 and 0.17.14: "), "{refusal}");
        let both = floor(&[("ring", "0.16"), ("ring", "0.17")]);
        assert_eq!(floor_refusal("ring 0.16.20, ring 0.17.14", &both), None);
        let generated = manifest(
            repo,
            &Release { library: Library::Rustls, version: Version::new(0, 20, 9) },
            Suite::Criterion,
        )
        .unwrap();
        let from_manifest = generated.floor_crates().unwrap();
        assert_eq!(floor_refusal("ring 0.16.20, ring 0.17.14", &from_manifest), None, "{from_manifest:?}");
        // Two versions matching one dependency: one is not the floor's.
        let refusal = floor_refusal("ring 0.17.8, ring 0.17.14", &today).unwrap();
        assert!(refusal.starts_with("it links ring 0.17.8 and 0.17.14: "), "{refusal}");
        let refusal = floor_refusal("aws-lc-rs 1.13.0, aws-lc-rs 1.19.0, ring 0.17.14", &today).unwrap();
        assert!(refusal.starts_with("it links aws-lc-rs 1.13.0 and 1.19.0: "), "{refusal}");
        assert_eq!(
            features(
                &Release { library: Library::Openssl, version: Version::new(3, 0, 0) },
                Suite::Criterion
            ),
            ["openssl", "historical-perf", "crypto-floor"]
        );
    }

    #[test]
    fn openssl_releases_give_openssl_sys_a_profile_of_its_own_and_no_other_crate() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let openssl_sys = |generated: &Generated| -> Option<toml_edit::Item> {
            generated.root["profile"]["release"].get("package")?.get("openssl-sys").cloned()
        };
        let openssl =
            Release { library: Library::Openssl, version: Version::parse("111.28.2+1.1.1w").unwrap() };
        for suite in [Suite::Criterion, Suite::Dtls] {
            let generated = manifest(repo, &openssl, suite).unwrap();
            let own = openssl_sys(&generated).expect("no [profile.release.package.openssl-sys]");
            let table = own.as_table_like().unwrap();
            assert_eq!(table.len(), 1, "{own}");
            assert_eq!(table.get(OPENSSL_SYS_PROFILE.0).and_then(Item::as_bool), Some(OPENSSL_SYS_PROFILE.1));
            // The repository's release profile is otherwise the same.
            assert_eq!(generated.root["profile"]["release"]["debug"].as_str(), Some("line-tables-only"));
            assert_eq!(generated.root["profile"]["release"]["package"].as_table_like().unwrap().len(), 1);
        }
        let rustls = Release { library: Library::Rustls, version: Version::new(0, 21, 12) };
        assert!(openssl_sys(&manifest(repo, &rustls, Suite::Criterion).unwrap()).is_none());
    }

    #[test]
    fn the_dtls_manifest_keeps_the_dtls_bench_and_the_memory_binary() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let release =
            Release { library: Library::Openssl, version: Version::parse("300.1.6+3.1.4").unwrap() };
        let generated = manifest(repo, &release, Suite::Dtls).unwrap();
        let doc = &generated.benches;
        let target = |kind: &str| targets(doc, kind);
        let (bins, benches) = (target("bin"), target("bench"));
        assert_eq!(bins.len(), 1);
        assert_eq!(bins[0].0, "past-memory");
        assert!(
            bins[0].1.ends_with("benches/src/bin/memory/main.rs") && Path::new(&bins[0].1).is_file(),
            "{bins:?}"
        );
        assert_eq!(benches.len(), 1);
        assert!(benches[0].0 == "dtls" && Path::new(&benches[0].1).is_file(), "{benches:?}");
        assert!(!doc["dev-dependencies"].as_table().unwrap().contains_key("gungraun"));
        let deps = doc["dependencies"].as_table().unwrap();
        // `tools` is the benchmarks' (the memory binary's crates): no socket
        // runner, no tokio. The memory binary's results crate is a member,
        // as in every suite.
        for socket in ["tokio", "tls-bench-sockets"] {
            assert!(!deps.contains_key(socket), "{socket} left in");
        }
        assert!(deps.contains_key("tls-bench-results") && deps.contains_key("tls-bench-charts"));
        // The memory binary's graph: the charts are a member, at the repository's sources.
        let mut members = MEMBERS.to_vec();
        members.push(CHARTS);
        assert_eq!(strings(generated.root["workspace"].get("members")), members);
        let charts = generated.charts.as_ref().expect("no charts manifest");
        let lib = charts["lib"]["path"].as_str().unwrap();
        assert!(
            Path::new(lib).is_absolute()
                && Path::new(lib).is_file()
                && lib.ends_with("crates/charts/src/lib.rs")
        );
        assert!(generated.files().iter().any(|(path, _)| *path == "crates/charts/Cargo.toml"));
        let ws = generated.root["workspace"]["dependencies"].as_table().unwrap();
        assert!(ws.contains_key("tls-bench-charts") && ws.contains_key("plotters"), "{ws}");
        let deps = generated.harness["dependencies"].as_table().unwrap();
        assert!(
            deps.contains_key("openssl") && !deps.contains_key("rustls") && !deps.contains_key("s2n-tls")
        );
    }

    #[test]
    fn a_failure_keeps_the_whole_panic_message() {
        let stderr = "warning: unused import: `x`\n   Compiling tls-bench v0.1.0 (/w)\n\
            skip send-loop/DTLSv1.3,x/openssl-1.1.1w: no DTLS 1.3\n\n\
            thread 'main' (4242) panicked at benches/benches/dtls.rs:57:39:\n\
            called `Result::unwrap()` on an `Err` value: OpenSSL 1.1.1: key share type 408 is not read back here\n\
            \n\
            Caused by:\n    0: the group\n\
            note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\
            error: bench failed, to rerun pass `--bench dtls`\n";
        assert_eq!(
            reason_from_stderr(stderr),
            "thread 'main' (4242) panicked at benches/benches/dtls.rs:57:39: / called `Result::unwrap()` on an `Err` \
             value: OpenSSL 1.1.1: key share type 408 is not read back here / Caused by: /     0: the group / \
             error: bench failed, to rerun pass `--bench dtls`"
        );
        // A message whose lines look like errors, a second panic without
        // the note, and more errors than are kept: the panics come first.
        let stderr = "error: one\nerror: two\nerror: three\n\
            thread 'main' panicked at src/a.rs:1:1:\nerror: in the message\n\
            thread 'other' panicked at src/b.rs:2:2:\nsecond\n\
            error: process didn't exit successfully: `x` (exit status: 101)\n";
        assert_eq!(
            reason_from_stderr(stderr),
            "thread 'main' panicked at src/a.rs:1:1: / error: in the message / \
             thread 'other' panicked at src/b.rs:2:2: / second / error: one"
        );
        // Before Rust 1.73 the message was on the panic's line.
        assert_eq!(
            reason_from_stderr(
                "thread 'main' panicked at 'boom', src/a.rs:1:1\nnote: run with `RUST_BACKTRACE=1`"
            ),
            "thread 'main' panicked at 'boom', src/a.rs:1:1"
        );
        assert_eq!(reason_from_stderr("a\nb\nc\nd\n"), "b / c / d", "no error line: the last three");
        assert_eq!(
            reason_from_stderr("error[E0425]: x\nerror: y\nerror: z\nerror: w"),
            "error[E0425]: x / error: y / error: z"
        );
    }

    /// The strings of array `item` (none if it is not one).
    fn strings(item: Option<&Item>) -> Vec<String> {
        item.and_then(Item::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str()).map(str::to_string).collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_shared_crates_are_pinned_to_the_default_builds_features() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let lock = fs::read_to_string(repo.join("Cargo.lock")).unwrap();
        let own: DocumentMut = fs::read_to_string(repo.join("Cargo.toml")).unwrap().parse().unwrap();
        let benches: DocumentMut =
            fs::read_to_string(repo.join("benches/Cargo.toml")).unwrap().parse().unwrap();
        let release =
            Release { library: Library::Openssl, version: Version::parse("111.28.2+1.1.1w").unwrap() };
        for suite in [Suite::Criterion, Suite::Instructions, Suite::Dtls] {
            let doc = manifest(repo, &release, suite).unwrap().benches;
            let dev = doc["dev-dependencies"].as_table().unwrap();
            let build = doc["build-dependencies"].as_table().unwrap();
            assert_eq!(strings(build["cc"].get("features")), ["parallel"]);
            assert_eq!(build["syn"]["version"].as_str(), Some("2"));
            assert_eq!(
                (build["syn-3"]["package"].as_str(), build["syn-3"]["version"].as_str()),
                (Some("syn"), Some("3"))
            );
            // The tools' own entries: what the default build asks for.
            for tool in ["clap", "plotters"] {
                let theirs = &own["workspace"]["dependencies"][tool];
                assert_eq!(strings(dev[tool].get("features")), strings(theirs.get("features")), "{tool}");
                let default = |i: &Item| i.get("default-features").and_then(Item::as_bool).unwrap_or(true);
                assert_eq!(default(&dev[tool]), default(theirs), "{tool}");
            }
            // Criterion and pprof as the repository asks for them.
            for kept in ["criterion", "pprof"] {
                assert_eq!(dev[kept].to_string(), benches["dev-dependencies"][kept].to_string());
            }
        }
        // Every pin names a crate Cargo.lock holds (none adds a crate).
        let mut doc: DocumentMut = "[package]\nname = \"x\"\n".parse().unwrap();
        share_features(&mut doc, &lock).unwrap();
        let pinned = doc["build-dependencies"].as_table().unwrap().len()
            + doc["dev-dependencies"].as_table().unwrap().len();
        assert_eq!(pinned, SHARED_FEATURES.len());
        // Without the crate in the lock file, no pin.
        let mut doc: DocumentMut = "[package]\nname = \"x\"\n".parse().unwrap();
        share_features(&mut doc, "[[package]]\nname = \"syn\"\nversion = \"2.0.1\"\n").unwrap();
        assert_eq!(
            doc["build-dependencies"].as_table().unwrap().iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["syn"]
        );
        assert!(doc.get("dev-dependencies").is_none(), "no empty table");
    }

    #[test]
    fn a_package_the_era_pins_re_resolved_is_found_and_the_pinned_ones_are_not() {
        let lock = |tempfile_getrandom: &str, aws_lc_rs: &str| {
            format!(
                r#"version = 4
[[package]]
name = "tls-bench"
version = "0.1.0"
dependencies = ["aws-lc-rs", "tempfile"]
[[package]]
name = "tempfile"
version = "3.27.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = ["{tempfile_getrandom}", "once_cell"]
[[package]]
name = "getrandom"
version = "0.3.4"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "getrandom"
version = "0.4.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "once_cell"
version = "1.21.4"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "s2n-tls-sys"
version = "0.3.47"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = ["aws-lc-rs"]
[[package]]
name = "aws-lc-rs"
version = "{aws_lc_rs}"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#
            )
        };
        let repo = lock_edges(&lock("getrandom 0.4.3", "1.19.0")).unwrap();
        let tempfile: Vec<&String> = repo["tempfile 3.27.0"].iter().collect();
        assert_eq!(tempfile, ["getrandom 0.4.3", "once_cell 1.21.4"], "a lone version is filled in");
        assert!(!repo.contains_key("tls-bench 0.1.0"), "the path package is not compared");
        let pinned = lock_edges(&lock("getrandom 0.3.4", "1.18.2")).unwrap();
        assert_eq!(retargeted(&repo, &pinned), ["tempfile 3.27.0"], "s2n-tls-sys follows the pin");
        assert!(retargeted(&repo, &lock_edges(&lock("getrandom 0.4.3", "1.18.2")).unwrap()).is_empty());
    }

    #[test]
    fn the_built_executable_is_read_from_cargos_messages() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"name":"tls_bench","kind":["lib"]},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"dtls","kind":["bench"]},"executable":"/t/release/deps/dtls-0123"}"#,
            "not JSON",
            r#"{"reason":"compiler-artifact","target":{"name":"memory","kind":["bin"]},"executable":"/t/release/memory"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(executable(messages.as_bytes(), "memory").unwrap(), Path::new("/t/release/memory"));
        assert!(executable(messages.as_bytes(), "dtls").is_err(), "a bench is no binary");
        assert!(executable(b"", "memory").is_err());
    }
}
