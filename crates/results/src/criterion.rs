//! Markdown tables of Criterion results ([`crate::criterion_json`]), one
//! per benchmark group: a row per parameter set, a column per library, each
//! TLS figure with its ratio to the row's fastest TLS library, and the
//! plaintext floor beside them; under a group's table, each library
//! measured beside its crypto floor (`TLS_BENCH_FLOORS=1`) with that floor
//! and its protocol cost, or the fraction of the floor's rate it reaches.
//! Handshakes in µs per handshake, throughput
//! in MB/s (10^6 bytes per second of application data), send loops in
//! kpps (thousands of writes per second: one datagram each in DTLS) with
//! their payload's MB/s. Each table says when its results were written; a
//! result from an earlier run than the group's last is marked `*` with its
//! date. `report` prints them from Criterion's directory, `report results`
//! from a committed copy of the figures (`report --save`).

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use crate::{compare::is_crypto_floor, criterion_json::Measurement, table::Table};
use tls_bench_harness::workload::send_loop::SEND_LOOP_WRITES;

/// Results written further apart than this belong to different runs: one
/// benchmark takes seconds (0.5 s warm-up, 2 s measurement, analysis), so a
/// run never goes this long without writing one.
pub const RUN_GAP: Duration = Duration::from_secs(30 * 60);

/// One table's rows: parameters -> library -> result.
type Rows = BTreeMap<String, BTreeMap<String, Measurement>>;

/// Every group's table of `results`, groups in name order.
pub fn tables(results: &[Measurement]) -> String {
    let mut groups: BTreeMap<&str, Rows> = BTreeMap::new();
    for m in results {
        groups
            .entry(&m.group)
            .or_default()
            .entry(m.params.clone())
            .or_default()
            .insert(m.library.clone(), m.clone());
    }
    groups.iter().map(|(group, rows)| table(group, rows)).collect()
}

/// A UTC date and minute, e.g. `2026-11-22 10:41 UTC` (times before 1970
/// read as 1970).
pub fn date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rest / 3600, rest % 3600 / 60)
}

/// The start of the group's last run: the earliest time of the newest
/// cluster of results, clusters split where no result was written for
/// [`RUN_GAP`].
fn last_run_start(rows: &Rows) -> SystemTime {
    let mut times: Vec<SystemTime> = rows.values().flat_map(|r| r.values()).map(|m| m.written).collect();
    times.sort();
    let mut start = times[0];
    for pair in times.windows(2) {
        if pair[1].duration_since(pair[0]).unwrap_or_default() > RUN_GAP {
            start = pair[1];
        }
    }
    start
}

/// One group's Markdown table, with its heading and the dates of its
/// results.
fn table(group: &str, rows: &Rows) -> String {
    let mut out = String::new();
    let libs: BTreeSet<&String> =
        rows.values().flat_map(|r| r.keys()).filter(|l| *l != "plaintext" && !is_crypto_floor(l)).collect();
    let send_loop = group.starts_with("send-loop") || group.starts_with("udp-send-loop");
    let throughput = send_loop || rows.values().flat_map(|r| r.values()).any(|r| r.bytes.is_some());
    let unit = if send_loop {
        "kpps: thousands of writes per second, one datagram each in DTLS; MB/s of payload"
    } else if throughput {
        "MB/s"
    } else {
        "µs"
    };
    let start = last_run_start(rows);
    let newest = rows.values().flat_map(|r| r.values()).map(|m| m.written).max().unwrap_or(start);
    let heading = if libs.is_empty() {
        format!("{group} (median, {unit}; no TLS library)")
    } else {
        format!("{group} (median, {unit}; ratio to the row's best TLS library)")
    };
    out.push_str(&format!("\n### {heading}\n\nResults written {} to {}", date(start), date(newest)));
    let older: Vec<&Measurement> =
        rows.values().flat_map(|r| r.values()).filter(|m| m.written < start).collect();
    if !older.is_empty() {
        out.push_str(&format!("; `*`: {} from earlier runs, dated in the cell", older.len()));
    }
    out.push_str(".\n\n");
    let mut header: Vec<String> = vec!["parameters".into()];
    header.extend(libs.iter().map(|l| l.to_string()));
    header.push("plaintext floor".into());
    let mut table = Table::new(&header);
    for (params, cells) in rows {
        // Higher is better for MB/s and kpps, lower for µs.
        let value = |r: &Measurement| match r.bytes {
            _ if send_loop => SEND_LOOP_WRITES as f64 / r.median_ns * 1e6, // writes/ns * 1e6 = kpps
            Some(b) => b as f64 / r.median_ns * 1e3,                       // bytes/ns * 1e3 = MB/s
            None => r.median_ns / 1e3,
        };
        // The send loop's payload, the id's last parameter (`1024B`).
        let payload: f64 = params
            .rsplit(',')
            .next()
            .and_then(|p| p.strip_suffix('B'))
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        let shown = |v: f64| {
            if send_loop { format!("{v:.0} kpps, {:.0} MB/s", v * payload / 1e3) } else { format!("{v:.1}") }
        };
        let mark = |r: &Measurement| {
            if r.written < start { format!(" *{}", date(r.written)) } else { String::new() }
        };
        let tls: Vec<f64> = libs.iter().filter_map(|l| cells.get(*l)).map(value).collect();
        let best = if throughput {
            tls.iter().cloned().reduce(f64::max)
        } else {
            tls.iter().cloned().reduce(f64::min)
        };
        let mut row = vec![params.clone()];
        for l in &libs {
            row.push(match (cells.get(*l), best) {
                (Some(r), Some(best)) => {
                    let v = value(r);
                    let ratio = if throughput { best / v } else { v / best };
                    format!("{} ({ratio:.2}x){}", shown(v), mark(r))
                }
                _ => "skipped".to_string(),
            });
        }
        row.push(match (cells.get("plaintext"), best) {
            (Some(r), Some(best)) if throughput => {
                let v = value(r);
                let text = if send_loop { shown(v) } else { format!("{v:.0}") };
                format!("{text} ({:.1}x the best TLS){}", v / best, mark(r))
            }
            (Some(r), Some(best)) => {
                format!("{:.2} ({:.2}% of the best TLS){}", value(r), value(r) / best * 100.0, mark(r))
            }
            (Some(r), None) => format!("{:.2}{}", value(r), mark(r)),
            (None, _) => "-".to_string(),
        });
        table.row(row);
    }
    out.push_str(&table.markdown());
    if !send_loop {
        out.push_str(&floor_table(group, rows, throughput, start));
    }
    out
}

/// The `####` table under a group's table of each library measured beside
/// its crypto floor ([`Measurement::crypto_floor`], `TLS_BENCH_FLOORS=1`):
/// handshakes in µs with the protocol cost (the library's median less its
/// floor's) and its share; transfers in MB/s with the fraction of the
/// floor's rate the library reaches. Empty when no library of the group
/// has its floor's result. Results older than the group's last run
/// (`start`) are marked `*` as in the main table.
fn floor_table(group: &str, rows: &Rows, throughput: bool, start: SystemTime) -> String {
    let mut lines = Vec::new();
    for (params, cells) in rows {
        for (library, m) in cells {
            if let Some(floor) = m.crypto_floor.as_ref().and_then(|f| cells.get(f)) {
                lines.push((params, library, m, floor));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mark =
        |r: &Measurement| if r.written < start { format!(" *{}", date(r.written)) } else { String::new() };
    let (mut out, mut table) = if throughput {
        (
            format!(
                "\n#### {group}: the crypto floor (median MB/s; the same records sealed and opened by the \
                 library's AEAD implementation over the same transport)\n\n"
            ),
            Table::new(&[
                "parameters",
                "library",
                "crypto floor",
                "MB/s",
                "floor MB/s",
                "fraction of the floor",
            ]),
        )
    } else {
        (
            format!(
                "\n#### {group}: crypto floor and protocol cost (median µs; the floor runs the operation \
                 table's primitives through the library's crypto implementation; protocol = the library's \
                 median less its floor's)\n\n"
            ),
            Table::new(&["parameters", "library", "crypto floor", "µs", "floor µs", "protocol µs (share)"]),
        )
    };
    let mut above = Vec::new();
    for (params, library, m, floor) in lines {
        if floor.median_ns > m.median_ns {
            above.push(format!("{library} with {} ({params})", floor.library));
        }
        let cells = if throughput {
            let mb = |r: &Measurement| {
                r.bytes.map_or("?".into(), |b| format!("{:.0}", b as f64 / r.median_ns * 1e3))
            };
            [mb(m), mb(floor), format!("{:.2}", floor.median_ns / m.median_ns)]
        } else {
            let protocol = m.median_ns - floor.median_ns;
            [
                format!("{:.1}", m.median_ns / 1e3),
                format!("{:.1}", floor.median_ns / 1e3),
                format!("{:.1} ({:.0}%)", protocol / 1e3, protocol / m.median_ns * 100.0),
            ]
        };
        let [mb_or_us, floor_figure, share] = cells;
        table.row([
            params.to_string(),
            format!("{library}{}", mark(m)),
            format!("{}{}", floor.library, mark(floor)),
            mb_or_us,
            floor_figure,
            share,
        ]);
    }
    out.push_str(&table.markdown());
    out.push_str(
        "\nOne sequential Criterion run: the floor and its library are measured apart, minutes apart on a \
         shared machine; `compare` takes the difference within each round, with intervals.\n",
    );
    if !above.is_empty() {
        out.push_str(&format!(
            "\n- a floor measured slower than its library (measured apart, so the machine's load can do this; \
             where `crypto-floor count` finds the floor's instructions below the library's it did, otherwise \
             the floor does other work than the library: a defect of the floor): {}\n",
            above.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_utc_minutes() {
        let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(date(at(0)), "1970-01-01 00:00 UTC");
        // 2026-11-23 08:03:59 UTC; 2024-02-29 (a leap day) 23:59.
        assert_eq!(date(at(1_795_421_039)), "2026-11-23 08:03 UTC");
        assert_eq!(date(at(1_709_251_140)), "2024-02-29 23:59 UTC");
        assert_eq!(date(at(951_868_800)), "2000-03-01 00:00 UTC");
    }

    fn measurement(
        group: &str,
        library: &str,
        median_ns: f64,
        bytes: Option<u64>,
        floor: Option<&str>,
    ) -> Measurement {
        Measurement {
            group: group.into(),
            params: "p".into(),
            library: library.into(),
            median_ns,
            lower_ns: median_ns,
            upper_ns: median_ns,
            mean_ns: None,
            bytes,
            elements: None,
            written: UNIX_EPOCH + Duration::from_secs(1_795_421_039),
            crypto_floor: floor.map(String::from),
        }
    }

    #[test]
    fn a_crypto_floor_is_no_column_and_splits_its_library_under_the_table() {
        let handshake = [
            measurement("handshake", "a-1", 300_000.0, None, Some("crypto-floor-x-1")),
            measurement("handshake", "b-1", 600_000.0, None, Some("crypto-floor-y-1")),
            measurement("handshake", "crypto-floor-x-1", 240_000.0, None, None),
            measurement("handshake", "plaintext", 3_000.0, None, None),
        ];
        let t = tables(&handshake);
        assert!(t.contains("| parameters | a-1 | b-1 | plaintext floor |"), "{t}");
        assert!(t.contains("| p | 300.0 (1.00x) | 600.0 (2.00x) | 3.00 (1.00% of the best TLS) |"), "{t}");
        assert!(t.contains("#### handshake: crypto floor and protocol cost"), "{t}");
        assert!(t.contains("| p | a-1 | crypto-floor-x-1 | 300.0 | 240.0 | 60.0 (20%) |"), "{t}");
        assert!(!t.contains("| p | b-1 |"), "b's floor did not run: no line\n{t}");
        assert!(!t.contains("floor measured slower"), "{t}");

        // 1 MB per iteration: 1 ms is 1000 MB/s.
        let throughput = [
            measurement("throughput", "a-1", 1_000_000.0, Some(1_000_000), Some("crypto-floor-x-1")),
            measurement("throughput", "crypto-floor-x-1", 800_000.0, Some(1_000_000), None),
            measurement("throughput", "b-1", 500_000.0, Some(1_000_000), Some("crypto-floor-y-1")),
            measurement("throughput", "crypto-floor-y-1", 600_000.0, Some(1_000_000), None),
        ];
        let t = tables(&throughput);
        assert!(t.contains("| p | a-1 | crypto-floor-x-1 | 1000 | 1250 | 0.80 |"), "{t}");
        assert!(t.contains("| p | b-1 | crypto-floor-y-1 | 2000 | 1667 | 1.20 |"), "{t}");
        assert!(
            t.contains("a floor measured slower than its library")
                && t.contains("b-1 with crypto-floor-y-1 (p)"),
            "{t}"
        );
        assert!(!tables(&handshake[1..2]).contains("####"), "no floor, no floor table");
    }
}
