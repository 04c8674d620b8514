/* What tests/wine's timing programs share, built for Windows (MinGW-w64) and for Linux (dxcl's
 * headers): a microsecond clock, a comparison for qsort, and the Direct3D 11 device, OpenCL
 * platform and cl_khr_d3d11_sharing entry points they start from. Include after windows.h,
 * d3d11.h, CL/cl.h and CL/cl_d3d11.h (and, on Linux, time.h). */
#ifndef DXCL_TESTS_WINE_COMMON_H
#define DXCL_TESTS_WINE_COMMON_H

static double now_us(void)
{
#ifdef _WIN32
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart * 1e6 / (double)f.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
#endif
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#ifdef CL_D3D11_DEVICE_KHR
/* A hardware Direct3D 11 device, the first OpenCL platform, its sharing entry points and the
 * device `set` (CL_ALL_/CL_PREFERRED_DEVICES_FOR_D3D11_KHR) picks for the Direct3D device. */
struct sharing
{
    ID3D11Device *device;
    ID3D11DeviceContext *immediate;
    cl_platform_id platform;
    cl_device_id cl_device;
    clCreateFromD3D11Texture2DKHR_fn from_texture;
    clEnqueueAcquireD3D11ObjectsKHR_fn acquire;
    clEnqueueReleaseD3D11ObjectsKHR_fn release;
};

/* 0 when every part is there; else prints why, prefixed by `who`, and returns 1. */
static int sharing_open(struct sharing *s, cl_d3d11_device_set_khr set, const char *who)
{
    if (FAILED(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &s->device,
                                 NULL, &s->immediate))
        || clGetPlatformIDs(1, &s->platform, NULL) != CL_SUCCESS)
    {
        printf("%s: no Direct3D device or OpenCL platform\n", who);
        return 1;
    }
    clGetDeviceIDsFromD3D11KHR_fn get_ids = (clGetDeviceIDsFromD3D11KHR_fn)
        clGetExtensionFunctionAddressForPlatform(s->platform, "clGetDeviceIDsFromD3D11KHR");
    s->from_texture = (clCreateFromD3D11Texture2DKHR_fn)
        clGetExtensionFunctionAddressForPlatform(s->platform, "clCreateFromD3D11Texture2DKHR");
    s->acquire = (clEnqueueAcquireD3D11ObjectsKHR_fn)
        clGetExtensionFunctionAddressForPlatform(s->platform, "clEnqueueAcquireD3D11ObjectsKHR");
    s->release = (clEnqueueReleaseD3D11ObjectsKHR_fn)
        clGetExtensionFunctionAddressForPlatform(s->platform, "clEnqueueReleaseD3D11ObjectsKHR");
    if (!get_ids || !s->from_texture || !s->acquire || !s->release
        || get_ids(s->platform, CL_D3D11_DEVICE_KHR, s->device, set, 1, &s->cl_device, NULL))
    {
        printf("%s: no cl_khr_d3d11_sharing\n", who);
        return 1;
    }
    return 0;
}
#endif

#endif
