//! The machine a measurement ran on, for reports.

/// The CPU model from /proc/cpuinfo (`model name`), or `unknown CPU`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// The allocator the process runs on: `glibc 2.36 malloc` on glibc (its
/// `gnu_get_libc_version`), `system malloc` elsewhere. Every report that
/// names an allocator (compare's, memory's) takes it from here.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn allocator() -> String {
    // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    format!("glibc {} malloc", version.to_string_lossy())
}

/// The allocator the process runs on: `system malloc` off glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn allocator() -> String {
    "system malloc".to_string()
}
