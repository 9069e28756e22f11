//! What the integration tests share.

#[cfg(feature = "sockets")]
#[allow(dead_code)] // not every test file that shares this module uses all of it
pub mod sockets;

mod support;
#[allow(unused_imports)] // not every test file that shares this module uses all of it
pub use support::*;
