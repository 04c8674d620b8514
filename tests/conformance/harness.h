/* Shared harness of the OpenCL <-> Direct3D 10/11 conformance suite.
 *
 * Every test is written once and run for each of the four (Direct3D version, flavour) pairs:
 * D3D10/KHR, D3D10/NV, D3D11/KHR, D3D11/NV. The harness hides the differences between the two
 * Direct3D APIs (D3D10 has no immediate context; its Map calls live on the resources) behind the
 * small `gfx_*` API, and the differences between the flavours behind `struct sharing` (the six entry
 * points, found through clGetExtensionFunctionAddressForPlatform, plus the version's tokens).
 *
 * Each program prints one line per failed check, and a last line exactly "<name>: N passed, N failed";
 * its exit status is non-zero when a check failed. */
#ifndef DXCL_CONFORMANCE_HARNESS_H
#define DXCL_CONFORMANCE_HARNESS_H

#define COBJMACROS
/* clGetExtensionFunctionAddress is deprecated, and is one of the two ways the specs name. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
/* clEnqueueTask (deprecated in 2.0) is among the enqueue calls checked on non-acquired objects. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif

#include <d3d10.h>
#include <d3d11.h>
#include <dxgi.h>

#include <CL/cl.h>
#include <CL/cl_d3d10.h>
#include <CL/cl_d3d11.h>
#include <CL/cl_ext.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef _WIN32
/* Windows builds (MinGW-w64, run under Wine through dxcl's bridge): the POSIX calls the programs make
 * that MinGW-w64 lacks, made in harness.c (threads, usleep and clock_gettime come from winpthreads).
 * Variables set by setenv stay in the Windows environment: the layer, on the unix side, never sees
 * them. <windows.h> defines `far` and `near` away. */
unsigned alarm(unsigned seconds);
int setenv(const char *name, const char *value, int overwrite);
int unsetenv(const char *name);
#undef far
#undef near
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Checks                                                                                          */

extern int h_passed, h_failed;
extern char h_where[160]; /* what the test is doing now (combo, format, size...), printed on failure */

void h_pass(void);
void h_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *cl_err_name(cl_int err);

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (cond)                                                                                 \
            h_pass();                                                                             \
        else                                                                                      \
            h_fail(__FILE__, __LINE__, "CHECK failed: %s", #cond);                                \
    } while (0)

/* An OpenCL status: `got` must be exactly `want`. */
#define CHECK_ERR(got, want)                                                                      \
    do {                                                                                          \
        cl_int got_ = (cl_int)(got), want_ = (cl_int)(want);                                      \
        if (got_ == want_)                                                                        \
            h_pass();                                                                             \
        else                                                                                      \
            h_fail(__FILE__, __LINE__, "%s = %s (%d), want %s (%d)", #got, cl_err_name(got_),     \
                   got_, cl_err_name(want_), want_);                                              \
    } while (0)

/* Two unsigned counts (reference counts) must be equal. */
#define CHECK_EQ(got, want)                                                                       \
    do {                                                                                          \
        unsigned long got_ = (unsigned long)(got), want_ = (unsigned long)(want);                 \
        if (got_ == want_)                                                                        \
            h_pass();                                                                             \
        else                                                                                      \
            h_fail(__FILE__, __LINE__, "%s = %lu, want %s = %lu", #got, got_, #want, want_);      \
    } while (0)

#define CHECK_HR(expr, want)                                                                      \
    do {                                                                                          \
        HRESULT hr_ = (expr);                                                                     \
        if (hr_ == (HRESULT)(want))                                                               \
            h_pass();                                                                             \
        else                                                                                      \
            h_fail(__FILE__, __LINE__, "%s = 0x%08x, want 0x%08x", #expr, (unsigned)hr_,         \
                   (unsigned)(want));                                                             \
    } while (0)

/* Starts a program: names it (the name gets "_staging" appended when DXCL_STRATEGY=staging, so the
 * second run of a data-path program reports under its own name) and arms a watchdog that fails the
 * program instead of hanging when a call never returns. */
void h_begin(const char *name, unsigned watchdog_seconds);
/* Prints "<name>: N passed, N failed" and returns the exit status. */
int h_end(void);
/* Sets h_where (printf-style). */
void h_at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The reduced mode, DXCL_CONFORMANCE_REDUCED=1, for runs under valgrind and ASan+UBSan, where the full
 * suite is too slow: every test function, strategy, API pair and kernel variant still runs, with fewer
 * formats, smaller sizes and fewer rounds (each program's reductions are listed in docs/conformance.md,
 * "Sanitizers"). The program's name gets "_reduced" appended and its watchdog is 10 times longer. */
int h_reduced(void);

/* The references the dxcl layer holds to the platform's objects (its dxclHeldObjects), found in the
 * loaded layer of OPENCL_LAYERS; `text` (may be NULL) gets them by kind. -1 with no such layer (or
 * on Windows, where the layer lives on the Unix side). */
long h_layer_held(char *text, size_t size);
/* Waits up to `ms` milliseconds for the layer to hold no more references than `before`; whether it
 * got there. `text` gets the last reading by kind. */
int h_layer_back_within(long before, int ms, char *text, size_t size);
/* Picks a count by mode: `full` normally, `reduced` in the reduced mode. */
#define H_BY_MODE(full, reduced) (h_reduced() ? (reduced) : (full))

/* ---------------------------------------------------------------------------------------------- */
/* OpenCL platform and the sharing entry points                                                    */

#define API_D3D10 10
#define API_D3D11 11

/* The Direct3D version and flavour a test runs for, plus everything that depends on them. */
typedef struct sharing {
    int api;           /* API_D3D10 or API_D3D11 */
    int nv;            /* 0: KHR entry points, 1: NV entry points */
    const char *name;  /* "D3D11/KHR" ... */
    const char *ext;   /* "cl_khr_d3d11_sharing" ... */
    cl_platform_id platform;
    /* The six entry points, typed by the version's KHR typedefs (NV signatures are identical, but for
     * the release's non-const mem list, which changes nothing at the call). NULL when not found. */
    void *fn[6];
    /* Tokens (equal for both flavours of one version). */
    cl_uint src_device, src_adapter, set_preferred, set_all;
    cl_context_properties ctx_device;
    cl_mem_info mem_resource;
    cl_image_info image_subresource;
    cl_command_type cmd_acquire, cmd_release;
    cl_int err_device, err_resource, err_already, err_not_acquired;
    cl_context_info prefer_shared; /* KHR only; 0 for NV */
} sharing;

enum { FN_GET_DEVICE_IDS, FN_CREATE_BUFFER, FN_CREATE_TEX2D, FN_CREATE_TEX3D, FN_ACQUIRE, FN_RELEASE };
extern const char *const fn_suffix[6]; /* "GetDeviceIDsFrom", ... used to build the 24 names */

/* The platform whose CL_PLATFORM_EXTENSIONS names cl_khr_d3d11_sharing (the layer's), else the first.
 * Returns NULL when there is no platform at all. */
cl_platform_id h_platform(void);
cl_device_id h_first_device(cl_platform_id p);
/* "clCreateFromD3D11BufferKHR" into buf. */
void h_fn_name(char *buf, size_t n, int api, int nv, int which);
/* Fills `s` for (api, nv): tokens, and the entry points from clGetExtensionFunctionAddressForPlatform.
 * Returns 1 when all six were found. */
int sharing_init(sharing *s, cl_platform_id platform, int api, int nv);
/* The four pairs, in the order D3D11/KHR, D3D11/NV, D3D10/KHR, D3D10/NV. DXCL_CONFORMANCE_ONLY=<name>
 * (e.g. "D3D11/KHR") runs one pair. Returns 0 to skip the pair `i`. */
int h_combo(int i, int *api, int *nv);

/* Calls through the entry points; `res` is the ID3D1xBuffer / ID3D1xTexture2D / ID3D1xTexture3D. */
cl_int sh_get_device_ids(const sharing *s, cl_platform_id p, cl_uint source, void *object, cl_uint set,
                         cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices);
cl_mem sh_create_buffer(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, cl_int *err);
cl_mem sh_create_tex2d(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, UINT sub,
                       cl_int *err);
cl_mem sh_create_tex3d(const sharing *s, cl_context ctx, cl_mem_flags flags, void *res, UINT sub,
                       cl_int *err);
cl_int sh_acquire(const sharing *s, cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint nwait,
                  const cl_event *wait, cl_event *ev);
cl_int sh_release(const sharing *s, cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint nwait,
                  const cl_event *wait, cl_event *ev);

/* ---------------------------------------------------------------------------------------------- */
/* Direct3D, either version                                                                        */

/* Usage, bind, CPU-access and misc flag values are the same numbers in D3D10 and D3D11; tests use the
 * D3D11 names for both and the harness passes the numbers through. */
typedef struct gfx {
    int api;
    ID3D10Device *d10;
    ID3D11Device *d11;
    ID3D11DeviceContext *ctx11;
    void *device;           /* d10 or d11: the value of CL_CONTEXT_D3D1x_DEVICE */
    IDXGIAdapter *adapter;  /* the adapter the device was created on */
} gfx;

typedef enum res_kind { RES_BUFFER, RES_TEX1D, RES_TEX2D, RES_TEX3D } res_kind;

typedef struct res {
    res_kind kind;
    int api;
    void *p; /* ID3D1xBuffer*, ID3D1xTexture1D/2D/3D* */
    UINT width, height, depth, mips, array, samples;
    DXGI_FORMAT format;
    UINT usage, bind, cpu, misc;
} res;

/* Creates a device of version `api` on the default (hardware) adapter. Returns 1 on success. */
int gfx_open(gfx *g, int api);
void gfx_close(gfx *g);

/* Creation; `init` (may be NULL) is tightly packed data for subresource 0 only when the resource has
 * one subresource, else for every subresource in order (mip fastest, then array slice). Returns the
 * HRESULT; r->p is NULL on failure. */
HRESULT gfx_buffer(gfx *g, res *r, UINT size, UINT usage, UINT bind, UINT cpu, UINT misc, const void *init);
HRESULT gfx_tex1d(gfx *g, res *r, UINT w, DXGI_FORMAT f, UINT usage, UINT bind);
HRESULT gfx_tex2d(gfx *g, res *r, UINT w, UINT h, UINT mips, UINT array, DXGI_FORMAT f, UINT samples,
                  UINT usage, UINT bind, UINT cpu, UINT misc, const void *init);
HRESULT gfx_tex3d(gfx *g, res *r, UINT w, UINT h, UINT d, UINT mips, DXGI_FORMAT f, UINT usage, UINT bind,
                  UINT cpu, UINT misc, const void *init);
void res_free(res *r);
/* Whether the device can make 3D textures of format `f` (CheckFormatSupport's TEXTURE3D bit). */
int gfx_supports_tex3d(gfx *g, DXGI_FORMAT f);

/* Number of subresources, and the size of subresource `sub` in texels (buffers: bytes, 1, 1). */
UINT res_subresources(const res *r);
void res_sub_dims(const res *r, UINT sub, UINT *w, UINT *h, UINT *d);
/* Bytes of tightly packed data of subresource `sub`. */
size_t res_sub_bytes(const res *r, UINT sub);

/* Writes tightly packed `data` into subresource `sub` the way an application does for the usage:
 * UpdateSubresource (DEFAULT), Map WRITE_DISCARD (DYNAMIC), Map WRITE (STAGING). Returns 1 on success. */
int gfx_write(gfx *g, res *r, UINT sub, const void *data);
/* Reads subresource `sub` into tightly packed `out` through a staging copy (CopySubresourceRegion then
 * Map READ), or by mapping it when the resource is itself a readable staging resource. */
int gfx_read(gfx *g, res *r, UINT sub, void *out);
/* Flush, then wait on an event query until the device has finished its work (the application-side
 * wait used with CL_CONTEXT_INTEROP_USER_SYNC). Returns 1 on success. */
int gfx_finish(gfx *g);

/* Public reference count of a COM object (AddRef then Release). */
ULONG com_refcount(void *unknown);
/* The count once it equals `want`, read every millisecond for up to `ms` (the last count read
 * otherwise): what a completion callback held, such as the staging strategy's Direct3D resources
 * after a release's read-back, the layer lets go of on a thread of its own (as in h_end). */
ULONG com_refcount_within(void *unknown, ULONG want, int ms);
ULONG com_release(void *unknown);

/* A COM object that is no Direct3D object: QueryInterface answers E_NOINTERFACE for everything but
 * IUnknown; every other vtable slot sets `misused` (the layer called a method it had no right to). */
typedef struct fake_com {
    const void *lpVtbl;
    ULONG refs;
    int misused;
} fake_com;
void fake_com_init(fake_com *f);
/* An object with two faces (two interface pointers), as wined3d's and DXVK's devices have: asked
 * through either face for `iid`, it answers face[1]; for IUnknown, face[0]. Any method past
 * IUnknown's sets `misused`. */
typedef struct fake_faces {
    const void *face[2];
    const GUID *iid;
    ULONG refs;
    int misused;
} fake_faces;
void fake_faces_init(fake_faces *f, const GUID *iid);

/* ---------------------------------------------------------------------------------------------- */
/* The format table                                                                                */

typedef enum fmt_class { FC_FLOAT, FC_UNORM, FC_SNORM, FC_UINT, FC_SINT } fmt_class;
typedef struct fmt {
    DXGI_FORMAT dxgi;
    const char *name;
    cl_channel_order order;
    cl_channel_type type;
    unsigned channels;    /* 1, 2 or 4 */
    unsigned bits;        /* per channel: 8, 16, 32 */
    fmt_class cls;
    int khr_only;         /* B8G8R8A8_UNORM */
} fmt;
extern const fmt fmt_table[37];

/* Parameters of the fill kernels (see the kernel source in harness.c): texel (x, y, z) channel c holds
 * k = ((x*3 + y*5 + z*7 + c) * mul) % mod + bias, stored as k * scale for float and normalized
 * formats (chosen so every value is exact), as k for integer formats (uint: + ubias). */
typedef struct fill_params {
    int mod, bias;
    uint32_t ubias;
    int mul;
    float scale;
} fill_params;
fill_params fill_params_for(const fmt *f, int variant);
/* One texel's bytes as the format stores them. */
void texel_encode(const fmt *f, const fill_params *p, int x, int y, int z, unsigned char *out);
/* A tightly packed w x h x d block, z counted from z0 (2D data uses z0 to tell subresources apart). */
void texels_encode(const fmt *f, const fill_params *p, unsigned w, unsigned h, unsigned d, int z0,
                   unsigned char *out);
/* What read_imagef (vf) or read_imagei/ui (vi) return for a stored texel, missing channels (0, 0, 0, 1). */
void texel_decode(const fmt *f, const unsigned char *in, float vf[4], int32_t vi[4]);
uint16_t float_to_half(float v);
float half_to_float(uint16_t h);
unsigned fmt_texel_bytes(const fmt *f);
const fmt *fmt_find(DXGI_FORMAT f);
/* 1 when the format is tested in this mode: every table format normally; in the reduced mode one format
 * per channel layout (channel order x bits per channel: 10 of the 37), chosen so that the ten still
 * cover every channel order, texel size, class (float, unorm, snorm, uint, sint), kernel variant
 * (f, i, ui), formats the device may lack (CL_RG on PoCL) and the KHR-only B8G8R8A8_UNORM. */
int fmt_selected(const fmt *f);

/* ---------------------------------------------------------------------------------------------- */
/* OpenCL helpers                                                                                  */

/* A context on the sharing device of `g`: properties {CL_CONTEXT_PLATFORM, p, D3D device, dev,
 * [CL_CONTEXT_INTEROP_USER_SYNC, user_sync when >= 0], 0}. The device is the first one
 * clGetDeviceIDsFromD3D1x returns for the D3D device (preferred set). */
cl_context h_context(const sharing *s, gfx *g, int user_sync, cl_device_id *dev_out, cl_int *err);
cl_command_queue h_queue(cl_context ctx, cl_device_id dev);

/* The suite's one OpenCL program (all kernels), built once per process from source and reused in
 * every later context as a binary. NULL (with a failed check) when it does not build. */
cl_program h_program(cl_context ctx, cl_device_id dev);
cl_kernel h_kernel(cl_context ctx, cl_device_id dev, const char *name);
/* Releases the program h_kernel keeps (it holds its context alive). */
void h_drop_program(void);
int h_has_ext(cl_device_id dev, const char *ext);

/* Deterministic byte pattern. */
void fill_pattern(unsigned char *p, size_t n, unsigned seed);
/* Index of the first differing byte, or -1. */
long first_diff(const void *a, const void *b, size_t n);

#endif
