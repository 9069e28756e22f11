//! The socket and HTTPS tools as a user meets them when something goes
//! wrong: a run labelled with parameters it did not run, a signal in the
//! middle, a closed stdout, an output that cannot be written, a dead
//! server, reports that do not add up, servers left behind. Each on
//! 127.0.0.1 and ephemeral ports, bounded in time.

#![cfg(feature = "sockets")]

mod common;

use std::{
    fs,
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::Path,
    process::{Child, Command, Output, Stdio},
    time::{Duration, Instant},
};

use common::sockets::{descendants, load_options, params, refusing_port, running, serve_options};
use tls_bench_harness::{
    error::ConfigureError,
    params::{HandshakeKind, Params},
};
use tls_bench_sockets::{
    ErrorKind, Extensions, Library, https, libraries,
    load::{self, LoadOptions, Report},
    serve::{self, start_with},
    siege::{self, SiegeOptions},
};

fn siege_options(params: Params, connect: SocketAddr) -> SiegeOptions {
    SiegeOptions {
        params,
        connect,
        clients: 2,
        requests: Some(3),
        duration: None,
        body: 1024,
        keep_alive: false,
        threads: 2,
        cores: Vec::new(),
        timeout: Duration::from_secs(10),
        progress: false,
    }
}

/// Whether `library` runs `params` as server and client (the reason
/// printed when not).
fn runs(library: &dyn Library, params: &Params, extensions: &Extensions) -> bool {
    let ok = |r: Result<(), ConfigureError>| match r {
        Ok(()) => true,
        Err(ConfigureError::Unsupported(why)) => {
            println!("skip {} {params}: {why}", library.name());
            false
        }
        Err(ConfigureError::Failed(e)) => panic!("{} {params}: {e:#}", library.name()),
    };
    ok(library.server(params, extensions).map(|_| ())) && ok(library.client(params, extensions).map(|_| ()))
}

fn tls_libraries() -> Vec<Box<dyn Library>> {
    libraries().into_iter().filter(|l| !l.plaintext()).collect()
}

/// `child`'s output, killed after `limit` (then a failed assertion).
fn wait(mut child: Child, limit: Duration) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// A server binary (`serve`, `https-serve`) started on a free port: the
/// child, its address, its banner (first line) and the rest of its stdout.
fn start_server(
    exe: &str,
    args: &[&str],
) -> (Child, SocketAddr, String, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(exe)
        .args(args)
        .args(["--listen", "127.0.0.1:0", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .split_whitespace()
        .find_map(|w| w.parse::<SocketAddr>().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, addr, line, out)
}

fn a_tls_library() -> String {
    tls_libraries()
        .into_iter()
        .find(|l| runs(&**l, &params(HandshakeKind::ServerAuth), &https::SERVER))
        .expect("a TLS library")
        .name()
}

const TLS: [&str; 2] = ["--group", "secp256r1"];

#[test]
fn an_mtls_client_against_a_server_that_never_asks_fails_negotiated() {
    let mut ran = 0;
    for lib in tls_libraries() {
        let (server_auth, mtls) = (params(HandshakeKind::ServerAuth), params(HandshakeKind::MutualAuth));
        if !runs(&*lib, &server_auth, &Extensions::NONE) || !runs(&*lib, &mtls, &Extensions::NONE) {
            continue;
        }
        let what = lib.name();
        // The echo.
        let running = serve::start(&*lib, &serve_options(server_auth)).unwrap();
        let report = load::run(&*lib, &load_options(mtls, running.addr())).unwrap();
        running.stop().unwrap();
        assert_eq!(report.requests, 0, "{what}: an mTLS figure without client authentication");
        // s2n-tls's client, told to authenticate, fails the handshake
        // itself; the others finish it and the read-back finds no client
        // authentication.
        let kinds: Vec<_> = report.errors.keys().collect();
        let refused = |e: &str| {
            e.contains("client authenticated false (wanted true)")
                || e.contains("Client requires mutual authentication, but server did not request a cert")
        };
        assert!(kinds == [&ErrorKind::Negotiated] || kinds == [&ErrorKind::Handshake], "{what}: {kinds:?}");
        assert!(refused(&report.error_examples[0]), "{what}: {:?}", report.error_examples);
        // HTTPS.
        let running =
            start_with(&*lib, &serve_options(server_auth), std::sync::Arc::new(https::Http::new(1024)))
                .unwrap();
        let report = siege::run(&*lib, &siege_options(mtls, running.addr())).unwrap();
        running.stop().unwrap();
        assert_eq!(report.transactions, 0, "{what}");
        assert!(refused(&report.error_examples[0]), "{what}: {:?}", report.error_examples);
        // And the client sees a server that asks: mTLS against mTLS holds.
        let running = serve::start(&*lib, &serve_options(mtls)).unwrap();
        let report = load::run(&*lib, &load_options(mtls, running.addr())).unwrap();
        running.stop().unwrap();
        assert!(report.errors.is_empty() && report.requests == 20, "{what}: {:?}", report.error_examples);
        ran += 1;
    }
    assert!(ran > 0, "no TLS library ran mTLS");
}

#[test]
fn a_dead_server_costs_one_failure_per_request_and_is_retried_slowly() {
    let nothing = refusing_port();
    let port = nothing.addr;
    let lib = libraries().pop().unwrap();
    // -n 1 with two clients: two requests asked, two refused (the first
    // connection before the window is the first request's).
    let one = LoadOptions { requests: Some(1), ..load_options(Params::default(), port) };
    let report = load::run(&*lib, &one).unwrap();
    assert_eq!(report.errors.get(&ErrorKind::Refused), Some(&2), "{:?}", report.errors);
    // For a duration: each client backs off (10 ms doubling to 1 s), so
    // two clients refused for 2 s try about 9 times each, not as fast as
    // the kernel refuses.
    let for_a_while = LoadOptions { requests: None, duration: Some(Duration::from_secs(2)), ..one };
    let started = Instant::now();
    let report = load::run(&*lib, &for_a_while).unwrap();
    let refused = report.errors.get(&ErrorKind::Refused).copied().unwrap_or(0);
    assert!((2..=30).contains(&refused), "refused {refused} in 2 s");
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    // The siege-style client too.
    let options = SiegeOptions {
        requests: None,
        duration: Some(Duration::from_secs(2)),
        ..siege_options(Params::default(), port)
    };
    let report = siege::run(&*lib, &options).unwrap();
    assert!((2..=30).contains(&report.failed_transactions), "{report:?}");
}

#[test]
fn the_open_loop_ends_at_its_duration() {
    let lib = libraries().pop().unwrap();
    let running = serve::start(&*lib, &serve_options(Params::default())).unwrap();
    for (rate, duration, requests) in [(0.2, 1000, 1), (1.0, 2500, 3)] {
        let options = LoadOptions {
            connections: 1,
            requests: None,
            duration: Some(Duration::from_millis(duration)),
            rate: Some(rate),
            ..load_options(Params::default(), running.addr())
        };
        let started = Instant::now();
        let report = load::run(&*lib, &options).unwrap();
        let took = started.elapsed().as_secs_f64();
        let asked = duration as f64 / 1e3;
        assert!(took < asked + 0.5, "-R {rate} -d {duration}ms ran {took:.2} s");
        assert!((report.seconds - asked).abs() < 0.3, "window {} s for -d {duration}ms", report.seconds);
        assert_eq!(report.requests, requests, "-R {rate} -d {duration}ms");
    }
    running.stop().unwrap();
}

/// Two clients' reports of one server, run at once.
fn two_reports_at_once(addr: SocketAddr) -> (Report, Report) {
    let lib = libraries().pop().unwrap();
    let options = LoadOptions {
        requests: None,
        duration: Some(Duration::from_millis(500)),
        ..load_options(Params::default(), addr)
    };
    let other = {
        let options = options.clone();
        std::thread::spawn(move || load::run(&*libraries().pop().unwrap(), &options).unwrap())
    };
    let a = load::run(&*lib, &options).unwrap();
    (a, other.join().unwrap())
}

#[test]
fn merge_refuses_reports_that_do_not_add_up() {
    let lib = libraries().pop().unwrap();
    let running = serve::start(&*lib, &serve_options(Params::default())).unwrap();
    let (a, b) = two_reports_at_once(running.addr());
    let merged = load::merge(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(merged.requests, a.requests + b.requests);
    // The same run twice.
    let e = load::merge(&[a.clone(), a.clone()]).unwrap_err().to_string();
    assert!(e.contains("the same run"), "{e}");
    // A closed loop beside an open one.
    let open = Report { rate_per_s: Some(100.0), ..b.clone() };
    let e = load::merge(&[a.clone(), open]).unwrap_err().to_string();
    assert!(e.contains("a closed and an open loop"), "{e}");
    // Another server (another port).
    let elsewhere = Report { server: "127.0.0.1:1".into(), ..b.clone() };
    let e = load::merge(&[a.clone(), elsewhere]).unwrap_err().to_string();
    assert!(e.contains("different servers"), "{e}");
    // Another server on this machine (the same port of another loopback address).
    let port = running.addr().port();
    let beside = Report { server: format!("127.0.0.2:{port}"), ..b.clone() };
    let e = load::merge(&[a.clone(), beside]).unwrap_err().to_string();
    assert!(e.contains("two loopback addresses"), "{e}");
    // Runs one after the other.
    let later = Report { window_start_unix_s: b.window_start_unix_s.map(|s| s + 60.0), ..b.clone() };
    let e = load::merge(&[a.clone(), later]).unwrap_err().to_string();
    assert!(e.contains("do not overlap"), "{e}");
    running.stop().unwrap();
    // The binary: one file given twice.
    let dir = common::scratch("socket_tools", "merge");
    fs::write(dir.join("a.json"), serde_json::to_string(&a).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_load"))
        .arg("--merge")
        .arg(dir.join("a.json"))
        .arg(dir.join("./a.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is given twice"), "{err}");
}

#[test]
fn an_interrupted_load_keeps_its_partial_report() {
    let dir = common::scratch("socket_tools", "interrupted");
    let library = a_tls_library();
    let lib = ["--library", library.as_str(), "--quiet"];
    // `exe` with `args`, `--json` and the parameters, sent `sig` after
    // 1.5 s: it must end within 5 s with `code`; its stdout and report.
    let interrupted = |exe: &str, args: &[&str], sig: i32, code: i32| {
        let json = dir.join(format!("{}-{sig}.json", Path::new(exe).file_name().unwrap().to_string_lossy()));
        let child = Command::new(exe)
            .args(args)
            .args(TLS)
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let signalled = Instant::now();
        signal(&child, sig);
        let out = wait(child, Duration::from_secs(10));
        assert!(signalled.elapsed() < Duration::from_secs(5), "{exe}: {:?}", signalled.elapsed());
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(code), "{exe}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.starts_with("INTERRUPTED"), "{exe}: {stdout}");
        let report: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
        (stdout, report)
    };
    let (server, addr, _, _out) =
        start_server(env!("CARGO_BIN_EXE_serve"), &[&["--library", &library][..], &TLS].concat());
    let addr = addr.to_string();
    for (sig, code, args) in [
        (libc::SIGINT, 130, &["-c", "2", "-d", "20s"][..]),
        (libc::SIGTERM, 143, &["-c", "2", "-d", "20s", "-R", "100"][..]),
    ] {
        let args = [&lib[..], &["--connect", &addr], args].concat();
        let (_, report) = interrupted(env!("CARGO_BIN_EXE_load"), &args, sig, code);
        let report: Report = serde_json::from_value(report).unwrap();
        assert!(report.interrupted && report.requests > 0 && report.seconds < 5.0, "{report:?}");
    }
    signal(&server, libc::SIGINT);
    assert!(wait(server, Duration::from_secs(15)).status.success());
    // https-load against https-serve; https-attack, its own server.
    let (server, addr, _, _out) =
        start_server(env!("CARGO_BIN_EXE_https-serve"), &[&["--library", &library][..], &TLS].concat());
    let addr = addr.to_string();
    let args = [&lib[..], &["--connect", &addr, "-c", "2", "-t", "20s"]].concat();
    let (_, report) = interrupted(env!("CARGO_BIN_EXE_https-load"), &args, libc::SIGINT, 130);
    let report: siege::SiegeReport = serde_json::from_value(report).unwrap();
    assert!(report.interrupted && report.transactions > 0, "{report:?}");
    signal(&server, libc::SIGINT);
    assert!(wait(server, Duration::from_secs(15)).status.success());
    let args = ["--library", library.as_str(), "-c", "2", "-t", "20s"];
    let (stdout, run) = interrupted(env!("CARGO_BIN_EXE_https-attack"), &args, libc::SIGINT, 130);
    assert!(stdout.contains("not run (interrupted)"), "{stdout}");
    assert!(run["alone"]["transactions"].as_u64().unwrap() > 0 && run["beside"].is_null(), "{run}");
}

#[test]
fn no_server_outlives_the_soak_that_started_it() {
    let nginx = tls_bench_sockets::nginx::binary().is_ok();
    if !nginx {
        println!("nginx is not installed: the soak's servers are this build's own only");
    }
    let servers = tls_libraries()
        .iter()
        .filter(|l| runs(&***l, &params(HandshakeKind::ServerAuth), &https::SERVER))
        .count()
        + usize::from(nginx);
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let dir = common::scratch("socket_tools", &format!("soak-{sig}"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_https-soak"));
        cmd.args(["-t", "60s", "-c", "1", "--runtimes", "none", "--out"]).arg(dir.join("out")).args(TLS);
        if !nginx {
            cmd.arg("--no-nginx");
        }
        let soak = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // Every server up (nginx has a worker of its own).
        let started = Instant::now();
        let children = loop {
            let found = descendants(soak.id());
            if found.len() > servers {
                break found;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "servers not started: {found:?}");
            std::thread::sleep(Duration::from_millis(100));
        };
        std::thread::sleep(Duration::from_millis(500));
        let children: Vec<u32> = children.into_iter().chain(descendants(soak.id())).collect();
        signal(&soak, sig);
        let out = wait(soak, Duration::from_secs(15));
        if sig == libc::SIGTERM {
            assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));
        }
        let until = Instant::now() + Duration::from_secs(10);
        while children.iter().any(|&p| running(p)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<u32> = children.iter().copied().filter(|&p| running(p)).collect();
        for &p in &left {
            // SAFETY: the test's own descendants, left behind.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "signal {sig}: servers left running: {left:?}");
        if sig == libc::SIGTERM {
            // The staged results directory goes with the run (a SIGKILL's
            // is removed by the next run).
            let staged: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".partial-"))
                .collect();
            assert!(staged.is_empty(), "a staging directory was left: {staged:?}");
        }
    }
}

#[test]
fn a_plaintext_client_for_tls_servers_is_refused_before_any_work() {
    let dir = common::scratch("socket_tools", "plaintext-client");
    for exe in [env!("CARGO_BIN_EXE_https-soak"), env!("CARGO_BIN_EXE_https-compare")] {
        let started = Instant::now();
        let out = Command::new(exe)
            .args(["--quick", "--client", "plaintext-tcp", "--runtimes", "none", "--out"])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{exe}: {err}");
        assert!(err.contains("--client plaintext-tcp: the servers speak TLS"), "{exe}: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{exe}: {:?}", started.elapsed());
    }
}

#[test]
fn https_compare_refuses_servers_it_cannot_start_before_any_work() {
    let dir = common::scratch("socket_tools", "servers");
    for (servers, wanted) in [
        ("nosuch", "--servers nosuch: unknown library \"nosuch\"; this build has: "),
        ("plaintext-tcp,plaintext-tcp", "--servers names plaintext-tcp twice"),
    ] {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_https-compare"))
            .args(["--quick", "--servers", servers, "--runtimes", "none", "--out"])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{servers}: {err}");
        assert!(err.starts_with("error: ") && err.contains(wanted), "{servers}: {err}");
        assert!(!dir.join("out").exists(), "{servers}: the results directory was made");
        assert!(started.elapsed() < Duration::from_secs(5), "{servers}: {:?}", started.elapsed());
    }
}

#[test]
fn https_compare_refuses_a_client_core_that_is_a_servers() {
    let dir = common::scratch("socket_tools", "cores");
    let out = Command::new(env!("CARGO_BIN_EXE_https-compare"))
        .args(["--quick", "--server-cores", "0", "--client-cores", "0", "--runtimes", "none", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.contains("both name core 0"), "{err}");
    assert!(!dir.join("out").exists(), "the results directory was made");
}

#[test]
fn a_row_whose_transactions_failed_is_named() {
    let lib = libraries().pop().unwrap();
    let running =
        start_with(&*lib, &serve_options(Params::default()), std::sync::Arc::new(https::Http::new(100)))
            .unwrap();
    // The client expects another body: every transaction fails.
    let report = siege::run(&*lib, &siege_options(Params::default(), running.addr())).unwrap();
    running.stop().unwrap();
    let why = report.unmeasured().expect("a row with no transaction is named");
    assert!(why.starts_with("no transaction completed (corrupt 6)"), "{why}");
    assert!(
        report.error_examples[0].contains("100 bytes where 1024 were expected"),
        "{:?}",
        report.error_examples
    );
}

#[test]
fn a_closed_stdout_is_an_error_not_a_panic() {
    for exe in [env!("CARGO_BIN_EXE_serve"), env!("CARGO_BIN_EXE_https-serve")] {
        let (child, _addr, _, out) = start_server(exe, &["--library", "plaintext-tcp"]);
        drop(out); // as `| head -1` does
        signal(&child, libc::SIGINT);
        let out = wait(child, Duration::from_secs(15));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{exe}: {err}");
        assert!(err.contains("error: writing to stdout") && !err.contains("panicked"), "{exe}: {err}");
    }
}

#[test]
fn the_plaintext_banner_names_no_tls_parameters() {
    let (child, _addr, banner, mut rest) =
        start_server(env!("CARGO_BIN_EXE_serve"), &["--library", "plaintext-tcp"]);
    signal(&child, libc::SIGINT);
    let mut summary = String::new();
    rest.read_line(&mut summary).unwrap();
    assert!(wait(child, Duration::from_secs(15)).status.success());
    assert!(banner.contains("(no TLS") && !banner.contains("TLS_AES"), "{banner}");
    assert!(summary.starts_with("served plaintext-tcp"), "{summary}");
}

#[test]
fn an_output_that_cannot_be_written_is_refused_before_any_work() {
    // Nothing can be created in /proc/self, root or not.
    let unwritable = "/proc/self/report.json";
    let refusing = refusing_port();
    let nothing = refusing.addr.to_string();
    for (exe, args) in [
        (env!("CARGO_BIN_EXE_load"), &["--library", "plaintext-tcp", "--connect", &nothing][..]),
        (env!("CARGO_BIN_EXE_https-load"), &["--library", "plaintext-tcp", "--connect", &nothing][..]),
        (env!("CARGO_BIN_EXE_https-attack"), &["--library", &a_tls_library(), "--group", "secp256r1"][..]),
        (env!("CARGO_BIN_EXE_serve"), &["--library", "plaintext-tcp", "--listen", "127.0.0.1:0"][..]),
    ] {
        let started = Instant::now();
        let out = Command::new(exe).args(args).args(["--json", unwritable]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{exe}: {err}");
        assert!(err.contains(&format!("--json {unwritable}: cannot be written")), "{exe}: {err}");
        assert!(started.elapsed() < Duration::from_secs(3), "{exe}: {:?}", started.elapsed());
    }
}

#[test]
fn a_results_directory_on_a_mount_point_is_refused_before_any_work() {
    // SAFETY: getuid only reads.
    if unsafe { libc::getuid() } != 0 {
        println!("skip: mounting a file system needs root");
        return;
    }
    let dir = common::scratch("socket_tools", "mount-point").join("out");
    fs::create_dir_all(&dir).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"]).arg(&dir).status();
    if !mounted.is_ok_and(|s| s.success()) {
        println!("skip: mount -t tmpfs failed here");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_https-soak"))
        .args(["--quick", "--runtimes", "none", "--out"])
        .arg(&dir)
        .output();
    let _ = Command::new("umount").arg(&dir).status();
    let out = out.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is a mount point"), "{err}");
}

#[test]
fn a_host_name_is_said_to_be_no_address() {
    for exe in [env!("CARGO_BIN_EXE_load"), env!("CARGO_BIN_EXE_https-load")] {
        let out = Command::new(exe)
            .args(["--library", "plaintext-tcp", "--connect", "localhost:4433"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("host names such as localhost are not resolved"), "{err}");
    }
}

#[test]
fn compare_sockets_checks_its_filter_and_libraries_before_any_build() {
    if !tls_bench::variants::built_as_default() {
        println!("skip: only a default build answers for the default variant's cases before a build");
        return;
    }
    // A cargo that must not run.
    let dir = common::scratch("socket_tools", "no-cargo");
    fs::write(dir.join("cargo"), "#!/bin/sh\necho cargo ran >&2; exit 99\n").unwrap();
    fs::set_permissions(dir.join("cargo"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    for (args, says) in [
        (&["--filter", "NOMATCH"][..], "no runnable benchmark matches --filter \"NOMATCH\""),
        (&["--libraries", "nosuch"][..], "--libraries: unknown library \"nosuch\"; this build has: "),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_compare"))
            .args(["--sockets", "--out"])
            .arg(dir.join("out"))
            .args(args)
            .env("PATH", &path)
            .env("CARGO", dir.join("cargo"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says) && !err.contains("cargo ran"), "{args:?}: {err}");
    }
}

/// Sockets in TIME_WAIT on 127.0.0.1 (`/proc/net/tcp`, state 06): those
/// whose local port is `port` (the server's end) and those whose remote
/// port is (the clients' ends).
fn time_wait(port: u16) -> (usize, usize) {
    let table = fs::read_to_string("/proc/net/tcp").unwrap();
    let port_of = |addr: &str| u16::from_str_radix(addr.rsplit_once(':').unwrap().1, 16).unwrap();
    let (mut server, mut client) = (0, 0);
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f[3] != "06" {
            continue;
        }
        if port_of(f[1]) == port {
            server += 1;
        } else if port_of(f[2]) == port {
            client += 1;
        }
    }
    (server, client)
}

#[test]
fn a_tls_server_closes_first_and_holds_the_time_wait() {
    for lib in tls_libraries() {
        let p = params(HandshakeKind::ServerAuth);
        if !runs(&*lib, &p, &Extensions::NONE) {
            continue;
        }
        let running = serve::start(&*lib, &serve_options(p)).unwrap();
        let port = running.addr().port();
        // TIME_WAIT left by clients of an earlier server on this port (an
        // ephemeral port comes back within TIME_WAIT's minute): they only
        // expire meanwhile.
        let (_, earlier) = time_wait(port);
        let options =
            LoadOptions { new_connection: true, requests: Some(50), ..load_options(p, running.addr()) };
        let report = load::run(&*lib, &options).unwrap();
        assert!(report.errors.is_empty(), "{}: {:?}", lib.name(), report.error_examples);
        let (server, client) = time_wait(port);
        running.stop().unwrap();
        // Every connection's TIME_WAIT is the server's: 100 connections.
        assert!(
            client <= earlier,
            "{}: {client} client ports in TIME_WAIT ({earlier} before), {server} on the server",
            lib.name()
        );
        assert!(server >= 90, "{}: {server} TIME_WAIT on the server's end of 100", lib.name());
    }
}

/// `interop` on this build's own binaries (one build: every pair of its
/// libraries, each side a child process): every supported pair passes,
/// with the handshakes its parameters ask, and `load --probe` answers as
/// the library does in this process.
#[test]
fn interop_runs_every_pair_of_the_builds_binaries() {
    use tls_bench_sockets::interop::{self, Binaries, Outcome};
    let serve = Path::new(env!("CARGO_BIN_EXE_https-serve"));
    let load = Path::new(env!("CARGO_BIN_EXE_load"));
    let build = Binaries::read("this", serve, load).unwrap();
    let names: Vec<String> = tls_libraries().iter().map(|l| l.name()).collect();
    assert_eq!((&build.server.libraries, &build.client.libraries), (&names, &names));
    let resumption = params(HandshakeKind::Resumption);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interop");
    let pairs = interop::run(&[build], &[resumption], 2, &dir).unwrap();
    assert_eq!(pairs.len(), names.len() * names.len());
    for p in &pairs {
        let client = tls_libraries().into_iter().find(|l| l.name() == p.client.library).unwrap();
        let server = tls_libraries().into_iter().find(|l| l.name() == p.server.library).unwrap();
        let supported =
            runs(&*client, &resumption, &Extensions::NONE) && runs(&*server, &resumption, &Extensions::NONE);
        match &p.outcome {
            Outcome::Passed { full, resumed } => assert!(supported && (*full, *resumed) == (1, 2), "{p:?}"),
            Outcome::Skipped(_) => assert!(!supported, "{p:?}"),
            Outcome::Failed(what) => panic!("{} client, {} server: {what}", p.client, p.server),
        }
    }
    assert!(pairs.iter().any(|p| matches!(p.outcome, Outcome::Passed { .. })));
}
