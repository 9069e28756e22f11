//! The regions the instruction counts cover, as functions Callgrind can
//! select by name.
//!
//! Callgrind's `--toggle-collect=PATTERN` (valgrind manual, "Callgrind
//! command-line options") counts instructions only while a function whose
//! name matches is on the stack. When counting is on ([`counted`], which the
//! runner enters around the iterations the `run-case` binary counts, never
//! around setup, warm-up or checks), the harness runs each side's library calls inside
//! [`client_calls`] or [`server_calls`] and a whole handshake inside
//! [`handshake`]: the same regions the wall-time benchmarks time. The
//! patterns that select them are [`Region::patterns`].
//!
//! When counting is off these wrappers are not entered; the wall-time
//! benchmarks pay one relaxed atomic load per library call, outside their
//! clock.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::side::Side;

static COUNTING: AtomicBool = AtomicBool::new(false);

/// Whether the named regions are on (inside [`counted`] or
/// [`counted_handshake`] with `on`).
pub fn counting() -> bool {
    COUNTING.load(Relaxed)
}

/// Runs `f` with the side regions on when `on` ([`side_call`] then enters
/// [`client_calls`] and [`server_calls`]); just `f` otherwise.
pub fn counted<T>(on: bool, f: impl FnOnce() -> T) -> T {
    if !on {
        return f();
    }
    COUNTING.store(true, Relaxed);
    let out = f();
    COUNTING.store(false, Relaxed);
    out
}

/// Runs `f`, one whole handshake, inside [`handshake`] with the side regions
/// on when `on`; just `f` otherwise.
pub fn counted_handshake<T>(on: bool, f: impl FnOnce() -> T) -> T {
    counted(on, || if on { handshake(f) } else { f() })
}

/// Runs `f`, a call into the client's library, inside a function named
/// `tls_bench_harness::callgrind::client_calls`.
#[inline(never)]
pub fn client_calls<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box(Side::Client);
    std::hint::black_box(f())
}

/// Runs `f`, a call into the server's library, inside a function named
/// `tls_bench_harness::callgrind::server_calls`.
#[inline(never)]
pub fn server_calls<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box(Side::Server);
    std::hint::black_box(f())
}

/// Runs `f`, a whole handshake from the creation of both connections to
/// both sides done, inside a function named `tls_bench_harness::callgrind::handshake`.
#[inline(never)]
pub fn handshake<T>(f: impl FnOnce() -> T) -> T {
    // A body of its own: LLVM merges identical functions into one symbol.
    std::hint::black_box("handshake");
    std::hint::black_box(f())
}

/// Runs `f`, a call into `side`'s library, inside that side's named
/// function when counting is on ([`client_calls`], [`server_calls`]),
/// directly otherwise. `counting` is [`counting`], read by the caller before
/// its clock starts.
pub fn side_call<T>(side: Side, counting: bool, f: impl FnOnce() -> T) -> T {
    match (counting, side) {
        (false, _) => f(),
        (true, Side::Client) => client_calls(f),
        (true, Side::Server) => server_calls(f),
    }
}

/// Tells Callgrind to start instrumenting: its client request
/// `CALLGRIND_START_INSTRUMENTATION` (valgrind's `callgrind.h`, request
/// `VG_USERREQ_TOOL_BASE('C','T') + 4`), for runs started with
/// `--instr-atstart=no` ([`INSTR_AT_START`]). Before it, Callgrind runs the
/// program uninstrumented, about 4 times native time against 20-50 times:
/// setup, warm-up, and one-time library initialisation such as `s2n_init`'s
/// entropy setup, 89% of an s2n-tls handshake case's instructions. Already
/// instrumenting, or not under Valgrind, it does nothing.
///
/// The request is the x86-64 sequence valgrind.h's
/// `VALGRIND_DO_CLIENT_REQUEST_EXPR` documents: four rotations of `rdi` (128
/// bits in all: no change) and `xchg rbx, rbx`, which Valgrind recognises,
/// with `rax` pointing at the request and its five arguments and `rdx` the
/// result. Written here rather than taken from `valgrind-requests`, whose
/// working requests need bindgen and libclang in every build of the harness.
/// Other targets: nothing, and [`INSTR_AT_START`] leaves instrumentation on
/// from the start there.
#[inline(never)]
pub fn start_instrumentation() {
    #[cfg(target_arch = "x86_64")]
    {
        const START_INSTRUMENTATION: u64 = (((b'C' as u64) << 24) | ((b'T' as u64) << 16)) + 4;
        let request: [u64; 6] = [START_INSTRUMENTATION, 0, 0, 0, 0, 0];
        let mut result: u64 = 0;
        // SAFETY: natively the sequence changes no register (rdi is
        // rotated by 128 bits, rbx exchanged with itself) and only the
        // flags, which the block does not promise to keep; under Valgrind it
        // is the client request, which reads `request` and writes `rdx`.
        unsafe {
            std::arch::asm!(
                "rol rdi, 3",
                "rol rdi, 13",
                "rol rdi, 61",
                "rol rdi, 51",
                "xchg rbx, rbx",
                in("rax") request.as_ptr(),
                inout("rdx") result,
                options(nostack),
            );
        }
        std::hint::black_box(result);
    }
}

/// The Callgrind option that leaves instrumentation off until
/// [`start_instrumentation`] (valgrind manual, "Callgrind command-line
/// options"): `--instr-atstart=no` on x86-64, where the request is issued;
/// none elsewhere. The counts do not change: an instruction count does not
/// depend on what ran uninstrumented before (`--cache-sim=no`).
pub const INSTR_AT_START: Option<&str> =
    if cfg!(target_arch = "x86_64") { Some("--instr-atstart=no") } else { None };

/// What a Callgrind run counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The client's (handshake) or the receiver's (transfer) calls.
    Client,
    /// The server's calls: in a handshake the server, in a transfer the
    /// sender ([`crate::bench::SENDER`]).
    Server,
    /// Both sides' calls.
    BothSides,
    /// A whole handshake, harness work between the calls included (the
    /// wall-time `handshake` figure's region).
    Handshake,
}

impl Region {
    /// The `--toggle-collect` patterns that select this region (one
    /// `--toggle-collect=` option each). Valgrind demangles Rust symbols, and
    /// each generic instance of a wrapper carries the wrapper's path, so
    /// `*` on both ends matches every instance.
    pub fn patterns(self) -> &'static [&'static str] {
        match self {
            Region::Client => &["*tls_bench_harness::callgrind::client_calls*"],
            Region::Server => &["*tls_bench_harness::callgrind::server_calls*"],
            Region::BothSides => &[
                "*tls_bench_harness::callgrind::client_calls*",
                "*tls_bench_harness::callgrind::server_calls*",
            ],
            Region::Handshake => &["*tls_bench_harness::callgrind::handshake*"],
        }
    }
}

/// What one Callgrind dump holds that the crypto floor's count check reads
/// (`crate::floor::count`): the instructions of the dump's `summary:` line
/// and the calls into each function, summed over every caller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dump {
    /// What made Callgrind write the dump: the `desc: Trigger:` line, e.g.
    /// `--dump-after=tls_bench_harness::callgrind::client_calls` or `Program
    /// termination`.
    pub trigger: String,
    /// Instructions executed in the dump's interval (its `summary:` line).
    pub instructions: u64,
    /// Calls made in the interval to each function, by (demangled) name.
    pub calls: std::collections::HashMap<String, u64>,
    /// The same calls by caller: (caller, callee) and the count.
    pub arcs: std::collections::HashMap<(String, String), u64>,
}

/// Parses one Callgrind output file ("Callgrind Format Specification" in
/// the valgrind manual): `cfn=` names the callee of the `calls=` line that
/// follows it, and a name is given once as `(id) name`, then as `(id)`.
/// Errors: a `calls=` line without a callee or count, a name compressed to
/// an id never defined, no `summary:` line.
pub fn parse_dump<'a>(text: &'a str) -> anyhow::Result<Dump> {
    use anyhow::{Context, bail};
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut resolve = |spec: &'a str| -> anyhow::Result<String> {
        let Some(rest) = spec.strip_prefix('(') else { return Ok(spec.to_string()) };
        let (id, name) = rest.split_once(')').with_context(|| format!("a bad name {spec:?}"))?;
        let name = name.trim_start();
        if name.is_empty() {
            Ok(names.get(id).with_context(|| format!("the function id ({id}) is not defined"))?.to_string())
        } else {
            names.insert(id, name);
            Ok(name.to_string())
        }
    };
    let mut dump = Dump::default();
    let mut summary = None;
    let mut callee: Option<String> = None;
    let mut caller = String::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("desc: Trigger: ") {
            dump.trigger = t.trim().to_string();
        } else if let Some(s) = line.strip_prefix("summary:") {
            summary = Some(s.trim().parse::<u64>().with_context(|| format!("a bad line {line:?}"))?);
        } else if let Some(f) = line.strip_prefix("fn=") {
            caller = resolve(f)?;
        } else if let Some(f) = line.strip_prefix("cfn=") {
            callee = Some(resolve(f)?);
        } else if let Some(c) = line.strip_prefix("calls=") {
            let Some(name) = callee.take() else { bail!("a `calls=` line with no `cfn=` before it") };
            let n: u64 = c
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .with_context(|| format!("a bad line {line:?}"))?;
            *dump.arcs.entry((caller.clone(), name.clone())).or_insert(0) += n;
            *dump.calls.entry(name).or_insert(0) += n;
        }
    }
    dump.instructions = summary.context("no `summary:` line: not a Callgrind output file")?;
    Ok(dump)
}

/// glibc tunables set for every counted process: fastbins off. Their
/// consolidation (`malloc_consolidate`) runs at points that move with the
/// sizes of earlier allocations, which vary with random signatures; it moved
/// s2n-tls's handshake counts by 0.3% between runs, 0.02% without it.
pub const GLIBC_TUNABLES: &str = "glibc.malloc.mxfast=0";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_sums_calls_over_callers_and_resolves_compressed_names() {
        let text = "# callgrind format\nversion: 1\ndesc: Trigger: --dump-after=x\nevents: Ir\nsummary: 120\n\n\
                    fn=(1) caller_a\ncfn=(2) HMAC_Final\ncalls=3 0\n0 30\ncfn=(3) X25519\ncalls=1 0\n0 50\n\
                    fn=(4) caller_b\ncfn=(2)\ncalls=2 0\n0 20\n";
        let d = parse_dump(text).unwrap();
        assert_eq!(d.trigger, "--dump-after=x");
        assert_eq!(d.instructions, 120);
        assert_eq!(d.calls["HMAC_Final"], 5);
        assert_eq!(d.calls["X25519"], 1);
        let arc = |a: &str, b: &str| d.arcs[&(a.to_string(), b.to_string())];
        assert_eq!((arc("caller_a", "HMAC_Final"), arc("caller_b", "HMAC_Final")), (3, 2));
        assert!(parse_dump("fn=(1) a\ncfn=(9)\ncalls=1 0\nsummary: 1\n").is_err());
        assert!(parse_dump("fn=(1) a\n").is_err());
    }
}
