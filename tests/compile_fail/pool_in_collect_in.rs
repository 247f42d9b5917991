// A `Pool` is not an arena: `collect_in` wants a guard from `POOL.get()`.
use onewayalloc::Pool;
use onewayalloc::collections::{self as arena, CollectIn};

static POOL: Pool = Pool::new();

fn main() {
    let _: arena::Vec<u32> = (0..3).collect_in(&POOL);
}
