//! What `compare` concludes from the slices it timed: each row's summary
//! (medians, ratios to the row's best with intervals). The types, serialised
//! as is into `target/compare/results.json`, are
//! [`tls_bench_results::compare`]'s, which also renders them.

use std::collections::BTreeMap;

use tls_bench_results::compare::Interval;
pub use tls_bench_results::compare::{
    CaseInfo, CaseResult, FLOOR, LibrarySummary, ProtocolCost, RowSummary, Slice, is_crypto_floor,
};

use tls_bench_results::{
    reruns::paired,
    stats::{epoch_ratio, median},
};

/// Summarises `results` row by row, in the order rows first appear.
/// Rounds are paired by [`Slice::round`]: a ratio uses only the rounds both
/// libraries have.
pub fn summarise(results: &[CaseResult]) -> Vec<RowSummary> {
    let mut order: Vec<&str> = Vec::new();
    let mut rows: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
    for r in results {
        if !rows.contains_key(r.info.row.as_str()) {
            order.push(&r.info.row);
        }
        rows.entry(&r.info.row).or_default().push(r);
    }
    order.into_iter().map(|row| summarise_row(&rows[row])).collect()
}

fn summarise_row(cases: &[&CaseResult]) -> RowSummary {
    let first = &cases[0].info;
    let mut libraries = Vec::new();
    let mut floor = None;
    let mut crypto_floors = Vec::new();
    let mut skipped = Vec::new();
    let mut failed = Vec::new();
    for c in cases {
        if let Some(why) = &c.info.skip {
            skipped.push((c.info.library.clone(), why.clone()));
            continue;
        }
        if let Some(why) = &c.failure {
            failed.push((c.info.library.clone(), why.clone()));
            continue;
        }
        let Some(summary) = library_summary(c) else { continue };
        if c.info.library == FLOOR {
            floor = Some(summary)
        } else if is_crypto_floor(&c.info.library) {
            crypto_floors.push(summary)
        } else {
            libraries.push(summary)
        }
    }
    libraries.sort_by(|a, b| a.library.cmp(&b.library));
    // Another runtime's plaintext server is a floor, not a TLS library.
    let plaintext = |library: &str| cases.iter().any(|c| c.info.library == library && c.info.plaintext);
    let best = libraries
        .iter()
        .filter(|l| !plaintext(&l.library))
        .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
        .map(|b| b.library.clone());
    if let Some(best) = best {
        let slices = |lib: &str| -> &[Slice] {
            let c = cases.iter().find(|c| c.info.library == lib).expect("a summarised library has a case");
            &c.slices
        };
        let best_slices = slices(&best);
        for l in &mut libraries {
            l.best = l.library == best;
            l.ratio = if l.best {
                Some(Interval { estimate: 1.0, low: 1.0, high: 1.0 })
            } else {
                epoch_ratio(&paired(slices(&l.library), best_slices, |s| s.both_ns))
            };
        }
    }
    for l in &mut libraries {
        l.protocol = protocol_cost(cases, &l.library);
    }
    crypto_floors.sort_by(|a, b| a.library.cmp(&b.library));
    RowSummary {
        row: first.row.clone(),
        group: first.group.clone(),
        parameters: first.parameters.clone(),
        libraries,
        floor,
        crypto_floors,
        skipped,
        failed,
    }
}

/// `library`'s split against its crypto floor, when the floor ran the
/// row: the floor's medians and the medians of the per-round differences
/// (rounds both have).
fn protocol_cost(cases: &[&CaseResult], library: &str) -> Option<ProtocolCost> {
    let lib = cases.iter().find(|c| c.info.library == library)?;
    let name = lib.info.crypto_floor.as_deref()?;
    let floor = cases.iter().find(|c| c.info.library == name && c.info.skip.is_none())?;
    let rounds: BTreeMap<u32, &Slice> = floor.slices.iter().map(|s| (s.round, s)).collect();
    let diff = |f: fn(&Slice) -> f64| {
        let d: Vec<f64> =
            lib.slices.iter().filter_map(|s| rounds.get(&s.round).map(|fs| f(s) - f(fs))).collect();
        median(&d)
    };
    let of_floor = |f: fn(&Slice) -> f64| median(&floor.slices.iter().map(f).collect::<Vec<_>>());
    Some(ProtocolCost {
        floor: name.to_string(),
        floor_ns: of_floor(|s| s.both_ns)?,
        floor_first_ns: of_floor(|s| s.first_ns)?,
        floor_second_ns: of_floor(|s| s.second_ns)?,
        protocol_ns: diff(|s| s.both_ns)?,
        protocol_first_ns: diff(|s| s.first_ns)?,
        protocol_second_ns: diff(|s| s.second_ns)?,
    })
}

fn library_summary(c: &CaseResult) -> Option<LibrarySummary> {
    let col = |f: fn(&Slice) -> f64| median(&c.slices.iter().map(f).collect::<Vec<_>>());
    let median_ns = col(|s| s.both_ns)?;
    Some(LibrarySummary {
        library: c.info.library.clone(),
        variant: c.info.variant.clone(),
        settings: c.info.settings.clone(),
        rounds: c.slices.len(),
        median_ns,
        first_median_ns: col(|s| s.first_ns)?,
        second_median_ns: col(|s| s.second_ns)?,
        // bytes per ns * 1e3 = MB/s (10^6 B/s)
        mb_per_s: c.info.bytes_per_iteration.map(|b| b as f64 / median_ns * 1e3),
        ratio: None,
        best: false,
        protocol: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(library: &str, times: &[f64]) -> CaseResult {
        CaseResult {
            failure: None,
            info: CaseInfo {
                id: format!("handshake/p/{library}"),
                row: "handshake/p".into(),
                group: "handshake".into(),
                parameters: "p".into(),
                library: library.into(),
                variant: "default".into(),
                bytes_per_iteration: None,
                settings: None,
                skip: None,
                crypto_floor: None,
                plaintext: false,
            },
            slices: times
                .iter()
                .enumerate()
                .map(|(i, &t)| Slice {
                    round: i as u32,
                    epoch: i as u32 / 2,
                    iters: 1,
                    both_ns: t,
                    first_ns: t / 2.0,
                    second_ns: t / 2.0,
                })
                .collect(),
        }
    }

    #[test]
    fn best_is_the_lowest_median_and_ratios_are_paired() {
        let speed = [1.0, 2.0, 1.0, 1.5, 1.0, 2.0, 1.1, 1.0, 1.2, 1.0];
        let a: Vec<f64> = speed.iter().map(|s| 100.0 * s).collect();
        let b: Vec<f64> = speed.iter().map(|s| 150.0 * s).collect();
        let floor: Vec<f64> = speed.iter().map(|s| 1.0 * s).collect();
        let rows = summarise(&[case("b-1", &b), case(FLOOR, &floor), case("a-1", &a)]);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.best().unwrap().library, "a-1");
        let lb = r.libraries.iter().find(|l| l.library == "b-1").unwrap();
        let ratio = lb.ratio.unwrap();
        assert!((ratio.estimate - 1.5).abs() < 1e-9 && ratio.low > 1.49 && ratio.high < 1.51);
        assert!(lb.clear_difference());
        assert!(r.floor.as_ref().is_some_and(|f| f.ratio.is_none() && !f.best));
    }

    #[test]
    fn a_crypto_floor_stands_apart_and_splits_its_library_by_round() {
        // The machine slows down in some rounds; the floor's share of the
        // library's time does not change, and the split is per round.
        let speed = [1.0, 2.0, 1.0, 1.5, 1.0, 2.0, 1.1, 1.0, 1.2, 1.0];
        let lib: Vec<f64> = speed.iter().map(|s| 300.0 * s).collect();
        let floor: Vec<f64> = speed.iter().map(|s| 200.0 * s).collect();
        let other: Vec<f64> = speed.iter().map(|s| 600.0 * s).collect();
        let mut with_floor = case("a-1", &lib);
        with_floor.info.crypto_floor = Some("crypto-floor-x-1".into());
        let rows = summarise(&[with_floor, case("crypto-floor-x-1", &floor), case("b-1", &other)]);
        let r = &rows[0];
        assert_eq!(r.libraries.len(), 2, "the floor is no library of the row");
        assert_eq!(r.crypto_floors.len(), 1);
        assert_eq!(r.best().unwrap().library, "a-1");
        let p = r.libraries[0].protocol.as_ref().unwrap();
        assert_eq!(p.floor, "crypto-floor-x-1");
        assert!((p.floor_ns - 210.0).abs() < 1e-9, "{p:?}");
        // Per-round differences 100 x speed: their median is 100 x 1.05.
        assert!((p.protocol_ns - 105.0).abs() < 1e-9, "{p:?}");
        assert!((p.protocol_first_ns - 52.5).abs() < 1e-9, "{p:?}");
        assert!(r.libraries[1].protocol.is_none());
    }
}
