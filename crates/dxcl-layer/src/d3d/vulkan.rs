//! Adapters of Direct3D runtimes built on Vulkan (DXVK): which Vulkan physical device runs them.
//!
//! DXVK's DXGI adapters answer `IDXGIVkInteropAdapter` (IID 3a6d8f2c-b0e8-4ab4-b4dc-4fd24891bfa5:
//! IUnknown, then `void GetVulkanHandles(VkInstance*, VkPhysicalDevice*)`), which gives the
//! `VkPhysicalDevice` behind the adapter. Vulkan then says exactly what DXGI cannot on Linux:
//! `VkPhysicalDeviceProperties::deviceType` is `VK_PHYSICAL_DEVICE_TYPE_CPU` for an adapter that
//! runs on the CPU (lavapipe), and `VkPhysicalDeviceIDProperties::deviceUUID` is the UUID that
//! `cl_khr_device_uuid` defines `CL_DEVICE_UUID_KHR` to match. DXVK's DXGI description flags no
//! adapter as software and, where the driver reports no LUID (Linux), invents one, so neither can
//! pair it with OpenCL devices.
//!
//! The functions come from the Vulkan loader the runtime already loaded ([`super::vk_loader`]),
//! through `vkGetInstanceProcAddr` on the runtime's own instance.

use std::ffi::c_char;

use ash::vk::{self, Handle};
use dxcl_abi::IDXGIAdapter;

use super::adapter_id::AdapterId;
use super::com::ComPtr;
use super::dxvk_com::{IDXGIVkInteropAdapter, IDXGIVkInteropDevice};

/// Whether a Direct3D device is DXVK's: it answers `IDXGIVkInteropDevice`.
pub(crate) fn is_dxvk_device(device: &ComPtr) -> bool {
    device.query::<IDXGIVkInteropDevice>().is_some()
}

/// The device UUID of a DXVK device's GPU, which OpenCL devices that import its memory must
/// share (`CL_DEVICE_UUID_KHR`); None for CPU devices and anything not DXVK's.
pub(crate) fn dxvk_gpu_uuid(device: &ComPtr) -> Option<[u8; 16]> {
    let dxvk = device.query::<super::dxvk_com::IDXGIVkInteropDevice1>()?;
    let d = dxvk.as_ptr();
    let (mut instance, mut physical, mut vkdev) = (
        vk::Instance::null(),
        vk::PhysicalDevice::null(),
        vk::Device::null(),
    );
    // SAFETY: DXVK's live interop device; valid out pointers.
    unsafe { ((*(*d).lpVtbl).GetVulkanHandles)(d, &mut instance, &mut physical, &mut vkdev) };
    match physical_device_id(instance, physical)? {
        AdapterId::Uuid(uuid) => Some(uuid),
        _ => None,
    }
}

/// What Vulkan says about a physical device, reduced to how OpenCL devices are matched: a CPU
/// device pairs with CPU OpenCL devices; any other with the OpenCL device of the same UUID.
pub(crate) fn from_physical_device(ty: vk::PhysicalDeviceType, uuid: [u8; 16]) -> AdapterId {
    if ty == vk::PhysicalDeviceType::CPU {
        AdapterId::Software
    } else {
        AdapterId::Uuid(uuid)
    }
}

/// The adapter's Vulkan physical device, when the adapter is DXVK's: `Software` for a CPU device,
/// `Uuid` for any other.
pub(crate) fn from_dxgi_adapter(adapter: &ComPtr<IDXGIAdapter>) -> Option<AdapterId> {
    let interop = adapter.query::<IDXGIVkInteropAdapter>()?;
    let mut instance = vk::Instance::null();
    let mut physical = vk::PhysicalDevice::null();
    let p = interop.as_ptr();
    // SAFETY: a live IDXGIVkInteropAdapter (QueryInterface said so); two valid out handles.
    unsafe { ((*(*p).lpVtbl).GetVulkanHandles)(p, &mut instance, &mut physical) };
    physical_device_id(instance, physical)
}

/// How a Vulkan physical device pairs with OpenCL devices (see [`from_physical_device`]).
pub(crate) fn physical_device_id(
    instance: vk::Instance,
    physical: vk::PhysicalDevice,
) -> Option<AdapterId> {
    if instance.is_null() || physical.is_null() {
        return None;
    }
    let gipa = super::vk_loader::loader_proc_addr()?;
    let name: *const c_char = c"vkGetPhysicalDeviceProperties2".as_ptr();
    // SAFETY: the runtime's live instance; a valid C string. DXVK requires Vulkan 1.3, so the core
    // 1.1 function exists.
    let f = unsafe { gipa(instance, name) }?;
    // SAFETY: the function of that name has this signature.
    let props2: vk::PFN_vkGetPhysicalDeviceProperties2 = unsafe { std::mem::transmute(f) };
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props = vk::PhysicalDeviceProperties2 {
        p_next: std::ptr::addr_of_mut!(id).cast(),
        ..Default::default()
    };
    // SAFETY: a physical device of that instance; `props` chains one valid extension struct.
    unsafe { props2(physical, &mut props) };
    Some(from_physical_device(
        props.properties.device_type,
        id.device_uuid,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_devices_pair_with_cpu_and_others_by_uuid() {
        let uuid = [9u8; 16];
        assert_eq!(
            from_physical_device(vk::PhysicalDeviceType::CPU, uuid),
            AdapterId::Software
        );
        for ty in [
            vk::PhysicalDeviceType::DISCRETE_GPU,
            vk::PhysicalDeviceType::INTEGRATED_GPU,
            vk::PhysicalDeviceType::VIRTUAL_GPU,
            vk::PhysicalDeviceType::OTHER,
        ] {
            assert_eq!(from_physical_device(ty, uuid), AdapterId::Uuid(uuid));
        }
    }
}
