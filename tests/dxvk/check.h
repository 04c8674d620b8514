/* What the DXVK suite's programs share (the programs in tests/dxvk): the pass/fail counters and CHECK, which
 * print like the conformance suite ("FAIL file:line: expression"), a COM reference count, and the
 * lookup of an extension entry point of platform `p` by its name. One program per translation
 * unit, so the counters are static. */
#ifndef DXCL_TESTS_DXVK_CHECK_H
#define DXCL_TESTS_DXVK_CHECK_H

#include <stdio.h>

/* Unused by programs that only time (handoff_bench). */
static int passed __attribute__((unused)), failed __attribute__((unused));

#define CHECK(c)                                                                                  \
    do {                                                                                          \
        if (c)                                                                                    \
            passed++;                                                                             \
        else {                                                                                    \
            failed++;                                                                             \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                   \
        }                                                                                         \
    } while (0)

/* The object's COM reference count (an AddRef and a Release). */
static inline ULONG refcount(void *p)
{
    IUnknown_AddRef((IUnknown *)p);
    return IUnknown_Release((IUnknown *)p);
}

/* An extension function of the platform in scope as `p`, typed by the Khronos header's NAME_fn. */
#define FN(name) (name##_fn) clGetExtensionFunctionAddressForPlatform(p, #name)

#endif
