//! `report results`: the committed `results/README.md` and README's
//! headline are what the committed data generates (what CI's
//! `report results --check` checks), a stale file is named with its
//! differences and left alone, and a missing marker or data file is an
//! error naming it.

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// `report results ARGS... --root ROOT`.
fn results(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_report"))
        .arg("results")
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// Copies `from` into `to`, directories recursively.
fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &to.join(e.file_name()));
        }
    } else {
        fs::copy(from, to).unwrap();
    }
}

/// A scratch copy of the repository's committed results and READMEs.
fn repository_copy(test: &str) -> PathBuf {
    let root = common::scratch("report_results", test);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for part in [
        "README.md",
        "results",
        "memory/data",
        "memory/memory.svg",
        "historical-perf/data",
        "historical-perf/graphs",
    ] {
        copy(&repo.join(part), &root.join(part));
    }
    root
}

#[test]
fn the_committed_files_are_what_the_committed_data_generates() {
    let out = results(Path::new(env!("CARGO_MANIFEST_DIR")), &["--check"]);
    assert!(
        out.status.success(),
        "results/README.md or README.md's headline is stale: run `cargo run --release --bin report -- results`\n{}",
        stderr(&out)
    );
}

#[test]
fn check_names_a_stale_file_and_leaves_it_and_writing_brings_it_up_to_date() {
    let root = repository_copy("stale");
    let path = root.join("results/README.md");
    let stale = fs::read_to_string(&path).unwrap().replacen("| ", "| 9", 1);
    fs::write(&path, &stale).unwrap();
    let out = results(&root, &["--check"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--- results/README.md (committed)\n+++ results/README.md (generated"), "{err}");
    assert!(err.contains("error: results/README.md differs from what"), "{err}");
    assert!(!err.contains("README.md (committed)\n+++ README.md"), "README.md is up to date: {err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), stale, "--check wrote the file");

    let out = results(&root, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("wrote"), "{}", stderr(&out));
    let out = results(&root, &["--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn missing_headline_markers_and_data_files_are_errors_naming_them() {
    let root = repository_copy("missing");
    let readme = root.join("README.md");
    let text = fs::read_to_string(&readme).unwrap();
    fs::write(&readme, text.replace("<!-- headline:end -->\n", "")).unwrap();
    let out = results(&root, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("error: README.md has no line `<!-- headline:end -->`"),
        "{}",
        stderr(&out)
    );
    fs::write(&readme, text).unwrap();

    let data = fs::read_dir(root.join("results/small-writes")).unwrap().next().unwrap().unwrap().path();
    fs::remove_file(data.join("results.json")).unwrap();
    let out = results(&root, &["--check"]);
    assert_eq!(out.status.code(), Some(1));
    let want = format!("reading {}", data.join("results.json").display());
    assert!(stderr(&out).contains(&want), "{want} not in {}", stderr(&out));
}
