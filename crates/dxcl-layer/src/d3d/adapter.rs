//! Identifying the adapter behind a D3D device or a DXGI adapter.

use std::ffi::c_void;

use dxcl_abi::interop::{
    IDxclInteropDevice, DXCL_ADAPTER_FLAG_SOFTWARE, DXCL_ADAPTER_INFO, DXCL_BACKEND_KIND_HOST,
};
use dxcl_abi::{
    IDXGIAdapter, IDXGIAdapter1, IDXGIDevice, DXGI_ADAPTER_DESC, DXGI_ADAPTER_DESC1,
    DXGI_ADAPTER_FLAG_SOFTWARE, HRESULT, LUID, SUCCEEDED,
};

pub use super::adapter_id::AdapterId;
use super::com::{query_raw, ComPtr};

/// Microsoft's PCI vendor id, which the software (WARP) adapter reports.
const VENDOR_MICROSOFT: u32 = 0x1414;
/// `VK_VENDOR_ID_MESA`: Mesa's CPU Vulkan drivers (lavapipe) report it, and DXVK passes the
/// Vulkan vendor id on as the DXGI one.
const VENDOR_MESA: u32 = 0x10005;

/// What told the layer how to pair an adapter with OpenCL devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdSource {
    /// dxcl's `IDxclInteropDevice::GetAdapterInfo`.
    DxclInterop,
    /// The Vulkan physical device behind a DXVK adapter (`IDXGIVkInteropAdapter`).
    VulkanPhysicalDevice,
    /// The standard DXGI description (flags, vendor id, LUID).
    DxgiDescription,
}

impl IdSource {
    pub fn describe(self) -> &'static str {
        match self {
            IdSource::DxclInterop => "dxcl's adapter information",
            IdSource::VulkanPhysicalDevice => {
                "the Vulkan physical device behind DXVK's adapter (IDXGIVkInteropAdapter)"
            }
            IdSource::DxgiDescription => "the DXGI adapter description",
        }
    }
}

/// A DXGI adapter as the layer reads it (`dxcl info`), whichever `WCHAR` width its runtime
/// was built with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterFacts {
    pub description: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub luid: LUID,
    pub flags: u32,
    /// The runtime wrote its description with a 4-byte `WCHAR` (DXVK-native).
    pub wide_wchar: bool,
    /// How the layer pairs the adapter with OpenCL devices, and what told it.
    pub pairing: Option<(AdapterId, IdSource)>,
}

/// What the layer reads of an application's `IDXGIAdapter*`: its description (through
/// `GetDesc1`, else `GetDesc`) and how `clGetDeviceIDsFromD3D1xKHR` pairs it with OpenCL devices.
///
/// # Safety
/// `adapter` is null or a live COM object.
pub unsafe fn adapter_facts(adapter: *mut c_void) -> Option<AdapterFacts> {
    // SAFETY: caller's contract.
    let adapter = unsafe { query_raw::<IDXGIAdapter>(adapter) }?;
    let fields = adapter
        .query::<IDXGIAdapter1>()
        .and_then(|a1| desc1(&a1))
        .or_else(|| desc(&adapter))?;
    Some(AdapterFacts {
        description: fields.description.clone(),
        vendor_id: fields.vendor,
        device_id: fields.device,
        luid: fields.luid,
        flags: fields.flags,
        wide_wchar: fields.wide,
        pairing: identify_with_source(&adapter),
    })
}

/// A LUID's bytes as laid out in memory (how `CL_DEVICE_LUID_KHR` reports one).
pub(crate) fn luid_bytes(l: LUID) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&l.LowPart.to_ne_bytes());
    b[4..].copy_from_slice(&l.HighPart.to_ne_bytes());
    b
}

/// What dxcl's adapter information says: a CPU adapter (host backend, or any backend flagged
/// `DXCL_ADAPTER_FLAG_SOFTWARE` such as lavapipe) pairs with CPU devices; a hardware Vulkan
/// adapter with the device of its UUID.
fn from_info(info: &DXCL_ADAPTER_INFO) -> AdapterId {
    if info.Backend == DXCL_BACKEND_KIND_HOST || info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 != 0
    {
        AdapterId::Software
    } else {
        AdapterId::Uuid(info.DeviceUuid)
    }
}

/// From `IDxclInteropDevice::GetAdapterInfo`.
pub(crate) fn from_interop(interop: &ComPtr<IDxclInteropDevice>) -> Option<AdapterId> {
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropDevice (QueryInterface said so); `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    SUCCEEDED(hr).then(|| from_info(&info))
}

/// What a foreign adapter's standard description says: software when DXGI flags it so, or it is
/// Microsoft's WARP, or its vendor is Mesa's Vulkan vendor id (what DXVK reports for lavapipe,
/// when the Vulkan query of [`super::vulkan`] is not possible); else its LUID.
fn from_desc(vendor: u32, luid: LUID, software_flag: bool) -> AdapterId {
    if software_flag || vendor == VENDOR_MICROSOFT || vendor == VENDOR_MESA {
        AdapterId::Software
    } else {
        AdapterId::Luid(luid_bytes(luid))
    }
}

/// `DXGI_ADAPTER_DESC1` as a runtime whose `WCHAR` is 4 bytes lays it out: DXVK-native's headers
/// declare `WCHAR` as Linux's `wchar_t`, so its `Description` is 512 bytes where the SDK's (and
/// dxcl's) is 256, and every later field sits 256 bytes further on.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)] // the SDK's field names, as dxcl_abi spells them
struct AdapterDesc1Wide {
    Description: [u32; 128],
    VendorId: u32,
    DeviceId: u32,
    SubSysId: u32,
    Revision: u32,
    DedicatedVideoMemory: usize,
    DedicatedSystemMemory: usize,
    SharedSystemMemory: usize,
    AdapterLuid: LUID,
    Flags: u32,
}

/// `DXGI_ADAPTER_DESC` with a 4-byte `WCHAR` (see [`AdapterDesc1Wide`]).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_snake_case)] // the SDK's field names, as dxcl_abi spells them
struct AdapterDescWide {
    Description: [u32; 128],
    VendorId: u32,
    DeviceId: u32,
    SubSysId: u32,
    Revision: u32,
    DedicatedVideoMemory: usize,
    DedicatedSystemMemory: usize,
    SharedSystemMemory: usize,
    AdapterLuid: LUID,
}

/// Out storage for `GetDesc`/`GetDesc1` that holds either layout: the runtime writes its own
/// `sizeof` bytes, and a 2-byte-`WCHAR` struct handed to a 4-byte-`WCHAR` runtime is overrun by
/// 256 bytes (issue 12: the release layer's stack was overwritten by DXVK's `GetDesc1`).
#[repr(C)]
union DescStorage<N: Copy, W: Copy> {
    narrow: N,
    wide: W,
    bytes: [u8; 1024],
}

/// What the layer reads from an adapter description.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DescFields {
    description: String,
    vendor: u32,
    device: u32,
    luid: LUID,
    flags: u32,
    /// Read from the 4-byte-`WCHAR` layout.
    wide: bool,
}

/// A description's text up to its terminating zero, from 2-byte units.
fn text_narrow(units: &[u16]) -> String {
    let end = units.iter().position(|&c| c == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end])
}

/// A description's text up to its terminating zero, from 4-byte units.
fn text_wide(units: &[u32]) -> String {
    units
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Filled into the storage before the call: bytes past the narrow layout that are still this
/// afterwards were not written, so the runtime used the narrow layout.
const UNWRITTEN: u8 = 0xa5;

/// Calls `get` (a `GetDesc`/`GetDesc1` on a live adapter) with storage for either `WCHAR` width
/// and tells which one the runtime wrote by the bytes it touched past the narrow struct.
fn read_desc<N: Copy, W: Copy>(
    get: impl FnOnce(*mut N) -> HRESULT,
    narrow: impl FnOnce(&N) -> DescFields,
    wide: impl FnOnce(&W) -> DescFields,
) -> Option<DescFields> {
    const {
        assert!(
            std::mem::size_of::<W>() <= 1024 && std::mem::size_of::<N>() < std::mem::size_of::<W>()
        )
    };
    let mut storage = DescStorage::<N, W> {
        bytes: [UNWRITTEN; 1024],
    };
    if !SUCCEEDED(get(std::ptr::addr_of_mut!(storage).cast::<N>())) {
        return None;
    }
    // SAFETY: every field of the union is plain data for which any bytes are a valid value.
    let bytes = unsafe { storage.bytes };
    let written_past_narrow = bytes[std::mem::size_of::<N>()..std::mem::size_of::<W>()]
        .iter()
        .any(|b| *b != UNWRITTEN);
    // SAFETY: as above: both views are plain data.
    Some(unsafe {
        if written_past_narrow {
            DescFields {
                wide: true,
                ..wide(&storage.wide)
            }
        } else {
            narrow(&storage.narrow)
        }
    })
}

/// `IDXGIAdapter1::GetDesc1`, whichever `WCHAR` width the runtime was built with.
fn desc1(a1: &ComPtr<IDXGIAdapter1>) -> Option<DescFields> {
    let p = a1.as_ptr();
    read_desc::<DXGI_ADAPTER_DESC1, AdapterDesc1Wide>(
        // SAFETY: a live IDXGIAdapter1; the storage holds either layout of the out struct.
        |out| unsafe { ((*(*p).lpVtbl).GetDesc1)(p, out) },
        |d| DescFields {
            description: text_narrow(&d.Description),
            vendor: d.VendorId,
            device: d.DeviceId,
            luid: d.AdapterLuid,
            flags: d.Flags,
            wide: false,
        },
        |d| DescFields {
            description: text_wide(&d.Description),
            vendor: d.VendorId,
            device: d.DeviceId,
            luid: d.AdapterLuid,
            flags: d.Flags,
            wide: true,
        },
    )
}

/// `IDXGIAdapter::GetDesc`, whichever `WCHAR` width the runtime was built with.
fn desc(adapter: &ComPtr<IDXGIAdapter>) -> Option<DescFields> {
    let p = adapter.as_ptr();
    read_desc::<DXGI_ADAPTER_DESC, AdapterDescWide>(
        // SAFETY: a live IDXGIAdapter; the storage holds either layout of the out struct.
        |out| unsafe { ((*(*p).lpVtbl).GetDesc)(p, out) },
        |d| DescFields {
            description: text_narrow(&d.Description),
            vendor: d.VendorId,
            device: d.DeviceId,
            luid: d.AdapterLuid,
            flags: 0,
            wide: false,
        },
        |d| DescFields {
            description: text_wide(&d.Description),
            vendor: d.VendorId,
            device: d.DeviceId,
            luid: d.AdapterLuid,
            flags: 0,
            wide: true,
        },
    )
}

/// From a DXGI adapter: dxcl's interop interface, the Vulkan physical device of a DXVK adapter
/// (`IDXGIVkInteropAdapter`), `GetDesc1` (with its flags), or `GetDesc`.
fn from_adapter(adapter: &ComPtr<IDXGIAdapter>) -> Option<AdapterId> {
    identify_with_source(adapter).map(|(id, _)| id)
}

/// [`from_adapter`] with what told it.
fn identify_with_source(adapter: &ComPtr<IDXGIAdapter>) -> Option<(AdapterId, IdSource)> {
    if let Some(i) = adapter.query::<IDxclInteropDevice>() {
        if let Some(id) = from_interop(&i) {
            return Some((id, IdSource::DxclInterop));
        }
    }
    if let Some(id) = super::vulkan::from_dxgi_adapter(adapter) {
        return Some((id, IdSource::VulkanPhysicalDevice));
    }
    let fields = adapter
        .query::<IDXGIAdapter1>()
        .and_then(|a1| desc1(&a1))
        .or_else(|| desc(adapter))?;
    let software = fields.flags & DXGI_ADAPTER_FLAG_SOFTWARE as u32 != 0;
    Some((
        from_desc(fields.vendor, fields.luid, software),
        IdSource::DxgiDescription,
    ))
}

/// The adapter of a device, through `IDXGIDevice::GetAdapter`.
pub(crate) fn from_dxgi_device(device: &ComPtr) -> Option<AdapterId> {
    let dxgi = device.query::<IDXGIDevice>()?;
    let p = dxgi.as_ptr();
    let mut out = std::ptr::null_mut();
    // SAFETY: a live IDXGIDevice; GetAdapter returns an AddRef'd adapter through our out pointer.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapter)(p, &mut out) };
    if !SUCCEEDED(hr) {
        return None;
    }
    // SAFETY: on success we own the returned reference.
    let adapter = unsafe { ComPtr::from_owned(out) }?;
    from_adapter(&adapter)
}

/// Identifies an application's `IDXGIAdapter*`.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn identify_adapter(ptr: *mut c_void) -> Option<AdapterId> {
    // SAFETY: caller's contract.
    let adapter = unsafe { query_raw::<IDXGIAdapter>(ptr) }?;
    from_adapter(&adapter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dxcl_abi::interop::DXCL_BACKEND_KIND_VULKAN;
    use dxcl_abi::{E_NOINTERFACE, S_OK};

    fn info(backend: i32, flags: u32, uuid: u8) -> DXCL_ADAPTER_INFO {
        DXCL_ADAPTER_INFO {
            Backend: backend,
            Flags: flags,
            DeviceUuid: [uuid; 16],
            ..DXCL_ADAPTER_INFO::default()
        }
    }

    #[test]
    fn software_flag_pairs_with_cpu_devices() {
        let sw = DXCL_ADAPTER_FLAG_SOFTWARE as u32;
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_HOST, 0, 0)),
            AdapterId::Software
        );
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_HOST, sw, 0)),
            AdapterId::Software
        );
        // lavapipe: a Vulkan adapter that runs on the CPU.
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_VULKAN, sw, 7)),
            AdapterId::Software
        );
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_VULKAN, 0, 7)),
            AdapterId::Uuid([7; 16])
        );
    }

    #[test]
    fn foreign_adapters_by_flag_vendor_or_luid() {
        let luid = LUID {
            LowPart: 0x0403_0201,
            HighPart: 0x0807_0605,
        };
        assert_eq!(from_desc(0x10de, luid, true), AdapterId::Software);
        assert_eq!(
            from_desc(VENDOR_MICROSOFT, luid, false),
            AdapterId::Software
        );
        assert_eq!(
            from_desc(0x10de, luid, false),
            AdapterId::Luid([1, 2, 3, 4, 5, 6, 7, 8])
        );
        // DXVK on lavapipe: no software flag, Mesa's Vulkan vendor id.
        assert_eq!(from_desc(VENDOR_MESA, luid, false), AdapterId::Software);
    }

    /// A foreign DXGI adapter (DXVK-native's shape): `IDXGIAdapter1` whose `GetDesc`/`GetDesc1`
    /// write the 4-byte-`WCHAR` layout (`wide`) or the SDK's, and answers no other interface.
    #[repr(C)]
    struct FakeAdapter {
        vtbl: *const dxcl_abi::IDXGIAdapter1Vtbl,
        wide: bool,
        desc1: bool,
    }

    const FAKE_VENDOR: u32 = 0x10de;
    const FAKE_LUID: LUID = LUID {
        LowPart: 0x0403_0201,
        HighPart: 0x0807_0605,
    };

    unsafe extern "system" fn fake_qi(
        this: *mut dxcl_abi::IUnknown,
        riid: dxcl_abi::REFIID,
        out: *mut *mut c_void,
    ) -> HRESULT {
        // SAFETY: the caller passes valid pointers (COM contract); `this` is a FakeAdapter.
        unsafe {
            let fake = &*this.cast::<FakeAdapter>();
            let ok = *riid == dxcl_abi::IID_IUnknown
                || *riid == dxcl_abi::IID_IDXGIAdapter
                || (*riid == dxcl_abi::IID_IDXGIAdapter1 && fake.desc1);
            *out = if ok {
                this.cast()
            } else {
                std::ptr::null_mut()
            };
            if ok {
                S_OK
            } else {
                E_NOINTERFACE
            }
        }
    }
    unsafe extern "system" fn fake_ref(_: *mut dxcl_abi::IUnknown) -> u32 {
        1
    }
    fn wide_desc1() -> AdapterDesc1Wide {
        let mut d = AdapterDesc1Wide {
            Description: [0; 128],
            VendorId: FAKE_VENDOR,
            DeviceId: 0x2331,
            SubSysId: 0,
            Revision: 0,
            DedicatedVideoMemory: 1 << 30,
            DedicatedSystemMemory: 0,
            SharedSystemMemory: 1 << 30,
            AdapterLuid: FAKE_LUID,
            Flags: 0,
        };
        for (i, c) in "NVIDIA H100".chars().enumerate() {
            d.Description[i] = c as u32;
        }
        d
    }
    unsafe extern "system" fn fake_desc1(
        this: *mut dxcl_abi::IDXGIAdapter1,
        out: *mut DXGI_ADAPTER_DESC1,
    ) -> HRESULT {
        let w = wide_desc1();
        // SAFETY: `this` is a FakeAdapter; `out` is the caller's out struct, written in the
        // layout the fake was built with, exactly as a runtime of that WCHAR width does.
        unsafe {
            if (*this.cast::<FakeAdapter>()).wide {
                out.cast::<AdapterDesc1Wide>().write_unaligned(w);
            } else {
                let mut d = DXGI_ADAPTER_DESC1 {
                    VendorId: w.VendorId,
                    AdapterLuid: w.AdapterLuid,
                    ..DXGI_ADAPTER_DESC1::default()
                };
                d.Description[0] = 'N' as u16;
                out.write_unaligned(d);
            }
        }
        S_OK
    }
    unsafe extern "system" fn fake_desc(
        this: *mut dxcl_abi::IDXGIAdapter,
        out: *mut DXGI_ADAPTER_DESC,
    ) -> HRESULT {
        let w = wide_desc1();
        // SAFETY: as in fake_desc1.
        unsafe {
            if (*this.cast::<FakeAdapter>()).wide {
                out.cast::<AdapterDescWide>()
                    .write_unaligned(AdapterDescWide {
                        Description: w.Description,
                        VendorId: w.VendorId,
                        DeviceId: w.DeviceId,
                        SubSysId: 0,
                        Revision: 0,
                        DedicatedVideoMemory: w.DedicatedVideoMemory,
                        DedicatedSystemMemory: 0,
                        SharedSystemMemory: w.SharedSystemMemory,
                        AdapterLuid: w.AdapterLuid,
                    });
            } else {
                out.write_unaligned(DXGI_ADAPTER_DESC {
                    VendorId: w.VendorId,
                    AdapterLuid: w.AdapterLuid,
                    ..DXGI_ADAPTER_DESC::default()
                });
            }
        }
        S_OK
    }
    static FAKE_VTBL: dxcl_abi::IDXGIAdapter1Vtbl = dxcl_abi::IDXGIAdapter1Vtbl {
        base: dxcl_abi::IDXGIAdapterVtbl {
            base: dxcl_abi::IDXGIObjectVtbl {
                base: dxcl_abi::IUnknownVtbl {
                    QueryInterface: fake_qi,
                    AddRef: fake_ref,
                    Release: fake_ref,
                },
                ..dxcl_abi::IDXGIObjectVtbl::NOT_IMPLEMENTED
            },
            GetDesc: fake_desc,
            ..dxcl_abi::IDXGIAdapterVtbl::NOT_IMPLEMENTED
        },
        GetDesc1: fake_desc1,
    };

    fn identify_fake(wide: bool, desc1: bool) -> Option<AdapterId> {
        let mut fake = FakeAdapter {
            vtbl: &FAKE_VTBL,
            wide,
            desc1,
        };
        // SAFETY: a live COM object for the duration of the call (its counts are no-ops).
        unsafe { identify_adapter(std::ptr::addr_of_mut!(fake).cast()) }
    }

    /// Issue 12 (a): DXVK-native declares WCHAR as wchar_t, so its GetDesc1 writes 568 bytes
    /// where the SDK's DXGI_ADAPTER_DESC1 has 312; the layer handed it the SDK struct on its stack
    /// (release build: the overrun clobbered the frame and the layer called through null). The
    /// layer must give room for both layouts and read the fields from the one the runtime wrote.
    #[test]
    fn foreign_desc_with_four_byte_wchar() {
        let want = Some(AdapterId::Luid(luid_bytes(FAKE_LUID)));
        assert_eq!(identify_fake(true, true), want, "wide GetDesc1");
        assert_eq!(identify_fake(true, false), want, "wide GetDesc");
        assert_eq!(identify_fake(false, true), want, "SDK GetDesc1");
        assert_eq!(identify_fake(false, false), want, "SDK GetDesc");
    }

    /// `dxcl info`'s view of a foreign adapter: the description's text and ids from either
    /// layout, and which layout it was.
    #[test]
    fn facts_of_either_layout() {
        for (wide, desc1) in [(true, true), (true, false), (false, true), (false, false)] {
            let mut fake = FakeAdapter {
                vtbl: &FAKE_VTBL,
                wide,
                desc1,
            };
            // SAFETY: a live COM object for the duration of the call (its counts are no-ops).
            let f = unsafe { adapter_facts(std::ptr::addr_of_mut!(fake).cast()) }.unwrap();
            assert_eq!(f.wide_wchar, wide, "{wide} {desc1}");
            assert_eq!(f.vendor_id, FAKE_VENDOR);
            assert_eq!(f.luid, FAKE_LUID);
            assert_eq!(
                f.pairing,
                Some((
                    AdapterId::Luid(luid_bytes(FAKE_LUID)),
                    IdSource::DxgiDescription
                ))
            );
            if wide {
                assert_eq!(f.description, "NVIDIA H100");
                assert_eq!(f.device_id, 0x2331);
            } else {
                assert_eq!(f.description, if desc1 { "N" } else { "" });
            }
        }
    }

    #[test]
    fn desc_storage_fits_both_layouts() {
        assert_eq!(std::mem::size_of::<DXGI_ADAPTER_DESC1>(), 312);
        assert_eq!(std::mem::size_of::<AdapterDesc1Wide>(), 568);
        assert_eq!(std::mem::size_of::<DXGI_ADAPTER_DESC>(), 304);
        assert_eq!(std::mem::size_of::<AdapterDescWide>(), 560);
        assert!(std::mem::align_of::<DescStorage<DXGI_ADAPTER_DESC1, AdapterDesc1Wide>>() >= 8);
    }
}
