/* The layer on a foreign Direct3D 11 runtime (DXVK-native): the first clGetDeviceIDsFromD3D11KHR on
 * its device (issue 12: the release layer crashed there), both device sets, and a 64 KiB buffer and
 * a 256x256 texture round trip through the layer (staging copies: DXVK has no dxcl interop).
 *
 * Built against dxcl's headers, linked with DXVK's libdxvk_d3d11.so and SDL2 (scripts/dxvk/test.sh):
 * DXVK-native's SDL2 window-system integration needs SDL's video subsystem and its Vulkan library
 * loaded before the first device. Prints "foreign: N passed, N failed" like the conformance suite. */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <d3d11.h>

#include <CL/cl.h>
#include <CL/cl_d3d11.h>

#include "check.h"
#include <SDL2/SDL.h>
#include <SDL2/SDL_vulkan.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *type_name(cl_device_type t)
{
    return (t & CL_DEVICE_TYPE_CPU) ? "CPU" : (t & CL_DEVICE_TYPE_GPU) ? "GPU" : "other";
}

/* Fills a D3D resource of `bytes` bytes from `in` through UpdateSubresource, shares it, checks CL
 * sees the data, has CL write `out`'s pattern, releases it and reads it back in D3D. */
static void round_trip(ID3D11Device *dev, ID3D11DeviceContext *ctx, cl_context clctx, cl_command_queue q,
                       clCreateFromD3D11BufferKHR_fn mkbuf, clCreateFromD3D11Texture2DKHR_fn mktex,
                       clEnqueueAcquireD3D11ObjectsKHR_fn acquire, clEnqueueReleaseD3D11ObjectsKHR_fn release,
                       int texture)
{
    const UINT w = 256, h = 256, bytes = texture ? w * h * 4 : 65536;
    unsigned char *a = malloc(bytes), *b = malloc(bytes), *got = malloc(bytes);
    for (UINT i = 0; i < bytes; i++) {
        a[i] = (unsigned char)(i * 7 + 3);
        b[i] = (unsigned char)(i * 13 + 1);
    }
    ID3D11Resource *res = NULL, *staging = NULL;
    HRESULT hr;
    if (texture) {
        D3D11_TEXTURE2D_DESC d = {w, h, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                                  D3D11_BIND_SHADER_RESOURCE, 0, 0};
        hr = ID3D11Device_CreateTexture2D(dev, &d, NULL, (ID3D11Texture2D **)&res);
        d.Usage = D3D11_USAGE_STAGING;
        d.BindFlags = 0;
        d.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        if (SUCCEEDED(hr))
            hr = ID3D11Device_CreateTexture2D(dev, &d, NULL, (ID3D11Texture2D **)&staging);
    } else {
        D3D11_BUFFER_DESC d = {bytes, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, 0};
        hr = ID3D11Device_CreateBuffer(dev, &d, NULL, (ID3D11Buffer **)&res);
        d.Usage = D3D11_USAGE_STAGING;
        d.BindFlags = 0;
        d.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        if (SUCCEEDED(hr))
            hr = ID3D11Device_CreateBuffer(dev, &d, NULL, (ID3D11Buffer **)&staging);
    }
    CHECK(SUCCEEDED(hr));
    if (FAILED(hr))
        return;
    ID3D11DeviceContext_UpdateSubresource(ctx, res, 0, NULL, a, texture ? w * 4 : bytes, 0);
    ULONG before = refcount(res);
    cl_int err;
    cl_mem m = texture ? mktex(clctx, CL_MEM_READ_WRITE, (ID3D11Texture2D *)res, 0, &err)
                       : mkbuf(clctx, CL_MEM_READ_WRITE, (ID3D11Buffer *)res, &err);
    CHECK(err == CL_SUCCESS && m);
    if (m) {
        CHECK(refcount(res) == before + 1);
        CHECK(acquire(q, 1, &m, 0, NULL, NULL) == CL_SUCCESS);
        size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
        err = texture ? clEnqueueReadImage(q, m, CL_TRUE, origin, region, 0, 0, got, 0, NULL, NULL)
                      : clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, got, 0, NULL, NULL);
        CHECK(err == CL_SUCCESS && memcmp(got, a, bytes) == 0);
        err = texture ? clEnqueueWriteImage(q, m, CL_TRUE, origin, region, 0, 0, b, 0, NULL, NULL)
                      : clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
        CHECK(err == CL_SUCCESS);
        CHECK(release(q, 1, &m, 0, NULL, NULL) == CL_SUCCESS);
        CHECK(clFinish(q) == CL_SUCCESS);
        ID3D11DeviceContext_CopyResource(ctx, staging, res);
        D3D11_MAPPED_SUBRESOURCE map;
        hr = ID3D11DeviceContext_Map(ctx, staging, 0, D3D11_MAP_READ, 0, &map);
        CHECK(SUCCEEDED(hr));
        if (SUCCEEDED(hr)) {
            int same = 1;
            UINT rows = texture ? h : 1, row = texture ? w * 4 : bytes;
            for (UINT y = 0; y < rows; y++)
                same &= memcmp((unsigned char *)map.pData + (size_t)y * map.RowPitch, b + (size_t)y * row, row) == 0;
            CHECK(same);
            ID3D11DeviceContext_Unmap(ctx, staging, 0);
        }
        clReleaseMemObject(m);
        CHECK(refcount(res) == before);
    }
    printf("%s round trip done\n", texture ? "256x256 R8G8B8A8 texture" : "64 KiB buffer");
    ID3D11Resource_Release(staging);
    ID3D11Resource_Release(res);
    free(a);
    free(b);
    free(got);
}

int main(void)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0 || SDL_Vulkan_LoadLibrary(NULL) != 0) {
        printf("foreign: SDL: %s\nforeign: 0 passed, 1 failed\n", SDL_GetError());
        return 1;
    }
    ID3D11Device *dev = NULL;
    ID3D11DeviceContext *ctx = NULL;
    HRESULT hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev, NULL,
                                   &ctx);
    CHECK(SUCCEEDED(hr) && dev);
    if (!dev) {
        printf("foreign: %d passed, %d failed\n", passed, failed);
        return 1;
    }
    ULONG dev_refs = refcount(dev);

    cl_platform_id platforms[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, platforms, &np);
    CHECK(np > 0);
    cl_platform_id p = np ? platforms[0] : NULL;
    clGetDeviceIDsFromD3D11KHR_fn ids =
        (clGetDeviceIDsFromD3D11KHR_fn)clGetExtensionFunctionAddressForPlatform(p, "clGetDeviceIDsFromD3D11KHR");
    CHECK(ids != NULL);
    if (!ids) {
        printf("foreign: %d passed, %d failed\n", passed, failed);
        return 1;
    }
    cl_device_id devs[16];
    cl_uint n = 0;
    /* Issue 12 (a): the release layer crashed in this very first call. */
    cl_int err = ids(p, CL_D3D11_DEVICE_KHR, dev, CL_PREFERRED_DEVICES_FOR_D3D11_KHR, 16, devs, &n);
    printf("preferred: %s, %u device(s)\n", err == CL_SUCCESS ? "CL_SUCCESS" : "error", n);
    /* Issue 12 (b): lavapipe runs on the CPU, so the CPU devices are preferred. */
    CHECK(err == CL_SUCCESS && n > 0);
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++) {
        cl_device_type t = 0;
        clGetDeviceInfo(devs[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
        printf("  preferred %u: %s\n", i, type_name(t));
    }
    cl_uint nall = 0;
    err = ids(p, CL_D3D11_DEVICE_KHR, dev, CL_ALL_DEVICES_FOR_D3D11_KHR, 16, devs, &nall);
    CHECK(err == CL_SUCCESS && nall >= n && nall > 0);
    CHECK(refcount(dev) == dev_refs);

    if (nall > 0) {
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, CL_CONTEXT_D3D11_DEVICE_KHR,
                                         (cl_context_properties)dev, 0};
        cl_context clctx = clCreateContext(props, 1, devs, NULL, NULL, &err);
        CHECK(err == CL_SUCCESS);
        if (clctx) {
            cl_command_queue q = clCreateCommandQueueWithProperties(clctx, devs[0], NULL, &err);
            for (int texture = 0; texture < 2; texture++)
                round_trip(dev, ctx, clctx, q, FN(clCreateFromD3D11BufferKHR), FN(clCreateFromD3D11Texture2DKHR),
                           FN(clEnqueueAcquireD3D11ObjectsKHR), FN(clEnqueueReleaseD3D11ObjectsKHR), texture);
            clReleaseCommandQueue(q);
            clReleaseContext(clctx);
        }
        CHECK(refcount(dev) == dev_refs);
    }
    ID3D11DeviceContext_Release(ctx);
    ULONG left = ID3D11Device_Release(dev);
    printf("device references left after the last release: %lu\n", (unsigned long)left);
    CHECK(left == 0);
    SDL_Vulkan_UnloadLibrary();
    SDL_Quit();
    printf("foreign: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
