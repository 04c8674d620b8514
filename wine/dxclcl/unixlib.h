/* The contract between dxclcl.dll (Windows side) and dxclcl.so (unix side, crates/dxcl-wine):
 * the unix calls and their parameter blocks. crates/dxcl-wine/src/unixlib.rs mirrors it, and its
 * tests check the sizes and offsets written here. Both sides run in one address space, so pointers
 * cross as they are. Every field has a fixed width, so a 32-bit dxclcl.dll (Wine's new WoW64 mode)
 * passes the same blocks, to the table `__wine_unix_call_wow64_funcs`, which converts what their
 * arguments point to (crates/dxcl-wine/src/wow64). */
#ifndef DXCL_WINE_UNIXLIB_H
#define DXCL_WINE_UNIXLIB_H

#include "../gen/calls.h"
#include "../gen/remote.h"

enum dxcl_unix_call
{
    DXCL_UNIX_CALL = 0,           /* struct dxcl_call: one core entry point */
    DXCL_UNIX_NEXT_CALLBACK = 1,  /* struct dxcl_callback: wait for the next callback to run */
    DXCL_UNIX_DEVICE_IDS = 2,     /* struct dxcl_device_ids: clGetDeviceIDsFromD3D1x{KHR,NV} */
    DXCL_UNIX_EXTENSION = 3,      /* struct dxcl_extension: does the host have an extension function */
    DXCL_UNIX_START = 4,          /* struct dxcl_start: the servers of stand-ins' calls start */
    DXCL_UNIX_STOP = 5,           /* struct dxcl_stop: the DLL detaches, stand-ins' calls fail */
    DXCL_UNIX_NEXT_REQUEST = 6,   /* struct dxcl_request: a server waits for a method to call */
    DXCL_UNIX_REVERSE = 7,        /* struct dxcl_reverse: AddRef/Release of a unix object's wrapper */
    DXCL_UNIX_D3D_CALL = 8,       /* struct dxcl_d3d_call: clCreateFromD3D1x*, acquire, release */
    DXCL_UNIX_FIRST_DONE = 9,     /* struct dxcl_request: its deferred method has run */
    DXCL_UNIX_HELLO = 10,         /* struct dxcl_hello: at attach, is this the matching unix side */
};

/* The version of this contract: dxclcl.dll refuses a dxclcl.so that answers another. Raise it with
 * every change of a call's number or of a parameter block. */
#define DXCL_UNIX_ABI 5

struct dxcl_stop
{
    UINT32 process_exit;          /* the process ends: Wine ends the servers, which are not woken */
};

struct dxcl_hello
{
    UINT32 abi;                   /* out: the unix side's DXCL_UNIX_ABI */
    UINT32 host;                  /* out: the host's libOpenCL.so.1 is open */
    char reason[256];             /* out: why not (dlerror), NUL-terminated */
};

struct dxcl_call
{
    UINT32 fn;                    /* enum dxcl_entry_point */
    UINT32 pad;
    UINT64 args[DXCL_MAX_ARGS];   /* each argument widened to 64 bits */
    UINT64 ret;
};

enum dxcl_callback_kind
{
    DXCL_CB_CONTEXT_NOTIFY = 1,   /* void (*)(const char *, const void *, size_t, void *) */
    DXCL_CB_OBJECT = 2,           /* void (*)(handle, void *): destructors, builds, program release */
    DXCL_CB_EVENT = 3,            /* void (*)(cl_event, cl_int, void *) */
    DXCL_CB_SVM_FREE = 4,         /* void (*)(cl_command_queue, cl_uint, void **, void *) */
    DXCL_CB_NATIVE_KERNEL = 5,    /* void (*)(void *) */
};

struct dxcl_callback
{
    UINT64 done;                  /* in: the id of the callback just run, 0 for none */
    UINT64 id;                    /* out: this callback's id */
    UINT32 kind;                  /* out: enum dxcl_callback_kind */
    UINT32 pad;
    UINT64 fn;                    /* out: the program's function */
    UINT64 args[4];               /* out: its arguments */
};

/* NEXT_CALLBACK's block from a 32-bit dxclcl.dll (Wine's new WoW64 mode): the context error
 * callback's text is copied into it, where 32-bit code can read it. */
struct dxcl_callback_wow64
{
    struct dxcl_callback cb;
    char text[1024];
};

#define DXCL_MAX_VULKAN_DEVICES 8

/* What the Windows side learns of a DXGI adapter for the unix side to identify it. */
struct dxcl_vulkan_device
{
    BYTE uuid[16];
    BYTE luid[8];
    UINT32 luid_valid;
    UINT32 vendor;
    UINT32 device;
    UINT32 type;                  /* VkPhysicalDeviceType */
    char name[256];
};

struct dxcl_adapter_facts
{
    UINT32 is_adapter;            /* the object is a DXGI adapter, or a device of the version */
    UINT32 has_desc1;             /* desc came from IDXGIAdapter1::GetDesc1 */
    BYTE desc[312];               /* DXGI_ADAPTER_DESC1 (or DXGI_ADAPTER_DESC, Flags 0) */
    UINT32 dxvk_known;            /* IDXGIVkInteropAdapter named the physical device below */
    UINT32 gpu_known;             /* the display GPU with the adapter's LUID gave a Vulkan UUID */
    BYTE dxvk_uuid[16];
    BYTE gpu_uuid[16];
    UINT32 vulkan_count;
    UINT32 pad;
    struct dxcl_vulkan_device vulkan[DXCL_MAX_VULKAN_DEVICES];
};

struct dxcl_device_ids
{
    UINT32 ext;                   /* 0-3: DXCL_DEVICE_IDS in ../gen/sharing.h */
    UINT32 source;
    UINT64 platform;
    UINT64 object_null;           /* the program passed NULL */
    UINT32 set;
    UINT32 num_entries;
    UINT64 devices;
    UINT64 num_devices;
    INT64 ret;
    struct dxcl_adapter_facts facts;
};

struct dxcl_extension
{
    UINT64 platform;              /* 0: clGetExtensionFunctionAddress */
    UINT64 name;                  /* const char * */
    UINT32 present;               /* out: the host's address is not NULL */
    UINT32 pad;
};

/* The unix side's stand-ins for the program's COM objects call their methods through servers:
 * threads of this side that wait in DXCL_UNIX_NEXT_REQUEST and call method `slot` of `object`. */
struct dxcl_start
{
    UINT64 wrapper_vtbl;          /* the vtable of wrappers of unix objects (IUnknown methods) */
    /* A 32-bit DLL's block of memory its code reaches, where the unix side puts the arguments of
     * the methods it calls and its wrappers; 0 from a 64-bit DLL. */
    UINT64 low;
    UINT64 low_size;
};

struct dxcl_request
{
    UINT64 done_id;               /* in: the request just served, 0 for none */
    UINT64 done_ret;              /* in: what its method returned (rax) */
    UINT64 done_ns;               /* in: how long the method took, in nanoseconds */
    UINT64 id;                    /* out: this request */
    UINT64 object;                /* out: the Windows COM object */
    UINT32 slot;                  /* out: the method's vtable slot */
    UINT32 nargs;                 /* out: how many of args the method takes after `this` */
    UINT64 args[DXCL_MAX_METHOD_ARGS];
    /* out: a deferred method (an Unmap, no result) to call first, then report with
     * DXCL_UNIX_FIRST_DONE; first_object 0 for none */
    UINT64 first_object;
    UINT32 first_slot;
    UINT32 first_nargs;
    UINT64 first_args[DXCL_MAX_METHOD_ARGS];
};

/* A Windows-side wrapper of a unix COM object, as the unix side lays it out. */
struct dxcl_wrapper
{
    const void *vtbl;
    UINT64 unix_object;
};

struct dxcl_reverse
{
    UINT64 wrapper;               /* struct dxcl_wrapper * */
    UINT32 method;                /* 1 AddRef, 2 Release */
    UINT32 ret;                   /* out: the unix object's count */
};

struct dxcl_d3d_call
{
    UINT32 function;              /* 0-19: DXCL_D3D_CALLS in ../gen/sharing.h */
    UINT32 pad;
    UINT64 args[8];
    UINT64 ret;
};

#endif
