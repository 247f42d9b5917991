//! What the subcommands print: headings, paragraphs wrapped to [`WIDTH`] columns,
//! tables (comfy-table) as aligned text or as Markdown, and the number formats.

use std::time::Duration;

use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, LineStyle, TableStyle, presets,
};

/// The widest line the text output prints.
pub const WIDTH: usize = 100;

/// Text tables: a rule under the header and nothing else.
const TEXT_STYLE: TableStyle = TableStyle::new().header_separator(LineStyle::none().fill('─'));

/// Prints headings, paragraphs and tables as text (at most [`WIDTH`] columns) or as
/// Markdown.
#[derive(Clone, Copy)]
pub struct Out {
    pub markdown: bool,
}

impl Out {
    pub fn heading(&self, text: &str) {
        if self.markdown {
            println!("#### {text}\n");
        } else {
            println!("{text}\n{}", "-".repeat(text.chars().count()));
        }
    }

    /// A paragraph, wrapped to [`WIDTH`] columns, and an empty line.
    pub fn para(&self, text: &str) {
        println!("{}\n", textwrap::fill(text, WIDTH));
    }

    pub fn table(&self, table: &Table) {
        println!("{}\n", table.render(self.markdown));
    }
}

/// A table whose first column is left-aligned and the others right-aligned. A `\n`
/// in a header breaks it into lines in text output (a space in Markdown).
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.header.len(), "row width");
        self.rows.push(cells);
    }

    pub fn render(&self, markdown: bool) -> String {
        let mut table = comfy_table::Table::new();
        if markdown {
            let header: Vec<String> = self.header.iter().map(|h| h.replace('\n', " ")).collect();
            table
                .load_style(presets::ASCII_MARKDOWN)
                .set_content_arrangement(ContentArrangement::Disabled)
                .set_header(header);
        } else {
            table
                .load_style(TEXT_STYLE)
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(WIDTH as u16)
                .set_header(self.header.clone());
        }
        for row in &self.rows {
            table.add_row(row.clone());
        }
        for (i, column) in table.column_iter_mut().enumerate() {
            if i == 0 {
                // The names stay on one line; numbers and headers wrap first.
                column.set_constraint(ColumnConstraint::ContentWidth);
            } else {
                column.set_cell_alignment(CellAlignment::Right);
            }
            if !markdown {
                // No borders: two spaces before each column but the first.
                column.set_padding((if i == 0 { 0 } else { 2 }, 0));
            }
        }
        table.to_string()
    }
}

/// A duration with a unit that suits it: "1.23 s", "45.6 ms", "789 µs", "12 ns".
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

pub fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The median of `values` (sorted in place); zero if empty.
pub fn median(values: &mut [Duration]) -> Duration {
    values.sort_unstable();
    match values.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2,
    }
}

/// A ratio: "2.48x".
pub fn times(ratio: f64) -> String {
    format!("{ratio:.2}x")
}

/// How a target line of the benchmark notes reads: "met" or "MISSED".
pub fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}
