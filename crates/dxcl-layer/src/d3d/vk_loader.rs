//! The process's Vulkan loader, as the layer reaches the Vulkan functions of a runtime built on
//! Vulkan (DXVK): `vkGetInstanceProcAddr` of the loader the runtime already loaded
//! (`libvulkan.so.1`, found with `RTLD_NOLOAD` first), and typed lookups through it.

use std::ffi::{c_char, c_void};

use ash::vk;

/// `vkGetInstanceProcAddr` of the process's Vulkan loader.
pub(crate) fn loader_proc_addr() -> Option<vk::PFN_vkGetInstanceProcAddr> {
    let name = c"libvulkan.so.1";
    // SAFETY: dlopen with a valid C string; RTLD_NOLOAD only looks the library up. A handle we
    // get is never closed: the loader stays mapped for the process's life.
    let mut lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if lib.is_null() {
        // SAFETY: as above; loads the system's Vulkan loader.
        lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    }
    if lib.is_null() {
        return None;
    }
    // SAFETY: a live handle and a valid C string.
    let sym = unsafe { libc::dlsym(lib, c"vkGetInstanceProcAddr".as_ptr()) };
    // SAFETY: the loader exports vkGetInstanceProcAddr with exactly this signature.
    (!sym.is_null())
        .then(|| unsafe { std::mem::transmute::<*mut c_void, vk::PFN_vkGetInstanceProcAddr>(sym) })
}

/// Looks up `name` through `get` (`vkGetInstanceProcAddr` or `vkGetDeviceProcAddr`) and casts it
/// to `F`.
///
/// # Safety
/// `F` is the function pointer type of `name`; `get` answers for `handle`.
pub(crate) unsafe fn load<F, H: Copy>(
    get: unsafe extern "system" fn(H, *const c_char) -> vk::PFN_vkVoidFunction,
    handle: H,
    name: &std::ffi::CStr,
) -> Option<F> {
    // SAFETY: caller's contract.
    unsafe { get(handle, name.as_ptr()).map(|f| std::mem::transmute_copy(&f)) }
}
