use onewayalloc::DeserializeIn;

#[derive(DeserializeIn)]
#[onewayalloc(arena = onewayalloc::SyncOneWayAlloc, pages = 4)]
struct UnknownKey<'a> {
    name: &'a str,
}

#[derive(DeserializeIn)]
#[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]
#[onewayalloc(arena = onewayalloc::OneWayAlloc)]
struct Twice<'a> {
    name: &'a str,
}

#[derive(DeserializeIn)]
struct OnField<'a> {
    #[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]
    name: &'a str,
}

#[derive(DeserializeIn)]
enum OnVariant {
    #[onewayalloc(arena = onewayalloc::SyncOneWayAlloc)]
    Unit,
}

fn main() {}
