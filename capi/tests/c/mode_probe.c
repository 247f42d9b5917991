/* Prints which mode the library it is linked with runs: a freez lowers
 * onewayalloc_allocated_memory() in the sanitizer mode only. */
#include <stdio.h>

#include "onewayalloc.h"

int main(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    void *block = onewayalloc_mallocz(owa, 4096);
    size_t before = onewayalloc_allocated_memory();
    onewayalloc_freez(owa, block);
    size_t after = onewayalloc_allocated_memory();
    onewayalloc_destroy(owa);
    puts(after < before ? "separate-blocks" : "pages");
    return 0;
}
