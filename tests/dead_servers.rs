//! A server that dies or stops during a run is a failed row, found at
//! once: `https-compare`, `https-soak` and `https-attack` each run with a
//! child server (nginx, Go's crypto/tls server) that the test kills
//! (SIGKILL) or stops (SIGSTOP) mid-run. Each tool must say so on stderr
//! naming the server and how it ended, write every other row's results,
//! exit 1, and leave no process of its own behind (nginx's workers
//! included). A machine without nginx or Go prints a skip; with
//! `TLS_BENCH_REQUIRE_RUNTIMES` set (CI) that is a failure. Each run is
//! bounded in time (a few seconds of load on 127.0.0.1).

#![cfg(feature = "sockets")]

mod common;

use std::{
    fs,
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use common::sockets::{descendants, running};
use tls_bench_sockets::runtimes::RUNTIMES;

const REQUIRE: &str = "TLS_BENCH_REQUIRE_RUNTIMES";

/// Whether nginx and Go's server can run here; a printed skip if not (a
/// failure under [`REQUIRE`]).
fn have(what: &str) -> bool {
    let there = match what {
        "nginx" => tls_bench_sockets::nginx::binary().is_ok(),
        name => RUNTIMES.iter().find(|r| r.name == name).unwrap().installed(),
    };
    if !there {
        assert!(std::env::var_os(REQUIRE).is_none(), "{REQUIRE} is set and {what} is missing");
        println!("skip: {what} is not installed");
    }
    there
}

/// The first TLS library of this build: the row kept beside the failed one.
fn a_tls_library() -> String {
    tls_bench_sockets::libraries().into_iter().find(|l| !l.plaintext()).expect("a TLS library").name()
}

fn cmdline(pid: u32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// What a tool did with one of its servers killed.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `exe ARGS`; once a line of its stderr contains `when` (within
/// 120 s; `None`: at once), waits `after`, then sends `signal` to its descendant whose
/// command line contains `target` (within 30 s). Returns how the tool
/// ended (within 120 s more: else the test fails, the tool killed), after
/// checking that none of its processes is left running.
fn kill_mid_run(
    exe: &str,
    args: &[&str],
    when: Option<&str>,
    after: Duration,
    target: &str,
    signal: i32,
) -> Ended {
    let mut tool: Child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let stderr = BufReader::new(tool.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    let stdout = BufReader::new(tool.stdout.take().unwrap());
    let out_reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let guard = KillOnDrop(tool.id());
    let started = Instant::now();
    if let Some(when) = when {
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(line) if line.contains(when) => break,
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{exe} ended before {when:?}"),
            }
            assert!(started.elapsed() < Duration::from_secs(120), "{exe}: no {when:?} on stderr in 120 s");
        }
    }
    std::thread::sleep(after);
    let found = Instant::now();
    let victim = loop {
        if let Some(p) = descendants(tool.id()).into_iter().find(|&p| cmdline(p).contains(target)) {
            break p;
        }
        assert!(found.elapsed() < Duration::from_secs(30), "{exe}: no process {target:?} to kill");
        std::thread::sleep(Duration::from_millis(50));
    };
    let family: Vec<u32> = descendants(tool.id());
    // SAFETY: a signal to a descendant of the test's own child.
    assert_eq!(unsafe { libc::kill(victim as i32, signal) }, 0);
    let ended = Instant::now();
    let status = loop {
        if let Some(status) = tool.try_wait().unwrap() {
            break status;
        }
        assert!(ended.elapsed() < Duration::from_secs(120), "{exe}: still running 120 s after the kill");
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(guard);
    let stderr = reader.join().unwrap();
    let stdout = out_reader.join().unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while family.iter().any(|&p| running(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<String> =
        family.iter().copied().filter(|&p| running(p)).map(|p| format!("{p} {}", cmdline(p))).collect();
    for &p in &family {
        if running(p) {
            // SAFETY: the test's own descendants, left behind.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
        }
    }
    assert!(left.is_empty(), "{exe}: processes left running: {left:?}\n{stderr}");
    Ended { code: status.code(), stdout, stderr }
}

/// Kills the tool if a test fails before it ends.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // SAFETY: the test's own child.
            unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
        }
    }
}

/// `results.json` of a run's `--out`.
fn results(out: &Path) -> serde_json::Value {
    let text =
        fs::read_to_string(out.join("results.json")).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    serde_json::from_str(&text).unwrap()
}

/// https-compare's server named `name` in the run's only row.
fn compare_server<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let servers = run["rows"][0]["servers"].as_array().unwrap();
    servers
        .iter()
        .find(|s| s["server"].as_str().unwrap().starts_with(name))
        .unwrap_or_else(|| panic!("{name}: {run}"))
}

/// https-compare, 3 rounds of 1 s: the victim killed in round 2.
fn compare_args<'a>(out: &'a str, library: &'a str, runtimes: &'a str, nginx: bool) -> Vec<&'a str> {
    let mut args = vec![
        "--quick",
        "--rounds",
        "3",
        "-c",
        "2",
        "--no-tools",
        "--no-pin",
        "--modes",
        "new-connection",
        "--servers",
        library,
        "--runtimes",
        runtimes,
        "--out",
        out,
    ];
    if !nginx {
        args.push("--no-nginx");
    }
    args
}

#[test]
fn https_compare_marks_a_killed_nginx_failed_and_keeps_the_other_rows() {
    if !have("nginx") {
        return;
    }
    let dir = common::scratch("dead_servers", "compare-nginx");
    let out = dir.join("out");
    let library = a_tls_library();
    let args = compare_args(out.to_str().unwrap(), &library, "none", true);
    let ended = kill_mid_run(
        env!("CARGO_BIN_EXE_https-compare"),
        &args,
        Some("round 2 of 3"),
        Duration::ZERO,
        "nginx: master",
        libc::SIGKILL,
    );
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("error: server nginx failed in round 2 of 3"), "{}", ended.stderr);
    assert!(ended.stderr.contains("signal: 9 (SIGKILL)"), "{}", ended.stderr);
    assert!(ended.stdout.contains("| nginx | FAILED |"), "{}", ended.stdout);
    let run = results(&out);
    assert!(compare_server(&run, "nginx")["failure"].as_str().unwrap().contains("SIGKILL"), "{run}");
    let kept = compare_server(&run, &library);
    assert!(kept["failure"].is_null() && kept["rate"].as_f64().unwrap() > 0.0, "{run}");
    assert_eq!(kept["rates"].as_array().unwrap().len(), 3, "{run}");
}

/// https-compare with Go's server beside a library of this build, `signal`
/// sent to Go's server in round 2: the tool's end, its results, the
/// library kept and the seconds the run took.
fn compare_with_go(test: &str, signal: i32) -> (Ended, serde_json::Value, Duration) {
    let out = common::scratch("dead_servers", test).join("out");
    let library = a_tls_library();
    let args = compare_args(out.to_str().unwrap(), &library, "go", false);
    let started = Instant::now();
    let exe = env!("CARGO_BIN_EXE_https-compare");
    let ended = kill_mid_run(exe, &args, Some("round 2 of 3"), Duration::ZERO, "/runtimes/go/", signal);
    let took = started.elapsed();
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("error: server go-crypto-tls-"), "{}", ended.stderr);
    let run = results(&out);
    let kept = compare_server(&run, &library);
    assert!(kept["failure"].is_null() && kept["rates"].as_array().unwrap().len() == 3, "{run}");
    (ended, run, took)
}

#[test]
fn https_compare_marks_a_killed_runtime_server_failed_and_keeps_the_other_rows() {
    if !have("go") {
        return;
    }
    let (ended, run, _) = compare_with_go("compare-go", libc::SIGKILL);
    assert!(ended.stderr.contains("exited with signal: 9 (SIGKILL)"), "{}", ended.stderr);
    assert!(compare_server(&run, "go-crypto-tls")["failure"].as_str().unwrap().contains("SIGKILL"), "{run}");
}

#[test]
fn https_compare_stops_loading_a_stopped_server_at_once() {
    if !have("go") {
        return;
    }
    let (ended, run, took) = compare_with_go("compare-stopped", libc::SIGSTOP);
    assert!(ended.stderr.contains("stopped (state T"), "{}", ended.stderr);
    let failure = compare_server(&run, "go-crypto-tls")["failure"].as_str().unwrap();
    assert!(failure.contains("answers nothing"), "{run}");
    // Loaded no more after its slice: not a 10-s timeout per round left.
    assert!(took < Duration::from_secs(40), "{took:?}");
}

#[test]
fn https_soak_marks_a_killed_nginx_failed_and_keeps_the_other_rows() {
    if !have("nginx") {
        return;
    }
    let dir = common::scratch("dead_servers", "soak-nginx");
    let out = dir.join("out");
    let args = ["-t", "6s", "-c", "1", "--runtimes", "none", "--out", out.to_str().unwrap()];
    let ended = kill_mid_run(
        env!("CARGO_BIN_EXE_https-soak"),
        &args,
        None,
        Duration::from_secs(2),
        "nginx: master",
        libc::SIGKILL,
    );
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("error: server nginx failed"), "{}", ended.stderr);
    assert!(ended.stderr.contains("signal: 9 (SIGKILL)"), "{}", ended.stderr);
    // The header gives each load's window (-t), not the run's wall time.
    assert!(
        ended.stdout.contains("users per server, 6 s;") && ended.stdout.contains("| nginx | FAILED |"),
        "{}",
        ended.stdout
    );
    let run = results(&out);
    let servers = run["servers"].as_array().unwrap();
    let nginx = servers.iter().find(|s| s["server"] == "nginx").unwrap();
    assert!(nginx["failure"].as_str().unwrap().contains("SIGKILL"), "{run}");
    let kept: Vec<&serde_json::Value> = servers.iter().filter(|s| s["server"] != "nginx").collect();
    assert!(!kept.is_empty() && kept.iter().all(|s| s["failure"].is_null()), "{run}");
    assert!(kept.iter().all(|s| s["load"]["transactions"].as_u64().unwrap() > 0), "{run}");
    // The failed server's load stopped when it was found down (within a
    // second's sample and a user's back-off), not at the end of -t.
    let seconds = |s: &serde_json::Value| s["load"]["elapsed_time"].as_f64().unwrap();
    let shortest_kept = kept.iter().map(|s| seconds(s)).fold(f64::INFINITY, f64::min);
    assert!(seconds(nginx) < shortest_kept - 1.0, "{run}");
    assert!(out.join("rss.svg").is_file());
}

#[test]
fn https_attack_says_its_runtime_server_died_and_keeps_the_first_phase() {
    if !have("go") {
        return;
    }
    let dir = common::scratch("dead_servers", "attack-go");
    let json = dir.join("attack.json");
    let library = a_tls_library();
    let args = [
        "--runtime",
        "go",
        "--library",
        &library,
        "-c",
        "2",
        "-t",
        "2s",
        "--kinds",
        "garbage",
        "--json",
        json.to_str().unwrap(),
    ];
    let ended = kill_mid_run(
        env!("CARGO_BIN_EXE_https-attack"),
        &args,
        Some("good load beside the attackers"),
        Duration::from_millis(500),
        "/runtimes/go/",
        libc::SIGKILL,
    );
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("error: the server go-crypto-tls-"), "{}", ended.stderr);
    assert!(ended.stderr.contains("during the attacks"), "{}", ended.stderr);
    assert!(ended.stdout.contains("FAILED go-crypto-tls-"), "{}", ended.stdout);
    let run: serde_json::Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert!(run["server_failure"].as_str().unwrap().contains("SIGKILL"), "{run}");
    assert!(run["alone"]["transactions"].as_u64().unwrap() > 0, "{run}");
}

#[test]
fn compare_sockets_marks_a_killed_runtime_server_failed_and_keeps_the_other_rows() {
    if !have("go") {
        return;
    }
    let out = common::scratch("dead_servers", "compare-sockets").join("out");
    let filter = "^echo/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256,10conns,1024B/";
    let args = [
        "--sockets",
        "--quick",
        "--rounds",
        "20",
        "--slice-ms",
        "50",
        "--runtimes",
        "go",
        "--filter",
        filter,
        "--out",
        out.to_str().unwrap(),
    ];
    // The echo server starts at the first slice (calibration): killed
    // there or in a round, the case fails the same way.
    let ended = kill_mid_run(
        env!("CARGO_BIN_EXE_compare"),
        &args,
        None,
        Duration::from_secs(2),
        "--echo",
        libc::SIGKILL,
    );
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("the server go-crypto-tls-"), "{}", ended.stderr);
    assert!(ended.stderr.contains("exited with signal: 9 (SIGKILL)"), "{}", ended.stderr);
    assert!(ended.stdout.contains("- FAILED: go-crypto-tls-"), "{}", ended.stdout);
    let run = results(&out);
    let rows = run["rows"].as_array().unwrap();
    let row = &rows[0];
    let failed = row["failed"].as_array().unwrap();
    assert!(failed.len() == 1 && failed[0][0].as_str().unwrap().starts_with("go-crypto-tls-"), "{run}");
    let kept = row["libraries"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.iter().all(|l| l["rounds"].as_u64() == Some(20)), "{run}");
}

#[test]
fn compare_marks_the_case_of_a_killed_worker_failed_and_keeps_the_others() {
    let out = common::scratch("dead_servers", "compare-worker").join("out");
    let filter = "^handshake/server-auth,TLSv1.3,TLS_AES_128_GCM_SHA256,x25519,ECDSA-P256/";
    let args = [
        "--rounds",
        "30",
        "--epochs",
        "2",
        "--slice-ms",
        "5",
        "--filter",
        filter,
        "--out",
        out.to_str().unwrap(),
    ];
    // Killed in the second epoch's rounds: the case it ran fails, a new
    // worker process takes the others to the last round.
    let ended = kill_mid_run(
        env!("CARGO_BIN_EXE_compare"),
        &args,
        Some("new worker processes (epoch 2)"),
        Duration::from_millis(200),
        "compare worker --variant default",
        libc::SIGKILL,
    );
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    assert!(ended.stderr.contains("the default worker died (signal: 9 (SIGKILL))"), "{}", ended.stderr);
    assert!(ended.stdout.contains("- FAILED: "), "{}", ended.stdout);
    let run = results(&out);
    let row = &run["rows"].as_array().unwrap()[0];
    let failed = row["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{run}");
    assert!(failed[0][1].as_str().unwrap().contains("worker died"), "{run}");
    let kept = row["libraries"].as_array().unwrap();
    assert!(kept.len() >= 2 && kept.iter().all(|l| l["rounds"].as_u64() == Some(30)), "{run}");
}
