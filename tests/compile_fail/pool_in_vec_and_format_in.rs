// A `Pool` is not an arena: `vec![in ...]` and `format_in!` want a guard too.
use onewayalloc::{Pool, format_in, vec};

static POOL: Pool = Pool::new();

fn main() {
    let _ = vec![in &POOL; 1, 2];
    let _ = format_in!(&POOL, "{}", 1);
}
