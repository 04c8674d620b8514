//! `VK_LAYER_DXCL_external_fd`: a Vulkan layer that enables `VK_KHR_external_memory_fd` and
//! `VK_KHR_external_semaphore_fd` on every device created through it, where the physical device
//! supports them.
//!
//! Why: DXVK-native creates its `VkDevice` with no Linux external-memory extension and has no
//! setting that adds one (docs/dxvk.md), so memory allocated on it can be made exportable but no
//! fd can be taken from it. With this layer in DXVK's chain, memory that dxcl allocates on DXVK's
//! device can be exported and imported into OpenCL (issue 12, items 3 and 4). The layer changes
//! nothing else: it intercepts only instance and device creation and destruction.
//!
//! Enabled explicitly (`VK_LAYER_PATH` = the folder of its manifest, `dxcl_external_fd.json`,
//! and `VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd`); docs/dxvk.md.

mod extensions;
mod loader;

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use ash::vk::{self, Handle};

pub use extensions::WANTED;
use loader::{DeviceCreateInfo, InstanceCreateInfo, NegotiateLayerInterface};

/// The layer's name, as its manifest and `VK_INSTANCE_LAYERS` spell it.
pub const LAYER_NAME: &CStr = c"VK_LAYER_DXCL_external_fd";

/// What the layer keeps of an instance, by dispatch key.
#[derive(Clone, Copy)]
struct Instance {
    raw: vk::Instance,
    next: vk::PFN_vkGetInstanceProcAddr,
    /// The next layer's vkDestroyInstance, looked up right after creation: asked for later,
    /// with the instance, the loader answered with the top of the chain, and Mesa's
    /// device-select layer above this one then ran its own destruction twice.
    destroy: Option<vk::PFN_vkDestroyInstance>,
    /// The application asked for Vulkan 1.1 or later (the added extensions need it).
    api_1_1: bool,
}

/// What the layer keeps of a device, by dispatch key.
#[derive(Clone, Copy)]
struct Device {
    next: vk::PFN_vkGetDeviceProcAddr,
    /// As [`Instance::destroy`].
    destroy: Option<vk::PFN_vkDestroyDevice>,
}

static INSTANCES: Mutex<BTreeMap<usize, Instance>> = Mutex::new(BTreeMap::new());
/// The next `vkGetDeviceProcAddr` of each device, by dispatch key.
static DEVICES: Mutex<BTreeMap<usize, Device>> = Mutex::new(BTreeMap::new());

fn lock<T>(m: &'static Mutex<T>) -> MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The loader's dispatch key of a dispatchable handle: the table pointer at its start, shared by
/// an instance and its physical devices.
///
/// # Safety
/// `raw` is a live dispatchable handle.
unsafe fn key(raw: u64) -> usize {
    // SAFETY: dispatchable handles point to an object whose first word is the loader's
    // dispatch table pointer (caller's contract).
    unsafe { *(raw as usize as *const usize) }
}

fn log(message: std::fmt::Arguments<'_>) {
    if std::env::var_os("DXCL_LOG").is_some_and(|v| v != "0") {
        eprintln!("dxcl-vk-layer: {message}");
    }
}

/// Looks `name` up with a `GetInstanceProcAddr` and casts it to the function type `F`.
///
/// # Safety
/// `F` is the function pointer type of `name`.
unsafe fn proc_addr<F>(
    gipa: vk::PFN_vkGetInstanceProcAddr,
    instance: vk::Instance,
    name: &CStr,
) -> Option<F> {
    // SAFETY: the loader's contract for GetInstanceProcAddr; the caller names the type.
    unsafe { gipa(instance, name.as_ptr()).map(|f| std::mem::transmute_copy(&f)) }
}

/// The loader's first call: which interface version, and this layer's entry points.
///
/// # Safety
/// `p` is null or a `VkNegotiateLayerInterface` the loader owns.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    p: *mut NegotiateLayerInterface,
) -> vk::Result {
    // SAFETY: null or the loader's struct (caller's contract).
    let Some(n) = (unsafe { p.as_mut() }) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if n.s_type != loader::NEGOTIATE_INTERFACE_STRUCT || n.loader_layer_interface_version < 2 {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    n.loader_layer_interface_version = loader::INTERFACE_VERSION;
    n.get_instance_proc_addr = Some(vkGetInstanceProcAddr);
    n.get_device_proc_addr = Some(vkGetDeviceProcAddr);
    n.get_physical_device_proc_addr = None;
    vk::Result::SUCCESS
}

/// What `GetProcAddr` returns, unwrapped.
type VoidFn = unsafe extern "system" fn();

/// The layer's own entry points among the instance-level names, or None.
fn own_instance_function(name: &CStr) -> vk::PFN_vkVoidFunction {
    // SAFETY: each transmute turns a function pointer into one of another signature;
    // the caller casts it back to the type the name's Vulkan signature gives, which each is.
    unsafe {
        match name.to_bytes() {
            b"vkGetInstanceProcAddr" => Some(std::mem::transmute::<
                vk::PFN_vkGetInstanceProcAddr,
                VoidFn,
            >(vkGetInstanceProcAddr)),
            b"vkCreateInstance" => Some(std::mem::transmute::<vk::PFN_vkCreateInstance, VoidFn>(
                create_instance,
            )),
            b"vkDestroyInstance" => Some(std::mem::transmute::<vk::PFN_vkDestroyInstance, VoidFn>(
                destroy_instance,
            )),
            b"vkCreateDevice" => Some(std::mem::transmute::<vk::PFN_vkCreateDevice, VoidFn>(
                create_device,
            )),
            _ => own_device_function(name),
        }
    }
}

/// The layer's own entry points among the device-level names, or None.
fn own_device_function(name: &CStr) -> vk::PFN_vkVoidFunction {
    // SAFETY: as in own_instance_function.
    unsafe {
        match name.to_bytes() {
            b"vkGetDeviceProcAddr" => Some(std::mem::transmute::<
                vk::PFN_vkGetDeviceProcAddr,
                VoidFn,
            >(vkGetDeviceProcAddr)),
            b"vkDestroyDevice" => Some(std::mem::transmute::<vk::PFN_vkDestroyDevice, VoidFn>(
                destroy_device,
            )),
            _ => None,
        }
    }
}

/// # Safety
/// The Vulkan contract of `vkGetInstanceProcAddr`.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if name.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string (Vulkan contract).
    let name = unsafe { CStr::from_ptr(name) };
    if let Some(f) = own_instance_function(name) {
        return Some(f);
    }
    if instance.is_null() {
        return None;
    }
    // SAFETY: a live instance (Vulkan contract).
    let next = lock(&INSTANCES)
        .get(&unsafe { key(instance.as_raw()) })
        .map(|i| i.next)?;
    // SAFETY: the next layer's GetInstanceProcAddr with the same arguments.
    unsafe { next(instance, name.as_ptr()) }
}

/// # Safety
/// The Vulkan contract of `vkGetDeviceProcAddr`.
#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if name.is_null() || device.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string (Vulkan contract).
    let name = unsafe { CStr::from_ptr(name) };
    if let Some(f) = own_device_function(name) {
        return Some(f);
    }
    // SAFETY: a live device (Vulkan contract).
    let next = lock(&DEVICES).get(&unsafe { key(device.as_raw()) })?.next;
    // SAFETY: the next layer's GetDeviceProcAddr with the same arguments.
    unsafe { next(device, name.as_ptr()) }
}

unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Instance,
) -> vk::Result {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the Vulkan contract of vkCreateInstance: `info` is valid, and the loader put
        // its link info in the chain.
        unsafe {
            let link: *mut InstanceCreateInfo = loader::find_link(
                (*info).p_next,
                vk::StructureType::LOADER_INSTANCE_CREATE_INFO,
            );
            if link.is_null() || (*link).layer_info.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            let next = (*(*link).layer_info).next_get_instance_proc_addr;
            // The next layer finds its own link next.
            (*link).layer_info = (*(*link).layer_info).next;
            let Some(create) = proc_addr::<vk::PFN_vkCreateInstance>(
                next,
                vk::Instance::null(),
                c"vkCreateInstance",
            ) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let r = create(info, allocator, out);
            if r == vk::Result::SUCCESS {
                let app = (*info).p_application_info;
                let api = if app.is_null() {
                    vk::API_VERSION_1_0
                } else {
                    (*app).api_version
                };
                let instance = Instance {
                    raw: *out,
                    next,
                    destroy: proc_addr(next, *out, c"vkDestroyInstance"),
                    api_1_1: api >= vk::API_VERSION_1_1,
                };
                lock(&INSTANCES).insert(key(out.read().as_raw()), instance);
            }
            r
        }
    }))
    .unwrap_or(vk::Result::ERROR_INITIALIZATION_FAILED)
}

unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    if instance.is_null() {
        return;
    }
    // SAFETY: a live instance (Vulkan contract).
    let Some(i) = lock(&INSTANCES).remove(&unsafe { key(instance.as_raw()) }) else {
        return;
    };
    if let Some(destroy) = i.destroy {
        // SAFETY: the next layer's vkDestroyInstance with the same arguments.
        unsafe { destroy(instance, allocator) };
    }
}

/// The device extensions `physical` supports (empty when the query fails).
///
/// # Safety
/// `physical` belongs to `instance`.
unsafe fn supported(instance: &Instance, physical: vk::PhysicalDevice) -> Vec<[c_char; 256]> {
    // SAFETY: the next layer's functions of a live instance, called per the Vulkan contract.
    unsafe {
        let Some(enumerate) = proc_addr::<vk::PFN_vkEnumerateDeviceExtensionProperties>(
            instance.next,
            instance.raw,
            c"vkEnumerateDeviceExtensionProperties",
        ) else {
            return Vec::new();
        };
        let mut n = 0u32;
        if enumerate(physical, std::ptr::null(), &mut n, std::ptr::null_mut())
            != vk::Result::SUCCESS
        {
            return Vec::new();
        }
        let mut props = vec![vk::ExtensionProperties::default(); n as usize];
        if enumerate(physical, std::ptr::null(), &mut n, props.as_mut_ptr()) != vk::Result::SUCCESS
        {
            return Vec::new();
        }
        props.truncate(n as usize);
        props.into_iter().map(|p| p.extension_name).collect()
    }
}

/// Whether `physical` reports Vulkan 1.1 or later.
///
/// # Safety
/// `physical` belongs to `instance`.
unsafe fn device_api_1_1(instance: &Instance, physical: vk::PhysicalDevice) -> bool {
    // SAFETY: the next layer's function of a live instance, called per the Vulkan contract.
    unsafe {
        let Some(get) = proc_addr::<vk::PFN_vkGetPhysicalDeviceProperties>(
            instance.next,
            instance.raw,
            c"vkGetPhysicalDeviceProperties",
        ) else {
            return false;
        };
        let mut p = vk::PhysicalDeviceProperties::default();
        get(physical, &mut p);
        p.api_version >= vk::API_VERSION_1_1
    }
}

unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::Device,
) -> vk::Result {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the Vulkan contract of vkCreateDevice: `info` and its extension names are
        // valid, and the loader put its link info in the chain.
        unsafe {
            let link: *mut DeviceCreateInfo =
                loader::find_link((*info).p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO);
            if link.is_null() || (*link).layer_info.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            let next_gdpa = (*(*link).layer_info).next_get_device_proc_addr;
            (*link).layer_info = (*(*link).layer_info).next;
            let Some(instance) = lock(&INSTANCES).get(&key(physical.as_raw())).copied() else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(create) =
                proc_addr::<vk::PFN_vkCreateDevice>(instance.next, instance.raw, c"vkCreateDevice")
            else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let requested: Vec<&CStr> = (0..(*info).enabled_extension_count as usize)
                .map(|i| CStr::from_ptr(*(*info).pp_enabled_extension_names.add(i)))
                .collect();
            let names = supported(&instance, physical);
            let supported: Vec<&CStr> = names.iter().map(|n| CStr::from_ptr(n.as_ptr())).collect();
            let api_1_1 = instance.api_1_1 && device_api_1_1(&instance, physical);
            let added = extensions::to_add(&requested, &supported, api_1_1);
            let mut r = vk::Result::ERROR_INITIALIZATION_FAILED;
            if !added.is_empty() {
                let mut all: Vec<*const c_char> = requested.iter().map(|n| n.as_ptr()).collect();
                all.extend(added.iter().map(|n| n.as_ptr()));
                let mut more = *info;
                more.enabled_extension_count = all.len() as u32;
                more.pp_enabled_extension_names = all.as_ptr();
                r = create(physical, &more, allocator, out);
                log(format_args!("vkCreateDevice + {added:?}: {r:?}"));
            }
            // Nothing to add, or the driver refused the additions: the application's own request.
            if r != vk::Result::SUCCESS {
                r = create(physical, info, allocator, out);
            }
            if r == vk::Result::SUCCESS {
                let device = out.read();
                let destroy = next_gdpa(device, c"vkDestroyDevice".as_ptr())
                    .map(|f| std::mem::transmute::<_, vk::PFN_vkDestroyDevice>(f));
                let d = Device {
                    next: next_gdpa,
                    destroy,
                };
                lock(&DEVICES).insert(key(device.as_raw()), d);
            }
            r
        }
    }))
    .unwrap_or(vk::Result::ERROR_INITIALIZATION_FAILED)
}

unsafe extern "system" fn destroy_device(
    device: vk::Device,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    if device.is_null() {
        return;
    }
    // SAFETY: a live device (Vulkan contract).
    let Some(d) = lock(&DEVICES).remove(&unsafe { key(device.as_raw()) }) else {
        return;
    };
    if let Some(destroy) = d.destroy {
        // SAFETY: the next layer's vkDestroyDevice with the same arguments.
        unsafe { destroy(device, allocator) };
    }
}
