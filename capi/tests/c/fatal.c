/*
 * The fatal paths, one per run: `fatal CASE`. The program prints the addresses the
 * expected line contains (`owa=...`, `ptr=...`) to stdout, unbuffered, before the
 * call that must end it; the Rust driver checks the exit status and the line.
 * Reaching the end of a case prints "survived" and exits 0, which is what the page
 * mode does for the misuse it cannot detect.
 */
#include <pthread.h>
#include <string.h>

#include "check.h"

static void marking_handler(const char *message) {
    fprintf(stderr, "handler got [%s]\n", message);
}

static void exiting_handler(const char *message) {
    fprintf(stderr, "exiting handler got [%s]\n", message);
    _exit(42);
}

static void reentrant_handler(const char *message) {
    fprintf(stderr, "reentrant handler got [%s]\n", message);
    onewayalloc_mallocz(NULL, 7); /* fails again: the handler is not called twice */
}

static void *set_handler_thread(void *arg) {
    (void)arg;
    onewayalloc_set_fatal_handler(marking_handler);
    return NULL;
}

/* For fatal_in_a_thread: a worker thread takes the fatal path. */
static void *failing_thread(void *arg) {
    ONEWAYALLOC *owa = *(ONEWAYALLOC **)arg;
    onewayalloc_callocz(owa, SIZE_MAX, SIZE_MAX);
    return NULL;
}

static ONEWAYALLOC *arena(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    printf("owa=%p\n", owa);
    return owa;
}

static void show(const char *name, const void *p) { printf("%s=%p\n", name, p); }

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    CHECK(argc == 2);
    const char *c = argv[1];

    if (strcmp(c, "callocz_overflow") == 0) {
        onewayalloc_callocz(arena(), SIZE_MAX / 2 + 1, 2);
    } else if (strcmp(c, "mul_overflow") == 0) {
        onewayalloc_mul_or_fatal(SIZE_MAX, 2, "points of chart system.cpu");
    } else if (strcmp(c, "mul3_overflow") == 0) {
        onewayalloc_mul3_or_fatal((size_t)1 << 32, (size_t)1 << 32, sizeof(double), "query results");
    } else if (strcmp(c, "mul_overflow_no_context") == 0) {
        onewayalloc_mul_or_fatal((size_t)1 << 32, (size_t)1 << 32, NULL);
    } else if (strcmp(c, "doublesize_overflow") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 16);
        show("ptr", p);
        onewayalloc_doublesize(owa, p, SIZE_MAX / 2 + 1);
    } else if (strcmp(c, "doublesize_too_large") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 16);
        show("ptr", p);
        onewayalloc_doublesize(owa, p, SIZE_MAX / 4); /* no block can be that large */
    } else if (strcmp(c, "mallocz_refused") == 0) {
        onewayalloc_mallocz(arena(), SIZE_MAX / 4);
    } else if (strcmp(c, "mallocz_too_large") == 0) {
        onewayalloc_mallocz(arena(), SIZE_MAX);
    } else if (strcmp(c, "create_too_large") == 0) {
        onewayalloc_create(SIZE_MAX);
    } else if (strcmp(c, "mallocz_null_arena") == 0) {
        onewayalloc_mallocz(NULL, 8);
    } else if (strcmp(c, "callocz_null_arena") == 0) {
        onewayalloc_callocz(NULL, 2, 8);
    } else if (strcmp(c, "strdupz_null_arena") == 0) {
        const char *x = "x";
        show("s", x);
        onewayalloc_strdupz(NULL, x);
    } else if (strcmp(c, "memdupz_null_arena") == 0) {
        const char *x = "x";
        show("src", x);
        onewayalloc_memdupz(NULL, x, 1);
    } else if (strcmp(c, "doublesize_null_arena") == 0) {
        onewayalloc_doublesize(NULL, NULL, 0);
    } else if (strcmp(c, "freez_null_arena") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 8);
        show("ptr", p);
        onewayalloc_freez(NULL, p);
    } else if (strcmp(c, "strdupz_null") == 0) {
        onewayalloc_strdupz(arena(), NULL);
    } else if (strcmp(c, "memdupz_null_source") == 0) {
        onewayalloc_memdupz(arena(), NULL, 8);
    } else if (strcmp(c, "doublesize_null_source") == 0) {
        onewayalloc_doublesize(arena(), NULL, 8);
    } else if (strcmp(c, "freez_twice") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 24);
        show("ptr", p);
        onewayalloc_freez(owa, p);
        onewayalloc_freez(owa, p);
        onewayalloc_destroy(owa);
    } else if (strcmp(c, "freez_after_reset") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 24);
        show("ptr", p);
        onewayalloc_reset(owa);
        onewayalloc_freez(owa, p);
        onewayalloc_destroy(owa);
    } else if (strcmp(c, "freez_foreign") == 0) {
        ONEWAYALLOC *other = onewayalloc_create(0);
        void *p = onewayalloc_mallocz(other, 24);
        ONEWAYALLOC *owa = arena();
        show("ptr", p);
        onewayalloc_freez(owa, p);
        onewayalloc_destroy(owa);
        onewayalloc_destroy(other);
    } else if (strcmp(c, "freez_middle") == 0) {
        ONEWAYALLOC *owa = arena();
        char *p = onewayalloc_mallocz(owa, 64);
        show("ptr", p + 16);
        onewayalloc_freez(owa, p + 16);
        onewayalloc_destroy(owa);
    } else if (strcmp(c, "doublesize_foreign") == 0) {
        ONEWAYALLOC *other = onewayalloc_create(0);
        void *p = onewayalloc_callocz(other, 1, 24);
        ONEWAYALLOC *owa = arena();
        show("ptr", p);
        onewayalloc_doublesize(owa, p, 24);
        onewayalloc_destroy(owa);
        onewayalloc_destroy(other);
    } else if (strcmp(c, "doublesize_keep_exceeds") == 0) {
        ONEWAYALLOC *owa = arena();
        void *p = onewayalloc_mallocz(owa, 16);
        show("ptr", p);
        onewayalloc_doublesize(owa, p, 32); /* outside the contract: 16 bytes */
    } else if (strcmp(c, "doublesize_over_the_next_block") == 0) {
        /* Issue 23: `a`, then `b`, then doublesize(a, 32). 32 bytes run past a's 16
         * and end exactly where the arena's cursor is, but `a` is not the most
         * recent block: it must not grow in place over `b`. The sanitizer mode
         * knows a's size and takes the fatal path; the page mode cannot tell and
         * copies the 32 bytes, as Netdata's memcpy() would, to a block that
         * overlaps neither. */
        ONEWAYALLOC *owa = arena();
        unsigned char *a = onewayalloc_mallocz(owa, 16);
        unsigned char *b = onewayalloc_mallocz(owa, 16);
        memset(a, 0xaa, 16);
        memset(b, 0xbb, 16);
        show("ptr", a);
        unsigned char *grown = onewayalloc_doublesize(owa, a, 32);
        CHECK(grown != a && aligned16(grown));
        CHECK(grown + 64 <= a || grown >= a + 16);
        CHECK(grown + 64 <= b || grown >= b + 16);
        for (int i = 0; i < 16; i++)
            CHECK(grown[i] == 0xaa && grown[16 + i] == 0xbb);
        memset(grown, 0x11, 64); /* the caller's 64 bytes */
        for (int i = 0; i < 16; i++)
            CHECK(a[i] == 0xaa && b[i] == 0xbb);
        /* The grown block is now the most recent one: it grows in place. */
        unsigned char *again = onewayalloc_doublesize(owa, grown, 64);
        CHECK(again == grown);
        for (int i = 0; i < 64; i++)
            CHECK(again[i] == 0x11);
        onewayalloc_destroy(owa);
    } else if (strcmp(c, "doublesize_past_the_most_recent_block") == 0) {
        /* `a`, then `b`, then doublesize(a, 48): the 48 bytes run past the end of
         * the most recent block (the cursor), which the page mode can tell too. */
        ONEWAYALLOC *owa = arena();
        void *a = onewayalloc_mallocz(owa, 16);
        onewayalloc_mallocz(owa, 16);
        show("ptr", a);
        onewayalloc_doublesize(owa, a, 48);
    } else if (strcmp(c, "handler_returns") == 0) {
        onewayalloc_set_fatal_handler(marking_handler);
        onewayalloc_callocz(arena(), SIZE_MAX / 2 + 1, 2);
    } else if (strcmp(c, "handler_exits") == 0) {
        onewayalloc_set_fatal_handler(exiting_handler);
        onewayalloc_mul_or_fatal(SIZE_MAX, 3, "exit");
    } else if (strcmp(c, "handler_set_by_another_thread") == 0) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, set_handler_thread, NULL) == 0);
        CHECK(pthread_join(t, NULL) == 0);
        onewayalloc_mul_or_fatal(SIZE_MAX, 3, "thread");
    } else if (strcmp(c, "handler_fails_again") == 0) {
        onewayalloc_set_fatal_handler(reentrant_handler);
        onewayalloc_mul_or_fatal(SIZE_MAX, 3, "again");
    } else if (strcmp(c, "handler_removed") == 0) {
        onewayalloc_set_fatal_handler(marking_handler);
        onewayalloc_set_fatal_handler(NULL);
        onewayalloc_mul_or_fatal(SIZE_MAX, 3, "removed");
    } else if (strcmp(c, "fatal_in_a_thread") == 0) {
        onewayalloc_set_fatal_handler(marking_handler);
        pthread_t t;
        static ONEWAYALLOC *shared;
        shared = arena();
        CHECK(pthread_create(&t, NULL, failing_thread, &shared) == 0);
        pthread_join(t, NULL);
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    puts("survived");
    return 0;
}
