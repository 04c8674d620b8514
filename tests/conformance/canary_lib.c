/* libdxcl_canary.so: the errors of the sanitizers' canary (canary.c), in a library named like dxcl's own
 * (libdxcl_*), so that a suppression that matched dxcl's frames would hide them too. Each function makes
 * exactly one error on purpose; canary.sh requires the sanitizer to report it and the run to fail. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Where a pointer goes to be forgotten: the compiler cannot drop a store to it, and the next store
 * overwrites the only copy. */
static void *volatile dxcl_canary_slot;

/* A heap block no pointer reaches any more: "definitely lost" (valgrind), a leak (LeakSanitizer). */
__attribute__((noinline)) void dxcl_canary_leak(void)
{
    char *p = malloc(48);
    if (p)
        memset(p, 0x2a, 48);
    dxcl_canary_slot = p;
    dxcl_canary_slot = NULL;
}

/* Reads the byte just past the end of a 16-byte heap block. */
__attribute__((noinline)) int dxcl_canary_overread(void)
{
    char *p = malloc(16);
    if (!p)
        return 0;
    memset(p, 1, 16);
    dxcl_canary_slot = p;
    int v = ((volatile char *)dxcl_canary_slot)[16];
    dxcl_canary_slot = NULL;
    free(p);
    return v;
}

/* Signed overflow (undefined behaviour): INT_MAX + n for n >= 1. */
__attribute__((noinline)) int dxcl_canary_overflow(int n) { return INT_MAX + n; }

/* An OpenCL context and buffer created on the first platform's first device. With `release` 0 they are
 * never released: their memory is allocated by the platform (PoCL) on behalf of this library, the way an
 * object the layer forgot to release would be, so a suppression of the platform's own leaks that also
 * covered objects created through it would hide this one. Returns 0 when there is no platform. */
__attribute__((noinline)) int dxcl_canary_cl_objects(int release)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS)
        return 0;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    if (!ctx)
        return 0;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
    if (!m) {
        clReleaseContext(ctx);
        return 0;
    }
    if (release) {
        clReleaseMemObject(m);
        clReleaseContext(ctx);
    } else {
        dxcl_canary_slot = m;
        dxcl_canary_slot = ctx;
        dxcl_canary_slot = NULL;
    }
    return 1;
}
