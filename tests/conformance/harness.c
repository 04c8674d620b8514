/* Shared harness of the conformance suite: checks, platform and entry-point lookup, Direct3D 10/11
 * behind one small API, the format table, and the suite's one OpenCL program. See harness.h. */
#include "harness.h"

#ifndef _WIN32
#include <signal.h>

#include "layer_symbol.h"
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef _WIN32
#include <windows.h>
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Checks                                                                                          */

int h_passed, h_failed;
char h_where[160];
static char h_name[64];

void h_pass(void) { h_passed++; }

void h_fail(const char *file, int line, const char *fmt, ...)
{
    h_failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "FAIL %s:%d [%s] ", file, line, h_where);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    fflush(stdout);
    va_end(ap);
}

void h_at(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h_where, sizeof h_where, fmt, ap);
    va_end(ap);
}

#ifndef _WIN32
static void on_watchdog(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here. */
    char buf[256];
    int n = snprintf(buf, sizeof buf, "FAIL watchdog: no progress [%s]\n%s: %d passed, %d failed\n", h_where,
                     h_name, h_passed, h_failed + 1);
    if (n > 0)
        (void)!write(1, buf, (size_t)n);
    _exit(3);
}
#else
/* Windows (MinGW-w64 builds run under Wine): no SIGALRM, so alarm() arms a deadline that a thread of
 * the harness watches. On expiry it writes the same lines straight to the stdout handle (the main
 * thread may hold the C runtime's stream lock) and ends the process without running any DLL's
 * detach code (which could wait on the call that hangs). */
static volatile LONG64 watchdog_deadline; /* GetTickCount64() milliseconds; 0: disarmed */

static DWORD WINAPI watchdog_thread(void *arg)
{
    (void)arg;
    for (;;) {
        Sleep(100);
        ULONGLONG deadline = (ULONGLONG)InterlockedCompareExchange64(&watchdog_deadline, 0, 0);
        if (!deadline || GetTickCount64() < deadline)
            continue;
        char buf[256];
        int n = snprintf(buf, sizeof buf, "FAIL watchdog: no progress [%s]\n%s: %d passed, %d failed\n", h_where,
                         h_name, h_passed, h_failed + 1);
        DWORD written;
        if (n > 0)
            WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), buf, (DWORD)n, &written, NULL);
        TerminateProcess(GetCurrentProcess(), 3);
    }
    return 0;
}

unsigned alarm(unsigned seconds)
{
    static volatile LONG started;
    if (!InterlockedExchange(&started, 1)) {
        HANDLE t = CreateThread(NULL, 0, watchdog_thread, NULL, 0, NULL);
        if (t)
            CloseHandle(t);
        else
            h_fail(__FILE__, __LINE__, "watchdog thread: CreateThread failed (%lu)", GetLastError());
    }
    ULONGLONG now = GetTickCount64();
    ULONGLONG old = (ULONGLONG)InterlockedExchange64(&watchdog_deadline, seconds ? (LONG64)(now + seconds * 1000ULL) : 0);
    return old > now ? (unsigned)((old - now + 999) / 1000) : 0;
}

int setenv(const char *name, const char *value, int overwrite)
{
    if (!overwrite && getenv(name))
        return 0;
    return _putenv_s(name, value) ? -1 : 0;
}

int unsetenv(const char *name) { return _putenv_s(name, "") ? -1 : 0; }
#endif

long h_layer_held(char *text, size_t size)
{
    if (text && size)
        text[0] = 0;
#ifndef _WIN32
    void *held = layer_symbol("dxclHeldObjects");
    if (held)
        return (long)((size_t (*)(char *, size_t))held)(text, size);
#endif
    return -1;
}

int h_layer_back_within(long before, int ms, char *text, size_t size)
{
    for (int i = 0;; i++) {
        if (h_layer_held(text, size) <= before)
            return 1;
        if (i >= ms)
            return 0;
        usleep(1000);
    }
}

int h_reduced(void)
{
    const char *v = getenv("DXCL_CONFORMANCE_REDUCED");
    return v && *v && strcmp(v, "0") != 0;
}

void h_begin(const char *name, unsigned watchdog_seconds)
{
    const char *strategy = getenv("DXCL_STRATEGY"), *interop = getenv("DXCL_INTEROP");
    if (strategy && *strategy)
        snprintf(h_name, sizeof h_name, "%s_%s", name, strategy);
    else
        snprintf(h_name, sizeof h_name, "%s", name);
    /* DXCL_INTEROP=0: the layer treats dxcl's runtime as a foreign device. */
    if (interop && strcmp(interop, "0") == 0) {
        size_t n = strlen(h_name);
        snprintf(h_name + n, sizeof h_name - n, "_foreign");
    }
    /* The reduced mode runs under valgrind (20 to 50 times slower) or ASan: a longer watchdog. */
    if (h_reduced()) {
        size_t n = strlen(h_name);
        snprintf(h_name + n, sizeof h_name - n, "_reduced");
        watchdog_seconds *= 10;
    }
#ifdef _WIN32
    /* Under Wine every Direct3D call of the program goes through wined3d's command thread, and each of
     * the layer's through the bridge's server thread: textures, the longest, takes 65 to 90 s of its
     * 120 on 2 busy cores. */
    watchdog_seconds *= 3;
#endif
#ifdef _WIN32
    /* The Windows C runtime buffers _IOLBF streams fully: unbuffered, so that every line is out before
     * a crash or the watchdog. */
    setvbuf(stdout, NULL, _IONBF, 0);
#else
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_watchdog);
#endif
    alarm(watchdog_seconds);
}

int h_end(void)
{
    /* Every object the program made is released: the layer must hold nothing of the platform's any
     * more (the releases it makes on its own thread, after completion callbacks, may take a moment:
     * 2 s, ten times that in the reduced mode, which runs under valgrind). */
    char held[160];
    if (h_layer_held(held, sizeof held) >= 0) {
        h_at("the layer holds nothing at the end");
        if (h_layer_back_within(0, H_BY_MODE(2000, 20000), held, sizeof held))
            h_pass();
        else
            h_fail(__FILE__, __LINE__, "the layer still holds %s", held);
    }
    printf("%s: %d passed, %d failed\n", h_name, h_passed, h_failed);
    return h_failed ? 1 : 0;
}

const char *cl_err_name(cl_int e)
{
    switch (e) {
#define N(x) case x: return #x;
        N(CL_SUCCESS) N(CL_DEVICE_NOT_FOUND) N(CL_OUT_OF_RESOURCES) N(CL_OUT_OF_HOST_MEMORY)
        N(CL_MEM_COPY_OVERLAP) N(CL_IMAGE_FORMAT_NOT_SUPPORTED) N(CL_MAP_FAILURE)
        N(CL_INVALID_VALUE) N(CL_INVALID_DEVICE_TYPE) N(CL_INVALID_PLATFORM) N(CL_INVALID_DEVICE)
        N(CL_INVALID_CONTEXT) N(CL_INVALID_QUEUE_PROPERTIES) N(CL_INVALID_COMMAND_QUEUE)
        N(CL_INVALID_HOST_PTR) N(CL_INVALID_MEM_OBJECT) N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        N(CL_INVALID_IMAGE_SIZE) N(CL_INVALID_PROGRAM) N(CL_INVALID_KERNEL) N(CL_INVALID_ARG_INDEX)
        N(CL_INVALID_ARG_VALUE) N(CL_INVALID_KERNEL_ARGS) N(CL_INVALID_WORK_DIMENSION)
        N(CL_INVALID_EVENT_WAIT_LIST) N(CL_INVALID_EVENT) N(CL_INVALID_OPERATION)
        N(CL_INVALID_BUFFER_SIZE) N(CL_INVALID_PROPERTY) N(CL_INVALID_GL_OBJECT)
        N(CL_INVALID_D3D10_DEVICE_KHR) N(CL_INVALID_D3D10_RESOURCE_KHR)
        N(CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR) N(CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR)
        N(CL_INVALID_D3D11_DEVICE_KHR) N(CL_INVALID_D3D11_RESOURCE_KHR)
        N(CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR) N(CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR)
#undef N
    default:
        return "?";
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Platform, entry points                                                                          */

const char *const fn_suffix[6] = {"GetDeviceIDsFrom", "CreateFrom%sBuffer", "CreateFrom%sTexture2D",
                                  "CreateFrom%sTexture3D", "EnqueueAcquire%sObjects",
                                  "EnqueueRelease%sObjects"};

void h_fn_name(char *buf, size_t n, int api, int nv, int which)
{
    const char *ver = api == API_D3D10 ? "D3D10" : "D3D11";
    const char *flav = nv ? "NV" : "KHR";
    if (which == FN_GET_DEVICE_IDS) {
        snprintf(buf, n, "clGetDeviceIDsFrom%s%s", ver, flav);
    } else {
        char mid[64];
        snprintf(mid, sizeof mid, fn_suffix[which], ver);
        snprintf(buf, n, "cl%s%s", mid, flav);
    }
}

cl_platform_id h_platform(void)
{
    cl_uint n = 0;
    if (clGetPlatformIDs(0, NULL, &n) != CL_SUCCESS || n == 0)
        return NULL;
    cl_platform_id ids[16];
    if (n > 16)
        n = 16;
    clGetPlatformIDs(n, ids, NULL);
    for (cl_uint i = 0; i < n; i++) {
        char ext[8192] = {0};
        clGetPlatformInfo(ids[i], CL_PLATFORM_EXTENSIONS, sizeof ext - 1, ext, NULL);
        if (strstr(ext, "cl_khr_d3d11_sharing"))
            return ids[i];
    }
    return ids[0];
}

cl_device_id h_first_device(cl_platform_id p)
{
    cl_device_id d = NULL;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    return d;
}

int sharing_init(sharing *s, cl_platform_id platform, int api, int nv)
{
    memset(s, 0, sizeof *s);
    s->api = api;
    s->nv = nv;
    s->platform = platform;
    static const char *names[2][2] = {{"D3D10/KHR", "D3D10/NV"}, {"D3D11/KHR", "D3D11/NV"}};
    static const char *exts[2][2] = {{"cl_khr_d3d10_sharing", "cl_nv_d3d10_sharing"},
                                     {"cl_khr_d3d11_sharing", "cl_nv_d3d11_sharing"}};
    int v = api == API_D3D11;
    s->name = names[v][nv];
    s->ext = exts[v][nv];
    if (api == API_D3D10) {
        s->src_device = CL_D3D10_DEVICE_KHR;
        s->src_adapter = CL_D3D10_DXGI_ADAPTER_KHR;
        s->set_preferred = CL_PREFERRED_DEVICES_FOR_D3D10_KHR;
        s->set_all = CL_ALL_DEVICES_FOR_D3D10_KHR;
        s->ctx_device = CL_CONTEXT_D3D10_DEVICE_KHR;
        s->mem_resource = CL_MEM_D3D10_RESOURCE_KHR;
        s->image_subresource = CL_IMAGE_D3D10_SUBRESOURCE_KHR;
        s->cmd_acquire = CL_COMMAND_ACQUIRE_D3D10_OBJECTS_KHR;
        s->cmd_release = CL_COMMAND_RELEASE_D3D10_OBJECTS_KHR;
        s->err_device = CL_INVALID_D3D10_DEVICE_KHR;
        s->err_resource = CL_INVALID_D3D10_RESOURCE_KHR;
        s->err_already = CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR;
        s->err_not_acquired = CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR;
        s->prefer_shared = nv ? 0 : CL_CONTEXT_D3D10_PREFER_SHARED_RESOURCES_KHR;
    } else {
        s->src_device = CL_D3D11_DEVICE_KHR;
        s->src_adapter = CL_D3D11_DXGI_ADAPTER_KHR;
        s->set_preferred = CL_PREFERRED_DEVICES_FOR_D3D11_KHR;
        s->set_all = CL_ALL_DEVICES_FOR_D3D11_KHR;
        s->ctx_device = CL_CONTEXT_D3D11_DEVICE_KHR;
        s->mem_resource = CL_MEM_D3D11_RESOURCE_KHR;
        s->image_subresource = CL_IMAGE_D3D11_SUBRESOURCE_KHR;
        s->cmd_acquire = CL_COMMAND_ACQUIRE_D3D11_OBJECTS_KHR;
        s->cmd_release = CL_COMMAND_RELEASE_D3D11_OBJECTS_KHR;
        s->err_device = CL_INVALID_D3D11_DEVICE_KHR;
        s->err_resource = CL_INVALID_D3D11_RESOURCE_KHR;
        s->err_already = CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR;
        s->err_not_acquired = CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR;
        s->prefer_shared = nv ? 0 : CL_CONTEXT_D3D11_PREFER_SHARED_RESOURCES_KHR;
    }
    int found = 0;
    for (int i = 0; i < 6; i++) {
        char name[64];
        h_fn_name(name, sizeof name, api, nv, i);
        s->fn[i] = clGetExtensionFunctionAddressForPlatform(platform, name);
        found += s->fn[i] != NULL;
    }
    return found == 6;
}

int h_combo(int i, int *api, int *nv)
{
    static const int apis[4] = {API_D3D11, API_D3D11, API_D3D10, API_D3D10};
    static const char *names[4] = {"D3D11/KHR", "D3D11/NV", "D3D10/KHR", "D3D10/NV"};
    *api = apis[i];
    *nv = i & 1;
    const char *only = getenv("DXCL_CONFORMANCE_ONLY");
    return !only || !*only || strcmp(only, names[i]) == 0;
}

/* The typed calls. An entry point that was not found fails the call with CL_INVALID_OPERATION (the
 * lookup itself is checked by `discovery`). */
cl_int sh_get_device_ids(const sharing *s, cl_platform_id p, cl_uint source, void *object, cl_uint set,
                         cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
{
    if (!s->fn[FN_GET_DEVICE_IDS])
        return CL_INVALID_OPERATION;
    if (s->api == API_D3D10)
        return ((clGetDeviceIDsFromD3D10KHR_fn)s->fn[FN_GET_DEVICE_IDS])(p, source, object, set, num_entries,
                                                                         devices, num_devices);
    return ((clGetDeviceIDsFromD3D11KHR_fn)s->fn[FN_GET_DEVICE_IDS])(p, source, object, set, num_entries,
                                                                     devices, num_devices);
}

static cl_mem missing(cl_int *err)
{
    if (err)
        *err = CL_INVALID_OPERATION;
    return NULL;
}

cl_mem sh_create_buffer(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, cl_int *err)
{
    if (!s->fn[FN_CREATE_BUFFER])
        return missing(err);
    if (s->api == API_D3D10)
        return ((clCreateFromD3D10BufferKHR_fn)s->fn[FN_CREATE_BUFFER])(ctx, flags, (ID3D10Buffer *)res, err);
    return ((clCreateFromD3D11BufferKHR_fn)s->fn[FN_CREATE_BUFFER])(ctx, flags, (ID3D11Buffer *)res, err);
}

cl_mem sh_create_tex2d(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, UINT sub,
                       cl_int *err)
{
    if (!s->fn[FN_CREATE_TEX2D])
        return missing(err);
    if (s->api == API_D3D10)
        return ((clCreateFromD3D10Texture2DKHR_fn)s->fn[FN_CREATE_TEX2D])(ctx, flags, (ID3D10Texture2D *)res,
                                                                          sub, err);
    return ((clCreateFromD3D11Texture2DKHR_fn)s->fn[FN_CREATE_TEX2D])(ctx, flags, (ID3D11Texture2D *)res, sub,
                                                                      err);
}

cl_mem sh_create_tex3d(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, UINT sub,
                       cl_int *err)
{
    if (!s->fn[FN_CREATE_TEX3D])
        return missing(err);
    if (s->api == API_D3D10)
        return ((clCreateFromD3D10Texture3DKHR_fn)s->fn[FN_CREATE_TEX3D])(ctx, flags, (ID3D10Texture3D *)res,
                                                                          sub, err);
    return ((clCreateFromD3D11Texture3DKHR_fn)s->fn[FN_CREATE_TEX3D])(ctx, flags, (ID3D11Texture3D *)res, sub,
                                                                      err);
}

cl_int sh_acquire(const sharing *s, cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint nwait,
                  const cl_event *wait, cl_event *ev)
{
    if (!s->fn[FN_ACQUIRE])
        return CL_INVALID_OPERATION;
    if (s->api == API_D3D10)
        return ((clEnqueueAcquireD3D10ObjectsKHR_fn)s->fn[FN_ACQUIRE])(q, n, mems, nwait, wait, ev);
    return ((clEnqueueAcquireD3D11ObjectsKHR_fn)s->fn[FN_ACQUIRE])(q, n, mems, nwait, wait, ev);
}

/* The NV release takes a non-const mem list; the pointer is passed as the SDK's NV prototype has it. */
typedef cl_int(CL_API_CALL *release_nv_fn)(cl_command_queue, cl_uint, cl_mem *, cl_uint, const cl_event *,
                                           cl_event *);

cl_int sh_release(const sharing *s, cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint nwait,
                  const cl_event *wait, cl_event *ev)
{
    if (!s->fn[FN_RELEASE])
        return CL_INVALID_OPERATION;
    if (s->nv)
        return ((release_nv_fn)s->fn[FN_RELEASE])(q, n, (cl_mem *)mems, nwait, wait, ev);
    if (s->api == API_D3D10)
        return ((clEnqueueReleaseD3D10ObjectsKHR_fn)s->fn[FN_RELEASE])(q, n, mems, nwait, wait, ev);
    return ((clEnqueueReleaseD3D11ObjectsKHR_fn)s->fn[FN_RELEASE])(q, n, mems, nwait, wait, ev);
}

/* ---------------------------------------------------------------------------------------------- */
/* Direct3D                                                                                        */

/* Weak, so that a runtime without the D3D10 face yet still runs the D3D11 half of the suite; the
 * missing entry point then fails every D3D10 pair instead of the whole link. */
#ifndef _WIN32
#pragma weak D3D10CreateDevice
#endif

int gfx_open(gfx *g, int api)
{
    memset(g, 0, sizeof *g);
    g->api = api;
    HRESULT hr;
#ifndef _WIN32 /* Windows: d3d10.dll's import, never null */
    if (api == API_D3D10 && !D3D10CreateDevice) {
        h_fail(__FILE__, __LINE__, "D3D10CreateDevice is not exported by the runtime");
        return 0;
    } else
#endif
    if (api == API_D3D10) {
        hr = D3D10CreateDevice(NULL, D3D10_DRIVER_TYPE_HARDWARE, NULL, 0, D3D10_SDK_VERSION, &g->d10);
        g->device = g->d10;
    } else {
        hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &g->d11, NULL,
                               &g->ctx11);
        g->device = g->d11;
    }
    if (FAILED(hr) || !g->device) {
        h_fail(__FILE__, __LINE__, "D3D%dCreateDevice = 0x%08x", api, (unsigned)hr);
        return 0;
    }
    IDXGIDevice *dxgi = NULL;
    hr = IUnknown_QueryInterface((IUnknown *)g->device, &IID_IDXGIDevice, (void **)&dxgi);
    if (SUCCEEDED(hr) && dxgi) {
        IDXGIDevice_GetAdapter(dxgi, &g->adapter);
        IDXGIDevice_Release(dxgi);
    }
    if (!g->adapter)
        h_fail(__FILE__, __LINE__, "D3D%d device: no IDXGIDevice / adapter (0x%08x)", api, (unsigned)hr);
    return 1;
}

void gfx_close(gfx *g)
{
    if (g->adapter)
        IDXGIAdapter_Release(g->adapter);
    if (g->ctx11)
        ID3D11DeviceContext_Release(g->ctx11);
    if (g->d11)
        ID3D11Device_Release(g->d11);
    if (g->d10)
        ID3D10Device_Release(g->d10);
    memset(g, 0, sizeof *g);
}

ULONG com_refcount(void *unknown)
{
    IUnknown_AddRef((IUnknown *)unknown);
    return IUnknown_Release((IUnknown *)unknown);
}

ULONG com_refcount_within(void *unknown, ULONG want, int ms)
{
    for (int i = 0;; i++) {
        ULONG n = com_refcount(unknown);
        if (n == want || i >= ms)
            return n;
        usleep(1000);
    }
}

ULONG com_release(void *unknown) { return IUnknown_Release((IUnknown *)unknown); }

static UINT mip_dim(UINT v, UINT mip) { return (v >> mip) ? (v >> mip) : 1; }

static UINT full_chain(UINT w, UINT h, UINT d)
{
    UINT m = w > h ? w : h;
    m = m > d ? m : d;
    UINT n = 1;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

UINT res_subresources(const res *r)
{
    if (r->kind == RES_BUFFER)
        return 1;
    return r->mips * (r->kind == RES_TEX3D ? 1 : r->array);
}

void res_sub_dims(const res *r, UINT sub, UINT *w, UINT *h, UINT *d)
{
    if (r->kind == RES_BUFFER) {
        *w = r->width;
        *h = *d = 1;
        return;
    }
    UINT mip = sub % r->mips;
    *w = mip_dim(r->width, mip);
    *h = r->kind == RES_TEX1D ? 1 : mip_dim(r->height, mip);
    *d = r->kind == RES_TEX3D ? mip_dim(r->depth, mip) : 1;
}

static unsigned texel_bytes_dxgi(DXGI_FORMAT f)
{
    const fmt *t = fmt_find(f);
    if (t)
        return fmt_texel_bytes(t);
    return 4; /* formats outside the table are only created, never read, by the suite */
}

size_t res_sub_bytes(const res *r, UINT sub)
{
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    if (r->kind == RES_BUFFER)
        return w;
    return (size_t)w * h * d * texel_bytes_dxgi(r->format);
}

/* D3D1x_SUBRESOURCE_DATA for every subresource of tightly packed `init`. Both versions' structs have
 * the same members (pSysMem, SysMemPitch, SysMemSlicePitch); D3D11's type is used for both. */
static D3D11_SUBRESOURCE_DATA *init_data(const res *r, const void *init)
{
    if (!init)
        return NULL;
    UINT n = res_subresources(r);
    D3D11_SUBRESOURCE_DATA *sd = calloc(n, sizeof *sd);
    const unsigned char *p = init;
    for (UINT i = 0; i < n; i++) {
        UINT w, h, d;
        res_sub_dims(r, i, &w, &h, &d);
        size_t row = r->kind == RES_BUFFER ? w : (size_t)w * texel_bytes_dxgi(r->format);
        sd[i].pSysMem = p;
        sd[i].SysMemPitch = (UINT)row;
        sd[i].SysMemSlicePitch = (UINT)(row * h);
        p += res_sub_bytes(r, i);
    }
    return sd;
}

HRESULT gfx_buffer(gfx *g, res *r, UINT size, UINT usage, UINT bind, UINT cpu, UINT misc, const void *init)
{
    memset(r, 0, sizeof *r);
    r->kind = RES_BUFFER;
    r->api = g->api;
    r->width = size;
    r->height = r->depth = r->mips = r->array = 1;
    r->usage = usage;
    r->bind = bind;
    r->cpu = cpu;
    r->misc = misc;
    D3D11_SUBRESOURCE_DATA *sd = init_data(r, init);
    HRESULT hr;
    if (g->api == API_D3D10) {
        D3D10_BUFFER_DESC d = {size, (D3D10_USAGE)usage, bind, cpu, misc};
        hr = ID3D10Device_CreateBuffer(g->d10, &d, (const D3D10_SUBRESOURCE_DATA *)sd, (ID3D10Buffer **)&r->p);
    } else {
        D3D11_BUFFER_DESC d = {size, (D3D11_USAGE)usage, bind, cpu, misc, 0};
        hr = ID3D11Device_CreateBuffer(g->d11, &d, sd, (ID3D11Buffer **)&r->p);
    }
    free(sd);
    if (FAILED(hr))
        r->p = NULL;
    return hr;
}

HRESULT gfx_tex1d(gfx *g, res *r, UINT w, DXGI_FORMAT f, UINT usage, UINT bind)
{
    memset(r, 0, sizeof *r);
    r->kind = RES_TEX1D;
    r->api = g->api;
    r->width = w;
    r->height = r->depth = r->mips = r->array = r->samples = 1;
    r->format = f;
    r->usage = usage;
    r->bind = bind;
    HRESULT hr;
    if (g->api == API_D3D10) {
        D3D10_TEXTURE1D_DESC d = {w, 1, 1, f, (D3D10_USAGE)usage, bind, 0, 0};
        hr = ID3D10Device_CreateTexture1D(g->d10, &d, NULL, (ID3D10Texture1D **)&r->p);
    } else {
        D3D11_TEXTURE1D_DESC d = {w, 1, 1, f, (D3D11_USAGE)usage, bind, 0, 0};
        hr = ID3D11Device_CreateTexture1D(g->d11, &d, NULL, (ID3D11Texture1D **)&r->p);
    }
    if (FAILED(hr))
        r->p = NULL;
    return hr;
}

HRESULT gfx_tex2d(gfx *g, res *r, UINT w, UINT h, UINT mips, UINT array, DXGI_FORMAT f, UINT samples,
                  UINT usage, UINT bind, UINT cpu, UINT misc, const void *init)
{
    memset(r, 0, sizeof *r);
    r->kind = RES_TEX2D;
    r->api = g->api;
    r->width = w;
    r->height = h;
    r->depth = 1;
    r->mips = mips ? mips : full_chain(w, h, 1);
    r->array = array;
    r->samples = samples;
    r->format = f;
    r->usage = usage;
    r->bind = bind;
    r->cpu = cpu;
    r->misc = misc;
    D3D11_SUBRESOURCE_DATA *sd = init_data(r, init);
    HRESULT hr;
    if (g->api == API_D3D10) {
        D3D10_TEXTURE2D_DESC d = {w, h, mips, array, f, {samples, 0}, (D3D10_USAGE)usage, bind, cpu, misc};
        hr = ID3D10Device_CreateTexture2D(g->d10, &d, (const D3D10_SUBRESOURCE_DATA *)sd,
                                          (ID3D10Texture2D **)&r->p);
    } else {
        D3D11_TEXTURE2D_DESC d = {w, h, mips, array, f, {samples, 0}, (D3D11_USAGE)usage, bind, cpu, misc};
        hr = ID3D11Device_CreateTexture2D(g->d11, &d, sd, (ID3D11Texture2D **)&r->p);
    }
    free(sd);
    if (FAILED(hr))
        r->p = NULL;
    return hr;
}

int gfx_supports_tex3d(gfx *g, DXGI_FORMAT f)
{
    UINT support = 0;
    HRESULT hr = g->api == API_D3D10 ? ID3D10Device_CheckFormatSupport(g->d10, f, &support)
                                     : ID3D11Device_CheckFormatSupport(g->d11, f, &support);
    return SUCCEEDED(hr) && (support & D3D11_FORMAT_SUPPORT_TEXTURE3D);
}

HRESULT gfx_tex3d(gfx *g, res *r, UINT w, UINT h, UINT dd, UINT mips, DXGI_FORMAT f, UINT usage, UINT bind,
                  UINT cpu, UINT misc, const void *init)
{
    memset(r, 0, sizeof *r);
    r->kind = RES_TEX3D;
    r->api = g->api;
    r->width = w;
    r->height = h;
    r->depth = dd;
    r->mips = mips ? mips : full_chain(w, h, dd);
    r->array = 1;
    r->samples = 1;
    r->format = f;
    r->usage = usage;
    r->bind = bind;
    r->cpu = cpu;
    r->misc = misc;
    D3D11_SUBRESOURCE_DATA *sd = init_data(r, init);
    HRESULT hr;
    if (g->api == API_D3D10) {
        D3D10_TEXTURE3D_DESC d = {w, h, dd, mips, f, (D3D10_USAGE)usage, bind, cpu, misc};
        hr = ID3D10Device_CreateTexture3D(g->d10, &d, (const D3D10_SUBRESOURCE_DATA *)sd,
                                          (ID3D10Texture3D **)&r->p);
    } else {
        D3D11_TEXTURE3D_DESC d = {w, h, dd, mips, f, (D3D11_USAGE)usage, bind, cpu, misc};
        hr = ID3D11Device_CreateTexture3D(g->d11, &d, sd, (ID3D11Texture3D **)&r->p);
    }
    free(sd);
    if (FAILED(hr))
        r->p = NULL;
    return hr;
}

void res_free(res *r)
{
    if (r->p)
        IUnknown_Release((IUnknown *)r->p);
    r->p = NULL;
}

/* Maps subresource `sub` of `r` (any kind, either version). Fills row and depth pitch. */
static HRESULT map_sub(gfx *g, res *r, UINT sub, int write, void **data, UINT *row, UINT *depth)
{
    HRESULT hr;
    *row = *depth = 0;
    *data = NULL;
    if (g->api == API_D3D11) {
        D3D11_MAP type = write ? (r->usage == D3D11_USAGE_DYNAMIC ? D3D11_MAP_WRITE_DISCARD : D3D11_MAP_WRITE)
                               : D3D11_MAP_READ;
        D3D11_MAPPED_SUBRESOURCE m = {0};
        hr = ID3D11DeviceContext_Map(g->ctx11, (ID3D11Resource *)r->p, sub, type, 0, &m);
        *data = m.pData;
        *row = m.RowPitch;
        *depth = m.DepthPitch;
        return hr;
    }
    D3D10_MAP type = write ? (r->usage == D3D10_USAGE_DYNAMIC ? D3D10_MAP_WRITE_DISCARD : D3D10_MAP_WRITE)
                           : D3D10_MAP_READ;
    switch (r->kind) {
    case RES_BUFFER:
        return ID3D10Buffer_Map((ID3D10Buffer *)r->p, type, 0, data);
    case RES_TEX1D:
        return ID3D10Texture1D_Map((ID3D10Texture1D *)r->p, sub, type, 0, data);
    case RES_TEX2D: {
        D3D10_MAPPED_TEXTURE2D m = {0};
        hr = ID3D10Texture2D_Map((ID3D10Texture2D *)r->p, sub, type, 0, &m);
        *data = m.pData;
        *row = m.RowPitch;
        return hr;
    }
    case RES_TEX3D: {
        D3D10_MAPPED_TEXTURE3D m = {0};
        hr = ID3D10Texture3D_Map((ID3D10Texture3D *)r->p, sub, type, 0, &m);
        *data = m.pData;
        *row = m.RowPitch;
        *depth = m.DepthPitch;
        return hr;
    }
    }
    return E_FAIL;
}

static void unmap_sub(gfx *g, res *r, UINT sub)
{
    if (g->api == API_D3D11) {
        ID3D11DeviceContext_Unmap(g->ctx11, (ID3D11Resource *)r->p, sub);
        return;
    }
    switch (r->kind) {
    case RES_BUFFER:
        ID3D10Buffer_Unmap((ID3D10Buffer *)r->p);
        break;
    case RES_TEX1D:
        ID3D10Texture1D_Unmap((ID3D10Texture1D *)r->p, sub);
        break;
    case RES_TEX2D:
        ID3D10Texture2D_Unmap((ID3D10Texture2D *)r->p, sub);
        break;
    case RES_TEX3D:
        ID3D10Texture3D_Unmap((ID3D10Texture3D *)r->p, sub);
        break;
    }
}

/* Copies between mapped memory (with pitches) and tightly packed data. */
static void copy_rows(const res *r, UINT sub, unsigned char *mapped, UINT row_pitch, UINT depth_pitch,
                      unsigned char *packed, int to_mapped)
{
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    size_t row = r->kind == RES_BUFFER ? w : (size_t)w * texel_bytes_dxgi(r->format);
    if (r->kind == RES_BUFFER || r->kind == RES_TEX1D) {
        h = d = 1;
        row_pitch = (UINT)row;
    }
    if (!row_pitch)
        row_pitch = (UINT)row;
    if (!depth_pitch)
        depth_pitch = row_pitch * h;
    for (UINT z = 0; z < d; z++)
        for (UINT y = 0; y < h; y++) {
            unsigned char *m = mapped + (size_t)z * depth_pitch + (size_t)y * row_pitch;
            unsigned char *p = packed + ((size_t)z * h + y) * row;
            if (to_mapped)
                memcpy(m, p, row);
            else
                memcpy(p, m, row);
        }
}

int gfx_write(gfx *g, res *r, UINT sub, const void *data)
{
    if (r->usage == D3D11_USAGE_DYNAMIC || r->usage == D3D11_USAGE_STAGING) {
        void *m;
        UINT rp, dp;
        HRESULT hr = map_sub(g, r, sub, 1, &m, &rp, &dp);
        if (FAILED(hr) || !m) {
            h_fail(__FILE__, __LINE__, "Map for write = 0x%08x", (unsigned)hr);
            return 0;
        }
        copy_rows(r, sub, m, rp, dp, (unsigned char *)data, 1);
        unmap_sub(g, r, sub);
        return 1;
    }
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    UINT row = r->kind == RES_BUFFER ? w : w * texel_bytes_dxgi(r->format);
    if (g->api == API_D3D11)
        ID3D11DeviceContext_UpdateSubresource(g->ctx11, (ID3D11Resource *)r->p, sub, NULL, data, row, row * h);
    else
        ID3D10Device_UpdateSubresource(g->d10, (ID3D10Resource *)r->p, sub, NULL, data, row, row * h);
    return 1;
}

int gfx_read(gfx *g, res *r, UINT sub, void *out)
{
    if (r->usage == D3D11_USAGE_STAGING && (r->cpu & D3D11_CPU_ACCESS_READ)) {
        void *m;
        UINT rp, dp;
        HRESULT hr = map_sub(g, r, sub, 0, &m, &rp, &dp);
        if (FAILED(hr) || !m) {
            h_fail(__FILE__, __LINE__, "Map for read = 0x%08x", (unsigned)hr);
            return 0;
        }
        copy_rows(r, sub, m, rp, dp, out, 0);
        unmap_sub(g, r, sub);
        return 1;
    }
    /* A staging resource the size of the subresource, one mip, one slice. */
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    res st;
    HRESULT hr;
    UINT cpu = D3D11_CPU_ACCESS_READ;
    switch (r->kind) {
    case RES_BUFFER:
        hr = gfx_buffer(g, &st, w, D3D11_USAGE_STAGING, 0, cpu, 0, NULL);
        break;
    case RES_TEX2D:
        hr = gfx_tex2d(g, &st, w, h, 1, 1, r->format, 1, D3D11_USAGE_STAGING, 0, cpu, 0, NULL);
        break;
    case RES_TEX3D:
        hr = gfx_tex3d(g, &st, w, h, d, 1, r->format, D3D11_USAGE_STAGING, 0, cpu, 0, NULL);
        break;
    default:
        hr = E_FAIL;
        break;
    }
    if (FAILED(hr)) {
        h_fail(__FILE__, __LINE__, "staging resource for read-back = 0x%08x", (unsigned)hr);
        return 0;
    }
    if (g->api == API_D3D11)
        ID3D11DeviceContext_CopySubresourceRegion(g->ctx11, (ID3D11Resource *)st.p, 0, 0, 0, 0,
                                                  (ID3D11Resource *)r->p, sub, NULL);
    else
        ID3D10Device_CopySubresourceRegion(g->d10, (ID3D10Resource *)st.p, 0, 0, 0, 0, (ID3D10Resource *)r->p,
                                           sub, NULL);
    int ok = gfx_read(g, &st, 0, out);
    res_free(&st);
    return ok;
}

int gfx_finish(gfx *g)
{
    BOOL done = FALSE;
    HRESULT hr;
    int spins = 0;
    if (g->api == API_D3D11) {
        D3D11_QUERY_DESC qd = {D3D11_QUERY_EVENT, 0};
        ID3D11Query *q = NULL;
        hr = ID3D11Device_CreateQuery(g->d11, &qd, &q);
        if (FAILED(hr) || !q)
            return 0;
        ID3D11DeviceContext_End(g->ctx11, (ID3D11Asynchronous *)q);
        ID3D11DeviceContext_Flush(g->ctx11);
        while ((hr = ID3D11DeviceContext_GetData(g->ctx11, (ID3D11Asynchronous *)q, &done, sizeof done, 0)) ==
                   S_FALSE &&
               spins++ < 1000000)
            usleep(100);
        ID3D11Query_Release(q);
    } else {
        D3D10_QUERY_DESC qd = {D3D10_QUERY_EVENT, 0};
        ID3D10Query *q = NULL;
        hr = ID3D10Device_CreateQuery(g->d10, &qd, &q);
        if (FAILED(hr) || !q)
            return 0;
        ID3D10Query_End(q);
        ID3D10Device_Flush(g->d10);
        while ((hr = ID3D10Query_GetData(q, &done, sizeof done, 0)) == S_FALSE && spins++ < 1000000)
            usleep(100);
        ID3D10Query_Release(q);
    }
    return hr == S_OK && done;
}

/* ---------------------------------------------------------------------------------------------- */
/* A COM object that is no Direct3D object                                                         */

static HRESULT STDMETHODCALLTYPE fake_qi(fake_com *This, REFIID riid, void **out)
{
    if (!out)
        return E_POINTER;
    if (memcmp(riid, &IID_IUnknown, sizeof(GUID)) == 0) {
        This->refs++;
        *out = This;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE fake_addref(fake_com *This) { return ++This->refs; }
static ULONG STDMETHODCALLTYPE fake_release(fake_com *This) { return --This->refs; }
static fake_com *fake_last;
static HRESULT STDMETHODCALLTYPE fake_other(void)
{
    /* Reached only through a vtable slot past IUnknown's: the caller treated the object as something
     * it never said it was. */
    if (fake_last)
        fake_last->misused = 1;
    return E_FAIL;
}

static void *fake_vtbl[64];

void fake_com_init(fake_com *f)
{
    fake_vtbl[0] = (void *)fake_qi;
    fake_vtbl[1] = (void *)fake_addref;
    fake_vtbl[2] = (void *)fake_release;
    for (int i = 3; i < 64; i++)
        fake_vtbl[i] = (void *)fake_other;
    f->lpVtbl = fake_vtbl;
    f->refs = 1;
    f->misused = 0;
    fake_last = f;
}

static fake_faces *faces_last;
static HRESULT STDMETHODCALLTYPE faces_qi(void *This, REFIID riid, void **out)
{
    fake_faces *f = faces_last;
    (void)This;
    if (!out)
        return E_POINTER;
    if (memcmp(riid, &IID_IUnknown, sizeof(GUID)) == 0 || memcmp(riid, f->iid, sizeof(GUID)) == 0) {
        f->refs++;
        *out = memcmp(riid, &IID_IUnknown, sizeof(GUID)) == 0 ? (void *)&f->face[0] : (void *)&f->face[1];
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE faces_addref(void *This) { (void)This; return ++faces_last->refs; }
static ULONG STDMETHODCALLTYPE faces_release(void *This) { (void)This; return --faces_last->refs; }
static HRESULT STDMETHODCALLTYPE faces_other(void)
{
    if (faces_last)
        faces_last->misused = 1;
    return E_FAIL;
}
static void *faces_vtbl[64];

void fake_faces_init(fake_faces *f, const GUID *iid)
{
    faces_vtbl[0] = (void *)faces_qi;
    faces_vtbl[1] = (void *)faces_addref;
    faces_vtbl[2] = (void *)faces_release;
    for (int i = 3; i < 64; i++)
        faces_vtbl[i] = (void *)faces_other;
    f->face[0] = f->face[1] = faces_vtbl;
    f->iid = iid;
    f->refs = 1;
    f->misused = 0;
    faces_last = f;
}

/* ---------------------------------------------------------------------------------------------- */
/* Formats                                                                                         */

#define F(d, o, t, ch, b, c, k) {DXGI_FORMAT_##d, #d, o, t, ch, b, c, k}
const fmt fmt_table[37] = {
    F(R32G32B32A32_FLOAT, CL_RGBA, CL_FLOAT, 4, 32, FC_FLOAT, 0),
    F(R32G32B32A32_UINT, CL_RGBA, CL_UNSIGNED_INT32, 4, 32, FC_UINT, 0),
    F(R32G32B32A32_SINT, CL_RGBA, CL_SIGNED_INT32, 4, 32, FC_SINT, 0),
    F(R16G16B16A16_FLOAT, CL_RGBA, CL_HALF_FLOAT, 4, 16, FC_FLOAT, 0),
    F(R16G16B16A16_UNORM, CL_RGBA, CL_UNORM_INT16, 4, 16, FC_UNORM, 0),
    F(R16G16B16A16_UINT, CL_RGBA, CL_UNSIGNED_INT16, 4, 16, FC_UINT, 0),
    F(R16G16B16A16_SNORM, CL_RGBA, CL_SNORM_INT16, 4, 16, FC_SNORM, 0),
    F(R16G16B16A16_SINT, CL_RGBA, CL_SIGNED_INT16, 4, 16, FC_SINT, 0),
    F(R8G8B8A8_UNORM, CL_RGBA, CL_UNORM_INT8, 4, 8, FC_UNORM, 0),
    F(R8G8B8A8_UINT, CL_RGBA, CL_UNSIGNED_INT8, 4, 8, FC_UINT, 0),
    F(R8G8B8A8_SNORM, CL_RGBA, CL_SNORM_INT8, 4, 8, FC_SNORM, 0),
    F(R8G8B8A8_SINT, CL_RGBA, CL_SIGNED_INT8, 4, 8, FC_SINT, 0),
    F(R32G32_FLOAT, CL_RG, CL_FLOAT, 2, 32, FC_FLOAT, 0),
    F(R32G32_UINT, CL_RG, CL_UNSIGNED_INT32, 2, 32, FC_UINT, 0),
    F(R32G32_SINT, CL_RG, CL_SIGNED_INT32, 2, 32, FC_SINT, 0),
    F(R16G16_FLOAT, CL_RG, CL_HALF_FLOAT, 2, 16, FC_FLOAT, 0),
    F(R16G16_UNORM, CL_RG, CL_UNORM_INT16, 2, 16, FC_UNORM, 0),
    F(R16G16_UINT, CL_RG, CL_UNSIGNED_INT16, 2, 16, FC_UINT, 0),
    F(R16G16_SNORM, CL_RG, CL_SNORM_INT16, 2, 16, FC_SNORM, 0),
    F(R16G16_SINT, CL_RG, CL_SIGNED_INT16, 2, 16, FC_SINT, 0),
    F(R8G8_UNORM, CL_RG, CL_UNORM_INT8, 2, 8, FC_UNORM, 0),
    F(R8G8_UINT, CL_RG, CL_UNSIGNED_INT8, 2, 8, FC_UINT, 0),
    F(R8G8_SNORM, CL_RG, CL_SNORM_INT8, 2, 8, FC_SNORM, 0),
    F(R8G8_SINT, CL_RG, CL_SIGNED_INT8, 2, 8, FC_SINT, 0),
    F(R32_FLOAT, CL_R, CL_FLOAT, 1, 32, FC_FLOAT, 0),
    F(R32_UINT, CL_R, CL_UNSIGNED_INT32, 1, 32, FC_UINT, 0),
    F(R32_SINT, CL_R, CL_SIGNED_INT32, 1, 32, FC_SINT, 0),
    F(R16_FLOAT, CL_R, CL_HALF_FLOAT, 1, 16, FC_FLOAT, 0),
    F(R16_UNORM, CL_R, CL_UNORM_INT16, 1, 16, FC_UNORM, 0),
    F(R16_UINT, CL_R, CL_UNSIGNED_INT16, 1, 16, FC_UINT, 0),
    F(R16_SNORM, CL_R, CL_SNORM_INT16, 1, 16, FC_SNORM, 0),
    F(R16_SINT, CL_R, CL_SIGNED_INT16, 1, 16, FC_SINT, 0),
    F(R8_UNORM, CL_R, CL_UNORM_INT8, 1, 8, FC_UNORM, 0),
    F(R8_UINT, CL_R, CL_UNSIGNED_INT8, 1, 8, FC_UINT, 0),
    F(R8_SNORM, CL_R, CL_SNORM_INT8, 1, 8, FC_SNORM, 0),
    F(R8_SINT, CL_R, CL_SIGNED_INT8, 1, 8, FC_SINT, 0),
    F(B8G8R8A8_UNORM, CL_BGRA, CL_UNORM_INT8, 4, 8, FC_UNORM, 1),
};
#undef F

unsigned fmt_texel_bytes(const fmt *f) { return f->channels * f->bits / 8; }

int fmt_selected(const fmt *f)
{
    /* One per (channel order, bits per channel); the comment on each says what it adds. */
    static const DXGI_FORMAT reduced[] = {
        DXGI_FORMAT_R32G32B32A32_FLOAT, /* 16-byte texels, float kernels */
        DXGI_FORMAT_R16G16B16A16_SINT,  /* 8-byte texels, int kernels */
        DXGI_FORMAT_R8G8B8A8_SNORM,     /* issue 13's 8-bit SNORM with mips and slices */
        DXGI_FORMAT_R32G32_UINT,        /* CL_RG: PoCL lacks it (the unsupported path), rusticl has it */
        DXGI_FORMAT_R16G16_FLOAT,       /* CL_RG, half */
        DXGI_FORMAT_R8G8_SNORM,         /* CL_RG, 2-byte texels */
        DXGI_FORMAT_R32_UINT,           /* CL_R, uint kernels */
        DXGI_FORMAT_R16_UNORM,          /* CL_R, 16-bit normalized */
        DXGI_FORMAT_R8_SINT,            /* 1-byte texels */
        DXGI_FORMAT_B8G8R8A8_UNORM,     /* CL_BGRA: KHR only, NV must refuse it */
    };
    if (!h_reduced())
        return 1;
    for (size_t i = 0; i < sizeof reduced / sizeof reduced[0]; i++)
        if (reduced[i] == f->dxgi)
            return 1;
    return 0;
}

const fmt *fmt_find(DXGI_FORMAT f)
{
    for (size_t i = 0; i < sizeof fmt_table / sizeof fmt_table[0]; i++)
        if (fmt_table[i].dxgi == f)
            return &fmt_table[i];
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* OpenCL helpers                                                                                  */

cl_context h_context(const sharing *s, gfx *g, int user_sync, cl_device_id *dev_out, cl_int *err)
{
    cl_device_id dev = NULL;
    cl_uint n = 0;
    cl_int e = sh_get_device_ids(s, s->platform, s->src_device, g->device, s->set_preferred, 1, &dev, &n);
    if (e != CL_SUCCESS || !dev) {
        h_fail(__FILE__, __LINE__, "%s: clGetDeviceIDsFrom = %s", s->name, cl_err_name(e));
        if (err)
            *err = e;
        return NULL;
    }
    cl_context_properties props[7] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, s->ctx_device,
                                      (cl_context_properties)g->device, 0, 0, 0};
    if (user_sync >= 0) {
        props[4] = CL_CONTEXT_INTEROP_USER_SYNC;
        props[5] = user_sync ? CL_TRUE : CL_FALSE;
    }
    cl_context ctx = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    if (err)
        *err = e;
    if (!ctx)
        h_fail(__FILE__, __LINE__, "%s: clCreateContext = %s", s->name, cl_err_name(e));
    if (dev_out)
        *dev_out = dev;
    return ctx;
}

cl_command_queue h_queue(cl_context ctx, cl_device_id dev)
{
    cl_int e;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
    if (!q)
        h_fail(__FILE__, __LINE__, "clCreateCommandQueueWithProperties = %s", cl_err_name(e));
    return q;
}

int h_has_ext(cl_device_id dev, const char *ext)
{
    char buf[8192] = {0};
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof buf - 1, buf, NULL);
    size_t n = strlen(ext);
    for (const char *p = buf; (p = strstr(p, ext)) != NULL; p += n)
        if ((p == buf || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* Kernels. The fill kernels write, at texel (x, y, z) channel c, the value
 *   k = ((x * 3 + y * 5 + z * 7 + c) * mul) % mod + bias
 * (as float times `scale`, as int, or as uint); texel_encode() computes the same on the host. */
static const char kernel_source[] =
    "kernel void inc_bytes(global uchar *b, uint n)\n"
    "{ size_t i = get_global_id(0); if (i < n) b[i] = (uchar)(b[i] + 1); }\n"
    "kernel void fill_last(uint n, uchar v, global uchar *b)\n"
    "{ size_t i = get_global_id(0); if (i < n) b[i] = v; }\n"
    "kernel void slow_fill(global uint *b, uint seed, uint spins)\n"
    "{ size_t i = get_global_id(0); uint v = seed ^ (uint)i;\n"
    "  for (uint k = 0; k < spins; k++) v = v * 1664525u + 1013904223u;\n"
    "  b[i] = v; }\n"
    "#define K(c) ((((x * 3 + y * 5 + z * 7 + (c)) * mul) % mod) + bias)\n"
    "kernel void fill2d_f(write_only image2d_t img, int mod, int bias, int mul, float scale)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = 0;\n"
    "  write_imagef(img, (int2)(x, y), (float4)((float)K(0), (float)K(1), (float)K(2), (float)K(3)) * scale); }\n"
    "kernel void fill2d_i(write_only image2d_t img, int mod, int bias, int mul)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = 0;\n"
    "  write_imagei(img, (int2)(x, y), (int4)(K(0), K(1), K(2), K(3))); }\n"
    "kernel void fill2d_ui(write_only image2d_t img, int mod, uint bias, int mul)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = 0;\n"
    "  write_imageui(img, (int2)(x, y), (uint4)(K(0), K(1), K(2), K(3))); }\n"
    "constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n"
    "kernel void read2d_f(read_only image2d_t img, global float4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * get_global_size(0) + x] = read_imagef(img, nearest, (int2)(x, y)); }\n"
    "kernel void read2d_i(read_only image2d_t img, global int4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * get_global_size(0) + x] = read_imagei(img, nearest, (int2)(x, y)); }\n"
    "kernel void read2d_ui(read_only image2d_t img, global uint4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1);\n"
    "  out[y * get_global_size(0) + x] = read_imageui(img, nearest, (int2)(x, y)); }\n"
    "kernel void read3d_f(read_only image3d_t img, global float4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  out[(z * get_global_size(1) + y) * get_global_size(0) + x] =\n"
    "      read_imagef(img, nearest, (int4)(x, y, z, 0)); }\n"
    "kernel void read3d_i(read_only image3d_t img, global int4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  out[(z * get_global_size(1) + y) * get_global_size(0) + x] =\n"
    "      read_imagei(img, nearest, (int4)(x, y, z, 0)); }\n"
    "kernel void read3d_ui(read_only image3d_t img, global uint4 *out)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  out[(z * get_global_size(1) + y) * get_global_size(0) + x] =\n"
    "      read_imageui(img, nearest, (int4)(x, y, z, 0)); }\n"
    "#ifdef cl_khr_3d_image_writes\n"
    "#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable\n"
    "kernel void fill3d_f(write_only image3d_t img, int mod, int bias, int mul, float scale)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  write_imagef(img, (int4)(x, y, z, 0), (float4)((float)K(0), (float)K(1), (float)K(2), (float)K(3)) * scale); }\n"
    "kernel void fill3d_i(write_only image3d_t img, int mod, int bias, int mul)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  write_imagei(img, (int4)(x, y, z, 0), (int4)(K(0), K(1), K(2), K(3))); }\n"
    "kernel void fill3d_ui(write_only image3d_t img, int mod, uint bias, int mul)\n"
    "{ int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  write_imageui(img, (int4)(x, y, z, 0), (uint4)(K(0), K(1), K(2), K(3))); }\n"
    "#endif\n";

/* Built once per process; later contexts get the binary, so PoCL compiles the source once. */
static unsigned char *cached_binary;
static size_t cached_binary_size;

cl_program h_program(cl_context ctx, cl_device_id dev)
{
    cl_int e;
    cl_program p;
    if (cached_binary) {
        const unsigned char *bin = cached_binary;
        cl_int status;
        p = clCreateProgramWithBinary(ctx, 1, &dev, &cached_binary_size, &bin, &status, &e);
    } else {
        const char *src = kernel_source;
        p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    }
    if (!p) {
        h_fail(__FILE__, __LINE__, "clCreateProgram = %s", cl_err_name(e));
        return NULL;
    }
    e = clBuildProgram(p, 1, &dev, "", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = {0};
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        h_fail(__FILE__, __LINE__, "clBuildProgram = %s\n%s", cl_err_name(e), log);
        clReleaseProgram(p);
        return NULL;
    }
    if (!cached_binary) {
        size_t size = 0;
        if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) == CL_SUCCESS && size) {
            unsigned char *bin = malloc(size);
            if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
                cached_binary = bin;
                cached_binary_size = size;
            } else {
                free(bin);
            }
        }
    }
    return p;
}

/* One program at a time, for the context the kernels were last asked for. The program holds its context,
 * so a test calls h_drop_program() before it releases a context whose teardown it checks. */
static cl_context prog_ctx;
static cl_program prog;

void h_drop_program(void)
{
    if (prog)
        clReleaseProgram(prog);
    prog = NULL;
    prog_ctx = NULL;
}

cl_kernel h_kernel(cl_context ctx, cl_device_id dev, const char *name)
{
    if (ctx != prog_ctx) {
        h_drop_program();
        prog = h_program(ctx, dev);
        prog_ctx = ctx;
    }
    if (!prog)
        return NULL;
    cl_int e;
    cl_kernel k = clCreateKernel(prog, name, &e);
    if (!k)
        h_fail(__FILE__, __LINE__, "clCreateKernel(%s) = %s", name, cl_err_name(e));
    return k;
}

void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t v = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        v = v * 1103515245u + 12345u;
        p[i] = (unsigned char)(v >> 16);
    }
}

long first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return (long)i;
    return -1;
}

/* ---------------------------------------------------------------------------------------------- */
/* Texel values (host side of the fill kernels)                                                    */

fill_params fill_params_for(const fmt *f, int variant)
{
    static const int muls[4] = {37, 101, 13, 59};
    fill_params p = {0, 0, 0u, muls[variant & 3], 1.0f};
    switch (f->cls) {
    case FC_UNORM:
        p.mod = f->bits == 8 ? 256 : 65536;
        p.scale = f->bits == 8 ? 1.0f / 255.0f : 1.0f / 65535.0f;
        break;
    case FC_SNORM:
        p.mod = f->bits == 8 ? 255 : 65535;
        p.bias = f->bits == 8 ? -127 : -32767;
        p.scale = f->bits == 8 ? 1.0f / 127.0f : 1.0f / 32767.0f;
        break;
    case FC_FLOAT:
        /* Quarter steps below 256 are exact in half; half steps below 1024 are exact in float. */
        p.mod = f->bits == 16 ? 2048 : 4096;
        p.bias = f->bits == 16 ? -1024 : -2048;
        p.scale = f->bits == 16 ? 0.25f : 0.5f;
        break;
    case FC_UINT:
        p.mod = f->bits == 8 ? 256 : f->bits == 16 ? 65536 : 1 << 20;
        p.ubias = f->bits == 32 ? 4000000000u : 0u;
        break;
    case FC_SINT:
        p.mod = f->bits == 8 ? 256 : f->bits == 16 ? 65536 : 1 << 20;
        p.bias = f->bits == 8 ? -128 : f->bits == 16 ? -32768 : -2000000000;
        break;
    }
    return p;
}

static int32_t k_int(const fill_params *p, int x, int y, int z, int c)
{
    return ((x * 3 + y * 5 + z * 7 + c) * p->mul) % p->mod + p->bias;
}

static uint32_t k_uint(const fill_params *p, int x, int y, int z, int c)
{
    return (uint32_t)(((x * 3 + y * 5 + z * 7 + c) * p->mul) % p->mod) + p->ubias;
}

uint16_t float_to_half(float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    uint32_t sign = (b >> 16) & 0x8000u;
    int32_t exp = (int32_t)((b >> 23) & 0xff) - 127 + 15;
    uint32_t mant = b & 0x7fffffu;
    if (((b >> 23) & 0xff) == 0)
        return (uint16_t)sign; /* zero (the suite never writes float denormals) */
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) { /* half denormal */
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), half_point = 1u << (shift - 1);
        if (rem > half_point || (rem == half_point && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)h;
}

float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, b;
    if (exp == 0) {
        if (mant == 0) {
            b = sign;
        } else {
            exp = 127 - 15 + 1;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                exp--;
            }
            b = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        b = sign | 0x7f800000u | (mant << 13);
    } else {
        b = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float v;
    memcpy(&v, &b, 4);
    return v;
}

/* Memory position of logical channel c (0 = red) in a texel. */
static unsigned channel_slot(const fmt *f, unsigned c) { return f->order == CL_BGRA && c < 3 ? 2 - c : c; }

void texel_encode(const fmt *f, const fill_params *p, int x, int y, int z, unsigned char *out)
{
    unsigned bytes = f->bits / 8;
    for (unsigned c = 0; c < f->channels; c++) {
        unsigned char *dst = out + channel_slot(f, c) * bytes;
        uint32_t bits;
        if (f->cls == FC_FLOAT) {
            float v = (float)k_int(p, x, y, z, (int)c) * p->scale;
            if (f->bits == 16)
                bits = float_to_half(v);
            else
                memcpy(&bits, &v, 4);
        } else if (f->cls == FC_UINT) {
            bits = k_uint(p, x, y, z, (int)c);
        } else {
            bits = (uint32_t)k_int(p, x, y, z, (int)c);
        }
        memcpy(dst, &bits, bytes); /* little-endian: the low bytes */
    }
}

void texels_encode(const fmt *f, const fill_params *p, unsigned w, unsigned h, unsigned d, int z0,
                   unsigned char *out)
{
    unsigned tb = fmt_texel_bytes(f);
    for (unsigned z = 0; z < d; z++)
        for (unsigned y = 0; y < h; y++)
            for (unsigned x = 0; x < w; x++)
                texel_encode(f, p, (int)x, (int)y, (int)z + z0, out + (((size_t)z * h + y) * w + x) * tb);
}

void texel_decode(const fmt *f, const unsigned char *in, float vf[4], int32_t vi[4])
{
    unsigned bytes = f->bits / 8;
    vf[0] = vf[1] = vf[2] = 0.0f;
    vf[3] = 1.0f;
    vi[0] = vi[1] = vi[2] = 0;
    vi[3] = 1;
    for (unsigned c = 0; c < f->channels; c++) {
        const unsigned char *src = in + channel_slot(f, c) * bytes;
        uint32_t u = 0;
        memcpy(&u, src, bytes);
        int32_t s = bytes == 1 ? (int8_t)u : bytes == 2 ? (int16_t)u : (int32_t)u;
        switch (f->cls) {
        case FC_FLOAT:
            if (bytes == 2)
                vf[c] = half_to_float((uint16_t)u);
            else
                memcpy(&vf[c], &u, 4);
            break;
        case FC_UNORM:
            vf[c] = (float)u / (bytes == 1 ? 255.0f : 65535.0f);
            break;
        case FC_SNORM: {
            float v = (float)s / (bytes == 1 ? 127.0f : 32767.0f);
            vf[c] = v < -1.0f ? -1.0f : v;
            break;
        }
        case FC_UINT:
            vi[c] = (int32_t)u;
            break;
        case FC_SINT:
            vi[c] = s;
            break;
        }
    }
}
