//! DXGI factories and adapters.
//!
//! Adapters: one per qualifying Vulkan device (the Vulkan backend), then the software adapter
//! (host backend). `DXCL_ADAPTER` chooses which of them DXGI enumerates and devices land on:
//! unset: Vulkan adapters first, then the software adapter; `software`: only the software
//! adapter; `vulkan`: only the Vulkan adapters; any other value names an adapter this build does
//! not have, so enumeration is empty and device creation fails with `DXGI_ERROR_UNSUPPORTED`.

use std::mem::offset_of;
use std::ptr;
use std::sync::{Arc, OnceLock};

use super::abi::*;
use super::guard::guard;
use super::object::*;
use super::private_data::*;
use super::{clear_out, iid_in};
use crate::backend::host::HostBackend;
use crate::backend::vulkan::{self, Options};
use crate::backend::{Backend, BackendKind};

/// The Vulkan adapters, opened once per process.
fn vulkan_adapters() -> Vec<Arc<dyn Backend>> {
    vulkan::enumerate(Options::default())
        .into_iter()
        .map(|b| Arc::new(b) as Arc<dyn Backend>)
        .collect()
}

/// The adapters of this process, in enumeration order (built once).
pub fn adapters() -> &'static [Arc<dyn Backend>] {
    static ADAPTERS: OnceLock<Vec<Arc<dyn Backend>>> = OnceLock::new();
    ADAPTERS.get_or_init(|| match std::env::var("DXCL_ADAPTER") {
        Err(_) => {
            let mut all = vulkan_adapters();
            all.push(Arc::new(HostBackend::new()));
            all
        }
        Ok(v) if v.eq_ignore_ascii_case("software") => vec![Arc::new(HostBackend::new())],
        Ok(v) if v.eq_ignore_ascii_case("vulkan") => vulkan_adapters(),
        Ok(_) => Vec::new(),
    })
}

/// The adapter a device created without one lands on: the first enumerated adapter of the
/// preferred kind (Vulkan for hardware driver types, the software adapter for WARP, REFERENCE and
/// SOFTWARE), else the first enumerated adapter (`DXCL_ADAPTER` left only the other kind).
pub fn default_adapter(prefer: BackendKind) -> Option<&'static Arc<dyn Backend>> {
    let all = adapters();
    all.iter()
        .find(|b| b.adapter().backend == prefer)
        .or_else(|| all.first())
}

// ---------------------------------------------------------------------------------------------
// Factory

/// An `IDXGIFactory1`.
#[repr(C)]
pub struct Factory {
    dxgi: *const IDXGIFactory1Vtbl,
    refs: RefCounts,
    private: PrivateData,
}

// SAFETY: the vtable pointer refers to an immutable static; the rest is Send + Sync.
unsafe impl Send for Factory {}
// SAFETY: as above.
unsafe impl Sync for Factory {}

const FACTORY_FACE: usize = offset_of!(Factory, dxgi);

// SAFETY: `dxgi` is the only face; `face_for` returns its offset only.
unsafe impl ComObject for Factory {
    const KIND: ObjectKind = ObjectKind::Factory;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[FACTORY_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        iid_in(
            riid,
            &[
                IID_IUnknown,
                IID_IDXGIObject,
                IID_IDXGIFactory,
                IID_IDXGIFactory1,
            ],
        )
        .then_some(FACTORY_FACE)
    }
}

impl Factory {
    /// A new factory with one public reference.
    pub fn create() -> *mut Factory {
        into_raw(Factory {
            dxgi: &FACTORY_VTBL,
            refs: RefCounts::new_public(),
            private: PrivateData::default(),
        })
    }
}

type F = Factory;
const FO: usize = FACTORY_FACE;

static FACTORY_VTBL: IDXGIFactory1Vtbl = IDXGIFactory1Vtbl {
    base: IDXGIFactoryVtbl {
        base: IDXGIObjectVtbl {
            base: unknown_vtbl::<F, FO>(),
            SetPrivateData: set_private_data::<F, IDXGIObject, FO>,
            SetPrivateDataInterface: set_private_data_interface::<F, IDXGIObject, FO>,
            GetPrivateData: get_private_data::<F, IDXGIObject, FO>,
            GetParent: factory_get_parent,
        },
        EnumAdapters: factory_enum_adapters,
        MakeWindowAssociation: factory_make_window_association,
        GetWindowAssociation: factory_get_window_association,
        CreateSwapChain: factory_create_swap_chain,
        ..IDXGIFactoryVtbl::NOT_IMPLEMENTED
    },
    EnumAdapters1: factory_enum_adapters1,
    IsCurrent: factory_is_current,
};

unsafe extern "system" fn factory_get_parent(
    _this: *mut IDXGIObject,
    _riid: *const GUID,
    parent: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: null or writable.
        unsafe { clear_out(parent) };
        // A factory is the root of the DXGI hierarchy: it has no parent object.
        E_NOINTERFACE
    })
}

/// Shared by EnumAdapters and EnumAdapters1.
///
/// # Safety
/// `this` is a live factory's face; `out` is null or writable.
unsafe fn enum_adapters<I>(this: *mut I, index: u32, out: *mut *mut c_void) -> HRESULT {
    if out.is_null() {
        // IDXGIFactory::EnumAdapters: "DXGI_ERROR_INVALID_CALL if ppAdapter is NULL".
        return DXGI_ERROR_INVALID_CALL;
    }
    // SAFETY: non-null and writable (contract).
    unsafe { *out = ptr::null_mut() };
    let Some(backend) = adapters().get(index as usize) else {
        // IDXGIFactory::EnumAdapters: "DXGI_ERROR_NOT_FOUND if the index is greater than or equal
        // to the number of adapters".
        return DXGI_ERROR_NOT_FOUND;
    };
    // SAFETY: `this` is the factory's face (contract).
    let factory = unsafe { object::<Factory, I>(this, FO) };
    let adapter = Adapter::create(backend.clone(), PrivateRef::new(factory));
    // SAFETY: as above; the new adapter's public reference goes to the caller.
    unsafe { *out = face::<Adapter, c_void>(adapter, ADAPTER_FACE) };
    S_OK
}

unsafe extern "system" fn factory_enum_adapters(
    this: *mut IDXGIFactory,
    index: u32,
    out: *mut *mut IDXGIAdapter,
) -> HRESULT {
    // SAFETY: COM contract.
    guard(E_FAIL, || unsafe { enum_adapters(this, index, out.cast()) })
}

unsafe extern "system" fn factory_enum_adapters1(
    this: *mut IDXGIFactory1,
    index: u32,
    out: *mut *mut IDXGIAdapter1,
) -> HRESULT {
    // SAFETY: COM contract.
    guard(E_FAIL, || unsafe { enum_adapters(this, index, out.cast()) })
}

unsafe extern "system" fn factory_make_window_association(
    _this: *mut IDXGIFactory,
    _window: HWND,
    _flags: u32,
) -> HRESULT {
    // There are no windows to watch on a headless runtime; the association is accepted and has no
    // effect (nothing to alt-enter into).
    S_OK
}

unsafe extern "system" fn factory_get_window_association(
    _this: *mut IDXGIFactory,
    window: *mut HWND,
) -> HRESULT {
    guard(E_FAIL, || {
        if window.is_null() {
            // IDXGIFactory::GetWindowAssociation: "DXGI_ERROR_INVALID_CALL if pWindowHandle is NULL".
            return DXGI_ERROR_INVALID_CALL;
        }
        // SAFETY: non-null and writable (COM contract). No window was associated.
        unsafe { *window = ptr::null_mut() };
        S_OK
    })
}

unsafe extern "system" fn factory_create_swap_chain(
    _this: *mut IDXGIFactory,
    _device: *mut IUnknown,
    _desc: *mut DXGI_SWAP_CHAIN_DESC,
    swapchain: *mut *mut IDXGISwapChain,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: null or writable.
        unsafe { clear_out(swapchain) };
        // Headless runtime: no output can present, so swap chains are unsupported.
        DXGI_ERROR_UNSUPPORTED
    })
}

unsafe extern "system" fn factory_is_current(_this: *mut IDXGIFactory1) -> BOOL {
    // The adapter set never changes during a process.
    1
}

// ---------------------------------------------------------------------------------------------
// Adapter

/// An `IDXGIAdapter1` over one backend.
#[repr(C)]
pub struct Adapter {
    dxgi: *const IDXGIAdapter1Vtbl,
    refs: RefCounts,
    private: PrivateData,
    pub backend: Arc<dyn Backend>,
    factory: PrivateRef<Factory>,
}

// SAFETY: the vtable pointer refers to an immutable static; the rest is Send + Sync.
unsafe impl Send for Adapter {}
// SAFETY: as above.
unsafe impl Sync for Adapter {}

pub const ADAPTER_FACE: usize = offset_of!(Adapter, dxgi);

// SAFETY: `dxgi` is the only face; `face_for` returns its offset only.
unsafe impl ComObject for Adapter {
    const KIND: ObjectKind = ObjectKind::Adapter;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[ADAPTER_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        iid_in(
            riid,
            &[
                IID_IUnknown,
                IID_IDXGIObject,
                IID_IDXGIAdapter,
                IID_IDXGIAdapter1,
            ],
        )
        .then_some(ADAPTER_FACE)
    }
}

impl Adapter {
    /// A new adapter with one public reference.
    pub fn create(backend: Arc<dyn Backend>, factory: PrivateRef<Factory>) -> *mut Adapter {
        into_raw(Adapter {
            dxgi: &ADAPTER_VTBL,
            refs: RefCounts::new_public(),
            private: PrivateData::default(),
            backend,
            factory,
        })
    }

    /// An adapter for a device created without one (its own new factory as parent), or `None`
    /// when `DXCL_ADAPTER` leaves no adapter. See [`default_adapter`].
    pub fn create_default(prefer: BackendKind) -> Option<*mut Adapter> {
        let backend = default_adapter(prefer)?.clone();
        let factory = Factory::create();
        // SAFETY: just created; the private reference replaces the creation's public one.
        let parent = PrivateRef::new(unsafe { &*factory });
        // SAFETY: we own the public reference from `create`.
        unsafe { release(factory) };
        Some(Adapter::create(backend, parent))
    }

    fn fill_desc(&self, d: &mut DXGI_ADAPTER_DESC1) {
        let a = self.backend.adapter();
        d.Description = [0; 128];
        for (slot, unit) in d
            .Description
            .iter_mut()
            .take(127)
            .zip(a.description.encode_utf16())
        {
            *slot = unit as _;
        }
        d.VendorId = a.vendor_id;
        d.DeviceId = a.device_id;
        d.SubSysId = a.sub_sys_id;
        d.Revision = a.revision;
        d.DedicatedVideoMemory = a.dedicated_video_memory as usize;
        d.DedicatedSystemMemory = a.dedicated_system_memory as usize;
        d.SharedSystemMemory = a.shared_system_memory as usize;
        d.AdapterLuid = LUID {
            LowPart: a.luid.0,
            HighPart: a.luid.1,
        };
        d.Flags = if a.software {
            DXGI_ADAPTER_FLAG_SOFTWARE as u32
        } else {
            0
        };
    }
}

type A = Adapter;
const AO: usize = ADAPTER_FACE;

static ADAPTER_VTBL: IDXGIAdapter1Vtbl = IDXGIAdapter1Vtbl {
    base: IDXGIAdapterVtbl {
        base: IDXGIObjectVtbl {
            base: unknown_vtbl::<A, AO>(),
            SetPrivateData: set_private_data::<A, IDXGIObject, AO>,
            SetPrivateDataInterface: set_private_data_interface::<A, IDXGIObject, AO>,
            GetPrivateData: get_private_data::<A, IDXGIObject, AO>,
            GetParent: adapter_get_parent,
        },
        EnumOutputs: adapter_enum_outputs,
        GetDesc: adapter_get_desc,
        CheckInterfaceSupport: adapter_check_interface_support,
    },
    GetDesc1: adapter_get_desc1,
};

unsafe extern "system" fn adapter_get_parent(
    this: *mut IDXGIObject,
    riid: *const GUID,
    parent: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: `this` is the adapter's face (COM contract).
        let adapter = unsafe { object::<Adapter, _>(this, AO) };
        // SAFETY: COM contract for riid/parent; the factory is alive (private reference).
        unsafe { query_interface(&*adapter.factory, riid, parent) }
    })
}

unsafe extern "system" fn adapter_enum_outputs(
    _this: *mut IDXGIAdapter,
    _index: u32,
    output: *mut *mut IDXGIOutput,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: null or writable.
        unsafe { clear_out(output) };
        // IDXGIAdapter::EnumOutputs: "DXGI_ERROR_NOT_FOUND if the index is greater than the number
        // of outputs" — a headless adapter has none.
        DXGI_ERROR_NOT_FOUND
    })
}

unsafe extern "system" fn adapter_get_desc(
    this: *mut IDXGIAdapter,
    desc: *mut DXGI_ADAPTER_DESC,
) -> HRESULT {
    guard(E_FAIL, || {
        if desc.is_null() {
            // IDXGIAdapter::GetDesc: "E_INVALIDARG if pDesc is NULL".
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let adapter = unsafe { object::<Adapter, _>(this, AO) };
        // SAFETY: DXGI_ADAPTER_DESC1 is zeroable plain data.
        let mut d1: DXGI_ADAPTER_DESC1 = unsafe { std::mem::zeroed() };
        adapter.fill_desc(&mut d1);
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *desc = DXGI_ADAPTER_DESC {
                Description: d1.Description,
                VendorId: d1.VendorId,
                DeviceId: d1.DeviceId,
                SubSysId: d1.SubSysId,
                Revision: d1.Revision,
                DedicatedVideoMemory: d1.DedicatedVideoMemory,
                DedicatedSystemMemory: d1.DedicatedSystemMemory,
                SharedSystemMemory: d1.SharedSystemMemory,
                AdapterLuid: d1.AdapterLuid,
            }
        };
        S_OK
    })
}

unsafe extern "system" fn adapter_get_desc1(
    this: *mut IDXGIAdapter1,
    desc: *mut DXGI_ADAPTER_DESC1,
) -> HRESULT {
    guard(E_FAIL, || {
        if desc.is_null() {
            // IDXGIAdapter1::GetDesc1: "E_INVALIDARG if pDesc is NULL".
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let adapter = unsafe { object::<Adapter, _>(this, AO) };
        // SAFETY: non-null and writable (COM contract); zeroed first so every byte is defined.
        unsafe {
            *desc = std::mem::zeroed();
            adapter.fill_desc(&mut *desc);
        }
        S_OK
    })
}

unsafe extern "system" fn adapter_check_interface_support(
    _this: *mut IDXGIAdapter,
    guid: *const GUID,
    umd_version: *mut LARGE_INTEGER,
) -> HRESULT {
    guard(E_FAIL, || {
        if guid.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: non-null (COM contract).
        let g = unsafe { *guid };
        // IDXGIAdapter::CheckInterfaceSupport answers for Direct3D 10 device interfaces only;
        // "DXGI_ERROR_UNSUPPORTED" for everything else, including ID3D11Device.
        if !iid_in(&g, &[IID_ID3D10Device, IID_ID3D10Device1]) {
            return DXGI_ERROR_UNSUPPORTED;
        }
        if !umd_version.is_null() {
            // SAFETY: non-null and writable (COM contract). The runtime's version as 0.1.0.0.
            unsafe { (*umd_version).QuadPart = 0x0000_0001_0000_0000 };
        }
        S_OK
    })
}
