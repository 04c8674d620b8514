/* dxcl/dxcl_dxvk.h: sharing DXVK-native textures with OpenCL without copies (docs/dxvk.md).
 *
 * DXVK allocates the memory of the textures an application creates itself and exports none of it
 * on Linux, so dxcl's OpenCL layer shares those by copies. A texture created through
 * dxclCreateSharedTexture2D instead lives in memory dxcl allocates on DXVK's Vulkan device; the
 * layer shares it in place. It is an ordinary ID3D11Texture2D otherwise.
 *
 * Link with libdxcl_layer.so (the library OPENCL_LAYERS loads). */
#ifndef DXCL_DXCL_DXVK_H_
#define DXCL_DXCL_DXVK_H_

#include <d3d11.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Creates a 2D texture on DXVK's D3D11 `device` whose memory dxcl's OpenCL layer shares without
 * copies. `pDesc` must describe one subresource (MipLevels 1, ArraySize 1, one sample),
 * D3D11_USAGE_DEFAULT with no CPU access, in a format OpenCL images have (RGBA, BGRA, RG and R
 * formats of 8, 16 and 32 bits). Its contents start undefined: fill it with UpdateSubresource.
 *
 * Returns S_OK and *ppTexture2D; E_INVALIDARG for a null argument or a description outside the
 * above; DXGI_ERROR_UNSUPPORTED when `device` is not DXVK's, or its Vulkan device is not one dxcl
 * can share this way yet (today: CPU devices such as lavapipe, shared with CPU OpenCL devices such
 * as PoCL through CL_MEM_USE_HOST_PTR); E_OUTOFMEMORY when the memory cannot be allocated.
 */
HRESULT STDMETHODCALLTYPE dxclCreateSharedTexture2D(ID3D11Device *device, const D3D11_TEXTURE2D_DESC *pDesc,
                                                    ID3D11Texture2D **ppTexture2D);

#ifdef __cplusplus
}
#endif

#endif
