/*
 * onewayalloc_add_cleanup(): cleanups run most recent first at onewayalloc_reset()
 * and onewayalloc_destroy(), once each, in both modes; a cleanup may allocate from
 * its arena, may add cleanups (they run in the same reset or destroy, first) and
 * may trim its arena (the reset trims after its last cleanup; issue 30).
 * `cleanup` runs every rule; these cases take the fatal path (the driver checks
 * the line):
 *   null_owa, null_cleanup      onewayalloc_add_cleanup() of NULL
 *   reset_in_reset              a cleanup resets its own arena, which a reset runs
 *   destroy_in_reset            a cleanup destroys it, while a reset runs it
 *   reset_in_destroy            a cleanup resets it, while a destroy runs it
 *   destroy_in_destroy          a cleanup destroys it, while a destroy runs it
 */
#include <string.h>

#include "check.h"

/* The order in which cleanups ran: their ids. */
static int ran[64];
static size_t nran;

static void record(void *arg) {
    CHECK(nran < sizeof ran / sizeof ran[0]);
    ran[nran++] = *(int *)arg;
}

static int ids[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* A cleanup that owns a malloc() block: Valgrind and LeakSanitizer see a leak if it
 * does not run, a double free if it runs twice. */
static void free_block(void *arg) {
    memset(arg, 0xab, 100);
    free(arg);
    ran[nran++] = 100;
}

/* A cleanup that allocates from its own arena while it runs. */
struct allocating {
    ONEWAYALLOC *owa;
    int id;
};

static void allocate_in_cleanup(void *arg) {
    struct allocating *a = arg;
    char *copy = onewayalloc_strdupz(a->owa, "made by a cleanup");
    CHECK(strcmp(copy, "made by a cleanup") == 0);
    void *block = onewayalloc_mallocz(a->owa, 200000); /* a new page in the page mode */
    memset(block, 1, 200000);
    onewayalloc_freez(a->owa, block);
    ran[nran++] = a->id;
}

/* A cleanup that adds another cleanup (id 50) to its arena while it runs. */
static void add_in_cleanup(void *arg) {
    struct allocating *a = arg;
    ran[nran++] = a->id;
    onewayalloc_add_cleanup(a->owa, record, &ids[15]);
}

/* A cleanup that trims its own arena, then allocates from it (issue 30). */
struct trimming {
    ONEWAYALLOC *owa;
    size_t keep;
    int id;
};

static void trim_in_cleanup(void *arg) {
    struct trimming *t = arg;
    size_t before = onewayalloc_allocated_memory();
    onewayalloc_trim(t->owa, t->keep);
    /* Every page is in use while the cleanups run: nothing goes back yet. */
    CHECK_EQ(onewayalloc_allocated_memory(), before);
    char *copy = onewayalloc_strdupz(t->owa, "made after the trim");
    CHECK(strcmp(copy, "made after the trim") == 0);
    ran[nran++] = t->id;
}

/* Cleanups that reset or destroy the arena they are registered on (`arg`). */
static void reset_own_arena(void *arg) {
    onewayalloc_reset(arg);
    printf("survived the reset\n");
}

static void destroy_own_arena(void *arg) {
    onewayalloc_destroy(arg);
    printf("survived the destroy\n");
}

static void expect(const int *want, size_t n) {
    CHECK_EQ(nran, n);
    for (size_t i = 0; i < n; i++) {
        if (ran[i] != want[i]) {
            fprintf(stderr, "cleanup %zu: ran %d, expected %d\n", i, ran[i], want[i]);
            exit(1);
        }
    }
    nran = 0;
}

static void show(const char *name, const void *p) { printf("%s=%p\n", name, p); }

/* Prints a function's address as %p does a data pointer's. */
static void show_function(const char *name, void (*f)(void *)) {
    void *p;
    memcpy(&p, &f, sizeof p);
    show(name, p);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 2 && strcmp(argv[1], "null_owa") == 0) {
        show("arg", &ids[1]);
        show_function("cleanup", record);
        onewayalloc_add_cleanup(NULL, record, &ids[1]);
        printf("survived\n");
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "null_cleanup") == 0) {
        ONEWAYALLOC *owa = onewayalloc_create(0);
        show("owa", owa);
        show("arg", &ids[1]);
        onewayalloc_add_cleanup(owa, NULL, &ids[1]);
        printf("survived\n");
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "reset_in_reset") == 0 ||
                      strcmp(argv[1], "destroy_in_reset") == 0 ||
                      strcmp(argv[1], "reset_in_destroy") == 0 ||
                      strcmp(argv[1], "destroy_in_destroy") == 0)) {
        ONEWAYALLOC *owa = onewayalloc_create(0);
        show("owa", owa);
        int destroys = strncmp(argv[1], "destroy_", 8) == 0;
        onewayalloc_add_cleanup(owa, destroys ? destroy_own_arena : reset_own_arena, owa);
        if (strcmp(strchr(argv[1], '_'), "_in_destroy") == 0)
            onewayalloc_destroy(owa);
        else
            onewayalloc_reset(owa);
        printf("survived\n");
        return 0;
    }
    CHECK(argc == 1);

    /* Order at reset, most recent first, blocks mixed in; each runs once. */
    ONEWAYALLOC *owa = onewayalloc_create(0);
    for (int i = 0; i < 5; i++) {
        onewayalloc_mallocz(owa, 24);
        onewayalloc_add_cleanup(owa, record, &ids[i]);
    }
    CHECK_EQ(nran, 0);
    onewayalloc_reset(owa);
    {
        const int want[] = {4, 3, 2, 1, 0};
        expect(want, 5);
    }
    onewayalloc_reset(owa); /* nothing runs again */
    expect(NULL, 0);

    /* Many cleanups, across pages, and a malloc() block owned by one. */
    for (int round = 0; round < 3; round++) {
        onewayalloc_add_cleanup(owa, free_block, malloc(100));
        for (int i = 0; i < 40; i++) {
            onewayalloc_mallocz(owa, 5000);
            onewayalloc_add_cleanup(owa, record, &ids[i % 16]);
        }
        onewayalloc_reset(owa);
        CHECK_EQ(nran, 41);
        CHECK_EQ(ran[0], 39 % 16);
        CHECK_EQ(ran[40], 100);
        nran = 0;
    }

    /* A cleanup that allocates from the same arena: allowed. */
    struct allocating alloc_arg = {owa, 7};
    onewayalloc_add_cleanup(owa, record, &ids[1]);
    onewayalloc_add_cleanup(owa, allocate_in_cleanup, &alloc_arg);
    onewayalloc_add_cleanup(owa, record, &ids[2]);
    onewayalloc_reset(owa);
    {
        const int want[] = {2, 7, 1};
        expect(want, 3);
    }
    /* The arena serves requests after that reset. */
    CHECK(strcmp(onewayalloc_strdupz(owa, "after"), "after") == 0);

    /* A cleanup that adds a cleanup: the new one runs in the same reset, first. */
    struct allocating add_arg = {owa, 8};
    onewayalloc_add_cleanup(owa, record, &ids[1]);
    onewayalloc_add_cleanup(owa, add_in_cleanup, &add_arg);
    onewayalloc_add_cleanup(owa, record, &ids[3]);
    onewayalloc_reset(owa);
    {
        const int want[] = {3, 8, 15, 1};
        expect(want, 4);
    }

    /* At destroy: most recent first, the allocating and adding ones too. */
    onewayalloc_add_cleanup(owa, free_block, malloc(100));
    onewayalloc_add_cleanup(owa, record, &ids[1]);
    onewayalloc_add_cleanup(owa, allocate_in_cleanup, &alloc_arg);
    onewayalloc_add_cleanup(owa, add_in_cleanup, &add_arg);
    onewayalloc_add_cleanup(owa, record, &ids[2]);
    onewayalloc_destroy(owa);
    {
        const int want[] = {2, 8, 15, 7, 1, 100};
        expect(want, 6);
    }

    /* An arena destroyed with nothing registered, and one never reset. */
    onewayalloc_destroy(onewayalloc_create(0));
    owa = onewayalloc_create(0);
    onewayalloc_add_cleanup(owa, free_block, malloc(100));
    onewayalloc_destroy(owa);
    {
        const int want[] = {100};
        expect(want, 1);
    }

    /* A cleanup that trims its own arena (issue 30): the reset trims after its last
     * cleanup, once the pages are available; the cleanup allocates after its trim. */
    size_t base = onewayalloc_allocated_memory();
    owa = onewayalloc_create(0);
    size_t first = onewayalloc_allocated_memory() - base;
    CHECK_EQ(first, PAGE_MODE ? first_page_size(0) : 0);
    onewayalloc_mallocz(owa, 100 * KIB); /* a second page in the page mode */
    CHECK(SEPARATE_BLOCKS || onewayalloc_allocated_memory() - base > first);
    struct trimming trim_all = {owa, 0, 9};
    onewayalloc_add_cleanup(owa, record, &ids[1]);
    onewayalloc_add_cleanup(owa, trim_in_cleanup, &trim_all);
    onewayalloc_add_cleanup(owa, record, &ids[2]);
    onewayalloc_reset(owa);
    {
        const int want[] = {2, 9, 1};
        expect(want, 3);
    }
    /* Only the first page is left (the sanitizer mode released every block). */
    CHECK_EQ(onewayalloc_allocated_memory() - base, first);
    CHECK(strcmp(onewayalloc_strdupz(owa, "after"), "after") == 0);

    /* Several trims: the smallest keep_bytes is carried out, whatever the order. */
    onewayalloc_mallocz(owa, 100 * KIB);
    size_t second = onewayalloc_allocated_memory() - base - first;
    struct trimming keep_second = {owa, second, 10}, keep_all = {owa, (size_t)-1, 11};
    onewayalloc_add_cleanup(owa, trim_in_cleanup, &keep_all);
    onewayalloc_add_cleanup(owa, trim_in_cleanup, &keep_second);
    onewayalloc_mallocz(owa, 200 * KIB); /* a third page */
    onewayalloc_reset(owa);
    {
        const int want[] = {10, 11};
        expect(want, 2);
    }
    CHECK_EQ(onewayalloc_allocated_memory() - base, PAGE_MODE ? first + second : 0);

    /* At destroy there is nothing left to trim: every page goes back. */
    onewayalloc_mallocz(owa, 100 * KIB);
    onewayalloc_add_cleanup(owa, trim_in_cleanup, &trim_all);
    onewayalloc_destroy(owa);
    {
        const int want[] = {9};
        expect(want, 1);
    }
    CHECK_EQ(onewayalloc_allocated_memory(), base);
    printf("ok\n");
    return 0;
}
