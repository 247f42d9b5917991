/*
 * Every allocating call: sizes, contents, zeroing and the 16-byte alignment of
 * every block; mallocz(0); strdupz and memdupz; blocks that do not overlap.
 */
#include <string.h>

#include "check.h"

#define BLOCKS 600

int main(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    CHECK(owa != NULL);

    /* mallocz of every size from 0 to 599, and some large ones: each block is
     * 16-byte aligned and holds its own bytes until the end. */
    unsigned char *blocks[BLOCKS + 3];
    size_t sizes[BLOCKS + 3];
    for (size_t i = 0; i < BLOCKS; i++)
        sizes[i] = i;
    sizes[BLOCKS] = 100 * KIB;   /* leaves the first page */
    sizes[BLOCKS + 1] = 3 * MIB; /* a page of its own */
    sizes[BLOCKS + 2] = 17;
    for (size_t i = 0; i < BLOCKS + 3; i++) {
        blocks[i] = onewayalloc_mallocz(owa, sizes[i]);
        CHECK(blocks[i] != NULL);
        CHECK(aligned16(blocks[i]));
        memset(blocks[i], (int)(i & 0xff), sizes[i]);
    }
    for (size_t i = 0; i < BLOCKS + 3; i++)
        for (size_t j = 0; j < sizes[i]; j++)
            CHECK(blocks[i][j] == (unsigned char)(i & 0xff));

    /* mallocz(0): a distinct, aligned block every time, accepted by freez. */
    void *zero1 = onewayalloc_mallocz(owa, 0);
    void *zero2 = onewayalloc_mallocz(owa, 0);
    CHECK(zero1 != zero2 && aligned16(zero1) && aligned16(zero2));
    CHECK(zero1 != blocks[0]);
    onewayalloc_freez(owa, zero1);
    onewayalloc_freez(owa, zero2);

    /* Any C type fits in a block, long double and max_align_t included. */
    long double *ld = onewayalloc_mallocz(owa, 4 * sizeof(long double));
    for (int i = 0; i < 4; i++)
        ld[i] = (long double)i / 3.0L;
    CHECK(ld[3] == 1.0L);

    /* strdupz: the string and its NUL, 16-byte aligned even right after an odd
     * size; an empty string too. */
    onewayalloc_mallocz(owa, 3);
    char *s = onewayalloc_strdupz(owa, "system.cpu");
    CHECK(aligned16(s) && strcmp(s, "system.cpu") == 0 && s[10] == '\0');
    char *empty = onewayalloc_strdupz(owa, "");
    CHECK(aligned16(empty) && empty[0] == '\0' && empty != s);

    /* memdupz: a copy, 16-byte aligned; size 0 with a NULL source is a block. */
    double values[5] = {1.5, 2.5, 3.5, 4.5, 5.5};
    onewayalloc_mallocz(owa, 1);
    double *copy = onewayalloc_memdupz(owa, values, sizeof(values));
    CHECK(aligned16(copy) && (void *)copy != (void *)values);
    CHECK(memcmp(copy, values, sizeof(values)) == 0);
    void *none = onewayalloc_memdupz(owa, NULL, 0);
    CHECK(none != NULL && aligned16(none));

    /* callocz zeroes, even memory that held other bytes before a reset (the page
     * mode reuses the same pages). */
    onewayalloc_reset(owa);
    for (int round = 0; round < 2; round++) {
        unsigned char *dirty[64];
        for (size_t i = 0; i < 64; i++) {
            dirty[i] = onewayalloc_mallocz(owa, 1000 + i);
            memset(dirty[i], 0xa5, 1000 + i);
        }
        onewayalloc_reset(owa);
        for (size_t i = 0; i < 64; i++) {
            unsigned char *z = onewayalloc_callocz(owa, 1000 + i, 1);
            CHECK(aligned16(z));
            for (size_t j = 0; j < 1000 + i; j++)
                CHECK(z[j] == 0);
            if (PAGE_MODE && round == 0)
                CHECK(z == dirty[i]); /* the same bytes, zeroed */
        }
        onewayalloc_reset(owa);
    }
    /* callocz with a product of 0 is a block too, and nmemb * size is used. */
    void *c0 = onewayalloc_callocz(owa, 0, 8);
    void *c1 = onewayalloc_callocz(owa, 8, 0);
    CHECK(c0 != NULL && c1 != NULL && c0 != c1 && aligned16(c0) && aligned16(c1));
    double *grid = onewayalloc_callocz(owa, 300, sizeof(double));
    for (int i = 0; i < 300; i++)
        CHECK(grid[i] == 0.0);

    onewayalloc_destroy(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    puts("blocks: ok");
    return 0;
}
