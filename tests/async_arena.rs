//! Arena data held across `.await` in tasks of tokio's multi-threaded runtime: a
//! `tokio::spawn`ed future holding a `Vec<T, &SyncOneWayAlloc>` (from a `SyncPool`
//! guard) across awaits compiles, since the guard is `Send + Sync`, and runs with
//! its data intact whichever worker resumes it. (The same future with a
//! `OneWayAlloc` does not compile: tests/compile_fail/pool_future_not_send.rs.)
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::sync::Arc;
use std::time::Duration;

use onewayalloc::allocator_api2::vec::Vec;
use onewayalloc::{Pool, SyncOneWayAlloc, SyncPool};
use tokio::sync::Barrier;

/// Fewer tasks under Miri, the same properties.
const fn miri_or(miri: usize, native: usize) -> usize {
    if cfg!(miri) { miri } else { native }
}

static POOL: SyncPool = Pool::new_sync();

/// One task: arena data built, held across awaits (the barrier makes every task
/// wait for the others, so tasks interleave on the workers and move between
/// them), then read and extended.
async fn task(id: usize, barrier: Arc<Barrier>) -> usize {
    let arena = POOL.get();
    let mut values: Vec<usize, &SyncOneWayAlloc> = Vec::new_in(&*arena);
    values.extend((0..100).map(|i| i * id));
    let name: &str = arena.alloc_str(&format!("task {id}"));
    barrier.wait().await;
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    values.extend((100..200).map(|i| i * id)); // grown on whichever thread resumed
    assert!(values.iter().enumerate().all(|(i, &v)| v == i * id));
    assert_eq!(name, format!("task {id}"));
    values.iter().sum()
}

#[test]
fn spawned_tasks_hold_sync_arena_data_across_awaits() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let tasks = miri_or(4, 32);
    let barrier = Arc::new(Barrier::new(tasks));
    let sums = runtime.block_on(async {
        let handles: std::vec::Vec<_> = (0..tasks)
            .map(|id| tokio::spawn(task(id, Arc::clone(&barrier))))
            .collect();
        let mut sums = std::vec::Vec::new();
        for handle in handles {
            sums.push(handle.await.unwrap());
        }
        sums
    });
    for (id, sum) in sums.into_iter().enumerate() {
        assert_eq!(sum, id * (0..200).sum::<usize>());
    }
    // Every guard came back: all tasks were out at once, so the pool keeps them.
    let stats = POOL.stats();
    assert_eq!(stats.idle_arenas, tasks.min(Pool::DEFAULT_MAX_IDLE));
    assert!(stats.idle_bytes <= POOL.max_idle_bytes());
}
