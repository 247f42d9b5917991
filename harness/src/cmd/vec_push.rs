//! A million `u64` pushed into a vector that starts empty, on a warm allocator (reset
//! after every round, so its pages or chunks exist): the criterion group
//! `vec_push_1m` as an interleaved table, with the linear buffer as the speed of
//! light, and with what each allocator copies.
//!
//! Every contender runs the pushes twice per round:
//! - into its own vector type, what its users write: `Vec` (glibc's malloc),
//!   bumpalo's `collections::Vec`, bump-scope's `BumpVec`, onewayalloc's
//!   `collections::Vec` (allocator-api2's `Vec`), and allocator-api2's `Vec` on the
//!   linear buffer, which has no vector of its own;
//! - into allocator-api2's `Vec` on every allocator (bump-scope through the harness's
//!   adapter), so that the vector's code is the same and only the allocator differs.
//!
//! After the timed rounds, one more warm round per contender (not timed) watches the
//! vector's buffer after every push: a new address is a move, which copied the
//! elements pushed so far. The pages or chunks obtained in the warm rounds come from
//! the allocator's own figures where it has them.
//!
//! ```text
//! cargo run --release -p onewayalloc-harness -- vec-push
//! cargo run --release -p onewayalloc-harness -- vec-push --quick
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::vec::Vec as ApiVec;
use onewayalloc_harness::contenders::{
    Agreement, Arena, Contender, Malloc, ScopeReset, rotations, warm_up,
};
use onewayalloc_harness::linear::LinearBuffer;
use onewayalloc_harness::output::{Table, median, met, times};
use onewayalloc_harness::progress;

use super::{ReportArgs, positive};

#[derive(clap::Args)]
pub struct Args {
    /// Small sizes, a run of about a second: 5 rounds (sizes given explicitly still
    /// apply)
    #[arg(long)]
    quick: bool,
    /// Pushes per round [default: 1000000]
    #[arg(long, value_name = "N", value_parser = positive())]
    pushes: Option<usize>,
    /// Warm rounds after the cold one; the median is shown [default: 101; with
    /// --quick: 5]
    #[arg(long, value_name = "N", value_parser = positive())]
    rounds: Option<usize>,
    #[command(flatten)]
    report: ReportArgs,
}

/// A vector of `u64` being pushed to.
trait Push {
    fn push(&mut self, value: u64);
    fn as_slice(&self) -> &[u64];
}

/// `Push` for vector types with `push` and `Deref<Target = [u64]>`.
macro_rules! push_impls {
    ($([$($generics:tt)*] $vec:ty),* $(,)?) => {$(
        impl<$($generics)*> Push for $vec {
            #[inline(always)]
            fn push(&mut self, value: u64) {
                <$vec>::push(self, value);
            }
            fn as_slice(&self) -> &[u64] {
                self
            }
        }
    )*};
}

push_impls!(
    [] Vec<u64>,
    ['a] bumpalo::collections::Vec<'a, u64>,
    ['a] bump_scope::BumpVec<u64, &'a bump_scope::Bump>,
    [A: onewayalloc::allocator_api2::alloc::Allocator] ApiVec<u64, A>,
);

/// A contender with a vector type of its own.
trait OwnVec: Arena {
    type Own<'a>: Push
    where
        Self: 'a;
    const VEC: &'static str;
    fn own_vec(&self) -> Self::Own<'_>;
}

impl OwnVec for Malloc {
    type Own<'a> = Vec<u64>;
    const VEC: &'static str = "std Vec";
    fn own_vec(&self) -> Vec<u64> {
        Vec::new()
    }
}

impl OwnVec for bumpalo::Bump {
    type Own<'a> = bumpalo::collections::Vec<'a, u64>;
    const VEC: &'static str = "bumpalo Vec";
    fn own_vec(&self) -> Self::Own<'_> {
        bumpalo::collections::Vec::new_in(self)
    }
}

impl OwnVec for ScopeReset {
    type Own<'a> = bump_scope::BumpVec<u64, &'a bump_scope::Bump>;
    const VEC: &'static str = "BumpVec";
    fn own_vec(&self) -> Self::Own<'_> {
        bump_scope::BumpVec::new_in(&self.0)
    }
}

impl OwnVec for OneWayAlloc {
    type Own<'a> = onewayalloc::collections::Vec<'a, u64>;
    const VEC: &'static str = "arena::Vec";
    fn own_vec(&self) -> Self::Own<'_> {
        onewayalloc::collections::Vec::new_in(self)
    }
}

impl OwnVec for LinearBuffer {
    type Own<'a> = ApiVec<u64, &'a LinearBuffer>;
    const VEC: &'static str = "api2 Vec";
    fn own_vec(&self) -> Self::Own<'_> {
        ApiVec::new_in(self)
    }
}

/// The workload of the criterion group `vec_push_1m`: `pushes` values behind
/// `black_box`, then the vector behind `black_box`. Returns a checksum.
#[inline(always)]
fn push_all<V: Push>(mut v: V, pushes: usize) -> u64 {
    for i in 0..pushes as u64 {
        v.push(black_box(i));
    }
    black_box(&v);
    checksum(v.as_slice())
}

fn checksum(values: &[u64]) -> u64 {
    values.len() as u64 ^ values.last().map_or(0, |last| last << 20)
}

/// Moves of the vector's buffer, and the bytes they copied.
#[derive(Clone, Copy, Default)]
struct Moves {
    moves: usize,
    copied: usize,
}

/// The same pushes, watching the buffer's address after each one (not timed).
fn watch_moves<V: Push>(mut v: V, pushes: usize) -> Moves {
    let mut moves = Moves::default();
    let mut at = v.as_slice().as_ptr();
    for i in 0..pushes as u64 {
        let bytes = size_of_val(v.as_slice());
        v.push(i);
        let now = v.as_slice().as_ptr();
        // An empty vector's dangling pointer moving to its first block copies nothing.
        if now != at && bytes > 0 {
            moves.moves += 1;
            moves.copied += bytes;
        }
        at = now;
    }
    moves
}

/// Which vector a step pushes into.
#[derive(Clone, Copy, PartialEq)]
enum Which {
    Own,
    Api,
}

trait Runner {
    /// One round into `which` vector, then the reset: its time and checksum.
    fn round(&mut self, which: Which, pushes: usize) -> (Duration, u64);
    /// One untimed round into the own vector, watching its moves.
    fn moves(&mut self, pushes: usize) -> Moves;
    /// Pages or chunks obtained so far, if the allocator tells.
    fn blocks_obtained(&self) -> Option<usize>;
    fn own_vec_name(&self) -> &'static str;
}

struct Rounds<S>(S);

impl<S: OwnVec> Runner for Rounds<S> {
    fn round(&mut self, which: Which, pushes: usize) -> (Duration, u64) {
        let arena = &mut self.0;
        let start = Instant::now();
        let sum = match which {
            Which::Own => push_all(arena.own_vec(), pushes),
            Which::Api => push_all(ApiVec::new_in(arena.allocator()), pushes),
        };
        let time = start.elapsed();
        arena.reset();
        (time, sum)
    }

    fn moves(&mut self, pushes: usize) -> Moves {
        let moves = watch_moves(self.0.own_vec(), pushes);
        self.0.reset();
        moves
    }

    fn blocks_obtained(&self) -> Option<usize> {
        self.0.blocks_obtained()
    }

    fn own_vec_name(&self) -> &'static str {
        S::VEC
    }
}

const CONTENDERS: [Contender; 5] = Contender::ONE_EACH;

/// A contender's runner, fresh; the linear buffer has room for the final vector.
fn runner(contender: Contender, pushes: usize) -> Box<dyn Runner> {
    match contender {
        Contender::Malloc => Box::new(Rounds(Malloc)),
        Contender::Bumpalo => Box::new(Rounds(bumpalo::Bump::new())),
        Contender::BumpScopeReset => Box::new(Rounds(ScopeReset(bump_scope::Bump::new()))),
        Contender::OneWayAlloc => Box::new(Rounds(OneWayAlloc::new())),
        Contender::Linear => {
            let bytes = pushes.next_power_of_two() * size_of::<u64>() + 4096;
            Box::new(Rounds(LinearBuffer::new(bytes)))
        }
        other => unreachable!("{other:?} is not a contender of vec-push"),
    }
}

pub fn run(args: &Args) {
    let pushes = args.pushes.unwrap_or(1_000_000);
    let rounds_wanted = args.rounds.unwrap_or(if args.quick { 5 } else { 101 });
    let out = args.report.out();
    warm_up();

    let n = CONTENDERS.len();
    let steps = [Which::Own, Which::Api];
    let mut runners: Vec<_> = CONTENDERS.iter().map(|&c| runner(c, pushes)).collect();
    // Per contender and vector: the warm rounds' times.
    let mut warm = vec![[Vec::new(), Vec::new()]; n];
    let mut sums = Agreement::new(1);
    let mut after_cold = vec![None; n];
    let progress = progress::bar(2 * n * (rounds_wanted + 1), "rounds");
    progress.set_message("vec push");
    for (r, step) in rotations(rounds_wanted + 1, 2 * n) {
        let (i, which) = (step / 2, steps[step % 2]);
        if r == 1 && after_cold[i].is_none() {
            after_cold[i] = Some(runners[i].blocks_obtained());
        }
        let (time, sum) = runners[i].round(which, pushes);
        progress.inc(1);
        sums.check(0, sum, || {
            format!("{} pushed something else", CONTENDERS[i].name())
        });
        if r > 0 {
            warm[i][step % 2].push(time);
        }
    }
    progress.finish_and_clear();
    let moves: Vec<Moves> = runners.iter_mut().map(|r| r.moves(pushes)).collect();

    let medians: Vec<[Duration; 2]> = warm
        .iter_mut()
        .map(|[own, api]| [median(own), median(api)])
        .collect();
    // The peers of each column: every other allocator with its own vector, the other
    // arenas with allocator-api2's (see the paragraph printed with the table).
    let is_peer = |i: usize, v: usize| match CONTENDERS[i] {
        Contender::OneWayAlloc | Contender::Linear => false,
        Contender::Malloc => v == 0,
        _ => true,
    };
    let best_peer = |v: usize| {
        (0..n)
            .filter(|&i| is_peer(i, v))
            .map(|i| medians[i][v])
            .min()
            .unwrap_or(Duration::MAX)
    };
    let best = [best_peer(0), best_peer(1)];
    let ratio = |d: Duration, of: Duration| times(d.as_secs_f64() / of.as_secs_f64());
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);

    let mut table = Table::new(&[
        "allocator",
        "own vector",
        "own vector\nms",
        "vs best\npeer",
        "allocator-\napi2 Vec ms",
        "vs best\narena",
        "moves\nper round",
        "KiB copied\nper round",
        "blocks\nobtained",
    ]);
    for (i, c) in CONTENDERS.iter().enumerate() {
        let obtained = match (after_cold[i].flatten(), runners[i].blocks_obtained()) {
            (Some(before), Some(after)) => (after - before).to_string(),
            _ => "-".into(),
        };
        table.row(vec![
            c.name().to_string(),
            runners[i].own_vec_name().to_string(),
            ms(medians[i][0]),
            ratio(medians[i][0], best[0]),
            ms(medians[i][1]),
            ratio(medians[i][1], best[1]),
            moves[i].moves.to_string(),
            format!("{:.0}", moves[i].copied as f64 / 1024.0),
            obtained,
        ]);
    }
    out.para(&format!(
        "Vec push: {pushes} u64 pushed into a vector that starts empty, on a warm allocator \
         (reset after every round); milliseconds, median of {rounds_wanted} warm rounds after \
         one cold round, the contenders and both vectors interleaved. \"own vector\" is each \
         allocator's vector type; \"allocator-api2 Vec\" the same vector type on every \
         allocator. \"vs best peer\" is the time over the fastest of malloc, bumpalo and \
         bump-scope with their own vectors, \"vs best arena\" over the faster of bumpalo and \
         bump-scope with allocator-api2's (lower is faster). Moves and bytes copied are counted \
         in one more warm round of the own vector (not timed); blocks obtained are the pages \
         the arena obtained in the warm rounds. The loop is the same source for every \
         allocator but not the same machine code: whether the compiler keeps the vector's \
         length in a register or stores it at every push depends on what it can prove about \
         the blocks the allocator returns (the global allocator's are known to alias nothing) \
         and on the code around the loop, which moves these times by up to a third; the moves \
         and copies depend on the allocator alone."
    ));
    out.table(&table);

    if args.report.notes {
        let o = CONTENDERS
            .iter()
            .position(|&c| c == Contender::OneWayAlloc)
            .expect("onewayalloc runs");
        let own = medians[o][0].as_secs_f64() / best[0].as_secs_f64();
        let api = medians[o][1].as_secs_f64() / best[1].as_secs_f64();
        out.para(&format!(
            "Target for onewayalloc: at most 1.05x the best peer's time: {own:.2}x with its own \
             vector: {}; {api:.2}x the best arena's with allocator-api2's vector: {}.",
            met(own <= 1.05),
            met(api <= 1.05)
        ));
    }
}
