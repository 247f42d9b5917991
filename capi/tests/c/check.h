/*
 * Shared by the C test programs: checks that name the failing line, and what the
 * Rust driver (capi/tests/c_programs.rs) tells each program when compiling it.
 *
 *   SEPARATE_BLOCKS   1 if the library runs the sanitizer mode, 0 for the page mode
 *   PAGE_HEADER_SIZE  bytes of every page's header (onewayalloc::PAGE_HEADER_SIZE)
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "onewayalloc.h"

#if !defined(SEPARATE_BLOCKS) || !defined(PAGE_HEADER_SIZE)
#error "the driver passes -DSEPARATE_BLOCKS=0|1 and -DPAGE_HEADER_SIZE=n"
#endif

#define PAGE_MODE (!SEPARATE_BLOCKS)
#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define CHECK_EQ(a, b)                                                           \
    do {                                                                         \
        size_t check_a_ = (size_t)(a), check_b_ = (size_t)(b);                   \
        if (check_a_ != check_b_) {                                              \
            fprintf(stderr, "%s:%d: check failed: %s == %s (%zu != %zu)\n",      \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);             \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* The OS page size, which page sizes are rounded up to. */
static inline size_t os_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* The size of an arena's first page for `size_hint` (the header's rule). */
static inline size_t first_page_size(size_t size_hint) {
    size_t want = PAGE_HEADER_SIZE + size_hint;
    size_t size = want > 64 * KIB ? want : 64 * KIB;
    size_t page = os_page();
    return (size + page - 1) / page * page;
}

#endif
