//! What the standard library gives the default build, for the `no_std` build (the
//! package without its `std` feature, built with `panic = "abort"`, as the
//! `capi-release` profile does): the C library's own calls for the global
//! allocator, stderr and `abort()`, and the panic handler, which takes the fatal
//! path. Without std's panic machinery (and the backtrace printer it brings) the
//! library is a few dozen KB instead of several hundred.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::{c_int, c_void};
use core::fmt::Write;
use core::ptr;

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    fn free(ptr: *mut c_void);
    fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> c_int;
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
    fn abort() -> !;
}

/// The alignment every `malloc()` block has (glibc and musl: two words; 16 bytes
/// on 64-bit targets; 8 is what every 32-bit libc gives at least).
const MIN_ALIGN: usize = if cfg!(target_pointer_width = "64") {
    16
} else {
    8
};

/// The C library's `malloc()` family as Rust's global allocator: the arena handles,
/// and through `Counting` the pages, come from it, as they do from std's `System`
/// in the default build.
struct LibcMalloc;

// SAFETY: every block comes from `malloc()`, `realloc()` or `posix_memalign()` with
// at least the layout's size and alignment, and goes back through `free()` or
// `realloc()`, which accept blocks of all three.
unsafe impl GlobalAlloc for LibcMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= layout.size() {
            // SAFETY: `malloc()` has no precondition; the block is aligned to
            // MIN_ALIGN, which covers the layout's alignment.
            unsafe { malloc(layout.size()) }.cast()
        } else {
            let mut out = ptr::null_mut();
            // `posix_memalign` wants a power of two that is a multiple of a word.
            let align = layout.align().max(size_of::<usize>());
            // SAFETY: `out` is a valid place for the result; `align` is a power of
            // two (the layout's) and a multiple of `sizeof(void *)`.
            if unsafe { posix_memalign(&mut out, align, layout.size()) } == 0 {
                out.cast()
            } else {
                ptr::null_mut()
            }
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, _layout: Layout) {
        // SAFETY: the trait's contract: `block` came from `alloc` or `realloc`
        // here, so from the C library's allocator.
        unsafe { free(block.cast()) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MIN_ALIGN && layout.align() <= new_size {
            // SAFETY: the trait's contract: `block` is a live block of the C
            // library's allocator; `realloc()` keeps the alignment of `malloc()`.
            unsafe { realloc(block.cast(), new_size) }.cast()
        } else {
            // SAFETY: the trait's contract, forwarded to the default (allocate,
            // copy, free), which uses `alloc` and `dealloc` above.
            let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            // SAFETY: as above: `new` is valid (the trait's contract for `new_size`).
            let fresh = unsafe { self.alloc(new) };
            if !fresh.is_null() {
                // SAFETY: both blocks are live and distinct, each at least
                // `min(old, new)` bytes long.
                unsafe {
                    ptr::copy_nonoverlapping(block, fresh, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
            }
            fresh
        }
    }
}

#[global_allocator]
static ALLOCATOR: LibcMalloc = LibcMalloc;

/// Writes all of `bytes` to stderr, as far as it goes (nothing is left to do if
/// stderr is gone).
pub(crate) fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length.
        let written = unsafe { write(2, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(written) {
            Ok(n) if n > 0 => bytes = &bytes[n.min(bytes.len())..],
            _ => return,
        }
    }
}

/// Ends the process: the C library's `abort()`.
pub(crate) fn abort_process() -> ! {
    // SAFETY: `abort()` has no precondition.
    unsafe { abort() }
}

/// A Rust panic (a bug of this library): the fatal path, with the panic's message
/// and place. With `panic = "abort"` nothing unwinds, so the call that panicked is
/// not known here; the line names the library instead.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    struct Panicked<'a, 'b>(&'a core::panic::PanicInfo<'b>);
    impl core::fmt::Display for Panicked<'_, '_> {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            write!(f, "internal error, a Rust panic: {}", self.0.message())?;
            if let Some(place) = self.0.location() {
                write!(f, " at {}:{}", place.file(), place.line())?;
            }
            Ok(())
        }
    }
    crate::fatal::fatal(&|line| line.write_str("onewayalloc"), &Panicked(info))
}

// The personality routine that the unwinding tables of the precompiled `alloc`
// name (`rust_eh_personality`; std defines it, and a `no_std` program with
// `panic = "abort"` never unwinds through it). Without it a C program linked
// without `--gc-sections` fails with an undefined reference. Here it is a hidden
// alias of a function that aborts: nothing can unwind through this library (a C++
// exception thrown by a fatal handler, which the header forbids, ends the
// process), and the shared library does not export it.
#[cfg(all(unix, not(target_vendor = "apple")))]
core::arch::global_asm!(
    ".globl rust_eh_personality",
    ".hidden rust_eh_personality",
    ".set rust_eh_personality, {personality}",
    personality = sym no_unwinding,
);

/// What `rust_eh_personality` runs: the process ends.
#[cfg(all(unix, not(target_vendor = "apple")))]
extern "C" fn no_unwinding() -> ! {
    abort_process()
}
