//! DXVK's COM interfaces, as facts from its `src/dxgi/dxgi_interfaces.h` (v2.3): the IIDs and the
//! vtable order the layer calls, in one place. Its DXGI adapters answer `IDXGIVkInteropAdapter`
//! (the Vulkan physical device behind them: [`super::vulkan`]); its devices answer
//! `IDXGIVkInteropDevice` and `IDXGIVkInteropDevice1` (Vulkan handles, the submission queue and its
//! lock, and wrapping a `VkImage` as a texture: [`super::shared_texture`]).

use std::ffi::c_void;

use ash::vk;
use dxcl_abi::*;

/// DXVK's `IDXGIVkInteropAdapter`.
#[repr(C)]
#[allow(non_snake_case)] // COM's field name, as dxcl_abi spells it
pub(crate) struct IDXGIVkInteropAdapter {
    pub lpVtbl: *const IDXGIVkInteropAdapterVtbl,
}

#[repr(C)]
#[allow(non_snake_case)] // the interface's method names
pub(crate) struct IDXGIVkInteropAdapterVtbl {
    pub base: IUnknownVtbl,
    pub GetVulkanHandles: unsafe extern "system" fn(
        This: *mut IDXGIVkInteropAdapter,
        pInstance: *mut vk::Instance,
        pPhysDev: *mut vk::PhysicalDevice,
    ),
}

impl Interface for IDXGIVkInteropAdapter {
    const IID: GUID = GUID {
        Data1: 0x3a6d_8f2c,
        Data2: 0xb0e8,
        Data3: 0x4ab4,
        Data4: [0xb4, 0xdc, 0x4f, 0xd2, 0x48, 0x91, 0xbf, 0xa5],
    };
    type Vtbl = IDXGIVkInteropAdapterVtbl;
}

/// DXVK's `IDXGIVkInteropDevice` (IID e2ef5fa5-dc21-4af7-90c4-f67ef6a09323), which DXVK's D3D11
/// devices answer (and its D3D10 devices, through the same object). Only its identity is used: a
/// device that answers it is DXVK's. Its methods, in vtable order after IUnknown's:
/// `GetVulkanHandles(VkInstance*, VkPhysicalDevice*, VkDevice*)`, `GetSubmissionQueue`,
/// `TransitionSurfaceLayout`, `FlushRenderingCommands`, `LockSubmissionQueue`,
/// `ReleaseSubmissionQueue` (docs/dxvk.md).
#[repr(C)]
#[allow(non_snake_case)] // COM's field name, as dxcl_abi spells it
pub(crate) struct IDXGIVkInteropDevice {
    pub lpVtbl: *const IUnknownVtbl,
}

impl Interface for IDXGIVkInteropDevice {
    const IID: GUID = GUID {
        Data1: 0xe2ef_5fa5,
        Data2: 0xdc21,
        Data3: 0x4af7,
        Data4: [0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x23],
    };
    type Vtbl = IUnknownVtbl;
}

/// DXVK's `IDXGIVkInteropDevice1` (`src/dxgi/dxgi_interfaces.h` of v2.3): `IDXGIVkInteropDevice`'s
/// methods, then `GetSubmissionQueue1` and `CreateTexture2DFromVkImage`.
#[repr(C)]
#[allow(non_snake_case)] // COM's field name
pub(crate) struct IDXGIVkInteropDevice1 {
    pub lpVtbl: *const IDXGIVkInteropDevice1Vtbl,
}

#[repr(C)]
#[allow(non_snake_case)] // the interface's method names
pub(crate) struct IDXGIVkInteropDevice1Vtbl {
    pub base: IUnknownVtbl,
    pub GetVulkanHandles: unsafe extern "system" fn(
        *mut IDXGIVkInteropDevice1,
        *mut vk::Instance,
        *mut vk::PhysicalDevice,
        *mut vk::Device,
    ),
    pub GetSubmissionQueue:
        unsafe extern "system" fn(*mut IDXGIVkInteropDevice1, *mut vk::Queue, *mut u32),
    pub TransitionSurfaceLayout: unsafe extern "system" fn(
        *mut IDXGIVkInteropDevice1,
        *mut c_void,
        *const vk::ImageSubresourceRange,
        vk::ImageLayout,
        vk::ImageLayout,
    ),
    pub FlushRenderingCommands: unsafe extern "system" fn(*mut IDXGIVkInteropDevice1),
    pub LockSubmissionQueue: unsafe extern "system" fn(*mut IDXGIVkInteropDevice1),
    pub ReleaseSubmissionQueue: unsafe extern "system" fn(*mut IDXGIVkInteropDevice1),
    pub GetSubmissionQueue1:
        unsafe extern "system" fn(*mut IDXGIVkInteropDevice1, *mut vk::Queue, *mut u32, *mut u32),
    pub CreateTexture2DFromVkImage: unsafe extern "system" fn(
        *mut IDXGIVkInteropDevice1,
        *const Texture2dDesc1,
        vk::Image,
        *mut *mut ID3D11Texture2D,
    ) -> HRESULT,
}

impl Interface for IDXGIVkInteropDevice1 {
    const IID: GUID = GUID {
        Data1: 0xe2ef_5fa5,
        Data2: 0xdc21,
        Data3: 0x4af7,
        Data4: [0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x24],
    };
    type Vtbl = IDXGIVkInteropDevice1Vtbl;
}

/// The Vulkan objects behind DXVK's device: instance, physical device, device, and the queue it
/// submits to.
pub(crate) struct VulkanHandles {
    pub instance: vk::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: vk::Device,
    pub queue: vk::Queue,
}

impl VulkanHandles {
    pub fn of(dxvk: &super::com::ComPtr<IDXGIVkInteropDevice1>) -> VulkanHandles {
        let d = dxvk.as_ptr();
        let mut h = VulkanHandles {
            instance: vk::Instance::null(),
            physical: vk::PhysicalDevice::null(),
            device: vk::Device::null(),
            queue: vk::Queue::null(),
        };
        let mut family = 0u32;
        // SAFETY: DXVK's live interop device; valid out pointers.
        unsafe {
            ((*(*d).lpVtbl).GetVulkanHandles)(d, &mut h.instance, &mut h.physical, &mut h.device);
            ((*(*d).lpVtbl).GetSubmissionQueue)(d, &mut h.queue, &mut family);
        }
        h
    }
}

/// `D3D11_TEXTURE2D_DESC1`: the description, then `D3D11_TEXTURE_LAYOUT` (0, undefined).
#[repr(C)]
pub(crate) struct Texture2dDesc1 {
    pub desc: D3D11_TEXTURE2D_DESC,
    pub layout: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interop_device_iid() {
        // {e2ef5fa5-dc21-4af7-90c4-f67ef6a09323}, as DXVK's dxgi_interfaces.h declares it.
        let g = IDXGIVkInteropDevice::IID;
        assert_eq!((g.Data1, g.Data2, g.Data3), (0xe2ef5fa5, 0xdc21, 0x4af7));
        assert_eq!(g.Data4, [0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x23]);
    }

    #[test]
    fn interop_adapter_iid() {
        // {3a6d8f2c-b0e8-4ab4-b4dc-4fd24891bfa5}, as DXVK's dxgi_interfaces.h declares it.
        let g = IDXGIVkInteropAdapter::IID;
        assert_eq!((g.Data1, g.Data2, g.Data3), (0x3a6d8f2c, 0xb0e8, 0x4ab4));
        assert_eq!(g.Data4, [0xb4, 0xdc, 0x4f, 0xd2, 0x48, 0x91, 0xbf, 0xa5]);
    }

    #[test]
    fn interop_device1_iid() {
        // {e2ef5fa5-dc21-4af7-90c4-f67ef6a09324}, as DXVK's dxgi_interfaces.h declares it.
        let g = IDXGIVkInteropDevice1::IID;
        assert_eq!((g.Data1, g.Data2, g.Data3), (0xe2ef5fa5, 0xdc21, 0x4af7));
        assert_eq!(g.Data4, [0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x24]);
    }
}
