//! Across hosts: `serve` in one network namespace, two `load` clients in
//! two others, each joined to the server's by a veth pair on a private
//! /30 (10.199.1.0/30, 10.199.2.0/30) that exists only inside the
//! namespaces this test creates and removes itself. Then `load --merge`
//! makes one report of the two clients' JSON. Root only (`ip netns`): as
//! another user the test says so and passes without running. Every wait
//! has a timeout.

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
/// client i at 10.199.i.2, the server at 10.199.i.1.
fn hosts() -> Hosts {
    let pid = std::process::id();
    let hosts =
        Hosts { names: [format!("tlsb-srv-{pid}"), format!("tlsb-c1-{pid}"), format!("tlsb-c2-{pid}")] };
    for n in &hosts.names {
        ip(&["netns", "add", n]);
        ip(&["-n", n, "link", "set", "lo", "up"]);
    }
    for i in 1..=2 {
        let (s, c) = (format!("tbs{i}-{pid}"), format!("tbc{i}-{pid}"));
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
    // SAFETY: geteuid only reads.
    if unsafe { libc::geteuid() } != 0 {
        println!("skip: the network-namespace test needs root (ip netns add); run it as root to cover it");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sockets_netns");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    // A TLS library of this build, on a group every build can do (FIPS
    // ones refuse x25519).
    let library =
        tls_bench::sockets::libraries().into_iter().find(|l| !l.plaintext()).expect("a TLS library").name();
    let tls = ["--library", library.as_str(), "--group", "secp256r1"];
    let hosts = hosts();
    let log = dir.join("serve.log");
    let server = Command::new("ip")
        .args(["netns", "exec", hosts.server(), env!("CARGO_BIN_EXE_serve")])
        .args(tls)
        .args(["--listen", "0.0.0.0:4433", "--threads", "2"])
        .stdout(fs::File::create(&log).unwrap())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !fs::read_to_string(&log).unwrap_or_default().starts_with("serving") {
        assert!(started.elapsed() < Duration::from_secs(10), "serve did not start");
        thread::sleep(Duration::from_millis(20));
    }
    let clients: Vec<Child> = (1..=2)
        .map(|i| {
            Command::new("ip")
                .args(["netns", "exec", &hosts.names[i], env!("CARGO_BIN_EXE_load")])
                .args(tls)
                .args([
                    "--connect",
                    &format!("10.199.{i}.1:4433"),
                    "-c",
                    "2",
                    "-n",
                    "50",
                    "--quiet",
                    "--json",
                ])
                .arg(dir.join(format!("client{i}.json")))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in clients {
        let out = wait(c, Duration::from_secs(30));
        assert!(out.status.success(), "load: {}", String::from_utf8_lossy(&out.stderr));
    }
    // SAFETY: kill of our own child's pid with SIGINT.
    unsafe { libc::kill(server.id() as i32, libc::SIGINT) };
    let out = wait(server, Duration::from_secs(15));
    assert!(out.status.success());
    let summary = fs::read_to_string(&log).unwrap();
    assert!(summary.contains("4 connections") && summary.contains("204800 B received"), "{summary}");
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
    assert!(table.contains("4 connections") && table.contains("(200 requests)"), "{table}");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    assert_eq!(json["request_latency"]["count"], 200);
    assert_eq!(json["bytes_sent"], 204_800);
    drop(hosts);
}
