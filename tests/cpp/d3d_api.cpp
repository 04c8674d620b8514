// The Direct3D 11/10 API as a C++ application sees it: interface classes, __uuidof, a small RAII
// pointer of the kind every D3D code base has. Built against the installed headers and library with
// pkg-config and run under valgrind by `make test-c`.
#include <d3d10.h>
#include <d3d11.h>
#include <dxgi.h>
#include <dxcl/dxcl_interop.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

static int passed, failed;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            passed++;                                                                \
        } else {                                                                     \
            failed++;                                                                \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

// Owns one reference; Release on destruction.
template <typename T> class Ref {
  public:
    Ref() = default;
    Ref(const Ref &) = delete;
    Ref &operator=(const Ref &) = delete;
    ~Ref() { reset(); }
    T **put() { reset(); return &p_; }
    void **put_void() { return reinterpret_cast<void **>(put()); }
    T *get() const { return p_; }
    T *operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    ULONG reset() {
        ULONG left = 0;
        if (p_)
            left = p_->Release();
        p_ = nullptr;
        return left;
    }

  private:
    T *p_ = nullptr;
};

template <typename To, typename From> static bool query(From *from, Ref<To> &to) {
    return from->QueryInterface(__uuidof(To), to.put_void()) == S_OK;
}

static void test_d3d11() {
    Ref<ID3D11Device> dev;
    Ref<ID3D11DeviceContext> ctx;
    D3D_FEATURE_LEVEL level{};
    CHECK(D3D11CreateDevice(nullptr, D3D_DRIVER_TYPE_HARDWARE, nullptr, 0, nullptr, 0, D3D11_SDK_VERSION,
                            dev.put(), &level, ctx.put()) == S_OK);
    if (!dev || !ctx)
        return;

    // The immediate context from the device is the same object as the one returned at creation.
    Ref<ID3D11DeviceContext> again;
    dev->GetImmediateContext(again.put());
    CHECK(again.get() == ctx.get());
    CHECK(ctx->GetType() == D3D11_DEVICE_CONTEXT_IMMEDIATE);

    // Through the adapter the device came from.
    Ref<IDXGIDevice> dxgi;
    CHECK(query(dev.get(), dxgi));
    Ref<IDXGIAdapter> adapter;
    if (dxgi)
        CHECK(dxgi->GetAdapter(adapter.put()) == S_OK);
    if (adapter) {
        DXGI_ADAPTER_DESC desc{};
        CHECK(adapter->GetDesc(&desc) == S_OK);
        CHECK(desc.Description[0] != 0);
        // DXCL_ADAPTER=software lands on the software adapter (WARP's ids), vulkan or unset on
        // the first Vulkan device; the interop face names the same adapter.
        const char *env = std::getenv("DXCL_ADAPTER");
        const bool want_host = env && std::strcmp(env, "software") == 0;
        Ref<IDxclInteropDevice> interop;
        CHECK(query(dev.get(), interop));
        if (interop) {
            DXCL_ADAPTER_INFO info{};
            CHECK(interop->GetAdapterInfo(&info) == S_OK);
            CHECK(info.Backend == (want_host ? DXCL_BACKEND_KIND_HOST : DXCL_BACKEND_KIND_VULKAN));
            CHECK(info.AdapterLuid.LowPart == desc.AdapterLuid.LowPart &&
                  info.AdapterLuid.HighPart == desc.AdapterLuid.HighPart);
            CHECK(want_host == (desc.VendorId == 0x1414 && desc.DeviceId == 0x8c));
        }
        Ref<IDXGIFactory> factory;
        CHECK(adapter->GetParent(__uuidof(IDXGIFactory), factory.put_void()) == S_OK);
    }

    // A structured buffer written by Map on a dynamic twin and read back through staging.
    const UINT count = 300;
    std::vector<float> values(count * 4);
    for (UINT i = 0; i < values.size(); i++)
        values[i] = static_cast<float>(i) * 0.5f;
    D3D11_BUFFER_DESC bd{};
    bd.ByteWidth = count * 16;
    bd.Usage = D3D11_USAGE_DEFAULT;
    bd.BindFlags = D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS;
    bd.MiscFlags = D3D11_RESOURCE_MISC_BUFFER_STRUCTURED;
    bd.StructureByteStride = 16;
    Ref<ID3D11Buffer> structured;
    CHECK(dev->CreateBuffer(&bd, nullptr, structured.put()) == S_OK);
    D3D11_BUFFER_DESC nostride = bd;
    nostride.StructureByteStride = 0;
    Ref<ID3D11Buffer> bad;
    CHECK(dev->CreateBuffer(&nostride, nullptr, bad.put()) == E_INVALIDARG);
    CHECK(!bad);

    D3D11_BUFFER_DESC dd = bd;
    dd.Usage = D3D11_USAGE_DYNAMIC;
    dd.BindFlags = D3D11_BIND_SHADER_RESOURCE;
    dd.CPUAccessFlags = D3D11_CPU_ACCESS_WRITE;
    Ref<ID3D11Buffer> dynamic;
    CHECK(dev->CreateBuffer(&dd, nullptr, dynamic.put()) == S_OK);
    D3D11_BUFFER_DESC sd = bd;
    sd.Usage = D3D11_USAGE_STAGING;
    sd.BindFlags = 0;
    sd.MiscFlags = 0;
    sd.StructureByteStride = 0;
    sd.CPUAccessFlags = D3D11_CPU_ACCESS_READ;
    Ref<ID3D11Buffer> staging;
    CHECK(dev->CreateBuffer(&sd, nullptr, staging.put()) == S_OK);
    if (structured && dynamic && staging) {
        D3D11_MAPPED_SUBRESOURCE m{};
        CHECK(ctx->Map(dynamic.get(), 0, D3D11_MAP_WRITE_DISCARD, 0, &m) == S_OK);
        if (m.pData) {
            std::memcpy(m.pData, values.data(), bd.ByteWidth);
            ctx->Unmap(dynamic.get(), 0);
        }
        ctx->CopyResource(structured.get(), dynamic.get());
        ctx->CopyResource(staging.get(), structured.get());
        CHECK(ctx->Map(staging.get(), 0, D3D11_MAP_READ, 0, &m) == S_OK);
        if (m.pData) {
            CHECK(std::memcmp(m.pData, values.data(), bd.ByteWidth) == 0);
            ctx->Unmap(staging.get(), 0);
        }
    }

    // A texture array: subresource arithmetic and per-slice copies.
    D3D11_TEXTURE2D_DESC td{};
    td.Width = 32;
    td.Height = 32;
    td.MipLevels = 0;
    td.ArraySize = 4;
    td.Format = DXGI_FORMAT_R16G16B16A16_FLOAT;
    td.SampleDesc.Count = 1;
    td.Usage = D3D11_USAGE_STAGING;
    td.CPUAccessFlags = D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE;
    Ref<ID3D11Texture2D> a, b;
    CHECK(dev->CreateTexture2D(&td, nullptr, a.put()) == S_OK);
    CHECK(dev->CreateTexture2D(&td, nullptr, b.put()) == S_OK);
    if (a && b) {
        D3D11_TEXTURE2D_DESC got{};
        a->GetDesc(&got);
        CHECK(got.MipLevels == 6);
        const UINT src = D3D11CalcSubresource(1, 2, got.MipLevels);
        const UINT dst = D3D11CalcSubresource(1, 3, got.MipLevels);
        D3D11_MAPPED_SUBRESOURCE m{};
        CHECK(ctx->Map(a.get(), src, D3D11_MAP_WRITE, 0, &m) == S_OK);
        if (m.pData) {
            for (UINT y = 0; y < 16; y++)
                std::memset(static_cast<unsigned char *>(m.pData) + y * m.RowPitch, int(y + 1), 16 * 8);
            ctx->Unmap(a.get(), src);
        }
        ctx->CopySubresourceRegion(b.get(), dst, 0, 0, 0, a.get(), src, nullptr);
        CHECK(ctx->Map(b.get(), dst, D3D11_MAP_READ, 0, &m) == S_OK);
        if (m.pData) {
            bool same = true;
            for (UINT y = 0; y < 16; y++)
                same = same && static_cast<unsigned char *>(m.pData)[y * m.RowPitch + 16 * 8 - 1] == y + 1;
            CHECK(same);
            ctx->Unmap(b.get(), dst);
        }
        // Mapping a subresource twice without Unmap is refused.
        CHECK(ctx->Map(b.get(), 0, D3D11_MAP_READ, 0, &m) == S_OK);
        D3D11_MAPPED_SUBRESOURCE m2{};
        CHECK(ctx->Map(b.get(), 0, D3D11_MAP_READ, 0, &m2) == E_INVALIDARG);
        ctx->Unmap(b.get(), 0);
    }

    // Refcounts: the returned count is the public one.
    CHECK(a->AddRef() == 2);
    CHECK(a->Release() == 1);
    CHECK(a.reset() == 0);
}

static void test_d3d10() {
    Ref<ID3D10Device> dev;
    CHECK(D3D10CreateDevice(nullptr, D3D10_DRIVER_TYPE_HARDWARE, nullptr, 0, D3D10_SDK_VERSION, dev.put()) ==
          S_OK);
    if (!dev)
        return;
    D3D10_BUFFER_DESC bd{};
    bd.ByteWidth = 64;
    bd.Usage = D3D10_USAGE_DYNAMIC;
    bd.BindFlags = D3D10_BIND_CONSTANT_BUFFER;
    bd.CPUAccessFlags = D3D10_CPU_ACCESS_WRITE;
    Ref<ID3D10Buffer> cb;
    CHECK(dev->CreateBuffer(&bd, nullptr, cb.put()) == S_OK);
    if (cb) {
        void *p = nullptr;
        CHECK(cb->Map(D3D10_MAP_WRITE_DISCARD, 0, &p) == S_OK);
        if (p)
            cb->Unmap();
        Ref<ID3D10Device> owner;
        cb->GetDevice(owner.put());
        CHECK(owner.get() == dev.get());
        Ref<ID3D11Buffer> not11;
        CHECK(cb->QueryInterface(__uuidof(ID3D11Buffer), not11.put_void()) == E_NOINTERFACE);
    }
    CHECK(cb.reset() == 0);
    CHECK(dev.reset() == 0);
}

int main() {
    test_d3d11();
    test_d3d10();
    std::printf("d3d_api.cpp: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
