//! Many small vectors that grow, in a hash map, over real text: an index of the
//! identifiers of a source file to the lines they appear on, one file per request.
//!
//! The text is the workspace's own Rust source: every `.rs` file under `src/`,
//! `harness/`, `capi/` and `derive/`, read once at the start (so the figures move a
//! little as the sources change). A request indexes one file: for every identifier
//! (an ASCII letter or `_`, then letters, digits and `_`) on every line it pushes the
//! line number into the identifier's vector in a
//! `hashbrown::HashMap<&str, Vec<u32, A>, _, A>` (the keys borrow the file's text),
//! creating the vector on its first occurrence; then it computes a checksum of the
//! index, drops it and resets the allocator. Most vectors stay short and grow while
//! other blocks are allocated after them, so they move at almost every growth; the
//! map's table grows by rehashing.
//!
//! The map and the vectors are the same types on every contender
//! (`allocator_api2::vec::Vec` and `hashbrown::HashMap` with the contender as their
//! allocator; bump-scope through the harness's adapter), so only the allocator
//! differs. Every contender indexes every file in each round, the contenders in a
//! rotating order; the table shows the median round, and the checksum of each file
//! must agree across contenders.
//!
//! ```text
//! cargo run --release -p onewayalloc-harness -- index
//! cargo run --release -p onewayalloc-harness -- index --quick
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use onewayalloc::allocator_api2::vec::Vec as ApiVec;
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};
use onewayalloc_harness::contenders::{Agreement, Arena, Build, Contender, rotations, warm_up};
use onewayalloc_harness::output::{Table, fmt_duration, median, met, times};
use onewayalloc_harness::progress;

use super::{ReportArgs, positive};

#[derive(clap::Args)]
pub struct Args {
    /// A run of about a second: 5 rounds (sizes given explicitly still apply)
    #[arg(long)]
    quick: bool,
    /// Rounds, each indexing every file once per contender; the median is shown
    /// [default: 101; with --quick: 5]
    #[arg(long, value_name = "N", value_parser = positive())]
    rounds: Option<usize>,
    /// Run one contender only (for counting instructions under Callgrind: the
    /// difference between two numbers of rounds is what a round costs)
    #[arg(long, value_enum, value_name = "CONTENDER")]
    only: Option<Only>,
    #[command(flatten)]
    report: ReportArgs,
}

/// The contenders `--only` selects.
#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
enum Only {
    Malloc,
    Bumpalo,
    BumpScope,
    Onewayalloc,
    Linear,
}

impl Only {
    fn contender(self) -> Contender {
        match self {
            Only::Malloc => Contender::Malloc,
            Only::Bumpalo => Contender::Bumpalo,
            Only::BumpScope => Contender::BumpScopeReset,
            Only::Onewayalloc => Contender::OneWayAlloc,
            Only::Linear => Contender::Linear,
        }
    }
}

/// The directories of the workspace whose `.rs` files are indexed.
const SOURCE_DIRS: [&str; 4] = ["src", "harness", "capi", "derive"];

/// The `.rs` files under `dir`, recursively, skipping build output.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "target") {
                rust_files(&path, files);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The workspace's Rust sources, in path order.
fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness is a member of the workspace");
    let mut files = Vec::new();
    for dir in SOURCE_DIRS {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path.strip_prefix(root).unwrap_or(&path).to_path_buf(), text))
        })
        .collect()
}

/// The identifiers of a line, in order.
fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    let bytes = line.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            i += 1;
        }
        if i == bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        // The identifier is ASCII, so both ends are character boundaries.
        Some(&line[start..i])
    })
}

/// One request: indexes `text` in `alloc` and returns the index's checksum, which
/// does not depend on the map's iteration order.
fn index<'t, A: onewayalloc::allocator_api2::alloc::Allocator + Copy>(
    text: &'t str,
    alloc: A,
) -> u64 {
    let mut map: HashMap<&'t str, ApiVec<u32, A>, _, A> =
        HashMap::with_hasher_in(DefaultHashBuilder::default(), alloc);
    for (line, content) in (1u32..).zip(text.lines()) {
        for ident in identifiers(content) {
            map.entry(ident)
                .or_insert_with(|| ApiVec::new_in(alloc))
                .push(line);
        }
    }
    let entries = map.iter().map(|(ident, lines)| {
        let sum = lines.iter().map(|&l| u64::from(l)).sum::<u64>();
        (ident.len() as u64).wrapping_mul(lines.len() as u64 + 1) ^ sum.rotate_left(17)
    });
    entries.fold(map.len() as u64, u64::wrapping_add)
}

trait Runner {
    /// Indexes every file once, resetting after each: the round's time and the
    /// checksums, one per file.
    fn round(&mut self, files: &[(PathBuf, String)]) -> (Duration, Vec<u64>);
    /// The most bytes one request consumed in the last round, if the arena tells.
    fn most_used(&self) -> Option<usize>;
}

struct Rounds<S> {
    arena: S,
    most_used: Option<usize>,
}

impl<S: Arena> Runner for Rounds<S> {
    fn round(&mut self, files: &[(PathBuf, String)]) -> (Duration, Vec<u64>) {
        let mut sums = Vec::with_capacity(files.len());
        let mut most_used = None;
        let start = Instant::now();
        for (_, text) in files {
            sums.push(index(text, self.arena.allocator()));
            most_used = most_used.max(self.arena.used());
            self.arena.reset();
        }
        let time = start.elapsed();
        self.most_used = most_used;
        (time, sums)
    }

    fn most_used(&self) -> Option<usize> {
        self.most_used
    }
}

struct Runners;

impl Build for Runners {
    type Output = Box<dyn Runner>;
    fn build<S: Arena + 'static>(self, arena: S) -> Box<dyn Runner> {
        Box::new(Rounds {
            arena,
            most_used: None,
        })
    }
}

const CONTENDERS: [Contender; 5] = Contender::ONE_EACH;

pub fn run(args: &Args) {
    let rounds_wanted = args.rounds.unwrap_or(if args.quick { 5 } else { 101 });
    let out = args.report.out();
    let files = sources();
    assert!(
        !files.is_empty(),
        "no .rs files found under {SOURCE_DIRS:?}"
    );
    let bytes: usize = files.iter().map(|(_, text)| text.len()).sum();
    let lines: usize = files.iter().map(|(_, text)| text.lines().count()).sum();
    warm_up();

    let contenders: Vec<Contender> = match args.only {
        Some(only) => vec![only.contender()],
        None => CONTENDERS.to_vec(),
    };
    // The linear buffer must hold the largest request: measured on onewayalloc
    // (whose used bytes include its page ends left behind), with room to spare.
    let linear_bytes = if contenders.contains(&Contender::Linear) {
        let mut probe = Contender::OneWayAlloc.build(0, Runners);
        probe.round(&files);
        2 * probe.most_used().expect("onewayalloc tells its use") + (1 << 20)
    } else {
        0
    };

    let n = contenders.len();
    let mut runners: Vec<_> = contenders
        .iter()
        .map(|c| c.build(linear_bytes, Runners))
        .collect();
    let mut warm = vec![Vec::with_capacity(rounds_wanted); n];
    let mut sums = Agreement::new(files.len());
    let progress = progress::bar(n * (rounds_wanted + 1), "rounds");
    progress.set_message("index");
    for (r, i) in rotations(rounds_wanted + 1, n) {
        let (time, round_sums) = runners[i].round(&files);
        progress.inc(1);
        for (f, sum) in round_sums.into_iter().enumerate() {
            sums.check(f, sum, || {
                format!(
                    "{} indexed {} differently",
                    contenders[i].name(),
                    files[f].0.display()
                )
            });
        }
        if r > 0 {
            warm[i].push(time);
        }
    }
    progress.finish_and_clear();

    let medians: Vec<Duration> = warm.iter_mut().map(|t| median(t)).collect();
    let find = |contender| contenders.iter().position(|&c| c == contender);
    let reference = |c| find(c).map(|j| medians[j]);
    let (malloc, bumpalo) = (reference(Contender::Malloc), reference(Contender::Bumpalo));
    let best_arena = contenders
        .iter()
        .zip(&medians)
        .filter(|(c, _)| matches!(c, Contender::Bumpalo | Contender::BumpScopeReset))
        .map(|(_, &m)| m)
        .min();
    let ratio = |d: Duration, of: Option<Duration>| {
        of.map_or("-".into(), |of| times(d.as_secs_f64() / of.as_secs_f64()))
    };
    let per_file = |d: Duration| fmt_duration(d / files.len() as u32);

    let mut table = Table::new(&[
        "allocator",
        "round (all files)",
        "per file",
        "time vs\nmalloc",
        "time vs\nbumpalo",
        "time vs best\nother arena",
        "most bytes\nper request",
    ]);
    for (i, c) in contenders.iter().enumerate() {
        let used = runners[i]
            .most_used()
            .map_or("-".into(), |b| format!("{:.0} KiB", b as f64 / 1024.0));
        table.row(vec![
            c.name().to_string(),
            fmt_duration(medians[i]),
            per_file(medians[i]),
            ratio(medians[i], malloc),
            ratio(medians[i], bumpalo),
            ratio(medians[i], best_arena),
            used,
        ]);
    }
    out.para(&format!(
        "Index: identifiers to line numbers (a hash map of small growing vectors) over the \
         workspace's {} Rust files ({:.0} KiB, {lines} lines), one file per request, reset \
         after each; the median of {rounds_wanted} rounds of every file after one warm-up \
         round, the contenders interleaved; \"time vs\" is the time over the other's (lower \
         is faster). \"most bytes per request\" is what the largest request consumed.",
        files.len(),
        bytes as f64 / 1024.0
    ));
    out.table(&table);

    if let (true, Some(o), Some(b)) = (args.report.notes, find(Contender::OneWayAlloc), bumpalo) {
        let vs = medians[o].as_secs_f64() / b.as_secs_f64();
        out.para(&format!(
            "Target for onewayalloc: at most 1.00x bumpalo's time: {vs:.2}x: {}.",
            met(vs <= 1.0)
        ));
    }
}
