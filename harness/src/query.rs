//! Netdata's context query, written once and generic over the allocator, and the
//! metrics database it reads.
//!
//! Per dimension the query allocates the dimension struct, copies its id and name
//! strings, fills a points buffer and adds it to its chart's `Vec`, to the virtual
//! chart and to an id -> index `HashMap`; then it aggregates by dimension name, looks
//! dimensions up by id, and drops it all. Only how a string and a struct are kept
//! differs between allocators ([`QueryAlloc`]).

use std::future::Future;
use std::ops::DerefMut;

use onewayalloc::OneWayAlloc;
use onewayalloc::allocator_api2::alloc::{Allocator, Global};
use onewayalloc::allocator_api2::{boxed::Box, vec::Vec};
use onewayalloc::hashbrown::{DefaultHashBuilder, HashMap};

use crate::compat::{BumpScopeApi2 as ScopeRef, Mi as MiAlloc};
use crate::linear::LinearBuffer;

/// What a query needs from an allocator besides `Allocator`: a way to keep a string
/// (Netdata's `strdupz`) and a way to keep one value (the per-dimension struct, a
/// list node).
///
/// Heap allocators keep them in `Box`es that are freed one by one when the query is
/// dropped; arenas keep them with their own `alloc_str` and `alloc` and free nothing
/// until the reset. Both ways make exactly one allocation and one copy per call.
pub trait QueryAlloc<'a>: Allocator + Copy + 'a {
    type Str: AsRef<str> + 'a;
    type Own<T: 'a>: DerefMut<Target = T> + 'a;
    fn keep_str(self, s: &str) -> Self::Str;
    fn keep<T: 'a>(self, value: T) -> Self::Own<T>;
}

/// `Box<str, A>` with one allocation of exactly `s.len()` bytes, like `strdup`.
pub fn box_str_in<A: Allocator>(s: &str, alloc: A) -> Box<str, A> {
    let mut bytes = Vec::with_capacity_in(s.len(), alloc);
    bytes.extend_from_slice(s.as_bytes());
    let (raw, alloc) = Box::into_raw_with_allocator(bytes.into_boxed_slice());
    // SAFETY: the bytes are a copy of a `str`, so valid UTF-8, and `str` has the
    // layout of `[u8]`; the box came from `alloc`.
    unsafe { Box::from_raw_in(raw as *mut str, alloc) }
}

/// The heap allocators keep strings and values in `Box`es, freed one by one.
macro_rules! heap_keeps {
    ($($alloc:ty),* $(,)?) => {$(
        impl<'a> QueryAlloc<'a> for $alloc {
            type Str = Box<str, $alloc>;
            type Own<T: 'a> = Box<T, $alloc>;
            fn keep_str(self, s: &str) -> Self::Str {
                box_str_in(s, self)
            }
            fn keep<T: 'a>(self, value: T) -> Self::Own<T> {
                Box::new_in(value, self)
            }
        }
    )*};
}

/// The arenas keep them with their own `alloc_str` and `alloc` (`[generics] type`).
macro_rules! arena_keeps {
    ($([$($generics:tt)*] $arena:ty),* $(,)?) => {$(
        impl<'a, $($generics)*> QueryAlloc<'a> for &'a $arena {
            type Str = &'a str;
            type Own<T: 'a> = &'a mut T;
            fn keep_str(self, s: &str) -> &'a str {
                self.alloc_str(s)
            }
            fn keep<T: 'a>(self, value: T) -> &'a mut T {
                self.alloc(value)
            }
        }
    )*};
}

heap_keeps!(Global, MiAlloc);
arena_keeps!(
    [B: Allocator + 'a] OneWayAlloc<B>,
    [B: Allocator + 'a] onewayalloc::SyncOneWayAlloc<B>,
    [] bumpalo::Bump,
    [] LinearBuffer,
);

impl<'a> QueryAlloc<'a> for ScopeRef<'a> {
    type Str = &'a str;
    type Own<T: 'a> = &'a mut T;
    fn keep_str(self, s: &str) -> &'a str {
        self.0.alloc_str(s).into_ref()
    }
    fn keep<T: 'a>(self, value: T) -> &'a mut T {
        bump_scope::BumpBox::leak(self.0.alloc(value))
    }
}

/// The metrics database the queries read: chart and dimension ids and names exist
/// before any query (as in Netdata), so a query copies them instead of formatting.
pub struct Database {
    pub charts: std::vec::Vec<SourceChart>,
    pub dims: usize,
    pub points: usize,
}

pub struct SourceChart {
    pub id: String,
    pub dims: std::vec::Vec<SourceDim>,
}

pub struct SourceDim {
    /// Unique in the context: "app7.cpu.dim3".
    pub id: String,
    /// Shared by the same dimension of every chart: "dim3".
    pub name: String,
}

impl Database {
    pub fn new(charts: usize, dims: usize, points: usize) -> Self {
        let charts = (0..charts)
            .map(|c| {
                let id = format!("app{c}.cpu");
                let dims = (0..dims)
                    .map(|d| SourceDim {
                        id: format!("{id}.dim{d}"),
                        name: format!("dim{d}"),
                    })
                    .collect();
                SourceChart { id, dims }
            })
            .collect();
        Database {
            charts,
            dims,
            points,
        }
    }

    pub fn dimensions(&self) -> usize {
        self.charts.len() * self.dims
    }
}

struct Dimension<'a, A: QueryAlloc<'a>> {
    id: A::Str,
    name: A::Str,
    points: Vec<f64, A>,
}

struct Chart<'a, A: QueryAlloc<'a>> {
    id: A::Str,
    dimensions: Vec<A::Own<Dimension<'a, A>>, A>,
}

/// Every dimension of the context, indexed by id and grouped by name.
struct VirtualChart<'q, 'a, A: QueryAlloc<'a>> {
    dimensions: Vec<&'q Dimension<'a, A>, A>,
    by_id: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    by_name: HashMap<&'q str, usize, DefaultHashBuilder, A>,
    /// Per name: the sum of all its points and how many there are.
    groups: Vec<(f64, usize), A>,
}

/// Lookups by id after the virtual chart is built.
pub const LOOKUPS: usize = 1000;

/// A cheap deterministic sample, an integer so that sums are exact.
fn sample(query: usize, chart: usize, dim: usize, t: usize) -> f64 {
    ((query * 131 + chart * 31 + dim * 17 + t * 7) & 1023) as f64
}

/// One context query, the same code for every allocator: build the charts (per
/// dimension: the dimension struct, its id and name strings, its points buffer and its
/// slot in its chart's `Vec`), build the virtual chart (a slot per dimension, an
/// id -> index map entry per dimension, a name -> group map), aggregate and look up
/// into a checksum, and drop it all. Returns the checksum.
pub fn query<'a, A: QueryAlloc<'a>>(alloc: A, db: &Database, seed: usize) -> f64 {
    answer(alloc, db, seed, |result| result.checksum())
}

/// The context query of [`query`], whose result `respond` turns into the answer (the
/// checksum, a JSON body) before the query's structures are dropped.
pub fn answer<'a, A: QueryAlloc<'a>, R>(
    alloc: A,
    db: &Database,
    seed: usize,
    respond: impl FnOnce(&QueryResult<'_, 'a, A>) -> R,
) -> R {
    let charts = build_charts(alloc, db, seed);
    let vc = build_virtual_chart(alloc, db, &charts);
    respond(&QueryResult {
        alloc,
        db,
        charts: &charts,
        vc: &vc,
    })
}

/// [`answer`] with an `.await` of `pause` between the query and `respond`: the
/// handler of a server that awaits (a database, another service) while it holds
/// the query's structures. Its future is `Send` when `A` is.
pub async fn answer_after_await<'a, A: QueryAlloc<'a>, R>(
    alloc: A,
    db: &Database,
    seed: usize,
    pause: impl Future<Output = ()>,
    respond: impl FnOnce(&QueryResult<'_, 'a, A>) -> R,
) -> R {
    let charts = build_charts(alloc, db, seed);
    let vc = build_virtual_chart(alloc, db, &charts);
    pause.await;
    respond(&QueryResult {
        alloc,
        db,
        charts: &charts,
        vc: &vc,
    })
}

/// The charts of the query: per dimension the dimension struct, its id and name
/// strings, its points buffer and its slot in its chart's `Vec`.
fn build_charts<'a, A: QueryAlloc<'a>>(
    alloc: A,
    db: &Database,
    seed: usize,
) -> Vec<Chart<'a, A>, A> {
    let mut charts = Vec::new_in(alloc);
    for (c, source) in db.charts.iter().enumerate() {
        let id = alloc.keep_str(&source.id);
        let mut dimensions = Vec::new_in(alloc);
        for (d, dim) in source.dims.iter().enumerate() {
            let mut points = Vec::with_capacity_in(db.points, alloc);
            points.extend((0..db.points).map(|t| sample(seed, c, d, t)));
            let dimension = Dimension {
                id: alloc.keep_str(&dim.id),
                name: alloc.keep_str(&dim.name),
                points,
            };
            dimensions.push(alloc.keep(dimension));
        }
        charts.push(Chart { id, dimensions });
    }
    charts
}

/// The virtual chart over `charts`: a slot per dimension, an id -> index map entry
/// per dimension, a name -> group map, and each group's sum.
fn build_virtual_chart<'q, 'a, A: QueryAlloc<'a>>(
    alloc: A,
    db: &Database,
    charts: &'q [Chart<'a, A>],
) -> VirtualChart<'q, 'a, A> {
    let total = db.dimensions(); // known up front, as in Netdata
    let mut vc = VirtualChart {
        dimensions: Vec::with_capacity_in(total, alloc),
        by_id: HashMap::with_capacity_in(total, alloc),
        by_name: HashMap::new_in(alloc),
        groups: Vec::new_in(alloc),
    };
    for chart in charts {
        for dim in &chart.dimensions {
            let dim: &Dimension<'a, A> = dim;
            vc.by_id.insert(dim.id.as_ref(), vc.dimensions.len());
            vc.dimensions.push(dim);
            let groups = &mut vc.groups;
            let g = *vc.by_name.entry(dim.name.as_ref()).or_insert_with(|| {
                groups.push((0.0, 0));
                groups.len() - 1
            });
            groups[g].0 += dim.points.iter().sum::<f64>();
            groups[g].1 += dim.points.len();
        }
    }
    vc
}

/// What a context query built, before it is dropped: its virtual chart.
pub struct QueryResult<'q, 'a, A: QueryAlloc<'a>> {
    alloc: A,
    db: &'q Database,
    charts: &'q [Chart<'a, A>],
    vc: &'q VirtualChart<'q, 'a, A>,
}

/// The dimensions of one name (one per chart) and their points.
pub struct Group<'q> {
    pub name: &'q str,
    pub dimensions: usize,
    pub points: usize,
    /// The sum of all their points.
    pub sum: f64,
}

impl<'a, A: QueryAlloc<'a>> QueryResult<'_, 'a, A> {
    /// The allocator the query ran on (the request's arena).
    pub fn allocator(&self) -> A {
        self.alloc
    }

    /// The checksum: the average of each group, and the last point of
    /// [`LOOKUPS`] dimensions looked up by id.
    pub fn checksum(&self) -> f64 {
        let (db, vc, charts) = (self.db, self.vc, self.charts);
        let mut checksum: f64 = vc.groups.iter().map(|&(sum, n)| sum / n as f64).sum();
        for k in 0..LOOKUPS {
            let c = k * 7919 % charts.len();
            let d = k * 104_729 % db.dims;
            let dim = vc.dimensions[vc.by_id[db.charts[c].dims[d].id.as_str()]];
            debug_assert_eq!(dim.name.as_ref(), db.charts[c].dims[d].name);
            debug_assert!(charts[c].id.as_ref() == db.charts[c].id);
            checksum += dim.points.last().copied().unwrap_or(0.0);
        }
        checksum
    }

    /// The groups by dimension name, in name order (a map's order is random), in a
    /// `Vec` of the query's allocator.
    pub fn groups_by_name(&self) -> Vec<Group<'_>, A> {
        let points = self.db.points.max(1);
        let mut groups = Vec::with_capacity_in(self.vc.groups.len(), self.alloc);
        groups.extend(self.vc.by_name.iter().map(|(&name, &g)| {
            let (sum, n) = self.vc.groups[g];
            Group {
                name,
                dimensions: n / points,
                points: n,
                sum,
            }
        }));
        groups.sort_unstable_by_key(|group| group.name);
        groups
    }

    /// Dimensions in the virtual chart.
    pub fn dimensions(&self) -> usize {
        self.vc.dimensions.len()
    }
}
