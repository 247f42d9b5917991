/*
 * Parallel queries, one arena per pthread, with onewayalloc_allocated_memory()
 * read from another thread all the while; an arena created on one thread and
 * destroyed on another.
 *
 * Usage: parallel_queries [THREADS QUERIES]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static size_t queries = 50;
static atomic_int running;
static pthread_barrier_t held, checked;

/* A small query: 20 charts x 10 dimensions x 30 points on its own arena. */
static double small_query(unsigned seed) {
    ONEWAYALLOC *owa = onewayalloc_create(0);
    double sum = 0.0;
    for (size_t d = 0; d < 200; d++) {
        char name[32];
        snprintf(name, sizeof(name), "dim_%u_%zu", seed, d);
        char *id = onewayalloc_strdupz(owa, name);
        double *points = onewayalloc_callocz(owa, 30, sizeof(double));
        CHECK(aligned16(id) && aligned16(points));
        for (size_t p = 0; p < 30; p++)
            points[p] = (double)(d + p);
        for (size_t p = 0; p < 30; p++)
            sum += points[p];
    }
    onewayalloc_destroy(owa);
    return sum;
}

static void *worker(void *arg) {
    ONEWAYALLOC **handed_over = arg;
    double want = 0.0;
    for (size_t d = 0; d < 200; d++)
        for (size_t p = 0; p < 30; p++)
            want += (double)(d + p);
    for (size_t q = 0; q < queries; q++)
        CHECK(small_query((unsigned)q) == want);

    /* Hold a known amount while the main thread reads the total, then hand the
     * arena over to be destroyed there. */
    ONEWAYALLOC *owa = onewayalloc_create(0);
    onewayalloc_mallocz(owa, 100 * KIB);
    onewayalloc_mallocz(owa, 100);
    *handed_over = owa;
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&checked);
    return NULL;
}

static void *monitor(void *arg) {
    size_t *samples = arg;
    while (atomic_load(&running)) {
        size_t now = onewayalloc_allocated_memory();
        /* Every page is a whole number of OS pages: a read is never torn. */
        if (PAGE_MODE)
            CHECK(now % os_page() == 0);
        (*samples)++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    size_t threads = 4;
    if (argc == 3) {
        threads = strtoul(argv[1], NULL, 10);
        queries = strtoul(argv[2], NULL, 10);
    }
    CHECK(threads > 0 && threads <= 64);
    pthread_t workers[64], watcher;
    ONEWAYALLOC *arenas[64];
    size_t samples = 0;
    CHECK(pthread_barrier_init(&held, NULL, (unsigned)threads + 1) == 0);
    CHECK(pthread_barrier_init(&checked, NULL, (unsigned)threads + 1) == 0);
    atomic_store(&running, 1);
    CHECK(pthread_create(&watcher, NULL, monitor, &samples) == 0);
    for (size_t t = 0; t < threads; t++)
        CHECK(pthread_create(&workers[t], NULL, worker, &arenas[t]) == 0);

    /* Every worker holds one arena of two pages (or two blocks) now. */
    pthread_barrier_wait(&held);
    size_t each = PAGE_MODE ? first_page_size(0) + 128 * KIB : 100 * KIB + 100;
    CHECK_EQ(onewayalloc_allocated_memory(), threads * each);
    pthread_barrier_wait(&checked);

    for (size_t t = 0; t < threads; t++) {
        CHECK(pthread_join(workers[t], NULL) == 0);
        onewayalloc_destroy(arenas[t]); /* created on the worker */
    }
    atomic_store(&running, 0);
    CHECK(pthread_join(watcher, NULL) == 0);
    CHECK(samples > 0);
    CHECK_EQ(onewayalloc_allocated_memory(), 0);
    printf("parallel_queries: %zu threads x %zu queries ok, %zu samples\n", threads, queries,
           samples);
    return 0;
}
