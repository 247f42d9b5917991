/*
 * Netdata's context query in C, on malloc() and on this library: the benchmark of
 * Netdata's One Way Allocator write-up (1000 charts x 100 dimensions, 256 queries,
 * sequential and parallel), written from scratch.
 *
 * One query builds the virtual chart of a context: for every dimension of every
 * chart it allocates the dimension, copies its id and name, fills its points
 * buffer, and adds it to its chart's array and to the virtual chart's array (both
 * grown by doubling); then it allocates the result (points x dimensions doubles,
 * zeroed), fills it, sums it, and frees everything, structure by structure, as
 * Netdata's query code does with freez(). The same code runs on
 *   - malloc(): mallocz/callocz/strdupz/realloc/free;
 *   - OWA create/destroy: an arena created with onewayalloc_create(0) for the
 *     query and destroyed at its end, as Netdata does (the frees are
 *     onewayalloc_freez(), which frees nothing);
 *   - OWA reset: one arena per worker thread, reset before each query (pages
 *     kept).
 *
 * Sequential: one caller sends the queries one after another (response time = the
 * query's own time). Parallel: all queries are sent at once to N worker threads
 * (response time = from the start until the query is answered), as in Netdata's
 * parallel test of 256 callers.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p onewayalloc-capi
 *   cc -O2 capi/examples/context_query.c -Icapi/include \
 *       target/release/libonewayalloc_capi.a -lpthread -ldl -lm -o context_query
 *   ./context_query [--queries 256] [--charts 1000] [--dims 100] [--points 30] [--threads N]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "onewayalloc.h"

enum branch { MALLOC, OWA_CREATE, OWA_RESET, BRANCHES };
static const char *branch_names[BRANCHES] = {"malloc()", "OWA create/destroy", "OWA reset"};

static size_t charts = 1000, dims = 100, points = 30;

/* ----- The allocation calls of a query, on malloc or on an arena ---------------- */

static void *fatal_oom(size_t size) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", size);
    exit(1);
}

static inline void *q_malloc(ONEWAYALLOC *owa, size_t size) {
    if (owa)
        return onewayalloc_mallocz(owa, size);
    void *p = malloc(size);
    return p ? p : fatal_oom(size);
}

static inline void *q_calloc(ONEWAYALLOC *owa, size_t nmemb, size_t size) {
    if (owa)
        return onewayalloc_callocz(owa, nmemb, size);
    void *p = calloc(nmemb, size);
    return p ? p : fatal_oom(nmemb * size);
}

static inline char *q_strdup(ONEWAYALLOC *owa, const char *s) {
    if (owa)
        return onewayalloc_strdupz(owa, s);
    char *p = strdup(s);
    return p ? p : fatal_oom(strlen(s) + 1);
}

/* Doubles an array of `old_bytes`. */
static inline void *q_double(ONEWAYALLOC *owa, void *array, size_t old_bytes) {
    if (owa)
        return onewayalloc_doublesize(owa, array, old_bytes);
    void *p = realloc(array, 2 * old_bytes);
    return p ? p : fatal_oom(2 * old_bytes);
}

static inline void q_free(ONEWAYALLOC *owa, void *p) {
    if (owa)
        onewayalloc_freez(owa, p);
    else
        free(p);
}

/* ----- The query ----------------------------------------------------------------- */

struct dimension {
    char *id;
    char *name;
    double *points;
    size_t chart;
};

struct chart {
    char *id;
    struct dimension **dims;
    size_t used, size;
};

struct virtual_chart {
    struct dimension **dims;
    size_t used, size;
};

/* Appends `d` to an array that doubles when full. */
#define APPEND(owa, holder, d)                                                            \
    do {                                                                                  \
        if ((holder)->used == (holder)->size) {                                           \
            (holder)->dims = q_double(owa, (holder)->dims,                                \
                                      (holder)->size * sizeof(struct dimension *));       \
            (holder)->size *= 2;                                                          \
        }                                                                                 \
        (holder)->dims[(holder)->used++] = (d);                                           \
    } while (0)

/* One context query; returns its checksum. */
static double query(ONEWAYALLOC *owa, unsigned seed) {
    char buffer[96];
    struct chart *all = q_calloc(owa, charts, sizeof(struct chart));
    struct virtual_chart vc = {q_malloc(owa, 16 * sizeof(struct dimension *)), 0, 16};
    for (size_t c = 0; c < charts; c++) {
        struct chart *chart = &all[c];
        snprintf(buffer, sizeof(buffer), "app.context_%u.chart_%zu", seed, c);
        chart->id = q_strdup(owa, buffer);
        chart->size = 4;
        chart->dims = q_malloc(owa, chart->size * sizeof(struct dimension *));
        for (size_t d = 0; d < dims; d++) {
            struct dimension *dim = q_calloc(owa, 1, sizeof(*dim));
            snprintf(buffer, sizeof(buffer), "%s.dimension_%zu", chart->id, d);
            dim->id = q_strdup(owa, buffer);
            snprintf(buffer, sizeof(buffer), "dimension_%zu", d);
            dim->name = q_strdup(owa, buffer);
            dim->points = q_malloc(owa, points * sizeof(double));
            for (size_t p = 0; p < points; p++)
                dim->points[p] = (double)((c * 7 + d * 3 + p + seed) % 100);
            dim->chart = c;
            APPEND(owa, chart, dim);
            APPEND(owa, &vc, dim);
        }
    }

    size_t total = vc.used;
    size_t bytes = onewayalloc_mul3_or_fatal(points, total, sizeof(double), "query result");
    double *result = q_calloc(owa, 1, bytes);
    for (size_t i = 0; i < total; i++)
        for (size_t p = 0; p < points; p++)
            result[p * total + i] = vc.dims[i]->points[p];
    double sum = 0.0;
    for (size_t i = 0; i < points * total; i++)
        sum += result[i];
    for (size_t i = 0; i < total; i++)
        sum += (double)strlen(vc.dims[i]->name);

    /* Free structure by structure, as the query code does. */
    q_free(owa, result);
    for (size_t c = 0; c < charts; c++) {
        struct chart *chart = &all[c];
        for (size_t d = 0; d < chart->used; d++) {
            struct dimension *dim = chart->dims[d];
            q_free(owa, dim->points);
            q_free(owa, dim->name);
            q_free(owa, dim->id);
            q_free(owa, dim);
        }
        q_free(owa, chart->dims);
        q_free(owa, chart->id);
    }
    q_free(owa, vc.dims);
    q_free(owa, all);
    return sum;
}

/* The checksum a query must give. */
static double expected(unsigned seed) {
    double sum = 0.0;
    for (size_t c = 0; c < charts; c++)
        for (size_t d = 0; d < dims; d++) {
            for (size_t p = 0; p < points; p++)
                sum += (double)((c * 7 + d * 3 + p + seed) % 100);
            char name[96];
            snprintf(name, sizeof(name), "dimension_%zu", d);
            sum += (double)strlen(name);
        }
    return sum;
}

/* ----- Running the queries ------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct run {
    enum branch branch;
    size_t queries;
    int parallel;
    double start;
    atomic_size_t next;
    double *response; /* per query */
    double *want;     /* per seed */
};

/* One query of `run`, on the branch's allocator; `kept` is the worker's arena for
 * the reset branch. */
static void one_query(struct run *run, size_t q, ONEWAYALLOC *kept) {
    double t0 = now_s();
    unsigned seed = (unsigned)(q % 4);
    double got;
    if (run->branch == MALLOC) {
        got = query(NULL, seed);
    } else if (run->branch == OWA_CREATE) {
        ONEWAYALLOC *owa = onewayalloc_create(0);
        got = query(owa, seed);
        onewayalloc_destroy(owa);
    } else {
        onewayalloc_reset(kept);
        got = query(kept, seed);
    }
    double t1 = now_s();
    if (got != run->want[seed]) {
        fprintf(stderr, "%s: query %zu gave %.17g, expected %.17g\n",
                branch_names[run->branch], q, got, run->want[seed]);
        exit(1);
    }
    run->response[q] = run->parallel ? t1 - run->start : t1 - t0;
}

static void *worker(void *arg) {
    struct run *run = arg;
    ONEWAYALLOC *kept = run->branch == OWA_RESET ? onewayalloc_create(0) : NULL;
    for (;;) {
        size_t q = atomic_fetch_add(&run->next, 1);
        if (q >= run->queries)
            break;
        one_query(run, q, kept);
    }
    onewayalloc_destroy(kept);
    return NULL;
}

static void print_header(const char *title, size_t threads) {
    printf("\n%s test (%zu worker thread%s)\n\n", title, threads, threads == 1 ? "" : "s");
    printf("%-20s %12s %16s %16s %14s %14s %14s\n", "branch", "transactions", "time to complete",
           "transaction rate", "average resp.", "min resp.", "max resp.");
}

static double run_branch(enum branch branch, size_t queries, size_t threads, int parallel,
                         double *want) {
    struct run run = {.branch = branch, .queries = queries, .parallel = parallel,
                      .want = want};
    atomic_init(&run.next, 0);
    run.response = calloc(queries, sizeof(double));
    pthread_t tids[256];
    run.start = now_s();
    for (size_t t = 0; t < threads; t++)
        if (pthread_create(&tids[t], NULL, worker, &run) != 0) {
            fprintf(stderr, "cannot start a thread\n");
            exit(1);
        }
    for (size_t t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);
    double elapsed = now_s() - run.start;
    double sum = 0.0, min = run.response[0], max = run.response[0];
    for (size_t q = 0; q < queries; q++) {
        sum += run.response[q];
        min = run.response[q] < min ? run.response[q] : min;
        max = run.response[q] > max ? run.response[q] : max;
    }
    printf("%-20s %12zu %15.2fs %11.2f/sec %13.3fs %13.3fs %13.3fs\n", branch_names[branch],
           queries, elapsed, (double)queries / elapsed, sum / (double)queries, min, max);
    free(run.response);
    return elapsed;
}

static size_t arg(int argc, char **argv, const char *name, size_t fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return strtoul(argv[i + 1], NULL, 10);
    return fallback;
}

int main(int argc, char **argv) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t queries = arg(argc, argv, "--queries", 256);
    charts = arg(argc, argv, "--charts", charts);
    dims = arg(argc, argv, "--dims", dims);
    points = arg(argc, argv, "--points", points);
    size_t threads = arg(argc, argv, "--threads", cpus > 0 ? (size_t)cpus : 1);
    if (queries == 0 || charts == 0 || dims == 0 || points == 0 || threads == 0 || threads > 256) {
        fprintf(stderr, "usage: %s [--queries N] [--charts N] [--dims N] [--points N] "
                        "[--threads 1..256]\n", argv[0]);
        return 2;
    }
    double want[4];
    for (unsigned seed = 0; seed < 4; seed++)
        want[seed] = expected(seed);

    printf("context query: %zu charts x %zu dimensions, %zu points each, %zu queries\n", charts,
           dims, points, queries);
    double seconds[2][BRANCHES];
    print_header("sequential", 1);
    for (int b = 0; b < BRANCHES; b++)
        seconds[0][b] = run_branch((enum branch)b, queries, 1, 0, want);
    print_header("parallel", threads);
    for (int b = 0; b < BRANCHES; b++)
        seconds[1][b] = run_branch((enum branch)b, queries, threads, 1, want);

    printf("\nrate vs malloc():        %-10s %-10s\n", "sequential", "parallel");
    for (int b = 1; b < BRANCHES; b++)
        printf("  %-22s %6.2fx %10.2fx\n", branch_names[b], seconds[0][MALLOC] / seconds[0][b],
               seconds[1][MALLOC] / seconds[1][b]);
    if (onewayalloc_allocated_memory() != 0) {
        fprintf(stderr, "arenas still hold %zu bytes\n", onewayalloc_allocated_memory());
        return 1;
    }
    return 0;
}
