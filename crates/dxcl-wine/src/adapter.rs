//! `clGetDeviceIDsFromD3D1x{KHR,NV}` for a Windows program: the layer's own entry point answers,
//! with every rule of the specs, about a stand-in for the program's DXGI adapter.
//!
//! The program's adapter is a Windows COM object, which unix code must not call; the Windows side
//! reads what identifies it (its description, the Vulkan device behind it) and the stand-in here
//! answers the layer from that. Which Vulkan device is behind the adapter, best evidence first:
//! DXVK's `IDXGIVkInteropAdapter`; the display GPU whose LUID is the adapter's, with the Vulkan
//! UUID Wine records for it; a Vulkan device of the same LUID; of the same PCI vendor and device;
//! of the same name; the only Vulkan device there is (wined3d renders on it). The stand-in
//! reports it through dxcl's `IDxclInteropDevice::GetAdapterInfo`, so the layer's rule for
//! dxcl's own Vulkan adapters applies: a CPU device (lavapipe, llvmpipe) pairs with CPU OpenCL
//! devices, a GPU with the OpenCL device of its UUID. With no Vulkan device found, the layer
//! identifies the adapter by its description (LUID), as for any foreign adapter.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use dxcl_abi::interop::{
    IDxclInteropDevice, IDxclInteropDeviceVtbl, IID_IDxclInteropDevice, DXCL_ADAPTER_FLAG_SOFTWARE,
    DXCL_ADAPTER_INFO, DXCL_BACKEND_KIND_VULKAN,
};
use dxcl_abi::{
    IDXGIAdapter, IDXGIAdapter1, IDXGIAdapter1Vtbl, IDXGIAdapterVtbl, IDXGIObjectVtbl,
    IID_IDXGIAdapter, IID_IDXGIAdapter1, IID_IDXGIObject, IID_IUnknown, IUnknown, IUnknownVtbl,
    DXGI_ADAPTER_DESC, DXGI_ADAPTER_DESC1, E_NOINTERFACE, E_POINTER, GUID, HRESULT, REFIID, S_OK,
};

use dxcl_abi::sharing::{Call, Ext};

use crate::host::Host;
use crate::unixlib::{AdapterFacts, DeviceIds, VulkanDevice};

const CL_INVALID_PLATFORM: i64 = -32;
const VK_PHYSICAL_DEVICE_TYPE_CPU: u32 = 4;

/// `(device source, adapter source)` tokens of an extension (by its number in `Ext::ALL`).
fn sources(ext: u32) -> (u32, u32) {
    let version = Ext::ALL[ext as usize % Ext::ALL.len()].version;
    (version.source_device(), version.source_adapter())
}

fn description(desc: &DXGI_ADAPTER_DESC1) -> String {
    let end = desc.Description.iter().position(|c| *c == 0).unwrap_or(128);
    String::from_utf16_lossy(&desc.Description[..end])
}

fn name(d: &VulkanDevice) -> String {
    let end = d.name.iter().position(|c| *c == 0).unwrap_or(d.name.len());
    String::from_utf8_lossy(&d.name[..end]).into_owned()
}

fn luid_bytes(desc: &DXGI_ADAPTER_DESC1) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&desc.AdapterLuid.LowPart.to_ne_bytes());
    b[4..].copy_from_slice(&desc.AdapterLuid.HighPart.to_ne_bytes());
    b
}

/// The Vulkan device behind the adapter (module doc, best evidence first), as dxcl's interop
/// interface describes an adapter; `None` when nothing identifies one.
pub fn identify(facts: &AdapterFacts) -> Option<DXCL_ADAPTER_INFO> {
    let desc = read_desc(facts);
    let vulkan = &facts.vulkan[..(facts.vulkan_count as usize).min(facts.vulkan.len())];
    let by_uuid = |u: [u8; 16]| (u, vulkan.iter().find(|d| d.uuid == u));
    fn found(d: &VulkanDevice) -> ([u8; 16], Option<&VulkanDevice>) {
        (d.uuid, Some(d))
    }
    let (uuid, device) = if facts.dxvk_known != 0 {
        by_uuid(facts.dxvk_uuid)
    } else if facts.gpu_known != 0 {
        by_uuid(facts.gpu_uuid)
    } else if let Some(d) = vulkan
        .iter()
        .find(|d| d.luid_valid != 0 && d.luid == luid_bytes(&desc))
    {
        found(d)
    } else if let Some(d) = vulkan
        .iter()
        .find(|d| d.vendor == desc.VendorId && d.device == desc.DeviceId)
    {
        found(d)
    } else if let Some(d) = vulkan.iter().find(|d| name(d) == description(&desc)) {
        found(d)
    } else if let [only] = vulkan {
        found(only)
    } else {
        return None;
    };
    let cpu = device.is_some_and(|d| d.device_type == VK_PHYSICAL_DEVICE_TYPE_CPU);
    Some(DXCL_ADAPTER_INFO {
        Backend: DXCL_BACKEND_KIND_VULKAN,
        VendorId: desc.VendorId,
        DeviceId: desc.DeviceId,
        AdapterLuid: desc.AdapterLuid,
        DeviceUuid: uuid,
        Flags: if cpu {
            DXCL_ADAPTER_FLAG_SOFTWARE as u32
        } else {
            0
        },
    })
}

fn read_desc(facts: &AdapterFacts) -> DXGI_ADAPTER_DESC1 {
    // SAFETY: `desc` holds the bytes of a DXGI_ADAPTER_DESC1 (same size, checked in unixlib's
    // tests); every bit pattern is a valid value of its integer fields.
    unsafe { std::ptr::read_unaligned(facts.desc.as_ptr().cast::<DXGI_ADAPTER_DESC1>()) }
}

/// The stand-in: two COM faces (the adapter, dxcl's interop interface) over one count.
#[repr(C)]
struct StandIn {
    adapter: *const IDXGIAdapter1Vtbl,
    interop: *const IDxclInteropDeviceVtbl,
    refs: AtomicU32,
    /// False for an object that is not an adapter: it answers IUnknown only.
    is_adapter: bool,
    has_desc1: bool,
    desc: DXGI_ADAPTER_DESC1,
    info: Option<DXCL_ADAPTER_INFO>,
}

const INTEROP_OFFSET: usize = std::mem::offset_of!(StandIn, interop);

fn same(a: &GUID, b: &GUID) -> bool {
    a.Data1 == b.Data1 && a.Data2 == b.Data2 && a.Data3 == b.Data3 && a.Data4 == b.Data4
}

unsafe extern "system" fn query(
    this: *mut IUnknown,
    riid: REFIID,
    out: *mut *mut c_void,
) -> HRESULT {
    if out.is_null() || riid.is_null() {
        return E_POINTER;
    }
    let s = this.cast::<StandIn>();
    // SAFETY: `this` is the adapter face of a live StandIn (the interop face's methods adjust
    // before calling here); riid is the caller's GUID.
    let (s_ref, iid) = unsafe { (&*s, &*riid) };
    let face: *mut c_void = if same(iid, &IID_IUnknown)
        || (s_ref.is_adapter
            && (same(iid, &IID_IDXGIObject)
                || same(iid, &IID_IDXGIAdapter)
                || (s_ref.has_desc1 && same(iid, &IID_IDXGIAdapter1))))
    {
        s.cast()
    } else if s_ref.is_adapter && s_ref.info.is_some() && same(iid, &IID_IDxclInteropDevice) {
        // SAFETY: the interop face lies inside the StandIn.
        unsafe { s.cast::<u8>().add(INTEROP_OFFSET) }.cast()
    } else {
        // SAFETY: the caller's out pointer.
        unsafe { *out = std::ptr::null_mut() };
        return E_NOINTERFACE;
    };
    s_ref.refs.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the caller's out pointer.
    unsafe { *out = face };
    S_OK
}

unsafe extern "system" fn add_ref(this: *mut IUnknown) -> u32 {
    // SAFETY: the adapter face of a live StandIn.
    unsafe { &*this.cast::<StandIn>() }
        .refs
        .fetch_add(1, Ordering::Relaxed)
        + 1
}

unsafe extern "system" fn release(this: *mut IUnknown) -> u32 {
    let s = this.cast::<StandIn>();
    // SAFETY: the adapter face of a live StandIn.
    let left = unsafe { &*s }.refs.fetch_sub(1, Ordering::AcqRel) - 1;
    if left == 0 {
        // SAFETY: the last reference: the box made in `device_ids` is ours to free.
        drop(unsafe { Box::from_raw(s) });
    }
    left
}

unsafe extern "system" fn get_desc(
    this: *mut IDXGIAdapter,
    out: *mut DXGI_ADAPTER_DESC,
) -> HRESULT {
    if out.is_null() {
        return dxcl_abi::E_INVALIDARG;
    }
    // SAFETY: the adapter face of a live StandIn.
    let d = &unsafe { &*this.cast::<StandIn>() }.desc;
    // SAFETY: the caller's out struct.
    unsafe {
        *out = DXGI_ADAPTER_DESC {
            Description: d.Description,
            VendorId: d.VendorId,
            DeviceId: d.DeviceId,
            SubSysId: d.SubSysId,
            Revision: d.Revision,
            DedicatedVideoMemory: d.DedicatedVideoMemory,
            DedicatedSystemMemory: d.DedicatedSystemMemory,
            SharedSystemMemory: d.SharedSystemMemory,
            AdapterLuid: d.AdapterLuid,
        }
    };
    S_OK
}

unsafe extern "system" fn get_desc1(
    this: *mut IDXGIAdapter1,
    out: *mut DXGI_ADAPTER_DESC1,
) -> HRESULT {
    if out.is_null() {
        return dxcl_abi::E_INVALIDARG;
    }
    // SAFETY: the adapter face of a live StandIn; the caller's out struct.
    unsafe { *out = (*this.cast::<StandIn>()).desc };
    S_OK
}

/// The interop face's `this` back to the StandIn's adapter face.
fn from_interop(this: *mut IDxclInteropDevice) -> *mut IUnknown {
    // SAFETY: the interop face lies INTEROP_OFFSET bytes into its StandIn.
    unsafe { this.cast::<u8>().sub(INTEROP_OFFSET) }.cast()
}

unsafe extern "system" fn interop_query(
    this: *mut IUnknown,
    riid: REFIID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: the interop face of a live StandIn.
    unsafe { query(from_interop(this.cast()), riid, out) }
}

unsafe extern "system" fn interop_add_ref(this: *mut IUnknown) -> u32 {
    // SAFETY: as above.
    unsafe { add_ref(from_interop(this.cast())) }
}

unsafe extern "system" fn interop_release(this: *mut IUnknown) -> u32 {
    // SAFETY: as above.
    unsafe { release(from_interop(this.cast())) }
}

unsafe extern "system" fn adapter_info(
    this: *mut IDxclInteropDevice,
    out: *mut DXCL_ADAPTER_INFO,
) -> HRESULT {
    if out.is_null() {
        return dxcl_abi::E_INVALIDARG;
    }
    // SAFETY: the interop face of a live StandIn, which has info (query hands the face out only then).
    match unsafe { &*from_interop(this).cast::<StandIn>() }.info {
        Some(info) => {
            // SAFETY: the caller's out struct.
            unsafe { *out = info };
            S_OK
        }
        None => dxcl_abi::E_FAIL,
    }
}

static ADAPTER_VTBL: IDXGIAdapter1Vtbl = IDXGIAdapter1Vtbl {
    base: IDXGIAdapterVtbl {
        base: IDXGIObjectVtbl {
            base: IUnknownVtbl {
                QueryInterface: query,
                AddRef: add_ref,
                Release: release,
            },
            ..IDXGIObjectVtbl::NOT_IMPLEMENTED
        },
        GetDesc: get_desc,
        ..IDXGIAdapterVtbl::NOT_IMPLEMENTED
    },
    GetDesc1: get_desc1,
};

static INTEROP_VTBL: IDxclInteropDeviceVtbl = IDxclInteropDeviceVtbl {
    base: IUnknownVtbl {
        QueryInterface: interop_query,
        AddRef: interop_add_ref,
        Release: interop_release,
    },
    GetAdapterInfo: adapter_info,
    ..IDxclInteropDeviceVtbl::NOT_IMPLEMENTED
};

/// Unix call `DEVICE_IDS`.
///
/// # Safety
/// The program's arguments, as the Windows side packed them.
pub unsafe fn device_ids(host: &Host, p: &mut DeviceIds) {
    let Some(entry) = Ext::ALL
        .get(p.ext as usize)
        .map(|e| e.entry_point(Call::DeviceIds))
    else {
        p.ret = CL_INVALID_PLATFORM;
        return;
    };
    let f = host.extension(p.platform as usize as *mut c_void, entry);
    if f.is_null() {
        // The host (the layer) answers for no such platform.
        p.ret = CL_INVALID_PLATFORM;
        return;
    }
    let (device_source, adapter_source) = sources(p.ext);
    // A device is known by its adapter (the layer's rule for devices), so a device the Windows
    // side resolved to its adapter is asked about as that adapter.
    let source = if p.source == device_source && p.facts.is_adapter != 0 {
        adapter_source
    } else {
        p.source
    };
    let object: *mut c_void = if p.object_null != 0 {
        std::ptr::null_mut()
    } else {
        Box::into_raw(Box::new(StandIn {
            adapter: &ADAPTER_VTBL,
            interop: &INTEROP_VTBL,
            refs: AtomicU32::new(1),
            is_adapter: p.facts.is_adapter != 0,
            has_desc1: p.facts.has_desc1 != 0,
            desc: read_desc(&p.facts),
            info: identify(&p.facts),
        }))
        .cast()
    };
    type GetIds = unsafe extern "system" fn(
        *mut c_void,
        u32,
        *mut c_void,
        u32,
        u32,
        *mut c_void,
        *mut u32,
    ) -> i32;
    // SAFETY: the layer's clGetDeviceIDsFromD3D1x{KHR,NV}, whose signature this is.
    let f: GetIds = unsafe { std::mem::transmute(f) };
    // SAFETY: the program's arguments; `object` is null or a live stand-in.
    p.ret = unsafe {
        f(
            p.platform as usize as *mut c_void,
            source,
            object,
            p.set,
            p.num_entries,
            p.devices as usize as *mut c_void,
            p.num_devices as usize as *mut u32,
        )
    } as i64;
    if !object.is_null() {
        // SAFETY: our own reference to the stand-in.
        unsafe { release(object.cast()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unixlib::MAX_VULKAN_DEVICES;

    fn facts(
        vendor: u32,
        luid_low: u32,
        description: &str,
        vulkan: &[VulkanDevice],
    ) -> AdapterFacts {
        let mut desc = DXGI_ADAPTER_DESC1::default();
        for (i, c) in description.encode_utf16().enumerate() {
            desc.Description[i] = c;
        }
        desc.VendorId = vendor;
        desc.DeviceId = 0x6cd;
        desc.AdapterLuid.LowPart = luid_low;
        // SAFETY: all-zero is a valid AdapterFacts (integers and byte arrays).
        let mut f: AdapterFacts = unsafe { std::mem::zeroed() };
        // SAFETY: desc's bytes into a buffer of its size.
        unsafe { std::ptr::write_unaligned(f.desc.as_mut_ptr().cast(), desc) };
        f.is_adapter = 1;
        f.vulkan_count = vulkan.len() as u32;
        f.vulkan[..vulkan.len()].copy_from_slice(vulkan);
        f
    }

    fn vk(uuid: u8, vendor: u32, device_type: u32, name_: &str, luid: Option<u32>) -> VulkanDevice {
        let mut d = VulkanDevice {
            uuid: [uuid; 16],
            luid: [0; 8],
            luid_valid: luid.is_some() as u32,
            vendor,
            device: 0,
            device_type,
            name: [0; 256],
        };
        d.name[..name_.len()].copy_from_slice(name_.as_bytes());
        if let Some(l) = luid {
            d.luid[..4].copy_from_slice(&l.to_ne_bytes());
        }
        d
    }

    #[test]
    fn wined3d_on_its_only_vulkan_device_a_cpu_one_is_software() {
        // Wine's made-up GTX 470 over llvmpipe, the only Vulkan device (what Xvfb gives).
        let f = facts(
            0x10de,
            0x3f0,
            "NVIDIA GeForce GTX 470",
            &[vk(7, 0x10005, 4, "llvmpipe", None)],
        );
        let info = identify(&f).unwrap();
        assert_eq!(info.DeviceUuid, [7; 16]);
        assert_eq!(info.Flags, DXCL_ADAPTER_FLAG_SOFTWARE as u32);
    }

    #[test]
    fn evidence_in_order_registry_uuid_then_luid_then_pci_then_name() {
        let gpus = [
            vk(1, 0x10de, 2, "A", Some(0x55)),
            vk(2, 0x10de, 2, "B", None),
        ];
        let mut f = facts(0x10de, 0x55, "B", &gpus);
        assert_eq!(identify(&f).unwrap().DeviceUuid, [1; 16], "by LUID");
        f.gpu_known = 1;
        f.gpu_uuid = [9; 16];
        let info = identify(&f).unwrap();
        assert_eq!(
            (info.DeviceUuid, info.Flags),
            ([9; 16], 0),
            "by the registry's UUID"
        );
        let f = facts(0x1002, 0x77, "B", &gpus);
        assert_eq!(identify(&f).unwrap().DeviceUuid, [2; 16], "by name");
        let f = facts(0x1002, 0x77, "C", &gpus);
        assert!(identify(&f).is_none(), "two devices, no evidence");
        assert!(gpus.len() < MAX_VULKAN_DEVICES);
    }
}
