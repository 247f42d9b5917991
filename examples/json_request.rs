//! JSON requests parsed straight into a pool arena: `#[derive(DeserializeIn)]`.
//!
//! Each request body (here a few fixed ones, as a server's handler would receive
//! them) is parsed with serde_json into a `Query` that lives in an arena taken from
//! a `Pool`: its strings, vectors and maps are arena memory, so the parse makes no
//! global allocation (when the body has no escaped strings). The answer is computed
//! in the same arena and copied out once; the arena goes back to the pool, reset.
//!
//! `cargo run --example json_request --features derive`

use onewayalloc::collections::{HashMap, Vec};
use onewayalloc::{DeserializeIn, Pool, format_in};

static POOL: Pool = Pool::new().max_idle(2);

/// A request in the shape of Netdata's data query.
#[derive(DeserializeIn)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
struct Query<'a> {
    context: &'a str,
    #[serde(alias = "dims")]
    dimensions: Vec<'a, &'a str>,
    after: i64,
    #[serde(default)]
    before: i64,
    #[serde(default = "sixty")]
    points: u32,
    group: Option<Group>,
    labels: Option<HashMap<'a, &'a str, &'a str>>,
}

fn sixty() -> u32 {
    60
}

#[derive(DeserializeIn)]
#[serde(rename_all = "lowercase")]
enum Group {
    Average,
    Max,
    Percentile(f64),
}

const BODIES: [&str; 4] = [
    r#"{"context":"system.cpu","dimensions":["user","system"],"after":-600,"group":"max"}"#,
    r#"{"context":"disk.io","dims":["reads"],"after":-60,"points":6,"labels":{"dev":"sda"}}"#,
    r#"{"context":"net.net","dimensions":[],"after":-3600,"group":{"percentile":95.0}}"#,
    r#"{"context":"oops","dimensions":[],"after":0,"unknown":1}"#,
];

/// The answer to one body, computed in a pool arena and copied out.
fn answer(body: &[u8]) -> std::string::String {
    let arena = POOL.get();
    let mut json = serde_json::Deserializer::from_slice(body);
    let query: Query = match arena
        .deserialize(&mut json)
        .and_then(|q| json.end().map(|()| q))
    {
        Ok(query) => query,
        Err(e) => return format!("400 {e}"),
    };
    let window = (query.before - query.after).max(1);
    let step = window / i64::from(query.points.max(1));
    let group = match query.group.unwrap_or(Group::Average) {
        Group::Average => format_in!(&*arena, "average"),
        Group::Max => format_in!(&*arena, "max"),
        Group::Percentile(p) => format_in!(&*arena, "p{p}"),
    };
    let dev = query
        .labels
        .as_ref()
        .and_then(|l| l.get("dev"))
        .copied()
        .unwrap_or("-");
    let text = format_in!(
        &*arena,
        "200 {} {:?} dims={:?} points={} step={}s group={} dev={}",
        query.context,
        (query.after, query.before),
        query.dimensions,
        query.points,
        step,
        group,
        dev,
    );
    text.as_str().to_owned()
}

fn main() {
    for body in BODIES {
        println!("{}", answer(body.as_bytes()));
    }
    println!("pool: {:?}", POOL.stats());
}
