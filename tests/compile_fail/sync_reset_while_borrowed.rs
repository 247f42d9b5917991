// `SyncOneWayAlloc::reset` takes `&mut self`: a collection (or any block) of the
// arena alive across it is rejected, as for `OneWayAlloc`.
use onewayalloc::SyncOneWayAlloc;
use onewayalloc::allocator_api2::vec::Vec;

fn main() {
    let mut arena = SyncOneWayAlloc::new();
    let mut v: Vec<u32, &SyncOneWayAlloc> = Vec::new_in(&arena);
    v.push(1);
    arena.reset();
    v.push(2);
}
