//! Servers of other runtimes (`tls_bench_sockets::runtimes`): each built
//! with its own toolchain and run as a child process on an ephemeral port
//! of 127.0.0.1, loaded siege-style by this build's libraries for every
//! kind (server auth, mTLS, resumption) on TLS 1.3 and on a TLS 1.2 suite,
//! on new and kept connections, every handshake and body checked on both
//! sides; a parameter set it cannot serve is a named skip; misbehaving
//! clients (plain text, silence after a ClientHello, a malformed
//! ClientHello, a slow header, another host's name, an mTLS client without
//! a certificate or with one of another CA) are refused and counted by kind
//! while good clients are served. Each echo server (`--echo`, what
//! `compare --sockets` loads), Erlang's `gen_tcp` too, echoes every byte
//! of small and large messages on kept and new connections, checked on
//! both sides, and refuses a misbehaving client. A machine without a
//! runtime's toolchain prints a skip; with `TLS_BENCH_REQUIRE_RUNTIMES` set
//! (CI) that is a failure. Each bounded in time.

#![cfg(feature = "sockets")]

mod common;

use std::time::Duration;

use common::sockets::{BODY, child_options, descendants, load_options, params, running, siege_options};
use tls_bench_harness::{
    error::ConfigureError,
    params::{CipherSuite, HandshakeKind, KxGroup, Params},
};
use tls_bench_sockets::{
    ErrorKind, Extensions, Library,
    attack::{Attack, AttackClients, AttackOptions, run_attackers},
    child::{Build, ChildOptions, ChildServer, probe},
    https, libraries,
    load::{self, LoadOptions},
    runtimes::{RUNTIMES, Runtime},
    siege::{SiegeOptions, SiegeReport, run},
};

/// Set: a runtime whose toolchain is missing fails the tests instead of
/// being skipped.
const REQUIRE: &str = "TLS_BENCH_REQUIRE_RUNTIMES";

/// The runtime's server, built under cargo's temporary directory; `None`
/// (a printed skip) when this machine lacks its toolchain.
fn built(runtime: &Runtime) -> Option<Build> {
    if !runtime.installed() {
        assert!(
            std::env::var_os(REQUIRE).is_none(),
            "{REQUIRE} is set and the {} toolchain is missing",
            runtime.name
        );
        println!("skip the {} server: its toolchain is not installed", runtime.name);
        return None;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtimes");
    Some(runtime.build(&dir).unwrap())
}

fn options(build: &Build, test: &str) -> ChildOptions {
    let json = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("runtimes")
        .join(format!("{}-{test}.summary.json", build.variant));
    child_options(json)
}

/// Two users of four requests each.
fn siege(params: Params, server: &ChildServer, keep_alive: bool) -> SiegeOptions {
    siege_options(params, server.addr(), keep_alive)
}

/// A library of this build whose client runs `params`.
fn client(params: &Params) -> Option<Box<dyn Library>> {
    libraries().into_iter().filter(|l| !l.plaintext()).find(|l| l.client(params, &https::CLIENT).is_ok())
}

fn assert_clean(r: &SiegeReport, what: &str) {
    assert!(r.errors.is_empty(), "{what}: {:?} {:?}", r.errors, r.error_examples);
    assert_eq!((r.transactions, r.failed_transactions, r.bytes), (8, 0, 8 * BODY as u64), "{what}");
}

/// The runtime's server serves every kind checked on both sides.
fn serves_every_kind(runtime: &Runtime) {
    let tls12 = CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    let Some(build) = built(runtime) else { return };
    let [library] = &build.libraries[..] else { panic!("{}: {:?}", runtime.name, build.libraries) };
    // What it cannot serve is a named skip, never a run.
    let mlkem12 =
        Params { suite: tls12, group: KxGroup::X25519Mlkem768, ..params(HandshakeKind::ServerAuth) };
    match probe(&build.exe, library, &mlkem12) {
        Err(ConfigureError::Unsupported(why)) => assert!(why.contains("X25519MLKEM768"), "{why}"),
        other => panic!("{library} {mlkem12}: {other:?}"),
    }
    let mut sets: Vec<Params> =
        [HandshakeKind::ServerAuth, HandshakeKind::MutualAuth, HandshakeKind::Resumption].map(params).into();
    sets.push(Params { suite: tls12, ..params(HandshakeKind::ServerAuth) });
    sets.push(Params { suite: tls12, ..params(HandshakeKind::Resumption) });
    sets.push(Params { group: KxGroup::X25519Mlkem768, ..params(HandshakeKind::ServerAuth) });
    let (mut ran, mut resumed) = (0, 0);
    for p in sets {
        match probe(&build.exe, library, &p) {
            Ok(()) => {}
            // Not every runtime has ML-KEM (Node's OpenSSL 3.0, Java 17,
            // Erlang/OTP 25), or resumes as the clients here do (Node's
            // server issues no ticket on a resumed TLS 1.3 connection;
            // Erlang/OTP 25's ticket server crashes, and it has no TLS
            // 1.2 tickets); the other sets every runtime serves.
            Err(ConfigureError::Unsupported(why))
                if p.group == KxGroup::X25519Mlkem768 || p.kind == HandshakeKind::Resumption =>
            {
                println!("skip {library} {p}: {why}");
                continue;
            }
            Err(e) => panic!("{library} {p}: {e:?}"),
        }
        let Some(client) = client(&p) else {
            println!("skip {library} {p}: no client library of this build runs it");
            continue;
        };
        let what = format!("{library} {p}, client {}", client.name());
        let server = ChildServer::start(&build.exe, library, &p, &options(&build, "kinds")).unwrap();
        assert_clean(&run(&*client, &siege(p, &server, false)).unwrap(), &format!("{what}, new connections"));
        assert_clean(&run(&*client, &siege(p, &server, true)).unwrap(), &format!("{what}, kept"));
        let summary = server.stop().unwrap();
        assert!(summary.errors.is_empty(), "{what}: {summary:?}");
        // 8 connections, then 2 kept for 4 requests each; resuming
        // users first fetch a ticket on a connection of one request
        // that the client does not count.
        let resumption = p.kind == HandshakeKind::Resumption;
        let handshakes =
            summary.handshakes_full + summary.handshakes_resumed + summary.handshakes_unclassified;
        let fetches = handshakes.checked_sub(10).unwrap_or_else(|| panic!("{what}: {summary:?}"));
        assert_eq!(fetches > 0, resumption, "{what}: {summary:?}");
        assert_eq!(summary.requests, 16 + fetches, "{what}: {summary:?}");
        assert_eq!(summary.bytes_sent, summary.requests * BODY as u64, "{what}");
        // A server that cannot tell resumption (JSS) classifies none; the
        // client checked each handshake (`run` above).
        if summary.handshakes_unclassified == 0 {
            assert_eq!(summary.handshakes_resumed > 0, resumption, "{what}: {summary:?}");
        } else {
            assert_eq!(summary.handshakes_unclassified, handshakes, "{what}: {summary:?}");
        }
        assert!(summary.rss.samples_kib.len() >= 2 && summary.rss.peak_kib > 0, "{what}: {summary:?}");
        assert!(summary.cpu_seconds > 0.0, "{what}: {summary:?}");
        ran += 1;
        resumed += usize::from(resumption);
    }
    // Server auth (TLS 1.3 and 1.2) and mTLS at least.
    assert!(ran >= 3, "{library}: {ran} parameter sets ran");
    // Every runtime but Erlang/OTP 25 (both resumptions named skips,
    // docs/https.md) resumes in TLS 1.2 at least: a skip there elsewhere
    // is a failure.
    if !library.starts_with("erlang-ssl-") {
        assert!(resumed >= 1, "{library}: no resumption set ran");
    }
}

/// The runtime's server refuses misbehaving clients while good ones are served.
fn refuses_misbehaving_clients(runtime: &Runtime) {
    let Some(build) = built(runtime) else { return };
    let library = &build.libraries[0];
    let p = params(HandshakeKind::MutualAuth);
    let client = client(&p).expect("a client library running mTLS");
    // Short timeouts: silence after a ClientHello and a slow header
    // are closed within the attack.
    let timeouts = Some((Duration::from_millis(500), Duration::from_millis(500)));
    let options = ChildOptions { timeouts, ..options(&build, "attacks") };
    let server = ChildServer::start(&build.exe, library, &p, &options).unwrap();
    let addr = server.addr();
    let kinds = vec![
        Attack::Garbage,
        Attack::HelloThenSilence,
        Attack::MalformedHello,
        Attack::Slowloris,
        Attack::WrongSni,
        Attack::MissingClientCert,
        Attack::UntrustedClientCert,
    ];
    let attack_options = AttackOptions {
        kinds: kinds.clone(),
        attackers: 1,
        duration: Duration::from_millis(1000),
        interval: Duration::from_millis(100),
        hold: Duration::from_secs(3),
        flood: 0,
        max_attempts: 20,
    };
    let clients = AttackClients::of(&*client, &p).unwrap();
    let attackers = std::thread::spawn(move || run_attackers(addr, clients, &attack_options));
    let good = run(&*client, &siege(p, &server, false)).unwrap();
    let counts = attackers.join().unwrap().unwrap();
    let summary = server.stop().unwrap();
    assert_clean(&good, &format!("{library}, good clients beside the attackers"));
    for attack in kinds {
        let c = &counts[&attack];
        assert!(c.attempts >= 1, "{library} {}: {c:?}", attack.name());
        // JSS's SSLSocket has no SNI hook: the JSS server serves any name
        // (docs/https.md), so a wrong one is not refused.
        if attack == Attack::WrongSni && library.starts_with("java-jss-") {
            assert_eq!(c.rejected, 0, "{library} {}: {c:?}", attack.name());
            continue;
        }
        assert_eq!((c.rejected, c.still_open), (c.attempts, 0), "{library} {}: {c:?}", attack.name());
    }
    for kind in [ErrorKind::Handshake, ErrorKind::Timeout] {
        assert!(
            summary.errors.get(&kind).is_some_and(|&n| n > 0),
            "{library} {kind}: {:?} {:?}",
            summary.errors,
            summary.error_examples
        );
    }
    assert!(summary.idle_closed >= 1, "{library}: the slowloris closed idle: {summary:?}");
    assert_eq!(summary.requests, 8, "{library}: only the good clients' requests: {summary:?}");
}

/// Echo servers: options of [`options`] with `--echo`.
fn echo_options(build: &Build, test: &str) -> ChildOptions {
    ChildOptions { echo: true, ..options(build, test) }
}

/// The runtime's echo servers echo every byte checked on both sides.
fn echoes_every_byte(runtime: &Runtime) {
    let tls12 = CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256;
    let Some(build) = built(runtime) else { return };
    // Each TLS server with this build's first client that runs the set,
    // then each plaintext one (Erlang's gen_tcp) with plaintext TCP.
    let mut rows: Vec<(String, Params, Box<dyn Library>)> = Vec::new();
    for library in &build.libraries {
        let sets = [
            params(HandshakeKind::ServerAuth),
            Params { suite: CipherSuite::TLS_CHACHA20_POLY1305_SHA256, ..params(HandshakeKind::MutualAuth) },
            Params { suite: tls12, ..params(HandshakeKind::ServerAuth) },
        ];
        for p in sets {
            probe(&build.exe, library, &p).unwrap_or_else(|e| panic!("{library} {p}: {e:?}"));
            let client = libraries()
                .into_iter()
                .find(|l| !l.plaintext() && l.client(&p, &Extensions::NONE).is_ok())
                .expect("a client library");
            rows.push((library.clone(), p, client));
        }
    }
    for library in &build.plaintext {
        let p = params(HandshakeKind::ServerAuth);
        probe(&build.exe, library, &p).unwrap();
        let plaintext = libraries().into_iter().find(|l| l.plaintext()).expect("plaintext TCP");
        rows.push((library.clone(), p, plaintext));
    }
    if runtime.name == "erlang" {
        assert_eq!(build.plaintext.len(), 1, "gen_tcp: {:?}", build.plaintext);
    }
    for (library, p, client) in rows {
        let server = ChildServer::start(&build.exe, &library, &p, &echo_options(&build, "echo")).unwrap();
        let mut moved = 0;
        // Kept connections with small and large messages (several
        // records each), then a new connection per message.
        for (message, new_connection) in [(100, false), (65_536, false), (1024, true)] {
            let what = format!("{library} {p}, client {}, {message} B, new {new_connection}", client.name());
            let options = LoadOptions { message, new_connection, ..load_options(p, server.addr()) };
            let report = load::run(&*client, &options).unwrap();
            assert!(report.errors.is_empty(), "{what}: {:?} {:?}", report.errors, report.error_examples);
            assert_eq!(report.requests, 20, "{what}");
            assert_eq!(
                (report.bytes_sent, report.bytes_received),
                (20 * message as u64, 20 * message as u64)
            );
            moved += 20 * message as u64;
        }
        let summary = server.stop().unwrap();
        let what = format!("{library} {p}");
        assert!(summary.errors.is_empty(), "{what}: {:?} {:?}", summary.errors, summary.error_examples);
        assert_eq!((summary.bytes_received, summary.bytes_sent), (moved, moved), "{what}: {summary:?}");
        // 2 + 2 kept connections, then 2 clients x 10 new ones.
        assert_eq!(summary.connections, 24, "{what}: {summary:?}");
        let handshakes =
            summary.handshakes_full + summary.handshakes_resumed + summary.handshakes_unclassified;
        let tls = build.libraries.contains(&library);
        assert_eq!(handshakes, if tls { 24 } else { 0 }, "{what}: {summary:?}");
        // Erlang counts CPU in whole milliseconds: its gen_tcp echo of
        // these few messages may take less.
        assert!(summary.rss.peak_kib > 0 && summary.cpu_seconds >= 0.0, "{what}: {summary:?}");
        assert!(!tls || summary.cpu_seconds > 0.0, "{what}: {summary:?}");
    }
    // A misbehaving client is refused and counted while the echo serves.
    let library = &build.libraries[0];
    let p = params(HandshakeKind::ServerAuth);
    let timeouts = Some((Duration::from_millis(500), Duration::from_millis(500)));
    let options = ChildOptions { timeouts, ..echo_options(&build, "echo-attacks") };
    let server = ChildServer::start(&build.exe, library, &p, &options).unwrap();
    let client = libraries().into_iter().find(|l| !l.plaintext()).expect("a TLS library");
    let kinds = vec![Attack::Garbage, Attack::HelloThenSilence];
    let attack_options = AttackOptions {
        kinds: kinds.clone(),
        attackers: 1,
        duration: Duration::from_millis(600),
        interval: Duration::from_millis(100),
        hold: Duration::from_secs(3),
        flood: 0,
        max_attempts: 10,
    };
    let clients = AttackClients::of(&*client, &p).unwrap();
    let addr = server.addr();
    let attackers = std::thread::spawn(move || run_attackers(addr, clients, &attack_options));
    let good = load::run(&*client, &load_options(p, addr)).unwrap();
    let counts = attackers.join().unwrap().unwrap();
    let summary = server.stop().unwrap();
    assert!(good.errors.is_empty() && good.requests == 20, "{library}: {:?}", good.error_examples);
    let mut attempts = 0;
    for attack in kinds {
        let c = &counts[&attack];
        assert!(c.attempts >= 1, "{library} {}: {c:?}", attack.name());
        assert_eq!((c.rejected, c.still_open), (c.attempts, 0), "{library} {}: {c:?}", attack.name());
        attempts += c.attempts;
    }
    // Each counted, by the kind the runtime saw (JSS times out on
    // garbage where the others fail the handshake).
    let failures: u64 = summary.errors.values().sum();
    assert!(failures >= attempts, "{library}: {attempts} attacks, {:?}", summary.errors);
}

/// A broken key (its PEM cut short) under `TLS_BENCH_CERTS_DIR` fails
/// the runtime's `--probe` (exit 1, the key file named or the library's
/// words), as it fails the start: not `supported`, then every handshake.
fn refuses_a_broken_key(runtime: &Runtime) {
    let Some(build) = built(runtime) else { return };
    let certs = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("runtimes")
        .join(format!("{}-broken-key-certs", runtime.name));
    let _ = std::fs::remove_dir_all(&certs);
    let from = std::path::Path::new(tls_bench_harness::certs::CERTS_DIR).join("ecdsa-p256");
    let to = certs.join("ecdsa-p256");
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    let key = std::fs::read(from.join("server-key.pem")).unwrap();
    std::fs::write(to.join("server-key.pem"), &key[..100]).unwrap();
    for library in &build.libraries {
        let out = std::process::Command::new(&build.exe)
            .args(["--library", library, "--probe", "--cert", "ECDSA-P256"])
            .env(tls_bench_harness::certs::CERTS_DIR_ENV, &certs)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{library}: {stdout}{stderr}");
        assert!(!stdout.contains("supported"), "{library}: {stdout}");
        assert!(stderr.starts_with("error: ") && stderr.contains(library.as_str()), "{library}: {stderr}");
    }
}

/// One test per runtime and check (the harness runs them two at a time, as
/// it did the three checks over every runtime; most of a check is waiting on
/// a child server), each a module named as the runtime.
macro_rules! per_runtime {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            fn runtime() -> &'static super::Runtime {
                super::RUNTIMES.iter().find(|r| r.name == stringify!($name)).unwrap()
            }
            #[test]
            fn serves_every_kind_checked_on_both_sides() {
                super::serves_every_kind(runtime());
            }
            #[test]
            fn refuses_misbehaving_clients_while_good_ones_are_served() {
                super::refuses_misbehaving_clients(runtime());
            }
            #[test]
            fn echoes_every_byte_checked_on_both_sides() {
                super::echoes_every_byte(runtime());
            }
            #[test]
            fn refuses_a_broken_key_at_the_probe() {
                super::refuses_a_broken_key(runtime());
            }
        })*
        /// Every runtime has its tests above.
        #[test]
        fn every_runtime_is_tested() {
            let tested = [$(stringify!($name)),*];
            let all: Vec<&str> = RUNTIMES.iter().map(|r| r.name).collect();
            assert_eq!(tested[..], all[..], "add the runtime to per_runtime!");
        }
    };
}

per_runtime!(go, node, java, jss, erlang);

/// `https-attack --runtime java` on a machine without a JDK names what to
/// install and no option it lacks (it has `--runtime`, not `--runtimes`);
/// `https-compare` names its own way out (`--runtimes none`).
#[test]
fn a_missing_toolchain_is_named_with_each_tools_own_options() {
    let library = libraries().into_iter().find(|l| !l.plaintext()).unwrap().name();
    let run = |exe: &str, args: &[&str]| {
        let out = std::process::Command::new(exe).args(args).env("PATH", "/nonexistent").output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) =
        run(env!("CARGO_BIN_EXE_https-attack"), &["--runtime", "java", "--library", &library]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.starts_with("error: the java server needs a JDK"), "{stderr}");
    assert!(!stderr.contains("--runtimes"), "{stderr}");
    let (code, stderr) = run(env!("CARGO_BIN_EXE_https-compare"), &["--runtimes", "java", "--quick"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("the java server needs a JDK") && stderr.contains("--runtimes none"), "{stderr}");
}

/// Build directories (`.build-PID-...`) under `dir`.
fn builds_aside(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".build-"))
                .collect()
        })
        .unwrap_or_default()
}

/// A signal during a runtime's build (Java's: `javac` runs for seconds)
/// leaves no compiler running: it dies with the tool, SIGKILL included.
/// After SIGINT the tool removes its half-built directory itself (exit
/// 130); after SIGKILL, which it cannot see, the next build removes it.
#[test]
fn a_build_interrupted_leaves_no_compiler_and_no_directory() {
    let java = RUNTIMES.iter().find(|r| r.name == "java").unwrap();
    if built(java).is_none() {
        return;
    }
    let library = libraries().into_iter().find(|l| !l.plaintext()).unwrap().name();
    for signal in [libc::SIGINT, libc::SIGKILL] {
        // A target directory of its own: the build is not a cache hit.
        let target = common::scratch("runtimes", &format!("interrupted-build-{signal}"));
        let builds = target.join("runtimes").join("java");
        let mut tool = std::process::Command::new(env!("CARGO_BIN_EXE_https-attack"))
            .args(["--runtime", "java", "--library", &library, "-t", "1s"])
            .env("CARGO_TARGET_DIR", &target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let cmdline = |p: u32| std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let started = std::time::Instant::now();
        let family = loop {
            let family = descendants(tool.id());
            let compiling = family.iter().any(|&p| String::from_utf8_lossy(&cmdline(p)).contains("javac"));
            if compiling && !builds_aside(&builds).is_empty() {
                break family;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = tool.kill();
                panic!("no javac building under {} in 60 s", builds.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // SAFETY: a signal to the test's own child.
        assert_eq!(unsafe { libc::kill(tool.id() as i32, signal) }, 0);
        let killed = std::time::Instant::now();
        let status = loop {
            if let Some(status) = tool.try_wait().unwrap() {
                break status;
            }
            if killed.elapsed() > Duration::from_secs(30) {
                let _ = tool.kill();
                panic!("https-attack still running 30 s after signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while family.iter().any(|&p| running(p)) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<u32> = family.iter().copied().filter(|&p| running(p)).collect();
        for &p in &left {
            // SAFETY: the test's own descendants, left behind.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "signal {signal}: processes left running: {left:?}");
        if signal == libc::SIGINT {
            assert_eq!(status.code(), Some(130), "{status}");
            assert!(builds_aside(&builds).is_empty(), "{:?}", builds_aside(&builds));
        } else {
            assert!(!builds_aside(&builds).is_empty(), "SIGKILL: the half-built directory is gone already");
            java.build(&target.join("runtimes")).unwrap();
            assert!(builds_aside(&builds).is_empty(), "{:?}", builds_aside(&builds));
        }
        std::fs::remove_dir_all(&target).unwrap();
    }
}

/// An Erlang build that cannot start (its module gone) writes its crash
/// dump beside its own files (`ERL_CRASH_DUMP`), never into the caller's
/// working directory.
#[test]
fn a_broken_erlang_build_dumps_beside_itself() {
    let erlang = RUNTIMES.iter().find(|r| r.name == "erlang").unwrap();
    let Some(build) = built(erlang) else { return };
    let root = common::scratch("runtimes", "broken-erlang");
    let (copy, cwd) = (root.join("build"), root.join("caller"));
    std::fs::create_dir_all(copy.join("ebin")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::copy(&build.exe, copy.join("https-serve")).unwrap();
    let out = std::process::Command::new(copy.join("https-serve"))
        .arg("--list")
        .current_dir(&cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0, "litter in the caller's directory");
    assert!(copy.join("erl_crash.dump").is_file());
}
