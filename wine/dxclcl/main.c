/* dxclcl.dll: attach, the unix calls, the callback thread and the extension functions. The
 * entry points themselves are generated (../gen/thunks.c); the rules of the sharing extensions
 * live in dxcl's OpenCL layer, reached through the unix side. */
#define COBJMACROS
#include "bridge.h"
#include <initguid.h>
#include <d3d10.h>
#include <d3d11.h>
#include <dxgi.h>
#include <setupapi.h>
#include <devguid.h>
#include <devpropdef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vulkan_devices.h"
#include "../gen/sharing.h"

typedef UINT64 unixlib_handle_t;
typedef NTSTATUS (WINAPI *unix_call_fn)(unixlib_handle_t, unsigned int, void *);
typedef NTSTATUS (WINAPI *query_memory_fn)(HANDLE, const void *, ULONG, void *, SIZE_T, SIZE_T *);
/* Wine's MEMORY_INFORMATION_CLASS for a builtin module's unix calls (the same from Wine 8.0 to 11). */
#define MEMORY_WINE_UNIX_FUNCS 1000

static unixlib_handle_t unix_handle;
static unix_call_fn unix_call;
/* Why the bridge has no unix side, empty when it has one (dxclclStatus, `dxcl wine info`). */
static char bridge_status[512];

_Static_assert(sizeof(struct dxcl_call) == 8 + 8 * DXCL_MAX_ARGS + 8, "struct dxcl_call");
_Static_assert(sizeof(struct dxcl_callback) == 64, "struct dxcl_callback");
#ifdef _WIN64
_Static_assert(sizeof(DXGI_ADAPTER_DESC1) == 312, "DXGI_ADAPTER_DESC1");
#endif
_Static_assert(sizeof(struct dxcl_callback_wow64) == 64 + 1024, "struct dxcl_callback_wow64");
_Static_assert(offsetof(struct dxcl_adapter_facts, dxvk_known) == 320, "facts");
_Static_assert(offsetof(struct dxcl_adapter_facts, vulkan) == 368, "facts");
_Static_assert(offsetof(struct dxcl_device_ids, facts) == 56, "device ids");
_Static_assert(sizeof(struct dxcl_extension) == 24, "extension");
_Static_assert(sizeof(struct dxcl_hello) == 264, "hello");
_Static_assert(sizeof(struct dxcl_stop) == 4, "stop");
_Static_assert(offsetof(struct dxcl_request, args) == 48, "request");
_Static_assert(offsetof(struct dxcl_request, first_args) == 64 + 8 * DXCL_MAX_METHOD_ARGS, "request");

static NTSTATUS call_unix(unsigned int code, void *params)
{
    if (!unix_call) return 0xC0000001; /* STATUS_UNSUCCESSFUL: no unix side */
    return unix_call(unix_handle, code, params);
}

/* --- Servers for the unix side's stand-ins of the program's COM objects ------------------- */

/* Calls method `slot` of `object` with `n` integer or pointer arguments (the generator leaves
 * out methods with floating-point arguments, which would travel in other registers). Each is a
 * pointer-sized slot: 8 bytes in a register or on the stack for x86-64, 4 on the stack for a
 * 32-bit `stdcall` method, whose pointers the unix side placed in this DLL's block. */
static UINT64 call_method(UINT64 object, UINT32 slot, UINT32 n, const UINT64 *a)
{
    void *self = (void *)(ULONG_PTR)object;
    void *fn = (*(void ***)self)[slot];
    typedef ULONG_PTR u;
    switch (n)
    {
    case 0: return ((u (WINAPI *)(void *))fn)(self);
    case 1: return ((u (WINAPI *)(void *, u))fn)(self, a[0]);
    case 2: return ((u (WINAPI *)(void *, u, u))fn)(self, a[0], a[1]);
    case 3: return ((u (WINAPI *)(void *, u, u, u))fn)(self, a[0], a[1], a[2]);
    case 4: return ((u (WINAPI *)(void *, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3]);
    case 5: return ((u (WINAPI *)(void *, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4]);
    case 6: return ((u (WINAPI *)(void *, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5]);
    case 7: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    case 8: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    case 9: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
#if DXCL_MAX_METHOD_ARGS >= 10
    case 10: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
#endif
#if DXCL_MAX_METHOD_ARGS >= 11
    case 11: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
#endif
#if DXCL_MAX_METHOD_ARGS >= 12
    case 12: return ((u (WINAPI *)(void *, u, u, u, u, u, u, u, u, u, u, u, u))fn)(self, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
#endif
    }
    return (UINT64)E_NOTIMPL;
}
_Static_assert(DXCL_MAX_METHOD_ARGS <= 12, "call_method takes at most 12 arguments");

/* Each method is timed, so that the unix side can tell its own cost from the method's
 * (DXCL_TRACE=handoff, crates/dxcl-wine/src/trace.rs): two counter reads a call. */
static DWORD WINAPI server_thread(void *unused)
{
    struct dxcl_request r = {0};
    LARGE_INTEGER f, start, end;
    (void)unused;
    QueryPerformanceFrequency(&f);
    while (!call_unix(DXCL_UNIX_NEXT_REQUEST, &r))
    {
        QueryPerformanceCounter(&start);
        if (r.first_object)
        {
            call_method(r.first_object, r.first_slot, r.first_nargs, r.first_args);
            call_unix(DXCL_UNIX_FIRST_DONE, &r);
        }
        r.done_ret = call_method(r.object, r.slot, r.nargs, r.args);
        QueryPerformanceCounter(&end);
        r.done_ns = (UINT64)((double)(end.QuadPart - start.QuadPart) * 1e9 / (double)f.QuadPart);
        r.done_id = r.id;
    }
    return 0;
}

/* Wrappers of the layer's own COM objects that the program's objects hold (private data). */
static HRESULT WINAPI wrapper_query(IUnknown *self, REFIID riid, void **out)
{
    if (!out) return E_POINTER;
    if (IsEqualGUID(riid, &IID_IUnknown))
    {
        *out = self;
        IUnknown_AddRef(self);
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}

static ULONG wrapper_call(IUnknown *self, UINT32 method)
{
    struct dxcl_reverse p = {(ULONG_PTR)self, method, 0};
    call_unix(DXCL_UNIX_REVERSE, &p);
    return p.ret;
}

static ULONG WINAPI wrapper_add_ref(IUnknown *self) { return wrapper_call(self, 1); }
static ULONG WINAPI wrapper_release(IUnknown *self) { return wrapper_call(self, 2); }

static const IUnknownVtbl wrapper_vtbl = {wrapper_query, wrapper_add_ref, wrapper_release};

/* Several servers: a method may call back into the layer (a wrapper's Release), which may call
 * another method before the first returns. */
#define SERVERS 4

/* A 32-bit DLL's block for the unix side: the arguments of the methods it calls (a frame of
 * 4 KiB each) and its wrappers, where 32-bit code reaches them (crates/dxcl-wine/src/low.rs). */
#define LOW_SIZE (256 * 1024)

static void start_servers(void)
{
    struct dxcl_start start = {(ULONG_PTR)&wrapper_vtbl, 0, 0};
#ifndef _WIN64
    void *low = VirtualAlloc(NULL, LOW_SIZE, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!low) return;
    start.low = (ULONG_PTR)low;
    start.low_size = LOW_SIZE;
#endif
    if (call_unix(DXCL_UNIX_START, &start)) return;
    for (int i = 0; i < SERVERS; i++)
    {
        HANDLE thread = CreateThread(NULL, 0, server_thread, NULL, 0, NULL);
        if (thread) CloseHandle(thread);
    }
}

/* Wine's unix-call entry point. Every Wine from 7.x on exports __wine_unix_call_dispatcher, a
 * variable holding the function (the one Wine's own modules call through); Wine 10 no longer
 * exports the function __wine_unix_call itself, which earlier ones did. */
static unix_call_fn find_unix_call(HMODULE ntdll)
{
    unix_call_fn *dispatcher = (unix_call_fn *)(void *)GetProcAddress(ntdll, "__wine_unix_call_dispatcher");
    if (dispatcher && *dispatcher) return *dispatcher;
    return (unix_call_fn)(void *)GetProcAddress(ntdll, "__wine_unix_call");
}

/* Says on the program's stderr why no OpenCL platform will be found: a silent empty platform
 * list would leave the user guessing. */
static void report(void)
{
    HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
    DWORD written;
    char line[sizeof(bridge_status) + 32];
    if (!err || err == INVALID_HANDLE_VALUE) return;
    lstrcpynA(line, "dxclcl: ", sizeof(line));
    lstrcatA(line, bridge_status);
    lstrcatA(line, "\n");
    WriteFile(err, line, lstrlenA(line), &written, NULL);
}

/* Finds the unix side, then checks that it is the one this DLL was built with and that it opened
 * the host's OpenCL. On failure every entry point fails (clGetPlatformIDs answers
 * CL_PLATFORM_NOT_FOUND_KHR) and bridge_status says why. */
static void attach(HINSTANCE instance)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    query_memory_fn query = (query_memory_fn)(void *)GetProcAddress(ntdll, "NtQueryVirtualMemory");
    unix_call_fn found = find_unix_call(ntdll);
    struct dxcl_hello hello = {0};
    NTSTATUS status;

    if (!query || !found)
    {
        lstrcpynA(bridge_status, "not running under Wine: ntdll has no unix-call entry point "
                  "(neither __wine_unix_call_dispatcher nor __wine_unix_call)", sizeof(bridge_status));
        report();
        return;
    }
    status = query(GetCurrentProcess(), instance, MEMORY_WINE_UNIX_FUNCS, &unix_handle, sizeof(unix_handle), NULL);
    if (status)
    {
        snprintf(bridge_status, sizeof(bridge_status), "Wine found no unix side (dxclcl.so) for dxclcl.dll (status 0x%08lx): "
                  "start the program with `dxcl wine run`, or set WINEDLLPATH as `dxcl wine env` prints",
                  (unsigned long)status);
        report();
        return;
    }
    unix_call = found;
    status = unix_call(unix_handle, DXCL_UNIX_HELLO, &hello);
    if (status || hello.abi != DXCL_UNIX_ABI)
        snprintf(bridge_status, sizeof(bridge_status), "dxclcl.so does not match dxclcl.dll (unix-call contract %u, this DLL's %u, "
                  "status 0x%08lx): install both from one dxcl with `dxcl wine install`",
                  hello.abi, DXCL_UNIX_ABI, (unsigned long)status);
    else if (!hello.host)
        snprintf(bridge_status, sizeof(bridge_status), "the host's OpenCL could not be opened: %s", hello.reason);
    if (bridge_status[0])
    {
        unix_call = NULL;
        report();
        return;
    }
    start_servers();
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, void *reserved)
{
    if (reason == DLL_PROCESS_ATTACH)
    {
        DisableThreadLibraryCalls(instance);
        attach(instance);
    }
    else if (reason == DLL_PROCESS_DETACH)
    {
        /* At process exit (reserved set) Wine has told the other threads to end and is ending them
         * asynchronously: a server woken now would run its thread's exit code while Wine's SIGQUIT
         * reaches it, which crashes Wine 10's handler. Only an unload (FreeLibrary) wakes them. */
        struct dxcl_stop stop = {reserved != NULL};
        call_unix(DXCL_UNIX_STOP, &stop);
    }
    return TRUE;
}

/* Why the bridge cannot reach the host's OpenCL, or NULL when it can (`dxcl wine info`). */
/* Exported by name (dxclcl.def). */
const char * WINAPI dxclclStatus(void)
{
    return bridge_status[0] ? bridge_status : NULL;
}

void dxcl_unix_call(struct dxcl_call *call)
{
    if (call_unix(DXCL_UNIX_CALL, call))
    {
        /* No host OpenCL: no platform; every other call has no valid object to act on. */
        call->ret = call->fn == DXCL_FN_clGetPlatformIDs ? (UINT64)(INT64)-1001 /* CL_PLATFORM_NOT_FOUND_KHR */
                                                          : (UINT64)(INT64)CL_INVALID_OPERATION;
        if (call->fn == DXCL_FN_clGetPlatformIDs && call->args[2])
            *(cl_uint *)(ULONG_PTR)call->args[2] = 0;
    }
}

/* The callback thread: waits on the unix side for the next callback and runs it. A 32-bit DLL's
 * block has room for the context error callback's text (unixlib.h). */
static DWORD WINAPI callback_thread(void *unused)
{
#ifdef _WIN64
    struct dxcl_callback block = {0};
    struct dxcl_callback *cb = &block;
#else
    struct dxcl_callback_wow64 block = {0};
    struct dxcl_callback *cb = &block.cb;
#endif
    (void)unused;
    for (;;)
    {
        if (call_unix(DXCL_UNIX_NEXT_CALLBACK, &block)) return 0;
        switch (cb->kind)
        {
        case DXCL_CB_CONTEXT_NOTIFY:
            ((void (CL_CALLBACK *)(const char *, const void *, size_t, void *))(ULONG_PTR)cb->fn)(
                (const char *)(ULONG_PTR)cb->args[0], (const void *)(ULONG_PTR)cb->args[1],
                (size_t)cb->args[2], (void *)(ULONG_PTR)cb->args[3]);
            break;
        case DXCL_CB_OBJECT:
            ((void (CL_CALLBACK *)(void *, void *))(ULONG_PTR)cb->fn)(
                (void *)(ULONG_PTR)cb->args[0], (void *)(ULONG_PTR)cb->args[1]);
            break;
        case DXCL_CB_EVENT:
            ((void (CL_CALLBACK *)(cl_event, cl_int, void *))(ULONG_PTR)cb->fn)(
                (cl_event)(ULONG_PTR)cb->args[0], (cl_int)cb->args[1], (void *)(ULONG_PTR)cb->args[2]);
            break;
        case DXCL_CB_SVM_FREE:
            ((void (CL_CALLBACK *)(cl_command_queue, cl_uint, void **, void *))(ULONG_PTR)cb->fn)(
                (cl_command_queue)(ULONG_PTR)cb->args[0], (cl_uint)cb->args[1],
                (void **)(ULONG_PTR)cb->args[2], (void *)(ULONG_PTR)cb->args[3]);
            break;
        case DXCL_CB_NATIVE_KERNEL:
            ((void (CL_CALLBACK *)(void *))(ULONG_PTR)cb->fn)((void *)(ULONG_PTR)cb->args[0]);
            break;
        }
        cb->done = cb->id;
    }
}

static INIT_ONCE callbacks_once = INIT_ONCE_STATIC_INIT;

static BOOL CALLBACK start_thread(INIT_ONCE *once, void *param, void **context)
{
    HANDLE thread = CreateThread(NULL, 0, callback_thread, NULL, 0, NULL);
    (void)once; (void)param; (void)context;
    if (thread) CloseHandle(thread);
    return TRUE;
}

void dxcl_start_callbacks(void)
{
    InitOnceExecuteOnce(&callbacks_once, start_thread, NULL, NULL);
}

/* --- Direct3D device lookup -------------------------------------------------------------- */

/* DXVK's IDXGIVkInteropAdapter (dxgi_interfaces.h): its Vulkan instance and physical device. */
DEFINE_GUID(IID_IDXGIVkInteropAdapter, 0x3a6d8f2c, 0xb0e8, 0x4ab4, 0xb4, 0xdc, 0x4f, 0xd2, 0x48, 0x91, 0xbf, 0xa5);
typedef struct IDXGIVkInteropAdapter IDXGIVkInteropAdapter;
struct IDXGIVkInteropAdapterVtbl
{
    HRESULT (STDMETHODCALLTYPE *QueryInterface)(IDXGIVkInteropAdapter *, REFIID, void **);
    ULONG (STDMETHODCALLTYPE *AddRef)(IDXGIVkInteropAdapter *);
    ULONG (STDMETHODCALLTYPE *Release)(IDXGIVkInteropAdapter *);
    void (STDMETHODCALLTYPE *GetVulkanHandles)(IDXGIVkInteropAdapter *, VkInstance *, VkPhysicalDevice *);
};
struct IDXGIVkInteropAdapter { const struct IDXGIVkInteropAdapterVtbl *lpVtbl; };

/* Wine's device properties of a display GPU: its LUID, and the UUID of its Vulkan device. */
DEFINE_DEVPROPKEY(DXCL_DEVPKEY_GPU_LUID, 0x60b193cb, 0x5276, 0x4d0f, 0x96, 0xfc, 0xf1, 0x73, 0xab, 0xad, 0x3e, 0xc6, 2);
DEFINE_DEVPROPKEY(DXCL_DEVPKEY_GPU_VULKAN_UUID, 0x233a9ef3, 0xafc4, 0x4abd, 0xb5, 0x64, 0xc3, 0x2f, 0x21, 0xf1, 0x53, 0x5c, 2);

static void vulkan_properties(PFN_vkGetPhysicalDeviceProperties2 props2, VkPhysicalDevice pd,
                              struct dxcl_vulkan_device *out)
{
    VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id};
    props2(pd, &p);
    memcpy(out->uuid, id.deviceUUID, 16);
    memcpy(out->luid, id.deviceLUID, 8);
    out->luid_valid = id.deviceLUIDValid;
    out->vendor = p.properties.vendorID;
    out->device = p.properties.deviceID;
    out->type = p.properties.deviceType;
    lstrcpynA(out->name, p.properties.deviceName, sizeof(out->name));
}

static void record_vulkan_device(PFN_vkGetPhysicalDeviceProperties2 props2, VkPhysicalDevice device,
                                 uint32_t index, void *facts)
{
    vulkan_properties(props2, device, &((struct dxcl_adapter_facts *)facts)->vulkan[index]);
}

/* The Vulkan devices winevulkan lists, and DXVK's physical device of `adapter` if it has one. */
static void vulkan_facts(IDXGIAdapter *adapter, struct dxcl_adapter_facts *facts)
{
    HMODULE vulkan = LoadLibraryA("vulkan-1.dll");
    PFN_vkGetInstanceProcAddr gipa = vulkan ? (PFN_vkGetInstanceProcAddr)(void *)GetProcAddress(vulkan, "vkGetInstanceProcAddr") : NULL;
    IDXGIVkInteropAdapter *dxvk;

    if (!gipa) return;
    if (SUCCEEDED(IDXGIAdapter_QueryInterface(adapter, &IID_IDXGIVkInteropAdapter, (void **)&dxvk)))
    {
        VkInstance dxvk_instance = NULL;
        VkPhysicalDevice pd = NULL;
        PFN_vkGetPhysicalDeviceProperties2 props2;
        dxvk->lpVtbl->GetVulkanHandles(dxvk, &dxvk_instance, &pd);
        props2 = dxvk_instance ? (PFN_vkGetPhysicalDeviceProperties2)(void *)gipa(dxvk_instance, "vkGetPhysicalDeviceProperties2") : NULL;
        if (props2 && pd)
        {
            struct dxcl_vulkan_device d;
            vulkan_properties(props2, pd, &d);
            memcpy(facts->dxvk_uuid, d.uuid, 16);
            facts->dxvk_known = 1;
        }
        dxvk->lpVtbl->Release(dxvk);
    }
    facts->vulkan_count = vulkan_devices(DXCL_MAX_VULKAN_DEVICES, record_vulkan_device, facts);
}

/* The Vulkan UUID Wine records for the display GPU whose LUID is `luid`. */
static void gpu_facts(LUID luid, struct dxcl_adapter_facts *facts)
{
    HDEVINFO set = SetupDiGetClassDevsW(&GUID_DEVCLASS_DISPLAY, NULL, NULL, DIGCF_PRESENT);
    SP_DEVINFO_DATA dev = {sizeof(dev)};
    if (set == INVALID_HANDLE_VALUE) return;
    for (DWORD i = 0; SetupDiEnumDeviceInfo(set, i, &dev); i++)
    {
        DEVPROPTYPE type;
        LUID gpu_luid;
        BYTE uuid[16];
        static const BYTE zero[16];
        if (!SetupDiGetDevicePropertyW(set, &dev, &DXCL_DEVPKEY_GPU_LUID, &type, (BYTE *)&gpu_luid, sizeof(gpu_luid), NULL, 0)
            || gpu_luid.LowPart != luid.LowPart || gpu_luid.HighPart != luid.HighPart)
            continue;
        if (SetupDiGetDevicePropertyW(set, &dev, &DXCL_DEVPKEY_GPU_VULKAN_UUID, &type, uuid, sizeof(uuid), NULL, 0)
            && memcmp(uuid, zero, 16))
        {
            memcpy(facts->gpu_uuid, uuid, 16);
            facts->gpu_known = 1;
        }
        break;
    }
    SetupDiDestroyDeviceInfoList(set);
}

/* The adapter's description as the unix side reads it: DXGI_ADAPTER_DESC1 in the 64-bit layout,
 * where its three SIZE_T fields take 8 bytes each (a 32-bit DLL's take 4). */
static void put_desc(const DXGI_ADAPTER_DESC1 *d, BYTE out[312])
{
#ifdef _WIN64
    memcpy(out, d, sizeof(*d));
#else
    UINT64 sizes[3] = {d->DedicatedVideoMemory, d->DedicatedSystemMemory, d->SharedSystemMemory};
    memcpy(out, d, offsetof(DXGI_ADAPTER_DESC1, DedicatedVideoMemory));
    memcpy(out + 272, sizes, sizeof(sizes));
    memcpy(out + 296, &d->AdapterLuid, sizeof(d->AdapterLuid));
    memcpy(out + 304, &d->Flags, sizeof(d->Flags));
#endif
}
_Static_assert(offsetof(DXGI_ADAPTER_DESC1, DedicatedVideoMemory) == 272, "DXGI_ADAPTER_DESC1");

/* What identifies the adapter behind `object` (an adapter, or a device of `version` 10 or 11). */
static void adapter_facts(IUnknown *object, BOOL device, int version, struct dxcl_adapter_facts *facts)
{
    IDXGIAdapter *adapter = NULL;
    IDXGIAdapter1 *adapter1;
    DXGI_ADAPTER_DESC1 desc = {0};
    if (device)
    {
        IUnknown *d3d;
        IDXGIDevice *dxgi;
        if (FAILED(IUnknown_QueryInterface(object, version == 10 ? &IID_ID3D10Device : &IID_ID3D11Device, (void **)&d3d)))
            return;
        if (SUCCEEDED(IUnknown_QueryInterface(d3d, &IID_IDXGIDevice, (void **)&dxgi)))
        {
            IDXGIDevice_GetAdapter(dxgi, &adapter);
            IDXGIDevice_Release(dxgi);
        }
        IUnknown_Release(d3d);
    }
    else if (FAILED(IUnknown_QueryInterface(object, &IID_IDXGIAdapter, (void **)&adapter)))
        adapter = NULL;
    if (!adapter) return;
    facts->is_adapter = 1;
    if (SUCCEEDED(IDXGIAdapter_QueryInterface(adapter, &IID_IDXGIAdapter1, (void **)&adapter1)))
    {
        facts->has_desc1 = SUCCEEDED(IDXGIAdapter1_GetDesc1(adapter1, &desc));
        IDXGIAdapter1_Release(adapter1);
    }
    /* DXGI_ADAPTER_DESC is DXGI_ADAPTER_DESC1 without Flags (left 0). */
    if (!facts->has_desc1) IDXGIAdapter_GetDesc(adapter, (DXGI_ADAPTER_DESC *)&desc);
    put_desc(&desc, facts->desc);
    gpu_facts(desc.AdapterLuid, facts);
    vulkan_facts(adapter, facts);
    IDXGIAdapter_Release(adapter);
}

static cl_int device_ids(UINT32 ext, cl_platform_id platform, cl_uint source, void *object,
                         cl_uint set, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices)
{
    struct dxcl_device_ids *p = calloc(1, sizeof(*p));
    cl_int ret;
    int version = ext % 2 ? 11 : 10;
    cl_uint device_source = version == 10 ? 0x4010 : 0x4019, adapter_source = version == 10 ? 0x4011 : 0x401A;
    if (!p) return CL_OUT_OF_HOST_MEMORY;
    p->ext = ext;
    p->platform = (ULONG_PTR)platform;
    p->source = source;
    p->object_null = !object;
    p->set = set;
    p->num_entries = num_entries;
    p->devices = (ULONG_PTR)devices;
    p->num_devices = (ULONG_PTR)num_devices;
    if (object && (source == device_source || source == adapter_source))
        adapter_facts(object, source == device_source, version, &p->facts);
    ret = call_unix(DXCL_UNIX_DEVICE_IDS, p) ? CL_INVALID_PLATFORM : (cl_int)p->ret;
    free(p);
    return ret;
}

/* The sharing entry points (../gen/sharing.h numbers them for the unix side): each wrapper packs
 * its arguments into one unix call. */
#define DEVICE_IDS(name, ext) \
    static cl_int WINAPI bridge_##name(cl_platform_id platform, cl_uint source, void *object, cl_uint set, \
                                       cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices) \
    { return device_ids(ext, platform, source, object, set, num_entries, devices, num_devices); }
DXCL_DEVICE_IDS(DEVICE_IDS)

/* The others: the unix side gives the layer stand-ins for the program's Direct3D objects
 * (crates/dxcl-wine/src/d3d.rs). Without a unix side, a creation (`creates`) fails through its
 * `errcode`; acquire and release return the code. */
static UINT64 d3d_call(UINT32 function, BOOL creates, cl_int *errcode, UINT64 a0, UINT64 a1, UINT64 a2,
                       UINT64 a3, UINT64 a4, UINT64 a5)
{
    struct dxcl_d3d_call p = {function, 0, {a0, a1, a2, a3, a4, a5}, 0};
    if (!call_unix(DXCL_UNIX_D3D_CALL, &p)) return p.ret;
    if (!creates) return (UINT64)(INT64)CL_INVALID_OPERATION;
    if (errcode) *errcode = CL_INVALID_OPERATION;
    return 0;
}

#define P(x) ((UINT64)(ULONG_PTR)(x))
#define BUFFER(name, n) \
    static cl_mem WINAPI bridge_##name(cl_context c, cl_mem_flags f, void *r, cl_int *e) \
    { return (cl_mem)(ULONG_PTR)d3d_call(n, TRUE, e, P(c), f, P(r), P(e), 0, 0); }
#define TEXTURE2D(name, n) \
    static cl_mem WINAPI bridge_##name(cl_context c, cl_mem_flags f, void *r, UINT s, cl_int *e) \
    { return (cl_mem)(ULONG_PTR)d3d_call(n, TRUE, e, P(c), f, P(r), s, P(e), 0); }
#define TEXTURE3D TEXTURE2D
#define ENQUEUE(name, n) \
    static cl_int WINAPI bridge_##name(cl_command_queue q, cl_uint k, const cl_mem *m, cl_uint w, const cl_event *l, cl_event *e) \
    { return (cl_int)d3d_call(n, FALSE, NULL, P(q), k, P(m), w, P(l), P(e)); }
#define ACQUIRE ENQUEUE
#define RELEASE ENQUEUE
#define D3D_CALL(name, n, kind) kind(name, n)
DXCL_D3D_CALLS(D3D_CALL)

/* The extension functions a Windows program can get: those wrapped here. */
#define ENTRY(name, ...) {#name, (void *)bridge_##name},
static const struct { const char *name; void *function; } extension_functions[] =
{
    DXCL_DEVICE_IDS(ENTRY)
    DXCL_D3D_CALLS(ENTRY)
};

static void *extension_function(cl_platform_id platform, const char *name)
{
    struct dxcl_extension p = {(ULONG_PTR)platform, (ULONG_PTR)name};
    if (!name) return NULL;
    for (size_t i = 0; i < ARRAYSIZE(extension_functions); i++)
    {
        if (strcmp(name, extension_functions[i].name)) continue;
        /* Only where the host (dxcl's layer) has the function too. */
        if (call_unix(DXCL_UNIX_EXTENSION, &p) || !p.present) return NULL;
        return extension_functions[i].function;
    }
    return NULL;
}

void * WINAPI clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *func_name)
{
    return extension_function(platform, func_name);
}

void * WINAPI clGetExtensionFunctionAddress(const char *func_name)
{
    return extension_function(NULL, func_name);
}
