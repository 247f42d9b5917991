// std's `Vec` (the arena's is `onewayalloc::collections::Vec`) is not built in an
// arena by `collect_in`.
use onewayalloc::OneWayAlloc;
use onewayalloc::collections::CollectIn;

fn main() {
    let arena = OneWayAlloc::new();
    let _: Vec<u32> = (0..3).collect_in(&arena);
}
