/*
 * The linear-allocator article's experiment ("How latency impacts performance"),
 * in C against this library: create a linked list of 1,000,000 nodes, each with a
 * copied payload, and time the creation, on
 *   - malloc() (the article's memory-latency1),
 *   - the article's simple_alloc(): one pre-faulted 100 MB buffer and a bump
 *     (memory-latency2, the speed of light),
 *   - onewayalloc_mallocz() on a fresh arena (created, filled, destroyed),
 *   - onewayalloc_mallocz() on an arena reset before the round (its pages kept).
 * Each is timed over several rounds; the median is printed with its ratio to
 * malloc.
 *
 * Build and run (from the repository root):
 *   cargo build --release -p onewayalloc-capi
 *   cc -O2 capi/examples/memory_latency.c -Icapi/include \
 *       target/release/libonewayalloc_capi.a -lpthread -ldl -lm -o memory_latency
 *   ./memory_latency [NODES [ROUNDS]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onewayalloc.h"

#define SIMPLE_ALLOCATOR_SIZE 100000000UL
#define PAYLOAD "0123456789abcdefghijklm" /* 24 bytes with the NUL */

typedef struct node {
    struct node *next;
    uint64_t id;
    char payload[sizeof(PAYLOAD)];
} node_t;

/* The article's linear buffer: allocated and touched once, then bumped. */
static char *start_, *cur_, *end_;

static void init_alloc(void) {
    start_ = malloc(SIMPLE_ALLOCATOR_SIZE);
    if (start_ == NULL) {
        fprintf(stderr, "cannot allocate %lu bytes for the linear buffer\n", SIMPLE_ALLOCATOR_SIZE);
        exit(1);
    }
    memset(start_, 0, SIMPLE_ALLOCATOR_SIZE);
    cur_ = start_;
    end_ = start_ + SIMPLE_ALLOCATOR_SIZE;
}

static void *simple_alloc(size_t size) {
    if ((size_t)(end_ - cur_) < size) {
        fprintf(stderr, "the linear buffer is full\n");
        exit(1);
    }
    void *ptr = cur_;
    cur_ += size;
    return ptr;
}

enum contender { MALLOC, SIMPLE, OWA_FRESH, OWA_RESET, CONTENDERS };

static const char *names[CONTENDERS] = {
    "malloc", "simple_alloc (linear buffer)", "onewayalloc_mallocz (fresh arena)",
    "onewayalloc_mallocz (after reset)"};

static ONEWAYALLOC *owa;

static node_t *new_node(enum contender c, node_t *prev, uint64_t id) {
    node_t *n;
    switch (c) {
    case MALLOC:
        n = malloc(sizeof(node_t));
        break;
    case SIMPLE:
        n = simple_alloc(sizeof(node_t));
        break;
    default:
        n = onewayalloc_mallocz(owa, sizeof(node_t));
        break;
    }
    if (n == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    n->next = NULL;
    n->id = id;
    memcpy(n->payload, PAYLOAD, sizeof(PAYLOAD));
    if (prev)
        prev->next = n;
    return n;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One round: prepares the allocator, times the creation of `nodes` nodes, checks
 * the list, releases everything. Returns the creation time in microseconds. */
static double round_of(enum contender c, size_t nodes) {
    if (c == SIMPLE)
        cur_ = start_;
    if (c == OWA_FRESH)
        owa = onewayalloc_create(0);
    if (c == OWA_RESET)
        onewayalloc_reset(owa);

    double t0 = now_us();
    node_t *head = new_node(c, NULL, 0), *tail = head;
    for (size_t i = 1; i < nodes; i++)
        tail = new_node(c, tail, i);
    double elapsed = now_us() - t0;

    uint64_t sum = 0;
    size_t count = 0;
    for (node_t *n = head; n; n = n->next) {
        sum += n->id + (uint64_t)n->payload[22];
        count++;
    }
    uint64_t want = (uint64_t)nodes * (nodes - 1) / 2 + (uint64_t)nodes * 'm';
    if (count != nodes || sum != want) {
        fprintf(stderr, "%s: wrong list (%zu nodes, sum %llu)\n", names[c], count,
                (unsigned long long)sum);
        exit(1);
    }

    if (c == MALLOC)
        for (node_t *n = head, *next; n; n = next) {
            next = n->next;
            free(n);
        }
    if (c == OWA_FRESH)
        onewayalloc_destroy(owa);
    return elapsed;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    size_t nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (nodes < 1 || rounds < 1 || nodes * sizeof(node_t) > SIMPLE_ALLOCATOR_SIZE) {
        fprintf(stderr, "usage: %s [NODES (1..%lu) [ROUNDS]]\n", argv[0],
                SIMPLE_ALLOCATOR_SIZE / sizeof(node_t));
        return 2;
    }
    init_alloc();
    /* The reset contender's arena, filled once so that its pages exist. */
    ONEWAYALLOC *kept = onewayalloc_create(0);
    owa = kept;
    round_of(OWA_RESET, nodes);

    double median[CONTENDERS];
    double *times = malloc(sizeof(double) * (size_t)rounds * CONTENDERS);
    /* Rounds interleave the contenders, so that a noisy moment hits them all. */
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < CONTENDERS; c++) {
            if (c == OWA_RESET)
                owa = kept;
            times[c * rounds + r] = round_of((enum contender)c, nodes);
        }
    for (int c = 0; c < CONTENDERS; c++) {
        qsort(times + c * rounds, (size_t)rounds, sizeof(double), compare);
        median[c] = times[c * rounds + rounds / 2];
    }

    printf("%zu nodes of %zu bytes, median of %d rounds\n\n", nodes, sizeof(node_t), rounds);
    printf("%-36s %12s %10s %12s\n", "allocator", "creation", "per node", "vs malloc");
    for (int c = 0; c < CONTENDERS; c++)
        printf("%-36s %9.0f us %7.2f ns %11.2fx\n", names[c], median[c],
               median[c] * 1000.0 / (double)nodes, median[MALLOC] / median[c]);
    printf("\nonewayalloc_mallocz (after reset) takes %.2fx the time of simple_alloc\n",
           median[OWA_RESET] / median[SIMPLE]);

    free(times);
    onewayalloc_destroy(kept);
    free(start_);
    return 0;
}
