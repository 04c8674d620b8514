/* A Windows program in the shape of an image editor that accelerates with OpenCL (MinGW-w64, run
 * under Wine with dxcl's bridge): it finds its OpenCL device from the DXGI adapter its Direct3D 10
 * device runs on (cl_khr_d3d10_sharing), makes a context on that device, shares two textures,
 * inverts one into the other with a kernel, and reads the result back through Direct3D. Prints
 * "N passed, M failed"; exits 1 on any failure. */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <windows.h>
#include <initguid.h>
#include <d3d10.h>
#include <dxgi.h>
#include <stdio.h>
#include <string.h>
#include <CL/cl.h>
#include <CL/cl_d3d10.h>

static int passed, failed;

#define CHECK(cond, ...) do { \
    if (cond) passed++; \
    else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } \
} while (0)

#define SIZE 64

static const char *source =
    "kernel void invert(read_only image2d_t src, write_only image2d_t dst) {\n"
    "    int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "    float4 c = read_imagef(src, p);\n"
    "    write_imagef(dst, p, (float4)(1.0f - c.x, 1.0f - c.y, 1.0f - c.z, c.w));\n"
    "}\n";

static ID3D10Texture2D *texture(ID3D10Device *device, const UINT *data)
{
    D3D10_TEXTURE2D_DESC d = {SIZE, SIZE, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D10_USAGE_DEFAULT,
                              D3D10_BIND_SHADER_RESOURCE | D3D10_BIND_RENDER_TARGET, 0, 0};
    D3D10_SUBRESOURCE_DATA init = {data, SIZE * 4, 0};
    ID3D10Texture2D *t = NULL;
    HRESULT hr = ID3D10Device_CreateTexture2D(device, &d, data ? &init : NULL, &t);
    CHECK(SUCCEEDED(hr), "CreateTexture2D: %lx", hr);
    return t;
}

/* The texture's texels, through a STAGING copy. */
static void read_back(ID3D10Device *device, ID3D10Texture2D *t, UINT *out)
{
    D3D10_TEXTURE2D_DESC d = {SIZE, SIZE, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D10_USAGE_STAGING, 0,
                              D3D10_CPU_ACCESS_READ, 0};
    ID3D10Texture2D *staging;
    D3D10_MAPPED_TEXTURE2D m;
    if (FAILED(ID3D10Device_CreateTexture2D(device, &d, NULL, &staging))) return;
    ID3D10Device_CopyResource(device, (ID3D10Resource *)staging, (ID3D10Resource *)t);
    if (SUCCEEDED(ID3D10Texture2D_Map(staging, 0, D3D10_MAP_READ, 0, &m)))
    {
        for (int y = 0; y < SIZE; y++) memcpy(out + y * SIZE, (char *)m.pData + y * m.RowPitch, SIZE * 4);
        ID3D10Texture2D_Unmap(staging, 0);
    }
    ID3D10Texture2D_Release(staging);
}

int main(void)
{
    static UINT pattern[SIZE * SIZE], result[SIZE * SIZE];
    IDXGIFactory *factory;
    IDXGIAdapter *adapter;
    ID3D10Device *device = NULL;
    cl_platform_id platform;
    cl_device_id cl_device;
    cl_uint n = 0;
    cl_int err;

    for (int i = 0; i < SIZE * SIZE; i++) pattern[i] = 0xff000000u | (i * 2654435761u >> 8);
    CHECK(SUCCEEDED(CreateDXGIFactory(&IID_IDXGIFactory, (void **)&factory)), "CreateDXGIFactory");
    CHECK(SUCCEEDED(IDXGIFactory_EnumAdapters(factory, 0, &adapter)), "EnumAdapters");
    CHECK(SUCCEEDED(D3D10CreateDevice(adapter, D3D10_DRIVER_TYPE_HARDWARE, NULL, 0, D3D10_SDK_VERSION, &device)),
          "D3D10CreateDevice");
    CHECK(clGetPlatformIDs(1, &platform, NULL) == CL_SUCCESS, "clGetPlatformIDs");
    clGetDeviceIDsFromD3D10KHR_fn get_ids = (clGetDeviceIDsFromD3D10KHR_fn)
        clGetExtensionFunctionAddressForPlatform(platform, "clGetDeviceIDsFromD3D10KHR");
    clCreateFromD3D10Texture2DKHR_fn from_texture = (clCreateFromD3D10Texture2DKHR_fn)
        clGetExtensionFunctionAddressForPlatform(platform, "clCreateFromD3D10Texture2DKHR");
    clEnqueueAcquireD3D10ObjectsKHR_fn acquire = (clEnqueueAcquireD3D10ObjectsKHR_fn)
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireD3D10ObjectsKHR");
    clEnqueueReleaseD3D10ObjectsKHR_fn release = (clEnqueueReleaseD3D10ObjectsKHR_fn)
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseD3D10ObjectsKHR");
    CHECK(get_ids && from_texture && acquire && release, "the extension's entry points");
    if (!device || !get_ids || !from_texture || !acquire || !release) goto done;

    /* The device lookup an image editor makes: the adapter's preferred OpenCL device. */
    err = get_ids(platform, CL_D3D10_DXGI_ADAPTER_KHR, adapter, CL_PREFERRED_DEVICES_FOR_D3D10_KHR, 1, &cl_device, &n);
    CHECK(err == CL_SUCCESS && n >= 1, "preferred devices: %d, %u", err, n);
    if (err != CL_SUCCESS) goto done;

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                     CL_CONTEXT_D3D10_DEVICE_KHR, (cl_context_properties)device, 0};
    cl_context ctx = clCreateContext(props, 1, &cl_device, NULL, NULL, &err);
    CHECK(err == CL_SUCCESS, "clCreateContext on the D3D10 device: %d", err);
    if (err != CL_SUCCESS) goto done;
    cl_context_properties got[8] = {0};
    clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof got, got, NULL);
    CHECK(got[2] == CL_CONTEXT_D3D10_DEVICE_KHR && got[3] == (cl_context_properties)device,
          "CL_CONTEXT_PROPERTIES names the program's own device");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cl_device, NULL, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(clBuildProgram(prog, 1, &cl_device, "", NULL, NULL) == CL_SUCCESS, "build");
    cl_kernel k = clCreateKernel(prog, "invert", &err);

    ID3D10Texture2D *src = texture(device, pattern), *dst = texture(device, NULL);
    ULONG before = (ID3D10Texture2D_AddRef(src), ID3D10Texture2D_Release(src));
    cl_mem in = from_texture(ctx, CL_MEM_READ_ONLY, src, 0, &err);
    CHECK(err == CL_SUCCESS, "clCreateFromD3D10Texture2DKHR (source): %d", err);
    cl_mem out = from_texture(ctx, CL_MEM_WRITE_ONLY, dst, 0, &err);
    CHECK(err == CL_SUCCESS, "clCreateFromD3D10Texture2DKHR (target): %d", err);
    CHECK(from_texture(ctx, CL_MEM_READ_ONLY, src, 0, &err) == NULL
          && err == CL_INVALID_D3D10_RESOURCE_KHR, "a second object of one subresource: %d", err);
    ID3D10Resource *named = NULL;
    clGetMemObjectInfo(in, CL_MEM_D3D10_RESOURCE_KHR, sizeof named, &named, NULL);
    CHECK(named == (ID3D10Resource *)src, "CL_MEM_D3D10_RESOURCE_KHR names the program's texture");
    cl_uint sub = 7;
    clGetImageInfo(in, CL_IMAGE_D3D10_SUBRESOURCE_KHR, sizeof sub, &sub, NULL);
    CHECK(sub == 0, "CL_IMAGE_D3D10_SUBRESOURCE_KHR: %u", sub);

    /* A kernel may not touch them before they are acquired. */
    size_t global[2] = {SIZE, SIZE};
    clSetKernelArg(k, 0, sizeof in, &in);
    clSetKernelArg(k, 1, sizeof out, &out);
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL) == CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR,
          "a kernel on objects not acquired");
    cl_mem both[2] = {in, out};
    cl_event acquired;
    CHECK(acquire(q, 2, both, 0, NULL, &acquired) == CL_SUCCESS, "acquire");
    cl_command_type type = 0;
    clGetEventInfo(acquired, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    CHECK(type == CL_COMMAND_ACQUIRE_D3D10_OBJECTS_KHR, "the acquire's event type: 0x%x", type);
    CHECK(acquire(q, 1, &in, 0, NULL, NULL) == CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR, "acquired twice");
    CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL) == CL_SUCCESS, "the kernel");
    CHECK(release(q, 2, both, 0, NULL, NULL) == CL_SUCCESS, "release");
    CHECK(release(q, 1, &in, 0, NULL, NULL) == CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR, "released twice");
    CHECK(clFinish(q) == CL_SUCCESS, "clFinish");

    read_back(device, dst, result);
    int wrong = 0;
    for (int i = 0; i < SIZE * SIZE; i++)
    {
        UINT p = pattern[i], want = 0xff000000u | (~p & 0x00ffffffu);
        wrong += result[i] != want;
    }
    CHECK(wrong == 0, "%d of %d texels not inverted", wrong, SIZE * SIZE);

    clReleaseEvent(acquired);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    ULONG after = (ID3D10Texture2D_AddRef(src), ID3D10Texture2D_Release(src));
    CHECK(after == before, "the texture's references are back: %lu, was %lu", after, before);
    ID3D10Texture2D_Release(src);
    ID3D10Texture2D_Release(dst);
done:
    if (device) ID3D10Device_Release(device);
    printf("affinity: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
