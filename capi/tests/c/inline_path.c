/*
 * The header's inline onewayalloc_mallocz() (and callocz, strdupz, memdupz) over
 * `struct onewayalloc_cursor` (ABI version 1), in both modes: the blocks it bumps are placed exactly as the
 * library places them (16-byte aligned, each right after the previous one), up to
 * the last byte of a page and no further; the cursor is handed back after every
 * other call (reset, trim, doublesize, freez, strdupz, add_cleanup, cleanups that
 * allocate) so that inline blocks and the library's never overlap; doublesize
 * knows an inline block's exact size; in the sanitizer mode every call misses and
 * goes through the library.
 *
 * `inline_path` runs every rule. Compiled with -DONEWAYALLOC_NO_INLINE it runs the
 * same rules through the library's onewayalloc_mallocz() (the struct is kept the
 * same way). `inline_path CASE` takes a fatal path (the driver checks the line):
 *   keep_exceeds_after_cleanup  doublesize() of an inline block asking for more
 *                               than its size, after a cleanup was registered
 *   bad_cursor                  the program overwrote the struct
 */
#include <string.h>

#include "check.h"

/* The cursor at the start of a handle. */
static struct onewayalloc_cursor *cursor_of(ONEWAYALLOC *owa) {
    return (struct onewayalloc_cursor *)owa;
}

/* The invariants C relies on, after any call: `end` 16-byte aligned, `pos <=
 * end`; in the sanitizer mode `pos == end` (every call misses). */
static void check_cursor(ONEWAYALLOC *owa) {
    struct onewayalloc_cursor *c = cursor_of(owa);
    CHECK(aligned16(c->end));
    CHECK(c->pos <= c->end);
    if (SEPARATE_BLOCKS)
        CHECK(c->pos == c->end);
}

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* Fills `n` bytes of `p` with a pattern of `seed`, and checks it. */
static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 31u + i);
}

static int intact(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 31u + i))
            return 0;
    return 1;
}

/* Every size from 0 to 100 and some larger: aligned, distinct, disjoint, and in
 * the page mode each right after the previous one (16-byte aligned), as the
 * library places them. */
static void sizes_are_placed_like_the_librarys(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    enum { N = 101 + 4 };
    unsigned char *blocks[N];
    size_t sizes[N];
    for (size_t i = 0; i < N; i++) {
        sizes[i] = i <= 100 ? i : (size_t)1000 * i;
        blocks[i] = onewayalloc_mallocz(owa, sizes[i]);
        check_cursor(owa);
        CHECK(blocks[i] != NULL && aligned16(blocks[i]));
        fill(blocks[i], sizes[i], (unsigned)i);
        /* In the first page (the sizes up to 100 fill 5 KiB of it); a size of 0 is
         * served as 1 byte. */
        if (PAGE_MODE && i > 0 && i <= 100)
            CHECK(blocks[i] == blocks[i - 1] + round16(sizes[i - 1] ? sizes[i - 1] : 1));
        if (PAGE_MODE && i <= 100)
            CHECK(cursor_of(owa)->pos == (char *)blocks[i] + (sizes[i] ? sizes[i] : 1));
    }
    for (size_t i = 0; i < N; i++) {
        CHECK(intact(blocks[i], sizes[i], (unsigned)i));
        for (size_t j = i + 1; j < N; j++)
            CHECK(blocks[i] != blocks[j]);
    }
    onewayalloc_destroy(owa);
}

/* The first page's last byte: a block that ends exactly there is bumped inline
 * into it, one byte more goes to a new page (page mode). Sizes that need a page
 * of their own too. */
static void page_crossing(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t held = onewayalloc_allocated_memory();
    unsigned char *first = onewayalloc_mallocz(owa, 24);
    fill(first, 24, 1);
    if (PAGE_MODE) {
        /* The first block starts right after the page header. */
        unsigned char *base = first - PAGE_HEADER_SIZE;
        unsigned char *page_end = base + first_page_size(0);
        CHECK((char *)page_end == cursor_of(owa)->end);
        CHECK((char *)first + 24 == cursor_of(owa)->pos);
        /* Fill up to 100 bytes before the end, then 99 bytes (rounded up to 16
         * the start stays, 99 bytes fit), then exactly the rest. */
        unsigned char *next = first + 32;
        size_t room = (size_t)(page_end - next);
        unsigned char *filler = onewayalloc_mallocz(owa, room - 128);
        CHECK(filler == next);
        unsigned char *b99 = onewayalloc_mallocz(owa, 99);
        CHECK(b99 == page_end - 128);
        unsigned char *rest = onewayalloc_mallocz(owa, 16);
        CHECK(rest == page_end - 16);
        CHECK(cursor_of(owa)->pos == cursor_of(owa)->end);
        CHECK_EQ(onewayalloc_allocated_memory(), held);
        fill(rest, 16, 2);
        /* The page is full: the next block is the first of a new page. */
        unsigned char *other = onewayalloc_mallocz(owa, 1);
        CHECK(other < base || other >= page_end);
        CHECK(onewayalloc_allocated_memory() > held);
        check_cursor(owa);
        CHECK(intact(rest, 16, 2));
    }
    /* Blocks larger than any page: a page of their own, then inline again. */
    unsigned char *big = onewayalloc_mallocz(owa, 3 * MIB);
    CHECK(aligned16(big));
    memset(big, 0x5a, 3 * MIB);
    unsigned char *after = onewayalloc_mallocz(owa, 40);
    CHECK(after + 40 <= big || after >= big + 3 * MIB);
    fill(after, 40, 3);
    /* Many small blocks across several pages, all kept. */
    enum { NODES = 20000 };
    static unsigned char *nodes[NODES];
    for (unsigned i = 0; i < NODES; i++) {
        nodes[i] = onewayalloc_mallocz(owa, 40);
        CHECK(aligned16(nodes[i]));
        fill(nodes[i], 40, i);
    }
    check_cursor(owa);
    for (unsigned i = 0; i < NODES; i++)
        CHECK(intact(nodes[i], 40, i));
    CHECK(intact(first, 24, 1) && intact(after, 40, 3) && big[3 * MIB - 1] == 0x5a);
    onewayalloc_destroy(owa);
}

/* After a reset the inline path starts over at the first page, with its pages
 * kept (page mode); callocz() zeroes what the previous round wrote. After a trim
 * it goes on in the page the trim kept. */
static void reset_then_reuse(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    unsigned char *first = NULL;
    size_t held = 0;
    for (int round = 0; round < 4; round++) {
        unsigned char *a = onewayalloc_mallocz(owa, 40);
        if (round == 0)
            first = a;
        else if (PAGE_MODE)
            CHECK(a == first);
        memset(a, 0xee, 40);
        for (int i = 0; i < 5000; i++)
            memset(onewayalloc_mallocz(owa, 100), 0xee, 100);
        unsigned char *z = onewayalloc_callocz(owa, 1, 100);
        for (int i = 0; i < 100; i++)
            CHECK(z[i] == 0);
        if (round == 1)
            held = onewayalloc_allocated_memory();
        if (round > 1 && PAGE_MODE)
            CHECK_EQ(onewayalloc_allocated_memory(), held);
        onewayalloc_reset(owa);
        check_cursor(owa);
        if (PAGE_MODE)
            CHECK(cursor_of(owa)->pos == (char *)first);
    }
    onewayalloc_trim(owa, 0);
    check_cursor(owa);
    unsigned char *t = onewayalloc_mallocz(owa, 64);
    if (PAGE_MODE)
        CHECK(t == first);
    fill(t, 64, 9);
    onewayalloc_destroy(owa);
}

/* Inline blocks between the library's calls: strdupz/memdupz go right after the
 * last inline block, and inline blocks right after theirs; doublesize grows the
 * most recent inline block in place and copies any other; freez. */
static void interleaved_with_the_library(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    unsigned char *a = onewayalloc_mallocz(owa, 40);
    fill(a, 40, 1);
    char *s = onewayalloc_strdupz(owa, "system.cpu");
    check_cursor(owa);
    if (PAGE_MODE)
        CHECK((unsigned char *)s == a + 48);
    unsigned char *b = onewayalloc_mallocz(owa, 24);
    if (PAGE_MODE)
        CHECK((char *)b == s + 16);
    fill(b, 24, 2);

    /* The most recent block, bumped inline, grows in place with its exact size. */
    unsigned char *b2 = onewayalloc_doublesize(owa, b, 24);
    if (PAGE_MODE)
        CHECK(b2 == b);
    CHECK(intact(b2, 24, 2));
    fill(b2, 48, 3);
    /* The next inline block comes after the grown one. */
    unsigned char *c = onewayalloc_mallocz(owa, 8);
    if (PAGE_MODE)
        CHECK(c == b2 + 48);
    fill(c, 8, 4);
    /* An older inline block is copied, not grown over `c`. */
    unsigned char *a2 = onewayalloc_doublesize(owa, a, 40);
    CHECK(a2 != a || SEPARATE_BLOCKS);
    CHECK(intact(a2, 40, 1));
    if (PAGE_MODE)
        CHECK(intact(a, 40, 1));
    CHECK(intact(b2, 48, 3) && intact(c, 8, 4) && strcmp(s, "system.cpu") == 0);
    /* An inline block asked with a size smaller than its own is copied, like a
     * string doubled by strlen(). */
    unsigned char *d = onewayalloc_mallocz(owa, 32);
    fill(d, 32, 5);
    unsigned char *d2 = onewayalloc_doublesize(owa, d, 20);
    if (PAGE_MODE)
        CHECK(d2 != d && intact(d, 32, 5));
    CHECK(intact(d2, 20, 5));
    fill(d2, 40, 6);
    /* Doubling an inline block of 0 bytes, which is served as 1 byte. */
    unsigned char *e = onewayalloc_mallocz(owa, 0);
    unsigned char *e2 = onewayalloc_doublesize(owa, e, 1);
    if (PAGE_MODE)
        CHECK(e2 == e);
    fill(e2, 2, 7);

    /* freez of an inline block: the page mode keeps it, the sanitizer mode frees
     * it (allocated_memory falls by its size). */
    unsigned char *f = onewayalloc_mallocz(owa, 64);
    fill(f, 64, 8);
    size_t before = onewayalloc_allocated_memory();
    onewayalloc_freez(owa, f);
    check_cursor(owa);
    if (PAGE_MODE) {
        CHECK_EQ(onewayalloc_allocated_memory(), before);
        CHECK(intact(f, 64, 8));
        /* Still the most recent block: it grows in place. */
        CHECK(onewayalloc_doublesize(owa, f, 64) == f);
    } else {
        CHECK_EQ(onewayalloc_allocated_memory(), before - 64);
    }
    unsigned char *g = onewayalloc_memdupz(owa, "0123456789", 10);
    CHECK(memcmp(g, "0123456789", 10) == 0);
    CHECK(intact(a2, 40, 1) && intact(b2, 48, 3) && intact(c, 8, 4) && intact(d2, 40, 6));
    CHECK(intact(e2, 2, 7));
    onewayalloc_destroy(owa);
}

/* Cleanups: the record goes after the last inline block (it overlaps nothing
 * bumped before or after it), and a cleanup may allocate inline while a reset or
 * destroy runs it. */
struct allocating {
    ONEWAYALLOC *owa;
    int runs;
};

static void allocate_inline(void *arg) {
    struct allocating *a = arg;
    for (unsigned i = 0; i < 100; i++) {
        unsigned char *p = onewayalloc_mallocz(a->owa, 48);
        CHECK(aligned16(p));
        fill(p, 48, i);
        CHECK(intact(p, 48, i));
    }
    a->runs++;
}

static void count(void *arg) { ++*(int *)arg; }

static void inline_cleanups(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    struct allocating allocating = {owa, 0};
    int counted = 0;
    for (int round = 0; round < 3; round++) {
        unsigned char *a = onewayalloc_mallocz(owa, 24);
        fill(a, 24, 1);
        onewayalloc_add_cleanup(owa, allocate_inline, &allocating);
        check_cursor(owa);
        unsigned char *b = onewayalloc_mallocz(owa, 24);
        fill(b, 24, 2);
        onewayalloc_add_cleanup(owa, count, &counted);
        unsigned char *c = onewayalloc_mallocz(owa, 24);
        fill(c, 24, 3);
        /* The record after `a` is not grown over: `a` is copied. */
        unsigned char *a2 = onewayalloc_doublesize(owa, a, 24);
        CHECK(a2 != a || SEPARATE_BLOCKS);
        CHECK(intact(a2, 24, 1) && intact(b, 24, 2) && intact(c, 24, 3));
        /* `c` is the most recent block but `a2` was handed out after it. */
        CHECK(intact(c, 24, 3));
        onewayalloc_reset(owa);
        check_cursor(owa);
        CHECK_EQ(allocating.runs, round + 1);
        CHECK_EQ(counted, round + 1);
    }
    onewayalloc_add_cleanup(owa, allocate_inline, &allocating);
    onewayalloc_destroy(owa);
    CHECK_EQ(allocating.runs, 4);
}

/* The inline callocz(), strdupz() and memdupz(): zeroed and copied bytes on
 * reused (dirty) pages, placed like the library's, exact sizes for doublesize,
 * and the sizes of 0 served as 1 byte by the library. */
static void zeroing_and_copies(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    for (int round = 0; round < 3; round++) {
        unsigned char *dirty = onewayalloc_mallocz(owa, 32 * KIB);
        memset(dirty, 0xff, 32 * KIB);
        onewayalloc_reset(owa);
        unsigned char *prev = NULL;
        size_t prev_size = 0;
        for (size_t n = 1; n <= 40; n++) {
            unsigned char *z = onewayalloc_callocz(owa, n, 3);
            CHECK(aligned16(z));
            for (size_t i = 0; i < 3 * n; i++)
                CHECK(z[i] == 0);
            if (PAGE_MODE && prev)
                CHECK(z == prev + round16(prev_size));
            memset(z, 0xff, 3 * n);
            prev = z;
            prev_size = 3 * n;
        }
        /* A product of 0: a distinct block of 1 byte, from the library (served like
         * mallocz(owa, 0): its byte is not zeroed). */
        unsigned char *z0 = onewayalloc_callocz(owa, 0, 8);
        unsigned char *z1 = onewayalloc_callocz(owa, (size_t)1 << 40, 0);
        CHECK(z0 != z1 && aligned16(z0) && aligned16(z1));
        /* The most recent block is the last inline one, with its exact size. */
        char *s = onewayalloc_strdupz(owa, "system.cpu.user");
        CHECK(strcmp(s, "system.cpu.user") == 0 && aligned16(s));
        char *s2 = onewayalloc_doublesize(owa, s, 16);
        if (PAGE_MODE)
            CHECK(s2 == s);
        CHECK(strcmp(s2, "system.cpu.user") == 0);
        char *empty = onewayalloc_strdupz(owa, "");
        CHECK(empty[0] == '\0' && empty != s2);
        static const double values[3] = {1.5, 2.5, 3.5};
        double *copy = onewayalloc_memdupz(owa, values, sizeof values);
        CHECK(aligned16(copy) && copy[0] == 1.5 && copy[2] == 3.5);
        if (PAGE_MODE)
            CHECK((char *)copy == empty + 16);
        void *m0 = onewayalloc_memdupz(owa, values, 0);
        void *m1 = onewayalloc_memdupz(owa, NULL, 0);
        CHECK(m0 != m1 && m0 != NULL && m1 != NULL);
        check_cursor(owa);
    }
    onewayalloc_destroy(owa);
}

/* The sanitizer mode: every block went through the library, which counts it. */
static void sanitizer_mode_misses_every_time(void) {
    if (!SEPARATE_BLOCKS)
        return;
    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t held = onewayalloc_allocated_memory();
    for (size_t size = 1; size <= 64; size++) {
        void *p = onewayalloc_mallocz(owa, size);
        check_cursor(owa);
        held += size;
        CHECK_EQ(onewayalloc_allocated_memory(), held);
        if (size % 2 == 0) {
            onewayalloc_freez(owa, p);
            held -= size;
            CHECK_EQ(onewayalloc_allocated_memory(), held);
        }
    }
    onewayalloc_reset(owa);
    onewayalloc_destroy(owa);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 2 && strcmp(argv[1], "keep_exceeds_after_cleanup") == 0) {
        ONEWAYALLOC *owa = onewayalloc_create(0);
        printf("owa=%p\n", owa);
        void *p = onewayalloc_mallocz(owa, 24);
        int counted = 0;
        onewayalloc_add_cleanup(owa, count, &counted);
        printf("ptr=%p\n", p);
        onewayalloc_doublesize(owa, p, 25); /* outside the contract: 24 bytes */
        puts("survived");
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "bad_cursor") == 0) {
        ONEWAYALLOC *owa = onewayalloc_create(0);
        printf("owa=%p\n", owa);
        struct onewayalloc_cursor *c = cursor_of(owa);
        c->pos = c->end + 4096; /* the program overwrote the struct */
        const char *x = "x";
        printf("s=%p\n", (const void *)x);
        (onewayalloc_strdupz)(owa, x); /* the library's, not the inline call */
        puts("survived");
        return 0;
    }
    CHECK(argc == 1);
    sizes_are_placed_like_the_librarys();
    page_crossing();
    reset_then_reuse();
    interleaved_with_the_library();
    inline_cleanups();
    zeroing_and_copies();
    sanitizer_mode_misses_every_time();
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    puts("inline path: ok");
    return 0;
}
