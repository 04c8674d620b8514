/* layer_symbol(name): `name` in a layer the OpenCL loader loaded from OPENCL_LAYERS (dxcl's layer
 * exports dxclHeldObjects and dxclTraceTake for tests and tools), or NULL when no loaded layer of
 * the list has it. Linux only: the loader there loads layers with dlopen. */
#ifndef DXCL_TESTS_LAYER_SYMBOL_H
#define DXCL_TESTS_LAYER_SYMBOL_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *layer_symbol(const char *name)
{
    const char *layers = getenv("OPENCL_LAYERS");
    char path[4096];
    for (const char *p = layers ? layers : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && n < sizeof path) {
            memcpy(path, p, n);
            path[n] = 0;
            void *layer = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
            void *symbol = layer ? dlsym(layer, name) : NULL;
            if (layer)
                dlclose(layer); /* NOLOAD took a reference of its own; the loader keeps its one */
            if (symbol)
                return symbol;
        }
        p += n + (p[n] == ':');
    }
    return NULL;
}

#endif
