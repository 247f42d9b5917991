//! The subcommands, one module each, and the options they share.

pub mod context_query;
pub mod http;
pub mod index;
pub mod instructions;
pub mod linked_list;
pub mod parse_json;
pub mod reuse;
pub mod sync_arena;
pub mod vec_push;

use clap::Arg;
use clap::builder::RangedU64ValueParser;
use onewayalloc_harness::output::Out;
use onewayalloc_harness::query::Database;

/// Parses a number of at least 1.
pub fn positive() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..)
}

/// The sizes of the experiments that run the context query. Each experiment has its
/// own defaults, full and with `--quick` ([`QuerySizes::resolve`]), and says them in
/// the help of these options with `#[command(mut_args = sizes_help(...))]`.
#[derive(clap::Args, Clone)]
pub struct QuerySizes {
    /// Small sizes, a run of seconds (sizes given explicitly still apply)
    #[arg(long)]
    pub quick: bool,
    /// Queries per allocator
    #[arg(long, value_name = "N", value_parser = positive())]
    pub queries: Option<usize>,
    /// Charts in the context
    #[arg(long, value_name = "N", value_parser = positive())]
    pub charts: Option<usize>,
    /// Dimensions per chart
    #[arg(long, value_name = "N", value_parser = positive())]
    pub dims: Option<usize>,
    /// Points per dimension
    #[arg(long, value_name = "N", value_parser = positive(), default_value_t = 30)]
    pub points: usize,
}

/// How an experiment prints: text or Markdown, with or without its benchmark notes
/// (each experiment says what its notes are with `mut_arg("notes", ...)`).
#[derive(clap::Args, Clone, Copy)]
pub struct ReportArgs {
    /// Print Markdown instead of text
    #[arg(long)]
    pub markdown: bool,
    /// Add the benchmark notes: onewayalloc's targets (met or missed)
    #[arg(long)]
    pub notes: bool,
}

impl ReportArgs {
    pub fn out(self) -> Out {
        Out {
            markdown: self.markdown,
        }
    }
}

/// Queries, charts and dimensions per chart.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub queries: usize,
    pub charts: usize,
    pub dims: usize,
}

impl Sizes {
    pub const fn new(queries: usize, charts: usize, dims: usize) -> Self {
        Sizes {
            queries,
            charts,
            dims,
        }
    }
}

/// The help of the [`QuerySizes`] options of one experiment: `quick` for `--quick`,
/// `queries` for what `--queries` counts, and the defaults from `full` and `quick`.
pub fn sizes_help(
    quick_help: &'static str,
    queries: &'static str,
    full: Sizes,
    quick: Sizes,
) -> impl FnMut(Arg) -> Arg {
    let default = |what: &str, full: usize, quick: usize| match full == quick {
        true => format!("{what} [default: {full}]"),
        false => format!("{what} [default: {full}; with --quick: {quick}]"),
    };
    move |arg| match arg.get_id().as_str() {
        "quick" => arg.help(quick_help),
        "queries" => arg.help(default(queries, full.queries, quick.queries)),
        "charts" => arg.help(default("Charts in the context", full.charts, quick.charts)),
        "dims" => arg.help(default("Dimensions per chart", full.dims, quick.dims)),
        _ => arg,
    }
}

impl QuerySizes {
    /// The sizes asked for: each one given explicitly, else `quick`'s with `--quick`,
    /// else `full`'s.
    pub fn resolve(&self, full: Sizes, quick: Sizes) -> Sizes {
        let base = if self.quick { quick } else { full };
        Sizes {
            queries: self.queries.unwrap_or(base.queries),
            charts: self.charts.unwrap_or(base.charts),
            dims: self.dims.unwrap_or(base.dims),
        }
    }

    /// The metrics database of these sizes.
    pub fn database(&self, sizes: Sizes) -> Database {
        Database::new(sizes.charts, sizes.dims, self.points)
    }
}
