//! The Markdown table the reports and tools write their tables with: a
//! heading line, a separator line, one line a row, each cell as given
//! between `| ` and ` |`, unpadded (`| rustls | 6,066 |`), every line
//! ending in `\n`.
//!
//! Written here rather than taken from a crate: tabled (0.20) and
//! comfy-table (7) both pad each cell to its column's widest and draw the
//! separator as wide as the column (`|-------|`), and comfy-table writes no
//! alignment marker. The committed results (`results/README.md` and the
//! files beside it, compared byte for byte by `report results --check`)
//! have unpadded cells under fixed rules (`|---|--:|`, `| --- |`,
//! `|---:|`), which neither can write.

use std::{fmt, ops::RangeBounds};

/// How a column's cells are aligned: its rule in the separator line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// No marker (`---`): Markdown's default, shown on the left.
    Left,
    /// On the right: a colon at the rule's end (`--:`, or `---:` in
    /// [`Style::Dashes`]).
    Right,
}

/// How the separator line is drawn; the other lines are the same in every
/// style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `|---|--:|`: no spaces, every rule three characters.
    Compact,
    /// `|---|---:|`: no spaces, three dashes in every rule, a right-aligned
    /// one's colon after them.
    Dashes,
    /// `| --- | --: |`: a space either side of each rule.
    Spaced,
}

/// A Markdown table: its columns (header and alignment), its style and
/// the rows added so far. Render it whole with [`Table::markdown`] (or
/// `Display`), or, for a table printed as its rows are measured,
/// [`Table::head`] then [`Table::line`] per row.
#[derive(Clone, Debug)]
pub struct Table {
    /// Each column's header and alignment, in order.
    columns: Vec<(String, Align)>,
    /// How the separator line is drawn.
    style: Style,
    /// The rows' cells, one a column from the first.
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of one column per header, in order, each [`Align::Left`],
    /// in [`Style::Compact`], with no rows. An empty header is a column
    /// without a title, written `| |`.
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Table {
        Table {
            columns: headers.iter().map(|h| (h.as_ref().to_string(), Align::Left)).collect(),
            style: Style::Compact,
            rows: Vec::new(),
        }
    }

    /// The table drawn in `style`.
    pub fn style(mut self, style: Style) -> Table {
        self.style = style;
        self
    }

    /// The table with the columns at the indices in `columns` (from 0;
    /// `2..` is the third on) aligned `align`; indices past the last
    /// column are ignored.
    pub fn align(mut self, columns: impl RangeBounds<usize>, align: Align) -> Table {
        for (i, (_, a)) in self.columns.iter_mut().enumerate() {
            if columns.contains(&i) {
                *a = align;
            }
        }
        self
    }

    /// Adds a row of `cells`, one a column from the first; see
    /// [`Table::line`] for how it is written.
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        self.rows.push(cells.into_iter().map(|c| c.as_ref().to_string()).collect());
        self
    }

    /// The heading line and the separator line, each ending in `\n`.
    pub fn head(&self) -> String {
        let mut out = String::from("|");
        for (header, _) in &self.columns {
            if header.is_empty() {
                out.push_str(" |");
            } else {
                out.push_str(&format!(" {header} |"));
            }
        }
        out.push_str("\n|");
        for (_, align) in &self.columns {
            out.push_str(match (self.style, align) {
                (Style::Compact, Align::Left) | (Style::Dashes, Align::Left) => "---|",
                (Style::Compact, Align::Right) => "--:|",
                (Style::Dashes, Align::Right) => "---:|",
                (Style::Spaced, Align::Left) => " --- |",
                (Style::Spaced, Align::Right) => " --: |",
            });
        }
        out.push('\n');
        out
    }

    /// One row's line, ending in `\n`, without adding the row: each cell
    /// as given (an empty one `|  |`; a `|` in one is not escaped), a row
    /// shorter than the table completed with blank cells, written `| |`,
    /// and a longer one written whole (Markdown shows the table's columns
    /// only).
    pub fn line<S: AsRef<str>>(&self, cells: &[S]) -> String {
        let mut out = String::from("|");
        for cell in cells {
            out.push_str(&format!(" {} |", cell.as_ref()));
        }
        out.push_str(&" |".repeat(self.columns.len().saturating_sub(cells.len())));
        out.push('\n');
        out
    }

    /// The whole table: [`Table::head`], then each row's [`Table::line`]
    /// in the order added.
    pub fn markdown(&self) -> String {
        let mut out = self.head();
        for row in &self.rows {
            out.push_str(&self.line(row));
        }
        out
    }
}

impl fmt::Display for Table {
    /// [`Table::markdown`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.markdown())
    }
}

/// `n` with commas between groups of three digits: `6,066`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(72), "72");
        assert_eq!(thousands(1440), "1,440");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn each_style_draws_its_rules() {
        let mut t = Table::new(&["library", "handshakes/s"]).align(1.., Align::Right);
        t.row(["rustls", "6,066"]);
        assert_eq!(t.markdown(), "| library | handshakes/s |\n|---|--:|\n| rustls | 6,066 |\n");
        assert_eq!(t.to_string(), t.markdown());
        let t = t.style(Style::Dashes);
        assert_eq!(t.head(), "| library | handshakes/s |\n|---|---:|\n");
        let t = t.style(Style::Spaced);
        assert_eq!(t.head(), "| library | handshakes/s |\n| --- | --: |\n");
    }

    #[test]
    fn alignment_takes_a_range_of_columns() {
        let t = Table::new(&["a", "b", "c", "d"]).align(1..3, Align::Right);
        assert_eq!(t.head(), "| a | b | c | d |\n|---|--:|--:|---|\n");
        let t = t.align(.., Align::Left).align(3..9, Align::Right);
        assert_eq!(t.head(), "| a | b | c | d |\n|---|---|---|--:|\n");
    }

    #[test]
    fn empty_cells_and_untitled_columns() {
        let mut t = Table::new(&["row", ""]);
        t.row(["a", ""]);
        t.row(["b"]);
        t.row(Vec::<String>::new());
        assert_eq!(t.markdown(), "| row | |\n|---|---|\n| a |  |\n| b | |\n| | |\n");
    }

    #[test]
    fn a_line_is_written_without_keeping_it() {
        let t = Table::new(&["a", "b"]);
        assert_eq!(t.line(&["x", "y"]), "| x | y |\n");
        assert_eq!(t.markdown(), t.head());
    }

    #[test]
    fn a_row_wider_than_the_table_is_written_whole() {
        let mut t = Table::new(&["a", "b"]);
        t.row(["x", "y", "z"]);
        assert_eq!(t.markdown(), "| a | b |\n|---|---|\n| x | y | z |\n");
    }
}
