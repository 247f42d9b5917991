//! An async request handler on tokio's multi-threaded runtime that keeps its arena
//! data across `.await`: a `SyncPool` guard.
//!
//! Each request is a JSON order. The handler takes a `SyncOneWayAlloc` from the pool,
//! parses the order into it (the customer and every item name copied into the
//! arena, the items in an arena `Vec`), then awaits: a stock service (another task)
//! answers over a channel, and a short timer stands in for a database. After the
//! awaits, on whichever worker thread resumed the task, it builds its answer from
//! the arena data. The future is `tokio::spawn`ed, so it must be `Send`: it is,
//! because `&SyncOneWayAlloc` is `Send` (with a `Pool` of `OneWayAlloc`s the same
//! handler does not compile). The guard drops at the end of the handler and its
//! arena goes back to the pool, reset.
//!
//! It serves a fixed batch of requests (one of them malformed) and exits:
//! `cargo run --example async_handler`.

// With the `nightly` feature the `Allocator` trait is std's, still unstable.
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::fmt;
use std::time::Duration;

use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::{Pool, SyncOneWayAlloc, SyncPool};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use tokio::sync::{mpsc, oneshot};

/// The handlers' arenas: what the load needs is kept, the rest decays.
static POOL: SyncPool = Pool::new_sync().max_idle(8);

/// An order parsed into a request's arena: every string and the list live there.
struct Order<'a> {
    customer: &'a str,
    items: Vec<&'a str, &'a SyncOneWayAlloc>,
}

/// A question to the stock service: how many of these items are in stock.
struct StockQuery {
    items: std::vec::Vec<String>,
    reply: oneshot::Sender<usize>,
}

/// The handler: parse into the arena, await, answer from the arena data.
async fn handle(body: &str, stock: mpsc::Sender<StockQuery>) -> Result<String, String> {
    let arena = POOL.get();
    // Where `arena.deserialize(&mut serde_json::Deserializer::from_str(body))` goes
    // once `DeserializeIn` takes a `SyncOneWayAlloc` (with `#[derive(DeserializeIn)]`
    // on `Order`); until then a hand-written seed (below) parses into the arena.
    let order = InArena(&arena)
        .deserialize(&mut serde_json::Deserializer::from_str(body))
        .map_err(|e| format!("bad order: {e}"))?;

    // Awaits while `order` (arena data) is alive: a channel, then a timer.
    let (reply, answer) = oneshot::channel();
    let query = StockQuery {
        items: order.items.iter().map(|item| item.to_string()).collect(),
        reply,
    };
    stock
        .send(query)
        .await
        .map_err(|_| "the stock service is gone")?;
    let in_stock = answer
        .await
        .map_err(|_| "the stock service did not answer")?;
    tokio::time::sleep(Duration::from_millis(1)).await;

    // After the awaits: the answer built from the arena data, sorted in the arena.
    let mut sorted: Vec<&str, &SyncOneWayAlloc> = Vec::with_capacity_in(order.items.len(), &*arena);
    sorted.extend(order.items.iter().copied());
    sorted.sort_unstable();
    let mut lines = std::vec::Vec::new();
    for group in sorted.chunk_by(|a, b| a == b) {
        lines.push(format!("{} {}", group.len(), group[0]));
    }
    Ok(format!(
        "{}: {} ({in_stock} of {} in stock)",
        order.customer,
        lines.join(", "),
        order.items.len()
    ))
}

/// The stock service: everything but "gpu" is in stock.
async fn stock_service(mut queries: mpsc::Receiver<StockQuery>) {
    while let Some(query) = queries.recv().await {
        let in_stock = query.items.iter().filter(|item| *item != "gpu").count();
        let _ = query.reply.send(in_stock); // a handler that gave up is no error here
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (stock, queries) = mpsc::channel(16);
    let service = tokio::spawn(stock_service(queries));
    let customers = ["ann", "bob", "chen", "dora"];
    let mut requests: std::vec::Vec<String> = (0..32)
        .map(|i| {
            let items: std::vec::Vec<String> = (0..=i % 5)
                .map(|k| format!("\"{}\"", ["cpu", "disk", "gpu", "ram"][(i + k * k) % 4]))
                .collect();
            format!(
                r#"{{"customer": "{}", "items": [{}]}}"#,
                customers[i % 4],
                items.join(", ")
            )
        })
        .collect();
    requests.push(r#"{"customer": "eve", "items": "cpu"}"#.to_string()); // malformed

    // Every request its own task, all at once: they interleave on the two workers
    // and move between them at their awaits.
    let handlers: std::vec::Vec<_> = requests
        .iter()
        .map(|body| tokio::spawn(handle_owned(body.clone(), stock.clone())))
        .collect();
    let mut answered = 0;
    for (i, handler) in handlers.into_iter().enumerate() {
        let answer = handler.await.expect("a handler panicked");
        match (&answer, i) {
            (Ok(text), 0..4) => println!("request {i}: {text}"),
            (Ok(_), _) => {}
            (Err(error), _) => println!("request {i}: {error}"),
        }
        answered += usize::from(answer.is_ok());
    }
    drop(stock);
    service.await.expect("the stock service panicked");
    assert_eq!(answered, 32, "every well-formed order is answered");
    let stats = POOL.stats();
    println!(
        "{answered} orders answered, 1 refused; the pool keeps {} idle arenas ({} KiB)",
        stats.idle_arenas,
        stats.idle_bytes / 1024
    );
}

/// `handle` for a task of its own (which needs `'static` arguments).
async fn handle_owned(body: String, stock: mpsc::Sender<StockQuery>) -> Result<String, String> {
    handle(&body, stock).await
}

/// Parses an [`Order`] into the arena: `{"customer": "...", "items": ["...", ...]}`.
struct InArena<'a>(&'a SyncOneWayAlloc);

impl<'de, 'a> DeserializeSeed<'de> for InArena<'a> {
    type Value = Order<'a>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Order<'a>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, 'a> Visitor<'de> for InArena<'a> {
    type Value = Order<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an order: {\"customer\": string, \"items\": [string]}")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Order<'a>, M::Error> {
        let (mut customer, mut items) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "customer" => customer = Some(map.next_value_seed(ArenaStr(self.0))?),
                "items" => items = Some(map.next_value_seed(ArenaStrs(self.0))?),
                _ => drop(map.next_value::<de::IgnoredAny>()?),
            }
        }
        Ok(Order {
            customer: customer.ok_or_else(|| de::Error::missing_field("customer"))?,
            items: items.ok_or_else(|| de::Error::missing_field("items"))?,
        })
    }
}

/// A string copied into the arena.
struct ArenaStr<'a>(&'a SyncOneWayAlloc);

impl<'de, 'a> DeserializeSeed<'de> for ArenaStr<'a> {
    type Value = &'a str;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<&'a str, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'a> Visitor<'_> for ArenaStr<'a> {
    type Value = &'a str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<&'a str, E> {
        Ok(self.0.alloc_str(text))
    }
}

/// A list of strings in an arena `Vec`, each copied into the arena.
struct ArenaStrs<'a>(&'a SyncOneWayAlloc);

impl<'de, 'a> DeserializeSeed<'de> for ArenaStrs<'a> {
    type Value = Vec<&'a str, &'a SyncOneWayAlloc>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, 'a> Visitor<'de> for ArenaStrs<'a> {
    type Value = Vec<&'a str, &'a SyncOneWayAlloc>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of strings")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut items = Vec::new_in(self.0);
        while let Some(item) = seq.next_element_seed(ArenaStr(self.0))? {
            items.push(item);
        }
        Ok(items)
    }
}
