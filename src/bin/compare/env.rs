//! The environment recorded beside `compare`'s results: when and how long
//! the run took, the machine (CPU, flags, cores, kernel, CPU steal over the
//! run), the toolchain and allocator, the libraries and the command line.

use std::time::Instant;

pub use tls_bench_results::compare::{Environment, LibraryInfo};

/// CPU flags worth recording (from /proc/cpuinfo `flags`): the ones that
/// decide which AES-GCM, ChaCha20, SHA and bignum code paths run.
const FLAGS_OF_INTEREST: [&str; 10] =
    ["aes", "vaes", "pclmulqdq", "vpclmulqdq", "avx2", "avx512f", "avx512vl", "sha_ni", "adx", "bmi2"];

/// Taken when the run starts ([`EnvProbe::start`]); [`EnvProbe::finish`]
/// after the last round turns it into the [`Environment`].
pub struct EnvProbe {
    /// Start date, UTC.
    date: chrono::DateTime<chrono::Utc>,
    /// Start instant, for the wall time.
    started: Instant,
    /// The aggregate `cpu` line of /proc/stat at the start, if readable.
    cpu: Option<CpuJiffies>,
}

impl EnvProbe {
    /// Notes the date, the instant and the /proc/stat CPU counters.
    pub fn start() -> EnvProbe {
        EnvProbe { date: chrono::Utc::now(), started: Instant::now(), cpu: read_cpu_jiffies() }
    }

    /// The environment of the run started by [`EnvProbe::start`]: wall time
    /// and CPU steal from then to now, plus the machine, toolchain and
    /// allocator, `libraries` (one entry per library and build variant) and
    /// `command` (the command line, as it should be shown).
    pub fn finish(self, libraries: Vec<LibraryInfo>, command: String) -> Environment {
        let steal_percent = match (self.cpu, read_cpu_jiffies()) {
            (Some(start), Some(end)) => steal_percent(start, end),
            _ => None,
        };
        Environment {
            date: self.date.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            duration_s: self.started.elapsed().as_secs_f64(),
            cpu_model: tls_bench_results::host::cpu_model(),
            cpu_flags: std::fs::read_to_string("/proc/cpuinfo").map(|s| cpu_flags(&s)).unwrap_or_default(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".to_string()),
            steal_percent,
            rustc: option_env!("TLS_BENCH_RUSTC_VERSION").unwrap_or("unknown").to_string(),
            allocator: tls_bench_results::host::allocator(),
            libraries,
            command,
        }
    }
}

/// The counters of the aggregate `cpu` line of /proc/stat, in jiffies.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CpuJiffies {
    /// Time stolen by the hypervisor (8th field).
    steal: u64,
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest
    /// time is already counted in user and nice).
    total: u64,
}

/// The aggregate `cpu` line of `stat` (the text of /proc/stat); `None` when
/// it is missing or has fewer than 8 numeric fields.
fn parse_cpu_line(stat: &str) -> Option<CpuJiffies> {
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let fields: Vec<u64> =
        line.split_whitespace().skip(1).take(8).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    if fields.len() < 8 {
        return None;
    }
    Some(CpuJiffies { steal: fields[7], total: fields.iter().sum() })
}

fn read_cpu_jiffies() -> Option<CpuJiffies> {
    parse_cpu_line(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// Steal between two snapshots, in % of the total; `None` when no time passed
/// or a counter went backwards.
fn steal_percent(start: CpuJiffies, end: CpuJiffies) -> Option<f64> {
    let total = end.total.checked_sub(start.total)?;
    let steal = end.steal.checked_sub(start.steal)?;
    (total > 0).then(|| steal as f64 / total as f64 * 100.0)
}

/// The flags of interest in the first `flags` line of `cpuinfo` (the text
/// of /proc/cpuinfo), in [`FLAGS_OF_INTEREST`] order.
fn cpu_flags(cpuinfo: &str) -> Vec<String> {
    let Some(flags) = cpuinfo.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "flags").then_some(value)
    }) else {
        return Vec::new();
    };
    let present: Vec<&str> = flags.split_whitespace().collect();
    FLAGS_OF_INTEREST.iter().filter(|f| present.contains(f)).map(|f| f.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  4705 356 584 3699176 23060 0 277 120 0 0\n\
                        cpu0 1393280 32966 572056 13343292 6130 0 17875 60 0 0\n\
                        intr 1462898 0 0\n";

    #[test]
    fn parses_the_aggregate_cpu_line() {
        let j = parse_cpu_line(STAT).unwrap();
        assert_eq!(j, CpuJiffies { steal: 120, total: 4705 + 356 + 584 + 3699176 + 23060 + 277 + 120 });
        assert!(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8\n").is_none());
        assert!(parse_cpu_line("cpu 1 2 3\n").is_none());
        assert!(parse_cpu_line("cpu 1 2 x 4 5 6 7 8\n").is_none());
    }

    #[test]
    fn steal_is_a_share_of_the_delta() {
        let a = CpuJiffies { steal: 100, total: 1000 };
        let b = CpuJiffies { steal: 150, total: 2000 };
        assert_eq!(steal_percent(a, b), Some(5.0));
        assert_eq!(steal_percent(a, a), None);
        assert_eq!(steal_percent(b, a), None);
    }

    #[test]
    fn flags_of_interest_in_order() {
        let info =
            "processor\t: 0\nflags\t\t: fpu sse2 avx2 aes pclmulqdq bmi2 sha_ni avx512fx\nflags : vaes\n";
        assert_eq!(cpu_flags(info), ["aes", "pclmulqdq", "avx2", "sha_ni", "bmi2"]);
        assert!(cpu_flags("processor : 0\n").is_empty());
    }

    #[test]
    fn probe_and_markdown() {
        let env = EnvProbe::start().finish(
            vec![LibraryInfo { library: "rustls-0.23.46+ring".into(), variant: "default".into() }],
            "compare --rounds 3".into(),
        );
        assert!(env.duration_s >= 0.0 && env.cores >= 1);
        assert!(env.date.ends_with('Z') && env.date.len() == 20, "{}", env.date);
        let md = env.markdown();
        assert!(md.contains("- libraries: rustls-0.23.46+ring (default)\n"), "{md}");
        assert!(md.contains("- command: `compare --rounds 3`\n"), "{md}");
    }
}
