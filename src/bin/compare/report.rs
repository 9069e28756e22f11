//! `compare`'s CSV of every (row, library) figure. The Markdown printed to
//! stdout is [`tls_bench_results::compare::markdown`].

use std::path::Path;

use anyhow::{Context, Result};

use crate::model::RowSummary;

/// Writes one CSV line per (row, library, the floor included) to `path`
/// (creating its directory), after a header: `group, parameters, library,
/// variant, rounds, median_ns, first_median_ns, second_median_ns, mb_per_s,
/// ratio, ratio_low, ratio_high, clear_difference, best, settings, skip`.
/// Times are ns per iteration, `mb_per_s` 10^6 B/s (throughput only), ratios
/// are time ratios to the row's best TLS library (empty for the floor). A
/// library that skips a row is a line with empty figures and its reason in
/// `skip`; one that failed during the run, the same with `FAILED: <why>`.
pub fn write_csv(path: &Path, rows: &[RowSummary]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut w = csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
    let context = || format!("writing {}", path.display());
    w.write_record([
        "group",
        "parameters",
        "library",
        "variant",
        "rounds",
        "median_ns",
        "first_median_ns",
        "second_median_ns",
        "mb_per_s",
        "ratio",
        "ratio_low",
        "ratio_high",
        "clear_difference",
        "best",
        "settings",
        "skip",
    ])
    .with_context(context)?;
    for r in rows {
        for l in r.libraries.iter().chain(&r.floor).chain(&r.crypto_floors) {
            let opt = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_default();
            w.write_record([
                r.group.clone(),
                r.parameters.clone(),
                l.library.clone(),
                l.variant.clone(),
                l.rounds.to_string(),
                l.median_ns.to_string(),
                l.first_median_ns.to_string(),
                l.second_median_ns.to_string(),
                opt(l.mb_per_s),
                opt(l.ratio.map(|i| i.estimate)),
                opt(l.ratio.map(|i| i.low)),
                opt(l.ratio.map(|i| i.high)),
                l.clear_difference().to_string(),
                l.best.to_string(),
                l.settings.clone().unwrap_or_default(),
                String::new(),
            ])
            .with_context(context)?;
        }
        // A library that failed during the run: its reason in the same
        // column, marked FAILED.
        let failed = r.failed.iter().map(|(l, why)| (l.clone(), format!("FAILED: {why}")));
        for (library, reason) in r.skipped.iter().cloned().chain(failed) {
            let mut record = vec![String::new(); 16];
            record[0] = r.group.clone();
            record[1] = r.parameters.clone();
            record[2] = library;
            record[15] = reason;
            w.write_record(&record).with_context(context)?;
        }
    }
    w.flush().with_context(context)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use tls_bench_results::compare::{FLOOR, Interval, Intervals, LibrarySummary, METHOD, markdown};

    use super::*;
    use crate::env::{EnvProbe, LibraryInfo};

    fn lib(
        name: &str,
        median_ns: f64,
        ratio: (f64, f64, f64),
        best: bool,
        mb: Option<f64>,
    ) -> LibrarySummary {
        LibrarySummary {
            library: name.into(),
            variant: "default".into(),
            settings: None,
            rounds: 10,
            median_ns,
            first_median_ns: median_ns * 0.4,
            second_median_ns: median_ns * 0.6,
            mb_per_s: mb,
            ratio: Some(Interval { estimate: ratio.0, low: ratio.1, high: ratio.2 }),
            best,
            protocol: None,
        }
    }

    /// A handshake row (skip, floor, an interval including 1.0) and a
    /// throughput row (floor, settings, a clear difference).
    pub(crate) fn fixture() -> Vec<RowSummary> {
        let mut floor = lib(FLOOR, 1_190.0, (1.0, 1.0, 1.0), false, None);
        floor.ratio = None;
        let handshake = RowSummary {
            row: "handshake/server-auth,TLSv1.3,x25519".into(),
            group: "handshake".into(),
            parameters: "server-auth,TLSv1.3,x25519".into(),
            libraries: vec![
                lib("alpha-1.0", 404_800.0, (1.0, 1.0, 1.0), true, None),
                lib("beta-2.0", 412_300.0, (1.02, 0.99, 1.05), false, None),
            ],
            floor: Some(floor),
            crypto_floors: vec![],
            skipped: vec![("gamma-3.0".into(), "no x25519".into())],
            failed: vec![],
        };
        // 65536 B in 6225 ns: 10528 MB/s; alpha 65536 B in 81 µs: 809.1 MB/s.
        let mut floor = lib(FLOOR, 6_225.0, (1.0, 1.0, 1.0), false, Some(65536.0 / 6_225.0 * 1e3));
        floor.ratio = None;
        let mut gamma = lib("gamma-3.0", 81_000.0 * 1.5, (1.5, 1.45, 1.56), false, Some(65536.0 / 121.5));
        gamma.settings = Some("policy default_tls13".into());
        let throughput = RowSummary {
            row: "throughput/server-auth,TLSv1.3,x25519,16384B".into(),
            group: "throughput".into(),
            parameters: "server-auth,TLSv1.3,x25519,16384B".into(),
            libraries: vec![lib("alpha-1.0", 81_000.0, (1.0, 1.0, 1.0), true, Some(65536.0 / 81.0)), gamma],
            floor: Some(floor),
            crypto_floors: vec![],
            skipped: vec![],
            failed: vec![],
        };
        vec![throughput, handshake]
    }

    #[test]
    fn markdown_cells() {
        let env = EnvProbe::start()
            .finish(vec![LibraryInfo { library: "a".into(), variant: "v".into() }], "c".into());
        let md = markdown(&fixture(), &env, 10, Intervals::Epochs);
        assert!(md.contains("- rounds: 10\n") && md.contains(METHOD), "{md}");
        // Handshake first, though its row comes second.
        let hs =
            md.find("### handshake (median µs per handshake; ratio to the row's best TLS library, 95% CI)");
        let tp =
            md.find("### throughput (median MB/s, 10^6 B/s; ratio to the row's best TLS library, 95% CI)");
        assert!(hs.unwrap() < tp.unwrap(), "{md}");
        for line in [
            "| parameters | alpha-1.0 | beta-2.0 | gamma-3.0 | plaintext floor |\n",
            "| server-auth,TLSv1.3,x25519 | 404.8 (best) | 412.3 (1.02x, 0.99–1.05) ≈ | skipped \
             | 1.19 (0.29% of the best) |\n",
            "- skipped: gamma-3.0 server-auth,TLSv1.3,x25519: no x25519\n",
            "#### handshake per side (median µs: client / server)\n",
            "| server-auth,TLSv1.3,x25519 | 161.9/242.9 | 164.9/247.4 | skipped | 0.5/0.7 |\n",
            "| parameters | alpha-1.0 | gamma-3.0 | plaintext floor |\n",
            "| server-auth,TLSv1.3,x25519,16384B | 809.1 (best) | 539.4 (1.50x, 1.45–1.56) \
             | 10528 (13.0x the best) |\n",
            "- gamma-3.0: policy default_tls13 (all rows)\n",
            "#### throughput per side (median µs per 64 KiB: sender / receiver)\n",
            "| server-auth,TLSv1.3,x25519,16384B | 32.4/48.6 | 48.6/72.9 | 2.5/3.7 |\n",
        ] {
            assert!(md.contains(line), "missing {line:?} in\n{md}");
        }
    }

    #[test]
    fn csv_lines() {
        let dir = std::env::temp_dir().join(format!("tls-bench-compare-csv-{}", std::process::id()));
        let path = dir.join("sub/results.csv");
        write_csv(&path, &fixture()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 + 4, "{text}");
        assert!(
            lines[0].starts_with("group,parameters,library,variant,rounds,median_ns,")
                && lines[0].ends_with(",skip")
        );
        assert!(text.contains("\"server-auth,TLSv1.3,x25519\",gamma-3.0,,,,,,,,,,,,,no x25519\n"), "{text}");
        assert!(
            text.contains(",beta-2.0,default,10,412300,164920,247380,,1.02,0.99,1.05,false,false,,\n"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
