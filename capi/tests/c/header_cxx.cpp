// The header from C++: extern "C" linkage, C++ types living in arena blocks.
#include "onewayalloc.h"

#include <cstdio>
#include <cstring>
#include <new>

namespace {

struct Point {
    double time;
    double value;
    Point() : time(0), value(-1) {}
};

extern "C" void on_fatal(const char *message) { std::fprintf(stderr, "c++ handler: %s\n", message); }

} // namespace

int main() {
    onewayalloc_set_fatal_handler(on_fatal);
    ONEWAYALLOC *owa = onewayalloc_create(0);
    void *memory = onewayalloc_mallocz(owa, 10 * sizeof(Point));
    Point *points = new (memory) Point[10];
    for (int i = 0; i < 10; i++)
        points[i].time = i;
    char *name = onewayalloc_strdupz(owa, "c++");
    const std::size_t bytes = onewayalloc_mul_or_fatal(10, sizeof(Point), "points");
    void *copy = onewayalloc_memdupz(owa, points, bytes);
    bool ok = std::strcmp(name, "c++") == 0 && static_cast<Point *>(copy)[9].time == 9 &&
              static_cast<Point *>(copy)[9].value == -1;
    onewayalloc_reset(owa);
    onewayalloc_destroy(owa);
    onewayalloc_set_fatal_handler(nullptr);
    ok = ok && onewayalloc_allocated_memory() == 0;
    std::puts(ok ? "c++: ok" : "c++: FAILED");
    return ok ? 0 : 1;
}
