/* The host-pointer strategy's synchronisation (docs/architecture.md, the probe). A platform may cache
 * CL_MEM_USE_HOST_PTR memory ("OpenCL implementations are allowed to cache the buffer contents pointed
 * to by host_ptr in device memory"); the layer probes each device and copies at acquire and release
 * only where the platform caches.
 *
 * 1. This program's own look at the platform, with plain objects (no Direct3D): a blocking
 *    clEnqueueWriteImage / clEnqueueWriteBuffer into a CL_MEM_USE_HOST_PTR object; are the bytes in
 *    host memory once it returns? If not, the platform caches (NOTE platform line).
 * 2. Round trips through the layer (Direct3D writes, OpenCL reads; OpenCL writes, Direct3D reads) on
 *    a texture and a buffer, with DXCL_HOST_PTR unset (the probe decides), "copy", and "in-place".
 *    The first two must always pass. Forced in-place must fail exactly where (1) found a cache and
 *    pass elsewhere: a layer that ignored its switch, or a probe that called a caching platform in
 *    place, fails here.
 * 3. With CL_CONTEXT_INTEROP_USER_SYNC = CL_TRUE the application orders Direct3D itself: write,
 *    release, clFinish, then Direct3D reads. clFinish must cover the layer's copy back into the
 *    resource's memory (rusticl's own clFinish can return before flushed commands have run).
 *
 * The forced in-place expectation applies to the software adapter (DXCL_ADAPTER=software), where the
 * layer picks the host-pointer strategy; elsewhere only the passing round trips are checked. */
#include "harness.h"

#include <stdlib.h>

#define TW 64
#define TH 32
#define TEX_BYTES (TW * TH * 4)
#define BUF_BYTES (64 * 1024)
#define ROUNDS 3
#define FINISH_TRIES 20

/* Whether a plain CL_MEM_USE_HOST_PTR object of the device keeps its own copy: a blocking write from
 * other memory, then host_ptr must hold the bytes. Returns 1 cached, 0 in place, -1 unknown. */
static int plain_caches(cl_platform_id p, cl_device_id dev)
{
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
    cl_context ctx = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    if (!ctx)
        return -1;
    cl_command_queue q = h_queue(ctx, dev);
    int cached = -1;
    unsigned char *host = calloc(1, BUF_BYTES + 64), *want = malloc(BUF_BYTES);
    unsigned char *at = host + 64; /* not page-aligned, as a subresource need not be */
    cl_mem img = NULL, buf = NULL;
    if (!q || !host || !want)
        goto out;
    cl_image_format f = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc d;
    memset(&d, 0, sizeof d);
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = TW;
    d.image_height = TH;
    d.image_row_pitch = TW * 4;
    img = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &f, &d, at, &e);
    buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, BUF_BYTES, at, &e);
    if (!img || !buf)
        goto out;
    size_t origin[3] = {0, 0, 0}, region[3] = {TW, TH, 1};
    fill_pattern(want, TEX_BYTES, 77);
    if (clEnqueueWriteImage(q, img, CL_TRUE, origin, region, TW * 4, 0, want, 0, NULL, NULL) != CL_SUCCESS)
        goto out;
    cached = first_diff(at, want, TEX_BYTES) >= 0;
    if (cached)
        printf("NOTE platform: a blocking clEnqueueWriteImage into a plain CL_MEM_USE_HOST_PTR image left "
               "host_ptr unchanged (the image is cached, as the spec allows)\n");
    fill_pattern(want, BUF_BYTES, 78);
    if (clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, BUF_BYTES, want, 0, NULL, NULL) != CL_SUCCESS) {
        cached = -1;
        goto out;
    }
    if (first_diff(at, want, BUF_BYTES) >= 0) {
        printf("NOTE platform: a blocking clEnqueueWriteBuffer into a plain CL_MEM_USE_HOST_PTR buffer left "
               "host_ptr unchanged (the buffer is cached, as the spec allows)\n");
        cached = 1;
    }
out:
    if (img)
        clReleaseMemObject(img);
    if (buf)
        clReleaseMemObject(buf);
    if (q)
        clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(host);
    free(want);
    return cached;
}

/* ROUNDS round trips on a fresh texture and buffer. Returns 1 when every byte arrived both ways. */
static int round_trips(const sharing *s, gfx *g)
{
    cl_device_id dev;
    cl_context ctx = h_context(s, g, -1, &dev, NULL);
    if (!ctx)
        return 0;
    cl_command_queue q = h_queue(ctx, dev);
    unsigned char *want = malloc(BUF_BYTES), *got = malloc(BUF_BYTES);
    res rt, rb;
    memset(&rt, 0, sizeof rt);
    memset(&rb, 0, sizeof rb);
    int ok = 0;
    fill_pattern(want, BUF_BYTES, 1);
    CHECK_HR(gfx_tex2d(g, &rt, TW, TH, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                       D3D11_BIND_SHADER_RESOURCE, 0, 0, want),
             S_OK);
    CHECK_HR(gfx_buffer(g, &rb, BUF_BYTES, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, want), S_OK);
    cl_int e = CL_SUCCESS, e2 = CL_SUCCESS;
    cl_mem mt = rt.p ? sh_create_tex2d(s, ctx, 0, rt.p, 0, &e) : NULL;
    cl_mem mb = rb.p ? sh_create_buffer(s, ctx, 0, rb.p, &e2) : NULL;
    CHECK_ERR(e, CL_SUCCESS);
    CHECK_ERR(e2, CL_SUCCESS);
    if (q && mt && mb) {
        ok = 1;
        cl_mem both[2] = {mt, mb};
        size_t origin[3] = {0, 0, 0}, region[3] = {TW, TH, 1};
        for (unsigned r = 0; r < ROUNDS; r++) {
            /* Direct3D writes after the objects exist; OpenCL must see it. */
            fill_pattern(want, BUF_BYTES, 10 + r);
            ok &= gfx_write(g, &rt, 0, want) && gfx_write(g, &rb, 0, want);
            ok &= sh_acquire(s, q, 2, both, 0, NULL, NULL) == CL_SUCCESS;
            ok &= clEnqueueReadImage(q, mt, CL_TRUE, origin, region, 0, 0, got, 0, NULL, NULL) == CL_SUCCESS;
            ok &= first_diff(got, want, TEX_BYTES) < 0;
            ok &= clEnqueueReadBuffer(q, mb, CL_TRUE, 0, BUF_BYTES, got, 0, NULL, NULL) == CL_SUCCESS;
            ok &= first_diff(got, want, BUF_BYTES) < 0;
            /* OpenCL writes; Direct3D must see it after the release. */
            fill_pattern(want, BUF_BYTES, 20 + r);
            ok &= clEnqueueWriteImage(q, mt, CL_TRUE, origin, region, 0, 0, want, 0, NULL, NULL) == CL_SUCCESS;
            ok &= clEnqueueWriteBuffer(q, mb, CL_TRUE, 0, BUF_BYTES, want, 0, NULL, NULL) == CL_SUCCESS;
            ok &= sh_release(s, q, 2, both, 0, NULL, NULL) == CL_SUCCESS;
            ok &= gfx_read(g, &rt, 0, got) && first_diff(got, want, TEX_BYTES) < 0;
            ok &= gfx_read(g, &rb, 0, got) && first_diff(got, want, BUF_BYTES) < 0;
        }
        clFinish(q);
    }
    if (mt)
        clReleaseMemObject(mt);
    if (mb)
        clReleaseMemObject(mb);
    if (q)
        clReleaseCommandQueue(q);
    res_free(&rt);
    res_free(&rb);
    clReleaseContext(ctx);
    free(want);
    free(got);
    return ok;
}

/* User sync: write (non-blocking, from memory freed right after clFinish), release, clFinish, then
 * Direct3D reads with nothing else ordering it. Returns how many of FINISH_TRIES read stale bytes. */
static int stale_after_finish(const sharing *s, gfx *g)
{
    cl_device_id dev;
    cl_context ctx = h_context(s, g, 1, &dev, NULL);
    if (!ctx)
        return FINISH_TRIES;
    cl_command_queue q = h_queue(ctx, dev);
    res rt;
    memset(&rt, 0, sizeof rt);
    CHECK_HR(gfx_tex2d(g, &rt, TW, TH, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                       D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL),
             S_OK);
    cl_int e = CL_SUCCESS;
    cl_mem mt = rt.p ? sh_create_tex2d(s, ctx, 0, rt.p, 0, &e) : NULL;
    CHECK_ERR(e, CL_SUCCESS);
    int stale = FINISH_TRIES;
    unsigned char *got = malloc(TEX_BYTES), *want = malloc(TEX_BYTES);
    if (q && mt) {
        stale = 0;
        size_t origin[3] = {0, 0, 0}, region[3] = {TW, TH, 1};
        for (unsigned t = 0; t < FINISH_TRIES; t++) {
            unsigned char *src = malloc(TEX_BYTES);
            fill_pattern(src, TEX_BYTES, 100 + t);
            memcpy(want, src, TEX_BYTES);
            int ok = sh_acquire(s, q, 1, &mt, 0, NULL, NULL) == CL_SUCCESS;
            ok &= clEnqueueWriteImage(q, mt, CL_FALSE, origin, region, 0, 0, src, 0, NULL, NULL) == CL_SUCCESS;
            ok &= sh_release(s, q, 1, &mt, 0, NULL, NULL) == CL_SUCCESS;
            clFlush(q);
            ok &= clFinish(q) == CL_SUCCESS;
            /* clFinish returned: every command is done, the write's source may go. */
            memset(src, 0, TEX_BYTES);
            free(src);
            ok &= gfx_read(g, &rt, 0, got) && first_diff(got, want, TEX_BYTES) < 0;
            stale += !ok;
        }
    }
    if (mt)
        clReleaseMemObject(mt);
    if (q)
        clReleaseCommandQueue(q);
    res_free(&rt);
    clReleaseContext(ctx);
    free(got);
    free(want);
    return stale;
}

int main(void)
{
    h_begin("hostptr", 120);
    cl_platform_id p = h_platform();
    CHECK(p != NULL);
    cl_device_id dev = p ? h_first_device(p) : NULL;
    int cached = dev ? plain_caches(p, dev) : -1;
    CHECK(cached >= 0);
    const char *adapter = getenv("DXCL_ADAPTER");
    int host_pointer = adapter && strcmp(adapter, "software") == 0 && !getenv("DXCL_STRATEGY");
#ifdef _WIN32
    /* Under Wine the device is Wine's own Direct3D (foreign to the layer: staging copies), and the
     * DXCL_HOST_PTR this program sets stays in its Windows environment, out of the layer's sight. */
    host_pointer = 0;
    printf("SKIP hostptr: DXCL_HOST_PTR modes and the forced in-place expectation: a Windows program's "
           "environment does not reach the layer, and its Direct3D device is foreign (staging copies); "
           "the round trips still run for each mode\n");
#endif
    for (int i = 0; p && i < 4; i++) {
        int api, nv;
        if (!h_combo(i, &api, &nv))
            continue;
        sharing s;
        CHECK(sharing_init(&s, p, api, nv));
        gfx g;
        if (!gfx_open(&g, api))
            continue;
        const char *modes[3] = {NULL, "copy", "in-place"};
        for (int m = 0; m < 3; m++) {
            h_at("%s, DXCL_HOST_PTR=%s: round trips", s.name, modes[m] ? modes[m] : "(unset)");
            if (modes[m])
                setenv("DXCL_HOST_PTR", modes[m], 1);
            else
                unsetenv("DXCL_HOST_PTR");
            int ok = round_trips(&s, &g);
            if (modes[m] && strcmp(modes[m], "in-place") == 0 && host_pointer && cached >= 0) {
                /* Fails exactly where the platform caches. */
                CHECK_EQ(ok, !cached);
                printf("%s: forced in-place round trips %s (the platform %s)\n", s.name, ok ? "passed" : "failed",
                       cached ? "caches CL_MEM_USE_HOST_PTR memory" : "uses it in place");
            } else {
                CHECK(ok);
            }
        }
        unsetenv("DXCL_HOST_PTR");
        h_at("%s, user sync: Direct3D reads right after clFinish", s.name);
        int stale = stale_after_finish(&s, &g);
        CHECK_EQ(stale, 0);
        gfx_close(&g);
    }
    return h_end();
}
