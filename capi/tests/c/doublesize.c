/*
 * onewayalloc_doublesize: in place for the most recent block that ends exactly
 * `oldsize` bytes after its start (page mode), moved otherwise, contents kept.
 */
#include <string.h>

#include "check.h"

int main(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);

    /* The most recent block, 64 bytes, doubled with oldsize 64: in place in the
     * page mode (Netdata's always copies). */
    unsigned char *a = onewayalloc_mallocz(owa, 64);
    for (int i = 0; i < 64; i++)
        a[i] = (unsigned char)i;
    unsigned char *a2 = onewayalloc_doublesize(owa, a, 64);
    CHECK(aligned16(a2));
    if (PAGE_MODE)
        CHECK(a2 == a);
    for (int i = 0; i < 64; i++)
        CHECK(a2[i] == (unsigned char)i);
    memset(a2 + 64, 0x77, 64); /* the new half is the caller's */

    /* Not the most recent block any more: moved, contents kept; in the page mode
     * the old block stays valid until reset. */
    unsigned char *b = onewayalloc_mallocz(owa, 32);
    memset(b, 0x42, 32);
    unsigned char *a3 = onewayalloc_doublesize(owa, a2, 128);
    CHECK(a3 != a2 && aligned16(a3));
    for (int i = 0; i < 64; i++)
        CHECK(a3[i] == (unsigned char)i && a3[64 + i] == 0x77);
    if (PAGE_MODE)
        CHECK(a2[0] == 0 && a2[127] == 0x77);
    for (int i = 0; i < 32; i++)
        CHECK(b[i] == 0x42);

    /* A string doubled by strlen: the kept bytes end one byte before the block
     * does (its NUL), so it is copied, as the header says. */
    char *s = onewayalloc_strdupz(owa, "abcdefgh");
    char *s2 = onewayalloc_doublesize(owa, s, strlen(s));
    CHECK(aligned16(s2) && memcmp(s2, "abcdefgh", 8) == 0);
    if (PAGE_MODE)
        CHECK(s2 != s && strcmp(s, "abcdefgh") == 0);
    s2[8] = '\0';

    /* A series that keeps doubling and is reassigned, as Netdata's median
     * grouping does: its values survive every move, and in the page mode it grows
     * in place until it leaves its page. */
    size_t size = 4, used = 0, in_place = 0, moves = 0;
    double *series = onewayalloc_mallocz(owa, size * sizeof(double));
    for (size_t v = 0; v < 100000; v++) {
        if (used == size) {
            double *grown = onewayalloc_doublesize(owa, series, size * sizeof(double));
            CHECK(aligned16(grown));
            if (grown == series)
                in_place++;
            else
                moves++;
            series = grown;
            size *= 2;
        }
        series[used++] = (double)v * 0.5;
    }
    for (size_t v = 0; v < used; v++)
        CHECK(series[v] == (double)v * 0.5);
    printf("series: %zu doublings in place, %zu moved\n", in_place, moves);
    if (PAGE_MODE) {
        /* 4 -> 131072 doubles: 15 doublings. It leaves the first page (64 KiB)
         * and the pages with room to double once more it moves into: at most one
         * move every other doubling. */
        CHECK_EQ(in_place + moves, 15);
        CHECK(in_place >= 7);
    }

    /* The result is always a block of 2 * oldsize bytes, even when the source
     * block was larger. */
    unsigned char *big = onewayalloc_mallocz(owa, 1000);
    memset(big, 9, 1000);
    unsigned char *small = onewayalloc_doublesize(owa, big, 10);
    for (int i = 0; i < 10; i++)
        CHECK(small[i] == 9);
    memset(small, 1, 20);

    onewayalloc_destroy(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    puts("doublesize: ok");
    return 0;
}
