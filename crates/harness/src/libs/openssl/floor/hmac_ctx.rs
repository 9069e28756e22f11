//! HMACs through libcrypto's `HMAC_CTX` (`HMAC_Init_ex`, `HMAC_Update`,
//! `HMAC_Final`): one C interface in OpenSSL, AWS-LC under the `openssl`
//! crate and BoringSSL ([`crate::libs::openssl::config::ffi`]), shared by their
//! floor backends ([`super::ossl`], [`super::boringssl`]).

use anyhow::{Result, ensure};

use crate::{
    floor::ops::Hash,
    libs::openssl::config::{ffi, ossl},
};
use ossl::{error::ErrorStack, hash::MessageDigest};

/// The type of `HMAC_Init_ex`'s key length: `int` in OpenSSL, `size_t` in
/// AWS-LC and BoringSSL.
#[cfg(not(any(feature = "boring", openssl_awslc)))]
type HmacKeyLen = std::ffi::c_int;
#[cfg(any(feature = "boring", openssl_awslc))]
type HmacKeyLen = usize;

/// HMACs of each of `data` under `key` through one `HMAC_CTX`, keyed by
/// the first `HMAC_Init_ex`; each later HMAC restarts from the keyed state
/// (`HMAC_Init_ex` with no key, as TLS1-PRF's P_hash does). One item is
/// one HMAC keyed anew. Errors: a failed libcrypto call.
pub fn hmacs(hash: Hash, key: &[u8], data: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
    let md = match hash {
        Hash::Sha256 => MessageDigest::sha256(),
        Hash::Sha384 => MessageDigest::sha384(),
    };
    let key_len = HmacKeyLen::try_from(key.len())?;
    let mut out = Vec::with_capacity(data.len());
    // SAFETY: the context is made, used and freed here; every pointer is
    // to a live buffer of the length passed with it (each output holds the
    // digest's size, which HMAC_Final writes at most).
    let ok = unsafe {
        let ctx = ffi::HMAC_CTX_new();
        ensure!(!ctx.is_null(), "HMAC_CTX_new failed");
        let mut ok =
            ffi::HMAC_Init_ex(ctx, key.as_ptr().cast(), key_len, md.as_ptr(), std::ptr::null_mut()) == 1;
        for (i, d) in data.iter().enumerate() {
            let mut mac = vec![0u8; md.size()];
            let mut len: std::ffi::c_uint = 0;
            ok = ok
                && (i == 0
                    || ffi::HMAC_Init_ex(ctx, std::ptr::null(), 0, std::ptr::null(), std::ptr::null_mut())
                        == 1)
                && ffi::HMAC_Update(ctx, d.as_ptr(), d.len()) == 1
                && ffi::HMAC_Final(ctx, mac.as_mut_ptr(), &mut len) == 1;
            mac.truncate(usize::try_from(len)?);
            out.push(mac);
        }
        ffi::HMAC_CTX_free(ctx);
        ok
    };
    ensure!(ok, "HMAC failed: {}", ErrorStack::get());
    Ok(out)
}
