/*
 * NULL handles and pointers that do nothing, and the size products.
 */
#include "check.h"

int main(void) {
    /* Calls that accept NULL do nothing. */
    onewayalloc_destroy(NULL);
    onewayalloc_reset(NULL);
    onewayalloc_trim(NULL, 0);
    onewayalloc_freez(NULL, NULL);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);

    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t held = onewayalloc_allocated_memory();
    onewayalloc_freez(owa, NULL);
    CHECK_EQ(onewayalloc_allocated_memory(), held);

    /* A NULL source with nothing to keep: a fresh block, like mallocz(0). */
    void *fresh = onewayalloc_doublesize(owa, NULL, 0);
    CHECK(fresh != NULL && aligned16(fresh));
    onewayalloc_freez(owa, fresh);

    /* Products. */
    CHECK_EQ(onewayalloc_mul_or_fatal(30, 8, "points"), 240);
    CHECK_EQ(onewayalloc_mul_or_fatal(7, 0, "zero size"), 0);
    CHECK_EQ(onewayalloc_mul_or_fatal(0, SIZE_MAX, "zero count"), 0);
    CHECK_EQ(onewayalloc_mul_or_fatal(SIZE_MAX, 1, NULL), SIZE_MAX);
    CHECK_EQ(onewayalloc_mul_or_fatal((size_t)1 << 31, (size_t)1 << 32, "edge"), (size_t)1 << 63);
    CHECK_EQ(onewayalloc_mul3_or_fatal(30, 100, 8, "results"), 24000);
    CHECK_EQ(onewayalloc_mul3_or_fatal(0, SIZE_MAX, SIZE_MAX, "zero first"), 0);
    CHECK_EQ(onewayalloc_mul3_or_fatal(SIZE_MAX, 0, SIZE_MAX, "zero second"), 0);
    CHECK_EQ(onewayalloc_mul3_or_fatal(SIZE_MAX, SIZE_MAX, 0, "zero size"), 0);
    CHECK_EQ(onewayalloc_mul3_or_fatal(SIZE_MAX, 1, 1, NULL), SIZE_MAX);
    CHECK_EQ(onewayalloc_mul3_or_fatal((size_t)1 << 20, (size_t)1 << 20, (size_t)1 << 23, "edge"),
             (size_t)1 << 63);

    onewayalloc_destroy(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    puts("null_and_products: ok");
    return 0;
}
