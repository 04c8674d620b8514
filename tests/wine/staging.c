/* Direct3D's own share of a staging hand-off, without OpenCL: for a 3840x2160 R8G8B8A8_UNORM
 * texture, the Direct3D 11 calls dxcl's staging-copy strategy makes per acquire and release
 * (CopySubresourceRegion into a STAGING texture, Map(READ), the rows into a packed host shadow,
 * Unmap; then Map(WRITE), the rows back, Unmap, CopySubresourceRegion into the texture), timed
 * step by step, the median of ROUNDS after WARMUP. One C source built for Windows (run under Wine:
 * wined3d) and for Linux (dxcl's runtime), so that scripts/wine/bench.sh sets the Direct3D
 * implementation's cost against the hand-off's (tests/wine/handoff.c). As there, Direct3D writes
 * one texel between rounds (untimed), and the copy back is queued, not waited for: the next
 * round's Map(READ) waits for it, as the next acquire's does.
 * Prints "staging: <median µs> µs (...)", then the median of each step; then the same hand-off
 * with the write-back made by one UpdateSubresource of the texture from the shadow instead of the
 * staging texture's Map(WRITE), rows, Unmap and copy: "update: <median µs> µs (...)". */
#ifndef _WIN32
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#endif
#define COBJMACROS
#include <windows.h>
#include <d3d11.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <time.h>
#endif

#define WIDTH 3840
#define HEIGHT 2160
#define WARMUP 3
#define ROUNDS 15

enum step { COPY_IN, MAP_READ, ROWS_OUT, UNMAP_READ, MAP_WRITE, ROWS_IN, UNMAP_WRITE, COPY_OUT, STEPS };

static const char *const step_names[STEPS] = {
    "CopySubresourceRegion into the staging texture",
    "Map(READ) (waits for the copy)",
    "rows into the host shadow (memcpy)",
    "Unmap",
    "Map(WRITE)",
    "rows from the host shadow (memcpy)",
    "Unmap",
    "CopySubresourceRegion back (queued)",
};

#include "common.h"

static double median(double *v)
{
    qsort(v, ROUNDS, sizeof v[0], cmp);
    return v[ROUNDS / 2];
}

/* Copies the rows between the packed shadow and a mapping of `pitch` bytes a row. */
static void rows(unsigned char *shadow, unsigned char *mapped, UINT pitch, int to_shadow)
{
    const size_t row = (size_t)WIDTH * 4;
    for (size_t y = 0; y < HEIGHT; y++)
    {
        if (to_shadow)
            memcpy(shadow + y * row, mapped + y * pitch, row);
        else
            memcpy(mapped + y * pitch, shadow + y * row, row);
    }
}

int main(void)
{
    ID3D11Device *device;
    ID3D11DeviceContext *ctx;
    if (FAILED(D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &device, NULL,
                                 &ctx)))
    {
        printf("staging: no Direct3D device\n");
        return 1;
    }
    D3D11_TEXTURE2D_DESC d = {WIDTH, HEIGHT, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_DEFAULT,
                              D3D11_BIND_SHADER_RESOURCE, 0, 0};
    D3D11_TEXTURE2D_DESC s = {WIDTH, HEIGHT, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, {1, 0}, D3D11_USAGE_STAGING, 0,
                              D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE, 0};
    ID3D11Texture2D *texture, *staging;
    unsigned char *shadow = malloc((size_t)WIDTH * HEIGHT * 4);
    if (!shadow || FAILED(ID3D11Device_CreateTexture2D(device, &d, NULL, &texture))
        || FAILED(ID3D11Device_CreateTexture2D(device, &s, NULL, &staging)))
    {
        printf("staging: no textures\n");
        return 1;
    }
    ID3D11Resource *tex = (ID3D11Resource *)texture, *stg = (ID3D11Resource *)staging;
    static double t[STEPS][ROUNDS], total[ROUNDS];
    for (int i = 0; i < WARMUP + ROUNDS; i++)
    {
        UINT texel = 0xff000000u | (UINT)i;
        D3D11_BOX one = {0, 0, 0, 1, 1, 1};
        D3D11_MAPPED_SUBRESOURCE m;
        double at[STEPS + 1];
        ID3D11DeviceContext_UpdateSubresource(ctx, tex, 0, &one, &texel, 4, 4);
        at[COPY_IN] = now_us();
        ID3D11DeviceContext_CopySubresourceRegion(ctx, stg, 0, 0, 0, 0, tex, 0, NULL);
        at[MAP_READ] = now_us();
        if (FAILED(ID3D11DeviceContext_Map(ctx, stg, 0, D3D11_MAP_READ, 0, &m))) goto failed;
        at[ROWS_OUT] = now_us();
        rows(shadow, m.pData, m.RowPitch, 1);
        at[UNMAP_READ] = now_us();
        ID3D11DeviceContext_Unmap(ctx, stg, 0);
        at[MAP_WRITE] = now_us();
        if (FAILED(ID3D11DeviceContext_Map(ctx, stg, 0, D3D11_MAP_WRITE, 0, &m))) goto failed;
        at[ROWS_IN] = now_us();
        rows(shadow, m.pData, m.RowPitch, 0);
        at[UNMAP_WRITE] = now_us();
        ID3D11DeviceContext_Unmap(ctx, stg, 0);
        at[COPY_OUT] = now_us();
        ID3D11DeviceContext_CopySubresourceRegion(ctx, tex, 0, 0, 0, 0, stg, 0, NULL);
        at[STEPS] = now_us();
        if ((shadow[0] | shadow[1] << 8 | shadow[2] << 16 | (UINT)shadow[3] << 24) != texel)
        {
            printf("staging: the shadow does not hold the texel Direct3D wrote\n");
            return 1;
        }
        if (i < WARMUP) continue;
        for (int k = 0; k < STEPS; k++) t[k][i - WARMUP] = at[k + 1] - at[k];
        total[i - WARMUP] = at[STEPS] - at[0];
    }
    printf("staging: %.1f µs (%d rounds)\n", median(total), ROUNDS);
    for (int k = 0; k < STEPS; k++) printf("  %s: %.1f µs\n", step_names[k], median(t[k]));
    /* The write-back as one upload from the shadow. */
    for (int i = 0; i < WARMUP + ROUNDS; i++)
    {
        UINT texel = 0xff000000u | (UINT)(i + 0x100);
        D3D11_BOX one = {0, 0, 0, 1, 1, 1};
        D3D11_MAPPED_SUBRESOURCE m;
        ID3D11DeviceContext_UpdateSubresource(ctx, tex, 0, &one, &texel, 4, 4);
        double start = now_us();
        ID3D11DeviceContext_CopySubresourceRegion(ctx, stg, 0, 0, 0, 0, tex, 0, NULL);
        if (FAILED(ID3D11DeviceContext_Map(ctx, stg, 0, D3D11_MAP_READ, 0, &m))) goto failed;
        rows(shadow, m.pData, m.RowPitch, 1);
        ID3D11DeviceContext_Unmap(ctx, stg, 0);
        double read = now_us();
        ID3D11DeviceContext_UpdateSubresource(ctx, tex, 0, NULL, shadow, WIDTH * 4, 0);
        double end = now_us();
        if (i < WARMUP) continue;
        t[0][i - WARMUP] = end - read;
        total[i - WARMUP] = end - start;
    }
    printf("update: %.1f µs (%d rounds)\n", median(total), ROUNDS);
    printf("  UpdateSubresource from the shadow: %.1f µs\n", median(t[0]));
    ID3D11Texture2D_Release(staging);
    ID3D11Texture2D_Release(texture);
    ID3D11DeviceContext_Release(ctx);
    ID3D11Device_Release(device);
    free(shadow);
    return 0;
failed:
    printf("staging: Map failed\n");
    return 1;
}
