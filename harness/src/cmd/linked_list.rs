//! The linear-allocator experiment: a million linked-list nodes, each holding a copy
//! of a small payload, created, walked and released, on the global allocator (`Box`
//! on glibc's malloc), mimalloc, bumpalo, bump-scope, `OneWayAlloc`, and a linear
//! buffer allocated and pre-faulted up front, the speed of light.
//!
//! In the article, replacing `malloc()` for each node by a linear allocator that bumps
//! into one pre-faulted 100 MB buffer made creating 1,000,000 nodes more than 5x as
//! fast. Here the list code is one generic function for every allocator: a node is
//! kept with the allocator's `keep` (a `Box` for the heap allocators, the arena's own
//! `alloc` for the arenas) and links to the previous node; its 24-byte payload is
//! copied into it. *Release* is freeing every node one by one for the heap allocators
//! and the reset for the arenas.
//!
//! Every allocator runs one cold round (a fresh allocator, reported separately) and
//! then `--rounds` rounds (reset between them), the contenders alternating in a
//! rotating order; the tables show the median per phase, in nanoseconds per node.
//!
//! ```text
//! cargo run --release -p onewayalloc-harness -- linked-list
//! cargo run --release -p onewayalloc-harness -- linked-list --nodes 10000 --rounds 3
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use onewayalloc_harness::contenders::{Agreement, Arena, Build, Contender, rotations, warm_up};
use onewayalloc_harness::linear::LinearBuffer;
use onewayalloc_harness::output::{Table, median, met, times};
use onewayalloc_harness::progress;
use onewayalloc_harness::query::QueryAlloc;

use super::{ReportArgs, positive};

#[derive(clap::Args)]
pub struct Args {
    /// Small sizes, a run of about a second: 100,000 nodes, 5 rounds (sizes given
    /// explicitly still apply)
    #[arg(long)]
    quick: bool,
    /// Nodes of the list [default: 1000000; with --quick: 100000]
    #[arg(long, value_name = "N", value_parser = positive())]
    nodes: Option<usize>,
    /// Warm rounds after the cold one; the median is shown [default: 10; with
    /// --quick: 5]
    #[arg(long, value_name = "N", value_parser = positive())]
    rounds: Option<usize>,
    #[command(flatten)]
    report: ReportArgs,
}

const PAYLOAD: usize = 24;

/// A list node: the link to the previous node and a copied payload.
struct Node<'a, A: QueryAlloc<'a>> {
    prev: Option<A::Own<Node<'a, A>>>,
    len: usize,
    payload: [u8; PAYLOAD],
}

type Link<'a, A> = Option<<A as QueryAlloc<'a>>::Own<Node<'a, A>>>;

/// Creates `nodes` nodes, each with a copy of one of the `payloads`, newest first.
fn build<'a, A: QueryAlloc<'a>>(alloc: A, nodes: usize, payloads: &[Vec<u8>]) -> Link<'a, A> {
    let mut head = None;
    for i in 0..nodes {
        let source = &payloads[i % payloads.len()];
        let mut payload = [0; PAYLOAD];
        payload[..source.len()].copy_from_slice(source);
        head = Some(alloc.keep(Node {
            prev: head,
            len: source.len(),
            payload,
        }));
    }
    head
}

/// Walks the list from the newest node to the oldest.
fn walk<'a, A: QueryAlloc<'a>>(head: &Link<'a, A>) -> usize {
    let mut sum = 0;
    let mut node = head.as_deref();
    while let Some(n) = node {
        sum += n.len + usize::from(n.payload[n.len - 1]);
        node = n.prev.as_deref();
    }
    sum
}

/// Frees the nodes one by one when they own their successors (a `Box` chain, which
/// would overflow the stack if dropped recursively); an arena's references need
/// nothing, the reset takes their memory back.
fn release<'a, A: QueryAlloc<'a>>(mut head: Link<'a, A>) {
    if std::mem::needs_drop::<Link<'a, A>>() {
        while let Some(mut node) = head {
            head = node.prev.take();
        }
    }
}

/// Times of one round.
#[derive(Clone, Copy, Default)]
struct Phases {
    create: Duration,
    walk: Duration,
    release: Duration,
}

impl Phases {
    fn total(&self) -> Duration {
        self.create + self.walk + self.release
    }
}

trait Runner {
    fn round(&mut self, nodes: usize, payloads: &[Vec<u8>]) -> (Phases, usize);
}

struct Rounds<S>(S);

impl<S: Arena> Runner for Rounds<S> {
    fn round(&mut self, nodes: usize, payloads: &[Vec<u8>]) -> (Phases, usize) {
        let arena = &mut self.0;
        let start = Instant::now();
        let alloc = arena.allocator();
        let head = build(alloc, nodes, black_box(payloads));
        let built = Instant::now();
        let sum = black_box(walk::<S::Alloc<'_>>(&head));
        let walked = Instant::now();
        release::<S::Alloc<'_>>(head);
        arena.reset();
        let released = Instant::now();
        let phases = Phases {
            create: built - start,
            walk: walked - built,
            release: released - walked,
        };
        (phases, sum)
    }
}

/// Builds a [`Runner`] of a contender.
struct Runners;

impl Build for Runners {
    type Output = Box<dyn Runner>;
    fn build<S: Arena + 'static>(self, arena: S) -> Box<dyn Runner> {
        Box::new(Rounds(arena))
    }
}

/// The contenders, the reference (`Box` on malloc) first.
const CONTENDERS: [Contender; 7] = Contender::ALL;

/// The name of a contender in the table: the heap allocators keep each node in a `Box`.
fn label(contender: Contender) -> &'static str {
    match contender {
        Contender::Malloc => "Box (glibc malloc)",
        Contender::Mimalloc => "Box (mimalloc)",
        other => other.name(),
    }
}

pub fn run(args: &Args) {
    let nodes = args
        .nodes
        .unwrap_or(if args.quick { 100_000 } else { 1_000_000 });
    let rounds_wanted = args.rounds.unwrap_or(if args.quick { 5 } else { 10 });
    let out = args.report.out();
    let payloads: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("payload {i:02} {}", "x".repeat(i % 12)).into_bytes())
        .collect();
    debug_assert!(payloads.iter().all(|p| !p.is_empty() && p.len() <= PAYLOAD));

    warm_up();
    let n = CONTENDERS.len();
    let node = std::mem::size_of::<Node<'static, &'static LinearBuffer>>();
    let linear_bytes = nodes * node + 4096;
    let mut runners: Vec<_> = CONTENDERS
        .iter()
        .map(|c| c.build(linear_bytes, Runners))
        .collect();
    let mut cold = vec![Phases::default(); n];
    let mut warm = vec![Vec::with_capacity(rounds_wanted); n];
    let mut sums = Agreement::new(1);
    let progress = progress::bar(n * (rounds_wanted + 1), "rounds");
    progress.set_message("linked list");
    for (r, i) in rotations(rounds_wanted + 1, n) {
        let (phases, sum) = runners[i].round(nodes, &payloads);
        progress.inc(1);
        sums.check(0, sum, || {
            format!("{} walked a different list", label(CONTENDERS[i]))
        });
        if r == 0 {
            cold[i] = phases;
        } else {
            warm[i].push(phases);
        }
    }
    progress.finish_and_clear();
    drop(runners);

    let per_node = |d: Duration| d.as_secs_f64() * 1e9 / nodes as f64;
    let medians: Vec<Phases> = warm
        .iter()
        .map(|rounds| {
            let pick =
                |f: fn(&Phases) -> Duration| median(&mut rounds.iter().map(f).collect::<Vec<_>>());
            Phases {
                create: pick(|p| p.create),
                walk: pick(|p| p.walk),
                release: pick(|p| p.release),
            }
        })
        .collect();
    let find = |contender| CONTENDERS.iter().position(|&c| c == contender);
    let (boxed, linear) = (find(Contender::Malloc), find(Contender::Linear));
    let ratio = |i: usize, of: Option<usize>| {
        of.map_or("-".into(), |j| {
            times(medians[i].total().as_secs_f64() / medians[j].total().as_secs_f64())
        })
    };

    let mut table = Table::new(&[
        "allocator",
        "create",
        "walk",
        "release",
        "total",
        "time vs\nBox",
        "time vs\nlinear buffer",
        "cold first\nround total",
    ]);
    for (i, c) in CONTENDERS.iter().enumerate() {
        let m = medians[i];
        table.row(vec![
            label(*c).to_string(),
            format!("{:.2}", per_node(m.create)),
            format!("{:.2}", per_node(m.walk)),
            format!("{:.2}", per_node(m.release)),
            format!("{:.2}", per_node(m.total())),
            ratio(i, boxed),
            ratio(i, linear),
            format!("{:.2}", per_node(cold[i].total())),
        ]);
    }
    out.para(&format!(
        "Linked list: {nodes} nodes with a {PAYLOAD}-byte payload copied into each; \
         nanoseconds per node, median of {rounds_wanted} warm rounds after one cold round; \
         \"time vs\" is the total time over the other's (lower is faster)."
    ));
    out.table(&table);

    if let (true, Some(o), Some(b), Some(l)) = (
        args.report.notes,
        find(Contender::OneWayAlloc),
        boxed,
        linear,
    ) {
        let speedup = medians[b].total().as_secs_f64() / medians[o].total().as_secs_f64();
        let create = medians[b].create.as_secs_f64() / medians[o].create.as_secs_f64();
        let vs_linear = medians[o].total().as_secs_f64() / medians[l].total().as_secs_f64();
        let ceiling = medians[b].total().as_secs_f64() / medians[l].total().as_secs_f64();
        out.para(&format!(
            "Targets for onewayalloc: {speedup:.2}x as fast as Box over create + walk + release \
             ({create:.2}x for creation alone), target >= 5x: {} (the linear buffer, the speed \
             of light, is {ceiling:.2}x as fast as Box); {vs_linear:.2}x the linear buffer's \
             time, target <= 1.1x: {}.",
            met(speedup >= 5.0),
            met(vs_linear <= 1.1)
        ));
    }
}
