//! The context query's tables and benchmark notes.

use std::fmt::Write as _;
use std::time::Duration;

use onewayalloc_harness::contenders::Kind;
use onewayalloc_harness::output::{Out, Table, fmt_duration, met, mib, times};
use onewayalloc_harness::worker::Memory;

use super::measure::{CONTENDERS, Timings};

/// For each contender, the fastest arena other than itself (bumpalo, bump-scope or
/// onewayalloc; the linear buffer is not one) and its rate.
fn best_other_arena(all: &[Timings]) -> Vec<Option<(usize, f64)>> {
    (0..CONTENDERS.len())
        .map(|i| {
            CONTENDERS
                .iter()
                .enumerate()
                .filter(|&(j, c)| j != i && c.kind().is_arena())
                .map(|(j, _)| (j, all[j].rate()))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .collect()
}

pub(super) fn timings_table(all: &[Timings]) -> Table {
    let mut header = vec!["allocator"];
    header.extend(Timings::HEADER);
    header.extend(["vs\nmalloc", "vs best\nother arena"]);
    let mut table = Table::new(&header);
    let reference = all[0].rate();
    let best = best_other_arena(all);
    for ((c, t), best) in CONTENDERS.iter().zip(all).zip(best) {
        let mut row = vec![row_name(c.name(), c.kind())];
        row.extend(t.cells());
        row.push(times(t.rate() / reference));
        row.push(vs_best_cell(
            c.kind(),
            best.map(|(_, rate)| t.rate() / rate),
        ));
        table.row(row);
    }
    table
}

/// The mark after onewayalloc's name in the tables.
const OWA_MARK: &str = " *";

/// A row's name: onewayalloc's marked with [`OWA_MARK`], so that it stands out.
fn row_name(name: &str, kind: Kind) -> String {
    if matches!(kind, Kind::Owa | Kind::SyncOwa) {
        format!("{name}{OWA_MARK}")
    } else {
        name.to_string()
    }
}

/// The "vs best other arena" cell: the ratio for an arena, empty for a row that is
/// no arena (the heap allocators, the linear buffer), which the column does not
/// compare.
fn vs_best_cell(kind: Kind, ratio: Option<f64>) -> String {
    if kind.is_arena() {
        ratio.map_or("-".into(), times)
    } else {
        String::new()
    }
}

/// Where the contender of `kind` sits in [`CONTENDERS`] (the first of them).
fn position_of(kind: Kind) -> Option<usize> {
    CONTENDERS.iter().position(|c| c.kind() == kind)
}

/// What "vs best other arena" compares onewayalloc with in each mode.
pub(super) fn owa_peers(seq: &[Timings], par: &[Timings]) -> String {
    let Some(owa) = position_of(Kind::Owa) else {
        return String::new();
    };
    let peer =
        |all: &[Timings]| best_other_arena(all)[owa].map_or("-", |(j, _)| CONTENDERS[j].name());
    format!(
        " For onewayalloc that is {} sequentially and {} in parallel.",
        peer(seq),
        peer(par)
    )
}

/// The throughput targets of issue 4 for onewayalloc, per mode: at least 4x malloc's
/// transaction rate, within 1.1x of the linear buffer's time, and no slower than the
/// best peer arena. The linear buffer spends nothing on allocation beyond a bump, so
/// its ratio to malloc is the most that any allocator can reach on this workload.
pub(super) fn throughput_targets(seq: &[Timings], par: &[Timings]) -> String {
    let (Some(owa), Some(linear)) = (position_of(Kind::Owa), position_of(Kind::Linear)) else {
        return String::new();
    };
    let mut text = String::from("Throughput targets for onewayalloc:");
    for (mode, all) in [("sequential", seq), ("parallel", par)] {
        let vs_malloc = |i: usize| all[i].rate() / all[0].rate();
        let (best, peer) = CONTENDERS
            .iter()
            .enumerate()
            .filter(|(_, c)| c.kind() == Kind::Arena)
            .map(|(i, c)| (all[i].rate(), c.name()))
            .fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
        let vs_linear = all[linear].rate() / all[owa].rate();
        let _ = write!(
            text,
            " {mode}: {:.2}x malloc, target >= 4x: {} (the linear buffer, the speed of light, \
             reaches {:.2}x); {vs_linear:.2}x the linear buffer's time, target <= 1.1x: {}; \
             {:.2}x the rate of the best peer ({peer}), target >= 1: {}.",
            vs_malloc(owa),
            met(vs_malloc(owa) >= 4.0),
            vs_malloc(linear),
            met(vs_linear <= 1.1),
            all[owa].rate() / best,
            met(all[owa].rate() >= best),
        );
    }
    text
}

/// `SyncOneWayAlloc` (one per worker) over `OneWayAlloc`: the time ratio per mode,
/// against the target of issue 31 (at most 1.10x).
pub(super) fn sync_target(seq: &[Timings], par: &[Timings]) -> String {
    let (Some(owa), Some(sync)) = (position_of(Kind::Owa), position_of(Kind::SyncOwa)) else {
        return String::new();
    };
    let mut text = String::from("SyncOneWayAlloc, one per worker, over onewayalloc:");
    for (mode, all) in [("sequential", seq), ("parallel", par)] {
        let ratio = all[owa].rate() / all[sync].rate();
        let _ = write!(
            text,
            " {mode} {} the time, target <= 1.10x: {};",
            times(ratio),
            met(ratio <= 1.10)
        );
    }
    text.pop();
    text.push('.');
    text
}

/// The first-query and capacity targets for onewayalloc, and its pages.
pub(super) fn memory_notes(out: Out, first: &[Duration], memory: &[Memory]) {
    let owa = position_of(Kind::Owa);
    let peers = CONTENDERS
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind() == Kind::Arena);
    let best_peer = peers.min_by_key(|&(i, _)| first[i]);
    if let (Some(o), Some((p, peer))) = (owa, best_peer) {
        let mut text = String::new();
        let _ = write!(
            text,
            "Targets for onewayalloc: first query {} vs the best peer's ({}) {}: {}. ",
            fmt_duration(first[o]),
            peer.name(),
            fmt_duration(first[p]),
            met(first[o] <= first[p])
        );
        if let (Some(cap), Some(used)) = (memory[o].capacity, memory[o].peak_used) {
            let ratio = cap as f64 / used.max(1) as f64;
            let _ = write!(
                text,
                "Capacity {} <= 1.25 x peak used {} ({ratio:.2}x): {}.",
                mib(cap),
                mib(used),
                met(ratio <= 1.25)
            );
        }
        out.para(&text);
    }
    if let Some(sizes) = owa.and_then(|o| memory[o].block_sizes.as_ref()) {
        out.para(&format!(
            "onewayalloc's pages after the run, in list order (KiB): {}.",
            runs(sizes)
        ));
    }
}

pub(super) fn memory_table(first: &[Duration], memory: &[Memory]) -> Table {
    let mut table = Table::new(&[
        "allocator",
        "first query\n(fresh)",
        "held after\nthe run",
        "peak used\nper query",
        "held /\npeak used",
        "blocks obtained\nafter query 1",
    ]);
    for ((c, t), m) in CONTENDERS.iter().zip(first).zip(memory) {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let ratio = m
            .capacity
            .zip(m.peak_used)
            .filter(|&(_, used)| used > 0)
            .map(|(cap, used)| format!("{:.2}", cap as f64 / used as f64));
        let after = m
            .blocks
            .zip(m.blocks_after_first)
            .map(|(all, first)| (all - first).to_string());
        table.row(vec![
            c.name().to_string(),
            fmt_duration(*t),
            opt(m.capacity.map(mib)),
            opt(m.peak_used.map(mib)),
            opt(ratio),
            opt(after),
        ]);
    }
    table
}

/// Page sizes in KiB with runs collapsed: "64, 128, 1024 x3, 2112".
fn runs(sizes: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for kib in sizes.iter().map(|size| size / 1024) {
        match runs.last_mut() {
            Some((k, n)) if *k == kib => *n += 1,
            _ => runs.push((kib, 1)),
        }
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|&(k, n)| match n {
            1 => k.to_string(),
            _ => format!("{k} x{n}"),
        })
        .collect();
    runs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onewayalloc_is_marked_and_only_arenas_are_compared_with_arenas() {
        assert_eq!(row_name("onewayalloc", Kind::Owa), "onewayalloc *");
        assert_eq!(row_name("bumpalo (reset)", Kind::Arena), "bumpalo (reset)");
        assert_eq!(
            row_name("SyncOneWayAlloc", Kind::SyncOwa),
            "SyncOneWayAlloc *"
        );
        assert_eq!(vs_best_cell(Kind::SyncOwa, Some(0.9)), "");
        assert_eq!(vs_best_cell(Kind::Heap, Some(0.5)), "");
        assert_eq!(vs_best_cell(Kind::Linear, Some(1.1)), "");
        assert_eq!(vs_best_cell(Kind::Arena, Some(1.0)), times(1.0));
        assert_eq!(vs_best_cell(Kind::Owa, None), "-");
    }
}
