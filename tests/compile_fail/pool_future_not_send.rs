// The future of tests/async_arena.rs with a `Pool` of `OneWayAlloc`s: a
// `Vec<T, &OneWayAlloc>` alive across `.await` makes it not `Send`, so
// `tokio::spawn` (here: a function with the same bound) rejects it.
use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::{OneWayAlloc, Pool};

static POOL: Pool = Pool::new();

fn require_send<F: std::future::Future + Send>(future: F) -> F {
    future
}

fn main() {
    require_send(async {
        let arena = POOL.get();
        let mut values: Vec<usize, &OneWayAlloc> = Vec::new_in(&*arena);
        values.push(1);
        std::future::ready(()).await;
        values.len()
    });
}
