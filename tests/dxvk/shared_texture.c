/* dxclCreateSharedTexture2D on DXVK-native (include/dxcl/dxcl_dxvk.h): a texture whose memory dxcl
 * owns, shared with OpenCL in place (CL_MEM_USE_HOST_PTR on PoCL), round trips both ways through
 * acquire and release, and its references return to baseline; bad descriptions are refused. With
 * DXCL_SHARED_TEXTURE_MEMORY=exportable (and dxcl's Vulkan layer) the helper takes its GPU path on a
 * CPU device: exportable memory, which a CPU OpenCL device cannot import, so staging copies.
 * Linked with DXVK, SDL2 (tests/dxvk/shim.c) and libdxcl_layer.so (scripts/dxvk/test.sh). Prints
 * "shared_texture: N passed, N failed". */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <d3d11.h>
#include <dxcl/dxcl_dxvk.h>

#include <CL/cl.h>
#include <CL/cl_d3d11.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define W 64
#define H 32
#define ROUNDS 4

static void pattern(unsigned char *p, unsigned seed)
{
    for (unsigned i = 0; i < W * H * 4; i++)
        p[i] = (unsigned char)(i * (seed * 2 + 1) + seed);
}

/* Direct3D's view of the texture: copied to a staging texture and mapped. */
static int d3d_reads(ID3D11DeviceContext *ctx, ID3D11Texture2D *staging, ID3D11Texture2D *tex, const unsigned char *want)
{
    ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)staging, (ID3D11Resource *)tex);
    D3D11_MAPPED_SUBRESOURCE map;
    if (FAILED(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)staging, 0, D3D11_MAP_READ, 0, &map)))
        return 0;
    int same = 1;
    for (unsigned y = 0; y < H; y++)
        same &= memcmp((unsigned char *)map.pData + (size_t)y * map.RowPitch, want + (size_t)y * W * 4, W * 4) == 0;
    ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)staging, 0);
    return same;
}

int main(void)
{
    ID3D11Device *dev = NULL;
    ID3D11DeviceContext *ctx = NULL;
    HRESULT hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev, NULL,
                                   &ctx);
    CHECK(SUCCEEDED(hr) && dev);
    if (!dev) {
        printf("shared_texture: %d passed, %d failed\n", passed, failed);
        return 1;
    }
    ULONG dev_refs = refcount(dev);
    const char *memory = getenv("DXCL_SHARED_TEXTURE_MEMORY");
    int exportable = memory && strcmp(memory, "exportable") == 0;
    D3D11_TEXTURE2D_DESC d = {W, H, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                              D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS, 0, 0};

    /* Refused: null arguments, more than one subresource, a format OpenCL images lack, CPU access. */
    ID3D11Texture2D *tex = (ID3D11Texture2D *)0x1;
    CHECK(dxclCreateSharedTexture2D(NULL, &d, &tex) == E_INVALIDARG);
    CHECK(dxclCreateSharedTexture2D(dev, NULL, &tex) == E_INVALIDARG);
    CHECK(dxclCreateSharedTexture2D(dev, &d, NULL) == E_INVALIDARG);
    D3D11_TEXTURE2D_DESC bad = d;
    bad.MipLevels = 2;
    CHECK(dxclCreateSharedTexture2D(dev, &bad, &tex) == E_INVALIDARG && tex == NULL);
    bad = d;
    bad.Format = DXGI_FORMAT_BC1_UNORM;
    CHECK(dxclCreateSharedTexture2D(dev, &bad, &tex) == E_INVALIDARG);
    bad = d;
    bad.Usage = D3D11_USAGE_STAGING;
    bad.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    CHECK(dxclCreateSharedTexture2D(dev, &bad, &tex) == E_INVALIDARG);
    CHECK(refcount(dev) == dev_refs);

    hr = dxclCreateSharedTexture2D(dev, &d, &tex);
    printf("dxclCreateSharedTexture2D: 0x%08x\n", (unsigned)hr);
    CHECK(hr == S_OK && tex);
    D3D11_TEXTURE2D_DESC sd = d;
    sd.Usage = D3D11_USAGE_STAGING;
    sd.BindFlags = 0;
    sd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    ID3D11Texture2D *staging = NULL;
    CHECK(SUCCEEDED(ID3D11Device_CreateTexture2D(dev, &sd, NULL, &staging)));

    cl_platform_id p = NULL;
    clGetPlatformIDs(1, &p, NULL);
    clGetDeviceIDsFromD3D11KHR_fn ids = FN(clGetDeviceIDsFromD3D11KHR);
    clCreateFromD3D11Texture2DKHR_fn mktex = FN(clCreateFromD3D11Texture2DKHR);
    clEnqueueAcquireD3D11ObjectsKHR_fn acquire = FN(clEnqueueAcquireD3D11ObjectsKHR);
    clEnqueueReleaseD3D11ObjectsKHR_fn release = FN(clEnqueueReleaseD3D11ObjectsKHR);
    CHECK(ids && mktex && acquire && release);
    cl_device_id cldev = NULL;
    cl_uint n = 0;
    if (ids)
        CHECK(ids(p, CL_D3D11_DEVICE_KHR, dev, CL_PREFERRED_DEVICES_FOR_D3D11_KHR, 1, &cldev, &n) == CL_SUCCESS);
    if (tex && staging && cldev && mktex && acquire && release) {
        cl_int err;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, CL_CONTEXT_D3D11_DEVICE_KHR,
                                         (cl_context_properties)dev, 0};
        cl_context clctx = clCreateContext(props, 1, &cldev, NULL, NULL, &err);
        cl_command_queue q = clctx ? clCreateCommandQueueWithProperties(clctx, cldev, NULL, &err) : NULL;
        CHECK(q != NULL);
        ULONG tex_refs = refcount(tex);
        cl_mem m = clctx ? mktex(clctx, CL_MEM_READ_WRITE, tex, 0, &err) : NULL;
        CHECK(m && err == CL_SUCCESS);
        if (m && q) {
            CHECK(refcount(tex) == tex_refs + 1);
            /* In place: the object uses the texture's memory (the layer's host-pointer strategy). */
            cl_mem_flags flags = 0;
            void *host = NULL;
            clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof flags, &flags, NULL);
            clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof host, &host, NULL);
            printf("CL object: CL_MEM_USE_HOST_PTR %s, host_ptr %p\n", flags & CL_MEM_USE_HOST_PTR ? "set" : "unset",
                   host);
            cl_device_type type = 0;
            clGetDeviceInfo(cldev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
            if (!(type & CL_DEVICE_TYPE_CPU))
                /* A GPU imports the texture's exported memory (the layer's DXCL_LOG decision says
                 * external-memory; the GPU suite checks it): no host pointer. */
                CHECK(!(flags & CL_MEM_USE_HOST_PTR));
            else if (exportable)
                /* The GPU path's exportable memory on a CPU device: PoCL imports no fd, so the
                 * layer copies (its DXCL_LOG decision says why), and the round trips still hold. */
                CHECK(!(flags & CL_MEM_USE_HOST_PTR));
            else
                CHECK((flags & CL_MEM_USE_HOST_PTR) && host);
            unsigned char *a = malloc(W * H * 4), *b = malloc(W * H * 4), *got = malloc(W * H * 4);
            size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
            for (unsigned r = 0; r < ROUNDS; r++) {
                /* Direct3D writes, OpenCL reads. */
                pattern(a, 2 * r);
                ID3D11DeviceContext_UpdateSubresource(ctx, (ID3D11Resource *)tex, 0, NULL, a, W * 4, 0);
                CHECK(acquire(q, 1, &m, 0, NULL, NULL) == CL_SUCCESS);
                memset(got, 0, W * H * 4);
                CHECK(clEnqueueReadImage(q, m, CL_TRUE, origin, region, 0, 0, got, 0, NULL, NULL) == CL_SUCCESS);
                CHECK(memcmp(got, a, W * H * 4) == 0);
                /* OpenCL writes, Direct3D reads after the release. */
                pattern(b, 2 * r + 1);
                CHECK(clEnqueueWriteImage(q, m, CL_FALSE, origin, region, 0, 0, b, 0, NULL, NULL) == CL_SUCCESS);
                CHECK(release(q, 1, &m, 0, NULL, NULL) == CL_SUCCESS);
                CHECK(d3d_reads(ctx, staging, tex, b));
                CHECK(clFinish(q) == CL_SUCCESS);
            }
            free(a);
            free(b);
            free(got);
            CHECK(clReleaseMemObject(m) == CL_SUCCESS);
            CHECK(refcount(tex) == tex_refs);
        }
        if (q)
            clReleaseCommandQueue(q);
        if (clctx)
            clReleaseContext(clctx);
    }
    if (staging)
        ID3D11Texture2D_Release(staging);
    if (tex)
        CHECK(ID3D11Texture2D_Release(tex) == 0);
    ID3D11DeviceContext_Release(ctx);
    ULONG left = ID3D11Device_Release(dev);
    printf("device references left after the last release: %lu\n", (unsigned long)left);
    CHECK(left == 0);
    printf("shared_texture: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
