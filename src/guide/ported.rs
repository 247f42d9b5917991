// Parses batches of request lines into an arena, summarizes each batch, and resets
// the arena between batches.
use onewayalloc::OneWayAlloc;
use onewayalloc::collections::{CollectIn, String, Vec};

/// A request; everything it refers to lives in the arena.
struct Request<'a> {
    method: &'a str,
    path: &'a [&'a str],
    lengths: &'a [usize],
    weights: &'a mut [u32],
    seen: &'a [bool],
    tags: &'a [Tag<'a>],
    query: Option<&'a mut u32>,
}

#[derive(Clone)]
struct Tag<'a> {
    name: &'a str,
}

fn parse<'a>(arena: &'a OneWayAlloc, line: &str) -> Option<Request<'a>> {
    let (method, rest) = line.split_once(' ')?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let method: &'a str = arena.alloc_str(method);
    let segments: Vec<&'a str> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| &*arena.alloc_str(segment))
        .collect_in(arena);
    let path = segments.leak(); // ported: into_bump_slice -> leak
    let lengths = arena.alloc_slice_fill_iter(path.iter().map(|segment| segment.len()));
    let weights = arena.alloc_slice_fill_copy(path.len(), 1u32);
    let seen = arena.alloc_slice_fill_default::<bool>(path.len());
    let tags = arena.alloc_slice_clone(&[Tag { name: "api" }, Tag { name: method }]);
    let query = query.parse::<u32>().map(|q| arena.alloc(q)).ok(); // ported: alloc_try_with
    if method == "POST" {
        weights[0] = 2;
    }
    Some(Request { method, path, lengths, weights, seen, tags, query })
}

fn summarize<'a>(arena: &'a OneWayAlloc, requests: &[Request<'a>]) -> &'a str {
    let mut methods: Vec<&str> = requests.iter().map(|r| r.method).collect_in(arena);
    methods.sort_unstable();
    methods.dedup();
    let depth = requests.iter().map(|r| r.path.len()).max().unwrap_or(0);
    let longest = requests.iter().flat_map(|r| r.lengths).max().copied().unwrap_or(0);
    let weight: u32 = requests.iter().map(|r| r.weights.iter().sum::<u32>()).sum();
    let unseen = requests.iter().flat_map(|r| r.seen).filter(|seen| !**seen).count();
    let tags = requests.iter().flat_map(|r| r.tags).filter(|t| t.name != "api").count();
    let mut line = String::from_str_in("methods ", arena);
    for (i, method) in methods.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(method);
    }
    let figures = onewayalloc::vec![in arena; weight as usize, depth, longest, unseen, tags];
    let names = ["weight", "depth", "longest", "unseen", "tagged"];
    for (name, figure) in names.iter().zip(&figures) {
        line.push_str(&onewayalloc::format_in!(arena, "; {} {}", name, figure)); // ported: format!
    }
    line.into_str() // ported: into_bump_str -> into_str
}

const BATCHES: [&str; 2] = [
    "GET /charts/cpu?7\nPOST /alarms\nGET /charts/cpu.user/points?30",
    "GET /info\nDELETE /alarms/disk_full?2\nbad",
];

fn main() {
    let mut arena = OneWayAlloc::with_size_hint(16 * 1024); // ported: with_capacity
    arena.set_limit(Some(4 << 20)); // ported: set_allocation_limit -> set_limit
    let mut report = std::vec::Vec::new();
    for batch in BATCHES {
        let lines = batch.lines();
        let requests: Vec<Request> = lines.filter_map(|l| parse(&arena, l)).collect_in(&arena);
        let queries = arena.alloc_with(|| 0u32);
        for query in requests.iter().filter_map(|r| r.query.as_deref()) {
            *queries += *query;
        }
        let summary = summarize(&arena, &requests);
        report.push(format!("{summary}; queries {queries}"));
        drop(requests);
        arena.reset();
    }
    assert!(arena.try_alloc([0u8; 64]).is_ok());
    assert_eq!(
        report,
        [
            "methods GET,POST; weight 7; depth 3; longest 8; unseen 6; tagged 3; queries 37",
            "methods DELETE,GET; weight 3; depth 2; longest 9; unseen 3; tagged 2; queries 2",
        ]
    );
    for line in &report {
        println!("{line}");
    }
}
