//! Writes the committed certificate chains under `certs/`: for every
//! [`CertChain`], a root CA, an intermediate CA, a server leaf (SAN
//! `localhost`, EKU serverAuth) and a client leaf (EKU clientAuth), every key
//! of the chain's type, valid from 2026-01-01 to 2100-01-01.
//!
//! Run as `cargo run --bin generate-certs -- DIR` (a new directory for
//! chains of one's own, readable with `TLS_BENCH_CERTS_DIR=DIR`). Without
//! `DIR` it writes `certs/` in the crate root, which holds the committed
//! chains: it refuses unless `--force` is given (new keys change what is
//! measured; `git checkout -- certs` restores the committed ones).

use std::{
    fs,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Parser;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, RsaKeySize,
};
use tls_bench_harness::{
    certs::{self, CLIENT_NAME, SERVER_NAME},
    error::exit_code,
    outln,
    params::CertChain,
    parsed_or_exit,
};

fn key_for(chain: CertChain) -> Result<KeyPair> {
    let key = match chain {
        CertChain::Rsa2048 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_2048),
        CertChain::Rsa3072 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_3072),
        CertChain::Rsa4096 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_4096),
        CertChain::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256),
        CertChain::EcdsaP384 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384),
    };
    key.with_context(|| format!("generating a {chain} key"))
}

fn params(common_name: &str, sans: Vec<String>) -> Result<CertificateParams> {
    let mut p = CertificateParams::new(sans)?;
    p.distinguished_name.push(DnType::CommonName, common_name);
    p.distinguished_name.push(DnType::OrganizationName, "tls-bench");
    p.not_before = rcgen::date_time_ymd(certs::NOT_BEFORE.0, certs::NOT_BEFORE.1, certs::NOT_BEFORE.2);
    p.not_after = rcgen::date_time_ymd(certs::NOT_AFTER.0, certs::NOT_AFTER.1, certs::NOT_AFTER.2);
    Ok(p)
}

fn ca_params(common_name: &str, path_len: Option<u8>) -> Result<CertificateParams> {
    let mut p = params(common_name, Vec::new())?;
    p.is_ca = IsCa::Ca(match path_len {
        Some(n) => BasicConstraints::Constrained(n),
        None => BasicConstraints::Unconstrained,
    });
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    Ok(p)
}

fn leaf_params(name: &str, eku: ExtendedKeyUsagePurpose) -> Result<CertificateParams> {
    let mut p = params(name, vec![name.to_string()])?;
    p.is_ca = IsCa::ExplicitNoCa;
    p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    p.extended_key_usages = vec![eku];
    Ok(p)
}

/// Writes `chain`'s files under `dir`, in a directory of its own, and
/// returns that directory.
fn write_chain(dir: &Path, chain: CertChain) -> Result<PathBuf> {
    let out = dir.join(chain.dir_name());
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let root_key = key_for(chain)?;
    let root_params = ca_params(&format!("tls-bench {chain} root"), None)?;
    let root = root_params.self_signed(&root_key)?;
    let root_issuer = Issuer::new(root_params, root_key);

    let inter_key = key_for(chain)?;
    let inter_params = ca_params(&format!("tls-bench {chain} intermediate"), Some(0))?;
    let inter = inter_params.signed_by(&inter_key, &root_issuer)?;
    let inter_issuer = Issuer::new(inter_params, inter_key);

    let mut files = vec![(certs::CA_CERT, root.pem()), (certs::INTERMEDIATE_CERT, inter.pem())];
    for (name, eku, chain_file, key_file) in [
        (SERVER_NAME, ExtendedKeyUsagePurpose::ServerAuth, certs::SERVER_CHAIN, certs::SERVER_KEY),
        (CLIENT_NAME, ExtendedKeyUsagePurpose::ClientAuth, certs::CLIENT_CHAIN, certs::CLIENT_KEY),
    ] {
        let key = key_for(chain)?;
        let leaf = leaf_params(name, eku)?.signed_by(&key, &inter_issuer)?;
        files.push((chain_file, format!("{}{}", leaf.pem(), inter.pem())));
        files.push((key_file, key.serialize_pem()));
    }
    for (file, pem) in files {
        let path = out.join(file);
        fs::write(&path, pem).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(out)
}

#[derive(Parser)]
#[command(
    about = "Writes a root, an intermediate, a server and a client certificate and key for every chain"
)]
struct Args {
    /// Output directory (one subdirectory per chain). Default: the committed `certs/`.
    dir: Option<PathBuf>,
    /// Overwrite chains that already exist (the committed ones included).
    #[arg(long)]
    force: bool,
}

fn main() -> ExitCode {
    exit_code(run(parsed_or_exit!(Args::try_parse())))
}

fn run(args: Args) -> Result<()> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from(certs::CERTS_DIR));
    for chain in CertChain::ALL {
        let existing = dir.join(chain.dir_name()).join(certs::CA_CERT);
        if existing.exists() && !args.force {
            bail!(
                "{} exists: these chains would be replaced by new keys (pass --force to do so; \
                 `git checkout -- certs` restores the committed ones)",
                existing.display()
            );
        }
    }
    // Every chain is written even when stdout fails (its error comes
    // last): a directory of some chains only would be of no use.
    let mut printed = Ok(());
    for chain in CertChain::ALL {
        let out = write_chain(&dir, chain)?;
        if printed.is_ok() {
            printed = outln!("wrote {}", out.display());
        }
    }
    Ok(printed?)
}
