//! `dxclCreateSharedTexture2D`: a Direct3D 11 texture on DXVK's device whose memory dxcl owns,
//! so that the OpenCL layer shares it without copies (issue 12, item 4; docs/dxvk.md).
//!
//! DXVK allocates its resources' memory itself and never exports it on Linux, so the layer can
//! only copy them. A texture made here instead lives in memory this module allocates on DXVK's
//! `VkDevice` and wraps with DXVK's `IDXGIVkInteropDevice1::CreateTexture2DFromVkImage`. The
//! texture carries, as private data under `IID_IDxclInteropResource`, an object that implements
//! `IDxclInteropResource` for that memory, so the layer's existing strategies see it as they see
//! dxcl's own resources ([`crate::d3d::interop::Interop::query`]).
//!
//! What it can make today: on a Vulkan device that runs on the CPU (lavapipe), a `LINEAR` image
//! in host-visible memory, mapped for the texture's life: `DXCL_MEMORY_KIND_HOST`, which OpenCL
//! CPU devices use in place (`CL_MEM_USE_HOST_PTR`). GPU devices (exportable memory imported by
//! NVIDIA's OpenCL) answer `DXGI_ERROR_UNSUPPORTED` until that path is run on a GPU.
//!
//! Ordering against DXVK: DXVK cannot be told to wait before its next access, so
//! `AddPendingWork` is refused and the layer waits on the CPU at release (as for DXVK's own
//! resources); `WaitForDeviceWork` flushes DXVK and waits for its queue.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;
use dxcl_abi::interop::{
    IDxclInteropResource, IDxclInteropResourceVtbl, DXCL_MEMORY_KIND_HOST, DXCL_OPENCL_ACCESS,
    DXCL_RESOURCE_MEMORY, DXCL_SUBRESOURCE_LAYOUT, PFN_DXCL_PENDING_ORDER,
    PFN_DXCL_PENDING_RELEASE, PFN_DXCL_PENDING_WAIT,
};
use dxcl_abi::*;

use super::com::ComPtr;

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

/// `D3D11_TEXTURE2D_DESC1`: the description, then `D3D11_TEXTURE_LAYOUT` (0, undefined).
#[repr(C)]
pub(crate) struct Texture2dDesc1 {
    pub desc: D3D11_TEXTURE2D_DESC,
    pub layout: u32,
}

/// The Vulkan format of the DXGI formats a shared texture may have: those OpenCL images have
/// (`core/format.rs` of the layer), in the same bit layout.
fn vk_format(f: DXGI_FORMAT) -> Option<vk::Format> {
    Some(match f {
        DXGI_FORMAT_R8G8B8A8_UNORM => vk::Format::R8G8B8A8_UNORM,
        DXGI_FORMAT_R8G8B8A8_UNORM_SRGB => vk::Format::R8G8B8A8_SRGB,
        DXGI_FORMAT_R8G8B8A8_SNORM => vk::Format::R8G8B8A8_SNORM,
        DXGI_FORMAT_R8G8B8A8_UINT => vk::Format::R8G8B8A8_UINT,
        DXGI_FORMAT_R8G8B8A8_SINT => vk::Format::R8G8B8A8_SINT,
        DXGI_FORMAT_B8G8R8A8_UNORM => vk::Format::B8G8R8A8_UNORM,
        DXGI_FORMAT_R16G16B16A16_FLOAT => vk::Format::R16G16B16A16_SFLOAT,
        DXGI_FORMAT_R16G16B16A16_UNORM => vk::Format::R16G16B16A16_UNORM,
        DXGI_FORMAT_R16G16B16A16_UINT => vk::Format::R16G16B16A16_UINT,
        DXGI_FORMAT_R16G16B16A16_SINT => vk::Format::R16G16B16A16_SINT,
        DXGI_FORMAT_R32G32B32A32_FLOAT => vk::Format::R32G32B32A32_SFLOAT,
        DXGI_FORMAT_R32G32B32A32_UINT => vk::Format::R32G32B32A32_UINT,
        DXGI_FORMAT_R32G32B32A32_SINT => vk::Format::R32G32B32A32_SINT,
        DXGI_FORMAT_R8G8_UNORM => vk::Format::R8G8_UNORM,
        DXGI_FORMAT_R16G16_FLOAT => vk::Format::R16G16_SFLOAT,
        DXGI_FORMAT_R32G32_FLOAT => vk::Format::R32G32_SFLOAT,
        DXGI_FORMAT_R8_UNORM => vk::Format::R8_UNORM,
        DXGI_FORMAT_R8_UINT => vk::Format::R8_UINT,
        DXGI_FORMAT_R16_FLOAT => vk::Format::R16_SFLOAT,
        DXGI_FORMAT_R16_UNORM => vk::Format::R16_UNORM,
        DXGI_FORMAT_R16_UINT => vk::Format::R16_UINT,
        DXGI_FORMAT_R32_FLOAT => vk::Format::R32_SFLOAT,
        DXGI_FORMAT_R32_UINT => vk::Format::R32_UINT,
        DXGI_FORMAT_R32_SINT => vk::Format::R32_SINT,
        _ => return None,
    })
}

/// The Vulkan functions a shared texture uses, from DXVK's device.
#[derive(Clone, Copy)]
struct Vk {
    device: vk::Device,
    queue: vk::Queue,
    destroy_image: vk::PFN_vkDestroyImage,
    free_memory: vk::PFN_vkFreeMemory,
    unmap_memory: vk::PFN_vkUnmapMemory,
    queue_wait_idle: vk::PFN_vkQueueWaitIdle,
}

/// The `IDxclInteropResource` of a shared texture: owns its image and memory.
#[repr(C)]
struct SharedMemory {
    /// First: the object is its interface.
    vtbl: *const IDxclInteropResourceVtbl,
    refs: AtomicU32,
    /// DXVK's device (counted).
    dxvk: *mut IDXGIVkInteropDevice1,
    vk: Vk,
    image: vk::Image,
    memory: vk::DeviceMemory,
    /// The whole memory, mapped.
    host: *mut c_void,
    size: u64,
    layout: DXCL_SUBRESOURCE_LAYOUT,
}

static VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
    base: IUnknownVtbl {
        QueryInterface: query_interface,
        AddRef: add_ref,
        Release: release,
    },
    GetMemory: get_memory,
    GetSubresourceLayout: get_subresource_layout,
    WaitForDeviceWork: wait_for_device_work,
    AddPendingWork: add_pending_work,
    SetOpenCLAccess: set_opencl_access,
    QueryDeviceWorkDone: query_device_work_done,
    AddPendingWorkOrdered: add_pending_work_ordered,
    ..IDxclInteropResourceVtbl::NOT_IMPLEMENTED
};

/// # Safety
/// `this` is a live [`SharedMemory`].
unsafe fn this<'a, T>(this: *mut T) -> &'a SharedMemory {
    // SAFETY: every interface pointer handed out is the object itself (caller's contract).
    unsafe { &*this.cast::<SharedMemory>() }
}

fn same(a: &GUID, b: &GUID) -> bool {
    (a.Data1, a.Data2, a.Data3, a.Data4) == (b.Data1, b.Data2, b.Data3, b.Data4)
}

unsafe extern "system" fn query_interface(
    p: *mut IUnknown,
    riid: REFIID,
    out: *mut *mut c_void,
) -> HRESULT {
    if out.is_null() || riid.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract: valid IID and out pointer.
    unsafe {
        if same(&*riid, &IUnknown::IID) || same(&*riid, &IDxclInteropResource::IID) {
            add_ref(p);
            *out = p.cast();
            S_OK
        } else {
            *out = std::ptr::null_mut();
            E_NOINTERFACE
        }
    }
}

unsafe extern "system" fn add_ref(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    unsafe { this(p) }.refs.fetch_add(1, Ordering::Relaxed) + 1
}

unsafe extern "system" fn release(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    let left = unsafe { this(p) }.refs.fetch_sub(1, Ordering::AcqRel) - 1;
    if left == 0 {
        // SAFETY: the last reference: the Box made in `create` is ours again.
        let b = unsafe { Box::from_raw(p.cast::<SharedMemory>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.destroy()));
    }
    left
}

impl SharedMemory {
    /// Waits until DXVK has run everything it was given: its rendering commands flushed to its
    /// submission thread, everything submitted (the queue lock waits for that), the queue idle.
    fn wait_idle(&self) {
        let d = self.dxvk;
        // SAFETY: DXVK's live interop device (counted); its documented use of these calls: lock
        // the queue around our own use of it.
        unsafe {
            ((*(*d).lpVtbl).FlushRenderingCommands)(d);
            ((*(*d).lpVtbl).LockSubmissionQueue)(d);
            // A lost device has nothing left to wait for.
            let _ = (self.vk.queue_wait_idle)(self.vk.queue);
            ((*(*d).lpVtbl).ReleaseSubmissionQueue)(d);
        }
    }

    /// The texture is gone (its private data released) and so is every other holder: once DXVK's
    /// queue is idle nothing uses the image or memory any more.
    fn destroy(&self) {
        self.wait_idle();
        // SAFETY: our image and memory on DXVK's device, unused now; the device reference is ours.
        unsafe {
            (self.vk.unmap_memory)(self.vk.device, self.memory);
            (self.vk.destroy_image)(self.vk.device, self.image, std::ptr::null());
            (self.vk.free_memory)(self.vk.device, self.memory, std::ptr::null());
            ((*(*self.dxvk).lpVtbl).base.Release)(self.dxvk.cast());
        }
    }
}

unsafe extern "system" fn get_memory(
    p: *mut IDxclInteropResource,
    out: *mut DXCL_RESOURCE_MEMORY,
) -> HRESULT {
    if out.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract.
    let s = unsafe { this(p) };
    // SAFETY: a writable out struct (checked non-null).
    unsafe {
        *out = DXCL_RESOURCE_MEMORY {
            Kind: DXCL_MEMORY_KIND_HOST,
            Reserved: 0,
            pHost: s.host,
            Size: s.size,
        }
    };
    S_OK
}

unsafe extern "system" fn get_subresource_layout(
    p: *mut IDxclInteropResource,
    subresource: UINT,
    out: *mut DXCL_SUBRESOURCE_LAYOUT,
) -> HRESULT {
    // "E_INVALIDARG past the last subresource": a shared texture has one.
    if out.is_null() || subresource != 0 {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract; a writable out struct.
    unsafe { *out = this(p).layout };
    S_OK
}

unsafe extern "system" fn wait_for_device_work(p: *mut IDxclInteropResource) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { this(p) }.wait_idle();
    S_OK
}

/// DXVK cannot be made to run callbacks before its next access: refused, so the layer waits now.
unsafe extern "system" fn add_pending_work(
    _p: *mut IDxclInteropResource,
    _wait: PFN_DXCL_PENDING_WAIT,
    _release: PFN_DXCL_PENDING_RELEASE,
    _context: *mut c_void,
) -> HRESULT {
    E_NOTIMPL
}

unsafe extern "system" fn add_pending_work_ordered(
    _p: *mut IDxclInteropResource,
    _wait: PFN_DXCL_PENDING_WAIT,
    _order: PFN_DXCL_PENDING_ORDER,
    _release: PFN_DXCL_PENDING_RELEASE,
    _context: *mut c_void,
) -> HRESULT {
    E_NOTIMPL
}

/// "S_FALSE when validation is off": DXVK has no validation of dxcl's.
unsafe extern "system" fn set_opencl_access(
    _p: *mut IDxclInteropResource,
    _subresource: UINT,
    _access: DXCL_OPENCL_ACCESS,
    _call: *const c_char,
) -> HRESULT {
    S_FALSE
}

/// Nothing cheap tells whether DXVK's work on the texture is done: pending, so callers wait.
unsafe extern "system" fn query_device_work_done(_p: *mut IDxclInteropResource) -> HRESULT {
    S_FALSE
}

/// Looks up `name` through `get` and casts it to `F`.
///
/// # Safety
/// `F` is the function pointer type of `name`; `get` answers for `handle`.
unsafe fn load<F, H: Copy>(
    get: unsafe extern "system" fn(H, *const c_char) -> vk::PFN_vkVoidFunction,
    handle: H,
    name: &CStr,
) -> Option<F> {
    // SAFETY: caller's contract.
    unsafe { get(handle, name.as_ptr()).map(|f| std::mem::transmute_copy(&f)) }
}

/// Checks the description: one 2D subresource of a format OpenCL images have, default usage.
fn check_desc(d: &D3D11_TEXTURE2D_DESC) -> Result<vk::Format, HRESULT> {
    let format = vk_format(d.Format).ok_or(E_INVALIDARG)?;
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
    let format = check_desc(desc)?;
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
    let (mut instance, mut physical, mut vkdev) = (
        vk::Instance::null(),
        vk::PhysicalDevice::null(),
        vk::Device::null(),
    );
    let (mut queue, mut family) = (vk::Queue::null(), 0u32);
    // SAFETY: DXVK's live interop device; valid out pointers.
    unsafe {
        ((*(*d).lpVtbl).GetVulkanHandles)(d, &mut instance, &mut physical, &mut vkdev);
        ((*(*d).lpVtbl).GetSubmissionQueue)(d, &mut queue, &mut family);
    }
    let gipa = super::vulkan::loader_proc_addr().ok_or(E_FAIL)?;
    // SAFETY: DXVK's live instance; each name's function type.
    let (props, mem_props, gdpa) = unsafe {
        (
            load::<vk::PFN_vkGetPhysicalDeviceProperties, _>(
                gipa,
                instance,
                c"vkGetPhysicalDeviceProperties",
            ),
            load::<vk::PFN_vkGetPhysicalDeviceMemoryProperties, _>(
                gipa,
                instance,
                c"vkGetPhysicalDeviceMemoryProperties",
            ),
            load::<vk::PFN_vkGetDeviceProcAddr, _>(gipa, instance, c"vkGetDeviceProcAddr"),
        )
    };
    let (Some(props), Some(mem_props), Some(gdpa)) = (props, mem_props, gdpa) else {
        return Err(E_FAIL);
    };
    let mut p = vk::PhysicalDeviceProperties::default();
    // SAFETY: a physical device of that instance.
    unsafe { props(physical, &mut p) };
    if p.device_type != vk::PhysicalDeviceType::CPU {
        // Exportable memory for GPU OpenCL: not made until it runs on a GPU (docs/dxvk.md).
        return Err(DXGI_ERROR_UNSUPPORTED);
    }
    // SAFETY: as above.
    let f = unsafe {
        (
            load::<vk::PFN_vkCreateImage, _>(gdpa, vkdev, c"vkCreateImage"),
            load::<vk::PFN_vkDestroyImage, _>(gdpa, vkdev, c"vkDestroyImage"),
            load::<vk::PFN_vkGetImageMemoryRequirements, _>(
                gdpa,
                vkdev,
                c"vkGetImageMemoryRequirements",
            ),
            load::<vk::PFN_vkAllocateMemory, _>(gdpa, vkdev, c"vkAllocateMemory"),
            load::<vk::PFN_vkFreeMemory, _>(gdpa, vkdev, c"vkFreeMemory"),
            load::<vk::PFN_vkBindImageMemory, _>(gdpa, vkdev, c"vkBindImageMemory"),
            load::<vk::PFN_vkMapMemory, _>(gdpa, vkdev, c"vkMapMemory"),
            load::<vk::PFN_vkUnmapMemory, _>(gdpa, vkdev, c"vkUnmapMemory"),
            load::<vk::PFN_vkGetImageSubresourceLayout, _>(
                gdpa,
                vkdev,
                c"vkGetImageSubresourceLayout",
            ),
            load::<vk::PFN_vkQueueWaitIdle, _>(gdpa, vkdev, c"vkQueueWaitIdle"),
        )
    };
    let (
        Some(create_image),
        Some(destroy_image),
        Some(requirements),
        Some(allocate),
        Some(free_memory),
        Some(bind),
        Some(map),
        Some(unmap_memory),
        Some(subresource_layout),
        Some(queue_wait_idle),
    ) = f
    else {
        return Err(E_FAIL);
    };
    let b = desc.BindFlags;
    let mut usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    if b & D3D11_BIND_SHADER_RESOURCE as u32 != 0 {
        usage |= vk::ImageUsageFlags::SAMPLED;
    }
    if b & D3D11_BIND_UNORDERED_ACCESS as u32 != 0 {
        usage |= vk::ImageUsageFlags::STORAGE;
    }
    if b & D3D11_BIND_RENDER_TARGET as u32 != 0 {
        usage |= vk::ImageUsageFlags::COLOR_ATTACHMENT;
    }
    let info = vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(format)
        .extent(vk::Extent3D {
            width: desc.Width,
            height: desc.Height,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::LINEAR)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .initial_layout(vk::ImageLayout::UNDEFINED);
    let mut image = vk::Image::null();
    // SAFETY: DXVK's live device; a valid create info.
    if unsafe { create_image(vkdev, &info, std::ptr::null(), &mut image) } != vk::Result::SUCCESS {
        // A linear image of this format and usage is not supported.
        return Err(E_INVALIDARG);
    }
    let vk_fns = Vk {
        device: vkdev,
        queue,
        destroy_image,
        free_memory,
        unmap_memory,
        queue_wait_idle,
    };
    let undo_image = |image| {
        // SAFETY: our image, never used.
        unsafe { destroy_image(vkdev, image, std::ptr::null()) }
    };
    let mut req = vk::MemoryRequirements::default();
    let mut mp = vk::PhysicalDeviceMemoryProperties::default();
    // SAFETY: our image; a physical device of the instance.
    unsafe {
        requirements(vkdev, image, &mut req);
        mem_props(physical, &mut mp);
    }
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let Some(type_index) = (0..mp.memory_type_count).find(|&i| {
        req.memory_type_bits & (1 << i) != 0
            && mp.memory_types[i as usize].property_flags.contains(wanted)
    }) else {
        undo_image(image);
        return Err(DXGI_ERROR_UNSUPPORTED);
    };
    let alloc = vk::MemoryAllocateInfo::default()
        .allocation_size(req.size)
        .memory_type_index(type_index);
    let mut memory = vk::DeviceMemory::null();
    let mut host = std::ptr::null_mut();
    // SAFETY: DXVK's device; our image and memory; the map covers the whole allocation.
    let ok = unsafe {
        allocate(vkdev, &alloc, std::ptr::null(), &mut memory) == vk::Result::SUCCESS
            && bind(vkdev, image, memory, 0) == vk::Result::SUCCESS
            && map(
                vkdev,
                memory,
                0,
                vk::WHOLE_SIZE,
                vk::MemoryMapFlags::empty(),
                &mut host,
            ) == vk::Result::SUCCESS
    };
    if !ok {
        // SAFETY: ours, unused; freeing a null memory is allowed.
        unsafe { free_memory(vkdev, memory, std::ptr::null()) };
        undo_image(image);
        return Err(E_OUTOFMEMORY);
    }
    let color = vk::ImageSubresource {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        array_layer: 0,
    };
    let mut sl = vk::SubresourceLayout::default();
    // SAFETY: our linear image.
    unsafe { subresource_layout(vkdev, image, &color, &mut sl) };
    let shared = Box::new(SharedMemory {
        vtbl: &VTBL,
        refs: AtomicU32::new(1),
        dxvk: {
            let p = dxvk.as_ptr();
            // SAFETY: a live interface: the object keeps its own reference.
            unsafe { ((*(*p).lpVtbl).base.AddRef)(p.cast()) };
            p
        },
        vk: vk_fns,
        image,
        memory,
        host,
        size: req.size,
        layout: DXCL_SUBRESOURCE_LAYOUT {
            Offset: sl.offset,
            Size: sl.size,
            RowPitch: sl.row_pitch as u32,
            DepthPitch: sl.depth_pitch as u32,
            Width: desc.Width,
            Height: desc.Height,
            Depth: 1,
            Reserved: 0,
        },
    });
    let shared = Box::into_raw(shared).cast::<IUnknown>();
    // From here the object owns the image and memory: its release destroys them.
    let drop_shared = || {
        // SAFETY: our one reference.
        unsafe { release(shared) };
    };
    let desc1 = Texture2dDesc1 {
        desc: *desc,
        layout: 0,
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
    fn interop_device1_iid() {
        // {e2ef5fa5-dc21-4af7-90c4-f67ef6a09324}, as DXVK's dxgi_interfaces.h declares it.
        let g = IDXGIVkInteropDevice1::IID;
        assert_eq!((g.Data1, g.Data2, g.Data3), (0xe2ef5fa5, 0xdc21, 0x4af7));
        assert_eq!(g.Data4, [0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x24]);
    }

    #[test]
    fn one_default_subresource_of_an_image_format_only() {
        assert_eq!(check_desc(&desc()), Ok(vk::Format::R8G8B8A8_UNORM));
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
        assert_eq!(
            vk_format(DXGI_FORMAT_B8G8R8A8_UNORM),
            Some(vk::Format::B8G8R8A8_UNORM)
        );
        assert_eq!(
            vk_format(DXGI_FORMAT_R32_FLOAT),
            Some(vk::Format::R32_SFLOAT)
        );
        assert_eq!(
            vk_format(DXGI_FORMAT_R16G16B16A16_FLOAT),
            Some(vk::Format::R16G16B16A16_SFLOAT)
        );
        assert_eq!(vk_format(DXGI_FORMAT_UNKNOWN), None);
    }
}
