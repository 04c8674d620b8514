/* Threads: 8 threads share objects of one context through their own queues, for many rounds, every
 * byte checked.
 *
 * Each thread has its own command queue and kernel, and makes its own shared buffer and 2D texture (on
 * the thread: Direct3D device methods and the create calls are free-threaded). A round: Direct3D writes
 * new bytes into both (CopyResource from a buffer the thread creates and releases, UpdateSubresource);
 * acquire both; OpenCL reads them and must see those bytes; a kernel adds 1 to every byte of the buffer
 * and clEnqueueWriteImage writes new bytes into the texture; release; Direct3D reads both back and must
 * see OpenCL's bytes. Then the thread tries its turn on one buffer all threads share: the acquire either
 * succeeds or answers CL_D3D1x_RESOURCE_ALREADY_ACQUIRED, never two at a time; the holder must see what
 * the previous holder wrote (through Direct3D: release writes it back, acquire reads it), and writes its
 * own bytes.
 *
 * The application's rule for Direct3D from several threads: the D3D11 immediate context is not
 * thread-safe, so every immediate-context call of the test runs under one application mutex
 * (`app_lock`), as a real application must do. Acquire and release run outside it, on all threads at
 * once: the layer serialises its own Direct3D work (one lock per device); the overlap of the test's calls
 * with the layer's is fine on dxcl's runtime (crates/dxcl-layer/README.md, "Threads").
 *
 * For D3D11 a second phase runs the layer alone on a device created with D3D11_CREATE_DEVICE_DEBUG,
 * whose immediate context aborts the process (CORRUPTED_MULTITHREADING) when two threads are inside it
 * at once: the same rounds, with Direct3D writes only before the threads start and reads only after
 * they end, so every immediate-context call during the rounds is the layer's; OpenCL must see in each
 * round what the previous round left.
 *
 * Rounds per thread and phase: DXCL_THREADS_ROUNDS (default 200: about 1.3 s per run on the software
 * adapter, 6 s on lavapipe, on 2 cores); docs/conformance.md records a long run. */
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8
#define BUF_SIZE 16384
#define TEX_W 32
#define TEX_H 16
#define TEX_BYTES (TEX_W * TEX_H * 4)
#define TURN_SIZE 4096
#define DEFAULT_ROUNDS 200

/* Every Direct3D call and every check of the worker threads (the harness's counters are plain ints). */
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct pair_env {
    const sharing *s;
    gfx *g;
    cl_context ctx;
    cl_device_id dev;
    int rounds;
    int app_d3d; /* the threads make Direct3D calls of their own (see run_phase) */
    res turn_res;
    cl_mem turn;
    /* Under app_lock: the seed of what the turn buffer holds, the threads inside a turn, counts. */
    unsigned turn_seed;
    int holders, turns, refused;
} pair_env;

typedef struct worker {
    pair_env *P;
    int id;
    cl_command_queue q;
    cl_kernel inc;
    res rb, rt;
    cl_mem mb, mt;
    unsigned char *now_b, *now_t; /* what the buffer and texture hold when not acquired */
    int ready;                    /* the thread made its objects */
    int fails;         /* failed checks of this thread */
    int failed_rounds; /* rounds with at least one */
} worker;

/* A failed check from a worker thread, with its thread and round. */
static void fail_at(worker *W, int round, const char *what, long at, int got, int want)
{
    W->fails++;
    pthread_mutex_lock(&app_lock);
    h_at("%s: thread %d, round %d", W->P->s->name, W->id, round);
    if (at >= 0)
        h_fail(__FILE__, __LINE__, "%s: byte %ld is %d, want %d", what, at, got, want);
    else
        h_fail(__FILE__, __LINE__, "%s", what);
    pthread_mutex_unlock(&app_lock);
}

static void pass(void)
{
    pthread_mutex_lock(&app_lock);
    h_pass();
    pthread_mutex_unlock(&app_lock);
}

/* Compares every byte; a difference is one failed check. Returns 1 when equal. */
static int same(worker *W, int round, const char *what, const unsigned char *got, const unsigned char *want,
                size_t n)
{
    long d = first_diff(got, want, n);
    if (d >= 0) {
        fail_at(W, round, what, d, got[d], want[d]);
        return 0;
    }
    pass();
    return 1;
}

static int call_ok(worker *W, int round, const char *what, cl_int e)
{
    if (e == CL_SUCCESS) {
        pass();
        return 1;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s = %s (%d)", what, cl_err_name(e), e);
    fail_at(W, round, msg, -1, 0, 0);
    return 0;
}

static unsigned seed_of(int thread, int round, int what) { return (unsigned)(round * 64 + thread * 4 + what) + 1; }

/* One turn on the shared buffer: at most one thread holds it, and sees the previous holder's bytes. */
static void take_turn(worker *W, int round, unsigned char *got, unsigned char *want)
{
    pair_env *P = W->P;
    const sharing *s = P->s;
    cl_int e = sh_acquire(s, W->q, 1, &P->turn, 0, NULL, NULL);
    if (e == s->err_already) {
        pthread_mutex_lock(&app_lock);
        P->refused++;
        h_pass();
        pthread_mutex_unlock(&app_lock);
        return;
    }
    if (!call_ok(W, round, "turn: acquire (success or ALREADY_ACQUIRED)", e))
        return;
    pthread_mutex_lock(&app_lock);
    int others = P->holders++;
    unsigned seed = P->turn_seed;
    pthread_mutex_unlock(&app_lock);
    if (others != 0)
        fail_at(W, round, "turn: a second acquire of an acquired object succeeded", -1, 0, 0);
    else
        pass();
    if (call_ok(W, round, "turn: clEnqueueReadBuffer",
                clEnqueueReadBuffer(W->q, P->turn, CL_TRUE, 0, TURN_SIZE, got, 0, NULL, NULL))) {
        fill_pattern(want, TURN_SIZE, seed);
        same(W, round, "turn: OpenCL sees the previous holder's bytes", got, want, TURN_SIZE);
    }
    unsigned mine = seed_of(W->id, round, 3);
    fill_pattern(want, TURN_SIZE, mine);
    int wrote = call_ok(W, round, "turn: clEnqueueWriteBuffer",
                        clEnqueueWriteBuffer(W->q, P->turn, CL_TRUE, 0, TURN_SIZE, want, 0, NULL, NULL));
    /* The next holder expects these bytes: recorded before the release, which is what lets it in. */
    pthread_mutex_lock(&app_lock);
    if (wrote)
        P->turn_seed = mine;
    P->holders--;
    P->turns++;
    pthread_mutex_unlock(&app_lock);
    call_ok(W, round, "turn: release", sh_release(s, W->q, 1, &P->turn, 0, NULL, NULL));
}

static void *work(void *arg)
{
    worker *W = arg;
    pair_env *P = W->P;
    const sharing *s = P->s;
    gfx *g = P->g;
    /* d3d_*: what the objects hold when acquired; cl_*: what OpenCL leaves in them. */
    unsigned char *d3d_b = W->now_b, *cl_b = malloc(BUF_SIZE), *got_b = malloc(BUF_SIZE);
    unsigned char *d3d_t = W->now_t, *cl_t = malloc(TEX_BYTES), *got_t = malloc(TEX_BYTES);
    unsigned char *got_turn = malloc(TURN_SIZE), *want_turn = malloc(TURN_SIZE);
    /* The thread's objects, made on the thread: Direct3D device methods are free-threaded (no lock),
     * and so are the create calls. */
    cl_int e = CL_SUCCESS;
    HRESULT hb = gfx_buffer(g, &W->rb, BUF_SIZE, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, d3d_b);
    HRESULT ht = gfx_tex2d(g, &W->rt, TEX_W, TEX_H, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                           D3D11_BIND_SHADER_RESOURCE, 0, 0, d3d_t);
    if (FAILED(hb) || FAILED(ht))
        fail_at(W, -1, "CreateBuffer / CreateTexture2D failed", -1, 0, 0);
    if (W->rb.p) {
        W->mb = sh_create_buffer(s, P->ctx, 0, W->rb.p, &e);
        call_ok(W, -1, "clCreateFromD3D1xBuffer", e);
    }
    if (W->rt.p) {
        W->mt = sh_create_tex2d(s, P->ctx, 0, W->rt.p, 0, &e);
        call_ok(W, -1, "clCreateFromD3D1xTexture2D", e);
    }
    W->ready = W->mb && W->mt;
    cl_mem both[2] = {W->mb, W->mt};
    size_t origin[3] = {0, 0, 0}, region[3] = {TEX_W, TEX_H, 1};
    for (int round = 0; W->ready && round < P->rounds; round++) {
        int bad = W->fails;
        if (P->app_d3d) {
            /* Direct3D writes: the buffer's bytes through a new buffer (created and released on this
             * thread, no lock) copied into it, the texture's by UpdateSubresource; the immediate
             * context's calls under the application's lock. */
            fill_pattern(d3d_b, BUF_SIZE, seed_of(W->id, round, 0));
            fill_pattern(d3d_t, TEX_BYTES, seed_of(W->id, round, 1));
            res src;
            if (FAILED(gfx_buffer(g, &src, BUF_SIZE, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, d3d_b))) {
                fail_at(W, round, "CreateBuffer failed", -1, 0, 0);
                break;
            }
            pthread_mutex_lock(&app_lock);
            if (g->api == API_D3D11)
                ID3D11DeviceContext_CopyResource(g->ctx11, (ID3D11Resource *)W->rb.p, (ID3D11Resource *)src.p);
            else
                ID3D10Device_CopyResource(g->d10, (ID3D10Resource *)W->rb.p, (ID3D10Resource *)src.p);
            int wrote = gfx_write(g, &W->rt, 0, d3d_t);
            pthread_mutex_unlock(&app_lock);
            res_free(&src);
            if (!wrote)
                break;
        }
        /* OpenCL: sees them, changes them. */
        if (!call_ok(W, round, "acquire", sh_acquire(s, W->q, 2, both, 0, NULL, NULL)))
            break;
        if (call_ok(W, round, "clEnqueueReadBuffer",
                    clEnqueueReadBuffer(W->q, W->mb, CL_FALSE, 0, BUF_SIZE, got_b, 0, NULL, NULL)) &&
            call_ok(W, round, "clEnqueueReadImage",
                    clEnqueueReadImage(W->q, W->mt, CL_TRUE, origin, region, 0, 0, got_t, 0, NULL, NULL))) {
            same(W, round, "buffer: OpenCL sees Direct3D's bytes", got_b, d3d_b, BUF_SIZE);
            same(W, round, "texture: OpenCL sees Direct3D's bytes", got_t, d3d_t, TEX_BYTES);
        }
        cl_uint n = BUF_SIZE;
        size_t gsz = BUF_SIZE;
        clSetKernelArg(W->inc, 0, sizeof W->mb, &W->mb);
        clSetKernelArg(W->inc, 1, sizeof n, &n);
        call_ok(W, round, "clEnqueueNDRangeKernel(inc_bytes)",
                clEnqueueNDRangeKernel(W->q, W->inc, 1, NULL, &gsz, NULL, 0, NULL, NULL));
        fill_pattern(cl_t, TEX_BYTES, seed_of(W->id, round, 2));
        call_ok(W, round, "clEnqueueWriteImage",
                clEnqueueWriteImage(W->q, W->mt, CL_FALSE, origin, region, 0, 0, cl_t, 0, NULL, NULL));
        /* Released without clFinish: Direct3D's next reads must see OpenCL's bytes. */
        if (!call_ok(W, round, "release", sh_release(s, W->q, 2, both, 0, NULL, NULL)))
            break;
        for (size_t i = 0; i < BUF_SIZE; i++)
            cl_b[i] = (unsigned char)(d3d_b[i] + 1);
        if (P->app_d3d) {
            pthread_mutex_lock(&app_lock);
            int read = gfx_read(g, &W->rb, 0, got_b) && gfx_read(g, &W->rt, 0, got_t);
            pthread_mutex_unlock(&app_lock);
            if (read) {
                same(W, round, "buffer: Direct3D sees the kernel's bytes", got_b, cl_b, BUF_SIZE);
                same(W, round, "texture: Direct3D sees OpenCL's bytes", got_t, cl_t, TEX_BYTES);
            }
        }
        /* What the objects hold now (the layer alone: what the next acquire must bring back). */
        memcpy(d3d_b, cl_b, BUF_SIZE);
        memcpy(d3d_t, cl_t, TEX_BYTES);
        take_turn(W, round, got_turn, want_turn);
        if (W->fails != bad)
            W->failed_rounds++;
        if (W->failed_rounds > 5)
            break; /* enough said; keeps a broken run's output short */
    }
    call_ok(W, P->rounds, "clFinish", clFinish(W->q));
    /* The last round's clEnqueueWriteImage reads cl_t, freed below. Mesa rusticl 22.3's clFinish may return
     * before commands that an earlier flush sent on have run (a platform bug: docs/conformance.md, and
     * acquire.c's finish_after_flush proves it on a plain buffer), so a marker after everything is waited
     * for too. It used to be hidden: a staging release blocked until its read-back, which follows that
     * write, had run; it now returns at once (issue 13). */
    cl_event all = NULL;
    if (call_ok(W, P->rounds, "clEnqueueMarkerWithWaitList", clEnqueueMarkerWithWaitList(W->q, 0, NULL, &all)) &&
        all) {
        call_ok(W, P->rounds, "clWaitForEvents(marker)", clWaitForEvents(1, &all));
        clReleaseEvent(all);
    }
    free(cl_b), free(got_b), free(cl_t), free(got_t), free(got_turn), free(want_turn);
    return NULL;
}

/* One pair, one phase: app_d3d = 1, the threads' own Direct3D calls (under app_lock) between their
 * acquires and releases; 0, the layer alone: Direct3D writes before the threads start and reads after
 * they end, so every Direct3D call inside the phase is the layer's. */
static void run_phase(const sharing *s, gfx *g, int rounds, int app_d3d, const char *phase)
{
    pair_env P;
    memset(&P, 0, sizeof P);
    P.s = s;
    P.g = g;
    P.rounds = rounds;
    P.app_d3d = app_d3d;
    h_at("%s, %s: setup", s->name, phase);
    P.ctx = h_context(s, g, -1, &P.dev, NULL);
    if (!P.ctx)
        return;
    worker W[THREADS];
    memset(W, 0, sizeof W);
    int ready = 1;
    cl_int e;
    unsigned char *got = malloc(BUF_SIZE > TEX_BYTES ? BUF_SIZE : TEX_BYTES);
    /* The turn buffer starts with seed 0's bytes. */
    fill_pattern(got, TURN_SIZE, 0);
    CHECK_HR(gfx_buffer(g, &P.turn_res, TURN_SIZE, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, got),
             S_OK);
    P.turn = P.turn_res.p ? sh_create_buffer(s, P.ctx, 0, P.turn_res.p, &e) : NULL;
    ready &= P.turn != NULL;
    for (int i = 0; i < THREADS; i++) {
        W[i].P = &P;
        W[i].id = i;
        W[i].q = h_queue(P.ctx, P.dev);
        W[i].inc = h_kernel(P.ctx, P.dev, "inc_bytes");
        W[i].now_b = malloc(BUF_SIZE);
        W[i].now_t = malloc(TEX_BYTES);
        fill_pattern(W[i].now_b, BUF_SIZE, 1000u + (unsigned)i);
        fill_pattern(W[i].now_t, TEX_BYTES, 2000u + (unsigned)i);
        ready &= W[i].q && W[i].inc;
    }
    CHECK(ready);
    if (ready) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pthread_t t[THREADS];
        int started = 0;
        for (int i = 0; i < THREADS; i++)
            started += pthread_create(&t[i], NULL, work, &W[i]) == 0;
        CHECK(started == THREADS);
        for (int i = 0; i < started; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < THREADS; i++)
            CHECK(W[i].ready); /* each thread made its objects */
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        h_at("%s, %s: after the threads", s->name, phase);
        CHECK(P.turns > 0);
        CHECK(P.holders == 0);
        /* Direct3D sees what the threads left: each thread's buffer and texture, the turn buffer's last
         * holder's bytes. */
        for (int i = 0; i < THREADS && W[i].ready; i++) {
            if (gfx_read(g, &W[i].rb, 0, got))
                CHECK(first_diff(got, W[i].now_b, BUF_SIZE) < 0);
            if (gfx_read(g, &W[i].rt, 0, got))
                CHECK(first_diff(got, W[i].now_t, TEX_BYTES) < 0);
        }
        unsigned char *want = malloc(TURN_SIZE);
        fill_pattern(want, TURN_SIZE, P.turn_seed);
        if (gfx_read(g, &P.turn_res, 0, got))
            CHECK(first_diff(got, want, TURN_SIZE) < 0);
        free(want);
        printf("%s, %s: %d threads x %d rounds in %.2f s; %d turns taken, %d acquires refused "
               "(ALREADY_ACQUIRED)\n",
               s->name, phase, THREADS, rounds, secs, P.turns, P.refused);
    }
    for (int i = 0; i < THREADS; i++) {
        if (W[i].mb)
            clReleaseMemObject(W[i].mb);
        if (W[i].mt)
            clReleaseMemObject(W[i].mt);
        if (W[i].inc)
            clReleaseKernel(W[i].inc);
        if (W[i].q)
            clReleaseCommandQueue(W[i].q);
        res_free(&W[i].rb);
        res_free(&W[i].rt);
        free(W[i].now_b);
        free(W[i].now_t);
    }
    if (P.turn)
        clReleaseMemObject(P.turn);
    res_free(&P.turn_res);
    free(got);
    h_drop_program();
    clReleaseContext(P.ctx);
}

/* A Direct3D 11 device with the debug layer (D3D11_CREATE_DEVICE_DEBUG): dxcl's runtime then aborts,
 * with the SDK's CORRUPTED_MULTITHREADING message, when two threads are inside the immediate context at
 * once. */
static int open_debug11(gfx *g)
{
    memset(g, 0, sizeof *g);
    g->api = API_D3D11;
    HRESULT hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, D3D11_CREATE_DEVICE_DEBUG, NULL, 0,
                                   D3D11_SDK_VERSION, &g->d11, NULL, &g->ctx11);
    g->device = g->d11;
    CHECK_HR(hr, S_OK);
    return SUCCEEDED(hr) && g->d11;
}

int main(void)
{
    const char *env = getenv("DXCL_THREADS_ROUNDS");
    /* The reduced mode: 4 rounds (all 8 threads and both phases still run). */
    int rounds = env && *env ? atoi(env) : H_BY_MODE(DEFAULT_ROUNDS, 4);
    if (rounds < 1)
        rounds = 1;
    /* A generous watchdog: on 2 shared cores a round of all 8 threads takes about 5 ms (lavapipe), for
     * 6 phases. */
    h_begin("threads", 120 + (unsigned)rounds / 4);
    cl_platform_id p = h_platform();
    CHECK(p != NULL);
    for (int i = 0; p && i < 4; i++) {
        int api, nv;
        if (!h_combo(i, &api, &nv))
            continue;
        sharing s;
        CHECK(sharing_init(&s, p, api, nv));
        gfx g;
        if (!gfx_open(&g, api))
            continue;
        run_phase(&s, &g, rounds, 1, "with the application's Direct3D calls");
        gfx_close(&g);
        /* D3D11's immediate context is not thread-safe; D3D10 devices are, unless created
         * D3D10_CREATE_DEVICE_SINGLETHREADED. */
        if (api == API_D3D11 && open_debug11(&g)) {
            run_phase(&s, &g, rounds, 0, "the layer alone on a debug device");
            gfx_close(&g);
        }
    }
    return h_end();
}
