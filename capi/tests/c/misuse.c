/*
 * Bugs a sanitizer must report: `misuse CASE`. In the sanitizer mode every block is
 * its own malloc() block, so AddressSanitizer and Valgrind see each access; in the
 * page mode the same bugs land inside pages the arena still holds and run
 * silently (except after destroy, when the pages are gone). The Rust driver says
 * which configuration must report which case.
 */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
    CHECK(argc == 2);
    const char *c = argv[1];
    ONEWAYALLOC *owa = onewayalloc_create(0);
    volatile long *p = onewayalloc_mallocz(owa, 4 * sizeof(long));
    p[0] = 0x1234;
    if (strcmp(c, "use_after_reset") == 0) {
        onewayalloc_reset(owa);
        printf("read %lx after reset\n", p[0]);
    } else if (strcmp(c, "use_after_freez") == 0) {
        onewayalloc_freez(owa, (const void *)p);
        printf("read %lx after freez\n", p[0]);
    } else if (strcmp(c, "use_after_destroy") == 0) {
        onewayalloc_destroy(owa);
        owa = NULL;
        printf("read %lx after destroy\n", p[0]);
    } else if (strcmp(c, "write_past_the_end") == 0) {
        volatile char *s = onewayalloc_mallocz(owa, 24);
        onewayalloc_mallocz(owa, 24); /* something after it, as in any arena */
        s[24] = 'x';
        printf("wrote past the end\n");
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    onewayalloc_destroy(owa);
    return 0;
}
