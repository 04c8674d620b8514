// Direct3D 11 and OpenCL sharing as Windows code writes it: ComPtr for every interface, __uuidof,
// IID_PPV_ARGS, _T and _tmain. Standard C++ and the Windows, Direct3D and Khronos APIs only, so this
// file compiles unchanged against the Windows SDK; on Linux it builds against dxcl's installed
// headers (pkg-config) and runs with dxcl's layer (OPENCL_LAYERS) under valgrind, from `make test-c`.
//
// Direct3D fills a buffer; OpenCL, through cl_khr_d3d11_sharing, transforms the buffer in place and
// writes a texture from it; Direct3D reads both back through staging resources and checks every value.
#define CL_TARGET_OPENCL_VERSION 300

#include <windows.h>
#include <tchar.h>
#include <wrl/client.h>
#include <d3d11.h>
#include <CL/cl.h>
#include <CL/cl_d3d11.h>

#include <cstdio>
#include <cstring>
#include <vector>

using Microsoft::WRL::ComPtr;

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                                          \
    } while (0)

static const UINT kWidth = 64, kHeight = 32;

static const char kSource[] =
    "kernel void shade(global uint *values, write_only image2d_t image, uint width)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    uint i = (uint)y * width + (uint)x;\n"
    "    uint v = values[i];\n"
    "    values[i] = v * 3u + 1u;\n"
    "    write_imagef(image, (int2)(x, y), (float4)(v & 255u, x & 255, y & 255, 255) / 255.0f);\n"
    "}\n";

static UINT initial_value(UINT i) { return i * 2654435761u; }

// The five cl_khr_d3d11_sharing entry points used here, from the platform that offers them.
struct D3D11Sharing {
    clGetDeviceIDsFromD3D11KHR_fn GetDeviceIDs = nullptr;
    clCreateFromD3D11BufferKHR_fn CreateFromBuffer = nullptr;
    clCreateFromD3D11Texture2DKHR_fn CreateFromTexture2D = nullptr;
    clEnqueueAcquireD3D11ObjectsKHR_fn EnqueueAcquire = nullptr;
    clEnqueueReleaseD3D11ObjectsKHR_fn EnqueueRelease = nullptr;
};

static bool has_extension(cl_platform_id platform, const char *name)
{
    size_t size = 0;
    if (clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS)
        return false;
    std::vector<char> text(size + 1, 0);
    clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, size, text.data(), nullptr);
    const size_t n = std::strlen(name);
    for (const char *p = text.data(); (p = std::strstr(p, name)) != nullptr; p += n)
        if ((p == text.data() || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

static cl_platform_id find_sharing_platform(D3D11Sharing &fn)
{
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0)
        return nullptr;
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
        if (!has_extension(p, "cl_khr_d3d11_sharing"))
            continue;
        fn.GetDeviceIDs = reinterpret_cast<clGetDeviceIDsFromD3D11KHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clGetDeviceIDsFromD3D11KHR"));
        fn.CreateFromBuffer = reinterpret_cast<clCreateFromD3D11BufferKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clCreateFromD3D11BufferKHR"));
        fn.CreateFromTexture2D = reinterpret_cast<clCreateFromD3D11Texture2DKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clCreateFromD3D11Texture2DKHR"));
        fn.EnqueueAcquire = reinterpret_cast<clEnqueueAcquireD3D11ObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clEnqueueAcquireD3D11ObjectsKHR"));
        fn.EnqueueRelease = reinterpret_cast<clEnqueueReleaseD3D11ObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clEnqueueReleaseD3D11ObjectsKHR"));
        if (fn.GetDeviceIDs && fn.CreateFromBuffer && fn.CreateFromTexture2D && fn.EnqueueAcquire && fn.EnqueueRelease)
            return p;
    }
    return nullptr;
}

// The OpenCL objects, released in reverse order of creation whatever path the test leaves by.
struct ClObjects {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem buffer = nullptr;
    cl_mem image = nullptr;
    ~ClObjects()
    {
        if (image)
            clReleaseMemObject(image);
        if (buffer)
            clReleaseMemObject(buffer);
        if (kernel)
            clReleaseKernel(kernel);
        if (program)
            clReleaseProgram(program);
        if (queue)
            clReleaseCommandQueue(queue);
        if (context)
            clReleaseContext(context);
    }
};

static void run()
{
    ComPtr<ID3D11Device> device;
    ComPtr<ID3D11DeviceContext> immediate;
    D3D_FEATURE_LEVEL level = D3D_FEATURE_LEVEL_9_1;
    HRESULT hr = D3D11CreateDevice(nullptr, D3D_DRIVER_TYPE_HARDWARE, nullptr, 0, nullptr, 0, D3D11_SDK_VERSION,
                                   &device, &level, &immediate);
    CHECK(SUCCEEDED(hr) && device && immediate);
    if (FAILED(hr))
        return;
    CHECK(level >= D3D_FEATURE_LEVEL_10_0);

    // The adapter, through As and IID_PPV_ARGS, named in the debug output.
    ComPtr<IDXGIDevice> dxgi_device;
    CHECK(SUCCEEDED(device.As(&dxgi_device)));
    ComPtr<IDXGIAdapter> adapter;
    if (dxgi_device)
        CHECK(SUCCEEDED(dxgi_device->GetAdapter(&adapter)));
    ComPtr<IDXGIFactory> factory;
    if (adapter) {
        CHECK(SUCCEEDED(adapter->GetParent(IID_PPV_ARGS(&factory))) && factory);
        DXGI_ADAPTER_DESC desc;
        ZeroMemory(&desc, sizeof desc);
        if (SUCCEEDED(adapter->GetDesc(&desc))) {
            OutputDebugStringA("d3d11_cl: adapter ");
            OutputDebugStringW(desc.Description);
            OutputDebugStringA("\n");
        }
    }

    D3D11Sharing cl;
    cl_platform_id platform = find_sharing_platform(cl);
    CHECK(platform != nullptr);
    if (!platform)
        return;

    cl_device_id cl_device = nullptr;
    cl_uint num_devices = 0;
    cl_int err = cl.GetDeviceIDs(platform, CL_D3D11_DEVICE_KHR, device.Get(), CL_PREFERRED_DEVICES_FOR_D3D11_KHR,
                                 1, &cl_device, &num_devices);
    CHECK(err == CL_SUCCESS && num_devices >= 1 && cl_device);
    if (err != CL_SUCCESS)
        return;

    ClObjects o;
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform),
        CL_CONTEXT_D3D11_DEVICE_KHR, reinterpret_cast<cl_context_properties>(device.Get()), 0};
    o.context = clCreateContext(properties, 1, &cl_device, nullptr, nullptr, &err);
    CHECK(err == CL_SUCCESS && o.context);
    if (!o.context)
        return;
    o.queue = clCreateCommandQueueWithProperties(o.context, cl_device, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    const char *source = kSource;
    o.program = clCreateProgramWithSource(o.context, 1, &source, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    if (!o.queue || !o.program)
        return;
    err = clBuildProgram(o.program, 1, &cl_device, "", nullptr, nullptr);
    CHECK(err == CL_SUCCESS);
    o.kernel = clCreateKernel(o.program, "shade", &err);
    CHECK(err == CL_SUCCESS);
    if (!o.kernel)
        return;

    // Direct3D resources: a buffer with initial data and a texture OpenCL will write.
    const UINT count = kWidth * kHeight;
    std::vector<UINT> values(count);
    for (UINT i = 0; i < count; i++)
        values[i] = initial_value(i);
    D3D11_BUFFER_DESC bd;
    ZeroMemory(&bd, sizeof bd);
    bd.ByteWidth = count * sizeof(UINT);
    bd.Usage = D3D11_USAGE_DEFAULT;
    bd.BindFlags = D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS;
    D3D11_SUBRESOURCE_DATA init = {values.data(), 0, 0};
    ComPtr<ID3D11Buffer> buffer;
    CHECK(SUCCEEDED(device->CreateBuffer(&bd, &init, &buffer)));

    D3D11_TEXTURE2D_DESC td;
    ZeroMemory(&td, sizeof td);
    td.Width = kWidth;
    td.Height = kHeight;
    td.MipLevels = 1;
    td.ArraySize = 1;
    td.Format = DXGI_FORMAT_R8G8B8A8_UNORM;
    td.SampleDesc.Count = 1;
    td.Usage = D3D11_USAGE_DEFAULT;
    td.BindFlags = D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_RENDER_TARGET;
    ComPtr<ID3D11Texture2D> texture;
    CHECK(SUCCEEDED(device->CreateTexture2D(&td, nullptr, texture.ReleaseAndGetAddressOf())));
    if (!buffer || !texture)
        return;

    // Shared with OpenCL; the memory objects name the Direct3D resources they came from.
    o.buffer = cl.CreateFromBuffer(o.context, CL_MEM_READ_WRITE, buffer.Get(), &err);
    CHECK(err == CL_SUCCESS && o.buffer);
    o.image = cl.CreateFromTexture2D(o.context, CL_MEM_WRITE_ONLY, texture.Get(), 0, &err);
    CHECK(err == CL_SUCCESS && o.image);
    if (!o.buffer || !o.image)
        return;
    ID3D11Buffer *named = nullptr;
    CHECK(clGetMemObjectInfo(o.buffer, CL_MEM_D3D11_RESOURCE_KHR, sizeof named, &named, nullptr) == CL_SUCCESS &&
          named == buffer.Get());

    // Acquire, run, release; Direct3D work issued after the release sees OpenCL's results.
    cl_mem objects[] = {o.buffer, o.image};
    const cl_uint width = kWidth;
    CHECK(cl.EnqueueAcquire(o.queue, 2, objects, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clSetKernelArg(o.kernel, 0, sizeof(cl_mem), &o.buffer) == CL_SUCCESS);
    CHECK(clSetKernelArg(o.kernel, 1, sizeof(cl_mem), &o.image) == CL_SUCCESS);
    CHECK(clSetKernelArg(o.kernel, 2, sizeof width, &width) == CL_SUCCESS);
    const size_t global[2] = {kWidth, kHeight};
    CHECK(clEnqueueNDRangeKernel(o.queue, o.kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(cl.EnqueueRelease(o.queue, 2, objects, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(o.queue) == CL_SUCCESS);

    // Read back through Direct3D: copies into staging resources, then Map.
    D3D11_BUFFER_DESC sbd = bd;
    sbd.Usage = D3D11_USAGE_STAGING;
    sbd.BindFlags = 0;
    sbd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    ComPtr<ID3D11Buffer> staging_buffer;
    CHECK(SUCCEEDED(device->CreateBuffer(&sbd, nullptr, &staging_buffer)));
    D3D11_TEXTURE2D_DESC staging_td = td;
    staging_td.Usage = D3D11_USAGE_STAGING;
    staging_td.BindFlags = 0;
    staging_td.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    ComPtr<ID3D11Texture2D> staging_texture;
    CHECK(SUCCEEDED(device->CreateTexture2D(&staging_td, nullptr, &staging_texture)));
    if (!staging_buffer || !staging_texture)
        return;
    ComPtr<ID3D11Resource> texture_resource;
    CHECK(SUCCEEDED(texture.As(&texture_resource)));
    immediate->CopyResource(staging_buffer.Get(), buffer.Get());
    immediate->CopyResource(staging_texture.Get(), texture_resource.Get());

    D3D11_MAPPED_SUBRESOURCE mapped;
    ZeroMemory(&mapped, sizeof mapped);
    UINT wrong = 0;
    hr = immediate->Map(staging_buffer.Get(), 0, D3D11_MAP_READ, 0, &mapped);
    CHECK(SUCCEEDED(hr) && mapped.pData);
    if (SUCCEEDED(hr)) {
        const UINT *got = static_cast<const UINT *>(mapped.pData);
        for (UINT i = 0; i < count; i++)
            wrong += got[i] != initial_value(i) * 3u + 1u;
        immediate->Unmap(staging_buffer.Get(), 0);
    }
    CHECK(wrong == 0);
    _tprintf(_T("d3d11_cl: buffer: %u of %u values wrong\n"), wrong, count);

    wrong = 0;
    hr = immediate->Map(staging_texture.Get(), 0, D3D11_MAP_READ, 0, &mapped);
    CHECK(SUCCEEDED(hr) && mapped.pData && mapped.RowPitch >= kWidth * 4);
    if (SUCCEEDED(hr)) {
        for (UINT y = 0; y < kHeight; y++) {
            const BYTE *row = static_cast<const BYTE *>(mapped.pData) + y * mapped.RowPitch;
            for (UINT x = 0; x < kWidth; x++) {
                const BYTE want[4] = {BYTE(initial_value(y * kWidth + x) & 255u), BYTE(x & 255u), BYTE(y & 255u), 255};
                wrong += std::memcmp(row + x * 4, want, 4) != 0;
            }
        }
        immediate->Unmap(staging_texture.Get(), 0);
    }
    CHECK(wrong == 0);
    _tprintf(_T("d3d11_cl: texture: %u of %u texels wrong\n"), wrong, count);
}

int _tmain(int argc, _TCHAR *argv[])
{
    UNREFERENCED_PARAMETER(argc);
    UNREFERENCED_PARAMETER(argv);
    run();
    _tprintf(_T("d3d11_cl: %d passed, %d failed\n"), passed, failed);
    return failed ? 1 : 0;
}
