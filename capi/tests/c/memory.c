/*
 * onewayalloc_allocated_memory through an arena's life: create, a new page,
 * reset keeping the pages, trim, a second arena, destroy bringing it back.
 * Exact figures for both modes.
 */
#include "check.h"

int main(void) {
    CHECK_EQ(onewayalloc_allocated_memory(), 0);

    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t first = first_page_size(0); /* 64 KiB on 4 KiB OS pages */
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? first : 0);

    /* 100 KiB do not fit in the first page: a second page, whose target is
     * 128 KiB (header included), holds them. */
    void *big = onewayalloc_mallocz(owa, 100 * KIB);
    size_t two_pages = first + 128 * KIB;
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 100 * KIB);

    /* A small block more: served from the pages held in the page mode. */
    void *small = onewayalloc_mallocz(owa, 100);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 100 * KIB + 100);

    /* freez frees in the sanitizer mode only. */
    onewayalloc_freez(owa, small);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 100 * KIB);
    (void)big;

    /* Reset keeps every page: the figure does not change in the page mode, and the
     * same work again obtains nothing new. The sanitizer mode releases every
     * outstanding block. */
    onewayalloc_reset(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 0);
    for (int round = 0; round < 10; round++) {
        onewayalloc_mallocz(owa, 100 * KIB);
        onewayalloc_mallocz(owa, 100);
        CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 100 * KIB + 100);
        onewayalloc_reset(owa);
    }

    /* Trim after a reset: keep_bytes of unused pages stay, the rest go back;
     * the first page always stays. */
    onewayalloc_trim(owa, 128 * KIB);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? two_pages : 0);
    onewayalloc_trim(owa, 0);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? first : 0);

    /* A second arena, with a size hint: its first page holds the hint. */
    ONEWAYALLOC *hinted = onewayalloc_create(1 * MIB);
    size_t hinted_first = first_page_size(1 * MIB);
    CHECK(hinted_first >= 1 * MIB + PAGE_HEADER_SIZE);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? first + hinted_first : 0);
    void *fits = onewayalloc_mallocz(hinted, 1 * MIB);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? first + hinted_first : 1 * MIB);
    (void)fits;

    /* A request too big for the schedule gets a page of exactly its size, rounded
     * up to the OS page. */
    onewayalloc_mallocz(owa, 5 * MIB);
    size_t exact = (5 * MIB + PAGE_HEADER_SIZE + os_page() - 1) / os_page() * os_page();
    CHECK_EQ(onewayalloc_allocated_memory(),
             PAGE_MODE ? first + exact + hinted_first : 6 * MIB);

    /* Destroy gives everything back. */
    onewayalloc_destroy(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? hinted_first : 1 * MIB);
    onewayalloc_destroy(hinted);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    puts("memory: ok");
    return 0;
}
