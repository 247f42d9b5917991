/*
 * Arenas created per query share the process's page heap with every other arena:
 * the large pages a destroyed arena gave back are taken, still resident, by the
 * next arena, so its query faults almost nothing (counted with getrusage's minor
 * faults). argv[1] = "measure" prints the figures only (under Valgrind, whose own
 * memory management faults on its own account).
 */
#include <string.h>
#include <sys/resource.h>

#include "check.h"

static long minor_faults(void) {
    struct rusage usage;
    CHECK(getrusage(RUSAGE_SELF, &usage) == 0);
    return usage.ru_minflt;
}

/* A query's working set: 24 blocks of 1 MiB, each written whole. */
static void query(ONEWAYALLOC *owa) {
    for (int i = 0; i < 24; i++) {
        memset(onewayalloc_mallocz(owa, 1 * MIB - PAGE_HEADER_SIZE), i, 1 * MIB - PAGE_HEADER_SIZE);
    }
}

int main(int argc, char **argv) {
    int measure_only = argc > 1 && strcmp(argv[1], "measure") == 0;
    long before = minor_faults();
    ONEWAYALLOC *first = onewayalloc_create(0);
    query(first);
    long first_query = minor_faults() - before;
    size_t held = onewayalloc_allocated_memory();
    onewayalloc_destroy(first);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);

    before = minor_faults();
    ONEWAYALLOC *second = onewayalloc_create(0);
    query(second);
    long second_query = minor_faults() - before;
    /* The same pages are held: the count is the same. */
    CHECK_EQ(onewayalloc_allocated_memory(), held);
    onewayalloc_destroy(second);
    printf("page_reuse: minor faults, first query %ld, second query %ld\n", first_query,
           second_query);
    if (PAGE_MODE && !measure_only) {
        /* 24 MiB of 4 KiB pages is 6144 faults; resident pages taken back fault
         * nothing (the small first pages from malloc may). */
        CHECK(first_query >= 24 * 256 / 512); /* at least a fault per huge page */
        CHECK(second_query < 300);
    }
    puts("page_reuse: ok");
    return 0;
}
