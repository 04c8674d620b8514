/* Discovery: extension strings, the 24 entry points, clGetDeviceIDsFromD3D1x{KHR,NV} and its errors. */
#include "harness.h"

#include <stdlib.h>

static const char *const ext_names[4] = {"cl_khr_d3d10_sharing", "cl_khr_d3d11_sharing", "cl_nv_d3d10_sharing",
                                         "cl_nv_d3d11_sharing"};

/* Times `name` occurs as a whole word in a space-separated list. */
static int count_word(const char *list, const char *name)
{
    int n = 0;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == 0))
            n++;
    return n;
}

static void check_string(const char *what, const char *value, size_t size_ret, size_t first_size)
{
    h_at("%s", what);
    CHECK(value != NULL);
    if (!value)
        return;
    /* The size protocol: the size query and the returned string agree, and it is NUL-terminated. */
    CHECK(size_ret == first_size);
    CHECK(strlen(value) + 1 == size_ret);
    for (int i = 0; i < 4; i++) {
        h_at("%s: %s", what, ext_names[i]);
        CHECK(count_word(value, ext_names[i]) == 1);
    }
}

static void check_versioned(const char *what, const cl_name_version *v, size_t n)
{
    for (int i = 0; i < 4; i++) {
        h_at("%s: %s", what, ext_names[i]);
        int found = 0;
        for (size_t j = 0; j < n; j++)
            if (strncmp(v[j].name, ext_names[i], CL_NAME_VERSION_MAX_NAME_SIZE) == 0) {
                found++;
                CHECK(v[j].version != 0);
            }
        CHECK(found == 1);
    }
}

static void test_extension_strings(cl_platform_id p)
{
    size_t size = 0, size2 = 0;
    CHECK_ERR(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
    char *ext = calloc(1, size + 1);
    CHECK_ERR(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS, size, ext, &size2), CL_SUCCESS);
    check_string("CL_PLATFORM_EXTENSIONS", ext, size2, size);
    /* A too small buffer is CL_INVALID_VALUE (core rule), also for the layer's longer string. */
    h_at("CL_PLATFORM_EXTENSIONS short buffer");
    char small[4];
    CHECK_ERR(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS, sizeof small, small, NULL), CL_INVALID_VALUE);
    free(ext);

    size = 0;
    CHECK_ERR(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, NULL, &size), CL_SUCCESS);
    cl_name_version *v = calloc(1, size + sizeof *v);
    CHECK_ERR(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, size, v, &size2), CL_SUCCESS);
    CHECK(size2 == size && size % sizeof *v == 0);
    check_versioned("CL_PLATFORM_EXTENSIONS_WITH_VERSION", v, size / sizeof *v);
    free(v);

    cl_uint ndev = 0;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, &ndev);
    CHECK(ndev >= 1);
    cl_device_id devs[16];
    if (ndev > 16)
        ndev = 16;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, devs, NULL);
    for (cl_uint d = 0; d < ndev; d++) {
        size = 0;
        CHECK_ERR(clGetDeviceInfo(devs[d], CL_DEVICE_EXTENSIONS, 0, NULL, &size), CL_SUCCESS);
        ext = calloc(1, size + 1);
        CHECK_ERR(clGetDeviceInfo(devs[d], CL_DEVICE_EXTENSIONS, size, ext, &size2), CL_SUCCESS);
        check_string("CL_DEVICE_EXTENSIONS", ext, size2, size);
        free(ext);
        size = 0;
        CHECK_ERR(clGetDeviceInfo(devs[d], CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &size), CL_SUCCESS);
        v = calloc(1, size + sizeof *v);
        CHECK_ERR(clGetDeviceInfo(devs[d], CL_DEVICE_EXTENSIONS_WITH_VERSION, size, v, &size2), CL_SUCCESS);
        CHECK(size2 == size && size % sizeof *v == 0);
        check_versioned("CL_DEVICE_EXTENSIONS_WITH_VERSION", v, size / sizeof *v);
        free(v);
    }
}

static void test_entry_points(cl_platform_id p)
{
    int found = 0;
    for (int api = API_D3D10; api <= API_D3D11; api++) {
        for (int nv = 0; nv < 2; nv++)
            for (int i = 0; i < 6; i++) {
                char name[64];
                h_fn_name(name, sizeof name, api, nv, i);
                h_at("%s", name);
                void *a = clGetExtensionFunctionAddressForPlatform(p, name);
                void *b = clGetExtensionFunctionAddress(name);
                CHECK(a != NULL);
                CHECK(b != NULL);
                CHECK(a == b);
                found += a != NULL;
            }
    }
    h_at("all entry points");
    CHECK(found == 24);
    /* Names that do not exist are not found. */
    h_at("unknown names");
    CHECK(clGetExtensionFunctionAddressForPlatform(p, "clCreateFromD3D12BufferKHR") == NULL);
    CHECK(clGetExtensionFunctionAddressForPlatform(p, "clCreateFromD3D11BufferKHRX") == NULL);
    CHECK(clGetExtensionFunctionAddressForPlatform(p, "clCreateFromD3D11Buffer") == NULL);
}

static int in_list(cl_device_id d, const cl_device_id *list, cl_uint n)
{
    for (cl_uint i = 0; i < n; i++)
        if (list[i] == d)
            return 1;
    return 0;
}

static void test_get_device_ids(const sharing *s, cl_platform_id p)
{
    gfx g;
    h_at("%s: device", s->name);
    if (!gfx_open(&g, s->api))
        return;
    cl_device_id platform_devs[16];
    cl_uint nplat = 0;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 16, platform_devs, &nplat);
    ULONG dev_refs = com_refcount(g.device);

    cl_uint sources[2] = {s->src_device, s->src_adapter};
    void *objects[2] = {g.device, g.adapter};
    const char *src_names[2] = {"D3D device", "DXGI adapter"};
    cl_uint counts[2][2] = {{0, 0}, {0, 0}};
    cl_device_id lists[2][2][16];
    for (int si = 0; si < 2; si++) {
        cl_uint sets[2] = {s->set_preferred, s->set_all};
        for (int set = 0; set < 2; set++) {
            h_at("%s: %s, %s", s->name, src_names[si], set ? "ALL" : "PREFERRED");
            cl_uint n = 0;
            CHECK_ERR(sh_get_device_ids(s, p, sources[si], objects[si], sets[set], 0, NULL, &n), CL_SUCCESS);
            CHECK(n >= 1 && n <= nplat);
            counts[si][set] = n;
            cl_device_id devs[16];
            memset(devs, 0, sizeof devs);
            cl_uint n2 = 0;
            CHECK_ERR(sh_get_device_ids(s, p, sources[si], objects[si], sets[set], 16, devs, &n2), CL_SUCCESS);
            CHECK(n2 == n);
            for (cl_uint i = 0; i < n && i < 16; i++)
                CHECK(in_list(devs[i], platform_devs, nplat));
            memcpy(lists[si][set], devs, sizeof devs);
            /* num_devices may be NULL. */
            cl_device_id one = NULL;
            CHECK_ERR(sh_get_device_ids(s, p, sources[si], objects[si], sets[set], 1, &one, NULL), CL_SUCCESS);
            CHECK(one == devs[0]);
            /* "The number of OpenCL devices returned is the minimum of the value specified by num_entries
             * and the number of OpenCL devices corresponding to d3d_object." */
            cl_device_id two[2] = {NULL, (cl_device_id)&two};
            CHECK_ERR(sh_get_device_ids(s, p, sources[si], objects[si], sets[set], 1, two, &n2), CL_SUCCESS);
            CHECK(n2 == n);
            CHECK(two[1] == (cl_device_id)&two);
        }
        h_at("%s: %s, PREFERRED within ALL", s->name, src_names[si]);
        CHECK(counts[si][0] <= counts[si][1]);
        for (cl_uint i = 0; i < counts[si][0] && i < 16; i++)
            CHECK(in_list(lists[si][0][i], lists[si][1], counts[si][1]));
    }
    /* "The OpenCL devices corresponding to a Direct3D device will be a subset of the OpenCL devices
     * corresponding to the DXGI adapter against which the Direct3D device was created." */
    h_at("%s: device set within adapter set", s->name);
    for (int set = 0; set < 2; set++)
        for (cl_uint i = 0; i < counts[0][set] && i < 16; i++)
            CHECK(in_list(lists[0][set][i], lists[1][set], counts[1][set]));

    cl_uint n = 0;
    cl_device_id dev = NULL;
    h_at("%s: errors", s->name);
    /* CL_INVALID_PLATFORM if platform is not a valid platform. */
    static const void *not_a_platform[8];
    CHECK_ERR(sh_get_device_ids(s, (cl_platform_id)not_a_platform, s->src_device, g.device, s->set_preferred, 1,
                                &dev, &n),
              CL_INVALID_PLATFORM);
    /* CL_INVALID_VALUE if d3d_device_source is not a valid value, */
    CHECK_ERR(sh_get_device_ids(s, p, 0x1234, g.device, s->set_preferred, 1, &dev, &n), CL_INVALID_VALUE);
    /* the other version's source token is not a valid value for this version either */
    cl_uint other_src = s->api == API_D3D11 ? CL_D3D10_DEVICE_KHR : CL_D3D11_DEVICE_KHR;
    CHECK_ERR(sh_get_device_ids(s, p, other_src, g.device, s->set_preferred, 1, &dev, &n), CL_INVALID_VALUE);
    /* d3d_device_set is not a valid value, */
    CHECK_ERR(sh_get_device_ids(s, p, s->src_device, g.device, 0x1234, 1, &dev, &n), CL_INVALID_VALUE);
    cl_uint other_set = s->api == API_D3D11 ? CL_ALL_DEVICES_FOR_D3D10_KHR : CL_ALL_DEVICES_FOR_D3D11_KHR;
    CHECK_ERR(sh_get_device_ids(s, p, s->src_device, g.device, other_set, 1, &dev, &n), CL_INVALID_VALUE);
    /* num_entries is equal to zero and devices is not NULL, */
    CHECK_ERR(sh_get_device_ids(s, p, s->src_device, g.device, s->set_preferred, 0, &dev, &n), CL_INVALID_VALUE);
    CHECK_ERR(sh_get_device_ids(s, p, s->src_adapter, g.adapter, s->set_all, 0, &dev, &n), CL_INVALID_VALUE);
    /* or if both num_devices and devices are NULL. */
    CHECK_ERR(sh_get_device_ids(s, p, s->src_device, g.device, s->set_preferred, 1, NULL, NULL), CL_INVALID_VALUE);
    CHECK_ERR(sh_get_device_ids(s, p, s->src_adapter, g.adapter, s->set_all, 0, NULL, NULL), CL_INVALID_VALUE);
    /* An object that is no Direct3D device / adapter has no corresponding OpenCL device. The specs name
     * CL_DEVICE_NOT_FOUND for that ("if no OpenCL devices that correspond to d3d_object were found"); the
     * layer must ask the object what it is (QueryInterface), never call methods it does not have. */
    fake_com fake;
    fake_com_init(&fake);
    h_at("%s: not a D3D object", s->name);
    CHECK_ERR(sh_get_device_ids(s, p, s->src_device, &fake, s->set_preferred, 1, &dev, &n), CL_DEVICE_NOT_FOUND);
    CHECK_ERR(sh_get_device_ids(s, p, s->src_adapter, &fake, s->set_all, 1, &dev, &n), CL_DEVICE_NOT_FOUND);
    CHECK(!fake.misused);
    CHECK_EQ(fake.refs, 1);
    /* A NULL object corresponds to no device. */
    h_at("%s: NULL object", s->name);
    cl_int e = sh_get_device_ids(s, p, s->src_device, NULL, s->set_preferred, 1, &dev, &n);
    if (e == CL_DEVICE_NOT_FOUND || e == CL_INVALID_VALUE)
        h_pass();
    else
        h_fail(__FILE__, __LINE__, "NULL d3d_object = %s (%d), want CL_DEVICE_NOT_FOUND or CL_INVALID_VALUE",
               cl_err_name(e), e);
    /* Querying takes no reference. */
    h_at("%s: refcount", s->name);
    CHECK_EQ(com_refcount(g.device), dev_refs);
    gfx_close(&g);
}

int main(void)
{
    h_begin("discovery", 60);
    cl_platform_id p = h_platform();
    h_at("platform");
    CHECK(p != NULL);
    if (p) {
        test_extension_strings(p);
        test_entry_points(p);
        for (int i = 0; i < 4; i++) {
            int api, nv;
            if (!h_combo(i, &api, &nv))
                continue;
            sharing s;
            sharing_init(&s, p, api, nv);
            test_get_device_ids(&s, p);
        }
    }
    return h_end();
}
