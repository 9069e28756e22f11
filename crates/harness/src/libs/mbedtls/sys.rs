//! Mbed TLS's C API as this folder calls it: bindgen's bindings, generated
//! at build time from the installed headers (crates/harness/build.rs,
//! `mbedtls_bindings`), so the structures allocated here have the layout
//! of the installed configuration.

#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    missing_docs,
    unsafe_op_in_unsafe_fn,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/mbedtls.rs"));
