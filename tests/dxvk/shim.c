/* Linked into the conformance programs when they run on DXVK-native (scripts/dxvk/test.sh):
 *
 * - DXVK-native's SDL2 window-system integration needs SDL's video subsystem and its Vulkan library
 *   before the first device is made: a constructor does both, and a destructor undoes them.
 * - DXVK 2.x ships d3d10core only (no d3d10.dll), so D3D10CreateDevice, which the harness calls, is
 *   made here from D3D10CoreCreateDevice on the first DXGI adapter, as d3d10.dll does on Windows. */
#define COBJMACROS
#include <d3d10.h>
#include <dxgi.h>

#include <SDL2/SDL.h>
#include <SDL2/SDL_vulkan.h>

#include <stdio.h>
#include <stdlib.h>

HRESULT WINAPI D3D10CoreCreateDevice(IDXGIFactory *factory, IDXGIAdapter *adapter, UINT flags,
                                     D3D_FEATURE_LEVEL level, ID3D10Device **device);
HRESULT WINAPI CreateDXGIFactory1(REFIID riid, void **factory);

__attribute__((constructor)) static void dxvk_sdl_init(void)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0 || SDL_Vulkan_LoadLibrary(NULL) != 0) {
        fprintf(stderr, "dxvk shim: SDL video/Vulkan: %s (is an X server running? DISPLAY=%s)\n", SDL_GetError(),
                getenv("DISPLAY") ? getenv("DISPLAY") : "(unset)");
        exit(2);
    }
}

__attribute__((destructor)) static void dxvk_sdl_quit(void)
{
    SDL_Vulkan_UnloadLibrary();
    SDL_Quit();
}

HRESULT WINAPI D3D10CreateDevice(IDXGIAdapter *adapter, D3D10_DRIVER_TYPE type, HMODULE software, UINT flags,
                                 UINT sdk, ID3D10Device **device)
{
    (void)type;
    (void)software;
    (void)sdk;
    IDXGIFactory *factory = NULL;
    HRESULT hr = CreateDXGIFactory1(&IID_IDXGIFactory, (void **)&factory);
    if (FAILED(hr))
        return hr;
    IDXGIAdapter *a = adapter;
    if (!a)
        hr = IDXGIFactory_EnumAdapters(factory, 0, &a);
    if (SUCCEEDED(hr))
        hr = D3D10CoreCreateDevice(factory, a, flags, D3D_FEATURE_LEVEL_10_0, device);
    if (a && a != adapter)
        IDXGIAdapter_Release(a);
    IDXGIFactory_Release(factory);
    return hr;
}
