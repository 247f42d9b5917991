//! Threads that create, fill and drop arenas at once share the process's page heap
//! (src/engine/page_heap/): every arena gets memory of its own, and what they give back is
//! counted and bounded. Run under ThreadSanitizer by `.ci/run`.
#![cfg(all(target_os = "linux", target_pointer_width = "64", not(miri)))]

use std::sync::Barrier;

use onewayalloc::{OneWayAlloc, SEPARATE_BLOCKS};

#[test]
fn threads_take_and_give_back_pages_at_the_same_moment_without_sharing_them() {
    const THREADS: usize = 4;
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let barrier = &barrier;
            scope.spawn(move || {
                for round in 0..3u8 {
                    barrier.wait();
                    let arena = OneWayAlloc::new();
                    // Eight blocks of 700 KiB: the last ones are in 1 MiB pages.
                    let tag = (t as u8) * 16 + round;
                    let mut blocks: Vec<&mut [u8]> =
                        (0..8).map(|_| arena.alloc_zeroed(700 << 10, 1)).collect();
                    for block in &mut blocks {
                        block.fill(tag);
                    }
                    barrier.wait();
                    // Every other thread has written its blocks by now: ours are intact.
                    assert!(blocks.iter().all(|b| b.iter().all(|&x| x == tag)));
                    // (The sanitizer mode has no pages: every block is its own.)
                    assert!(SEPARATE_BLOCKS || arena.pages().any(|p| p.size == 1 << 20));
                    drop(arena);
                    // Another thread may release or read the figures meanwhile.
                    if t == 0 {
                        onewayalloc::release_free_pages();
                    }
                    assert!(onewayalloc::free_page_bytes() <= onewayalloc::free_page_limit());
                }
            });
        }
    });
}
