//! The committed chains: each parses, verifies from leaf through the
//! intermediate to its root (for server and client use), and has at least
//! 50 years of validity left.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime, pem::PemObject};
use tls_bench_harness::{certs, params::CertChain};
use webpki::{EndEntityCert, KeyUsage, anchor_from_trusted_cert};
use x509_parser::prelude::*;

const FIFTY_YEARS: Duration = Duration::from_secs(50 * 365 * 24 * 3600 + 13 * 24 * 3600);

fn ders(pem: &[u8]) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem).collect::<Result<_, _>>().expect("PEM chain")
}

#[test]
fn every_chain_verifies_to_its_root_for_fifty_years() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let in_fifty_years = UnixTime::since_unix_epoch(now + FIFTY_YEARS);
    for chain in CertChain::ALL {
        let files = certs::load(chain).unwrap();
        let root = ders(&files.ca_cert).remove(0);
        let anchors = [anchor_from_trusted_cert(&root).unwrap()];
        for (pem, key, usage) in [
            (&files.server_chain, &files.server_key, KeyUsage::server_auth()),
            (&files.client_chain, &files.client_key, KeyUsage::client_auth()),
        ] {
            let certs = ders(pem);
            assert_eq!(certs.len(), 2, "{chain}: leaf + intermediate");
            let leaf = EndEntityCert::try_from(&certs[0]).unwrap();
            for at in [UnixTime::now(), in_fifty_years] {
                leaf.verify_for_usage(
                    webpki::ALL_VERIFICATION_ALGS,
                    &anchors,
                    &certs[1..],
                    at,
                    usage,
                    None,
                    None,
                )
                .unwrap_or_else(|e| panic!("{chain}: {e:?}"));
            }
            PrivateKeyDer::from_pem_slice(key).unwrap_or_else(|e| panic!("{chain} key: {e}"));
        }
        let server_chain = ders(&files.server_chain);
        let server = EndEntityCert::try_from(&server_chain[0]).unwrap();
        server.verify_is_valid_for_subject_name(&ServerName::try_from(certs::SERVER_NAME).unwrap()).unwrap();
        // Every certificate, the root included, is valid for 50 more years.
        for der in
            ders(&files.ca_cert).iter().chain(&ders(&files.server_chain)).chain(&ders(&files.client_chain))
        {
            let (_, cert) = X509Certificate::from_der(der).unwrap();
            let left = cert.validity().not_after.timestamp() - now.as_secs() as i64;
            assert!(left >= FIFTY_YEARS.as_secs() as i64, "{chain}: {} expires too soon", cert.subject());
        }
    }
}

#[test]
fn key_types_and_sizes_match_the_chain_names() {
    for chain in CertChain::ALL {
        let files = certs::load(chain).unwrap();
        for der in ders(&files.ca_cert).iter().chain(&ders(&files.server_chain)) {
            let (_, cert) = X509Certificate::from_der(der).unwrap();
            let spki = cert.public_key();
            let bits = spki.parsed().unwrap().key_size();
            let expected = match chain {
                CertChain::Rsa2048 => 2048,
                CertChain::Rsa3072 => 3072,
                CertChain::Rsa4096 => 4096,
                CertChain::EcdsaP256 => 256,
                CertChain::EcdsaP384 => 384,
            };
            assert_eq!(bits, expected, "{chain}: {}", cert.subject());
        }
    }
}

/// The certificate generator (a tool) will not overwrite the committed chains.
#[cfg(feature = "tools")]
#[test]
fn generate_certs_refuses_to_replace_the_committed_chains() {
    let key =
        || std::fs::read(std::path::Path::new(certs::CERTS_DIR).join("ecdsa-p256").join(certs::SERVER_KEY));
    let before = key().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_generate-certs")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("--force") && stderr.contains("git checkout -- certs"), "{stderr}");
    assert_eq!(before, key().unwrap());
}

/// A chain whose server leaf expired is named with its file, its
/// certificate and its dates when it is read, before any library fails
/// its handshake in its own words (`certificate verify failed`).
#[cfg(feature = "tools")]
#[test]
fn an_expired_certificate_is_named_with_its_file_and_dates() {
    let dir = std::env::temp_dir().join(format!("tls-bench-expired-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let good = certs::dir(CertChain::EcdsaP256);
    for name in [certs::CA_CERT, certs::SERVER_KEY, certs::CLIENT_CHAIN, certs::CLIENT_KEY] {
        std::fs::copy(good.join(name), dir.join(name)).unwrap();
    }
    let expired = |name: &str| {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut p = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        p.self_signed(&key).unwrap().pem()
    };
    std::fs::write(dir.join(certs::SERVER_CHAIN), expired("localhost") + &expired("intermediate")).unwrap();
    let e = format!("{:#}", certs::read(&dir).unwrap_err());
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains(certs::SERVER_CHAIN) && e.contains("certificate 1 ("), "{e}");
    assert!(e.contains("expired: valid from") && e.contains("2021"), "{e}");
    assert!(e.contains("generate-certs"), "{e}");
}
