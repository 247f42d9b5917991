/*
 * Netdata's health loop, its allocation pattern written from scratch in C: one
 * long-lived arena, reset before each of many alert evaluations. In the page mode
 * the arena reaches its high-water mark with the first (large) evaluation and
 * obtains nothing after it: onewayalloc_allocated_memory() stays flat. A trim after
 * the loop gives back all but the first page.
 *
 * Usage: alerts_pattern [ALERTS]
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct variable {
    char *name;
    double value;
};

int main(int argc, char **argv) {
    size_t alerts = argc == 2 ? strtoul(argv[1], NULL, 10) : 2000;
    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t high_water = 0;
    char buffer[64];
    for (size_t alert = 0; alert < alerts; alert++) {
        onewayalloc_reset(owa);
        if (!PAGE_MODE)
            CHECK_EQ(onewayalloc_allocated_memory(), 0); /* reset released every block */

        /* Every 250th alert looks back over 50,000 values (400 KB), the others over
         * 200. The lookback comes first, then the small things. */
        size_t count = alert % 250 == 0 ? 50000 : 200;
        double *values = onewayalloc_mallocz(owa, count * sizeof(double));
        for (size_t i = 0; i < count; i++)
            values[i] = (double)((alert + i) % 100);
        struct variable *vars = onewayalloc_callocz(owa, 16, sizeof(*vars));
        for (size_t v = 0; v < 16; v++) {
            snprintf(buffer, sizeof(buffer), "$var_%zu", v);
            vars[v].name = onewayalloc_strdupz(owa, buffer);
            vars[v].value = (double)v;
        }
        char *expression = onewayalloc_strdupz(owa, "$this > $warning && $status != $CLEAR");
        CHECK(aligned16(values) && aligned16(vars) && aligned16(expression));

        double sum = 0.0;
        for (size_t i = 0; i < count; i++)
            sum += values[i];
        double want = 0.0;
        for (size_t i = 0; i < count; i++)
            want += (double)((alert + i) % 100);
        CHECK(sum == want);
        CHECK(strcmp(vars[15].name, "$var_15") == 0 && vars[15].value == 15.0);

        if (alert == 0)
            high_water = onewayalloc_allocated_memory();
        else if (PAGE_MODE)
            CHECK_EQ(onewayalloc_allocated_memory(), high_water);
    }
    if (PAGE_MODE) {
        /* The first page and the one that holds the lookback. */
        CHECK(high_water > first_page_size(0) + 400000);
        CHECK(high_water < first_page_size(0) + 400000 + 64 * KIB);
    }

    onewayalloc_reset(owa);
    onewayalloc_trim(owa, 0);
    CHECK_EQ(onewayalloc_allocated_memory(), PAGE_MODE ? first_page_size(0) : 0);
    onewayalloc_destroy(owa);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    printf("alerts_pattern: %zu alerts ok, high-water %zu bytes\n", alerts, high_water);
    return 0;
}
