/*
 * onewayalloc.h - Netdata's One Way Allocator for C and C++, served by the Rust
 * crate onewayalloc.
 *
 * An arena for work whose allocations all die together: one query, one request,
 * one alert evaluation. Allocation bumps a pointer through pages of 64 KiB that
 * double up to 1 MiB; nothing is freed one by one; onewayalloc_reset() makes every
 * page available again in constant time and onewayalloc_destroy() returns them all.
 *
 * The functions and their prototypes are those of Netdata's onewayalloc.h (master
 * at 04b1cf5), so a program written for Netdata's allocator links against this
 * library unchanged; onewayalloc_trim() and onewayalloc_set_fatal_handler() are
 * additions. The differences a caller can see are listed under "Differences from
 * Netdata's allocator" below.
 *
 * Linking (the static library, with no extra tool):
 *     cargo build --release -p onewayalloc-capi
 *     cc prog.c -Icapi/include target/release/libonewayalloc_capi.a -lpthread -ldl -lm
 * or, after `cargo cinstall` (cargo-c):
 *     cc prog.c $(pkg-config --cflags --libs onewayalloc)
 *
 * RULES THAT HOLD FOR EVERY FUNCTION
 *
 * Never NULL. onewayalloc_create(), _mallocz(), _callocz(), _strdupz(),
 *     _memdupz() and _doublesize() never return NULL. Where they cannot succeed
 *     they take the fatal path instead.
 *
 * The fatal path. On an allocation the system refuses, a size that overflows
 *     size_t, a NULL arena passed to a call that needs one, onewayalloc_strdupz()
 *     of NULL, a NULL source with bytes to copy, a cleanup that resets or
 *     destroys its own arena (see onewayalloc_add_cleanup()), or a block
 *     described wrongly where the mode can tell (onewayalloc_freez() or
 *     onewayalloc_doublesize() of a pointer the arena does not hold, in the
 *     sanitizer mode; an `oldsize` larger than its block, as
 *     onewayalloc_doublesize() says), the call writes one line to stderr,
 *     starting with "fatal: " and naming the call and its arguments, for example
 *     (one line)
 *         fatal: onewayalloc_callocz(owa=0x55d0c1e0, nmemb=4611686018427387904,
 *         size=8): nmemb * size overflows size_t
 *     then calls the handler set by onewayalloc_set_fatal_handler() (if any) with
 *     the same line, then abort()s. No error escapes as a return value, and no
 *     Rust panic ever unwinds into the caller: a panic (a bug of the library)
 *     takes the fatal path too, its line naming the call, or "onewayalloc" in the
 *     small no_std build (built with panic = "abort"; see the README).
 *
 * Alignment. Every block is aligned to 16 bytes, like malloc() on 64-bit Linux,
 *     so any C type fits, long double and max_align_t included. This holds for
 *     strings too: onewayalloc_strdupz() and onewayalloc_memdupz() blocks are
 *     16-byte aligned.
 *
 * Lifetime. A block stays valid until onewayalloc_reset() or onewayalloc_destroy()
 *     of its arena (or, in the sanitizer mode, its onewayalloc_freez()). Memory is
 *     not zeroed, except by onewayalloc_callocz().
 *
 * Threads. An arena is used by one thread at a time: calls on the same arena must
 *     not run concurrently. It may be created on one thread, used on another and
 *     destroyed on a third, provided the hand-over synchronizes (a mutex, a queue,
 *     pthread_join). Any number of arenas run at once on different threads (one
 *     per worker is the intended use). onewayalloc_allocated_memory(),
 *     onewayalloc_mul_or_fatal(), onewayalloc_mul3_or_fatal() and
 *     onewayalloc_set_fatal_handler() may be called from any thread at any time.
 *
 * Two modes. The library is built in one of two modes:
 *   - the page mode (the default): blocks are carved out of pages;
 *     onewayalloc_freez() frees nothing; onewayalloc_reset() keeps every page.
 *   - the sanitizer mode (built with the cargo feature `separate-blocks`, or with
 *     -Zsanitizer=address): every block is its own malloc() block, so
 *     AddressSanitizer and Valgrind see each one; onewayalloc_freez() frees it at
 *     once, and onewayalloc_reset() and onewayalloc_destroy() free every block
 *     still outstanding, so a pointer used after them is reported as a
 *     use-after-free and nothing is left for a leak checker. A C program needs no
 *     change to run in either mode.
 *
 * DIFFERENCES FROM NETDATA'S ALLOCATOR (04b1cf5)
 *
 *   - onewayalloc_reset() keeps every page and takes constant time; Netdata's
 *     unmaps all pages but the first. Use onewayalloc_trim() to give memory back.
 *   - Blocks are aligned to 16 bytes; Netdata's are aligned to 8.
 *   - onewayalloc_doublesize() grows the arena's most recent block in place when
 *     it can; Netdata's always copies (and so does this one for any other block).
 *   - In the sanitizer mode, onewayalloc_reset() and onewayalloc_destroy() free the
 *     blocks still outstanding; in Netdata's AddressSanitizer builds they leak.
 */
#ifndef ONEWAYALLOC_H
#define ONEWAYALLOC_H

#include <stddef.h>
#ifndef ONEWAYALLOC_NO_INLINE
#include <string.h> /* memset, memcpy and strlen for the inline calls */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An arena. Handles are `ONEWAYALLOC *`, created by onewayalloc_create() and
 * ended by onewayalloc_destroy(); the type is opaque, except for the `struct
 * onewayalloc_cursor` at its start that the inline onewayalloc_mallocz() reads (see
 * "THE INLINE FAST PATH" at the end of this header).
 */
typedef void ONEWAYALLOC;

/*
 * Creates an arena. Its first page has room for `size_hint` bytes of 16-byte
 * aligned payload after the page header: the page is max(64 KiB, header +
 * size_hint) rounded up to the OS page size. Pass 0 when in doubt; pages are added
 * as needed (each new one twice the previous target, up to 1 MiB; a larger
 * request gets a page of its own size).
 *
 * Never returns NULL: if the first page cannot be obtained (out of memory, or
 * size_hint too large), the fatal path is taken.
 */
ONEWAYALLOC *onewayalloc_create(size_t size_hint);

/*
 * Returns every page of the arena to the system, the unused ones included, and
 * ends the arena: the handle and every block of it are invalid afterwards. In the
 * sanitizer mode every block still outstanding is freed. NULL does nothing.
 */
void onewayalloc_destroy(ONEWAYALLOC *owa);

/*
 * Invalidates every block of the arena and makes all its memory available again,
 * in constant time. Every page is kept for the blocks that follow, so an arena
 * reset before each unit of work stops asking the system for memory once it has
 * reached its high-water mark; onewayalloc_allocated_memory() does not change.
 * Nothing is zeroed. (Netdata's reset at 04b1cf5 unmaps all pages but the first
 * instead.) In the sanitizer mode every outstanding block is freed, so
 * onewayalloc_allocated_memory() drops by their size. NULL does nothing.
 */
void onewayalloc_reset(ONEWAYALLOC *owa);

/*
 * Returns unused pages (those a reset made available and nothing has used since)
 * to the system, keeping at most `keep_bytes` of them, counted with their
 * headers. Pages are walked in list order; each one that still fits the budget is
 * kept, each one that does not is freed. Pages in use are never freed: call it
 * right after onewayalloc_reset(). onewayalloc_trim(owa, 0) after a reset leaves
 * only the first page. Meant for long-lived arenas that should give back the
 * memory a rare large unit of work needed. Does nothing in the sanitizer mode
 * (there are no pages) and for NULL.
 *
 * Called by a cleanup of the arena (see onewayalloc_add_cleanup()), it frees
 * nothing at once, since every page is still in use while the cleanups run:
 * onewayalloc_reset() carries it out after its last cleanup, once it has made the
 * pages available, with the smallest `keep_bytes` its cleanups asked for. While
 * onewayalloc_destroy() runs the cleanups it does nothing: every page goes back.
 */
void onewayalloc_trim(ONEWAYALLOC *owa, size_t keep_bytes);

/*
 * Registers cleanup(arg) to run when the arena's work ends: at the next
 * onewayalloc_reset() (before any block is reused) or at onewayalloc_destroy(),
 * most recent first, in both modes; each registration runs once. Use it for the
 * resources a unit of work holds besides arena memory (a file, a lock, a malloc()
 * block, a reference count). The record lives in the arena itself (32 bytes on
 * 64-bit targets): nothing else is allocated. NULL owa or cleanup takes the fatal
 * path.
 *
 * While it runs, a cleanup may make any call on its own arena except
 * onewayalloc_reset() and onewayalloc_destroy():
 *   - allocate (onewayalloc_mallocz(), _callocz(), _strdupz(), _memdupz(),
 *     _doublesize()): the block is valid until that reset or destroy completes,
 *     and freed with the rest in the sanitizer mode; onewayalloc_freez() works as
 *     anywhere else;
 *   - onewayalloc_add_cleanup(): the cleanup it adds runs in the same reset or
 *     destroy, before the older ones still waiting;
 *   - onewayalloc_trim(): carried out by the reset after its last cleanup (see
 *     onewayalloc_trim()).
 * A cleanup that calls onewayalloc_reset() or onewayalloc_destroy() on its own
 * arena takes the fatal path, before anything is reset or freed, with the line
 * (one line)
 *     fatal: onewayalloc_reset(owa=0x55d0c1e0): called by a cleanup of this arena
 *     while onewayalloc_destroy runs its cleanups (a cleanup must not reset or
 *     destroy its own arena)
 * The rule is per arena: an arena whose cleanups are running (further up the same
 * chain of calls) counts as its own; any other arena may be used as usual. A
 * cleanup must not return by longjmp() or a C++ exception. It runs on the thread
 * that resets or destroys the arena.
 */
void onewayalloc_add_cleanup(ONEWAYALLOC *owa, void (*cleanup)(void *), void *arg);

/*
 * Allocates `size` bytes, uninitialized, aligned to 16 bytes: the arena's
 * malloc(). A size of 0 returns a distinct block (served as a 1-byte request), so
 * every call returns a different pointer and onewayalloc_freez() accepts it in
 * both modes. Never returns NULL; a NULL arena or a size that cannot be allocated
 * is fatal.
 *
 * Calls are inlined: the header defines onewayalloc_mallocz(owa, size) as a macro
 * over a static inline function that bumps the arena's current page itself and
 * calls the library only when the page has no room (see "THE INLINE FAST PATH"
 * below); so are onewayalloc_callocz(), _strdupz() and _memdupz(). The functions
 * themselves are exported too, so `&onewayalloc_mallocz` and
 * `(onewayalloc_mallocz)(owa, size)` call the library.
 */
void *onewayalloc_mallocz(ONEWAYALLOC *owa, size_t size);

/*
 * Allocates `nmemb * size` bytes set to zero, aligned to 16 bytes: the arena's
 * calloc(). The product overflowing size_t is fatal, as is a NULL arena. A product
 * of 0 is served like onewayalloc_mallocz(owa, 0). Never returns NULL.
 */
void *onewayalloc_callocz(ONEWAYALLOC *owa, size_t nmemb, size_t size);

/*
 * Copies the NUL-terminated string `s`, terminator included, into a block of
 * strlen(s) + 1 bytes aligned to 16 bytes: the arena's strdup(). A NULL `s` is
 * fatal, as is a NULL arena. Never returns NULL.
 */
char *onewayalloc_strdupz(ONEWAYALLOC *owa, const char *s);

/*
 * Copies the `size` bytes at `src` into a new block aligned to 16 bytes: the
 * arena's malloc() followed by memcpy(). A size of 0 is served like
 * onewayalloc_mallocz(owa, 0) (and `src` may then be NULL); a NULL `src` with
 * bytes to copy is fatal, as is a NULL arena. Never returns NULL.
 */
void *onewayalloc_memdupz(ONEWAYALLOC *owa, const void *src, size_t size);

/*
 * Frees a block of the arena.
 *   - In the page mode nothing happens: the block stays valid until reset or
 *     destroy, and its bytes come back then. A pointer that is not a block of this
 *     arena cannot be told apart cheaply here and is not detected.
 *   - In the sanitizer mode the block is freed at once. A pointer the arena does
 *     not hold (freed already, released by a reset, from another arena, or not
 *     the start of a block) is fatal.
 * A NULL `ptr` does nothing. A NULL arena with a non-NULL `ptr` is fatal in both
 * modes.
 */
void onewayalloc_freez(ONEWAYALLOC *owa, const void *ptr);

/*
 * Returns a block of `2 * oldsize` bytes, aligned to 16 bytes, whose first
 * `oldsize` bytes are those at `src`: the way to grow a series that has filled
 * up. `oldsize` is the number of bytes to keep, and may be smaller than the block
 * (strlen() of an onewayalloc_strdupz() block, for example). Always use the
 * returned pointer afterwards:
 *   - in the page mode, the block grows in place, and `src` itself is returned,
 *     only when `src` is the arena's most recent block (the block that the last
 *     call on this arena returned, since its last onewayalloc_reset()), `oldsize`
 *     is exactly the size it was asked with (1 for a size of 0) and its page has
 *     room. Any other block is copied to a new block, as Netdata's always does,
 *     and `src` stays valid until reset. So no `oldsize` can make two blocks
 *     overlap.
 *   - in the sanitizer mode the block is resized like realloc(), and `src` is no
 *     longer valid.
 * `2 * oldsize` overflowing size_t is fatal; so are a NULL arena, a NULL `src`
 * with `oldsize > 0`, and an `oldsize` the arena can tell is wrong:
 *   - in the sanitizer mode, an `oldsize` larger than the block, and a `src` the
 *     arena does not hold;
 *   - in the page mode, an `oldsize` larger than the most recent block when `src`
 *     is that block, and an `oldsize` that runs from `src` past the end of the
 *     most recent block (no other block reaches that far). For any other `src`
 *     the page mode cannot tell, and copies `oldsize` bytes whatever they are.
 * A NULL `src` with `oldsize == 0` returns a fresh block, like
 * onewayalloc_mallocz(owa, 0). Never returns NULL.
 */
void *onewayalloc_doublesize(ONEWAYALLOC *owa, const void *src, size_t oldsize);

/*
 * The bytes that all arenas created by onewayalloc_create() hold from the system
 * now, page headers included (the small arena handles are not counted): it rises
 * when an arena obtains a page, stays the same across onewayalloc_reset(), falls
 * at onewayalloc_trim() and onewayalloc_destroy(). In the sanitizer mode it is the
 * bytes of the outstanding blocks, so onewayalloc_freez() and onewayalloc_reset()
 * lower it too. Any thread may call it at any time (a relaxed atomic read).
 */
size_t onewayalloc_allocated_memory(void);

/*
 * Returns nmemb * size, or takes the fatal path, with a line that contains
 * `context`, if the product overflows size_t. onewayalloc_mul_or_fatal(n, 0, c)
 * is 0. `context` names what is being sized (NULL is allowed).
 */
size_t onewayalloc_mul_or_fatal(size_t nmemb, size_t size, const char *context);

/*
 * Returns nmemb1 * nmemb2 * size, or takes the fatal path, with a line that
 * contains `context`, if the product overflows size_t. A zero factor makes it 0.
 * For sizing arrays such as onewayalloc_callocz(owa, 1,
 * onewayalloc_mul3_or_fatal(points, dimensions, sizeof(double), "results")).
 */
size_t onewayalloc_mul3_or_fatal(size_t nmemb1, size_t nmemb2, size_t size, const char *context);

/*
 * Sets the function the fatal path calls after writing its line to stderr and
 * before abort(). It receives the same line, NUL-terminated, without the newline,
 * valid until it returns. NULL removes the handler.
 *
 * The handler may log, flush, or end the process itself (exit(), _exit()); if it
 * returns, the process aborts. It must not return into the library by longjmp()
 * or by throwing a C++ exception: the library's state is not prepared for that.
 * The handler is called once per process, by the first fatal path: if it calls
 * the library and fails again, or another thread fails meanwhile, that second
 * fatal path writes its line and aborts without calling it. The handler is
 * stored atomically, so it can be set or replaced from any thread at any time.
 */
void onewayalloc_set_fatal_handler(void (*handler)(const char *message));

/*
 * THE INLINE FAST PATH (ABI version 1)
 *
 * A handle starts with a `struct onewayalloc_cursor`: the free bytes `pos..end`
 * of the arena's current page, and `last`, the start of the block the inline path
 * bumped last. onewayalloc_mallocz() is inlined into the caller: it rounds `pos` up
 * to 16 bytes, and if `size` (not 0) fits before `end` it hands out that address,
 * moves `pos` to exactly `size` bytes after it and records it in `last`; otherwise
 * (the page is full, a size of 0, a NULL arena, the sanitizer mode) it calls
 * onewayalloc_mallocz_slow_v1(), which is onewayalloc_mallocz() in the library.
 * onewayalloc_callocz(), onewayalloc_strdupz() and onewayalloc_memdupz() are
 * inlined the same way (the bump, then memset() or memcpy()); they call their own
 * function in the library when the bump misses and for every input that is fatal
 * (an overflowing product, a NULL string or source), so the fatal line is the
 * same. So the common call costs a few instructions and no call, like the linear
 * buffer of Netdata's article, and every rule stated above still holds. The other
 * calls are not inlined.
 *
 * The rules this creates:
 *   - The struct's layout is part of the ABI. It changes only with a new ABI
 *     version: ONEWAYALLOC_CURSOR_ABI and the `_v1` in the out-of-line function's
 *     name change, and so does the shared library's SONAME, so a program compiled
 *     against another version of this header does not link or load against it.
 *   - The library owns the struct: a program never writes it except through
 *     the inline calls (and never reads it to learn anything: it may change at
 *     any call). Every other call takes the inline blocks in first: they are
 *     blocks of the arena like any other (onewayalloc_doublesize() grows the most
 *     recent one in place, onewayalloc_freez() accepts them), and the arena knows
 *     their exact sizes, since an inline block ends exactly at `pos`.
 *   - The inline path never runs concurrently with another call on the same
 *     arena: the threading rule above already forbids that.
 *   - In the sanitizer mode `pos == end`, so every block goes through the library,
 *     where AddressSanitizer and Valgrind see it.
 *   - Define ONEWAYALLOC_NO_INLINE before including this header to call the
 *     library for every block (the struct and the out-of-line function are
 *     still declared).
 */
#define ONEWAYALLOC_CURSOR_ABI 1

struct onewayalloc_cursor {
    char *pos;  /* the next free byte of the current page */
    char *end;  /* the end of the current page, 16-byte aligned; pos <= end */
    char *last; /* the start of the block the inline path handed out last */
};

/*
 * onewayalloc_mallocz() in the library, for the inline path when it cannot bump.
 * A fatal line names onewayalloc_mallocz.
 */
void *onewayalloc_mallocz_slow_v1(ONEWAYALLOC *owa, size_t size);

#ifndef ONEWAYALLOC_NO_INLINE
#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define ONEWAYALLOC_INLINE_ static inline
#elif defined(__GNUC__)
#define ONEWAYALLOC_INLINE_ static __inline__
#else
#define ONEWAYALLOC_INLINE_ static
#endif
#if defined(__GNUC__)
#define ONEWAYALLOC_LIKELY_(x) __builtin_expect(!!(x), 1)
#else
#define ONEWAYALLOC_LIKELY_(x) (x)
#endif

/* The bump: `size` (1 or more) bytes from the current page, 16-byte aligned, or
 * NULL when they do not fit (or for a size of 0, or a NULL arena). */
ONEWAYALLOC_INLINE_ char *onewayalloc_bump_v1_(ONEWAYALLOC *owa, size_t size) {
    struct onewayalloc_cursor *cursor = (struct onewayalloc_cursor *)owa;
    if (ONEWAYALLOC_LIKELY_(owa != NULL)) {
        /* `pos` rounded up to 16 bytes: at most `end`, which is 16-byte aligned. */
        char *block = (char *)(((size_t)cursor->pos + 15u) & ~(size_t)15u);
        /* `size - 1 < room`: 1 <= size <= room (a size of 0 wraps and misses). */
        if (ONEWAYALLOC_LIKELY_(size - 1u < (size_t)(cursor->end - block))) {
            cursor->pos = block + size;
            cursor->last = block;
            return block;
        }
    }
    return NULL;
}

ONEWAYALLOC_INLINE_ void *onewayalloc_mallocz_inline_v1(ONEWAYALLOC *owa, size_t size) {
    char *block = onewayalloc_bump_v1_(owa, size);
    if (ONEWAYALLOC_LIKELY_(block != NULL))
        return block;
    return onewayalloc_mallocz_slow_v1(owa, size);
}

ONEWAYALLOC_INLINE_ void *onewayalloc_callocz_inline_v1(ONEWAYALLOC *owa, size_t nmemb,
                                                        size_t size) {
    /* An overflowing product goes to the library, which takes the fatal path. */
    size_t bytes;
#if defined(__GNUC__) && (__GNUC__ >= 5 || defined(__clang__))
    if (ONEWAYALLOC_LIKELY_(!__builtin_mul_overflow(nmemb, size, &bytes))) {
#else
    bytes = nmemb * size;
    if (size == 0 || nmemb <= (size_t)-1 / size) {
#endif
        char *block = onewayalloc_bump_v1_(owa, bytes);
        if (ONEWAYALLOC_LIKELY_(block != NULL))
            return memset(block, 0, bytes);
    }
    return (onewayalloc_callocz)(owa, nmemb, size);
}

ONEWAYALLOC_INLINE_ char *onewayalloc_strdupz_inline_v1(ONEWAYALLOC *owa, const char *s) {
    /* A NULL string goes to the library, which takes the fatal path. */
    if (ONEWAYALLOC_LIKELY_(s != NULL)) {
        size_t bytes = strlen(s) + 1;
        char *block = onewayalloc_bump_v1_(owa, bytes);
        if (ONEWAYALLOC_LIKELY_(block != NULL))
            return (char *)memcpy(block, s, bytes);
    }
    return (onewayalloc_strdupz)(owa, s);
}

ONEWAYALLOC_INLINE_ void *onewayalloc_memdupz_inline_v1(ONEWAYALLOC *owa, const void *src,
                                                        size_t size) {
    /* A size of 0 (served as 1 byte) and a NULL source go to the library. */
    if (ONEWAYALLOC_LIKELY_(src != NULL)) {
        char *block = onewayalloc_bump_v1_(owa, size);
        if (ONEWAYALLOC_LIKELY_(block != NULL))
            return memcpy(block, src, size);
    }
    return (onewayalloc_memdupz)(owa, src, size);
}

#define onewayalloc_mallocz(owa, size) onewayalloc_mallocz_inline_v1((owa), (size))
#define onewayalloc_callocz(owa, nmemb, size) onewayalloc_callocz_inline_v1((owa), (nmemb), (size))
#define onewayalloc_strdupz(owa, s) onewayalloc_strdupz_inline_v1((owa), (s))
#define onewayalloc_memdupz(owa, src, size) onewayalloc_memdupz_inline_v1((owa), (src), (size))
#endif /* ONEWAYALLOC_NO_INLINE */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ONEWAYALLOC_H */
