/* A headless stand-in for SDL2 (libSDL2-2.0.so.0), for running DXVK-native where there is no X
 * server and no SDL2 (the GPU machine; scripts/dxvk/test.sh with DXVK_HEADLESS=1). It defines only
 * what DXVK-native v2.3's SDL2 window-system code and tests/dxvk/shim.c call (DXVK's imports, as
 * `nm -D --undefined-only` lists them), with the answers of a machine with no display: no instance
 * extensions for surfaces, no displays, no windows. DXVK loads the Vulkan loader itself, so
 * devices, resources and copies work; swapchains and outputs do not. Signatures are SDL2's. */
#include <stddef.h>
#include <stdint.h>

typedef enum { SDL_FALSE = 0, SDL_TRUE = 1 } SDL_bool;
typedef struct SDL_Window SDL_Window;
typedef struct {
    uint32_t format;
    int w, h, refresh_rate;
    void *driverdata;
} SDL_DisplayMode;
typedef struct {
    int x, y, w, h;
} SDL_Rect;

#define EXPORT __attribute__((visibility("default")))

static const char *last_error = "";

static int fail(const char *why)
{
    last_error = why;
    return -1;
}

EXPORT int SDL_Init(uint32_t flags)
{
    (void)flags;
    return 0;
}

EXPORT void SDL_Quit(void) {}

EXPORT const char *SDL_GetError(void)
{
    return last_error;
}

EXPORT int SDL_Vulkan_LoadLibrary(const char *path)
{
    (void)path;
    return 0;
}

EXPORT void SDL_Vulkan_UnloadLibrary(void) {}

/* No window system: no surface extensions. */
EXPORT SDL_bool SDL_Vulkan_GetInstanceExtensions(SDL_Window *window, unsigned int *count, const char **names)
{
    (void)window;
    (void)names;
    if (!count)
        return SDL_FALSE;
    *count = 0;
    return SDL_TRUE;
}

EXPORT SDL_bool SDL_Vulkan_CreateSurface(SDL_Window *window, void *instance, void *surface)
{
    (void)window;
    (void)instance;
    (void)surface;
    fail("headless: no surfaces");
    return SDL_FALSE;
}

EXPORT int SDL_GetNumVideoDisplays(void)
{
    return 0;
}

EXPORT int SDL_GetDisplayBounds(int display, SDL_Rect *rect)
{
    (void)display;
    (void)rect;
    return fail("headless: no displays");
}

EXPORT int SDL_GetDisplayMode(int display, int mode_index, SDL_DisplayMode *mode)
{
    (void)display;
    (void)mode_index;
    (void)mode;
    return fail("headless: no displays");
}

EXPORT int SDL_GetCurrentDisplayMode(int display, SDL_DisplayMode *mode)
{
    (void)display;
    (void)mode;
    return fail("headless: no displays");
}

EXPORT int SDL_GetDesktopDisplayMode(int display, SDL_DisplayMode *mode)
{
    (void)display;
    (void)mode;
    return fail("headless: no displays");
}

EXPORT SDL_DisplayMode *SDL_GetClosestDisplayMode(int display, const SDL_DisplayMode *mode, SDL_DisplayMode *closest)
{
    (void)display;
    (void)mode;
    (void)closest;
    fail("headless: no displays");
    return NULL;
}

EXPORT int SDL_GetWindowDisplayIndex(SDL_Window *window)
{
    (void)window;
    return fail("headless: no windows");
}

EXPORT void SDL_GetWindowSize(SDL_Window *window, int *w, int *h)
{
    (void)window;
    if (w)
        *w = 0;
    if (h)
        *h = 0;
}

EXPORT int SDL_SetWindowDisplayMode(SDL_Window *window, const SDL_DisplayMode *mode)
{
    (void)window;
    (void)mode;
    return fail("headless: no windows");
}

EXPORT int SDL_SetWindowFullscreen(SDL_Window *window, uint32_t flags)
{
    (void)window;
    (void)flags;
    return fail("headless: no windows");
}

EXPORT void SDL_SetWindowSize(SDL_Window *window, int w, int h)
{
    (void)window;
    (void)w;
    (void)h;
}
