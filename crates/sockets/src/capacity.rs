//! What a load of many connections needs of the machine, checked before
//! any connection is made: memory (an estimate per connection against the
//! memory available), file descriptors (`RLIMIT_NOFILE`, the soft limit
//! raised to the hard one when the run needs it) and local ports (one
//! destination takes at most the ephemeral range's ports at once). A run
//! that cannot fit is refused naming what it needs and what there is;
//! without this, `load -c 100000` ran until the kernel's out-of-memory
//! killer ended it (docs/sockets.md, "Many connections").
//!
//! The estimate per connection, KiB:
//! - the library's own connection state: a client's heap after its
//!   handshake as `memory` measures it in memory (docs/memory.md, the
//!   largest over kinds and chains in `memory/data/`), the
//!   largest of those measured for a library not in the table;
//! - the client's own share ([`OWN_KIB`]): the client's task, its tallies
//!   and the adapter's wrappers, measured with plaintext TCP (no library
//!   state), plus the message buffer (the message, at most [`CHUNK`]);
//! - the kernel's share: the socket ([`SOCKET_KIB`]) and the message in
//!   flight in its receive queue (at most the queue's most,
//!   `net.ipv4.tcp_rmem`), all connections' at most the TCP stack's
//!   (`net.ipv4.tcp_mem`).

use std::{net::SocketAddr, sync::atomic::AtomicBool};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The most a client buffers of a message at once: its read buffer (the
/// echo is compared as it arrives, as `https-load` compares a body).
pub const CHUNK: usize = 16 * 1024;

/// The client's own resident share per connection beside the library's
/// state and the message buffer, KiB: its task (the driver's state
/// machine), its tallies and pending latencies, the adapter's wrappers
/// and the runtime's registration of the socket; measured as `load`'s
/// resident memory per connection with plaintext TCP (`-c 2000`, 1-byte
/// messages: about 5 KiB here), with room.
pub const OWN_KIB: f64 = 8.0;

/// The kernel's memory for one TCP socket, KiB: its `tcp_sock`, inode,
/// file and epoll entry (about 4 KiB in `/proc/slabinfo` on Linux 6),
/// with room.
pub const SOCKET_KIB: f64 = 6.0;

/// Descriptors a run needs beside its connections: standard streams, the
/// runtimes' epoll and wakers, the signal handler's, a `--json` file.
pub const SPARE_DESCRIPTORS: u64 = 32;

/// What [`check`] found: the estimate and what the machine has.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Connections at once the estimate is for.
    pub connections: usize,
    /// Memory per connection, KiB: `library_kib + own_kib + kernel_kib`.
    pub kib_per_connection: f64,
    /// The library's own connection state, KiB ([`library_kib`]).
    pub library_kib: f64,
    /// Where `library_kib` comes from.
    #[serde(default)]
    pub library_from: String,
    /// The client's own share, KiB ([`OWN_KIB`] and the message buffer).
    pub own_kib: f64,
    /// The kernel's, KiB (socket and message in flight).
    pub kernel_kib: f64,
    /// Memory available to the run, KiB ([`available_kib`]).
    pub available_kib: u64,
    /// Where `available_kib` comes from.
    pub available_from: String,
}

impl Estimate {
    /// The whole run's estimate, KiB.
    pub fn total_kib(&self) -> f64 {
        self.kib_per_connection * self.connections as f64
    }
}

/// What the bridge adds to a library's state per connection, KiB: its
/// duplex's queues and the records waiting for the socket
/// ([`super::bridge`]; `openssl+bridge` measured 5.6 KiB above the native
/// adapter here, with room).
pub const BRIDGE_KIB: f64 = 8.0;

/// A client's heap per connection after its handshake, KiB, as `memory`
/// measured it in memory and the repository keeps it
/// (`memory/data/`, [`tls_bench_results::memory`]): the largest
/// `held` of the client over the library's kinds and chains (the
/// library's own name first, else its family: the name without its
/// version, `rustls+ring`), the largest of every library's for one never
/// measured; with [`BRIDGE_KIB`] for a library driven through the bridge
/// (GnuTLS, wolfSSL, Mbed TLS, and `<library>+bridge`). `None` when the
/// committed data cannot be read (a tool run outside its repository).
pub fn library_kib(library: &str) -> Option<f64> {
    if library == super::PLAINTEXT {
        return Some(0.0); // no TLS library, no state of one
    }
    let bridged = ["gnutls-", "wolfssl-", "mbedtls-"].iter().any(|p| library.starts_with(p))
        || library.ends_with(super::bridge::SUFFIX);
    let name = library.strip_suffix(super::bridge::SUFFIX).unwrap_or(library);
    held_kib(committed_held()?, name).map(|kib| kib + if bridged { BRIDGE_KIB } else { 0.0 })
}

/// The committed clients' held heap per connection, KiB, by library name
/// (read once). `None` when it cannot be read.
fn committed_held() -> Option<&'static [(String, f64)]> {
    static HELD: std::sync::OnceLock<Option<Vec<(String, f64)>>> = std::sync::OnceLock::new();
    HELD.get_or_init(|| {
        let dir = tls_bench_harness::paths::repo().join("memory/data");
        let reports = tls_bench_results::memory::read_reports(&[dir]).ok()?;
        let held: Vec<(String, f64)> = reports
            .iter()
            .flat_map(|(_, r)| r.rows.iter().map(|row| (row.library.clone(), row.held.client.max / 1024.0)))
            .collect();
        (!held.is_empty()).then_some(held)
    })
    .as_deref()
}

/// `library`'s figure in `held` ([`library_kib`]'s rule).
fn held_kib(held: &[(String, f64)], library: &str) -> Option<f64> {
    let largest = |pick: &dyn Fn(&str) -> bool| {
        held.iter().filter(|(name, _)| pick(name)).map(|&(_, kib)| kib).reduce(f64::max)
    };
    largest(&|name| name == library)
        .or_else(|| largest(&|name| family(name) == family(library)))
        .or_else(|| largest(&|_| true))
}

/// A library's name without its version (`rustls-0.23.46+ring` is
/// `rustls+ring`, `openssl-3.6.3` is `openssl`).
fn family(name: &str) -> String {
    match name
        .char_indices()
        .find(|&(i, c)| c == '-' && name[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
    {
        Some((i, _)) => {
            let rest = &name[i + 1..];
            let after = rest.find('+').map_or("", |j| &rest[j..]);
            format!("{}{after}", &name[..i])
        }
        None => name.to_string(),
    }
}

/// The environment variable that replaces the memory available (KiB), for
/// tests of the refusal on a machine of any size.
pub const AVAILABLE_VAR: &str = "TLS_BENCH_MEMORY_AVAILABLE_KIB";

/// The memory a run may take, KiB, and where the figure comes from:
/// `MemAvailable` of `/proc/meminfo` (proc(5): what can be allocated
/// without swapping), less when this process's memory cgroup has a lower
/// limit left; [`AVAILABLE_VAR`] instead when set. Errors: neither can be
/// read.
pub fn available_kib() -> Result<(u64, String)> {
    if let Ok(given) = std::env::var(AVAILABLE_VAR) {
        let kib =
            given.trim().parse().with_context(|| format!("{AVAILABLE_VAR}={given:?}: not a KiB count"))?;
        return Ok((kib, AVAILABLE_VAR.to_string()));
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    let mem = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .context("/proc/meminfo has no MemAvailable")?;
    match cgroup_left_kib() {
        Some(left) if left < mem => Ok((left, "the memory cgroup's limit less its usage".to_string())),
        _ => Ok((mem, "MemAvailable".to_string())),
    }
}

/// What this process's memory cgroup has left, KiB, when it has a limit:
/// v2's `memory.max` less `memory.current`, v1's `memory.limit_in_bytes`
/// less `memory.usage_in_bytes`. `None` without a limit or a readable one.
fn cgroup_left_kib() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |path: String| std::fs::read_to_string(path).ok()?.trim().parse::<u64>().ok();
    for line in groups.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let (limit, usage) = if controllers.is_empty() {
            let dir = format!("/sys/fs/cgroup{path}");
            (read(format!("{dir}/memory.max")), read(format!("{dir}/memory.current")))
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = format!("/sys/fs/cgroup/memory{path}");
            (read(format!("{dir}/memory.limit_in_bytes")), read(format!("{dir}/memory.usage_in_bytes")))
        } else {
            continue;
        };
        // v1 says "no limit" with a page-rounded i64::MAX.
        if let (Some(limit), Some(usage)) = (limit, usage)
            && limit < 1 << 60
        {
            return Some(limit.saturating_sub(usage) / 1024);
        }
    }
    None
}

/// A number of `/proc/sys/net/ipv4/NAME` (its `field`th, from 0).
fn ipv4_sysctl(name: &str, field: usize) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}")).ok()?;
    text.split_whitespace().nth(field)?.parse().ok()
}

/// What a run asks of the machine.
#[derive(Clone, Debug)]
pub struct Demand<'a> {
    /// The client library's name ([`super::Library::name`]).
    pub library: &'a str,
    /// Clients at once, each one connection.
    pub clients: usize,
    /// Bytes each connection's request or response holds at once, each way
    /// (the echo's message, an HTTP body).
    pub message: usize,
    /// The server.
    pub target: SocketAddr,
}

/// The estimate for `demand` ([`Estimate`]; see the module). Errors: the
/// memory available cannot be read.
pub fn estimate(demand: &Demand) -> Result<Estimate> {
    let (available_kib, available_from) = available_kib()?;
    // Unknown library state (no committed data here): the estimate holds
    // the client's and the kernel's shares only, and says so.
    let library = library_kib(demand.library);
    let library_from = match library {
        Some(_) => "memory/data (the client's heap held after a handshake)".to_string(),
        None => "unknown: memory/data not found beside this build".to_string(),
    };
    let library = library.unwrap_or(0.0);
    let own = OWN_KIB + demand.message.min(CHUNK) as f64 / 1024.0;
    // The message in flight in the socket's receive queue, at most the
    // queue's most; every socket's at most the TCP stack's (pages).
    let rmem_max = ipv4_sysctl("tcp_rmem", 2).unwrap_or(6 << 20);
    let in_flight = demand.message.min(rmem_max as usize) as f64 / 1024.0;
    let stack_kib = ipv4_sysctl("tcp_mem", 2).map_or(f64::INFINITY, |pages| pages as f64 * 4.0);
    let connections = demand.clients;
    let in_flight = in_flight.min(stack_kib / connections.max(1) as f64);
    Ok(Estimate {
        connections,
        kib_per_connection: library + own + SOCKET_KIB + in_flight,
        library_kib: library,
        library_from,
        own_kib: own,
        kernel_kib: SOCKET_KIB + in_flight,
        available_kib,
        available_from,
    })
}

/// Checks that `demand` fits the machine before any connection is made,
/// raising the soft `RLIMIT_NOFILE` to the hard limit when the run needs
/// more descriptors than the soft one allows (said once on stderr), and
/// returns the memory estimate and the descriptors this process may now
/// open. Errors (each naming what the run needs
/// and what there is): the estimate exceeds the memory available; more
/// clients than the ephemeral port range has ports (one destination);
/// more connections than the hard descriptor limit allows.
pub fn check(demand: &Demand) -> Result<(Estimate, u64)> {
    let estimate = estimate(demand)?;
    let needed = estimate.total_kib();
    if needed > estimate.available_kib as f64 {
        bail!(
            "-c {} needs about {} of memory ({:.0} KiB per connection: {} state {:.0}, the client's own {:.0}, \
             the kernel's {:.0}); {} is available ({}): use fewer connections (at most {})",
            demand.clients,
            size(needed),
            estimate.kib_per_connection,
            demand.library,
            estimate.library_kib,
            estimate.own_kib,
            estimate.kernel_kib,
            size(estimate.available_kib as f64),
            estimate.available_from,
            (estimate.available_kib as f64 / estimate.kib_per_connection) as u64,
        );
    }
    // Every connection to one address and port takes a local port of its
    // own (the 4-tuple is unique), from the ephemeral range.
    if let Some((low, high)) = ports() {
        let range = high.saturating_sub(low) + 1;
        if demand.clients as u64 > range {
            bail!(
                "-c {} needs {} local ports at once to {}; the ephemeral port range \
                 (net.ipv4.ip_local_port_range) {low}-{high} has {range}: use at most -c {range}, or widen the range",
                demand.clients,
                demand.clients,
                demand.target
            );
        }
    }
    let open = descriptors(demand.clients as u64 + SPARE_DESCRIPTORS)?;
    Ok((estimate, open))
}

/// Makes sure this process may open `needed` descriptors: the soft
/// `RLIMIT_NOFILE` is raised to the hard limit when below `needed`, and
/// the hard limit itself to `needed` when it is below and this process
/// may raise it (`CAP_SYS_RESOURCE`: root's, unless a container drops it; up to `fs.nr_open`), said on
/// stderr once. Returns the soft limit now. Errors: the hard limit is below
/// `needed` and cannot be raised, or the limit cannot be read or set.
pub fn descriptors(needed: u64) -> Result<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        bail!("getrlimit(RLIMIT_NOFILE): {}", std::io::Error::last_os_error());
    }
    if needed <= limit.rlim_cur {
        return Ok(limit.rlim_cur);
    }
    let connections = needed.saturating_sub(SPARE_DESCRIPTORS);
    let (soft, hard) =
        if needed > limit.rlim_max { (needed, needed) } else { (limit.rlim_max, limit.rlim_max) };
    let raised = libc::rlimit { rlim_cur: soft, rlim_max: hard };
    // SAFETY: setrlimit reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        let why = std::io::Error::last_os_error();
        if needed > limit.rlim_max {
            bail!(
                "{connections} connections need {needed} file descriptors ({SPARE_DESCRIPTORS} beside the \
                 sockets); this process may open {} (RLIMIT_NOFILE, hard limit {}: ulimit -Hn) and cannot \
                 raise it ({why}: raising it needs CAP_SYS_RESOURCE; up to fs.nr_open): use at most -c {}, or \
                 raise the hard limit",
                limit.rlim_cur,
                limit.rlim_max,
                limit.rlim_max.saturating_sub(SPARE_DESCRIPTORS)
            );
        }
        bail!("setrlimit(RLIMIT_NOFILE) to {soft}: {why}");
    }
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        let what = if hard > limit.rlim_max {
            format!("and its hard limit from {} to {hard}", limit.rlim_max)
        } else {
            format!("to its hard limit {hard}")
        };
        eprintln!(
            "raised this process's open-file limit (RLIMIT_NOFILE) from {} {what} for {connections} connections",
            limit.rlim_cur
        );
    }
    Ok(soft)
}

/// For a server, whose connection limit is a bound, not a demand: raises
/// the open-file limit toward `wanted` as far as this process may
/// ([`descriptors`]'s raises, without its message or refusal), so that a
/// server loaded by `load -c 20000` can accept them all. Returns the soft
/// limit now (what it was, when nothing could be raised).
pub fn allow_descriptors(wanted: u64) -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 || wanted <= limit.rlim_cur {
        return limit.rlim_cur;
    }
    for target in [wanted, limit.rlim_max.min(wanted)] {
        let raised = libc::rlimit { rlim_cur: target, rlim_max: target.max(limit.rlim_max) };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return target;
        }
    }
    limit.rlim_cur
}

/// The ephemeral port range (`net.ipv4.ip_local_port_range`), if readable.
fn ports() -> Option<(u64, u64)> {
    Some((ipv4_sysctl("ip_local_port_range", 0)?, ipv4_sysctl("ip_local_port_range", 1)?))
}

/// `kib` KiB for people: KiB, MiB or GiB.
pub fn size(kib: f64) -> String {
    match kib {
        k if k >= 1024.0 * 1024.0 => format!("{:.1} GiB", k / 1024.0 / 1024.0),
        k if k >= 1024.0 => format!("{:.0} MiB", k / 1024.0),
        k => format!("{k:.0} KiB"),
    }
}

/// This process's resident set now and its peak, KiB, from
/// `/proc/self/status` (`VmRSS`, `VmHWM`). Errors: not readable (not
/// Linux).
pub fn resident_kib() -> Result<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .with_context(|| format!("/proc/self/status has no {name}"))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// Resets this process's peak resident set (`VmHWM`) to its resident set
/// now (writing 5 to `/proc/self/clear_refs`, proc(5)), so that the peak
/// read later is the run's. Returns whether it could.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_sums_its_parts_and_names_a_library_state() {
        let held = [
            ("rustls-0.23.46+ring".to_string(), 9.3),
            ("rustls-0.23.46+aws-lc-rs".to_string(), 9.5),
            ("openssl-3.6.3".to_string(), 37.9),
            ("openssl-3.0.22".to_string(), 56.1),
            ("wolfssl-5.9.4".to_string(), 274.2),
        ];
        assert_eq!(held_kib(&held, "rustls-0.23.46+ring"), Some(9.3));
        // Another version: its family's largest; never measured: the largest of all.
        assert_eq!(held_kib(&held, "rustls-0.24.0+ring"), Some(9.3));
        assert_eq!(held_kib(&held, "openssl-3.5.0"), Some(56.1));
        assert_eq!(held_kib(&held, "nosuch-1.0"), Some(274.2));
        assert_eq!(held_kib(&[], "nosuch-1.0"), None);
        assert_eq!(family("rustls-0.23.46+aws-lc-rs"), "rustls+aws-lc-rs");
        assert_eq!(family("s2n-tls-0.3.47+aws-lc"), "s2n-tls+aws-lc");
        assert_eq!(family("plaintext-tcp"), "plaintext-tcp");
        // The committed data is read from the repository.
        let bridged = library_kib("openssl-3.6.3+bridge").expect("memory/data read");
        assert!(bridged >= BRIDGE_KIB + 30.0, "{bridged}");
        let demand = Demand {
            library: "plaintext-tcp",
            clients: 1000,
            message: 1 << 20,
            target: "127.0.0.1:4433".parse().unwrap(),
        };
        let e = estimate(&demand).unwrap();
        assert_eq!(e.own_kib, OWN_KIB + 16.0);
        assert!((e.kib_per_connection - (e.library_kib + e.own_kib + e.kernel_kib)).abs() < 1e-9, "{e:?}");
        assert!(e.kernel_kib >= SOCKET_KIB && e.available_kib > 0, "{e:?}");
        assert_eq!(size(512.0), "512 KiB");
        assert_eq!(size(3.0 * 1024.0 * 1024.0), "3.0 GiB");
    }

    #[test]
    fn the_resident_set_and_its_peak_are_read() {
        let (now, peak) = resident_kib().unwrap();
        assert!(now > 0 && peak >= now, "{now} {peak}");
    }
}
