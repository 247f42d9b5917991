use onewayalloc::DeserializeIn;
use onewayalloc::collections::sync as arena;

// Collections of the thread-safe arena without `#[onewayalloc(arena = ...)]`.
#[derive(DeserializeIn)]
struct Request<'a> {
    names: arena::Vec<'a, &'a str>,
}

fn main() {}
