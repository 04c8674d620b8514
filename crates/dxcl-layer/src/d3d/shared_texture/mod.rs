//! `dxclCreateSharedTexture2D`: a Direct3D 11 texture on DXVK's device whose memory dxcl owns,
//! so that the OpenCL layer shares it without copies (issue 12, item 4; docs/dxvk.md).
//!
//! DXVK allocates its resources' memory itself and never exports it on Linux, so the layer can
//! only copy them. A texture made here instead lives in memory this module allocates on DXVK's
//! `VkDevice` ([`allocate`]) and wraps with DXVK's `IDXGIVkInteropDevice1::CreateTexture2DFromVkImage`.
//! The texture carries, as private data under `IID_IDxclInteropResource`, an object that
//! implements `IDxclInteropResource` for that memory ([`memory`]), so the layer's existing
//! strategies see it as they see dxcl's own resources ([`crate::d3d::interop::Interop::query`]):
//! host pointer on CPU devices (run on lavapipe + PoCL and rusticl), external memory on GPUs
//! (exportable memory through dxcl's Vulkan layer; run on an H100 with NVIDIA's OpenCL).
//!
//! Ordering against DXVK: DXVK cannot be told to wait before its next access, so
//! `AddPendingWork` is refused and the layer waits on the CPU at release (as for DXVK's own
//! resources); `WaitForDeviceWork` flushes DXVK and waits for its queue.

mod allocate;
mod memory;

use ash::vk;
use dxcl_abi::interop::IDxclInteropResource;
use dxcl_abi::*;

use super::com::ComPtr;
use super::dxvk_com::{IDXGIVkInteropDevice1, Texture2dDesc1, VulkanHandles};

/// Checks the description: one 2D subresource of a format OpenCL images have, default usage.
fn check_desc(d: &D3D11_TEXTURE2D_DESC) -> Result<(vk::Format, u32), HRESULT> {
    let format = allocate::vk_format(d.Format).ok_or(E_INVALIDARG)?;
    let one = d.MipLevels == 1 && d.ArraySize == 1 && d.SampleDesc.Count == 1;
    if !one
        || d.Width == 0
        || d.Height == 0
        || d.Usage != D3D11_USAGE_DEFAULT
        || d.CPUAccessFlags != 0
    {
        return Err(E_INVALIDARG);
    }
    Ok(format)
}

/// Makes the texture (the body of the exported function).
///
/// # Safety
/// `device` is a live ID3D11Device; `desc` is readable.
pub(crate) unsafe fn create(
    device: *mut ID3D11Device,
    desc: &D3D11_TEXTURE2D_DESC,
) -> Result<*mut ID3D11Texture2D, HRESULT> {
    let (format, texel) = check_desc(desc)?;
    // SAFETY: a live device (caller's contract); the reference is counted from here.
    let device = unsafe {
        ((*(*device).lpVtbl).base.AddRef)(device.cast());
        ComPtr::from_owned(device.cast::<IUnknown>())
    }
    .ok_or(E_INVALIDARG)?;
    // Not DXVK's device (no IDXGIVkInteropDevice1): nothing to allocate on.
    let dxvk = device
        .query::<IDXGIVkInteropDevice1>()
        .ok_or(DXGI_ERROR_UNSUPPORTED)?;
    let d = dxvk.as_ptr();
    let h = VulkanHandles::of(&dxvk);
    // SAFETY: DXVK's live handles.
    let fns =
        unsafe { allocate::Fns::load(h.instance, h.physical, h.device, h.queue) }.ok_or(E_FAIL)?;
    let mut desc1 = Texture2dDesc1 {
        desc: *desc,
        layout: 0,
    };
    // DXCL_SHARED_TEXTURE_MEMORY=exportable makes a CPU device take the GPU path too: how the
    // DXVK suite runs that allocation and its fd export on lavapipe.
    let exportable = std::env::var("DXCL_SHARED_TEXTURE_MEMORY").is_ok_and(|v| v == "exportable");
    let a = if fns.cpu_device() && !exportable {
        fns.host_image(format, desc)?
    } else {
        // DXVK keeps a texture bound for unordered access in GENERAL, the layout OpenCL sees.
        desc1.desc.BindFlags |= D3D11_BIND_UNORDERED_ACCESS as u32;
        fns.exportable_image(format, texel, desc)?
    };
    let image = a.image;
    // SAFETY: DXVK's live interop device; `a` was made on its device. From here the object owns
    // the image and memory: its last release destroys them.
    let shared = unsafe { memory::SharedMemory::create(d, fns.vk(), a) };
    let drop_shared = || {
        // SAFETY: our one reference.
        unsafe { memory::release(shared) };
    };
    let mut texture = std::ptr::null_mut();
    // SAFETY: DXVK's live interop device; a valid description of the image; a valid out pointer.
    let hr = unsafe { ((*(*d).lpVtbl).CreateTexture2DFromVkImage)(d, &desc1, image, &mut texture) };
    if FAILED(hr) || texture.is_null() {
        drop_shared();
        return Err(if FAILED(hr) { hr } else { E_FAIL });
    }
    // The texture keeps the object (and so the memory) as private data under the interop IID.
    // SAFETY: a live texture (a device child); a live IUnknown it counts.
    let hr = unsafe {
        ((*(*texture).lpVtbl).base.base.SetPrivateDataInterface)(
            texture.cast(),
            &IDxclInteropResource::IID,
            shared,
        )
    };
    drop_shared();
    if FAILED(hr) {
        // SAFETY: our texture reference; its release lets go of nothing of ours.
        unsafe { ((*(*texture).lpVtbl).base.base.base.Release)(texture.cast()) };
        return Err(hr);
    }
    Ok(texture)
}

/// The `IDxclInteropResource` a shared texture carries as private data, if `resource` is one.
pub(crate) fn from_private_data(resource: &ComPtr) -> Option<ComPtr<IDxclInteropResource>> {
    let child = resource.query::<ID3D11DeviceChild>()?;
    let p = child.as_ptr();
    let mut data: *mut IUnknown = std::ptr::null_mut();
    let mut size = std::mem::size_of::<*mut IUnknown>() as UINT;
    // SAFETY: a live device child; a pointer-sized out buffer (an interface is stored there,
    // counted for us).
    let hr = unsafe {
        ((*(*p).lpVtbl).GetPrivateData)(
            p,
            &IDxclInteropResource::IID,
            &mut size,
            std::ptr::addr_of_mut!(data).cast(),
        )
    };
    if FAILED(hr) || size as usize != std::mem::size_of::<*mut IUnknown>() {
        return None;
    }
    // SAFETY: GetPrivateData counted the interface it returned.
    let unknown = unsafe { ComPtr::from_owned(data) }?;
    unknown.query::<IDxclInteropResource>()
}

/// `HRESULT dxclCreateSharedTexture2D(ID3D11Device *device, const D3D11_TEXTURE2D_DESC *desc,
/// ID3D11Texture2D **texture)` (include/dxcl/dxcl_dxvk.h).
///
/// # Safety
/// C contract: `device` a live ID3D11Device or null; `desc` readable or null; `texture`
/// writable or null.
#[no_mangle]
pub unsafe extern "system" fn dxclCreateSharedTexture2D(
    device: *mut ID3D11Device,
    desc: *const D3D11_TEXTURE2D_DESC,
    texture: *mut *mut ID3D11Texture2D,
) -> HRESULT {
    if device.is_null() || desc.is_null() || texture.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: non-null, writable (C contract).
    unsafe { *texture = std::ptr::null_mut() };
    let made = std::panic::catch_unwind(|| {
        // SAFETY: C contract.
        unsafe { create(device, &*desc) }
    });
    match made {
        Ok(Ok(t)) => {
            // SAFETY: as above.
            unsafe { *texture = t };
            S_OK
        }
        Ok(Err(hr)) => hr,
        Err(_) => E_FAIL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> D3D11_TEXTURE2D_DESC {
        D3D11_TEXTURE2D_DESC {
            Width: 64,
            Height: 32,
            MipLevels: 1,
            ArraySize: 1,
            Format: DXGI_FORMAT_R8G8B8A8_UNORM,
            SampleDesc: DXGI_SAMPLE_DESC {
                Count: 1,
                Quality: 0,
            },
            Usage: D3D11_USAGE_DEFAULT,
            BindFlags: D3D11_BIND_SHADER_RESOURCE as u32,
            CPUAccessFlags: 0,
            MiscFlags: 0,
        }
    }

    #[test]
    fn one_default_subresource_of_an_image_format_only() {
        assert_eq!(check_desc(&desc()), Ok((vk::Format::R8G8B8A8_UNORM, 4)));
        let refused = [
            D3D11_TEXTURE2D_DESC {
                MipLevels: 2,
                ..desc()
            },
            D3D11_TEXTURE2D_DESC {
                ArraySize: 2,
                ..desc()
            },
            D3D11_TEXTURE2D_DESC { Width: 0, ..desc() },
            D3D11_TEXTURE2D_DESC {
                Format: DXGI_FORMAT_BC1_UNORM,
                ..desc()
            },
            D3D11_TEXTURE2D_DESC {
                Usage: D3D11_USAGE_DYNAMIC,
                ..desc()
            },
            D3D11_TEXTURE2D_DESC {
                CPUAccessFlags: 0x10000,
                ..desc()
            },
            D3D11_TEXTURE2D_DESC {
                SampleDesc: DXGI_SAMPLE_DESC {
                    Count: 4,
                    Quality: 0,
                },
                ..desc()
            },
        ];
        for d in refused {
            assert_eq!(check_desc(&d), Err(E_INVALIDARG));
        }
    }

    #[test]
    fn formats_keep_their_bit_layout() {
        use allocate::vk_format;
        let b8g8r8a8 = (vk::Format::B8G8R8A8_UNORM, 4);
        assert_eq!(vk_format(DXGI_FORMAT_B8G8R8A8_UNORM), Some(b8g8r8a8));
        assert_eq!(
            vk_format(DXGI_FORMAT_R32_FLOAT),
            Some((vk::Format::R32_SFLOAT, 4))
        );
        let half4 = (vk::Format::R16G16B16A16_SFLOAT, 8);
        assert_eq!(vk_format(DXGI_FORMAT_R16G16B16A16_FLOAT), Some(half4));
        assert_eq!(vk_format(DXGI_FORMAT_UNKNOWN), None);
    }
}
