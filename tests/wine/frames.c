/* `dxcl frames`' rows a, b and c (docs/benchmarks.md, "The frame pipeline") as one C source built
 * for Windows (MinGW-w64, run under Wine with dxcl's bridge and wined3d) and for Linux (dxcl's
 * runtime and headers), so that scripts/wine/bench.sh runs the frame loop on both in one run:
 * `dxcl frames` itself is Rust that links dxcl's runtime and layer crates, which are Linux
 * libraries. Each frame at 3840x2160 R8G8B8A8_UNORM, the same kernel (a 5x5 box blur) and host
 * frames of the same hash as `dxcl frames`:
 * - a. opencl-only: clEnqueueWriteImage (blocking) of the host frame, the kernel, clEnqueueCopyImage
 *   onward, clFinish;
 * - b. host-round-trip: UpdateSubresource; CopyResource into a staging texture, Map, a blocking
 *   clEnqueueWriteImage from the mapping, Unmap; the kernel; clEnqueueReadImage; UpdateSubresource
 *   of the result texture; CopyResource onward;
 * - c. dxcl: UpdateSubresource; acquire both textures, the kernel, release both; CopyResource
 *   onward (the layer's sync mode: DXCL_SYNC, default adaptive).
 * Direct3D's frames end with a 1x1 copy of the onward texture mapped (the wait for the frame).
 * Prints "frames <case>: <median ms> ms (<n> frames)" per case, the median of FRAMES after WARMUP;
 * the last frame of each case is read back and checked against a CPU blur (one code of tolerance),
 * and a wrong one fails the program. */
#ifndef _WIN32
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#endif
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <windows.h>
#include <d3d11.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CL/cl.h>
#include <CL/cl_d3d11.h>
#ifndef _WIN32
#include <time.h>
#endif

#define WIDTH 3840
#define HEIGHT 2160
#define ROW (WIDTH * 4)
#define BYTES ((size_t)ROW * HEIGHT)
#define WARMUP 1
#define FRAMES 5
#define HOST_FRAMES 2

static const char *kernel_source =
    "__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "__kernel void blur5(__read_only image2d_t src, __write_only image2d_t dst) {\n"
    "    int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "    float4 sum = (float4)(0.0f);\n"
    "    for (int dy = -2; dy <= 2; dy++)\n"
    "        for (int dx = -2; dx <= 2; dx++)\n"
    "            sum += read_imagef(src, edge, p + (int2)(dx, dy));\n"
    "    write_imagef(dst, p, sum / 25.0f);\n"
    "}\n";

#include "common.h"

static double now_ms(void)
{
    return now_us() / 1e3;
}

static void fail(const char *what, long code)
{
    printf("frames: %s failed (%ld)\n", what, code);
    exit(1);
}

#define CL(call) \
    do { cl_int e_ = (call); if (e_) fail(#call, e_); } while (0)
#define HR(call) \
    do { HRESULT h_ = (call); if (FAILED(h_)) fail(#call, (long)h_); } while (0)

/* Host frame `index`: the hash of (x, y, index) `dxcl frames` uses (crates/dxcl-cli/src/frames/image.rs). */
static void host_frame(unsigned char *out, UINT index)
{
    UINT salt = index * 0xC2B2AE3Du + 0x27D4EB2Fu;
    for (UINT y = 0; y < HEIGHT; y++)
    {
        UINT ry = y * 0x85EBCA77u ^ salt;
        for (UINT x = 0; x < WIDTH; x++)
        {
            UINT h = x * 0x9E3779B1u ^ ry;
            h ^= h >> 15;
            h *= 0x2C1B3C6Du;
            h ^= h >> 12;
            h *= 0x297A2D39u;
            h ^= h >> 15;
            memcpy(out + (size_t)y * ROW + x * 4, &h, 4);
        }
    }
}

static size_t clamp(long v, size_t n)
{
    return v < 0 ? 0 : (size_t)v >= n ? n - 1 : (size_t)v;
}

/* The kernel's result in integers (separable, round(sum / 25)): the bytes further than one code
 * from it. */
static size_t wrong_bytes(const unsigned char *src, const unsigned char *got)
{
    unsigned short *rows = malloc(BYTES * sizeof *rows);
    size_t wrong = 0;
    if (!rows) fail("malloc", 0);
    for (size_t y = 0; y < HEIGHT; y++)
        for (size_t x = 0; x < WIDTH; x++)
            for (size_t c = 0; c < 4; c++)
            {
                unsigned s = 0;
                for (long d = -2; d <= 2; d++) s += src[y * ROW + clamp((long)x + d, WIDTH) * 4 + c];
                rows[y * ROW + x * 4 + c] = (unsigned short)s;
            }
    for (size_t y = 0; y < HEIGHT; y++)
        for (size_t i = 0; i < ROW; i++)
        {
            unsigned s = 0;
            for (long d = -2; d <= 2; d++) s += rows[clamp((long)y + d, HEIGHT) * ROW + i];
            int want = (int)((2 * s + 25) / 50), diff = want - got[y * ROW + i];
            wrong += diff > 1 || diff < -1;
        }
    free(rows);
    return wrong;
}

static ID3D11Device *device;
static ID3D11DeviceContext *ctx;
static cl_platform_id platform;
static cl_device_id cl_device;
static const size_t origin[3] = {0, 0, 0}, region[3] = {WIDTH, HEIGHT, 1};

static ID3D11Resource *texture(UINT w, UINT h, BOOL staging)
{
    D3D11_TEXTURE2D_DESC d = {w, h, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0},
                              staging ? D3D11_USAGE_STAGING : D3D11_USAGE_DEFAULT,
                              staging ? 0 : D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_RENDER_TARGET,
                              staging ? D3D11_CPU_ACCESS_READ : 0, 0};
    ID3D11Texture2D *t;
    HR(ID3D11Device_CreateTexture2D(device, &d, NULL, &t));
    return (ID3D11Resource *)t;
}

/* Direct3D's end of a frame: a 1x1 copy of `t` mapped (Map waits for the work before it). */
static void wait_for(ID3D11Resource *t, ID3D11Resource *probe)
{
    D3D11_BOX one = {0, 0, 0, 1, 1, 1};
    D3D11_MAPPED_SUBRESOURCE m;
    ID3D11DeviceContext_CopySubresourceRegion(ctx, probe, 0, 0, 0, 0, t, 0, &one);
    HR(ID3D11DeviceContext_Map(ctx, probe, 0, D3D11_MAP_READ, 0, &m));
    ID3D11DeviceContext_Unmap(ctx, probe, 0);
}

/* `t`'s texels, tightly packed, through a new staging texture. */
static void read_texture(ID3D11Resource *t, unsigned char *out)
{
    ID3D11Resource *s = texture(WIDTH, HEIGHT, TRUE);
    D3D11_MAPPED_SUBRESOURCE m;
    ID3D11DeviceContext_CopyResource(ctx, s, t);
    HR(ID3D11DeviceContext_Map(ctx, s, 0, D3D11_MAP_READ, 0, &m));
    for (size_t y = 0; y < HEIGHT; y++) memcpy(out + y * ROW, (unsigned char *)m.pData + y * m.RowPitch, ROW);
    ID3D11DeviceContext_Unmap(ctx, s, 0);
    ID3D11Resource_Release(s);
}

struct cl_side
{
    cl_context context;
    cl_command_queue queue;
    cl_kernel kernel;
};

static struct cl_side cl_side(BOOL shared)
{
    cl_context_properties plain[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context_properties d3d[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                   CL_CONTEXT_D3D11_DEVICE_KHR, (cl_context_properties)device, 0};
    struct cl_side s;
    cl_int err;
    s.context = clCreateContext(shared ? d3d : plain, 1, &cl_device, NULL, NULL, &err);
    CL(err);
    s.queue = clCreateCommandQueueWithProperties(s.context, cl_device, NULL, &err);
    CL(err);
    cl_program p = clCreateProgramWithSource(s.context, 1, &kernel_source, NULL, &err);
    CL(err);
    CL(clBuildProgram(p, 1, &cl_device, "", NULL, NULL));
    s.kernel = clCreateKernel(p, "blur5", &err);
    CL(err);
    clReleaseProgram(p);
    return s;
}

static cl_mem image(const struct cl_side *s, cl_mem_flags flags)
{
    cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc d = {CL_MEM_OBJECT_IMAGE2D, WIDTH, HEIGHT, 1, 1, 0, 0, 0, 0, {NULL}};
    cl_int err;
    cl_mem m = clCreateImage(s->context, flags, &f, &d, NULL, &err);
    CL(err);
    return m;
}

static void bind_images(const struct cl_side *s, cl_mem src, cl_mem dst)
{
    CL(clSetKernelArg(s->kernel, 0, sizeof src, &src));
    CL(clSetKernelArg(s->kernel, 1, sizeof dst, &dst));
}

static void run_kernel(const struct cl_side *s)
{
    size_t global[2] = {WIDTH, HEIGHT};
    CL(clEnqueueNDRangeKernel(s->queue, s->kernel, 2, NULL, global, NULL, 0, NULL, NULL));
}

static void release_side(struct cl_side *s)
{
    clReleaseKernel(s->kernel);
    clReleaseCommandQueue(s->queue);
    clReleaseContext(s->context);
}

enum which { OPENCL_ONLY, HOST_ROUND_TRIP, DXCL, CASES };
static const char *const names[CASES] = {"opencl-only", "host-round-trip", "dxcl"};

/* Times case `which` and checks its last frame. */
static int run_case(enum which which, unsigned char *const *host, unsigned char *result,
                    clEnqueueAcquireD3D11ObjectsKHR_fn acquire, clEnqueueReleaseD3D11ObjectsKHR_fn release,
                    clCreateFromD3D11Texture2DKHR_fn from_texture)
{
    struct cl_side s = cl_side(which == DXCL);
    ID3D11Resource *input = texture(WIDTH, HEIGHT, FALSE), *output = texture(WIDTH, HEIGHT, FALSE);
    ID3D11Resource *onward = texture(WIDTH, HEIGHT, FALSE), *probe = texture(1, 1, TRUE);
    ID3D11Resource *staging = texture(WIDTH, HEIGHT, TRUE);
    cl_mem mems[3];
    cl_int err;
    if (which == DXCL)
    {
        mems[0] = from_texture(s.context, CL_MEM_READ_ONLY, (ID3D11Texture2D *)input, 0, &err);
        CL(err);
        mems[1] = from_texture(s.context, CL_MEM_WRITE_ONLY, (ID3D11Texture2D *)output, 0, &err);
        CL(err);
        mems[2] = NULL;
    }
    else
    {
        mems[0] = image(&s, CL_MEM_READ_ONLY);
        mems[1] = image(&s, which == OPENCL_ONLY ? CL_MEM_READ_WRITE : CL_MEM_WRITE_ONLY);
        mems[2] = which == OPENCL_ONLY ? image(&s, CL_MEM_READ_WRITE) : NULL;
    }
    bind_images(&s, mems[0], mems[1]);
    double t[FRAMES];
    int last = 0;
    for (int i = 0; i < WARMUP + FRAMES; i++)
    {
        const unsigned char *frame = host[i % HOST_FRAMES];
        double start = now_ms();
        switch (which)
        {
        case OPENCL_ONLY:
            CL(clEnqueueWriteImage(s.queue, mems[0], CL_TRUE, origin, region, ROW, 0, frame, 0, NULL, NULL));
            run_kernel(&s);
            CL(clEnqueueCopyImage(s.queue, mems[1], mems[2], origin, origin, region, 0, NULL, NULL));
            CL(clFinish(s.queue));
            break;
        case HOST_ROUND_TRIP:
        {
            D3D11_MAPPED_SUBRESOURCE m;
            ID3D11DeviceContext_UpdateSubresource(ctx, input, 0, NULL, frame, ROW, 0);
            ID3D11DeviceContext_CopyResource(ctx, staging, input);
            HR(ID3D11DeviceContext_Map(ctx, staging, 0, D3D11_MAP_READ, 0, &m));
            err = clEnqueueWriteImage(s.queue, mems[0], CL_TRUE, origin, region, m.RowPitch, 0, m.pData, 0, NULL,
                                      NULL);
            ID3D11DeviceContext_Unmap(ctx, staging, 0);
            CL(err);
            run_kernel(&s);
            CL(clEnqueueReadImage(s.queue, mems[1], CL_TRUE, origin, region, ROW, 0, result, 0, NULL, NULL));
            ID3D11DeviceContext_UpdateSubresource(ctx, output, 0, NULL, result, ROW, 0);
            ID3D11DeviceContext_CopyResource(ctx, onward, output);
            wait_for(onward, probe);
            break;
        }
        case DXCL:
            ID3D11DeviceContext_UpdateSubresource(ctx, input, 0, NULL, frame, ROW, 0);
            CL(acquire(s.queue, 2, mems, 0, NULL, NULL));
            run_kernel(&s);
            CL(release(s.queue, 2, mems, 0, NULL, NULL));
            ID3D11DeviceContext_CopyResource(ctx, onward, output);
            wait_for(onward, probe);
            break;
        default:
            break;
        }
        double end = now_ms();
        if (i >= WARMUP) t[i - WARMUP] = end - start;
        last = i % HOST_FRAMES;
    }
    if (which == OPENCL_ONLY)
        CL(clEnqueueReadImage(s.queue, mems[2], CL_TRUE, origin, region, ROW, 0, result, 0, NULL, NULL));
    else
        read_texture(onward, result);
    size_t wrong = wrong_bytes(host[last], result);
    qsort(t, FRAMES, sizeof t[0], cmp);
    if (wrong)
        printf("frames %s: FAILED: %zu bytes of the last frame differ from the CPU blur\n", names[which], wrong);
    else
        printf("frames %s: %.1f ms (%d frames)\n", names[which], t[FRAMES / 2], FRAMES);
    for (int k = 0; k < 3; k++)
        if (mems[k]) clReleaseMemObject(mems[k]);
    release_side(&s);
    ID3D11Resource_Release(staging);
    ID3D11Resource_Release(probe);
    ID3D11Resource_Release(onward);
    ID3D11Resource_Release(output);
    ID3D11Resource_Release(input);
    return wrong != 0;
}

int main(void)
{
    struct sharing s;
    if (sharing_open(&s, CL_PREFERRED_DEVICES_FOR_D3D11_KHR, "frames"))
        return 1;
    device = s.device;
    ctx = s.immediate;
    platform = s.platform;
    cl_device = s.cl_device;
    clCreateFromD3D11Texture2DKHR_fn from_texture = s.from_texture;
    clEnqueueAcquireD3D11ObjectsKHR_fn acquire = s.acquire;
    clEnqueueReleaseD3D11ObjectsKHR_fn release = s.release;
    unsigned char *host[HOST_FRAMES], *result = malloc(BYTES);
    for (UINT i = 0; i < HOST_FRAMES; i++)
    {
        host[i] = malloc(BYTES);
        if (!host[i]) fail("malloc", 0);
        host_frame(host[i], i);
    }
    if (!result) fail("malloc", 0);
    int failed = 0;
    for (int c = 0; c < CASES; c++) failed |= run_case(c, host, result, acquire, release, from_texture);
    for (UINT i = 0; i < HOST_FRAMES; i++) free(host[i]);
    free(result);
    ID3D11DeviceContext_Release(ctx);
    ID3D11Device_Release(device);
    return failed;
}
