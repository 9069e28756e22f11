//! The process's C allocator entry points, replaced so that every heap
//! allocation (Rust's, the TLS libraries' C code's, glibc's own) is counted
//! in [`tls_bench_harness::memory`] before glibc's malloc serves it.
//!
//! An executable that defines `malloc` and friends takes precedence over
//! libc for the whole process: statically linked C code (vendored OpenSSL,
//! BoringSSL, s2n-tls, AWS-LC) binds to these at link time, shared
//! libraries (the system's libssl/libcrypto) through the dynamic symbol
//! table, which `build.rs` makes export them. glibc documents this as a
//! supported way to replace malloc ("Replacing malloc", glibc manual 3.2.5);
//! its `__libc_*` entry points are the underlying allocator.

use std::ffi::{c_int, c_void};

use tls_bench_harness::memory::{record_alloc, record_free};

unsafe extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(ptr: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_valloc(size: usize) -> *mut c_void;
    fn __libc_pvalloc(size: usize) -> *mut c_void;
}

fn usable(ptr: *mut c_void) -> usize {
    // SAFETY: `ptr` is a live block of glibc's allocator.
    unsafe { libc::malloc_usable_size(ptr) }
}

fn counted(ptr: *mut c_void, requested: usize) -> *mut c_void {
    if !ptr.is_null() {
        record_alloc(requested, usable(ptr));
    }
    ptr
}

/// `malloc(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_malloc(size) }, size)
}

/// `calloc(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_calloc(n, size) }, n.saturating_mul(size))
}

/// `realloc(3)`, counted as the free of the old block and an allocation.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    let old = if ptr.is_null() { 0 } else { usable(ptr) };
    // SAFETY: forwards the caller's contract to glibc.
    let new = unsafe { __libc_realloc(ptr, size) };
    if !new.is_null() || size == 0 {
        // Success, or glibc's realloc(ptr, 0), which frees ptr.
        if !ptr.is_null() {
            record_free(old);
        }
        counted(new, size);
    }
    new
}

/// `reallocarray(3)`: `realloc` with an overflow check.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn reallocarray(ptr: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        // SAFETY: forwards the caller's contract.
        Some(total) => unsafe { realloc(ptr, total) },
        None => {
            // SAFETY: errno is thread-local.
            unsafe { *libc::__errno_location() = libc::ENOMEM };
            std::ptr::null_mut()
        }
    }
}

/// `free(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(ptr: *mut c_void) {
    if !ptr.is_null() {
        record_free(usable(ptr));
    }
    // SAFETY: forwards the caller's contract to glibc.
    unsafe { __libc_free(ptr) }
}

/// `memalign(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_memalign(align, size) }, size)
}

/// `aligned_alloc(3)` (C11), counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_memalign(align, size) }, size)
}

/// `posix_memalign(3)`, counted; `EINVAL` for an alignment that is not a
/// power of two multiple of the pointer size, `ENOMEM` when out of memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !align.is_power_of_two() || !align.is_multiple_of(size_of::<*mut c_void>()) {
        return libc::EINVAL;
    }
    // SAFETY: forwards the caller's contract to glibc.
    let ptr = counted(unsafe { __libc_memalign(align, size) }, size);
    if ptr.is_null() {
        return libc::ENOMEM;
    }
    // SAFETY: the caller passes a valid out pointer.
    unsafe { *out = ptr };
    0
}

/// `valloc(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_valloc(size) }, size)
}

/// `pvalloc(3)`, counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    // SAFETY: forwards the caller's contract to glibc.
    counted(unsafe { __libc_pvalloc(size) }, size)
}

/// Glibc's own view of the heap (`mallinfo2(3)`): bytes in chunks in use,
/// headers included (`uordblks`), plus bytes in mmap'd chunks (`hblkhd`).
/// The independent measure the counters are checked against.
pub fn glibc_in_use_bytes() -> u64 {
    // SAFETY: mallinfo2 only reads allocator state.
    let info = unsafe { libc::mallinfo2() };
    (info.uordblks + info.hblkhd) as u64
}
