/* The header compiles as strict C89 (-std=c89 -pedantic -Werror) and links. */
#include "onewayalloc.h"

int main(void) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    char *s = onewayalloc_strdupz(owa, "c89");
    int ok = s[0] == 'c' && s[3] == '\0';
    onewayalloc_destroy(owa);
    return ok && onewayalloc_allocated_memory() == 0 ? 0 : 1;
}
