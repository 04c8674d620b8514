/* A coverage-guided fuzzer (libFuzzer) for the layer's C entry points: the 24 sharing functions and
 * the core calls the layer intercepts, driven through the real OpenCL loader (ocl-icd, the layer in
 * OPENCL_LAYERS) on PoCL, with Direct3D objects from dxcl's runtime (DXCL_ADAPTER=software).
 *
 * Each input is a program: its bytes decode into a sequence of operations on a small pool of
 * Direct3D devices and resources and of OpenCL contexts, queues, memory objects and events —
 * creation with random flags, subresources and flavours (KHR/NV, D3D10/D3D11, matching or not),
 * acquire/release of random subsets (duplicates included), enqueues on acquired and unacquired
 * objects, and releases in any order. Every call must return CL_SUCCESS or an error the specs name
 * for it (allow-lists below), and a small model of the sharing rules checks what success means:
 * an object is acquired once, released once, and used only while acquired. At the end of each input
 * everything still held is released, and nothing may outlive that: every memory object and context
 * must have run its destructor callback, and every Direct3D object's last reference must be the
 * harness's own. Crashes, panics (the layer turns them into CL_OUT_OF_HOST_MEMORY, which no call
 * here may return: nothing is large), hangs (libFuzzer's -timeout) and leaks all stop the run. */
#include "../conformance/harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------- */
/* Reporting                                                                                       */

static const uint8_t *in_data;
static size_t in_size, in_pos;

static void fuzz_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void fuzz_fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_sharing.c:%d: ", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (input byte %zu of %zu)\n", in_pos, in_size);
    va_end(ap);
    abort(); /* on_crash saves the input */
}
#define FAIL(...) fuzz_fail(__LINE__, __VA_ARGS__)
#define EXPECT(cond, ...)                                                                         \
    do {                                                                                          \
        if (!(cond))                                                                              \
            FAIL(__VA_ARGS__);                                                                    \
    } while (0)

static int trace; /* FUZZ_TRACE=1: every checked call and its answer, for reading a saved input */

/* Per-call tallies of the answers, printed at exit with FUZZ_STATS=1: which entry points the run
 * reached, and how often they succeeded. */
#define NCALLS 64
static struct tally {
    const char *call;
    unsigned long ok, err;
} tallies[NCALLS];

static void tally(const char *call, cl_int err)
{
    for (int i = 0; i < NCALLS; i++) {
        if (!tallies[i].call)
            tallies[i].call = call;
        if (tallies[i].call == call || strcmp(tallies[i].call, call) == 0) {
            if (err == CL_SUCCESS)
                tallies[i].ok++;
            else
                tallies[i].err++;
            return;
        }
    }
}

static void print_tallies(void)
{
    fprintf(stderr, "%-48s %12s %12s\n", "call", "CL_SUCCESS", "error");
    for (int i = 0; i < NCALLS && tallies[i].call; i++)
        fprintf(stderr, "%-48s %12lu %12lu\n", tallies[i].call, tallies[i].ok, tallies[i].err);
}

/* A crash saves the input that caused it. libFuzzer's own handlers do not survive the OpenCL
 * platform: the LLVM inside PoCL installs crash handlers (SIGSEGV, SIGABRT, ... but not SIGALRM,
 * which libFuzzer's -timeout uses) when the device first runs a command. So the harness installs
 * its own before each input: it writes the input (open/write: async-signal-safe) and then dies of
 * the signal as before. */
static char crash_path[512];
static void catch_crashes(void);

static void on_crash(int sig)
{
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        size_t done = 0;
        while (done < in_size) {
            ssize_t n = write(fd, in_data + done, in_size - done);
            if (n <= 0)
                break;
            done += (size_t)n;
        }
        close(fd);
        static const char msg[] = "fuzz_sharing: crashed; input saved to ";
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, crash_path, strlen(crash_path));
        (void)!write(2, "\n", 1);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_crashes(void)
{
    const char *dir = getenv("FUZZ_ARTIFACTS");
    snprintf(crash_path, sizeof crash_path, "%s/crash-%d", dir ? dir : ".", (int)getpid());
    int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sa.sa_flags = SA_NODEFER | SA_RESETHAND;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* `err` must be one of the listed codes (a list ending in 1, which is no OpenCL status). */
static void allowed(int line, const char *call, cl_int err, const cl_int *list)
{
    tally(call, err);
    if (trace)
        fprintf(stderr, "  %s = %s\n", call, cl_err_name(err));
    for (const cl_int *p = list; *p != 1; p++)
        if (*p == err)
            return;
    fuzz_fail(line, "%s returned %s (%d), which the specs do not name for it", call, cl_err_name(err), err);
}
#define ALLOW(call, err, ...) allowed(__LINE__, call, err, (const cl_int[]){__VA_ARGS__, 1})

/* ---------------------------------------------------------------------------------------------- */
/* Input                                                                                           */

static int more(void) { return in_pos < in_size; }
static uint8_t byte(void) { return in_pos < in_size ? in_data[in_pos++] : 0; }
static unsigned pick(unsigned n) { return n ? byte() % n : 0; }

/* ---------------------------------------------------------------------------------------------- */
/* The pools                                                                                       */

#define NDEV 2
#define NRES 6
#define NCTX 3
#define NQ 3
#define NMEM 10
#define NEV 8
#define MAXLIST 6

static cl_platform_id platform;
static sharing flavours[4]; /* D3D11/KHR, D3D11/NV, D3D10/KHR, D3D10/NV */
static int have_context_destructor;
static char fn_names[4][6][48]; /* the 24 entry points' names, for messages and tallies */
#define FN_NAME(s, which) fn_names[(s) - flavours][which]

typedef struct dev_slot {
    int used;    /* a witness reference is held until the end of the input */
    int open;    /* the application still holds the device */
    gfx g;
    void *device; /* the witness */
} dev_slot;

typedef struct res_slot {
    int used, held; /* witness held; the application's reference held */
    res r;
    int dev;
} res_slot;

typedef struct ctx_slot {
    int used;
    cl_context c;
    int refs;
    int api;     /* 10 or 11: created with that version's D3D device property, else 0 */
    void *device;
    cl_device_id cl_dev;
    int *destroyed;
} ctx_slot;

typedef struct q_slot {
    int used;
    cl_command_queue q;
    cl_context c; /* kept alive by the queue */
} q_slot;

/* A memory object as the model sees it. A record stays until the object is destroyed (its
 * destructor callback ran), so a parent released by the application while a sub-buffer holds it
 * still answers for the sub-buffer. */
typedef struct mem_rec {
    int live;      /* the application holds it (refs > 0) */
    int refs;
    int destroyed; /* set by the destructor callback */
    cl_mem m;
    cl_context c;
    int api;       /* 10/11 for an object made by a sharing function, else 0 */
    int res, sub;  /* the resource and subresource it came from */
    int acquired;
    int parent;    /* index of the parent record (sub-buffers), -1 */
    int image;     /* CL image: dimensions below */
    size_t size, w, h, d, elem;
    cl_mem_object_type type;
} mem_rec;

static dev_slot devs[NDEV];
static res_slot ress[NRES];
static ctx_slot ctxs[NCTX];
static q_slot qs[NQ];
static mem_rec mems[NMEM * 2];
static int mem_count;
static cl_event evs[NEV];
static unsigned char scratch[1 << 16];
static unsigned char zeros[1 << 16];

static int flag(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static void CL_CALLBACK on_mem_destroyed(cl_mem m, void *user)
{
    (void)m;
    __atomic_store_n((int *)user, 1, __ATOMIC_RELEASE); // from PoCL's threads too
}

static void CL_CALLBACK on_context_destroyed(cl_context c, void *user)
{
    (void)c;
    __atomic_store_n((int *)user, 1, __ATOMIC_RELEASE); // from PoCL's threads too
}

/* The record whose acquisition governs `i`: itself, or the root of its parents. */
static int root_of(int i)
{
    while (mems[i].parent >= 0)
        i = mems[i].parent;
    return i;
}

/* A live object of the pool, or -1 (the caller then passes NULL or skips). */
static int live_mem(void)
{
    int n = 0, idx[NMEM * 2];
    for (int i = 0; i < mem_count; i++)
        if (mems[i].live)
            idx[n++] = i;
    return n ? idx[pick(n)] : -1;
}

/* A live object of context `c` (made from Direct3D when `d3d`), or -1. */
static int live_mem_of(cl_context c, int d3d)
{
    int n = 0, idx[NMEM * 2];
    for (int i = 0; i < mem_count; i++)
        if (mems[i].live && mems[i].c == c && (!d3d || mems[i].api))
            idx[n++] = i;
    return n ? idx[pick(n)] : -1;
}

static int used_slot(const void *base, size_t stride, int count)
{
    int n = 0, idx[16];
    for (int i = 0; i < count; i++)
        if (*(const int *)((const char *)base + i * stride))
            idx[n++] = i;
    return n ? idx[pick(n)] : -1;
}
#define PICK_USED(arr) used_slot(arr, sizeof arr[0], (int)(sizeof arr / sizeof arr[0]))

static int free_slot(const void *base, size_t stride, int count)
{
    for (int i = 0; i < count; i++)
        if (!*(const int *)((const char *)base + i * stride))
            return i;
    return -1;
}
#define FREE_SLOT(arr) free_slot(arr, sizeof arr[0], (int)(sizeof arr / sizeof arr[0]))

static const sharing *pick_flavour(void) { return &flavours[pick(4)]; }

/* An event list from the pool (NULL when empty); sometimes a count without a list. */
static cl_uint pick_waits(cl_event *list, const cl_event **out)
{
    cl_uint n = 0;
    unsigned want = pick(4);
    for (unsigned i = 0; i < want; i++) {
        int e = (int)pick(NEV);
        if (evs[e])
            list[n++] = evs[e];
    }
    *out = n ? list : NULL;
    return n;
}

/* Keeps a returned event in the pool, releasing the one it displaces. */
static void keep_event(cl_event e)
{
    if (!e)
        return;
    int slot = (int)pick(NEV);
    if (evs[slot])
        ALLOW("clReleaseEvent", clReleaseEvent(evs[slot]), CL_SUCCESS);
    evs[slot] = e;
}

/* ---------------------------------------------------------------------------------------------- */
/* Direct3D                                                                                        */

static void open_device(int api)
{
    int i = FREE_SLOT(devs);
    if (i < 0)
        return;
    dev_slot *d = &devs[i];
    if (!gfx_open(&d->g, api))
        FAIL("gfx_open failed");
    d->device = d->g.device;
    IUnknown_AddRef((IUnknown *)d->device);
    d->used = d->open = 1;
}

static void op_open_device(void) { open_device(byte() & 1 ? API_D3D10 : API_D3D11); }

/* The application lets go of the device; contexts and resources made from it live on. */
static void op_close_device(void)
{
    int i = PICK_USED(devs);
    if (i < 0 || !devs[i].open)
        return;
    gfx_close(&devs[i].g);
    devs[i].open = 0;
}

static const DXGI_FORMAT formats[] = {
    DXGI_FORMAT_R8G8B8A8_UNORM, DXGI_FORMAT_R32_FLOAT,       DXGI_FORMAT_B8G8R8A8_UNORM,
    DXGI_FORMAT_R16G16_SINT,    DXGI_FORMAT_R8_UINT,         DXGI_FORMAT_R32G32B32A32_FLOAT,
    DXGI_FORMAT_R8G8_UNORM,     DXGI_FORMAT_R10G10B10A2_UNORM, /* not in the table */
};

static void op_create_resource(void)
{
    int i = FREE_SLOT(ress);
    int d = PICK_USED(devs);
    if (i < 0 || d < 0 || !devs[d].open)
        return;
    gfx *g = &devs[d].g;
    res_slot *r = &ress[i];
    static const UINT usages[] = {D3D11_USAGE_DEFAULT, D3D11_USAGE_DEFAULT, D3D11_USAGE_DYNAMIC,
                                  D3D11_USAGE_STAGING, D3D11_USAGE_IMMUTABLE};
    UINT usage = usages[pick(5)];
    UINT cpu = usage == D3D11_USAGE_DYNAMIC   ? D3D11_CPU_ACCESS_WRITE
               : usage == D3D11_USAGE_STAGING ? D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE
                                              : 0;
    UINT misc = usage == D3D11_USAGE_DEFAULT && (byte() & 1) ? D3D11_RESOURCE_MISC_SHARED : 0;
    const void *init = usage == D3D11_USAGE_IMMUTABLE ? zeros : NULL;
    HRESULT hr;
    unsigned kind = pick(3);
    if (kind == 0) {
        UINT bind = usage == D3D11_USAGE_STAGING ? 0 : D3D11_BIND_VERTEX_BUFFER;
        hr = gfx_buffer(g, &r->r, 16 * (1 + pick(16)), usage, bind, cpu, 0, init);
    } else if (kind == 1) {
        UINT bind = usage == D3D11_USAGE_STAGING ? 0 : D3D11_BIND_SHADER_RESOURCE;
        UINT samples = usage == D3D11_USAGE_DEFAULT && pick(8) == 0 ? 4 : 1;
        hr = gfx_tex2d(g, &r->r, 1 + pick(16), 1 + pick(16), samples > 1 ? 1 : pick(4), 1 + pick(3),
                       formats[pick(8)], samples, usage, bind, cpu, misc, init);
    } else {
        UINT bind = usage == D3D11_USAGE_STAGING ? 0 : D3D11_BIND_SHADER_RESOURCE;
        hr = gfx_tex3d(g, &r->r, 1 + pick(8), 1 + pick(8), 1 + pick(8), pick(4), formats[pick(8)], usage, bind,
                       cpu, misc, init);
    }
    if (trace)
        fprintf(stderr, "  resource slot %d: kind %d usage %u misc %u on device %d: 0x%08x\n", i, (int)kind, usage, misc,
                d, (unsigned)hr);
    if (FAILED(hr) || !r->r.p)
        return; /* a description the runtime refuses: no resource */
    IUnknown_AddRef((IUnknown *)r->r.p);
    r->used = r->held = 1;
    r->dev = d;
}

/* The application releases the resource; memory objects made from it keep it alive ("the
 * implementation must keep its own reference"): with the witness, at least two remain then. */
static void op_release_resource(void)
{
    int i = PICK_USED(ress);
    if (i < 0 || !ress[i].held)
        return;
    /* "decremented when the OpenCL reference count on the returned OpenCL memory object drops to
     * zero": the application's references, its own or through a live object derived from it. */
    int in_use = 0;
    for (int m = 0; m < mem_count; m++)
        in_use |= mems[root_of(m)].api && mems[root_of(m)].res == i && mems[m].live;
    ULONG left = com_release(ress[i].r.p);
    ress[i].held = 0;
    EXPECT(left >= 1u + (in_use ? 1u : 0u), "resource released by the application: %lu references left with a "
           "memory object made from it alive (the layer holds none)", (unsigned long)left);
}

/* ---------------------------------------------------------------------------------------------- */
/* Contexts and queues                                                                             */

static void op_create_context(void)
{
    int i = FREE_SLOT(ctxs);
    if (i < 0)
        return;
    ctx_slot *c = &ctxs[i];
    int d = PICK_USED(devs);
    unsigned how = pick(16);
    int api = 0;
    void *device = NULL;
    if (d >= 0 && devs[d].open && how != 0) {
        device = devs[d].g.device;
        /* Mostly the device's own version; sometimes the other version's property. */
        api = (how == 1) ? (devs[d].g.api == API_D3D11 ? API_D3D10 : API_D3D11) : devs[d].g.api;
    }
    const sharing *s = &flavours[api == API_D3D10 ? 2 + pick(2) : pick(2)];
    cl_device_id dev = NULL;
    cl_int e;
    if (device) {
        e = sh_get_device_ids(s, platform, s->src_device, device, byte() & 1 ? s->set_all : s->set_preferred, 1,
                              &dev, NULL);
        ALLOW(FN_NAME(s, FN_GET_DEVICE_IDS), e, CL_SUCCESS, CL_DEVICE_NOT_FOUND);
    }
    if (!dev)
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    cl_context_properties props[9] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    int n = 2;
    if (device) {
        props[n++] = api == API_D3D10 ? CL_CONTEXT_D3D10_DEVICE_KHR : CL_CONTEXT_D3D11_DEVICE_KHR;
        props[n++] = (cl_context_properties)device;
    }
    unsigned sync = pick(4);
    if (sync < 3) {
        props[n++] = CL_CONTEXT_INTEROP_USER_SYNC;
        props[n++] = sync == 2 ? 7 : sync; /* 7: no cl_bool */
    }
    props[n] = 0;
    cl_context ctx;
    const char *how_made = byte() & 1 ? "clCreateContext" : "clCreateContextFromType";
    if (how_made[15] == 0)
        ctx = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    else
        ctx = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &e);
    cl_int dev_err = api == API_D3D10 ? CL_INVALID_D3D10_DEVICE_KHR : CL_INVALID_D3D11_DEVICE_KHR;
    ALLOW("clCreateContext", e, CL_SUCCESS, CL_INVALID_PROPERTY, dev_err, CL_INVALID_OPERATION, CL_DEVICE_NOT_FOUND);
    EXPECT((e == CL_SUCCESS) == (ctx != NULL), "clCreateContext: %s with context %p", cl_err_name(e), (void *)ctx);
    if (sync == 2)
        EXPECT(e == CL_INVALID_PROPERTY, "INTEROP_USER_SYNC = 7 accepted: %s", cl_err_name(e));
    if (!ctx)
        return;
    c->used = 1;
    c->c = ctx;
    c->refs = 1;
    c->api = device ? api : 0;
    c->device = device;
    c->cl_dev = dev;
    c->destroyed = calloc(1, sizeof(int));
    if (trace)
        fprintf(stderr, "  context slot %d = %p (D3D%d, user sync %s, %s)\n", i, (void *)ctx, c->api,
                sync < 2 ? (sync ? "true" : "false") : "absent", how_made);
    if (have_context_destructor)
        ALLOW("clSetContextDestructorCallback", clSetContextDestructorCallback(ctx, on_context_destroyed, c->destroyed),
              CL_SUCCESS);
}

/* Destroyed flags of contexts the application has let go of, checked at the end of the input. */
static int *dead_ctx_flags[256];
static cl_context dead_ctx_handles[256];
static int dead_ctx_count;

static void drop_context_ref(int i)
{
    ALLOW("clReleaseContext", clReleaseContext(ctxs[i].c), CL_SUCCESS);
    if (--ctxs[i].refs == 0)
        ctxs[i].used = 0;
}

static void op_context_refs(void)
{
    int i = PICK_USED(ctxs);
    if (i < 0)
        return;
    switch (pick(4)) {
    case 0:
        ALLOW("clRetainContext", clRetainContext(ctxs[i].c), CL_SUCCESS);
        ctxs[i].refs++;
        break;
    case 1: {
        cl_uint refs = 0;
        ALLOW("clGetContextInfo", clGetContextInfo(ctxs[i].c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL),
              CL_SUCCESS);
        cl_context_properties props[16];
        size_t size = 0;
        cl_int e = clGetContextInfo(ctxs[i].c, CL_CONTEXT_PROPERTIES, sizeof props, props, &size);
        ALLOW("clGetContextInfo(PROPERTIES)", e, CL_SUCCESS);
        cl_bool pref = 0;
        const sharing *s = pick_flavour();
        e = clGetContextInfo(ctxs[i].c, CL_CONTEXT_D3D10_PREFER_SHARED_RESOURCES_KHR + (s->api == API_D3D11),
                             pick(2) ? sizeof pref : 1, &pref, NULL);
        ALLOW("clGetContextInfo(PREFER_SHARED_RESOURCES)", e, CL_SUCCESS, CL_INVALID_VALUE);
        break;
    }
    default:
        if (ctxs[i].refs == 1) {
            dead_ctx_handles[dead_ctx_count] = ctxs[i].c;
            dead_ctx_flags[dead_ctx_count++] = ctxs[i].destroyed; /* at most 64 per input */
        }
        drop_context_ref(i);
        break;
    }
}

static void op_create_queue(void)
{
    int i = FREE_SLOT(qs);
    int c = PICK_USED(ctxs);
    if (i < 0 || c < 0)
        return;
    cl_int e;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctxs[c].c, ctxs[c].cl_dev, NULL, &e);
    ALLOW("clCreateCommandQueueWithProperties", e, CL_SUCCESS);
    qs[i] = (q_slot){1, q, ctxs[c].c};
}

static void op_queue(void)
{
    int i = PICK_USED(qs);
    if (i < 0)
        return;
    switch (pick(3)) {
    case 0:
        ALLOW("clFinish", clFinish(qs[i].q), CL_SUCCESS);
        break;
    case 1:
        ALLOW("clFlush", clFlush(qs[i].q), CL_SUCCESS);
        break;
    default:
        ALLOW("clReleaseCommandQueue", clReleaseCommandQueue(qs[i].q), CL_SUCCESS);
        qs[i].used = 0;
        break;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Memory objects from Direct3D resources                                                          */

static int mem_full(void) { return mem_count == NMEM * 2; }

static int new_mem(cl_mem m, cl_context c)
{
    if (mem_full())
        FAIL("memory record pool exhausted");
    int i = mem_count++;
    if (trace)
        fprintf(stderr, "  memory #%d = %p in context %p\n", i, (void *)m, (void *)c);
    memset(&mems[i], 0, sizeof mems[i]);
    mems[i] = (mem_rec){.live = 1, .refs = 1, .m = m, .c = c, .parent = -1, .res = -1};
    ALLOW("clSetMemObjectDestructorCallback", clSetMemObjectDestructorCallback(m, on_mem_destroyed, &mems[i].destroyed),
          CL_SUCCESS);
    ALLOW("clGetMemObjectInfo(TYPE)", clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof mems[i].type, &mems[i].type, NULL),
          CL_SUCCESS);
    ALLOW("clGetMemObjectInfo(SIZE)", clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof mems[i].size, &mems[i].size, NULL),
          CL_SUCCESS);
    if (mems[i].type != CL_MEM_OBJECT_BUFFER) {
        mems[i].image = 1;
        size_t v[4] = {0, 0, 0, 0};
        cl_image_info q[4] = {CL_IMAGE_WIDTH, CL_IMAGE_HEIGHT, CL_IMAGE_DEPTH, CL_IMAGE_ELEMENT_SIZE};
        for (int k = 0; k < 4; k++)
            ALLOW("clGetImageInfo", clGetImageInfo(m, q[k], sizeof v[k], &v[k], NULL), CL_SUCCESS);
        mems[i].w = v[0];
        mems[i].h = v[1] ? v[1] : 1;
        mems[i].d = v[2] ? v[2] : 1;
        mems[i].elem = v[3];
    }
    return i;
}

/* Whether the application still holds the object made from (res, sub): its own reference or one
 * to an object derived from it. (After the last one the platform may keep the object a while for
 * commands in flight; the resource is free for a new object then.) */
static int mem_exists(int res, int sub)
{
    for (int i = 0; i < mem_count; i++) {
        int r = root_of(i);
        if (mems[i].live && mems[r].api && mems[r].res == res && mems[r].sub == sub)
            return 1;
    }
    return 0;
}

static const cl_mem_flags mem_flags[] = {0, CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY,
                                         CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                         (cl_mem_flags)1 << 40, CL_MEM_HOST_NO_ACCESS};

static void op_create_mem(void)
{
    if (mem_full())
        return;
    /* Mostly a well-formed call (the context's version, a resource of its device, the function
     * for the resource's kind, valid flags and subresource), so that objects get made; otherwise
     * any combination. */
    int c = PICK_USED(ctxs);
    int wild = pick(4) == 0;
    const sharing *s = pick_flavour();
    if (!wild && c >= 0 && ctxs[c].api)
        s = &flavours[(ctxs[c].api == API_D3D10 ? 2 : 0) + (s->nv ? 1 : 0)];
    int r = PICK_USED(ress);
    if (!wild && c >= 0) {
        int cand[NRES], n = 0;
        for (int k = 0; k < NRES; k++)
            if (ress[k].used && devs[ress[k].dev].device == ctxs[c].device)
                cand[n++] = k;
        if (n)
            r = cand[pick(n)];
    }
    unsigned which = FN_CREATE_BUFFER + pick(3);
    if (!wild && r >= 0)
        which = ress[r].r.kind == RES_BUFFER ? FN_CREATE_BUFFER : ress[r].r.kind == RES_TEX2D ? FN_CREATE_TEX2D : FN_CREATE_TEX3D;
    unsigned fi = wild ? pick(8) : pick(4);
    cl_mem_flags flags = mem_flags[fi];
    UINT sub = pick(8) == 0 ? 0xffffffffu : pick(6);
    if (!wild && r >= 0 && which != FN_CREATE_BUFFER) {
        UINT subs = ress[r].r.kind == RES_TEX2D ? ress[r].r.mips * ress[r].r.array : ress[r].r.mips;
        sub = pick(subs ? subs : 1);
    }
    cl_context ctx = c >= 0 ? ctxs[c].c : NULL;
    void *resource = r >= 0 ? ress[r].r.p : NULL;
    cl_int e = 1;
    cl_mem m;
    const char *name = FN_NAME(s, which);
    if (which == FN_CREATE_BUFFER)
        m = sh_create_buffer(s, ctx, flags, resource, &e);
    else if (which == FN_CREATE_TEX2D)
        m = sh_create_tex2d(s, ctx, flags, resource, sub, &e);
    else
        m = sh_create_tex3d(s, ctx, flags, resource, sub, &e);
    if (which == FN_CREATE_BUFFER)
        ALLOW(name, e, CL_SUCCESS, CL_INVALID_CONTEXT, CL_INVALID_VALUE, s->err_resource);
    else /* a table format the device lacks: the core image rule's (docs/errors.md) */
        ALLOW(name, e, CL_SUCCESS, CL_INVALID_CONTEXT, CL_INVALID_VALUE, s->err_resource,
              CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_IMAGE_FORMAT_NOT_SUPPORTED);
    EXPECT((e == CL_SUCCESS) == (m != NULL), "%s: %s with object %p", name, cl_err_name(e), (void *)m);
    if (!m)
        return;
    /* What success requires. */
    const res *rr = &ress[r].r;
    res_kind want = which == FN_CREATE_BUFFER ? RES_BUFFER : which == FN_CREATE_TEX2D ? RES_TEX2D : RES_TEX3D;
    UINT subs = which == FN_CREATE_BUFFER ? 1 : which == FN_CREATE_TEX2D ? rr->mips * rr->array : rr->mips;
    UINT real_sub = which == FN_CREATE_BUFFER ? 0 : sub;
    EXPECT(ctxs[c].api == s->api, "%s (%s) succeeded in a context made with D3D%d", name, s->name, ctxs[c].api);
    EXPECT(rr->kind == want, "%s succeeded on a resource of kind %d", name, rr->kind);
    EXPECT(fi < 4, "%s succeeded with flags 0x%llx", name, (unsigned long long)flags);
    EXPECT(real_sub < subs, "%s succeeded with subresource %u of %u", name, real_sub, subs);
    EXPECT(rr->usage != D3D11_USAGE_IMMUTABLE, "%s succeeded on an IMMUTABLE resource", name);
    EXPECT(rr->samples <= 1, "%s succeeded on a multisampled texture", name);
    EXPECT(devs[ress[r].dev].device == ctxs[c].device, "%s succeeded with a resource of another device", name);
    EXPECT(!mem_exists(r, (int)real_sub), "%s succeeded twice for resource %d subresource %u", name, r, real_sub);
    int i = new_mem(m, ctx);
    mems[i].api = s->api;
    mems[i].res = r;
    mems[i].sub = (int)real_sub;
    /* The object answers for its resource and subresource. */
    void *back = NULL;
    ALLOW("clGetMemObjectInfo(D3D_RESOURCE)", clGetMemObjectInfo(m, s->mem_resource, sizeof back, &back, NULL),
          CL_SUCCESS);
    EXPECT(back == resource, "CL_MEM_D3D_RESOURCE = %p, want %p", back, resource);
    if (which != FN_CREATE_BUFFER) {
        cl_uint got = 0xdead;
        ALLOW("clGetImageInfo(D3D_SUBRESOURCE)", clGetImageInfo(m, s->image_subresource, sizeof got, &got, NULL),
              CL_SUCCESS);
        EXPECT(got == sub, "CL_IMAGE_D3D_SUBRESOURCE = %u, want %u", got, sub);
    }
}

/* Objects derived from others: a sub-buffer, or a plain buffer (no Direct3D). */
static void op_derive(void)
{
    if (mem_full())
        return;
    int p = live_mem();
    int c = PICK_USED(ctxs);
    cl_int e;
    if (p >= 0 && !mems[p].image && (byte() & 1)) {
        cl_buffer_region region = {0, 16 * (1 + pick(4))};
        cl_mem m = clCreateSubBuffer(mems[p].m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
        /* CL_INVALID_MEM_OBJECT: "buffer ... is a sub-buffer object" */
        ALLOW("clCreateSubBuffer", e, CL_SUCCESS, CL_INVALID_VALUE, CL_INVALID_BUFFER_SIZE, CL_INVALID_MEM_OBJECT);
        if (m) {
            int i = new_mem(m, mems[p].c);
            mems[i].parent = p;
        }
        return;
    }
    if (c < 0)
        return;
    cl_mem m = clCreateBuffer(ctxs[c].c, CL_MEM_READ_WRITE, 64 * (1 + pick(4)), NULL, &e);
    ALLOW("clCreateBuffer", e, CL_SUCCESS);
    if (m)
        new_mem(m, ctxs[c].c);
}

static void op_mem_refs(void)
{
    int i = live_mem();
    if (i < 0)
        return;
    switch (pick(3)) {
    case 0:
        ALLOW("clRetainMemObject", clRetainMemObject(mems[i].m), CL_SUCCESS);
        mems[i].refs++;
        break;
    case 1: {
        const sharing *s = pick_flavour();
        void *back = NULL;
        cl_int e = clGetMemObjectInfo(mems[i].m, s->mem_resource, sizeof back, &back, NULL);
        ALLOW("clGetMemObjectInfo(D3D_RESOURCE)", e, CL_SUCCESS, s->err_resource, CL_INVALID_VALUE);
        if (e == CL_SUCCESS)
            EXPECT(mems[i].api && back == ress[mems[i].res].r.p, "CL_MEM_D3D_RESOURCE answered %p for a %s object",
                   back, mems[i].api ? "D3D" : "plain");
        cl_uint sub;
        e = clGetImageInfo(mems[i].m, s->image_subresource, sizeof sub, &sub, NULL);
        ALLOW("clGetImageInfo(D3D_SUBRESOURCE)", e, CL_SUCCESS, s->err_resource, CL_INVALID_MEM_OBJECT,
              CL_INVALID_VALUE);
        break;
    }
    default:
        ALLOW("clReleaseMemObject", clReleaseMemObject(mems[i].m), CL_SUCCESS);
        if (--mems[i].refs == 0)
            mems[i].live = 0;
        break;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Acquire and release                                                                             */

static void op_share(int acquire)
{
    const sharing *s = pick_flavour();
    int qi = PICK_USED(qs);
    cl_command_queue q = qi >= 0 ? qs[qi].q : NULL;
    if (!q)
        return;
    cl_mem list[MAXLIST];
    int idx[MAXLIST];
    cl_uint n = pick(MAXLIST + 1);
    int wild = pick(4) == 0;
    for (cl_uint k = 0; k < n; k++) {
        idx[k] = wild ? live_mem() : live_mem_of(qs[qi].c, 1);
        list[k] = idx[k] >= 0 ? mems[idx[k]].m : NULL;
    }
    if (!wild && n && idx[0] >= 0 && mems[idx[0]].api)
        s = &flavours[(mems[idx[0]].api == API_D3D10 ? 2 : 0) + (s->nv ? 1 : 0)];
    unsigned shape = pick(8);
    cl_uint pass_n = n;
    const cl_mem *pass = n ? list : NULL;
    if (shape == 0)
        pass = NULL; /* count without a list */
    else if (shape == 1)
        pass_n = 0; /* list without a count */
    cl_event waits[4];
    const cl_event *wl;
    cl_uint nw = pick_waits(waits, &wl);
    if (pick(8) == 0)
        wl = NULL; /* a count without a list */
    cl_event ev = NULL;
    cl_event *evp = byte() & 1 ? &ev : NULL;
    cl_int e = acquire ? sh_acquire(s, q, pass_n, pass, nw, wl, evp) : sh_release(s, q, pass_n, pass, nw, wl, evp);
    const char *name = FN_NAME(s, acquire ? FN_ACQUIRE : FN_RELEASE);
    if (trace) {
        fprintf(stderr, "  queue %d (context %p), %u objects (passed %u, list %p):", qi, (void *)qs[qi].c, n, pass_n,
                (void *)pass);
        for (cl_uint k = 0; k < n; k++)
            fprintf(stderr, " #%d", idx[k]);
        fprintf(stderr, "; %u waits (list %p), event %s\n", nw, (void *)wl, evp ? "asked" : "not asked");
    }
    ALLOW(name, e, CL_SUCCESS, CL_INVALID_VALUE, CL_INVALID_MEM_OBJECT, CL_INVALID_CONTEXT, CL_INVALID_EVENT_WAIT_LIST,
          acquire ? s->err_already : s->err_not_acquired);
    EXPECT((e == CL_SUCCESS) == (ev != NULL) || !evp, "%s: %s with event %p", name, cl_err_name(e), (void *)ev);
    if (e == CL_SUCCESS && ev) {
        cl_command_type t = 0;
        ALLOW("clGetEventInfo", clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
        EXPECT(t == (acquire ? s->cmd_acquire : s->cmd_release), "%s event command type 0x%x", name, t);
    }
    keep_event(ev);
    /* The model: the listed objects (when the call was well formed) and what the answer means. */
    int well_formed = (pass != NULL) == (pass_n != 0) && (nw == 0 || wl != NULL);
    int all_d3d = 1, dup = 0, busy = 0, idle = 0;
    cl_uint real = pass ? pass_n : 0;
    for (cl_uint k = 0; k < real; k++) {
        int m = idx[k];
        if (m < 0 || mems[m].api == 0 || mems[m].c != qs[qi].c || mems[m].api != s->api)
            all_d3d = 0;
        else if (mems[m].acquired)
            busy = 1;
        else
            idle = 1;
        for (cl_uint j = 0; j < k; j++)
            dup |= list[j] == list[k];
    }
    if (e == CL_SUCCESS) {
        EXPECT(well_formed, "%s succeeded on a malformed call", name);
        EXPECT(all_d3d, "%s succeeded on an object of another context, version or origin", name);
        EXPECT(!dup, "%s succeeded with an object listed twice", name);
        EXPECT(acquire ? !busy : !idle, "%s succeeded on an object %s", name, acquire ? "already acquired" : "not acquired");
        for (cl_uint k = 0; k < real; k++)
            mems[idx[k]].acquired = acquire;
    } else if (e == s->err_already) {
        EXPECT(busy || dup, "%s: ALREADY_ACQUIRED with no object acquired or listed twice", name);
    } else if (e == s->err_not_acquired) {
        EXPECT(idle || dup, "%s: NOT_ACQUIRED with every object acquired and none listed twice", name);
    }
}

static cl_int not_acquired_error(int api)
{
    return api == API_D3D10 ? CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR : CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR;
}

/* ---------------------------------------------------------------------------------------------- */
/* Enqueues on shared objects                                                                      */

static void op_enqueue(void)
{
    int qi = PICK_USED(qs);
    int i = live_mem();
    if (qi < 0 || i < 0)
        return;
    if (pick(4)) {
        i = live_mem_of(qs[qi].c, 0);
        if (i < 0)
            return;
    }
    cl_command_queue q = qs[qi].q;
    mem_rec *m = &mems[i];
    int root = root_of(i);
    int other = live_mem();
    cl_event waits[4];
    const cl_event *wl;
    cl_uint nw = pick_waits(waits, &wl);
    cl_event ev = NULL;
    cl_event *evp = byte() & 1 ? &ev : NULL;
    cl_bool blocking = byte() & 1;
    cl_int e;
    const char *name;
    unsigned what = pick(6);
    size_t off = pick(4) * 16, len = 16 * (1 + pick(4));
    int uses_other = 0;
    if (!m->image) {
        switch (what) {
        case 0:
            name = "clEnqueueReadBuffer";
            e = clEnqueueReadBuffer(q, m->m, blocking, off, len, scratch, nw, wl, evp);
            break;
        case 1:
            name = "clEnqueueWriteBuffer";
            e = clEnqueueWriteBuffer(q, m->m, blocking, off, len, zeros, nw, wl, evp);
            break;
        case 2: {
            name = "clEnqueueFillBuffer";
            uint32_t pattern = 0x5a5a5a5a;
            e = clEnqueueFillBuffer(q, m->m, &pattern, sizeof pattern, off, len, nw, wl, evp);
            break;
        }
        case 3:
            name = "clEnqueueCopyBuffer";
            if (other < 0 || mems[other].image)
                return;
            uses_other = 1;
            e = clEnqueueCopyBuffer(q, mems[other].m, m->m, 0, off, len, nw, wl, evp);
            break;
        case 4: {
            name = "clEnqueueMapBuffer";
            void *p = clEnqueueMapBuffer(q, m->m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, off, len, nw, wl, evp, &e);
            EXPECT((e == CL_SUCCESS) == (p != NULL), "clEnqueueMapBuffer: %s with pointer %p", cl_err_name(e), p);
            if (p) {
                keep_event(ev);
                ev = NULL;
                memset(p, 1, len);
                ALLOW("clEnqueueUnmapMemObject", clEnqueueUnmapMemObject(q, m->m, p, 0, NULL, NULL), CL_SUCCESS);
            }
            break;
        }
        default:
            name = "clEnqueueMigrateMemObjects";
            e = clEnqueueMigrateMemObjects(q, 1, &m->m, pick(2) ? CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED : 0, nw, wl, evp);
            break;
        }
    } else {
        /* A zero-width region is PoCL's assertion failure in clEnqueueMapImage (3.1), not the layer's
         * concern: regions here are never empty. */
        size_t origin[3] = {m->w > 1 ? pick(2) : 0, 0, 0};
        size_t region[3] = {m->w, m->h, m->d};
        if (origin[0] + region[0] > m->w)
            region[0] = m->w - origin[0];
        EXPECT(m->w * m->h * m->d * m->elem <= sizeof scratch, "image too large for the scratch buffer");
        switch (what) {
        case 0:
        case 1:
            name = "clEnqueueReadImage";
            e = clEnqueueReadImage(q, m->m, blocking, origin, region, 0, 0, scratch, nw, wl, evp);
            break;
        case 2:
            name = "clEnqueueWriteImage";
            e = clEnqueueWriteImage(q, m->m, blocking, origin, region, 0, 0, zeros, nw, wl, evp);
            break;
        case 3: {
            name = "clEnqueueFillImage";
            cl_uint4 color = {{1, 2, 3, 4}};
            e = clEnqueueFillImage(q, m->m, &color, origin, region, nw, wl, evp);
            break;
        }
        case 4: {
            name = "clEnqueueMapImage";
            size_t row, slice;
            void *p = clEnqueueMapImage(q, m->m, CL_TRUE, CL_MAP_READ, origin, region, &row, &slice, nw, wl, evp, &e);
            EXPECT((e == CL_SUCCESS) == (p != NULL), "clEnqueueMapImage: %s with pointer %p", cl_err_name(e), p);
            if (p) {
                keep_event(ev);
                ev = NULL;
                ALLOW("clEnqueueUnmapMemObject", clEnqueueUnmapMemObject(q, m->m, p, 0, NULL, NULL), CL_SUCCESS);
            }
            break;
        }
        default:
            name = "clEnqueueCopyImageToBuffer";
            /* Not into a sub-buffer: PoCL 3.1 crashes there, with or without the layer
             * (docs/fuzzing.md). */
            if (other < 0 || mems[other].image || mems[other].parent >= 0)
                return;
            if (trace)
                fprintf(stderr, "  copy image #%d (%zux%zux%zu, %zu bytes/texel, type 0x%x) region %zux%zux%zu at x %zu to "
                        "buffer #%d (%zu bytes), context %p -> %p\n", i, m->w, m->h, m->d, m->elem, m->type, region[0],
                        region[1], region[2], origin[0], other, mems[other].size, (void *)m->c, (void *)mems[other].c);
            uses_other = 1;
            e = clEnqueueCopyImageToBuffer(q, m->m, mems[other].m, origin, region, 0, nw, wl, evp);
            break;
        }
    }
    /* Errors the core specs name for these calls, and the sharing extensions' own: NOT_ACQUIRED of
     * the version of a Direct3D object the call uses (itself or the object it derives from). */
    int r1 = root, r2 = uses_other ? root_of(other) : -1;
    cl_int not_acq = mems[r1].api ? not_acquired_error(mems[r1].api) : CL_SUCCESS;
    cl_int other_not_acq = r2 >= 0 && mems[r2].api ? not_acquired_error(mems[r2].api) : CL_SUCCESS;
    ALLOW(name, e, CL_SUCCESS, CL_INVALID_VALUE, CL_INVALID_CONTEXT, CL_INVALID_EVENT_WAIT_LIST,
          CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_MEM_COPY_OVERLAP, CL_INVALID_OPERATION, CL_INVALID_IMAGE_SIZE,
          CL_INVALID_MEM_OBJECT, not_acq, other_not_acq);
    /* The model, for objects the application still holds (their acquisition state is known). */
    int idle1 = mems[r1].api && mems[r1].live && !mems[r1].acquired;
    int idle2 = r2 >= 0 && mems[r2].api && mems[r2].live && !mems[r2].acquired;
    int known = (!mems[r1].api || mems[r1].live) && (r2 < 0 || !mems[r2].api || mems[r2].live);
    if (e == CL_SUCCESS)
        EXPECT(!idle1 && !idle2, "%s succeeded on a Direct3D object that is not acquired", name);
    else if (known && (e == not_acq || e == other_not_acq))
        EXPECT(idle1 || idle2, "%s: NOT_ACQUIRED though every Direct3D object it uses is acquired", name);
    if (e != CL_SUCCESS)
        ev = NULL;
    keep_event(ev);
}

/* ---------------------------------------------------------------------------------------------- */
/* clGetDeviceIDsFromD3D                                                                           */

static void op_get_device_ids(void)
{
    const sharing *s = pick_flavour();
    int d = PICK_USED(devs);
    void *object = NULL;
    cl_uint source = pick(2) ? s->src_device : s->src_adapter;
    if (d >= 0 && devs[d].open)
        object = source == s->src_device ? devs[d].g.device : (void *)devs[d].g.adapter;
    cl_uint set = pick(4) ? (pick(2) ? s->set_all : s->set_preferred) : 0x1234;
    cl_device_id list[4];
    cl_uint num = 0;
    cl_uint entries = pick(5);
    cl_int e = sh_get_device_ids(s, pick(8) ? platform : NULL, source, object, set, entries, pick(4) ? list : NULL,
                                 pick(4) ? &num : NULL);
    ALLOW(FN_NAME(s, FN_GET_DEVICE_IDS), e, CL_SUCCESS, CL_INVALID_PLATFORM, CL_INVALID_VALUE, CL_DEVICE_NOT_FOUND);
}

/* ---------------------------------------------------------------------------------------------- */
/* End of an input: release everything, then nothing may be left                                  */

static int all_destroyed(void)
{
    for (int i = 0; i < mem_count; i++)
        if (!flag(&mems[i].destroyed))
            return 0;
    for (int i = 0; i < dead_ctx_count; i++)
        if (have_context_destructor && !flag(dead_ctx_flags[i]))
            return 0;
    return 1;
}

static void teardown(void)
{
    for (int i = 0; i < NQ; i++)
        if (qs[i].used)
            ALLOW("clFinish", clFinish(qs[i].q), CL_SUCCESS);
    for (int i = 0; i < NEV; i++)
        if (evs[i]) {
            ALLOW("clReleaseEvent", clReleaseEvent(evs[i]), CL_SUCCESS);
            evs[i] = NULL;
        }
    for (int i = 0; i < mem_count; i++)
        while (mems[i].live) {
            ALLOW("clReleaseMemObject", clReleaseMemObject(mems[i].m), CL_SUCCESS);
            if (--mems[i].refs == 0)
                mems[i].live = 0;
        }
    for (int i = 0; i < NQ; i++)
        if (qs[i].used) {
            ALLOW("clReleaseCommandQueue", clReleaseCommandQueue(qs[i].q), CL_SUCCESS);
            qs[i].used = 0;
        }
    for (int i = 0; i < NCTX; i++)
        while (ctxs[i].used) {
            if (ctxs[i].refs == 1) {
                dead_ctx_handles[dead_ctx_count] = ctxs[i].c;
                dead_ctx_flags[dead_ctx_count++] = ctxs[i].destroyed;
            }
            drop_context_ref(i);
        }
    /* PoCL frees a context when its device thread drops the last command's event, which may come a
     * little after clReleaseContext returns: wait up to two seconds for the destructor callbacks. */
    for (int spins = 0; spins < 20000 && !all_destroyed(); spins++)
        usleep(100);
    for (int i = 0; i < mem_count; i++)
        EXPECT(flag(&mems[i].destroyed), "memory object %d (%s) outlived every reference", i, mems[i].api ? "D3D" : "plain");
    mem_count = 0;
    for (int i = 0; i < dead_ctx_count; i++) {
        if (have_context_destructor)
            EXPECT(flag(dead_ctx_flags[i]), "context %p outlived every reference", (void *)dead_ctx_handles[i]);
        free(dead_ctx_flags[i]);
    }
    dead_ctx_count = 0;
    /* Direct3D: resources, then devices; the witness must be the last reference. */
    for (int i = 0; i < NRES; i++) {
        if (!ress[i].used)
            continue;
        if (ress[i].held)
            com_release(ress[i].r.p);
        ULONG left = com_release(ress[i].r.p);
        EXPECT(left == 0, "resource %d: %lu references left after every OpenCL object is gone", i, (unsigned long)left);
        memset(&ress[i], 0, sizeof ress[i]);
    }
    for (int i = 0; i < NDEV; i++) {
        if (!devs[i].used)
            continue;
        if (devs[i].open)
            gfx_close(&devs[i].g);
        ULONG left = com_release(devs[i].device);
        EXPECT(left == 0, "device %d: %lu references left after every object is gone", i, (unsigned long)left);
        memset(&devs[i], 0, sizeof devs[i]);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* libFuzzer                                                                                       */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    platform = h_platform();
    if (!platform) {
        fprintf(stderr, "fuzz_sharing: no OpenCL platform (OCL_ICD_VENDORS, OPENCL_LAYERS?)\n");
        exit(2);
    }
    for (int i = 0; i < 4; i++) {
        int api, nv;
        h_combo(i, &api, &nv);
        for (int f = 0; f < 6; f++)
            h_fn_name(fn_names[i][f], sizeof fn_names[i][f], api, nv, f);
        if (!sharing_init(&flavours[i], platform, api, nv)) {
            fprintf(stderr, "fuzz_sharing: %s entry points missing: is the layer loaded (OPENCL_LAYERS)?\n",
                    flavours[i].name);
            exit(2);
        }
    }
    trace = getenv("FUZZ_TRACE") != NULL;
    if (getenv("FUZZ_STATS"))
        atexit(print_tallies);
    /* OpenCL 3.0's context destructor callback, where the platform has it. */
    cl_device_id dev = h_first_device(platform);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    cl_context c = clCreateContext(props, 1, &dev, NULL, NULL, NULL);
    int probe = 0;
    have_context_destructor = c && clSetContextDestructorCallback(c, on_context_destroyed, &probe) == CL_SUCCESS;
    if (c)
        clReleaseContext(c);
    if (have_context_destructor && !probe) {
        fprintf(stderr, "fuzz_sharing: the context destructor callback did not run at the last release\n");
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in_data = data;
    in_size = size;
    in_pos = 0;
    catch_crashes(); /* again each time: see on_crash */
    int ops = 0;
    /* Two devices to start with (the first byte picks their versions): most programs are about
     * what is made from them. */
    uint8_t first = byte();
    open_device(first & 1 ? API_D3D10 : API_D3D11);
    open_device(first & 2 ? API_D3D10 : API_D3D11);
    while (more() && ops++ < 64) {
        unsigned op = byte() % 16;
        if (trace)
            fprintf(stderr, "op %u at byte %zu\n", op, in_pos - 1);
        switch (op) {
        case 0:
            op_open_device();
            break;
        case 1:
            op_close_device();
            break;
        case 2:
            op_create_resource();
            break;
        case 3:
            op_release_resource();
            break;
        case 4:
            op_create_context();
            break;
        case 5:
            op_context_refs();
            break;
        case 6:
            op_create_queue();
            break;
        case 7:
            op_queue();
            break;
        case 8:
        case 9:
            op_create_mem();
            break;
        case 10:
            op_derive();
            break;
        case 11:
            op_mem_refs();
            break;
        case 12:
            op_share(1);
            break;
        case 13:
            op_share(0);
            break;
        case 14:
            op_enqueue();
            break;
        default:
            op_get_device_ids();
            break;
        }
    }
    teardown();
    return 0;
}
