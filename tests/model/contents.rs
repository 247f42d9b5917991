//! Block contents: every raw block is filled with a pattern that shows whether it
//! kept its bytes, and where they went if they moved.

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use allocator_api2::alloc::{AllocError, Allocator};
use onewayalloc::OneWayAlloc;

/// Byte `i` of a block with seed `s` is `(s + i) % PERIOD`. The prime period makes
/// a block copied to a shifted position (by any power of two) differ.
const PERIOD: usize = 251;
/// Bytes compared or copied at a time.
pub const CHUNK: usize = PERIOD * 64;

/// The pattern from seed 0, long enough for a chunk from any seed. Built at compile
/// time: under Miri a loop of 16 K iterations takes seconds.
static PATTERN: [u8; CHUNK + PERIOD] = {
    let mut pattern = [0; CHUNK + PERIOD];
    let mut i = 0;
    while i < pattern.len() {
        pattern[i] = (i % PERIOD) as u8;
        i += 1;
    }
    pattern
};

static ZEROS: [u8; CHUNK] = [0; CHUNK];

/// Whether every byte is zero (compared a chunk at a time: a `memcmp` under Miri).
pub fn is_zeroed(bytes: &[u8]) -> bool {
    bytes
        .chunks(CHUNK)
        .all(|chunk| chunk == &ZEROS[..chunk.len()])
}

/// A block the runner allocated directly and filled with its pattern.
#[derive(Clone, Copy, Debug)]
pub struct Raw {
    pub ptr: NonNull<u8>,
    pub size: usize,
    pub align: usize,
    pub seed: usize,
}

impl Raw {
    /// A block just allocated, with a pattern chosen by `salt` (not yet written).
    pub fn new(ptr: NonNull<u8>, layout: Layout, salt: u64) -> Raw {
        Raw {
            ptr,
            size: layout.size(),
            align: layout.align(),
            seed: Raw::seed(salt),
        }
    }

    /// The seed of the pattern that `salt` chooses.
    pub fn seed(salt: u64) -> usize {
        (salt % PERIOD as u64) as usize
    }

    pub fn layout(&self) -> Layout {
        Layout::from_size_align(self.size, self.align).unwrap()
    }

    /// The same block at `ptr` with `layout` (after a resize): same pattern.
    pub fn resized(&self, ptr: NonNull<u8>, layout: Layout) -> Raw {
        Raw {
            ptr,
            size: layout.size(),
            align: layout.align(),
            seed: self.seed,
        }
    }

    /// Whether the block is aligned as it was asked to be.
    pub fn check_alignment(&self) {
        assert_eq!(
            self.ptr.addr().get() % self.align,
            0,
            "{self:?}: misaligned block"
        );
    }

    /// Writes the pattern over the block from byte `from` on.
    pub fn fill_from(&self, from: usize) {
        let mut offset = from;
        while offset < self.size {
            let n = (self.size - offset).min(CHUNK);
            // SAFETY: the block is live and holds `size` bytes; the pattern source is
            // `CHUNK + PERIOD` bytes long and `(seed + offset) % PERIOD < PERIOD`.
            unsafe {
                let src = PATTERN.as_ptr().add((self.seed + offset) % PERIOD);
                ptr::copy_nonoverlapping(src, self.ptr.as_ptr().add(offset), n);
            }
            offset += n;
        }
    }

    /// Checks that the first `len` bytes hold the pattern: all of them (with `memcmp`,
    /// cheap under Miri) or, if not `full`, three of them.
    pub fn verify(&self, len: usize, full: bool) {
        if full {
            let mut offset = 0;
            while offset < len {
                let n = (len - offset).min(CHUNK);
                // SAFETY: the block is live and its first `len` bytes are initialized.
                let got = unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().add(offset), n) };
                let start = (self.seed + offset) % PERIOD;
                let want = &PATTERN[start..start + n];
                assert!(
                    got == want,
                    "{self:?}: bytes {offset}..{} changed",
                    offset + n
                );
                offset += n;
            }
        } else {
            for i in [0, len / 2, len.wrapping_sub(1)]
                .into_iter()
                .filter(|&i| i < len)
            {
                // SAFETY: as above, `i < len`.
                let byte = unsafe { self.ptr.as_ptr().add(i).read() };
                assert_eq!(
                    usize::from(byte),
                    (self.seed + i) % PERIOD,
                    "{self:?}: byte {i}"
                );
            }
        }
    }
}

/// Indices to check in a collection of `len` items: all or a few.
pub fn probes(len: usize, full: bool) -> impl Iterator<Item = usize> {
    let step = if full { 1 } else { (len / 2).max(1) };
    (0..len).step_by(step).chain(len.checked_sub(1))
}

/// The first `N` bytes of the pattern from seed `seed` (`seed < PERIOD`), as an
/// array: the contents of a typed value.
fn pattern<const N: usize>(seed: usize) -> [u8; N] {
    let mut bytes = [0; N];
    bytes.copy_from_slice(&PATTERN[seed..seed + N]);
    bytes
}

/// Declares the typed value classes (each `N` bytes aligned to `A`, holding the
/// pattern) and [`place_typed`], which places one with the typed calls.
macro_rules! typed_classes {
    ($($class:literal => $name:ident: [u8; $size:literal], align $align:literal;)*) => {
        $(
            #[repr(C, align($align))]
            #[derive(Clone, Copy)]
            struct $name([u8; $size]);
        )*

        /// How many typed value classes there are.
        pub const TYPED_CLASSES: usize = [$($class),*].len();

        /// Places a value of class `class % TYPED_CLASSES`, holding the pattern from
        /// `seed`, with `alloc_with` (if `with`) or `alloc`, or their `try_` twins
        /// if `fallible`. Returns the value's layout and where it went.
        pub fn place_typed<A: Allocator>(
            arena: &OneWayAlloc<A>,
            class: usize,
            with: bool,
            fallible: bool,
            seed: usize,
        ) -> (Layout, Result<NonNull<u8>, AllocError>) {
            match class % TYPED_CLASSES {
                $($class => (
                    Layout::new::<$name>(),
                    place(arena, with, fallible, $name(pattern::<$size>(seed))),
                ),)*
                _ => unreachable!(),
            }
        }
    };
}

// Sizes below and above 4 KiB (the fast path's two compile-time forms) and
// alignments up to 8 KiB (above 4 KiB: the run-time form).
typed_classes! {
    0 => Typed1: [u8; 1], align 1;
    1 => Typed3: [u8; 3], align 1;
    2 => Typed2: [u8; 2], align 2;
    3 => Typed8: [u8; 8], align 8;
    4 => Typed24: [u8; 24], align 8;
    5 => Typed16: [u8; 16], align 16;
    6 => Typed64: [u8; 64], align 64;
    7 => Typed200: [u8; 200], align 4;
    8 => Typed4095: [u8; 4095], align 1;
    9 => Typed4096: [u8; 4096], align 16;
    10 => Typed5000: [u8; 5000], align 8;
    11 => TypedPage: [u8; 4096], align 4096;
    12 => TypedOverAligned: [u8; 8192], align 8192;
}

/// One of the four typed calls.
fn place<T, A: Allocator>(
    arena: &OneWayAlloc<A>,
    with: bool,
    fallible: bool,
    value: T,
) -> Result<NonNull<u8>, AllocError> {
    let placed = match (fallible, with) {
        (false, false) => Ok(arena.alloc(value)),
        (false, true) => Ok(arena.alloc_with(|| value)),
        (true, false) => arena.try_alloc(value),
        (true, true) => arena.try_alloc_with(|| value),
    };
    placed.map(|value| NonNull::from(value).cast())
}
