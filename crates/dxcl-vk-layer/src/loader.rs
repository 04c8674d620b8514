//! The loader–layer interface (the Vulkan loader's `vk_layer.h`, interface version 2): the
//! structures the loader passes down `vkCreateInstance`/`vkCreateDevice` chains and the
//! negotiation struct. ash has the structure-type values only, not these layouts.

use ash::vk;

/// `VkLayerFunction::VK_LAYER_LINK_INFO`: the chain element that carries the next layer's
/// `GetProcAddr`s.
pub const LAYER_LINK_INFO: u32 = 0;

/// `VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT`.
pub const NEGOTIATE_INTERFACE_STRUCT: u32 = 1;

/// The newest interface version this layer speaks.
pub const INTERFACE_VERSION: u32 = 2;

/// `VkLayerInstanceLink`.
#[repr(C)]
pub struct InstanceLink {
    pub next: *mut InstanceLink,
    pub next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub next_get_physical_device_proc_addr: Option<unsafe extern "system" fn()>,
}

/// `VkLayerInstanceCreateInfo` (its union read as the link pointer, the member `function ==
/// LAYER_LINK_INFO` selects).
#[repr(C)]
pub struct InstanceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const std::ffi::c_void,
    pub function: u32,
    pub layer_info: *mut InstanceLink,
}

/// `VkLayerDeviceLink`.
#[repr(C)]
pub struct DeviceLink {
    pub next: *mut DeviceLink,
    pub next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    pub next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
}

/// `VkLayerDeviceCreateInfo`, as [`InstanceCreateInfo`].
#[repr(C)]
pub struct DeviceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const std::ffi::c_void,
    pub function: u32,
    pub layer_info: *mut DeviceLink,
}

/// `VkNegotiateLayerInterface`.
#[repr(C)]
pub struct NegotiateLayerInterface {
    pub s_type: u32,
    pub p_next: *mut std::ffi::c_void,
    pub loader_layer_interface_version: u32,
    pub get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
    pub get_physical_device_proc_addr: Option<unsafe extern "system" fn()>,
}

/// The first element of a `pNext` chain of type `s_type` whose `function` is
/// [`LAYER_LINK_INFO`] (both loader create infos share that head).
///
/// # Safety
/// `p_next` is null or a valid chain of Vulkan structures.
pub unsafe fn find_link<T>(
    mut p_next: *const std::ffi::c_void,
    s_type: vk::StructureType,
) -> *mut T {
    while !p_next.is_null() {
        // SAFETY: every chain element starts with sType and pNext (caller's contract); the
        // loader's elements of `s_type` have `function` right after them, as read here.
        let head = unsafe { &*p_next.cast::<InstanceCreateInfo>() };
        if head.s_type == s_type && head.function == LAYER_LINK_INFO {
            return p_next.cast_mut().cast();
        }
        p_next = head.p_next;
    }
    std::ptr::null_mut()
}
