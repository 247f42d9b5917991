/*
 * Netdata's context query, its allocation pattern written from scratch in C:
 *   - one arena per query, created with onewayalloc_create(0) and destroyed;
 *   - the virtual chart's arrays and each dimension's id, name and points;
 *   - the result array from callocz(mul3_or_fatal(points, dimensions, sizeof(double)));
 *   - per-group state structs callocz'd and freez'd;
 *   - a series that grows by doublesize and is reassigned (the median grouping);
 *   - freez of members that are NULL at the end.
 * Every result is checked against the same computation without the arena.
 *
 * Usage: query_pattern [CHARTS DIMENSIONS POINTS QUERIES]
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct dimension {
    char *id;
    char *name;
    double *points;
    char *units; /* set for one dimension in ten; NULL elsewhere */
};

struct chart {
    char *id;
    struct dimension **dimensions;
};

struct median_group {
    size_t size;
    size_t used;
    double *series;
};

static double point_value(size_t chart, size_t dim, size_t point) {
    return (double)((chart * 31 + dim * 7 + point * 13) % 1000) / 4.0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, size_t n) {
    qsort(values, n, sizeof(double), compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

/* The query on the arena: the sum over dimensions of their median, plus the sum of
 * every point, read back from the result array. */
static double query(size_t charts, size_t dims, size_t points) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    size_t total = onewayalloc_mul_or_fatal(charts, dims, "dimensions");

    struct chart *chart = onewayalloc_callocz(owa, charts, sizeof(*chart));
    struct dimension **virtual_chart = onewayalloc_callocz(owa, total, sizeof(*virtual_chart));
    CHECK(aligned16(chart) && aligned16(virtual_chart));
    size_t k = 0;
    char buffer[64];
    for (size_t c = 0; c < charts; c++) {
        snprintf(buffer, sizeof(buffer), "app.chart_%zu", c);
        chart[c].id = onewayalloc_strdupz(owa, buffer);
        chart[c].dimensions = onewayalloc_callocz(owa, dims, sizeof(struct dimension *));
        for (size_t d = 0; d < dims; d++) {
            struct dimension *dim = onewayalloc_callocz(owa, 1, sizeof(*dim));
            snprintf(buffer, sizeof(buffer), "%s.dim_%zu", chart[c].id, d);
            dim->id = onewayalloc_strdupz(owa, buffer);
            snprintf(buffer, sizeof(buffer), "dim_%zu", d);
            dim->name = onewayalloc_strdupz(owa, buffer);
            dim->points = onewayalloc_mallocz(
                owa, onewayalloc_mul_or_fatal(points, sizeof(double), "dimension points"));
            CHECK(aligned16(dim) && aligned16(dim->id) && aligned16(dim->name) &&
                  aligned16(dim->points));
            for (size_t p = 0; p < points; p++)
                dim->points[p] = point_value(c, d, p);
            if (d % 10 == 0)
                dim->units = onewayalloc_strdupz(owa, "%");
            chart[c].dimensions[d] = dim;
            virtual_chart[k++] = dim;
        }
    }

    /* The result: one row per point, one column per dimension, zeroed. */
    double *result = onewayalloc_callocz(
        owa, 1, onewayalloc_mul3_or_fatal(points, total, sizeof(double), "query result"));
    CHECK(aligned16(result));
    for (size_t i = 0; i < points * total; i++)
        CHECK(result[i] == 0.0);
    for (size_t p = 0; p < points; p++)
        for (size_t i = 0; i < total; i++)
            result[p * total + i] = virtual_chart[i]->points[p];

    /* Group by median: per dimension a state struct and a series that starts
     * small and doubles as it fills. */
    double answer = 0.0;
    for (size_t i = 0; i < total; i++) {
        struct median_group *g = onewayalloc_callocz(owa, 1, sizeof(*g));
        g->size = 2;
        g->series = onewayalloc_mallocz(owa, g->size * sizeof(double));
        for (size_t p = 0; p < points; p++) {
            if (g->used == g->size) {
                g->series = onewayalloc_doublesize(owa, g->series, g->size * sizeof(double));
                g->size *= 2;
                CHECK(aligned16(g->series));
            }
            g->series[g->used++] = result[p * total + i];
        }
        answer += median(g->series, g->used);
        onewayalloc_freez(owa, g->series);
        onewayalloc_freez(owa, g);
    }
    for (size_t i = 0; i < points * total; i++)
        answer += result[i];

    /* The end of the query frees what it can; most units are NULL. */
    for (size_t i = 0; i < total; i++) {
        onewayalloc_freez(owa, virtual_chart[i]->units);
        onewayalloc_freez(owa, virtual_chart[i]->points);
    }
    onewayalloc_freez(owa, result);
    onewayalloc_destroy(owa);
    return answer;
}

/* The same answer, computed with malloc. */
static double expected(size_t charts, size_t dims, size_t points) {
    double answer = 0.0;
    double *values = malloc(points * sizeof(double));
    CHECK(values != NULL);
    for (size_t c = 0; c < charts; c++)
        for (size_t d = 0; d < dims; d++) {
            for (size_t p = 0; p < points; p++) {
                values[p] = point_value(c, d, p);
                answer += values[p];
            }
            answer += median(values, points);
        }
    free(values);
    return answer;
}

int main(int argc, char **argv) {
    size_t charts = 50, dims = 20, points = 30, queries = 5;
    if (argc == 5) {
        charts = strtoul(argv[1], NULL, 10);
        dims = strtoul(argv[2], NULL, 10);
        points = strtoul(argv[3], NULL, 10);
        queries = strtoul(argv[4], NULL, 10);
    }
    double want = expected(charts, dims, points);
    for (size_t q = 0; q < queries; q++) {
        double got = query(charts, dims, points);
        /* The same operations in a different order of summation: exact here
         * because every value is a multiple of 0.125 and every sum stays far below 2^50. */
        if (got != want) {
            fprintf(stderr, "query %zu: %.17g, expected %.17g\n", q, got, want);
            return 1;
        }
        CHECK_EQ(onewayalloc_allocated_memory(), 0);
    }
    printf("query_pattern: %zu queries of %zu x %zu x %zu ok\n", queries, charts, dims, points);
    return 0;
}
