//! `compare`'s reports: the Markdown printed to stdout (one table per group,
//! figures with their ratio to the row's best library) and the CSV of every
//! (row, library) figure.

use std::{collections::BTreeSet, path::Path};

use anyhow::{Context, Result};

use crate::{
    env::Environment,
    model::{FLOOR, LibrarySummary, RowSummary},
};

/// The method line of the report header.
const METHOD: &str = "Method: interleaved rounds (every library of every row once per round, in a fresh random \
                      order); a cell's ratio is the median of the per-round paired ratios to the row's best \
                      library with a 95% percentile-bootstrap interval (10,000 resamples); ≈ marks an interval \
                      that includes 1.0.";

/// Bytes of the unit the throughput per-side table is in (64 KiB).
const SIDE_BLOCK_BYTES: f64 = 65536.0;

/// The whole Markdown report: a header (`rounds`, the environment bullets,
/// the method line), then per group (`handshake`, then `throughput`, then
/// any other group in first-seen order) one table of figures and ratios
/// with the skip and settings notes under it, and a smaller per-side table.
///
/// Figures: handshake in µs per handshake (median), throughput in MB/s
/// (10^6 B/s) at the median time; ratios are time ratios to the row's best
/// TLS library (>= 1 is slower) with their 95% interval.
pub fn markdown(rows: &[RowSummary], env: &Environment, rounds: usize) -> String {
    let mut out = String::from("## tls-bench compare\n\n");
    out.push_str(&format!("- rounds: {rounds}\n"));
    out.push_str(&env.markdown());
    out.push_str(&format!("\n{METHOD}\n"));
    for group in groups(rows) {
        let in_group: Vec<&RowSummary> = rows.iter().filter(|r| r.group == group).collect();
        out.push('\n');
        out.push_str(&group_markdown(&group, &in_group));
    }
    out
}

/// The groups of `rows`: `handshake`, `throughput`, then the others in
/// first-seen order.
fn groups(rows: &[RowSummary]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for r in rows {
        if !groups.contains(&r.group) {
            groups.push(r.group.clone());
        }
    }
    groups.sort_by_key(|g| match g.as_str() {
        "handshake" => 0,
        "throughput" => 1,
        _ => 2,
    });
    groups
}

/// Whether figures of `group` are throughputs (MB/s) rather than times (µs):
/// the throughput and the send loop.
fn is_throughput(group: &str) -> bool {
    group == "throughput" || group == "send-loop"
}

/// The TLS libraries of `rows`, run or skipped, by name.
fn tls_libraries(rows: &[&RowSummary]) -> Vec<String> {
    let names: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| {
            r.libraries.iter().map(|l| l.library.as_str()).chain(r.skipped.iter().map(|s| s.0.as_str()))
        })
        .filter(|l| *l != FLOOR)
        .collect();
    names.into_iter().map(str::to_string).collect()
}

/// `text` made safe inside a Markdown table cell.
fn cell_text(text: &str) -> String {
    text.replace('|', "\\|")
}

/// One table line from its cells.
fn table_line(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// A cell of a library in a row: its figure and ratio, `skipped`, or empty.
fn library_cell(row: &RowSummary, library: &str, throughput: bool) -> String {
    if let Some(l) = row.libraries.iter().find(|l| l.library == library) {
        return figure_cell(l, throughput);
    }
    if row.skipped.iter().any(|(lib, _)| lib == library) { "skipped".to_string() } else { String::new() }
}

/// `412.3 (1.23x, 1.20–1.26)`, `404.8 (best)`, with ` ≈` when the interval
/// includes 1.0.
fn figure_cell(l: &LibrarySummary, throughput: bool) -> String {
    let figure = if throughput {
        l.mb_per_s.map_or_else(|| "?".to_string(), |m| format!("{m:.1}"))
    } else {
        format!("{:.1}", l.median_ns / 1e3)
    };
    if l.best {
        return format!("{figure} (best)");
    }
    match l.ratio {
        Some(r) => {
            let close = if r.contains(1.0) { " ≈" } else { "" };
            format!("{figure} ({:.2}x, {:.2}–{:.2}){close}", r.estimate, r.low, r.high)
        }
        None => format!("{figure} (no ratio)"),
    }
}

/// The floor's cell: handshake `1.19 (0.15% of the best)`, throughput
/// `10528 (13.0x the best)`; `skipped` or empty when it has no figure.
fn floor_cell(row: &RowSummary, throughput: bool) -> String {
    let Some(f) = &row.floor else {
        return if row.skipped.iter().any(|(lib, _)| lib == FLOOR) {
            "skipped".into()
        } else {
            String::new()
        };
    };
    let best = row.best();
    if throughput {
        let Some(mb) = f.mb_per_s else { return "?".into() };
        match best.and_then(|b| b.mb_per_s) {
            Some(b) => format!("{mb:.0} ({:.1}x the best)", mb / b),
            None => format!("{mb:.0}"),
        }
    } else {
        let us = f.median_ns / 1e3;
        match best {
            Some(b) => format!("{us:.2} ({:.2}% of the best)", f.median_ns / b.median_ns * 100.0),
            None => format!("{us:.2}"),
        }
    }
}

/// A per-side cell `first/second`, µs (throughput: per 64 KiB).
fn side_cell(l: &LibrarySummary, throughput: bool) -> String {
    // Throughput: bytes per iteration from MB/s and the median time.
    let per = match (throughput, l.mb_per_s) {
        (true, Some(mb)) if mb > 0.0 => SIDE_BLOCK_BYTES / (mb * l.median_ns / 1e3),
        _ => 1.0,
    };
    format!("{:.1}/{:.1}", l.first_median_ns * per / 1e3, l.second_median_ns * per / 1e3)
}

/// The Markdown of one group: main table, notes, per-side table.
fn group_markdown(group: &str, rows: &[&RowSummary]) -> String {
    let throughput = is_throughput(group);
    let libraries = tls_libraries(rows);
    let has_floor = rows.iter().any(|r| r.floor.is_some() || r.skipped.iter().any(|(l, _)| l == FLOOR));
    let mut header: Vec<String> = vec!["parameters".into()];
    header.extend(libraries.iter().map(|l| cell_text(l)));
    if has_floor {
        header.push("plaintext floor".into());
    }
    let rule = table_line(&vec!["---".to_string(); header.len()]);
    let ratio = "ratio to the row's best TLS library, 95% CI";
    let mut out = String::new();
    out.push_str(&match group {
        "handshake" => format!("### handshake (median µs per handshake; {ratio})\n\n"),
        "throughput" => format!("### throughput (median MB/s, 10^6 B/s; {ratio})\n\n"),
        "send-loop" => format!(
            "### send-loop (median MB/s of payload, 10^6 B/s; writes (DTLS: datagrams) per second = MB/s x 10^6 / payload bytes; {ratio})\n\n"
        ),
        other => format!("### {other} (median µs per iteration; {ratio})\n\n"),
    });
    out.push_str(&table_line(&header));
    out.push_str(&rule);
    for r in rows {
        let mut cells = vec![cell_text(&r.parameters)];
        cells.extend(libraries.iter().map(|l| cell_text(&library_cell(r, l, throughput))));
        if has_floor {
            cells.push(floor_cell(r, throughput));
        }
        out.push_str(&table_line(&cells));
    }

    let notes = notes(rows);
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&notes);
    }

    out.push('\n');
    out.push_str(&match group {
        "throughput" | "send-loop" => {
            format!("#### {group} per side (median µs per 64 KiB: sender / receiver)\n\n")
        }
        "handshake" => "#### handshake per side (median µs: client / server)\n\n".to_string(),
        other => format!("#### {other} per side (median µs per iteration: first / second)\n\n"),
    });
    out.push_str(&table_line(&header));
    out.push_str(&rule);
    for r in rows {
        let mut cells = vec![cell_text(&r.parameters)];
        for lib in &libraries {
            cells.push(match r.libraries.iter().find(|l| &l.library == lib) {
                Some(l) => side_cell(l, throughput),
                None if r.skipped.iter().any(|(s, _)| s == lib) => "skipped".into(),
                None => String::new(),
            });
        }
        if has_floor {
            cells.push(match &r.floor {
                Some(f) => side_cell(f, throughput),
                None if r.skipped.iter().any(|(s, _)| s == FLOOR) => "skipped".into(),
                None => String::new(),
            });
        }
        out.push_str(&table_line(&cells));
    }
    out
}

/// The notes under a group's table: one `- skipped: <library> <parameters>:
/// <reason>` per library and reason (the parameters of every row it skips for
/// that reason, `; `-separated), then one `- <library>: <settings>
/// (<parameters>)` per library and settings (`all rows` when the library
/// ran every row of the group with those settings).
fn notes(rows: &[&RowSummary]) -> String {
    // (library, text) -> parameters, in first-seen order.
    fn add(list: &mut Vec<((String, String), Vec<String>)>, key: (String, String), parameters: &str) {
        match list.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ps)) => {
                if !ps.iter().any(|p| p == parameters) {
                    ps.push(parameters.to_string());
                }
            }
            None => list.push((key, vec![parameters.to_string()])),
        }
    }
    let mut skips = Vec::new();
    let mut settings = Vec::new();
    for r in rows {
        for (library, reason) in &r.skipped {
            add(&mut skips, (library.clone(), reason.clone()), &r.parameters);
        }
        for l in r.libraries.iter().chain(&r.floor) {
            if let Some(s) = &l.settings {
                add(&mut settings, (l.library.clone(), s.clone()), &r.parameters);
            }
        }
    }
    let mut out = String::new();
    for ((library, reason), parameters) in &skips {
        out.push_str(&format!("- skipped: {library} {}: {reason}\n", parameters.join("; ")));
    }
    for ((library, setting), parameters) in &settings {
        let where_ =
            if parameters.len() == rows.len() { "all rows".to_string() } else { parameters.join("; ") };
        out.push_str(&format!("- {library}: {setting} ({where_})\n"));
    }
    out
}

/// Writes one CSV line per (row, library, the floor included) to `path`
/// (creating its directory), after a header: `group, parameters, library,
/// variant, rounds, median_ns, first_median_ns, second_median_ns, mb_per_s,
/// ratio, ratio_low, ratio_high, clear_difference, best, settings, skip`.
/// Times are ns per iteration, `mb_per_s` 10^6 B/s (throughput only), ratios
/// are time ratios to the row's best TLS library (empty for the floor). A
/// library that skips a row is a line with empty figures and its reason in
/// `skip`.
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
        for l in r.libraries.iter().chain(&r.floor) {
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
        for (library, reason) in &r.skipped {
            let mut record = vec![String::new(); 16];
            record[0] = r.group.clone();
            record[1] = r.parameters.clone();
            record[2] = library.clone();
            record[15] = reason.clone();
            w.write_record(&record).with_context(context)?;
        }
    }
    w.flush().with_context(context)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::stats::Interval;

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
            skipped: vec![("gamma-3.0".into(), "no x25519".into())],
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
            skipped: vec![],
        };
        vec![throughput, handshake]
    }

    #[test]
    fn markdown_cells() {
        let env = EnvProbe::start()
            .finish(vec![LibraryInfo { library: "a".into(), variant: "v".into() }], "c".into());
        let md = markdown(&fixture(), &env, 10);
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
