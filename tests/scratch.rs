//! `with_scratch` in both modes: a limit set in one call does not follow the arena,
//! and the call never panics during thread teardown, not even from another
//! thread-local's destructor (after the thread's pool is gone).
#![cfg_attr(feature = "nightly", feature(allocator_api))]

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use onewayalloc::collections::Vec;
use onewayalloc::with_scratch;

#[test]
fn a_limit_set_in_one_call_does_not_follow_the_arena() {
    with_scratch(|arena| {
        arena.set_limit(Some(arena.stats().capacity));
        assert!(arena.try_alloc_bytes(1 << 20).is_err());
    });
    with_scratch(|arena| {
        assert_eq!(arena.limit(), None);
        assert_eq!(arena.alloc_bytes(1 << 20).len(), 1 << 20);
    });
}

/// How many teardown calls of `with_scratch` completed.
static TEARDOWN_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A thread-local whose destructor runs `with_scratch`, as logging or metrics code
/// flushing at thread exit might.
struct UsesScratchOnDrop;

impl Drop for UsesScratchOnDrop {
    fn drop(&mut self) {
        let sum = with_scratch(|arena| {
            let mut v = Vec::new_in(&*arena);
            v.extend(1..=100u32);
            v.iter().sum::<u32>()
        });
        assert_eq!(sum, 5050);
        TEARDOWN_CALLS.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static FLUSH_AT_EXIT: Cell<Option<UsesScratchOnDrop>> = const { Cell::new(None) };
}

#[test]
fn with_scratch_runs_from_another_thread_locals_destructor() {
    let threads = 4;
    let handles: std::vec::Vec<_> = (0..threads)
        .map(|i| {
            std::thread::spawn(move || {
                // The pool is initialised first on odd threads and last on even ones,
                // so its destructor runs before or after ours.
                if i % 2 == 1 {
                    with_scratch(|arena| arena.alloc(1u8).to_owned());
                }
                FLUSH_AT_EXIT.with(|cell| cell.set(Some(UsesScratchOnDrop)));
                if i % 2 == 0 {
                    with_scratch(|arena| arena.alloc(1u8).to_owned());
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("no panic during thread teardown");
    }
    assert_eq!(TEARDOWN_CALLS.load(Ordering::SeqCst), threads);
}
