//! Across hosts: a server in one network namespace, two clients in two
//! others, each joined to the server's by a veth pair on a private /30
//! (10.199.1.0/30, 10.199.2.0/30) that exists only inside the namespaces
//! each test creates and removes itself: `serve` with two `load` clients,
//! then `load --merge` makes one report of the two clients' JSON; and
//! `https-serve` with two `https-load` clients (a new connection per
//! request, and keep-alive). Root only (`ip netns`): as another user the
//! tests say so and pass without running. Every wait has a timeout.

#![cfg(feature = "sockets")]

use std::{
    fs,
    path::Path,
    process::{Child, Command, Output, Stdio},
    thread,
    time::{Duration, Instant},
};

/// The namespaces of one run (names carry the pid), removed on drop with
/// their veth pairs.
struct Hosts {
    names: [String; 3],
}

impl Hosts {
    fn server(&self) -> &str {
        &self.names[0]
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "delete", n]).status();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("running ip");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// Three namespaces: the server's, joined to each client's by a veth pair;
/// client i at 10.199.i.2, the server at 10.199.i.1. `tag` (a letter)
/// keeps the names of tests running at once apart.
fn hosts(tag: &str) -> Hosts {
    let pid = std::process::id();
    let hosts = Hosts {
        names: [format!("tlsb-srv{tag}-{pid}"), format!("tlsb-c1{tag}-{pid}"), format!("tlsb-c2{tag}-{pid}")],
    };
    for n in &hosts.names {
        ip(&["netns", "add", n]);
        ip(&["-n", n, "link", "set", "lo", "up"]);
    }
    for i in 1..=2 {
        let (s, c) = (format!("tbs{i}{tag}-{pid}"), format!("tbc{i}{tag}-{pid}"));
        // Interface names are at most 15 bytes.
        let (s, c) = (&s[..s.len().min(15)], &c[..c.len().min(15)]);
        ip(&[
            "link",
            "add",
            s,
            "netns",
            hosts.server(),
            "type",
            "veth",
            "peer",
            "name",
            c,
            "netns",
            &hosts.names[i],
        ]);
        ip(&["-n", hosts.server(), "addr", "add", &format!("10.199.{i}.1/30"), "dev", s]);
        ip(&["-n", &hosts.names[i], "addr", "add", &format!("10.199.{i}.2/30"), "dev", c]);
        ip(&["-n", hosts.server(), "link", "set", s, "up"]);
        ip(&["-n", &hosts.names[i], "link", "set", c, "up"]);
    }
    hosts
}

/// Whether the tests can run here (root); says why not otherwise.
fn root() -> bool {
    // SAFETY: geteuid only reads.
    if unsafe { libc::geteuid() } != 0 {
        println!("skip: the network-namespace test needs root (ip netns add); run it as root to cover it");
        return false;
    }
    true
}

/// A TLS library of this build and a group every build can do (FIPS ones
/// refuse x25519), as command-line arguments.
fn tls_args() -> Vec<String> {
    let library =
        tls_bench_sockets::libraries().into_iter().find(|l| !l.plaintext()).expect("a TLS library").name();
    ["--library", library.as_str(), "--group", "secp256r1"].map(String::from).to_vec()
}

/// A test's scratch directory `name` (emptied), the TLS arguments and its
/// three hosts (`tag`, as [`hosts`]); `None` when not root (said).
fn setup(name: &str, tag: &str) -> Option<(std::path::PathBuf, Vec<String>, Hosts)> {
    if !root() {
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    Some((dir, tls_args(), hosts(tag)))
}

/// Starts `exe` with `args` in namespace `ns`, its stdout into `log`, and
/// waits (at most 10 s) for its `serving` line.
fn start_server(ns: &str, exe: &str, args: &[String], log: &Path) -> Child {
    let server = Command::new("ip")
        .args(["netns", "exec", ns, exe])
        .args(args)
        .stdout(fs::File::create(log).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !fs::read_to_string(log).unwrap_or_default().starts_with("serving") {
        assert!(started.elapsed() < Duration::from_secs(10), "{exe} did not start");
        thread::sleep(Duration::from_millis(20));
    }
    server
}

/// Runs `exe` on each client host, with `args(i)` for host i, at once, and
/// checks both ended well (each within 30 s).
fn run_clients(hosts: &Hosts, exe: &str, args: impl Fn(usize) -> Vec<String>) {
    let clients: Vec<Child> = (1..=2)
        .map(|i| {
            Command::new("ip")
                .args(["netns", "exec", &hosts.names[i], exe])
                .args(args(i))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in clients {
        let out = wait(c, Duration::from_secs(30));
        assert!(out.status.success(), "{exe}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Stops `server` with SIGINT (at most 15 s) and checks it ended well.
fn stop_server(server: Child) {
    // SAFETY: kill of our own child's pid with SIGINT.
    unsafe { libc::kill(server.id() as i32, libc::SIGINT) };
    let out = wait(server, Duration::from_secs(15));
    assert!(out.status.success());
}

/// Waits for `child` at most `limit`; kills it past that.
fn wait(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("polling a child").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("a child ran past {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collecting a child's output")
}

#[test]
fn a_server_and_two_clients_on_three_hosts_merge_into_one_report() {
    let Some((dir, tls, hosts)) = setup("sockets_netns", "e") else {
        return;
    };
    let log = dir.join("serve.log");
    let mut args = tls.clone();
    args.extend(["--listen", "0.0.0.0:4433", "--threads", "2"].map(String::from));
    let server = start_server(hosts.server(), env!("CARGO_BIN_EXE_serve"), &args, &log);
    run_clients(&hosts, env!("CARGO_BIN_EXE_load"), |i| {
        let mut args = tls.clone();
        args.extend(
            // For a duration, so that the two clients' windows overlap:
            // `load --merge` refuses reports of clients that did not run at
            // once.
            ["--connect", &format!("10.199.{i}.1:4433"), "-c", "2", "-d", "1s", "--quiet", "--json"]
                .map(String::from),
        );
        args.push(dir.join(format!("client{i}.json")).display().to_string());
        args
    });
    stop_server(server);
    let summary = fs::read_to_string(&log).unwrap();
    assert!(summary.contains("4 connections"), "{summary}");
    assert!(summary.contains("handshakes 4 full") && summary.contains("errors: none"), "{summary}");
    let merged = Command::new(env!("CARGO_BIN_EXE_load"))
        .arg("--merge")
        .args([dir.join("client1.json"), dir.join("client2.json")])
        .arg("--json")
        .arg(dir.join("merged.json"))
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    let table = String::from_utf8_lossy(&merged.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    let client = |i: usize| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(dir.join(format!("client{i}.json"))).unwrap()).unwrap()
    };
    let requests = client(1)["requests"].as_u64().unwrap() + client(2)["requests"].as_u64().unwrap();
    assert!(requests > 0);
    assert!(table.contains("4 connections") && table.contains(&format!("({requests} requests)")), "{table}");
    assert!(table.contains("against 10.199.1.1:4433 + 10.199.2.1:4433"), "{table}");
    assert_eq!(json["request_latency"]["count"], requests);
    assert_eq!(json["bytes_sent"], requests * 1024);
    // What the server received is what both clients sent (their closes
    // before the window and after it carry no message).
    assert!(summary.contains(&format!(" {} B received", requests * 1024)), "{summary}");
    drop(hosts);
}

#[test]
fn https_serve_on_one_host_answers_https_load_from_two_others() {
    let Some((dir, tls, hosts)) = setup("https_netns", "h") else {
        return;
    };
    let log = dir.join("https-serve.log");
    let mut args = tls.clone();
    args.extend(["--listen", "0.0.0.0:4433", "--threads", "2", "--body", "2048"].map(String::from));
    let server = start_server(hosts.server(), env!("CARGO_BIN_EXE_https-serve"), &args, &log);
    // Host 1: a new connection per request; host 2: kept alive.
    let modes: [&[&str]; 2] = [&["-r", "5"], &["-r", "10", "--keep-alive"]];
    run_clients(&hosts, env!("CARGO_BIN_EXE_https-load"), |i| {
        let mut args = tls.clone();
        args.extend(
            ["--connect", &format!("10.199.{i}.1:4433"), "-c", "2", "--body", "2048", "--quiet"]
                .map(String::from),
        );
        args.extend(modes[i - 1].iter().map(|a| a.to_string()));
        args.extend(["--json".to_string(), dir.join(format!("client{i}.json")).display().to_string()]);
        args
    });
    for (i, transactions) in [(1, 10), (2, 20)] {
        let json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join(format!("client{i}.json"))).unwrap()).unwrap();
        assert_eq!(json["transactions"], transactions, "client {i}: {json}");
        assert_eq!(json["failed_transactions"], 0, "client {i}: {json}");
        assert_eq!(json["availability"], 100.0, "client {i}: {json}");
        assert_eq!(json["bytes"], transactions * 2048, "client {i}: {json}");
    }
    stop_server(server);
    let summary = fs::read_to_string(&log).unwrap();
    // Every connection's parameters are checked on the server too: a
    // mismatch would be an error here.
    assert!(
        summary.contains("handshakes 12 full + 0 resumed, 30 HTTP requests answered")
            && summary.contains("errors: none"),
        "{summary}"
    );
    drop(hosts);
}
