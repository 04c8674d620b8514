/* A Windows program (MinGW-w64) run under Wine with dxcl's bridge installed in its prefix: the core
 * OpenCL API through opencl.dll, callbacks into the program on a Windows thread, the extensions a
 * Windows program sees, and clGetDeviceIDsFromD3D1x{KHR,NV} for DXGI adapters and Direct3D 10/11
 * devices with the errors the specs name. Built 32-bit (i686) it runs through Wine's new WoW64 mode,
 * where the bridge converts every argument's layout and offers no Direct3D sharing yet: the same
 * core checks, and the sharing checks turned into checks of their absence. Prints "N passed, M
 * failed"; exits 1 on any failure. */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clGetExtensionFunctionAddress, which programs still call */
#include <windows.h>
#include <initguid.h>
#include <d3d10.h>
#include <d3d11.h>
#include <dxgi.h>
#include <stdio.h>
#include <string.h>
#include <CL/cl.h>
#include <CL/cl_d3d10.h>
#include <CL/cl_d3d11.h>

static int passed, failed;

#define CHECK(cond, ...) do { \
    if (cond) passed++; \
    else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } \
} while (0)

static DWORD main_thread;
static volatile LONG event_calls, build_calls, destructor_calls, context_gone_calls;
static volatile DWORD callback_thread;
static volatile cl_int event_status = 1;

static void note_thread(void)
{
    callback_thread = GetCurrentThreadId();
}

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user_data)
{
    (void)e;
    note_thread();
    if (user_data == (void *)0x1234) event_status = status;
    InterlockedIncrement(&event_calls);
}

static void CL_CALLBACK on_build(cl_program p, void *user_data)
{
    (void)p;
    note_thread();
    if (user_data == (void *)0x5678) InterlockedIncrement(&build_calls);
}

static void CL_CALLBACK on_mem_gone(cl_mem m, void *user_data)
{
    (void)m;
    note_thread();
    if (user_data == (void *)0x9abc) InterlockedIncrement(&destructor_calls);
}

static void CL_CALLBACK on_context_gone(cl_context c, void *user_data)
{
    (void)c;
    note_thread();
    if (user_data == (void *)0xdef0) InterlockedIncrement(&context_gone_calls);
}

static void CL_CALLBACK on_native(void *args)
{
    int *data = *(int **)args; /* the host pointer of the buffer passed in mem_list */
    note_thread();
    for (int i = 0; i < 16; i++) data[i] += 100;
}

static void wait_for(volatile LONG *counter, LONG want)
{
    for (int i = 0; i < 500 && *counter < want; i++) Sleep(10);
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

/* The core API end to end: a kernel, blocking reads, and each kind of callback. */
static void core(cl_platform_id platform, cl_device_id device)
{
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err == CL_SUCCESS && ctx, "clCreateContext: %d", err);
    if (!ctx) return;
    CHECK(clSetContextDestructorCallback(ctx, on_context_gone, (void *)0xdef0) == CL_SUCCESS,
          "clSetContextDestructorCallback");
    /* Answers of pointer size: handles and size_t arrays, in this program's layout. */
    cl_device_id listed[2] = {NULL, NULL};
    size_t size = 0, sizes[8];
    cl_uint dims = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof listed, listed, &size) == CL_SUCCESS
          && size == sizeof(cl_device_id) && listed[0] == device, "CL_CONTEXT_DEVICES: %zu bytes", size);
    clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, NULL);
    CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, &size) == CL_SUCCESS
          && size == dims * sizeof(size_t) && sizes[0] >= 1, "CL_DEVICE_MAX_WORK_ITEM_SIZES: %zu bytes", size);
    CHECK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t), sizes, NULL) == CL_INVALID_VALUE,
          "a size_t[] answer in too small a buffer: CL_INVALID_VALUE");
    cl_platform_id of_device = NULL;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof of_device, &of_device, NULL) == CL_SUCCESS
          && of_device == platform, "CL_DEVICE_PLATFORM");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err == CL_SUCCESS, "clCreateCommandQueueWithProperties: %d", err);
    const char *src = "kernel void triple(global int *x) { x[get_global_id(0)] *= 3; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err == CL_SUCCESS, "clCreateProgramWithSource: %d", err);
    err = clBuildProgram(prog, 1, &device, "", on_build, (void *)0x5678);
    CHECK(err == CL_SUCCESS, "clBuildProgram with a callback: %d", err);
    wait_for(&build_calls, 1);
    CHECK(build_calls == 1, "build callback ran %ld times", build_calls);
    CHECK(clBuildProgram(prog, 1, &device, "", on_build, NULL) == CL_SUCCESS, "second build");
    CHECK(clBuildProgram(NULL, 0, NULL, NULL, on_build, NULL) == CL_INVALID_PROGRAM,
          "a failed build with a callback returns the platform's error");
    cl_kernel k = clCreateKernel(prog, "triple", &err);
    CHECK(err == CL_SUCCESS, "clCreateKernel: %d", err);

    int data[1024];
    for (int i = 0; i < 1024; i++) data[i] = i;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data, &err);
    CHECK(err == CL_SUCCESS, "clCreateBuffer: %d", err);
    CHECK(clSetMemObjectDestructorCallback(m, on_mem_gone, (void *)0x9abc) == CL_SUCCESS,
          "clSetMemObjectDestructorCallback");
    CHECK(clSetKernelArg(k, 0, sizeof m, &m) == CL_SUCCESS, "clSetKernelArg");
    size_t global = 1024;
    cl_event ev;
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev);
    CHECK(err == CL_SUCCESS, "clEnqueueNDRangeKernel: %d", err);
    CHECK(clSetEventCallback(ev, CL_COMPLETE, on_event, (void *)0x1234) == CL_SUCCESS, "clSetEventCallback");
    memset(data, 0, sizeof data);
    err = clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL);
    CHECK(err == CL_SUCCESS, "clEnqueueReadBuffer: %d", err);
    int wrong = 0;
    for (int i = 0; i < 1024; i++) wrong += data[i] != 3 * i;
    CHECK(wrong == 0, "%d of 1024 values wrong after the kernel", wrong);
    wait_for(&event_calls, 1);
    CHECK(event_calls == 1 && event_status == CL_COMPLETE, "event callback: %ld calls, status %d",
          event_calls, event_status);
    CHECK(clSetEventCallback(ev, 42, on_event, NULL) == CL_INVALID_VALUE,
          "a callback type the spec does not name: CL_INVALID_VALUE");

#ifdef _WIN64
    /* A native kernel, where the device runs them: the function gets the host's copy of its
     * argument block, with the buffer's host address in place of the cl_mem. */
    cl_device_exec_capabilities caps = 0;
    clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
    if (caps & CL_EXEC_NATIVE_KERNEL)
    {
        cl_mem args[1] = {m};
        const void *loc[1] = {&args[0]};
        err = clEnqueueNativeKernel(q, on_native, args, sizeof args, 1, &m, loc, 0, NULL, NULL);
        CHECK(err == CL_SUCCESS, "clEnqueueNativeKernel: %d", err);
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL);
        CHECK(data[0] == 100 && data[15] == 145 && data[16] == 48, "native kernel: %d %d %d",
              data[0], data[15], data[16]);
    }
    else
        printf("native kernels: the device runs none, not tested\n");
    CHECK(clEnqueueNativeKernel(q, NULL, NULL, 0, 0, NULL, NULL, 0, NULL, NULL) == CL_INVALID_VALUE,
          "native kernel without a function: CL_INVALID_VALUE");
#else
    /* Not bridged for 32-bit programs: the host's addresses are out of their reach. */
    CHECK(clEnqueueNativeKernel(q, on_native, NULL, 0, 0, NULL, NULL, 0, NULL, NULL) == CL_INVALID_OPERATION,
          "32-bit: native kernels are refused with CL_INVALID_OPERATION");
#endif

    /* A mapping (for a 32-bit program a copy within its reach where the host's mapping lies beyond
     * it): it holds the buffer's values, and what is written through it is the buffer's after the
     * unmap. Asked non-blocking, it is complete once its event is. */
    {
        cl_int values[16];
        cl_event mapped = NULL;
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof values, values, 0, NULL, NULL);
        cl_int *p = clEnqueueMapBuffer(q, m, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, sizeof values, 0, NULL,
                                       &mapped, &err);
        CHECK(p != NULL && err == CL_SUCCESS, "clEnqueueMapBuffer: %d", err);
        if (p)
        {
            CHECK(clWaitForEvents(1, &mapped) == CL_SUCCESS, "the map's event");
            CHECK(memcmp(p, values, sizeof values) == 0, "the mapping holds the buffer's values");
            for (int i = 0; i < 16; i++) p[i] = 1000 + i;
            CHECK(clEnqueueUnmapMemObject(q, m, p, 0, NULL, NULL) == CL_SUCCESS, "clEnqueueUnmapMemObject");
            clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof values, values, 0, NULL, NULL);
            CHECK(values[0] == 1000 && values[15] == 1015, "writes through the mapping: %d %d", values[0], values[15]);
            clReleaseEvent(mapped);
        }
    }

    CHECK(clFinish(q) == CL_SUCCESS, "clFinish");
    clReleaseEvent(ev);
    clReleaseMemObject(m);
    wait_for(&destructor_calls, 1);
    CHECK(destructor_calls == 1, "memory destructor callback ran %ld times", destructor_calls);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    wait_for(&context_gone_calls, 1);
    CHECK(context_gone_calls == 1, "context destructor callback ran %ld times", context_gone_calls);
    CHECK(callback_thread != 0 && callback_thread != main_thread,
          "callbacks ran on a thread of their own (%lu, main %lu)", callback_thread, main_thread);
}

/* clGetDeviceIDsFromD3D1x{KHR,NV}: the entry points, an adapter's preferred device, devices, errors. */
static void d3d_lookup(cl_platform_id platform)
{
    static const char *names[4] = {"clGetDeviceIDsFromD3D10KHR", "clGetDeviceIDsFromD3D11KHR",
                                   "clGetDeviceIDsFromD3D10NV", "clGetDeviceIDsFromD3D11NV"};
    IDXGIFactory *factory;
    IDXGIAdapter *adapter;
    ID3D10Device *d3d10 = NULL;
    ID3D11Device *d3d11 = NULL;
    HRESULT hr = CreateDXGIFactory(&IID_IDXGIFactory, (void **)&factory);
    CHECK(SUCCEEDED(hr), "CreateDXGIFactory: %lx", hr);
    if (FAILED(hr)) return;
    hr = IDXGIFactory_EnumAdapters(factory, 0, &adapter);
    CHECK(SUCCEEDED(hr), "EnumAdapters: %lx", hr);
    if (FAILED(hr)) return;
    hr = D3D10CreateDevice(adapter, D3D10_DRIVER_TYPE_HARDWARE, NULL, 0, D3D10_SDK_VERSION, &d3d10);
    CHECK(SUCCEEDED(hr), "D3D10CreateDevice: %lx", hr);
    hr = D3D11CreateDevice(adapter, D3D_DRIVER_TYPE_UNKNOWN, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &d3d11, NULL, NULL);
    CHECK(SUCCEEDED(hr), "D3D11CreateDevice: %lx", hr);
    CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clIcdGetPlatformIDsKHR") == NULL,
          "a function the bridge does not wrap is not handed out");
    CHECK(clGetExtensionFunctionAddressForPlatform(platform, "clGetDeviceIDsFromD3D11KHR")
          == clGetExtensionFunctionAddress("clGetDeviceIDsFromD3D11KHR"),
          "both lookups give the same function");
    for (int e = 0; e < 4; e++)
    {
        clGetDeviceIDsFromD3D10KHR_fn get = (clGetDeviceIDsFromD3D10KHR_fn)clGetExtensionFunctionAddressForPlatform(platform, names[e]);
        int v11 = e % 2;
        cl_uint src_device = v11 ? 0x4019 : 0x4010, src_adapter = v11 ? 0x401A : 0x4011;
        cl_uint preferred = v11 ? 0x401B : 0x4012, all = v11 ? 0x401C : 0x4013;
        void *device = v11 ? (void *)d3d11 : (void *)d3d10;
        cl_device_id ids[8];
        cl_uint n = 0, n_all = 0;
        char name[256] = "";
        CHECK(get != NULL, "%s: no address", names[e]);
        if (!get) continue;
        /* The Affinity-style lookup: the preferred devices of a DXGI adapter. */
        cl_int err = get(platform, src_adapter, adapter, preferred, 8, ids, &n);
        CHECK(err == CL_SUCCESS && n >= 1, "%s: adapter, preferred: %d, %u devices", names[e], err, n);
        if (err == CL_SUCCESS)
        {
            cl_device_type type = 0;
            clGetDeviceInfo(ids[0], CL_DEVICE_TYPE, sizeof type, &type, NULL);
            clGetDeviceInfo(ids[0], CL_DEVICE_NAME, sizeof name, name, NULL);
            /* wined3d on llvmpipe: the renderer is the CPU, so CPU devices are preferred. */
            CHECK(type & CL_DEVICE_TYPE_CPU, "%s: the preferred device is %s, not the CPU", names[e], name);
        }
        err = get(platform, src_adapter, adapter, all, 0, NULL, &n_all);
        CHECK(err == CL_SUCCESS && n_all >= n, "%s: adapter, all: %d, %u devices", names[e], err, n_all);
        cl_uint n_dev = 0;
        err = get(platform, src_device, device, preferred, 8, ids, &n_dev);
        CHECK(err == CL_SUCCESS && n_dev == n, "%s: device, preferred: %d, %u devices", names[e], err, n_dev);
        /* The errors of the extension's table. */
        CHECK(get(platform, src_adapter, NULL, preferred, 8, ids, &n) == CL_DEVICE_NOT_FOUND,
              "%s: no adapter: CL_DEVICE_NOT_FOUND", names[e]);
        CHECK(get(platform, src_device, adapter, preferred, 8, ids, &n) == CL_DEVICE_NOT_FOUND,
              "%s: an adapter given as a device: CL_DEVICE_NOT_FOUND", names[e]);
        CHECK(get(platform, src_adapter, (void *)factory, preferred, 8, ids, &n) == CL_DEVICE_NOT_FOUND,
              "%s: a factory given as an adapter: CL_DEVICE_NOT_FOUND", names[e]);
        CHECK(get(platform, 0x1234, adapter, preferred, 8, ids, &n) == CL_INVALID_VALUE,
              "%s: a bad source: CL_INVALID_VALUE", names[e]);
        CHECK(get(platform, src_adapter, adapter, 0x1234, 8, ids, &n) == CL_INVALID_VALUE,
              "%s: a bad set: CL_INVALID_VALUE", names[e]);
        CHECK(get(platform, src_adapter, adapter, preferred, 0, ids, &n) == CL_INVALID_VALUE,
              "%s: num_entries 0 with devices: CL_INVALID_VALUE", names[e]);
        CHECK(get(platform, src_adapter, adapter, preferred, 8, NULL, NULL) == CL_INVALID_VALUE,
              "%s: nowhere to answer: CL_INVALID_VALUE", names[e]);
        CHECK(get((cl_platform_id)(ULONG_PTR)0x10, src_adapter, adapter, preferred, 8, ids, &n) == CL_INVALID_PLATFORM,
              "%s: a bad platform: CL_INVALID_PLATFORM", names[e]);
    }
    if (d3d10) ID3D10Device_Release(d3d10);
    if (d3d11) ID3D11Device_Release(d3d11);
    IDXGIAdapter_Release(adapter);
    IDXGIFactory_Release(factory);
}

int main(void)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_uint n = 0;
    char text[8192];
    main_thread = GetCurrentThreadId();
    cl_int err = clGetPlatformIDs(1, &platform, &n);
    CHECK(err == CL_SUCCESS && n >= 1, "clGetPlatformIDs: %d, %u platforms", err, n);
    if (err != CL_SUCCESS) goto done;
    err = clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, sizeof text, text, NULL);
    CHECK(err == CL_SUCCESS, "CL_PLATFORM_EXTENSIONS: %d", err);
    printf("platform extensions: %s\n", text);
    CHECK(has_word(text, "cl_khr_d3d10_sharing") && has_word(text, "cl_khr_d3d11_sharing")
          && has_word(text, "cl_nv_d3d10_sharing") && has_word(text, "cl_nv_d3d11_sharing"),
          "the four sharing extensions are reported");
    CHECK(!has_word(text, "cl_khr_icd"), "cl_khr_icd (host entry points) is not reported");
    size_t size = 0;
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, NULL, &size) == CL_SUCCESS
          && size == strlen(text) + 1, "the size query agrees with the filtered list (%zu)", size);
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 3, text, NULL) == CL_INVALID_VALUE,
          "too small a buffer: CL_INVALID_VALUE");
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    CHECK(err == CL_SUCCESS, "clGetDeviceIDs: %d", err);
    if (err != CL_SUCCESS) goto done;
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof text, text, NULL);
    CHECK(has_word(text, "cl_khr_d3d11_sharing") && !has_word(text, "cl_khr_icd"),
          "device extensions: %s", text);
    core(platform, device);
    d3d_lookup(platform);
done:
    printf("bridge: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
