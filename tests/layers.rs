//! The layers inside each library crate of the workspace (crates/harness,
//! crates/results, crates/sockets, benches): its lib.rs's module list names
//! every module once, and no module uses one listed after it, through
//! `crate::` or `super::` paths in code (comments, doc links and inline
//! test modules aside), or a name lib.rs re-exports from a module. Between the crates the
//! compiler keeps the direction (a crate cannot name one that depends on
//! it); the binaries sit above all of them and are not checked. And the
//! harness and the results name none of the crates that would bring a
//! runtime, HTTP, a command line or plotting (plotters, tls-bench-charts)
//! into them, and the benchmarks (benches) neither the socket runner nor
//! the tools.

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

/// `text` without its `//` comments (doc comments included) and without
/// its inline test modules (`#[cfg(test)] mod ...`: what they use is not a
/// layer's; their `super::` is their file's module). String literals'
/// contents are left alone (no `crate::` path is in one).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod ").next().unwrap_or_default();
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The module path of `file` under `src`: `src/libs/rustls/drive.rs` is
/// `libs::rustls::drive`, `src/libs/mod.rs` is `libs`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// The names at brace depth 0 of `group` (the text after a path's `{`):
/// `a::{b, c}, d` gives `a` and `d`.
fn group_names(group: &str, ident: impl Fn(&str) -> String) -> Vec<String> {
    let (mut names, mut depth, mut start) = (Vec::new(), 0usize, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && !c.is_whitespace() => {
                names.push(ident(&group[i..]));
                start = false;
            }
            _ => {}
        }
    }
    names
}

/// The crate-level names that `text`, the code of the module at `path`,
/// reaches: after `crate::`, and after `super::` (as often as it is
/// repeated) where it climbs to the crate's root, each name inside
/// `crate::{a, b::c}` too; a `super::` that stays inside the file's
/// top-level module gives that module.
fn used_names(text: &str, path: &[String]) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let ident =
        |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let boundary =
            at == 0 || !text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        let (base, after) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), &rest["crate::".len()..])
        } else if boundary && rest.starts_with("super::") {
            let mut after = rest;
            let mut up = 0;
            while let Some(r) = after.strip_prefix("super::") {
                after = r;
                up += 1;
            }
            assert!(up <= path.len(), "{}: super:: above the crate's root", path.join("::"));
            (path[..path.len() - up].to_vec(), after)
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        at = text.len() - after.len();
        if let Some(top) = base.first() {
            used.insert(top.clone());
        } else if let Some(group) = after.strip_prefix('{') {
            used.extend(group_names(group, ident));
        } else {
            used.insert(ident(after));
        }
    }
    used.retain(|m| !m.is_empty() && m != "*" && m != "self");
    used
}

/// The names lib.rs re-exports from a module of its own (`pub use
/// module::{A, B};`, or `pub(crate) use`): a module that reaches `crate::A` uses `module`.
fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let ident =
        |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let uses = lib.match_indices("pub use ").chain(lib.match_indices("pub(crate) use "));
    for (at, keyword) in uses {
        let item = &lib[at + keyword.len()..];
        let item = &item[..item.find(';').unwrap_or(item.len())];
        let Some((module, names)) = item.split_once("::") else { continue };
        if !modules.contains(module) {
            continue;
        }
        let names = match names.strip_prefix('{') {
            Some(group) => group_names(group, ident),
            None => vec![ident(names)],
        };
        for name in names {
            out.insert(name, module.to_string());
        }
    }
    out
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

/// Checks `<dir>/src/lib.rs`'s list against its modules' uses.
fn check_layers(dir: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let order = documented_order(&lib);
    let rank: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (m.as_str(), i)).collect();
    assert_eq!(rank.len(), order.len(), "a module listed twice in {dir}'s lib.rs: {order:?}");
    let modules = declared(&lib);
    assert_eq!(modules, order.iter().cloned().collect(), "{dir}'s lib.rs's list and its `mod` lines differ");
    let reexported = reexports(&lib, &modules);

    let mut upward = Vec::new();
    for (module, &at) in &rank {
        for file in files_of(&src, module) {
            let path = module_path(&src, &file);
            for used in used_names(&code(&fs::read_to_string(&file).unwrap()), &path) {
                let used = reexported.get(&used).cloned().unwrap_or(used);
                match rank.get(used.as_str()) {
                    Some(&there) if there > at => {
                        upward.push(format!("{}: {module} uses {used}", file.display()))
                    }
                    Some(_) => {}
                    None => panic!(
                        "{}: crate::{used} is no module of {dir}'s lib.rs nor one it re-exports",
                        file.display()
                    ),
                }
            }
        }
    }
    assert!(upward.is_empty(), "uses of a later layer:\n{}", upward.join("\n"));
}

#[test]
fn every_module_of_the_harness_is_listed_once_and_uses_only_those_before_it() {
    check_layers("crates/harness");
}

#[test]
fn every_module_of_the_results_is_listed_once_and_uses_only_those_before_it() {
    check_layers("crates/results");
}

#[test]
fn every_module_of_the_socket_runner_is_listed_once_and_uses_only_those_before_it() {
    check_layers("crates/sockets");
}

#[test]
fn every_module_of_the_benchmarks_is_listed_once_and_uses_only_those_before_it() {
    check_layers("benches");
}

#[test]
fn the_checker_sees_grouped_nested_and_super_paths_and_skips_comments_and_tests() {
    let text = "use crate::{a::{b, c}, d, e::f};\n// crate::g\nlet x = crate::h::i();\n\
                use super::j::k; use super::super::l;\n#[cfg(test)]\nmod tests { use crate::m; }";
    // In src/n/o.rs: super:: is n (its own module), super::super:: the root.
    let path = ["n".to_string(), "o".to_string()];
    let used: Vec<_> = used_names(&code(text), &path).into_iter().collect();
    assert_eq!(used, ["a", "d", "e", "h", "l", "n"]);
    // In src/p.rs, super:: is the root.
    let used: Vec<_> = used_names("use super::{q, r::s};", &["p".to_string()]).into_iter().collect();
    assert_eq!(used, ["q", "r"]);
    let lib = "pub mod t;\npub use t::{U, V};\npub use other::W;";
    let modules = BTreeSet::from(["t".to_string()]);
    assert_eq!(
        reexports(lib, &modules),
        BTreeMap::from([("U".into(), "t".into()), ("V".into(), "t".into())])
    );
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
    for tool in [
        "tokio",
        "hyper",
        "clap",
        "plotters",
        "tls-bench-charts",
        "indicatif",
        "tls-bench-results",
        "tls-bench-sockets",
    ] {
        assert!(!harness.contains(tool), "crates/harness/Cargo.toml names {tool}");
    }
    let results = dependencies(&fs::read_to_string(root.join("crates/results/Cargo.toml")).unwrap());
    for tool in ["tokio", "hyper", "clap", "plotters", "tls-bench-charts", "tls-bench-sockets"] {
        assert!(!results.contains(tool), "crates/results/Cargo.toml names {tool}");
    }
}

/// historical-perf builds past releases as a workspace of benches,
/// the harness and the results alone (docs/historical-perf.md, "One build
/// per release"): the benchmarks name neither the socket runner nor the
/// tools' root package, nor a runtime or HTTP crate.
#[test]
fn the_benchmarks_name_no_socket_runner_tool_runtime_or_http_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let benches = dependencies(&fs::read_to_string(root.join("benches/Cargo.toml")).unwrap());
    assert!(benches.contains("tls-bench-harness") && benches.contains("criterion"), "{benches:?}");
    for other in ["tls-bench-sockets", "tls-bench-tools", "tokio", "hyper"] {
        assert!(!benches.contains(other), "benches/Cargo.toml names {other}");
    }
}
