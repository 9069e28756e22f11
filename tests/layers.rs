//! The layers inside each crate of the workspace with more than one layer
//! (crates/harness, crates/results): its lib.rs's module list names every
//! module once, and no module uses one listed after it, through `crate::`
//! paths in code (comments and doc links aside). Between the crates the
//! compiler keeps the direction (a crate cannot name one that depends on
//! it); the binaries sit above all of them and are not checked. And the
//! harness and the results name none of the crates that would bring a
//! runtime, HTTP, a command line or plotting into them, and the benchmarks
//! (crates/benches) neither the socket runner nor the tools.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// The modules in the order of src/lib.rs's list (`//! - [`name`]` or
/// `//! - `name``).
fn documented_order(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! - "))
        .map(|item| {
            let item = item.trim_start_matches('[').trim_start_matches('`');
            item[..item.find('`').expect("a module name in backticks")].to_string()
        })
        .collect()
}

/// The modules src/lib.rs declares.
fn declared(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod ")))
        .filter_map(|m| m.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// `text` without its `//` comments (doc comments included) and string
/// literals' contents are left alone (no `crate::` path is in one).
fn code(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The top-level modules that `text` names after `crate::`, including
/// each one inside `crate::{a, b::c}`.
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let ident =
        |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The top-level names of the group: those at brace depth 0.
            let (mut depth, mut start) = (0usize, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        used.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            used.insert(ident(rest));
        }
    }
    used.retain(|m| !m.is_empty());
    used
}

/// The Rust files of module `name` under `src`.
fn files_of(src: &Path, name: &str) -> Vec<PathBuf> {
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut out = Vec::new();
    let mut dirs = vec![src.join(name)];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// Checks `crates/<krate>/src/lib.rs`'s list against its modules' uses.
fn check_layers(krate: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates").join(krate).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let order = documented_order(&lib);
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    assert_eq!(rank.len(), order.len(), "a module listed twice in {krate}'s lib.rs: {order:?}");
    assert_eq!(
        declared(&lib),
        order.iter().cloned().collect(),
        "{krate}'s lib.rs's list and its `mod` lines differ"
    );

    let mut upward = Vec::new();
    for (module, &at) in &rank {
        for file in files_of(&src, module) {
            for used in used_modules(&code(&fs::read_to_string(&file).unwrap())) {
                match rank.get(used.as_str()) {
                    Some(&there) if there > at => {
                        upward.push(format!("{}: {module} uses {used}", file.display()))
                    }
                    Some(_) => {}
                    None => panic!("{}: crate::{used} is no module of {krate}'s lib.rs", file.display()),
                }
            }
        }
    }
    assert!(upward.is_empty(), "uses of a later layer:\n{}", upward.join("\n"));
}

#[test]
fn every_module_of_the_harness_is_listed_once_and_uses_only_those_before_it() {
    check_layers("harness");
}

#[test]
fn every_module_of_the_results_is_listed_once_and_uses_only_those_before_it() {
    check_layers("results");
}

#[test]
fn the_checker_sees_grouped_and_nested_paths_and_skips_comments() {
    let text = "use crate::{a::{b, c}, d, e::f};\n// crate::g\nlet x = crate::h::i();";
    let used: Vec<_> = used_modules(&code(text)).into_iter().collect();
    assert_eq!(used, ["a", "d", "e", "h"]);
}

/// The dependency names of each `[...dependencies]` table of a manifest
/// (`name = ...` or `name.workspace = true` lines).
fn dependencies(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.trim_end_matches(']').ends_with("dependencies");
        } else if in_deps && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.']).next().unwrap_or_default().trim();
            names.insert(name.to_string());
        }
    }
    names
}

#[test]
fn the_harness_names_no_runtime_http_command_line_or_plotting_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let harness = dependencies(&fs::read_to_string(root.join("crates/harness/Cargo.toml")).unwrap());
    assert!(harness.contains("rustls") && harness.contains("anyhow"), "{harness:?}");
    for tool in ["tokio", "hyper", "clap", "plotters", "indicatif", "tls-bench-results", "tls-bench-sockets"]
    {
        assert!(!harness.contains(tool), "crates/harness/Cargo.toml names {tool}");
    }
    let results = dependencies(&fs::read_to_string(root.join("crates/results/Cargo.toml")).unwrap());
    for tool in ["tokio", "hyper", "clap", "plotters", "tls-bench-sockets"] {
        assert!(!results.contains(tool), "crates/results/Cargo.toml names {tool}");
    }
}

/// historical-perf builds past releases as a workspace of crates/benches,
/// the harness and the results alone (docs/historical-perf.md, "One build
/// per release"): the benchmarks name neither the socket runner nor the
/// tools' root package, nor a runtime or HTTP crate.
#[test]
fn the_benchmarks_name_no_socket_runner_tool_runtime_or_http_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let benches = dependencies(&fs::read_to_string(root.join("crates/benches/Cargo.toml")).unwrap());
    assert!(benches.contains("tls-bench-harness") && benches.contains("criterion"), "{benches:?}");
    for other in ["tls-bench-sockets", "tls-bench-tools", "tokio", "hyper"] {
        assert!(!benches.contains(other), "crates/benches/Cargo.toml names {other}");
    }
}
