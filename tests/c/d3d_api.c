/* The Direct3D 10/11 and DXGI API as a C application sees it, built against the installed headers and
 * library with pkg-config, run under valgrind by `make test-c`. Every check counts; the last line is
 * "N passed, N failed" and the exit status is non-zero on any failure. */
#define COBJMACROS
#include <d3d10.h>
#include <d3d11.h>
#include <dxgi.h>
#include <dxcl/dxcl_interop.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (cond) {                                                                     \
            passed++;                                                                   \
        } else {                                                                        \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
        }                                                                               \
    } while (0)

#define CHECK_HR(expr, want)                                                            \
    do {                                                                                \
        HRESULT hr_ = (expr);                                                           \
        if (hr_ == (HRESULT)(want)) {                                                   \
            passed++;                                                                   \
        } else {                                                                        \
            failed++;                                                                   \
            fprintf(stderr, "%s:%d: %s = 0x%08x, want 0x%08x\n", __FILE__, __LINE__,    \
                    #expr, (unsigned)hr_, (unsigned)(want));                           \
        }                                                                               \
    } while (0)

/* Public reference count of any COM object, read the way applications do: AddRef then Release. */
static ULONG refcount(IUnknown *obj)
{
    IUnknown_AddRef(obj);
    return IUnknown_Release(obj);
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31u + seed * 7u + (i >> 8));
}

/* ---------------------------------------------------------------------------------------------- */
/* DXGI                                                                                            */

static void test_dxgi(void)
{
    IDXGIFactory1 *factory = NULL;
    CHECK_HR(CreateDXGIFactory1(&IID_IDXGIFactory1, (void **)&factory), S_OK);
    if (!factory)
        return;

    UINT count = 0;
    IDXGIAdapter1 *adapter = NULL;
    while (IDXGIFactory1_EnumAdapters1(factory, count, &adapter) == S_OK) {
        DXGI_ADAPTER_DESC1 desc;
        memset(&desc, 0xcd, sizeof desc);
        CHECK_HR(IDXGIAdapter1_GetDesc1(adapter, &desc), S_OK);
        CHECK(desc.Description[0] != 0);
        IDXGIAdapter1_Release(adapter);
        count++;
        if (count > 64)
            break;
    }
    CHECK(count >= 1 && count <= 64);
    CHECK(adapter == NULL); /* EnumAdapters1 clears its out pointer when it runs out */
    CHECK_HR(IDXGIFactory1_EnumAdapters1(factory, count, &adapter), DXGI_ERROR_NOT_FOUND);
    CHECK_HR(IDXGIFactory1_EnumAdapters1(factory, 0, NULL), DXGI_ERROR_INVALID_CALL);

    /* QueryInterface: identity through IUnknown, E_NOINTERFACE with a cleared out pointer. */
    IUnknown *unk1 = NULL, *unk2 = NULL;
    IDXGIFactory *base = NULL;
    CHECK_HR(IDXGIFactory1_QueryInterface(factory, &IID_IUnknown, (void **)&unk1), S_OK);
    CHECK_HR(IDXGIFactory1_QueryInterface(factory, &IID_IDXGIFactory, (void **)&base), S_OK);
    CHECK_HR(IDXGIFactory_QueryInterface(base, &IID_IUnknown, (void **)&unk2), S_OK);
    CHECK(unk1 != NULL && unk1 == unk2);
    void *nothing = (void *)0x1;
    CHECK_HR(IDXGIFactory1_QueryInterface(factory, &IID_ID3D11Device, &nothing), E_NOINTERFACE);
    CHECK(nothing == NULL);
    if (unk1)
        IUnknown_Release(unk1);
    if (unk2)
        IUnknown_Release(unk2);
    if (base)
        IDXGIFactory_Release(base);

    /* Private data round trip with the size protocol. */
    static const GUID key = {0x1b2c3d4e, 0x1111, 0x2222, {1, 2, 3, 4, 5, 6, 7, 8}};
    const char value[] = "dxcl";
    char out[16] = {0};
    UINT size = 0;
    CHECK_HR(IDXGIFactory1_SetPrivateData(factory, &key, sizeof value, value), S_OK);
    CHECK_HR(IDXGIFactory1_GetPrivateData(factory, &key, &size, NULL), S_OK);
    CHECK(size == sizeof value);
    size = 2;
    CHECK_HR(IDXGIFactory1_GetPrivateData(factory, &key, &size, out), DXGI_ERROR_MORE_DATA);
    size = sizeof out;
    CHECK_HR(IDXGIFactory1_GetPrivateData(factory, &key, &size, out), S_OK);
    CHECK(size == sizeof value && strcmp(out, "dxcl") == 0);

    CHECK(IDXGIFactory1_Release(factory) == 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* D3D11 devices                                                                                   */

static ID3D11Device *create_device11(ID3D11DeviceContext **ctx)
{
    ID3D11Device *dev = NULL;
    D3D_FEATURE_LEVEL level = 0;
    CHECK_HR(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev,
                               &level, ctx),
             S_OK);
    CHECK(dev != NULL && *ctx != NULL);
    CHECK(level >= D3D_FEATURE_LEVEL_10_0);
    if (dev)
        CHECK(ID3D11Device_GetFeatureLevel(dev) == level);
    return dev;
}

static void test_device11(void)
{
    /* Validation only: no out pointers -> S_FALSE. */
    D3D_FEATURE_LEVEL level = 0;
    CHECK_HR(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, NULL,
                               &level, NULL),
             S_FALSE);
    /* An adapter together with a driver type other than UNKNOWN is refused. */
    IDXGIFactory *factory = NULL;
    IDXGIAdapter *adapter = NULL;
    CHECK_HR(CreateDXGIFactory(&IID_IDXGIFactory, (void **)&factory), S_OK);
    CHECK_HR(IDXGIFactory_EnumAdapters(factory, 0, &adapter), S_OK);
    ID3D11Device *dev = (ID3D11Device *)0x1;
    CHECK_HR(D3D11CreateDevice(adapter, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev,
                               NULL, NULL),
             E_INVALIDARG);
    CHECK(dev == NULL);
    /* UNKNOWN with that adapter works, and the device reports the same adapter. */
    CHECK_HR(D3D11CreateDevice(adapter, D3D_DRIVER_TYPE_UNKNOWN, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &dev,
                               NULL, NULL),
             S_OK);
    if (dev) {
        IDXGIDevice *dxgi = NULL;
        IDXGIAdapter *again = NULL;
        CHECK_HR(ID3D11Device_QueryInterface(dev, &IID_IDXGIDevice, (void **)&dxgi), S_OK);
        if (dxgi) {
            CHECK_HR(IDXGIDevice_GetAdapter(dxgi, &again), S_OK);
            DXGI_ADAPTER_DESC a, b;
            CHECK_HR(IDXGIAdapter_GetDesc(adapter, &a), S_OK);
            if (again) {
                CHECK_HR(IDXGIAdapter_GetDesc(again, &b), S_OK);
                CHECK(a.AdapterLuid.LowPart == b.AdapterLuid.LowPart &&
                      a.AdapterLuid.HighPart == b.AdapterLuid.HighPart);
                IDXGIAdapter_Release(again);
            }
            IDXGIDevice_Release(dxgi);
        }
        CHECK(ID3D11Device_Release(dev) == 0);
    }
    /* Requested feature levels: the first one supported wins. */
    const D3D_FEATURE_LEVEL wanted[] = {D3D_FEATURE_LEVEL_10_1, D3D_FEATURE_LEVEL_10_0};
    dev = NULL;
    CHECK_HR(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_WARP, NULL, 0, wanted, 2, D3D11_SDK_VERSION, &dev, &level,
                               NULL),
             S_OK);
    CHECK(level == D3D_FEATURE_LEVEL_10_1);
    if (dev)
        CHECK(ID3D11Device_Release(dev) == 0);

    IDXGIAdapter_Release(adapter);
    IDXGIFactory_Release(factory);
}

/* ---------------------------------------------------------------------------------------------- */
/* D3D11 buffers                                                                                   */

static ID3D11Buffer *staging_buffer(ID3D11Device *dev, UINT size)
{
    D3D11_BUFFER_DESC d = {size, D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE, 0, 0};
    ID3D11Buffer *b = NULL;
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &d, NULL, &b), S_OK);
    return b;
}

/* Copies `res` into a staging buffer and compares its bytes with `want`. */
static int buffer_equals(ID3D11Device *dev, ID3D11DeviceContext *ctx, ID3D11Buffer *buf,
                         const unsigned char *want, UINT size)
{
    ID3D11Buffer *st = staging_buffer(dev, size);
    if (!st)
        return 0;
    ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st, (ID3D11Resource *)buf);
    D3D11_MAPPED_SUBRESOURCE m = {0};
    int same = 0;
    if (ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, 0, D3D11_MAP_READ, 0, &m) == S_OK) {
        same = memcmp(m.pData, want, size) == 0;
        ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st, 0);
    }
    ID3D11Buffer_Release(st);
    return same;
}

static void test_buffers11(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    enum { N = 4099 };
    unsigned char *data = malloc(N), *other = malloc(N);
    fill_pattern(data, N, 1);
    fill_pattern(other, N, 2);
    D3D11_SUBRESOURCE_DATA init = {data, 0, 0};

    /* A device child holds its device: one more public reference while it lives. */
    ULONG dev_refs = refcount((IUnknown *)dev);
    D3D11_BUFFER_DESC d = {N, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, 0, 0};
    ID3D11Buffer *def = NULL;
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &d, &init, &def), S_OK);
    if (!def)
        return;
    CHECK(refcount((IUnknown *)def) == 1);
    CHECK(refcount((IUnknown *)dev) == dev_refs + 1);
    CHECK(ID3D11Buffer_AddRef(def) == 2);
    CHECK(ID3D11Buffer_Release(def) == 1);

    D3D11_BUFFER_DESC got;
    ID3D11Buffer_GetDesc(def, &got);
    CHECK(got.ByteWidth == N && got.Usage == D3D11_USAGE_DEFAULT && got.BindFlags == D3D11_BIND_VERTEX_BUFFER);
    D3D11_RESOURCE_DIMENSION dim = D3D11_RESOURCE_DIMENSION_UNKNOWN;
    ID3D11Buffer_GetType(def, &dim);
    CHECK(dim == D3D11_RESOURCE_DIMENSION_BUFFER);
    ID3D11Device *owner = NULL;
    ID3D11Buffer_GetDevice(def, &owner);
    CHECK(owner == dev);
    if (owner)
        ID3D11Device_Release(owner);
    ID3D11Buffer_SetEvictionPriority(def, DXGI_RESOURCE_PRIORITY_HIGH);
    CHECK(ID3D11Buffer_GetEvictionPriority(def) == DXGI_RESOURCE_PRIORITY_HIGH);

    /* Initial data, then UpdateSubresource of a range, read back through a staging copy. */
    CHECK(buffer_equals(dev, ctx, def, data, N));
    D3D11_BOX box = {100, 0, 0, 1100, 1, 1};
    ID3D11DeviceContext_UpdateSubresource(ctx, (ID3D11Resource *)def, 0, &box, other, 0, 0);
    memcpy(data + 100, other, 1000);
    CHECK(buffer_equals(dev, ctx, def, data, N));
    ID3D11DeviceContext_UpdateSubresource(ctx, (ID3D11Resource *)def, 0, NULL, other, 0, 0);
    CHECK(buffer_equals(dev, ctx, def, other, N));

    /* CopySubresourceRegion between buffers with a source box. */
    ID3D11Buffer *imm = NULL;
    D3D11_BUFFER_DESC di = {N, D3D11_USAGE_IMMUTABLE, D3D11_BIND_SHADER_RESOURCE, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &di, &init, &imm), S_OK);
    D3D11_BOX src = {10, 0, 0, 510, 1, 1};
    ID3D11DeviceContext_CopySubresourceRegion(ctx, (ID3D11Resource *)def, 0, 2000, 0, 0, (ID3D11Resource *)imm,
                                              0, &src);
    memcpy(other + 2000, data + 10, 500);
    CHECK(buffer_equals(dev, ctx, def, other, N));

    /* Dynamic buffers: WRITE_DISCARD and WRITE_NO_OVERWRITE maps; READ is refused. */
    D3D11_BUFFER_DESC dd = {N, D3D11_USAGE_DYNAMIC, D3D11_BIND_VERTEX_BUFFER, D3D11_CPU_ACCESS_WRITE, 0, 0};
    ID3D11Buffer *dyn = NULL;
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &dd, NULL, &dyn), S_OK);
    D3D11_MAPPED_SUBRESOURCE m = {0};
    if (dyn) {
        CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)dyn, 0, D3D11_MAP_WRITE_DISCARD, 0, &m), S_OK);
        if (m.pData) {
            memcpy(m.pData, data, N);
            ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)dyn, 0);
        }
        CHECK(buffer_equals(dev, ctx, dyn, data, N));
        CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)dyn, 0, D3D11_MAP_READ, 0, &m), E_INVALIDARG);
        CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)dyn, 1, D3D11_MAP_WRITE_DISCARD, 0, &m),
                 E_INVALIDARG);
        CHECK(ID3D11Buffer_Release(dyn) == 0);
    }
    /* Default and immutable buffers cannot be mapped. */
    CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)def, 0, D3D11_MAP_WRITE, 0, &m), E_INVALIDARG);
    if (imm)
        CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)imm, 0, D3D11_MAP_READ, 0, &m), E_INVALIDARG);

    /* Staging: READ_WRITE keeps contents; DO_NOT_WAIT on idle memory succeeds. */
    ID3D11Buffer *st = staging_buffer(dev, N);
    if (st) {
        CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, 0, D3D11_MAP_WRITE, 0, &m), S_OK);
        memcpy(m.pData, data, N);
        ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st, 0);
        HRESULT hr = ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, 0, D3D11_MAP_READ_WRITE,
                                             D3D11_MAP_FLAG_DO_NOT_WAIT, &m);
        CHECK_HR(hr, S_OK);
        if (hr == S_OK) {
            CHECK(memcmp(m.pData, data, N) == 0);
            ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st, 0);
        }
        CHECK(ID3D11Buffer_Release(st) == 0);
    }

    /* Creation errors and the validation-only form. */
    ID3D11Buffer *bad = (ID3D11Buffer *)0x1;
    D3D11_BUFFER_DESC e = {N, D3D11_USAGE_IMMUTABLE, D3D11_BIND_VERTEX_BUFFER, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG); /* immutable needs data */
    CHECK(bad == NULL);
    e = (D3D11_BUFFER_DESC){0, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG); /* empty */
    e = (D3D11_BUFFER_DESC){N, D3D11_USAGE_STAGING, D3D11_BIND_VERTEX_BUFFER, D3D11_CPU_ACCESS_READ, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG); /* staging binds nothing */
    e = (D3D11_BUFFER_DESC){N, D3D11_USAGE_DYNAMIC, D3D11_BIND_VERTEX_BUFFER, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG); /* dynamic needs CPU write */
    e = (D3D11_BUFFER_DESC){24, D3D11_USAGE_DEFAULT, D3D11_BIND_CONSTANT_BUFFER, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG); /* constant: multiple of 16 */
    CHECK_HR(ID3D11Device_CreateBuffer(dev, NULL, NULL, &bad), E_INVALIDARG);
    e = (D3D11_BUFFER_DESC){32, D3D11_USAGE_DEFAULT, D3D11_BIND_CONSTANT_BUFFER, 0, 0, 0};
    CHECK_HR(ID3D11Device_CreateBuffer(dev, &e, NULL, NULL), S_FALSE);

    /* QueryInterface on a resource. */
    IUnknown *u1 = NULL, *u2 = NULL;
    ID3D11Resource *res = NULL;
    IDXGIResource *dxgires = NULL;
    void *nothing = (void *)0x1;
    CHECK_HR(ID3D11Buffer_QueryInterface(def, &IID_IUnknown, (void **)&u1), S_OK);
    CHECK_HR(ID3D11Buffer_QueryInterface(def, &IID_ID3D11Resource, (void **)&res), S_OK);
    if (res) {
        CHECK_HR(ID3D11Resource_QueryInterface(res, &IID_IUnknown, (void **)&u2), S_OK);
        ID3D11Resource_Release(res);
    }
    CHECK(u1 != NULL && u1 == u2);
    CHECK_HR(ID3D11Buffer_QueryInterface(def, &IID_ID3D11Texture2D, &nothing), E_NOINTERFACE);
    CHECK(nothing == NULL);
    CHECK_HR(ID3D11Buffer_QueryInterface(def, &IID_IDXGIResource, (void **)&dxgires), S_OK);
    if (dxgires) {
        DXGI_USAGE usage = 0;
        CHECK_HR(IDXGIResource_GetUsage(dxgires, &usage), S_OK);
        IDXGIResource_Release(dxgires);
    }
    if (u1)
        IUnknown_Release(u1);
    if (u2)
        IUnknown_Release(u2);

    CHECK(ID3D11Buffer_Release(def) == 0);
    if (imm)
        CHECK(ID3D11Buffer_Release(imm) == 0);
    CHECK(refcount((IUnknown *)dev) == dev_refs);
    free(data);
    free(other);
}

/* ---------------------------------------------------------------------------------------------- */
/* D3D11 textures                                                                                  */

static void test_texture2d11(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    enum { W = 37, H = 21, SLICES = 3 };
    /* MipLevels = 0 is the full chain: 1 + floor(log2(37)) = 6. */
    D3D11_TEXTURE2D_DESC d = {W, H, 0, SLICES, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                              D3D11_BIND_SHADER_RESOURCE, 0, 0};
    ID3D11Texture2D *tex = NULL;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &d, NULL, &tex), S_OK);
    if (!tex)
        return;
    D3D11_TEXTURE2D_DESC got;
    ID3D11Texture2D_GetDesc(tex, &got);
    CHECK(got.MipLevels == 6 && got.ArraySize == SLICES && got.Width == W);

    /* Write each subresource with UpdateSubresource, then read each back through a staging twin. */
    D3D11_TEXTURE2D_DESC sd = got;
    sd.Usage = D3D11_USAGE_STAGING;
    sd.BindFlags = 0;
    sd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    ID3D11Texture2D *st = NULL;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &sd, NULL, &st), S_OK);
    unsigned char *src = malloc(W * H * 4);
    for (UINT slice = 0; slice < SLICES; slice++) {
        for (UINT mip = 0; mip < got.MipLevels; mip++) {
            UINT sub = D3D11CalcSubresource(mip, slice, got.MipLevels);
            UINT w = W >> mip ? W >> mip : 1, h = H >> mip ? H >> mip : 1;
            fill_pattern(src, w * h * 4, sub);
            ID3D11DeviceContext_UpdateSubresource(ctx, (ID3D11Resource *)tex, sub, NULL, src, w * 4, 0);
        }
    }
    ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st, (ID3D11Resource *)tex);
    int all_same = 1;
    for (UINT slice = 0; slice < SLICES; slice++) {
        for (UINT mip = 0; mip < got.MipLevels; mip++) {
            UINT sub = D3D11CalcSubresource(mip, slice, got.MipLevels);
            UINT w = W >> mip ? W >> mip : 1, h = H >> mip ? H >> mip : 1;
            fill_pattern(src, w * h * 4, sub);
            D3D11_MAPPED_SUBRESOURCE m = {0};
            if (ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, sub, D3D11_MAP_READ, 0, &m) != S_OK) {
                all_same = 0;
                continue;
            }
            if (m.RowPitch < w * 4)
                all_same = 0;
            for (UINT y = 0; y < h && all_same; y++)
                all_same = memcmp((unsigned char *)m.pData + y * m.RowPitch, src + y * w * 4, w * 4) == 0;
            ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st, sub);
        }
    }
    CHECK(all_same);

    /* A boxed update of mip 0 of slice 1, checked through CopySubresourceRegion into a 2D staging. */
    D3D11_BOX box = {4, 3, 0, 12, 9, 1};
    unsigned char patch[8 * 6 * 4];
    fill_pattern(patch, sizeof patch, 99);
    UINT sub = D3D11CalcSubresource(0, 1, got.MipLevels);
    ID3D11DeviceContext_UpdateSubresource(ctx, (ID3D11Resource *)tex, sub, &box, patch, 8 * 4, 0);
    ID3D11DeviceContext_CopySubresourceRegion(ctx, (ID3D11Resource *)st, 0, 0, 0, 0, (ID3D11Resource *)tex, sub,
                                              &box);
    D3D11_MAPPED_SUBRESOURCE m = {0};
    CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, 0, D3D11_MAP_READ, 0, &m), S_OK);
    if (m.pData) {
        int same = 1;
        for (UINT y = 0; y < 6; y++)
            same &= memcmp((unsigned char *)m.pData + y * m.RowPitch, patch + y * 32, 32) == 0;
        CHECK(same);
        ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st, 0);
    }
    CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st, got.MipLevels * SLICES, D3D11_MAP_READ, 0, &m),
             E_INVALIDARG);

    /* Initial data for every subresource of a small array with two mips. */
    D3D11_TEXTURE2D_DESC di = {4, 4, 2, 2, DXGI_FORMAT_R32_FLOAT, {1, 0}, D3D11_USAGE_IMMUTABLE,
                               D3D11_BIND_SHADER_RESOURCE, 0, 0};
    float level0[16], level1[4];
    for (int i = 0; i < 16; i++)
        level0[i] = (float)i;
    for (int i = 0; i < 4; i++)
        level1[i] = (float)(100 + i);
    D3D11_SUBRESOURCE_DATA init[4] = {
        {level0, 16, 0}, {level1, 8, 0}, {level0, 16, 0}, {level1, 8, 0}};
    ID3D11Texture2D *imm = NULL;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &di, init, &imm), S_OK);
    if (imm) {
        D3D11_TEXTURE2D_DESC sdi = di;
        sdi.Usage = D3D11_USAGE_STAGING;
        sdi.BindFlags = 0;
        sdi.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        ID3D11Texture2D *st2 = NULL;
        CHECK_HR(ID3D11Device_CreateTexture2D(dev, &sdi, NULL, &st2), S_OK);
        if (st2) {
            ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st2, (ID3D11Resource *)imm);
            CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st2, 3, D3D11_MAP_READ, 0, &m), S_OK);
            if (m.pData) {
                const float *row1 = (const float *)((unsigned char *)m.pData + m.RowPitch);
                CHECK(row1[0] == 102.0f && row1[1] == 103.0f);
                ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st2, 3);
            }
            ID3D11Texture2D_Release(st2);
        }
        ID3D11Texture2D_Release(imm);
    }

    /* Multisampled textures can be created, not mapped or made staging. */
    UINT levels = 0;
    CHECK_HR(ID3D11Device_CheckMultisampleQualityLevels(dev, DXGI_FORMAT_R8G8B8A8_UNORM, 4, &levels), S_OK);
    if (levels > 0) {
        D3D11_TEXTURE2D_DESC dm = {64, 64, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {4, 0}, D3D11_USAGE_DEFAULT,
                                   D3D11_BIND_RENDER_TARGET, 0, 0};
        ID3D11Texture2D *ms = NULL;
        CHECK_HR(ID3D11Device_CreateTexture2D(dev, &dm, NULL, &ms), S_OK);
        if (ms)
            ID3D11Texture2D_Release(ms);
        dm.Usage = D3D11_USAGE_STAGING;
        dm.BindFlags = 0;
        dm.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        CHECK_HR(ID3D11Device_CreateTexture2D(dev, &dm, NULL, &ms), E_INVALIDARG);
    }

    /* Creation errors. */
    ID3D11Texture2D *bad = (ID3D11Texture2D *)0x1;
    D3D11_TEXTURE2D_DESC e = d;
    e.MipLevels = 7; /* longer than the chain */
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), E_INVALIDARG);
    CHECK(bad == NULL);
    e = d;
    e.Width = 0;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), E_INVALIDARG);
    e = d;
    e.Format = DXGI_FORMAT_UNKNOWN;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), E_INVALIDARG);
    e = d;
    e.Width = D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION + 1;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), E_INVALIDARG);
    e = d;
    e.MiscFlags = D3D11_RESOURCE_MISC_TEXTURECUBE; /* 3 slices is not a multiple of 6 */
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), E_INVALIDARG);
    e = d;
    e.MiscFlags = D3D11_RESOURCE_MISC_SHARED;
    e.MipLevels = 1;
    e.ArraySize = 1;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &e, NULL, &bad), S_OK);
    if (bad)
        ID3D11Texture2D_Release(bad);
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &d, NULL, NULL), S_FALSE);

    free(src);
    if (st)
        CHECK(ID3D11Texture2D_Release(st) == 0);
    CHECK(ID3D11Texture2D_Release(tex) == 0);
}

static void test_texture1d3d11(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    /* 1D array with mips, initial data, read through Map of a staging copy. */
    unsigned short line[64];
    for (int i = 0; i < 64; i++)
        line[i] = (unsigned short)(i * 3);
    D3D11_SUBRESOURCE_DATA init1[2 * 7];
    for (int i = 0; i < 14; i++)
        init1[i] = (D3D11_SUBRESOURCE_DATA){line, 0, 0};
    D3D11_TEXTURE1D_DESC d1 = {64, 0, 2, DXGI_FORMAT_R16_UINT, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE,
                               0, 0};
    ID3D11Texture1D *t1 = NULL;
    CHECK_HR(ID3D11Device_CreateTexture1D(dev, &d1, init1, &t1), S_OK);
    if (t1) {
        D3D11_TEXTURE1D_DESC g1;
        ID3D11Texture1D_GetDesc(t1, &g1);
        CHECK(g1.MipLevels == 7);
        D3D11_TEXTURE1D_DESC s1 = g1;
        s1.Usage = D3D11_USAGE_STAGING;
        s1.BindFlags = 0;
        s1.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        ID3D11Texture1D *st1 = NULL;
        CHECK_HR(ID3D11Device_CreateTexture1D(dev, &s1, NULL, &st1), S_OK);
        if (st1) {
            ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st1, (ID3D11Resource *)t1);
            D3D11_MAPPED_SUBRESOURCE m = {0};
            UINT sub = D3D11CalcSubresource(2, 1, 7); /* 16 texels */
            CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st1, sub, D3D11_MAP_READ, 0, &m), S_OK);
            if (m.pData) {
                CHECK(memcmp(m.pData, line, 16 * 2) == 0);
                ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st1, sub);
            }
            ID3D11Texture1D_Release(st1);
        }
        D3D11_RESOURCE_DIMENSION dim = 0;
        ID3D11Texture1D_GetType(t1, &dim);
        CHECK(dim == D3D11_RESOURCE_DIMENSION_TEXTURE1D);
        CHECK(ID3D11Texture1D_Release(t1) == 0);
    }

    /* 3D with mips: depth slices are DepthPitch apart. */
    enum { W = 8, H = 6, D = 5 };
    unsigned int vol[W * H * D];
    for (unsigned i = 0; i < W * H * D; i++)
        vol[i] = i * 2654435761u;
    D3D11_SUBRESOURCE_DATA init3[4] = {{vol, W * 4, W * H * 4}, {vol, 4 * 4, 4 * 3 * 4}, {vol, 2 * 4, 2 * 4},
                                      {vol, 4, 4}};
    D3D11_TEXTURE3D_DESC d3 = {W, H, D, 0, DXGI_FORMAT_R32_UINT, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE,
                               0, 0};
    ID3D11Texture3D *t3 = NULL;
    CHECK_HR(ID3D11Device_CreateTexture3D(dev, &d3, init3, &t3), S_OK);
    if (t3) {
        D3D11_TEXTURE3D_DESC g3;
        ID3D11Texture3D_GetDesc(t3, &g3);
        CHECK(g3.MipLevels == 4);
        D3D11_TEXTURE3D_DESC s3 = g3;
        s3.Usage = D3D11_USAGE_STAGING;
        s3.BindFlags = 0;
        s3.CPUAccessFlags = D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE;
        ID3D11Texture3D *st3 = NULL;
        CHECK_HR(ID3D11Device_CreateTexture3D(dev, &s3, NULL, &st3), S_OK);
        if (st3) {
            ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st3, (ID3D11Resource *)t3);
            D3D11_MAPPED_SUBRESOURCE m = {0};
            CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st3, 0, D3D11_MAP_READ, 0, &m), S_OK);
            if (m.pData) {
                int same = 1;
                for (unsigned z = 0; z < D; z++)
                    for (unsigned y = 0; y < H; y++)
                        same &= memcmp((unsigned char *)m.pData + z * m.DepthPitch + y * m.RowPitch,
                                       vol + (z * H + y) * W, W * 4) == 0;
                CHECK(same);
                CHECK(m.DepthPitch >= m.RowPitch * H);
                ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st3, 0);
            }
            /* A 3D box copied back into mip 1 of the default texture. */
            D3D11_BOX box = {1, 1, 1, 3, 3, 3};
            ID3D11DeviceContext_CopySubresourceRegion(ctx, (ID3D11Resource *)t3, 1, 0, 0, 0, (ID3D11Resource *)st3,
                                                      0, &box);
            ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)st3, (ID3D11Resource *)t3);
            CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)st3, 1, D3D11_MAP_READ, 0, &m), S_OK);
            if (m.pData) {
                const unsigned *z1y1 =
                    (const unsigned *)((unsigned char *)m.pData + 1 * m.DepthPitch + 1 * m.RowPitch);
                CHECK(z1y1[0] == vol[(2 * H + 2) * W + 1] && z1y1[1] == vol[(2 * H + 2) * W + 2]);
                ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)st3, 1);
            }
            ID3D11Texture3D_Release(st3);
        }
        CHECK(ID3D11Texture3D_Release(t3) == 0);
    }
}

static void test_queries11(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    D3D11_QUERY_DESC qd = {D3D11_QUERY_EVENT, 0};
    ID3D11Query *q = NULL;
    CHECK_HR(ID3D11Device_CreateQuery(dev, &qd, &q), S_OK);
    if (!q)
        return;
    BOOL done = FALSE;
    ID3D11DeviceContext_End(ctx, (ID3D11Asynchronous *)q);
    ID3D11DeviceContext_Flush(ctx);
    HRESULT hr;
    int spins = 0;
    while ((hr = ID3D11DeviceContext_GetData(ctx, (ID3D11Asynchronous *)q, &done, sizeof done, 0)) == S_FALSE &&
           spins++ < 1000000)
        ;
    CHECK(hr == S_OK && done == TRUE);
    CHECK(ID3D11Query_GetDataSize(q) == sizeof(BOOL));
    CHECK_HR(ID3D11DeviceContext_GetData(ctx, (ID3D11Asynchronous *)q, &done, 1, 0), E_INVALIDARG);
    CHECK(ID3D11Query_Release(q) == 0);
    CHECK_HR(ID3D11Device_CreateQuery(dev, NULL, &q), E_INVALIDARG);
}

/* ---------------------------------------------------------------------------------------------- */
/* D3D10                                                                                           */

static void test_d3d10(void)
{
    ID3D10Device *dev = NULL;
    CHECK_HR(D3D10CreateDevice(NULL, D3D10_DRIVER_TYPE_HARDWARE, NULL, 0, D3D10_SDK_VERSION, &dev), S_OK);
    if (!dev)
        return;
    CHECK_HR(D3D10CreateDevice(NULL, D3D10_DRIVER_TYPE_HARDWARE, NULL, 0, D3D10_SDK_VERSION, NULL), S_FALSE);

    enum { N = 1000 };
    unsigned char data[N], back[N];
    fill_pattern(data, N, 5);
    D3D10_SUBRESOURCE_DATA init = {data, 0, 0};
    D3D10_BUFFER_DESC bd = {N, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0, 0};
    ID3D10Buffer *buf = NULL;
    CHECK_HR(ID3D10Device_CreateBuffer(dev, &bd, &init, &buf), S_OK);
    D3D10_BUFFER_DESC sbd = {N, D3D10_USAGE_STAGING, 0, D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE, 0};
    ID3D10Buffer *st = NULL;
    CHECK_HR(ID3D10Device_CreateBuffer(dev, &sbd, NULL, &st), S_OK);
    if (buf && st) {
        CHECK(refcount((IUnknown *)buf) == 1);
        ID3D10Device_CopyResource(dev, (ID3D10Resource *)st, (ID3D10Resource *)buf);
        void *p = NULL;
        CHECK_HR(ID3D10Buffer_Map(st, D3D10_MAP_READ, 0, &p), S_OK);
        if (p) {
            memcpy(back, p, N);
            ID3D10Buffer_Unmap(st);
            CHECK(memcmp(back, data, N) == 0);
        }
        D3D10_BOX box = {10, 0, 0, 20, 1, 1};
        unsigned char ten[10] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
        ID3D10Device_UpdateSubresource(dev, (ID3D10Resource *)buf, 0, &box, ten, 0, 0);
        ID3D10Device_CopySubresourceRegion(dev, (ID3D10Resource *)st, 0, 0, 0, 0, (ID3D10Resource *)buf, 0, &box);
        CHECK_HR(ID3D10Buffer_Map(st, D3D10_MAP_READ, 0, &p), S_OK);
        if (p) {
            CHECK(memcmp(p, ten, 10) == 0);
            ID3D10Buffer_Unmap(st);
        }
        CHECK_HR(ID3D10Buffer_Map(buf, D3D10_MAP_READ, 0, &p), E_INVALIDARG);
        D3D10_RESOURCE_DIMENSION dim = 0;
        ID3D10Buffer_GetType(buf, &dim);
        CHECK(dim == D3D10_RESOURCE_DIMENSION_BUFFER);
    }
    if (buf)
        CHECK(ID3D10Buffer_Release(buf) == 0);
    if (st)
        CHECK(ID3D10Buffer_Release(st) == 0);

    /* Texture2D with mips and initial data; staging Map with D3D10_MAPPED_TEXTURE2D. */
    unsigned int px[16 * 8];
    for (unsigned i = 0; i < 16 * 8; i++)
        px[i] = 0x01020304u * i;
    D3D10_SUBRESOURCE_DATA ti[2] = {{px, 16 * 4, 0}, {px, 8 * 4, 0}};
    D3D10_TEXTURE2D_DESC td = {16, 8, 2, 1, DXGI_FORMAT_R8G8B8A8_UINT, {1, 0}, D3D10_USAGE_DEFAULT,
                               D3D10_BIND_SHADER_RESOURCE, 0, 0};
    ID3D10Texture2D *tex = NULL, *tst = NULL;
    CHECK_HR(ID3D10Device_CreateTexture2D(dev, &td, ti, &tex), S_OK);
    td.Usage = D3D10_USAGE_STAGING;
    td.BindFlags = 0;
    td.CPUAccessFlags = D3D10_CPU_ACCESS_READ;
    CHECK_HR(ID3D10Device_CreateTexture2D(dev, &td, NULL, &tst), S_OK);
    if (tex && tst) {
        ID3D10Device_CopyResource(dev, (ID3D10Resource *)tst, (ID3D10Resource *)tex);
        D3D10_MAPPED_TEXTURE2D m = {0};
        CHECK_HR(ID3D10Texture2D_Map(tst, 1, D3D10_MAP_READ, 0, &m), S_OK);
        if (m.pData) {
            int same = 1;
            for (int y = 0; y < 4; y++)
                same &= memcmp((unsigned char *)m.pData + y * m.RowPitch, px + y * 8, 8 * 4) == 0;
            CHECK(same);
            ID3D10Texture2D_Unmap(tst, 1);
        }
    }
    if (tex)
        CHECK(ID3D10Texture2D_Release(tex) == 0);
    if (tst)
        CHECK(ID3D10Texture2D_Release(tst) == 0);

    /* Texture3D mapped directly (staging). */
    D3D10_TEXTURE3D_DESC vd = {4, 4, 4, 1, DXGI_FORMAT_R32_FLOAT, D3D10_USAGE_STAGING, 0,
                               D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE, 0};
    ID3D10Texture3D *vol = NULL;
    CHECK_HR(ID3D10Device_CreateTexture3D(dev, &vd, NULL, &vol), S_OK);
    if (vol) {
        D3D10_MAPPED_TEXTURE3D m = {0};
        CHECK_HR(ID3D10Texture3D_Map(vol, 0, D3D10_MAP_WRITE, 0, &m), S_OK);
        if (m.pData) {
            ((float *)((unsigned char *)m.pData + 3 * m.DepthPitch))[1] = 42.0f;
            ID3D10Texture3D_Unmap(vol, 0);
        }
        CHECK_HR(ID3D10Texture3D_Map(vol, 0, D3D10_MAP_READ, 0, &m), S_OK);
        if (m.pData) {
            CHECK(((float *)((unsigned char *)m.pData + 3 * m.DepthPitch))[1] == 42.0f);
            ID3D10Texture3D_Unmap(vol, 0);
        }
        CHECK(ID3D10Texture3D_Release(vol) == 0);
    }

    /* Errors and event queries. */
    ID3D10Buffer *bad = (ID3D10Buffer *)0x1;
    D3D10_BUFFER_DESC e = {N, D3D10_USAGE_IMMUTABLE, D3D10_BIND_VERTEX_BUFFER, 0, 0};
    CHECK_HR(ID3D10Device_CreateBuffer(dev, &e, NULL, &bad), E_INVALIDARG);
    CHECK(bad == NULL);
    D3D10_QUERY_DESC qd = {D3D10_QUERY_EVENT, 0};
    ID3D10Query *q = NULL;
    CHECK_HR(ID3D10Device_CreateQuery(dev, &qd, &q), S_OK);
    if (q) {
        BOOL done = FALSE;
        ID3D10Query_End(q);
        HRESULT hr;
        int spins = 0;
        while ((hr = ID3D10Query_GetData(q, &done, sizeof done, 0)) == S_FALSE && spins++ < 1000000)
            ;
        CHECK(hr == S_OK && done);
        ID3D10Query_Release(q);
    }

    /* The D3D10 device is a DXGI device too. */
    IDXGIDevice *dxgi = NULL;
    CHECK_HR(ID3D10Device_QueryInterface(dev, &IID_IDXGIDevice, (void **)&dxgi), S_OK);
    if (dxgi)
        IDXGIDevice_Release(dxgi);
    CHECK(ID3D10Device_Release(dev) == 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* The adapter a device lands on, and what the interop faces report for it. DXCL_ADAPTER selects  */
/* the backend (`software`: the host backend; `vulkan` or unset: the first Vulkan device).        */

static void test_adapter11(ID3D11Device *dev, ID3D11DeviceContext *ctx)
{
    const char *env = getenv("DXCL_ADAPTER");
    int want_host = env && strcmp(env, "software") == 0;
    IDxclInteropDevice *idev = NULL;
    CHECK_HR(ID3D11Device_QueryInterface(dev, &IID_IDxclInteropDevice, (void **)&idev), S_OK);
    if (!idev)
        return;
    DXCL_ADAPTER_INFO info;
    memset(&info, 0xcd, sizeof info);
    CHECK_HR(IDxclInteropDevice_GetAdapterInfo(idev, &info), S_OK);
    CHECK(info.Backend == (want_host ? DXCL_BACKEND_KIND_HOST : DXCL_BACKEND_KIND_VULKAN));

    /* DXGI describes the same adapter. */
    IDXGIDevice *dxgi = NULL;
    IDXGIAdapter *adapter = NULL;
    DXGI_ADAPTER_DESC desc;
    memset(&desc, 0, sizeof desc);
    CHECK_HR(ID3D11Device_QueryInterface(dev, &IID_IDXGIDevice, (void **)&dxgi), S_OK);
    if (dxgi) {
        CHECK_HR(IDXGIDevice_GetAdapter(dxgi, &adapter), S_OK);
        if (adapter) {
            CHECK_HR(IDXGIAdapter_GetDesc(adapter, &desc), S_OK);
            IDXGIAdapter_Release(adapter);
        }
        IDXGIDevice_Release(dxgi);
    }
    CHECK(desc.AdapterLuid.LowPart == info.AdapterLuid.LowPart &&
          desc.AdapterLuid.HighPart == info.AdapterLuid.HighPart);
    CHECK(desc.AdapterLuid.LowPart != 0 || desc.AdapterLuid.HighPart != 0);
    CHECK(desc.VendorId == info.VendorId && desc.DeviceId == info.DeviceId);
    static const BYTE zero_uuid[16];
    if (info.Backend == DXCL_BACKEND_KIND_HOST) {
        CHECK(desc.VendorId == 0x1414 && desc.DeviceId == 0x8c);
        CHECK(info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE);
        CHECK(memcmp(info.DeviceUuid, zero_uuid, 16) == 0);
    } else {
        CHECK(memcmp(info.DeviceUuid, zero_uuid, 16) != 0);
    }

    /* A texture's memory: host memory, or device memory exported as an fd. */
    D3D11_TEXTURE2D_DESC td = {40, 8, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                               D3D11_BIND_SHADER_RESOURCE, 0, 0};
    ID3D11Texture2D *tex = NULL;
    CHECK_HR(ID3D11Device_CreateTexture2D(dev, &td, NULL, &tex), S_OK);
    IDxclInteropResource *ires = NULL;
    if (tex)
        CHECK_HR(ID3D11Texture2D_QueryInterface(tex, &IID_IDxclInteropResource, (void **)&ires), S_OK);
    if (ires) {
        DXCL_RESOURCE_MEMORY mem;
        DXCL_SUBRESOURCE_LAYOUT l;
        int fd = -1;
        CHECK_HR(IDxclInteropResource_GetMemory(ires, &mem), S_OK);
        CHECK_HR(IDxclInteropResource_GetSubresourceLayout(ires, 0, &l), S_OK);
        CHECK(l.Width == 40 && l.Height == 8 && l.RowPitch >= 160 && l.DepthPitch == 8 * l.RowPitch);
        if (info.Backend == DXCL_BACKEND_KIND_HOST) {
            CHECK(mem.Kind == DXCL_MEMORY_KIND_HOST && mem.pHost != NULL);
            CHECK_HR(IDxclInteropResource_ExportMemoryFd(ires, &fd), E_NOTIMPL);
        } else {
            /* A DEFAULT RGBA8 texture is an optimal-tiled image where the device exports those
               (lavapipe and NVIDIA do); the layout then describes Map's linear copies. */
            CHECK(mem.Kind == DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE ||
                  (mem.Kind == DXCL_MEMORY_KIND_OPAQUE_FD && mem.Size >= l.Size));
            CHECK(mem.pHost == NULL && mem.Size > 0);
            CHECK(l.RowPitch % 256 == 0 && l.Offset % 65536 == 0);
            CHECK_HR(IDxclInteropResource_ExportMemoryFd(ires, &fd), S_OK);
            CHECK(fd >= 0);
            if (fd >= 0)
                close(fd);
        }
        /* Map through a staging copy reports the same pitch. */
        ID3D11Texture2D *staging = NULL;
        td.Usage = D3D11_USAGE_STAGING;
        td.BindFlags = 0;
        td.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
        CHECK_HR(ID3D11Device_CreateTexture2D(dev, &td, NULL, &staging), S_OK);
        if (staging) {
            D3D11_MAPPED_SUBRESOURCE m;
            ID3D11DeviceContext_CopyResource(ctx, (ID3D11Resource *)staging, (ID3D11Resource *)tex);
            CHECK_HR(ID3D11DeviceContext_Map(ctx, (ID3D11Resource *)staging, 0, D3D11_MAP_READ, 0, &m), S_OK);
            CHECK(m.RowPitch == l.RowPitch);
            ID3D11DeviceContext_Unmap(ctx, (ID3D11Resource *)staging, 0);
            ID3D11Texture2D_Release(staging);
        }
        IDxclInteropResource_Release(ires);
    }
    if (tex)
        ID3D11Texture2D_Release(tex);

    /* Shared semaphores: none on the host backend; on Vulkan where the driver exports them. */
    UINT64 id = 0;
    int sfd = -1;
    HRESULT hr = IDxclInteropDevice_CreateSharedSemaphore(idev, &id, &sfd);
    if (info.Backend == DXCL_BACKEND_KIND_HOST)
        CHECK_HR(hr, E_NOTIMPL);
    else
        CHECK(hr == S_OK || hr == E_NOTIMPL);
    if (hr == S_OK) {
        CHECK(sfd >= 0);
        if (sfd >= 0)
            close(sfd);
        CHECK_HR(IDxclInteropDevice_SignalSharedSemaphore(idev, id), S_OK);
        CHECK_HR(IDxclInteropDevice_WaitSharedSemaphore(idev, id), S_OK);
        CHECK_HR(IDxclInteropDevice_DestroySharedSemaphore(idev, id), S_OK);
        CHECK_HR(IDxclInteropDevice_QuerySharedSemaphoreIdle(idev, id), E_INVALIDARG);
    } else {
        CHECK_HR(IDxclInteropDevice_SignalSharedSemaphore(idev, 1), E_NOTIMPL);
    }
    IDxclInteropDevice_Release(idev);
}

int main(void)
{
    test_dxgi();
    test_device11();
    ID3D11DeviceContext *ctx = NULL;
    ID3D11Device *dev = create_device11(&ctx);
    if (dev && ctx) {
        test_adapter11(dev, ctx);
        test_buffers11(dev, ctx);
        test_texture2d11(dev, ctx);
        test_texture1d3d11(dev, ctx);
        test_queries11(dev, ctx);
        ID3D11DeviceContext_Release(ctx);
        CHECK(ID3D11Device_Release(dev) == 0);
    }
    test_d3d10();
    printf("d3d_api.c: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
