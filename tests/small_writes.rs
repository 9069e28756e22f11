//! Small writes for every library of this build: each message and strategy
//! once, in TLS 1.3 and TLS 1.2 with AES-256-GCM (and the other AEADs),
//! checked byte for byte by the runner; the records and bytes each message
//! put on the wire against the formula (22 bytes per record in TLS 1.3, 29
//! in TLS 1.2 AES-GCM, 21 in TLS 1.2 ChaCha20-Poly1305, 5 for the plaintext
//! floor); and the `small-writes` binary's command line.

use std::{fs, path::PathBuf, process::Command};

use tls_bench_harness::{
    bench::{Case, small_write_params},
    harness::TlsLibrary,
    libs,
    params::{Aead, Params, Protocol},
    runner::{Prepared, prepare},
    transport::RECORD_HEADER_LEN,
    workload::SmallWrites,
    writes::{MESSAGES, Message, Strategy, Wire, record_overhead},
};

/// Largest record body, in bytes (RFC 8446 section 5.1).
const MAX_FRAGMENT: usize = 16384;

/// Libraries without a gather write: OpenSSL and the libraries on its API.
fn has_no_gather_write(name: &str) -> bool {
    name.starts_with("openssl") || name.starts_with("boring") || name.starts_with("mbedtls")
}

/// The most application data a library puts in one record:
/// [`MAX_FRAGMENT`], but Mbed TLS's TLS 1.3 keeps one byte of its 16384
/// for the inner content type and carries 16383.
fn max_fragment(name: &str, protocol: Protocol) -> usize {
    if name.starts_with("mbedtls") && protocol == Protocol::Tls13 { MAX_FRAGMENT - 1 } else { MAX_FRAGMENT }
}

/// The most padding a library adds to one record: Mbed TLS pads a TLS 1.3
/// record's inner plaintext (content and type byte) to a multiple of 16
/// bytes (`MBEDTLS_SSL_CID_TLS1_3_PADDING_GRANULARITY`, 16 in its default
/// configuration; RFC 8446 section 5.4); none of the others pads.
fn max_padding(name: &str, protocol: Protocol) -> usize {
    if name.starts_with("mbedtls") && protocol == Protocol::Tls13 { 15 } else { 0 }
}

fn case(lib: &dyn TlsLibrary, params: Params, message: Message, strategy: Strategy) -> Case {
    Case { workload: SmallWrites { message, strategy }.into(), params, library: lib.name() }
}

/// One checked message of `case`: what it put on the wire, or the skip reason.
fn send_once(case: &Case, libs: &[Box<dyn TlsLibrary>]) -> Result<Wire, String> {
    match prepare(case, libs).unwrap_or_else(|e| panic!("{case}: {e:#}")) {
        Prepared::Ready { mut runner, .. } => {
            let m = runner.run(1).unwrap_or_else(|e| panic!("{case}: {e:#}"));
            Ok(m.wire.unwrap_or_else(|| panic!("{case}: no wire count")))
        }
        Prepared::Skipped(why) => Err(why),
    }
}

/// The records `strategy` should produce for `message`: one per buffer (or
/// more for a buffer over a record), or for one write the message split
/// into full records.
fn expected_records(message: Message, strategy: Strategy, name: &str, protocol: Protocol) -> u64 {
    let records = |len: usize| len.div_ceil(max_fragment(name, protocol)) as u64;
    match strategy {
        Strategy::PerBuffer => message.sizes().iter().map(|&s| records(s)).sum(),
        Strategy::Coalesced | Strategy::Vectored => records(message.len()),
    }
}

#[test]
fn every_library_sends_every_message_with_the_formula_overhead() {
    let libs = libs::all();
    // The standard messages, one of exactly 16 KiB, and one of three records.
    let mut messages = MESSAGES.to_vec();
    messages.push(Message(&[8192, 8192]));
    messages.push(Message(&[20000, 100, 20000]));
    let mut measured = 0;
    // The default suites, and the others (s2n-tls has no TLS 1.2 policy
    // that prefers AES-256-GCM: it is measured in TLS 1.2 with AES-128-GCM).
    let suites = [
        (Protocol::Tls13, Aead::Aes256Gcm),
        (Protocol::Tls12, Aead::Aes256Gcm),
        (Protocol::Tls12, Aead::Aes128Gcm),
        (Protocol::Tls13, Aead::Chacha20Poly1305),
        (Protocol::Tls12, Aead::Chacha20Poly1305),
    ];
    let mut s2n_tls12 = false;
    for (protocol, aead) in suites {
        let params = small_write_params(protocol, aead);
        let per_record = |lib: &str| {
            if lib == "plaintext" {
                RECORD_HEADER_LEN
            } else {
                record_overhead(protocol, aead).expect("TLS overhead")
            }
        };
        for lib in &libs {
            let name = lib.name();
            let probe = case(lib.as_ref(), params, messages[0], Strategy::PerBuffer);
            if let Err(why) = send_once(&probe, &libs) {
                // The library cannot do these parameters at all (a FIPS
                // build without x25519): every strategy skips alike.
                for s in Strategy::ALL {
                    let c = case(lib.as_ref(), params, messages[0], s);
                    assert!(send_once(&c, &libs).is_err(), "{c} runs where per-buffer skips ({why})");
                }
                eprintln!("skip {name} {protocol}: {why}");
                continue;
            }
            for &message in &messages {
                for strategy in Strategy::ALL {
                    let c = case(lib.as_ref(), params, message, strategy);
                    let wire = match send_once(&c, &libs) {
                        Ok(w) => w,
                        Err(why) => {
                            assert!(
                                strategy == Strategy::Vectored && has_no_gather_write(&name),
                                "{c} skipped: {why}"
                            );
                            assert!(why.contains("no gather write"), "{c}: {why}");
                            continue;
                        }
                    };
                    assert!(
                        !(strategy == Strategy::Vectored && has_no_gather_write(&name)),
                        "{c} runs though the library has no gather write"
                    );
                    let records = expected_records(message, strategy, &name, protocol);
                    assert_eq!(wire.records, records, "{c}: records");
                    let overhead = records as usize * per_record(&name);
                    let padding = wire.bytes as usize - (message.len() + overhead).min(wire.bytes as usize);
                    assert!(
                        wire.bytes as usize >= message.len() + overhead
                            && padding <= records as usize * max_padding(&name, protocol),
                        "{c}: bytes on the wire {} for {} of content and {overhead} of overhead",
                        wire.bytes,
                        message.len()
                    );
                    assert_eq!(wire.overhead(message.len()), (overhead + padding) as i64, "{c}");
                    measured += 1;
                    s2n_tls12 |= strategy == Strategy::Vectored
                        && name.starts_with("s2n")
                        && protocol == Protocol::Tls12;
                }
            }
        }
    }
    assert!(measured > 0, "no library measured anything");
    if cfg!(feature = "s2n-tls") && !libs.iter().any(|l| l.name().contains("fips")) {
        assert!(s2n_tls12, "s2n-tls's gather write was not run in TLS 1.2");
    }
}

#[test]
fn per_buffer_pays_a_record_per_buffer_and_gathering_pays_one() {
    let libs = libs::all();
    let params = small_write_params(Protocol::Tls13, Aead::Aes256Gcm);
    let twenty = MESSAGES[9];
    assert_eq!(twenty.sizes(), &[50; 20]);
    for lib in libs.iter().filter(|l| !has_no_gather_write(&l.name())) {
        let Ok(per_buffer) = send_once(&case(lib.as_ref(), params, twenty, Strategy::PerBuffer), &libs)
        else {
            continue;
        };
        let vectored = send_once(&case(lib.as_ref(), params, twenty, Strategy::Vectored), &libs)
            .unwrap_or_else(|why| panic!("{}: vectored skipped: {why}", lib.name()));
        assert_eq!((per_buffer.records, vectored.records), (20, 1), "{}", lib.name());
        assert!(per_buffer.bytes > vectored.bytes, "{}", lib.name());
    }
}

fn small_writes(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_small-writes")).args(args).output().expect("running small-writes")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("small-writes-{name}"));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn unknown_names_are_errors_that_list_the_valid_ones() {
    for (args, wanted) in [
        (&["--strategy", "writev"][..], "valid: per-buffer, coalesced, vectored"),
        (&["--library", "nosuchtls"][..], "--library: unknown library \"nosuchtls\"; this build has: "),
        (&["--protocol", "TLSv1.1"][..], "valid: TLSv1.3, TLSv1.2"),
        (&["--suite", "TLS_AES_512"][..], "TLS_AES_256_GCM_SHA384"),
        (&["--suite", "TLS_AES_128_GCM_SHA256", "--protocol", "TLSv1.2"][..], "does not select"),
        (&["--message", "50,0"][..], "not a size in bytes"),
        (&["--rounds", "0"][..], "--rounds must be"),
        // Sizes past usize: checked arithmetic, not a wrap past the bound.
        (&["--message", "9223372036854775808,9223372036854775808"][..], "more than 1048576 bytes"),
        (&["--message", "50,50x18446744073709551615"][..], "more than"),
    ] {
        let out = small_writes(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
}

#[test]
fn a_short_run_writes_tables_json_csv_and_a_graph() {
    let out_dir = scratch("run");
    let lib = cheap_library();
    let out_arg = out_dir.display().to_string();
    let out = small_writes(&[
        "--library",
        &lib,
        "--message",
        "50x20",
        "--message",
        "100,50",
        "--protocol",
        "TLSv1.3",
        "--iterations",
        "40",
        "--warmup",
        "5",
        "--rounds",
        "2",
        "--out",
        &out_arg,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("### TLSv1.3, TLS_AES_256_GCM_SHA384: {lib}")), "{stdout}");
    // The vectored rows where the library has a gather write (OpenSSL and
    // BoringSSL, the variants' only library, have none).
    let vectored = libs::all()
        .iter()
        .find(|l| l.name() == lib)
        .expect("the library run")
        .configure_vectored(&Params::default())
        .is_ok();
    for row in ["per-buffer [50 x 20]", "coalesced [100, 50]", "vectored [50 x 20]"] {
        assert_eq!(stdout.contains(row), vectored || !row.starts_with("vectored"), "{row}: {stdout}");
    }
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(out_dir.join("results.json")).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        // A skipped row keeps its id and reason, and no figure.
        let skipped = !vectored && r["strategy"] == "vectored";
        assert_eq!(r["skipped"].is_string(), skipped, "{r}");
        assert_eq!(r["latency"]["count"] == 40, !skipped, "{r}");
    }
    let csv = fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
    assert!(out_dir.join("p50-TLSv1.3.svg").is_file());
    assert!(out_dir.join("report.md").is_file());
    // The saved run prints again without running.
    let again = small_writes(&["--report-only", "--out", &out_arg]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout), stdout);
}

/// The library a quick run takes: the plaintext floor or rustls+ring
/// where built (the fastest), else the build's first (the system-OpenSSL
/// and BoringSSL variants have one).
fn cheap_library() -> String {
    let names: Vec<String> = libs::all().iter().map(|l| l.name()).collect();
    let cheap = names.iter().find(|n| *n == "plaintext" || n.ends_with("+ring"));
    cheap.or(names.first()).expect("no library in this build").clone()
}

/// A quick small-writes run of one library into `out`, for `protocols`.
fn quick_run(out: &std::path::Path, protocols: &str) -> std::process::Output {
    let lib = cheap_library();
    small_writes(&[
        "--library",
        &lib,
        "--message",
        "100,50",
        "--strategy",
        "coalesced",
        "--protocol",
        protocols,
        "--iterations",
        "20",
        "--warmup",
        "2",
        "--rounds",
        "2",
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn a_bad_out_is_refused_before_measuring() {
    let dir = scratch("bad-out");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    fs::write(&file, "x").unwrap();
    let notes = dir.join("with-notes");
    fs::create_dir_all(&notes).unwrap();
    fs::write(notes.join("notes.md"), "mine").unwrap();
    for (out, wanted) in [(&file, "is not a directory"), (&notes, "holds notes.md")] {
        let run = quick_run(out, "TLSv1.3");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(out.to_str().unwrap()) && stderr.contains(wanted), "{stderr}");
        assert!(run.stdout.is_empty(), "tables printed: measured before failing");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    assert_eq!(fs::read_dir(&notes).unwrap().count(), 1);
}

#[test]
fn a_results_directory_holds_one_run_whole() {
    let out = scratch("one-run").join("out");
    let first = quick_run(&out, "TLSv1.3,TLSv1.2");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(out.join("p50-TLSv1.2.svg").is_file());
    let second = quick_run(&out, "TLSv1.3");
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(out.join("p50-TLSv1.3.svg").is_file());
    assert!(!out.join("p50-TLSv1.2.svg").exists(), "the first run's TLS 1.2 graph stayed");
    let json = fs::read_to_string(out.join("results.json")).unwrap();
    assert!(!json.contains("TLSv1.2"), "{json}");
    let parent: Vec<_> =
        fs::read_dir(out.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(parent, ["out"], "staging directories left behind");
}
