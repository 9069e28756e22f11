//! Broken certificate files are errors that name the file and the cause,
//! for every library: never a skip, never a silent success.
//!
//! The checks of [`certs::read`] run on copies of the committed chains with
//! one fault each; files that pass them but cannot serve (a key of another
//! certificate, a root that did not sign the chain) run through the
//! `memory` binary with `TLS_BENCH_CERTS_DIR` pointing at the copy, where
//! each library must fail naming the files, and s2n-tls's security policy
//! probe must report them instead of skipping every parameter set.

#[path = "../../tests/common/support.rs"]
mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use tls_bench_harness::{certs, libs, params::CertChain};

/// A fresh copy of the committed certificate directory, named after `test`.
fn copy_of_certs(test: &str) -> PathBuf {
    let root = common::scratch("broken-certs", test);
    for chain in CertChain::ALL {
        let from = Path::new(certs::CERTS_DIR).join(chain.dir_name());
        let to = root.join(chain.dir_name());
        fs::create_dir_all(&to).unwrap();
        for entry in fs::read_dir(&from).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    root
}

fn read_error(dir: &Path) -> String {
    match certs::read(dir) {
        Ok(_) => panic!("{}: broken files were accepted", dir.display()),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn the_committed_chains_pass_the_checks() {
    for chain in CertChain::ALL {
        certs::read(&Path::new(certs::CERTS_DIR).join(chain.dir_name())).unwrap();
    }
}

#[test]
fn garbage_key_names_the_file() {
    let root = copy_of_certs("garbage-key");
    let dir = root.join("ecdsa-p256");
    fs::write(
        dir.join(certs::SERVER_KEY),
        "-----BEGIN PRIVATE KEY-----\nnot base64 !!\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let e = read_error(&dir);
    assert!(e.contains(&dir.join(certs::SERVER_KEY).display().to_string()), "{e}");
}

#[test]
fn truncated_chain_names_the_file() {
    let root = copy_of_certs("truncated-chain");
    let dir = root.join("rsa2048");
    let chain = fs::read_to_string(dir.join(certs::SERVER_CHAIN)).unwrap();
    // The leaf alone: the intermediate is cut off.
    let end = chain.find("-----END CERTIFICATE-----").unwrap() + "-----END CERTIFICATE-----\n".len();
    fs::write(dir.join(certs::SERVER_CHAIN), &chain[..end]).unwrap();
    let e = read_error(&dir);
    assert!(e.contains(&dir.join(certs::SERVER_CHAIN).display().to_string()), "{e}");
    assert!(e.contains("holds 1 PEM certificate(s); expected 2"), "{e}");
    // Cut inside the PEM block: the block does not decode.
    fs::write(dir.join(certs::SERVER_CHAIN), &chain[..end - 80]).unwrap();
    let e = read_error(&dir);
    assert!(e.contains(&dir.join(certs::SERVER_CHAIN).display().to_string()), "{e}");
}

#[test]
fn missing_committed_file_hints_at_git_checkout() {
    let e = format!("{:#}", certs::read(&Path::new(certs::CERTS_DIR).join("no-such-chain")).unwrap_err());
    assert!(e.contains("git checkout -- certs"), "{e}");
    assert!(!e.contains("generate-certs"), "{e}");
}

/// `memory measure` over one library, one chain, server authentication, with
/// the chains read from `root`: exit status and stderr.
fn memory_with_certs(root: &Path, library: &str) -> (bool, String) {
    let json = root.join(format!("{library}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_memory"))
        .arg("measure")
        .args(["--json".as_ref(), json.as_os_str()])
        .args(["--libraries", library, "--kinds", "server-auth", "--chains", "ecdsa-p256", "-n", "2"])
        .env(certs::CERTS_DIR_ENV, root)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[cfg(feature = "s2n-tls")]
#[test]
fn s2n_tls_chain_from_another_root_is_an_error_not_a_skip() {
    let root = copy_of_certs("foreign-root");
    let dir = root.join("ecdsa-p256");
    // Well-formed files, but the trust anchor did not sign the chain: no
    // handshake can complete under any policy.
    fs::copy(root.join("rsa2048").join(certs::CA_CERT), dir.join(certs::CA_CERT)).unwrap();
    certs::read(&dir).unwrap();
    let (ok, stderr) = memory_with_certs(&root, "s2n-tls");
    assert!(!ok, "memory succeeded with an untrusted chain:\n{stderr}");
    assert!(!stderr.contains("no s2n-tls security policy"), "reported as a policy mismatch:\n{stderr}");
    assert!(stderr.contains("completes no handshake"), "{stderr}");
    assert!(stderr.contains(&dir.join(certs::CA_CERT).display().to_string()), "{stderr}");
}

/// The TLS libraries of this build, by full id.
fn built_libraries() -> Vec<String> {
    libs::all().iter().map(|l| l.name()).filter(|n| n != "plaintext").collect()
}

#[test]
fn every_library_fails_on_a_broken_key() {
    let root = copy_of_certs("every-library");
    let dir = root.join("ecdsa-p256");
    fs::write(dir.join(certs::SERVER_KEY), "garbage\n").unwrap();
    for library in built_libraries() {
        let (ok, stderr) = memory_with_certs(&root, &library);
        assert!(!ok, "{library}: memory succeeded with a garbage key:\n{stderr}");
        assert!(stderr.contains(&dir.join(certs::SERVER_KEY).display().to_string()), "{library}: {stderr}");
    }
}

/// A well-formed key of another certificate: each library's own check
/// refuses it (s2n-tls's in the handshake its policy probe runs first), and
/// the error names the key file. A FIPS build's library that refuses
/// memory's x25519 before loading any certificate has nothing to check.
#[test]
fn every_library_fails_on_the_key_of_another_certificate() {
    let root = copy_of_certs("mismatched-key");
    let dir = root.join("ecdsa-p256");
    // The client's key (same type, another key) in place of the server's.
    fs::copy(dir.join(certs::CLIENT_KEY), dir.join(certs::SERVER_KEY)).unwrap();
    certs::read(&dir).unwrap();
    for library in built_libraries() {
        let (ok, stderr) = memory_with_certs(&root, &library);
        assert!(!ok, "{library}: memory succeeded with a mismatched key:\n{stderr}");
        if library.contains("fips") && stderr.contains("nothing measured") {
            // memory's parameter set uses x25519, which FIPS mode refuses
            // before any certificate is loaded: nothing to check here.
            assert!(stderr.contains("FIPS"), "{library}: {stderr}");
            continue;
        }
        assert!(!stderr.contains("no s2n-tls security policy"), "{library}: a policy skip:\n{stderr}");
        assert!(stderr.contains(&dir.join(certs::SERVER_KEY).display().to_string()), "{library}: {stderr}");
    }
}

/// `run-case` (the instruction counts' runner) with a broken key: its error
/// names the case it ran and the file, not only the library's own words.
#[test]
fn run_case_names_the_case_and_the_file() {
    let root = copy_of_certs("run-case");
    let dir = root.join("ecdsa-p256");
    fs::write(
        dir.join(certs::SERVER_KEY),
        "-----BEGIN PRIVATE KEY-----\nnot base64 !!\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let library = &built_libraries()[0];
    let id = format!("handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/{library}");
    let out = Command::new(env!("CARGO_BIN_EXE_run-case"))
        .arg(&id)
        .env(certs::CERTS_DIR_ENV, &root)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(&format!("case {id}")), "{stderr}");
    assert!(stderr.contains(&dir.join(certs::SERVER_KEY).display().to_string()), "{stderr}");
}
