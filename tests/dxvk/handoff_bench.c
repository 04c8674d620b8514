/* Hand-off cost of a DXVK texture, staging copies against shadow copies (docs/dxvk.md): a
 * 3840x2160 R8G8B8A8_UNORM texture made by DXVK's CreateTexture2D, shared with
 * DXCL_STRATEGY=staging, and a second one with the layer's own choice (shadow-copy; one subresource
 * makes one memory object per context), then acquire + release +
 * clFinish timed ROUNDS times each, alternating, in one run. Prints the medians and their ratio, and
 * the median of each part (the acquire call, the release call, clFinish) to show where time goes,
 * and DXVK's own floor for a shadow acquire: a texture copy and a CPU wait for it, no OpenCL.
 * Each sample starts with DXVK's queue idle: the Direct3D work a release leaves queued (the copy
 * back into the texture) is waited for after the sample, untimed, and shown as its own part, so one
 * strategy's write-back is never billed to the other's next hand-off.
 * Exits non-zero if a call fails or the layer did not pick shadow-copy for the second object. */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <d3d11.h>

#include <CL/cl.h>
#include <CL/cl_d3d11.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 3840
#define H 2160
#define ROUNDS 15

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Waits until DXVK has run everything issued so far: an event query, flushed, polled. */
static void drain(ID3D11DeviceContext *ctx, ID3D11Query *query)
{
    ID3D11DeviceContext_End(ctx, (ID3D11Asynchronous *)query);
    ID3D11DeviceContext_Flush(ctx);
    BOOL done = FALSE;
    while (ID3D11DeviceContext_GetData(ctx, (ID3D11Asynchronous *)query, &done, sizeof done, 0) != S_OK)
        ;
}

int main(void)
{
    ID3D11Device *dev = NULL;
    ID3D11DeviceContext *ctx = NULL;
    if (FAILED(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev, NULL,
                                 &ctx))) {
        printf("FAIL handoff_bench: D3D11CreateDevice\n");
        return 1;
    }
    D3D11_TEXTURE2D_DESC d = {W, H, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                              D3D11_BIND_SHADER_RESOURCE, 0, 0};
    ID3D11Texture2D *tex[2] = {NULL, NULL};
    if (FAILED(ID3D11Device_CreateTexture2D(dev, &d, NULL, &tex[0])) ||
        FAILED(ID3D11Device_CreateTexture2D(dev, &d, NULL, &tex[1]))) {
        printf("FAIL handoff_bench: CreateTexture2D\n");
        return 1;
    }
    cl_platform_id p = NULL;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDsFromD3D11KHR_fn ids = FN(clGetDeviceIDsFromD3D11KHR);
    clCreateFromD3D11Texture2DKHR_fn mktex = FN(clCreateFromD3D11Texture2DKHR);
    clEnqueueAcquireD3D11ObjectsKHR_fn acquire = FN(clEnqueueAcquireD3D11ObjectsKHR);
    clEnqueueReleaseD3D11ObjectsKHR_fn release = FN(clEnqueueReleaseD3D11ObjectsKHR);
    cl_device_id cldev = NULL;
    cl_uint n = 0;
    if (!ids || !mktex || !acquire || !release ||
        ids(p, CL_D3D11_DEVICE_KHR, dev, CL_PREFERRED_DEVICES_FOR_D3D11_KHR, 1, &cldev, &n) != CL_SUCCESS) {
        printf("FAIL handoff_bench: no OpenCL device for DXVK's\n");
        return 1;
    }
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, CL_CONTEXT_D3D11_DEVICE_KHR,
                                     (cl_context_properties)dev, 0};
    cl_context clctx = clCreateContext(props, 1, &cldev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(clctx, cldev, NULL, &err);
    cl_mem m[2];
    setenv("DXCL_STRATEGY", "staging", 1);
    m[0] = mktex(clctx, CL_MEM_READ_WRITE, tex[0], 0, &err);
    unsetenv("DXCL_STRATEGY");
    m[1] = mktex(clctx, CL_MEM_READ_WRITE, tex[1], 0, &err);
    if (!m[0] || !m[1]) {
        printf("FAIL handoff_bench: clCreateFromD3D11Texture2DKHR\n");
        return 1;
    }
    D3D11_QUERY_DESC qd = {D3D11_QUERY_EVENT, 0};
    ID3D11Query *query = NULL;
    if (FAILED(ID3D11Device_CreateQuery(dev, &qd, &query))) {
        printf("FAIL handoff_bench: CreateQuery(D3D11_QUERY_EVENT)\n");
        return 1;
    }
    drain(ctx, query);
    /* [strategy][part: whole, acquire, release, clFinish, DXVK's queue after][round] */
    double t[2][5][ROUNDS];
    int ok = 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 2; i++) {
            double t0 = now_ms();
            ok &= acquire(q, 1, &m[i], 0, NULL, NULL) == CL_SUCCESS;
            double t1 = now_ms();
            ok &= release(q, 1, &m[i], 0, NULL, NULL) == CL_SUCCESS;
            double t2 = now_ms();
            ok &= clFinish(q) == CL_SUCCESS;
            double t3 = now_ms();
            drain(ctx, query);
            double t4 = now_ms();
            t[i][0][r] = t3 - t0;
            t[i][1][r] = t1 - t0;
            t[i][2][r] = t2 - t1;
            t[i][3][r] = t3 - t2;
            t[i][4][r] = t4 - t3;
        }
    }
    /* DXVK's own floor for what a shadow acquire must do: one 4K texture copy on DXVK's queue and
     * a CPU wait for it (an event query, as an application would), with no OpenCL at all. */
    double floor_ms[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ms();
        ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)tex[0], (ID3D11Resource *)tex[1]);
        drain(ctx, query);
        floor_ms[r] = now_ms() - t0;
    }
    ID3D11Query_Release(query);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 5; k++)
            qsort(t[i][k], ROUNDS, sizeof(double), cmp);
    qsort(floor_ms, ROUNDS, sizeof(double), cmp);
    double staging = t[0][0][ROUNDS / 2], shadow = t[1][0][ROUNDS / 2];
    printf("handoff_bench: %dx%d R8G8B8A8_UNORM, acquire + release + clFinish, median of %d:\n", W, H, ROUNDS);
    printf("  staging-copy %.2f ms, shadow-copy %.2f ms: shadow copies %.1fx faster\n", staging, shadow,
           staging / shadow);
    for (int i = 0; i < 2; i++)
        printf("  %s parts (medians): acquire %.3f ms, release %.3f ms, clFinish %.3f ms; then DXVK's queue "
               "(untimed above) %.3f ms\n",
               i ? "shadow-copy" : "staging-copy", t[i][1][ROUNDS / 2], t[i][2][ROUNDS / 2], t[i][3][ROUNDS / 2],
               t[i][4][ROUNDS / 2]);
    printf("  DXVK alone: a 4K texture copy and a CPU wait for it (event query) %.3f ms; shadow acquire call %.2fx it\n",
           floor_ms[ROUNDS / 2], t[1][1][ROUNDS / 2] / floor_ms[ROUNDS / 2]);
    clReleaseMemObject(m[0]);
    clReleaseMemObject(m[1]);
    clReleaseCommandQueue(q);
    clReleaseContext(clctx);
    ID3D11Texture2D_Release(tex[0]);
    ID3D11Texture2D_Release(tex[1]);
    ID3D11DeviceContext_Release(ctx);
    ID3D11Device_Release(dev);
    if (!ok)
        printf("FAIL handoff_bench: a call failed\n");
    return !ok;
}
