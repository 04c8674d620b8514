/* The hand-off of a 3840x2160 R8G8B8A8_UNORM texture (acquire + release + clFinish), the median of
 * ROUNDS after WARMUP: one C source built twice, for Windows (MinGW-w64, run under Wine with dxcl's
 * bridge and the program's Direct3D: wined3d) and for Linux (dxcl's runtime and headers), so that
 * scripts/wine/bench.sh compares the two in one run. Direct3D writes one texel between hand-offs,
 * so each acquire has new data to take. Prints "handoff: <median µs> µs (<rounds> rounds)".
 * With DXCL_TRACE=handoff, the layer's step table goes to stderr at the end: here (Linux) from the
 * layer's dxclTraceTake; under Wine the bridge's unix side prints it, with its round trips, when
 * the program exits (crates/dxcl-wine/src/trace.rs). */
#ifndef _WIN32
#define _GNU_SOURCE /* clock_gettime, RTLD_NOLOAD */
#endif
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <windows.h>
#include <d3d11.h>
#include <stdio.h>
#include <stdlib.h>
#include <CL/cl.h>
#include <CL/cl_d3d11.h>
#ifndef _WIN32
#include <string.h>
#include <time.h>

#include "../conformance/layer_symbol.h"
#endif

#define WIDTH 3840
#define HEIGHT 2160
#define WARMUP 3
#define ROUNDS 15

#include "common.h"

#ifndef _WIN32
/* The layer's step table (DXCL_TRACE=handoff) on stderr: dxclTraceTake of the layer the loader
 * loaded from OPENCL_LAYERS. */
static void print_trace(void)
{
    const char *trace = getenv("DXCL_TRACE");
    static char table[1 << 16];
    if (!trace || !strstr(trace, "handoff") || !getenv("OPENCL_LAYERS")) return;
    void *take = layer_symbol("dxclTraceTake");
    if (take)
    {
        ((size_t (*)(char *, size_t))take)(table, sizeof table);
        fputs(table, stderr);
        return;
    }
    fprintf(stderr, "handoff: no loaded layer of OPENCL_LAYERS exports dxclTraceTake\n");
}
#endif

int main(void)
{
    struct sharing s;
    if (sharing_open(&s, CL_ALL_DEVICES_FOR_D3D11_KHR, "handoff"))
        return 1;
    ID3D11Device *device = s.device;
    ID3D11DeviceContext *immediate = s.immediate;
    cl_platform_id platform = s.platform;
    cl_device_id cl_device = s.cl_device;
    clCreateFromD3D11Texture2DKHR_fn from_texture = s.from_texture;
    clEnqueueAcquireD3D11ObjectsKHR_fn acquire = s.acquire;
    clEnqueueReleaseD3D11ObjectsKHR_fn release = s.release;
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                     CL_CONTEXT_D3D11_DEVICE_KHR, (cl_context_properties)device, 0};
    cl_context ctx = clCreateContext(props, 1, &cl_device, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cl_device, NULL, &err);
    D3D11_TEXTURE2D_DESC d = {WIDTH, HEIGHT, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                              D3D11_BIND_SHADER_RESOURCE, 0, 0};
    ID3D11Texture2D *texture;
    if (!ctx || !q || FAILED(ID3D11Device_CreateTexture2D(device, &d, NULL, &texture)))
    {
        printf("handoff: no context or texture\n");
        return 1;
    }
    cl_mem image = from_texture(ctx, CL_MEM_READ_WRITE, texture, 0, &err);
    if (!image)
    {
        printf("handoff: clCreateFromD3D11Texture2DKHR: %d\n", err);
        return 1;
    }
    double t[ROUNDS];
    for (int i = 0; i < WARMUP + ROUNDS; i++)
    {
        UINT texel = 0xff000000u | (UINT)i;
        D3D11_BOX one = {0, 0, 0, 1, 1, 1};
        ID3D11DeviceContext_UpdateSubresource(immediate, (ID3D11Resource *)texture, 0, &one, &texel, 4, 4);
        double start = now_us();
        err = acquire(q, 1, &image, 0, NULL, NULL);
        err |= release(q, 1, &image, 0, NULL, NULL);
        err |= clFinish(q);
        double end = now_us();
        if (err)
        {
            printf("handoff: a hand-off failed\n");
            return 1;
        }
        if (i >= WARMUP) t[i - WARMUP] = end - start;
    }
    qsort(t, ROUNDS, sizeof t[0], cmp);
    printf("handoff: %.1f µs (%d rounds)\n", t[ROUNDS / 2], ROUNDS);
#ifndef _WIN32
    print_trace();
#endif
    clReleaseMemObject(image);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    ID3D11Texture2D_Release(texture);
    ID3D11DeviceContext_Release(immediate);
    ID3D11Device_Release(device);
    return 0;
}
