//! The fatal path and the panic boundary.
//!
//! Every entry point runs its body through [`entry`]: a refusal the body reports
//! ([`Reason`]) and a Rust panic caught at the boundary both end in [`fatal`], which
//! writes one line to stderr that names the call and its arguments, calls the
//! handler set by `onewayalloc_set_fatal_handler` (if any) with the same line, and
//! calls `abort()`. No panic unwinds into C, whatever the profile's `panic`
//! setting: with the default `unwind` the panic is caught here; with
//! `panic = "abort"` Rust aborts before any unwinding, and in the `no_std` build
//! (without the `std` feature, which needs `panic = "abort"`) the library's own
//! panic handler takes the fatal path, naming the library instead of the call.
//!
//! The line is built in a fixed buffer on the stack: the fatal path allocates
//! nothing, since it may be running because memory ran out.

use core::ffi::{CStr, c_char, c_void};
use core::fmt::{self, Write};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The C type of a fatal handler: `void (*)(const char *message)`.
pub type FatalHandler = unsafe extern "C" fn(message: *const c_char);

/// The handler, stored as a data pointer (null: none), so any thread may set it and
/// any thread that fails reads it whole.
static HANDLER: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Whether a thread has already entered [`fatal`]: the handler is called once per
/// process, by the first fatal path, so a handler that calls back into the library
/// and fails again is not called a second time (nor by another thread that fails
/// while the first one is ending the process).
static IN_FATAL: AtomicBool = AtomicBool::new(false);

/// Sets (or with `None` clears) the handler that [`fatal`] calls.
pub(crate) fn set_handler(handler: Option<FatalHandler>) {
    let raw = handler.map_or(ptr::null_mut(), |handler| handler as *mut ());
    HANDLER.store(raw, Ordering::Release);
}

/// The handler set now, if any.
fn handler() -> Option<FatalHandler> {
    let raw = HANDLER.load(Ordering::Acquire);
    if raw.is_null() {
        None
    } else {
        // SAFETY: every non-null value in HANDLER was stored by `set_handler` from a
        // `FatalHandler`, and a function pointer survives the round trip through a
        // data pointer of the same size on every target std supports.
        Some(unsafe { core::mem::transmute::<*mut (), FatalHandler>(raw) })
    }
}

/// Bytes of the fatal line, the final newline or NUL included; longer lines are
/// cut (only a caller's `context` string can make one that long).
const LINE_CAPACITY: usize = 1024;

/// The fatal line, built on the stack.
pub(crate) struct Line {
    bytes: [u8; LINE_CAPACITY],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            bytes: [0; LINE_CAPACITY],
            len: 0,
        }
    }

    /// Appends a byte, keeping room for the final newline or NUL; control characters
    /// (a newline in a caller's string) become `?`, so the message stays one line.
    fn push(&mut self, byte: u8) {
        if self.len < LINE_CAPACITY - 1 {
            self.bytes[self.len] = if byte < 0x20 || byte == 0x7f {
                b'?'
            } else {
                byte
            };
            self.len += 1;
        }
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        s.bytes().for_each(|byte| self.push(byte));
        Ok(())
    }
}

/// Why a call cannot go on.
pub(crate) enum Reason {
    /// An allocating call got a NULL arena.
    NullArena,
    /// `add_cleanup` got a NULL cleanup function.
    NullCleanup,
    /// `strdupz` got a NULL string.
    NullString,
    /// `memdupz` or `doublesize` got a NULL source with bytes to copy.
    NullSource,
    /// A size computation overflowed `size_t`; the text names it.
    Overflow(&'static str),
    /// `mul_or_fatal` / `mul3_or_fatal`: the product overflowed; the caller's context.
    ProductOverflow(&'static str, *const c_char),
    /// The backing allocator (or the size arithmetic of the arena) refused `bytes`.
    Refused { bytes: usize },
    /// Sanitizer mode: the arena holds no block at this address.
    NotHeld,
    /// `doublesize` was asked to keep more bytes than the block has (its exact size
    /// known: any block in the sanitizer mode, the most recent one in the page mode).
    KeepExceedsBlock { block_size: usize },
    /// Page mode: `doublesize`'s bytes run past the end of the arena's most recent
    /// block, `bytes` after `src`.
    RunsPastLastBlock { bytes: usize },
    /// Page mode: the handle's `struct onewayalloc_cursor` (the header's inline
    /// path) points outside the arena's current page: the handle was overwritten,
    /// or is not a live handle.
    BadCursor,
    /// A cleanup called `onewayalloc_reset` or `onewayalloc_destroy` on its own
    /// arena while `running` (one of them) ran the arena's cleanups.
    OwnArenaInCleanup { running: &'static str },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NullArena => f.write_str("NULL arena"),
            Reason::NullCleanup => f.write_str("NULL cleanup"),
            Reason::NullString => f.write_str("NULL string"),
            Reason::NullSource => f.write_str("NULL source with bytes to copy"),
            Reason::Overflow(what) => write!(f, "{what} overflows size_t"),
            Reason::ProductOverflow(what, context) => {
                write!(f, "{what} overflows size_t, in {}", Context(*context))
            }
            Reason::Refused { bytes } => write!(
                f,
                "cannot allocate {bytes} bytes (out of memory, or too large for an arena)"
            ),
            Reason::NotHeld => f.write_str(
                "not a block this arena holds (freed already, released by \
                 onewayalloc_reset, from another arena, or not the start of a block)",
            ),
            Reason::KeepExceedsBlock { block_size } => {
                write!(f, "oldsize exceeds the block's {block_size} bytes")
            }
            Reason::RunsPastLastBlock { bytes } => write!(
                f,
                "oldsize runs past the end of the arena's most recent block, \
                 {bytes} bytes after src"
            ),
            Reason::BadCursor => f.write_str(
                "the handle's struct onewayalloc_cursor points outside the arena's \
                 current page (the handle was overwritten, or is not a live handle)",
            ),
            Reason::OwnArenaInCleanup { running } => write!(
                f,
                "called by a cleanup of this arena while {running} runs its cleanups \
                 (a cleanup must not reset or destroy its own arena)"
            ),
        }
    }
}

/// A caller's `context` string, shown as far as it is valid UTF-8 (`?` elsewhere).
struct Context(*const c_char);

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_null() {
            return f.write_str("(no context)");
        }
        // SAFETY: the header's contract for `context`: NULL or a NUL-terminated
        // string, valid for the duration of the call.
        let bytes = unsafe { CStr::from_ptr(self.0) }.to_bytes();
        for chunk in bytes.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("?")?;
            }
        }
        Ok(())
    }
}

/// A pointer argument as the fatal line shows it: `NULL` or its address.
pub(crate) struct Ptr(pub(crate) *const c_void);

impl fmt::Display for Ptr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_null() {
            f.write_str("NULL")
        } else {
            write!(f, "{:p}", self.0)
        }
    }
}

/// A Rust panic caught at the boundary (a bug of this library).
#[cfg(feature = "std")]
struct Panicked<'a>(&'a (dyn core::any::Any + Send));

#[cfg(feature = "std")]
impl fmt::Display for Panicked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = if let Some(message) = self.0.downcast_ref::<&str>() {
            message
        } else if let Some(message) = self.0.downcast_ref::<String>() {
            message.as_str()
        } else {
            "(no message)"
        };
        write!(f, "internal error, a Rust panic: {message}")
    }
}

/// Runs the body of an entry point: its value, or the fatal path for a [`Reason`]
/// it returns or a panic it raises. `describe` writes the call with its arguments;
/// it runs only on the fatal path.
#[cfg(feature = "std")]
#[inline(always)]
pub(crate) fn entry<R>(
    describe: impl Fn(&mut Line) -> fmt::Result,
    body: impl FnOnce() -> Result<R, Reason>,
) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(reason)) => fatal(&describe, &reason),
        // The payload is never dropped (dropping it could panic again): the
        // process ends.
        Err(payload) => fatal(&describe, &Panicked(&*payload)),
    }
}

/// [`entry`] of the `no_std` build: a panic cannot unwind (`panic = "abort"`), and
/// the library's panic handler takes the fatal path.
#[cfg(not(feature = "std"))]
#[inline(always)]
pub(crate) fn entry<R>(
    describe: impl Fn(&mut Line) -> fmt::Result,
    body: impl FnOnce() -> Result<R, Reason>,
) -> R {
    match body() {
        Ok(value) => value,
        Err(reason) => fatal(&describe, &reason),
    }
}

/// Writes the line to stderr in one call, as far as it goes.
#[cfg(feature = "std")]
fn write_stderr(bytes: &[u8]) {
    use std::io::Write as _;
    // Nothing is left to do if stderr is gone.
    let _ = std::io::stderr().write_all(bytes);
}
#[cfg(not(feature = "std"))]
use crate::nostd::write_stderr;

/// Ends the process with `abort()`.
#[cfg(feature = "std")]
fn abort_process() -> ! {
    std::process::abort()
}
#[cfg(not(feature = "std"))]
use crate::nostd::abort_process;

/// Writes `fatal: <call>: <reason>` and a newline to stderr in one write, calls the
/// handler with the same line (unless a fatal path has called it already), and
/// aborts.
#[cold]
#[inline(never)]
pub(crate) fn fatal(describe: &dyn Fn(&mut Line) -> fmt::Result, reason: &dyn fmt::Display) -> ! {
    let mut line = Line::new();
    // Writing into a `Line` cannot fail: it cuts what does not fit.
    let _ = line.write_str("fatal: ");
    let _ = describe(&mut line);
    let _ = write!(line, ": {reason}");
    let len = line.len;
    line.bytes[len] = b'\n';
    write_stderr(&line.bytes[..=len]);
    line.bytes[len] = 0;
    let first = !IN_FATAL.swap(true, Ordering::AcqRel);
    if first {
        if let Some(handler) = handler() {
            // SAFETY: the header's contract for handlers: a C function that takes
            // the NUL-terminated line (valid until it returns) and does not unwind.
            unsafe { handler(line.bytes.as_ptr().cast()) };
        }
    }
    abort_process()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_of(describe: impl Fn(&mut Line) -> fmt::Result, reason: &dyn fmt::Display) -> String {
        let mut line = Line::new();
        describe(&mut line).unwrap();
        write!(line, ": {reason}").unwrap();
        String::from_utf8(line.bytes[..line.len].to_vec()).unwrap()
    }

    #[test]
    fn reasons_read_as_one_line() {
        let context = c"group\nby \xffname";
        let text = line_of(
            |line| {
                write!(
                    line,
                    "onewayalloc_mul_or_fatal(nmemb={}, size=2)",
                    usize::MAX
                )
            },
            &Reason::ProductOverflow("nmemb * size", context.as_ptr()),
        );
        assert_eq!(
            text,
            format!(
                "onewayalloc_mul_or_fatal(nmemb={}, size=2): nmemb * size overflows size_t, \
                 in group?by ?name",
                usize::MAX
            )
        );
        let null = line_of(
            |line| write!(line, "f({})", Ptr(ptr::null())),
            &Reason::ProductOverflow("a * b", ptr::null()),
        );
        assert_eq!(null, "f(NULL): a * b overflows size_t, in (no context)");
    }

    #[test]
    fn a_long_line_is_cut_and_keeps_room_for_the_end() {
        let long = "x".repeat(5000);
        let mut line = Line::new();
        line.write_str(&long).unwrap();
        assert_eq!(line.len, LINE_CAPACITY - 1);
    }

    /// Set in the child process of the panic test.
    const CHILD: &str = "ONEWAYALLOC_CAPI_PANIC_CHILD";

    unsafe extern "C" fn marking_handler(message: *const c_char) {
        // SAFETY: `fatal` passes its NUL-terminated line.
        let message = unsafe { CStr::from_ptr(message) }.to_string_lossy();
        eprintln!("handler saw [{message}]");
    }

    #[test]
    fn a_panic_in_an_entry_point_is_fatal_and_does_not_unwind() {
        let name = "fatal::tests::a_panic_in_an_entry_point_is_fatal_and_does_not_unwind";
        if std::env::var_os(CHILD).is_some() {
            set_handler(Some(marking_handler));
            entry(
                |line| write!(line, "onewayalloc_example(size={})", 3),
                || -> Result<(), Reason> { panic!("boom {}", 7) },
            );
            unreachable!("entry returned after a panic");
        }
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            output.status.signal(),
            Some(6),
            "SIGABRT expected; stderr: {stderr}"
        );
        let line = "fatal: onewayalloc_example(size=3): internal error, a Rust panic: boom 7";
        assert!(stderr.contains(&format!("{line}\n")), "stderr: {stderr}");
        assert!(
            stderr.contains(&format!("handler saw [{line}]")),
            "stderr: {stderr}"
        );
    }

    #[test]
    fn panics_show_their_message() {
        let payload: Box<dyn core::any::Any + Send> = Box::new(String::from("boom 7"));
        let text = line_of(|line| line.write_str("g()"), &Panicked(&*payload));
        assert_eq!(text, "g(): internal error, a Rust panic: boom 7");
    }
}
