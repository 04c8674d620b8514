/* dxcl-wine-info.exe (`dxcl wine info`): what a Windows program in this prefix sees of OpenCL and
 * of the Direct3D sharing extensions: each platform with its extensions and devices, then each
 * DXGI adapter with the OpenCL devices clGetDeviceIDsFromD3D11KHR prefers for it. */
#define COBJMACROS
#define CL_TARGET_OPENCL_VERSION 300
#include <windows.h>
#include <initguid.h>
#include <dxgi.h>
#include <stdio.h>
#include <CL/cl.h>
#include <CL/cl_d3d11.h>
#include "../dxclcl/vulkan_devices.h"

static void adapters(cl_platform_id platform)
{
    clGetDeviceIDsFromD3D11KHR_fn get =
        (clGetDeviceIDsFromD3D11KHR_fn)clGetExtensionFunctionAddressForPlatform(platform, "clGetDeviceIDsFromD3D11KHR");
    IDXGIFactory1 *factory;
    IDXGIAdapter1 *adapter;
    if (!get)
    {
        printf("  clGetDeviceIDsFromD3D11KHR: not available\n");
        return;
    }
    if (FAILED(CreateDXGIFactory1(&IID_IDXGIFactory1, (void **)&factory)))
    {
        printf("  DXGI: no factory\n");
        return;
    }
    for (UINT i = 0; SUCCEEDED(IDXGIFactory1_EnumAdapters1(factory, i, &adapter)); i++)
    {
        DXGI_ADAPTER_DESC1 desc;
        cl_device_id devices[16];
        cl_uint n = 0;
        IDXGIAdapter1_GetDesc1(adapter, &desc);
        printf("  DXGI adapter %u: %ls (vendor 0x%04x, device 0x%04x, LUID %08lx:%08lx)\n", i,
               desc.Description, desc.VendorId, desc.DeviceId, desc.AdapterLuid.HighPart,
               desc.AdapterLuid.LowPart);
        cl_int err = get(platform, CL_D3D11_DXGI_ADAPTER_KHR, adapter, CL_PREFERRED_DEVICES_FOR_D3D11_KHR, 16, devices, &n);
        if (err != CL_SUCCESS)
            printf("    preferred OpenCL devices: none (%d)%s\n", err,
                   vulkan_devices(1, NULL, NULL) ? "" : ": Wine lists no Vulkan device, so the bridge cannot tell which device "
                   "is behind the adapter; install a Vulkan driver (Debian: mesa-vulkan-drivers, or the GPU's own)");
        for (cl_uint d = 0; err == CL_SUCCESS && d < n && d < 16; d++)
        {
            char name[256] = "";
            clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name, name, NULL);
            printf("    preferred OpenCL device: %s\n", name);
        }
        IDXGIAdapter1_Release(adapter);
    }
    IDXGIFactory1_Release(factory);
}

int main(void)
{
    cl_platform_id platforms[16];
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(16, platforms, &n);
    if (err != CL_SUCCESS || !n)
    {
        /* The bridge says why it has no unix side; with one, the host's loader found no platform. */
        HMODULE bridge = GetModuleHandleA("dxclcl.dll");
        const char *(WINAPI *status)(void) =
            bridge ? (const char *(WINAPI *)(void))(void *)GetProcAddress(bridge, "dxclclStatus") : NULL;
        const char *why = status ? status() : NULL;
        if (!bridge)
            printf("no OpenCL platform (%d): this prefix's opencl.dll is not dxcl's (run `dxcl wine install`)\n", err);
        else if (why)
            printf("no OpenCL platform (%d): %s\n", err, why);
        else
            printf("no OpenCL platform (%d): the host's OpenCL loader lists none (check `clinfo -l` on the host, "
                   "and OCL_ICD_VENDORS if set)\n", err);
        return 1;
    }
    for (cl_uint p = 0; p < n && p < 16; p++)
    {
        char text[8192] = "";
        cl_device_id devices[16];
        cl_uint nd = 0;
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof text, text, NULL);
        printf("platform %u: %s\n", p, text);
        clGetPlatformInfo(platforms[p], CL_PLATFORM_EXTENSIONS, sizeof text, text, NULL);
        printf("  extensions a Windows program can use: %s\n", text);
        clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 16, devices, &nd);
        for (cl_uint d = 0; d < nd && d < 16; d++)
        {
            clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof text, text, NULL);
            printf("  device %u: %s\n", d, text);
        }
        adapters(platforms[p]);
    }
    return 0;
}
