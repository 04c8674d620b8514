/* Synchronisation. With CL_CONTEXT_INTEROP_USER_SYNC off (the default): Direct3D work issued before the
 * acquire is seen by OpenCL, and Direct3D reads issued right after the release (no clFinish) see the
 * results of a long-running kernel, also one on another queue named in the release's wait list. With
 * CL_CONTEXT_INTEROP_USER_SYNC = CL_TRUE the same works when the application waits itself. */
#include "harness.h"

#include <stdlib.h>

/* The buffer's words (4 MiB) and slow_fill's iterations per word, which make it take long enough that a
 * missing wait shows. The reduced mode (set in main) takes 64 Ki words (256 KiB) and 40 iterations: the
 * same calls, but a kernel short enough for valgrind, which then shows less of a missing wait. */
static uint32_t g_words = 1u << 20, g_spins = 400u;

typedef struct env {
    const sharing *s;
    gfx *g;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q, q2;
    int user_sync;
} env;

static void slow_model(uint32_t *out, uint32_t seed)
{
    /* The same few seeds come back for every pair and mode: compute each once. */
    static uint32_t seeds[8], *results[8];
    for (int c = 0; c < 8; c++)
        if (results[c] && seeds[c] == seed) {
            memcpy(out, results[c], g_words * 4);
            return;
        }
    for (uint32_t i = 0; i < g_words; i++) {
        uint32_t v = seed ^ i;
        for (uint32_t k = 0; k < g_spins; k++)
            v = v * 1664525u + 1013904223u;
        out[i] = v;
    }
    for (int c = 0; c < 8; c++)
        if (!results[c]) {
            seeds[c] = seed;
            results[c] = malloc(g_words * 4);
            memcpy(results[c], out, g_words * 4);
            break;
        }
}

static cl_event slow_fill(env *E, cl_command_queue q, cl_mem m, uint32_t seed, cl_uint nwait, const cl_event *wait)
{
    cl_kernel k = h_kernel(E->ctx, E->dev, "slow_fill");
    if (!k)
        return NULL;
    cl_uint spins = g_spins;
    clSetKernelArg(k, 0, sizeof m, &m);
    clSetKernelArg(k, 1, sizeof seed, &seed);
    clSetKernelArg(k, 2, sizeof spins, &spins);
    size_t gsz = g_words;
    cl_event ev = NULL;
    CHECK_ERR(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, nwait, wait, &ev), CL_SUCCESS);
    clReleaseKernel(k);
    return ev;
}

static void check_words(const char *what, const uint32_t *got, const uint32_t *want)
{
    long d = first_diff(got, want, g_words * 4);
    if (d >= 0)
        h_fail(__FILE__, __LINE__, "%s: differs at word %ld (got 0x%08x want 0x%08x)", what, d / 4, got[d / 4],
               want[d / 4]);
    else
        h_pass();
}

static void buffer_sync(env *E, uint32_t *model, uint32_t *got)
{
    const sharing *s = E->s;
    const char *mode = E->user_sync ? "user sync" : "implicit sync";
    h_at("%s: %s, D3D before acquire", s->name, mode);
    res r, src;
    CHECK_HR(gfx_buffer(E->g, &r, g_words * 4, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL), S_OK);
    fill_pattern((unsigned char *)model, g_words * 4, 3);
    CHECK_HR(gfx_buffer(E->g, &src, g_words * 4, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, model), S_OK);
    if (!r.p || !src.p)
        return;
    cl_int e;
    cl_mem m = sh_create_buffer(s, E->ctx, 0, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    if (!m)
        return;
    for (int round = 0; round < 3; round++) {
        h_at("%s: %s, round %d", s->name, mode, round);
        /* D3D work right before the acquire: a GPU-side copy, then an update of the first KiB. */
        unsigned char head[1024];
        fill_pattern(head, sizeof head, 40 + (unsigned)round);
        if (s->api == API_D3D11) {
            ID3D11DeviceContext_CopyResource(E->g->ctx11, (ID3D11Resource *)r.p, (ID3D11Resource *)src.p);
            D3D11_BOX box = {0, 0, 0, sizeof head, 1, 1};
            ID3D11DeviceContext_UpdateSubresource(E->g->ctx11, (ID3D11Resource *)r.p, 0, &box, head, 0, 0);
        } else {
            ID3D10Device_CopyResource(E->g->d10, (ID3D10Resource *)r.p, (ID3D10Resource *)src.p);
            D3D10_BOX box = {0, 0, 0, sizeof head, 1, 1};
            ID3D10Device_UpdateSubresource(E->g->d10, (ID3D10Resource *)r.p, 0, &box, head, 0, 0);
        }
        memcpy(model, head, sizeof head);
        if (E->user_sync)
            CHECK(gfx_finish(E->g)); /* the application's own wait */
        CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
        CHECK_ERR(clEnqueueReadBuffer(E->q, m, CL_TRUE, 0, g_words * 4, got, 0, NULL, NULL), CL_SUCCESS);
        check_words("OpenCL read after acquire", got, model);
        fill_pattern((unsigned char *)model, g_words * 4, 3); /* src's content, for the next round */

        /* A long kernel, released at once; D3D reads straight after the release. */
        cl_event kev = slow_fill(E, E->q, m, 1000u + (uint32_t)round, 0, NULL);
        cl_event rev = NULL;
        CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, &rev), CL_SUCCESS);
        if (E->user_sync && rev)
            CHECK_ERR(clWaitForEvents(1, &rev), CL_SUCCESS); /* the application's own wait */
        if (gfx_read(E->g, &r, 0, got)) {
            slow_model(model, 1000u + (uint32_t)round);
            check_words("D3D read after release of a long kernel", got, model);
        }
        if (kev)
            clReleaseEvent(kev);
        if (rev)
            clReleaseEvent(rev);
        fill_pattern((unsigned char *)model, g_words * 4, 3);
    }

    /* The release's wait list: the kernel runs on another queue; the release on this one waits for it. */
    h_at("%s: %s, release waits for its wait list", s->name, mode);
    CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    cl_event marker = NULL;
    CHECK_ERR(clEnqueueMarkerWithWaitList(E->q, 0, NULL, &marker), CL_SUCCESS);
    cl_event kev = slow_fill(E, E->q2, m, 77u, 1, &marker);
    CHECK_ERR(clFlush(E->q2), CL_SUCCESS);
    cl_event rev = NULL;
    CHECK_ERR(sh_release(s, E->q, 1, &m, kev ? 1 : 0, kev ? &kev : NULL, &rev), CL_SUCCESS);
    if (E->user_sync && rev)
        CHECK_ERR(clWaitForEvents(1, &rev), CL_SUCCESS);
    if (gfx_read(E->g, &r, 0, got)) {
        slow_model(model, 77u);
        check_words("D3D read after a release waiting on another queue's kernel", got, model);
    }
    if (kev) {
        /* "will not start executing until after all events in event_wait_list are complete" */
        cl_int status = 1;
        clGetEventInfo(kev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (!E->user_sync)
            CHECK(status == CL_COMPLETE);
        clReleaseEvent(kev);
    }
    if (rev)
        clReleaseEvent(rev);
    clReleaseEvent(marker);
    CHECK_ERR(clFinish(E->q), CL_SUCCESS);
    CHECK_ERR(clFinish(E->q2), CL_SUCCESS);
    clReleaseMemObject(m);
    res_free(&r);
    res_free(&src);
}

/* Ping-pong on a texture: D3D writes, OpenCL reads and writes, D3D reads, several rounds. */
static void texture_ping_pong(env *E)
{
    const sharing *s = E->s;
    const char *mode = E->user_sync ? "user sync" : "implicit sync";
    const fmt *f = fmt_find(DXGI_FORMAT_R32_UINT);
    const size_t W = H_BY_MODE(512, 64), H = H_BY_MODE(256, 32);
    res r;
    CHECK_HR(gfx_tex2d(E->g, &r, W, H, 1, 1, f->dxgi, 1, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL),
             S_OK);
    if (!r.p)
        return;
    cl_int e;
    cl_mem m = sh_create_tex2d(s, E->ctx, 0, r.p, 0, &e);
    CHECK_ERR(e, CL_SUCCESS);
    uint32_t *data = malloc(W * H * 4), *got = malloc(W * H * 4);
    for (int round = 0; m && round < 4; round++) {
        h_at("%s: %s, texture round %d", s->name, mode, round);
        fill_params p = fill_params_for(f, round);
        texels_encode(f, &p, W, H, 1, round, (unsigned char *)data);
        gfx_write(E->g, &r, 0, data);
        if (E->user_sync)
            CHECK(gfx_finish(E->g));
        CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
        size_t o[3] = {0, 0, 0}, reg[3] = {W, H, 1};
        CHECK_ERR(clEnqueueReadImage(E->q, m, CL_TRUE, o, reg, 0, 0, got, 0, NULL, NULL), CL_SUCCESS);
        CHECK(memcmp(got, data, W * H * 4) == 0);
        for (size_t i = 0; i < (size_t)W * H; i++)
            data[i] = ~data[i] + (uint32_t)round;
        CHECK_ERR(clEnqueueWriteImage(E->q, m, CL_FALSE, o, reg, 0, 0, data, 0, NULL, NULL), CL_SUCCESS);
        cl_event rev = NULL;
        CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, &rev), CL_SUCCESS);
        if (E->user_sync && rev)
            CHECK_ERR(clWaitForEvents(1, &rev), CL_SUCCESS);
        if (rev)
            clReleaseEvent(rev);
        if (gfx_read(E->g, &r, 0, got))
            CHECK(memcmp(got, data, W * H * 4) == 0);
    }
    CHECK_ERR(clFinish(E->q), CL_SUCCESS);
    if (m)
        clReleaseMemObject(m);
    free(data);
    free(got);
    res_free(&r);
}

int main(void)
{
    h_begin("sync", 120);
    if (h_reduced()) {
        g_words = 1u << 16;
        g_spins = 40u;
    }
    cl_platform_id p = h_platform();
    CHECK(p != NULL);
    uint32_t *model = malloc(g_words * 4), *got = malloc(g_words * 4);
    for (int i = 0; p && i < 4; i++) {
        int api, nv;
        if (!h_combo(i, &api, &nv))
            continue;
        sharing s;
        CHECK(sharing_init(&s, p, api, nv));
        gfx g;
        if (!gfx_open(&g, api))
            continue;
        for (int user_sync = 0; user_sync < 2; user_sync++) {
            env E = {&s, &g, NULL, NULL, NULL, NULL, user_sync};
            E.ctx = h_context(&s, &g, user_sync ? 1 : -1, &E.dev, NULL);
            if (E.ctx) {
                E.q = h_queue(E.ctx, E.dev);
                E.q2 = h_queue(E.ctx, E.dev);
            }
            if (E.q && E.q2) {
                buffer_sync(&E, model, got);
                texture_ping_pong(&E);
            }
            h_drop_program();
            if (E.q)
                clReleaseCommandQueue(E.q);
            if (E.q2)
                clReleaseCommandQueue(E.q2);
            if (E.ctx)
                clReleaseContext(E.ctx);
        }
        gfx_close(&g);
    }
    free(model);
    free(got);
    return h_end();
}
