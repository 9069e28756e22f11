//! A TLS 1.3 record sealed out of place through `EVP_AEAD_CTX`, as
//! BoringSSL's and AWS-LC's libssl seal one (`tls_seal_scatter_record`,
//! `SSLAEADContext::SealScatter`): `EVP_AEAD_CTX_seal_scatter` from the
//! caller's fragment into the record buffer, the inner content type as
//! `extra_in`, so that its ciphertext and the tag follow the fragment's.
//! One C interface in BoringSSL (the `boring` crate's boring-sys) and in
//! AWS-LC under the `openssl` crate (aws-lc-sys through openssl-sys), both
//! [`crate::libs::openssl::config::ffi`]; shared by their floor backends
//! ([`super::boringssl`], [`super::ossl`]'s AWS-LC module).

use anyhow::{Result, ensure};

use crate::libs::openssl::config::{ffi, ossl::error::ErrorStack};

/// An AEAD tag, in bytes: the default of every AEAD the floor keys.
const TAG_LEN: usize = 16;

/// Leaves in `out` (cleared first) the ciphertext of `fragment ||
/// content_type` and the 16-byte tag, sealed under `ctx` (a keyed
/// `EVP_AEAD_CTX` that outlives the call) with `nonce` and `aad`. Errors:
/// the seal fails, or writes another length than the type and the tag
/// after the fragment. Every AEAD the floors key takes `extra_in`
/// (BoringSSL's `EVP_AEAD_CTX_seal_scatter` is `EVP_AEAD_CTX_sealv` of two
/// iovecs; AWS-LC sets `seal_scatter_supports_extra_in` for
/// `EVP_aead_aes_{128,256}_gcm` and `EVP_aead_chacha20_poly1305`).
///
/// # Safety
///
/// `ctx` points to a live, keyed `EVP_AEAD_CTX` for the whole call.
pub unsafe fn seal_from(
    ctx: *const ffi::EVP_AEAD_CTX,
    nonce: [u8; 12],
    aad: &[u8],
    fragment: &[u8],
    content_type: u8,
    out: &mut Vec<u8>,
) -> Result<()> {
    let len = fragment.len();
    let suffix_len = 1 + TAG_LEN;
    // Uninitialised, as the libraries' write buffers are: a resize would
    // zero it first (a memset of the record's length).
    out.clear();
    out.reserve(len + suffix_len);
    let (body, suffix) = out.spare_capacity_mut()[..len + suffix_len].split_at_mut(len);
    let mut written = 0;
    // SAFETY: `ctx` is a live keyed context (the caller's contract); `body` is
    // writable for `len` bytes, the ciphertext of `fragment` (`len` bytes,
    // passed with its length); `suffix` is writable for `suffix_len`
    // bytes, passed as the most to write there (the type's ciphertext and
    // the tag); the output buffers are `out`'s spare capacity, which
    // `fragment` (a shared borrow) cannot alias; the nonce, the type and
    // the AAD are passed with their lengths.
    let ok = unsafe {
        ffi::EVP_AEAD_CTX_seal_scatter(
            ctx,
            body.as_mut_ptr().cast(),
            suffix.as_mut_ptr().cast(),
            &mut written,
            suffix_len,
            nonce.as_ptr(),
            nonce.len(),
            fragment.as_ptr(),
            len,
            &content_type,
            1,
            aad.as_ptr(),
            aad.len(),
        )
    } == 1;
    ensure!(ok, "sealing failed: {}", ErrorStack::get());
    ensure!(written == suffix_len, "sealing wrote {written} bytes after the fragment, not {suffix_len}");
    // SAFETY: the call succeeded, so it wrote all `len` bytes of `body` and
    // `written` (== `suffix_len`) bytes of `suffix`: the first
    // `len + suffix_len` bytes of the capacity are initialised.
    unsafe { out.set_len(len + suffix_len) };
    Ok(())
}
