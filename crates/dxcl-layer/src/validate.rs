//! `DXCL_VALIDATE=1` in the layer (docs/validation.md).
//!
//! With dxcl's runtime, the layer tells it what OpenCL does with each shared subresource
//! ([`AccessMark`]) and which device references it holds ([`DeviceMark`]); the runtime reports
//! Direct3D calls on acquired subresources and the application's last releases. The layer itself
//! reports what it alone sees, for any Direct3D runtime: a context released with objects still
//! acquired, and (foreign runtimes) a resource whose last reference turns out to be OpenCL's.
//! Off, each hook costs one cached check ([`on`]).

use std::collections::HashSet;
use std::ffi::CStr;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use dxcl_abi::interop::{
    IDxclInteropDevice, IDxclInteropResource, DXCL_OPENCL_ACCESS, DXCL_OPENCL_ACCESS_NONE,
    DXCL_OPENCL_ACCESS_SHARED,
};
use dxcl_abi::SUCCEEDED;

use crate::core::tokens::{D3dVersion, Ext, ResourceKind};
use crate::d3d::com::ComPtr;

/// 0: not read yet; 1: off; 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether `DXCL_VALIDATE=1`, read once per process.
#[inline]
pub(crate) fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => read_env(),
    }
}

#[cold]
fn read_env() -> bool {
    let on = std::env::var_os("DXCL_VALIDATE").is_some_and(|v| v == "1");
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    on
}

/// What the layer reports, each at most once per OpenCL object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A context's last release while one of its memory objects was acquired.
    ContextReleasedWhileAcquired,
    /// A foreign resource whose last reference was OpenCL's when its memory object went.
    ReleasedWhileShared,
}

/// True the first time (`handle`, `kind`) is asked for.
pub(crate) fn first(handle: usize, kind: Kind) -> bool {
    static SEEN: Mutex<Option<HashSet<(usize, Kind)>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    seen.get_or_insert_with(HashSet::new).insert((handle, kind))
}

/// Writes one report line: `dxcl validation: <text>`, in one write.
pub(crate) fn report(text: &str) {
    let line = format!("dxcl validation: {text}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// How a report names a resource (any Direct3D runtime): `"name" (0x…)` from its
/// `WKPDID_D3DDebugObjectName` private data, else `0x…` (the application's pointer).
pub(crate) fn resource_name(version: D3dVersion, app_pointer: usize, resource: &ComPtr) -> String {
    let mut bytes = [0u8; 256];
    let mut size = bytes.len() as u32;
    let guid = dxcl_abi::WKPDID_D3DDebugObjectName;
    macro_rules! get_on {
        ($child:ty) => {
            match resource.query::<$child>() {
                Some(child) => {
                    let p = child.as_ptr();
                    // SAFETY: a live device child; `size` is the capacity of `bytes`.
                    unsafe {
                        ((*(*p).lpVtbl).GetPrivateData)(
                            p,
                            &guid,
                            &mut size,
                            bytes.as_mut_ptr().cast(),
                        )
                    }
                }
                None => dxcl_abi::E_NOINTERFACE,
            }
        };
    }
    let hr = match version {
        D3dVersion::D3D11 => get_on!(dxcl_abi::ID3D11DeviceChild),
        D3dVersion::D3D10 => get_on!(dxcl_abi::ID3D10DeviceChild),
    };
    if SUCCEEDED(hr) && size as usize <= bytes.len() {
        let named = &bytes[..size as usize];
        let end = named.iter().position(|&b| b == 0).unwrap_or(named.len());
        format!(
            "\"{}\" ({app_pointer:#x})",
            String::from_utf8_lossy(&named[..end])
        )
    } else {
        format!("{app_pointer:#x}")
    }
}

/// One memory object's subresource as dxcl's runtime knows it (`SetOpenCLAccess`): SHARED from
/// creation, ACQUIRED between acquire and release, NONE when dropped, which must happen before
/// the layer's reference to the resource goes.
pub(crate) struct AccessMark {
    /// Borrowed: the memory object's entry holds the counted reference, and drops this first.
    interop: ComPtr<IDxclInteropResource>,
    subresource: u32,
}

impl AccessMark {
    /// Marks `subresource` SHARED, when validating and the resource is dxcl's; `created_by` is
    /// the create call.
    pub(crate) fn new(resource: &ComPtr, subresource: u32, created_by: &CStr) -> Option<Self> {
        if !on() {
            return None;
        }
        let counted = resource.query::<IDxclInteropResource>()?;
        // SAFETY: the caller keeps a counted reference to the resource for as long as the mark
        // lives (the memory object's entry, which drops the mark first).
        let interop = unsafe { counted.into_borrowed() };
        let mark = AccessMark {
            interop,
            subresource,
        };
        mark.set(DXCL_OPENCL_ACCESS_SHARED, created_by);
        Some(mark)
    }

    pub(crate) fn set(&self, access: DXCL_OPENCL_ACCESS, call: &CStr) {
        let p = self.interop.as_ptr();
        // SAFETY: a live IDxclInteropResource (see `interop`); `call` is NUL-terminated and the
        // runtime copies it.
        unsafe { ((*(*p).lpVtbl).SetOpenCLAccess)(p, self.subresource, access, call.as_ptr()) };
    }
}

impl Drop for AccessMark {
    fn drop(&mut self) {
        self.set(DXCL_OPENCL_ACCESS_NONE, c"clReleaseMemObject");
    }
}

/// One counted device reference the layer holds for OpenCL, as dxcl's runtime knows it
/// (`SetOpenCLReference`). Dropped just before that reference.
pub(crate) struct DeviceMark {
    /// Borrowed: the owner holds the counted reference and drops this first.
    interop: ComPtr<IDxclInteropDevice>,
}

impl DeviceMark {
    /// When validating and the device is dxcl's.
    pub(crate) fn new<T: dxcl_abi::Interface>(device: &ComPtr<T>) -> Option<Self> {
        if !on() {
            return None;
        }
        let counted = device.query::<IDxclInteropDevice>()?;
        // SAFETY: the caller keeps its counted reference to the device while the mark lives.
        let interop = unsafe { counted.into_borrowed() };
        let p = interop.as_ptr();
        // SAFETY: a live IDxclInteropDevice.
        unsafe { ((*(*p).lpVtbl).SetOpenCLReference)(p, 1) };
        Some(DeviceMark { interop })
    }
}

impl Drop for DeviceMark {
    fn drop(&mut self) {
        let p = self.interop.as_ptr();
        // SAFETY: a live IDxclInteropDevice (see `interop`).
        unsafe { ((*(*p).lpVtbl).SetOpenCLReference)(p, 0) };
    }
}

/// A memory object's entry goes (validation on); its strategy and mark went already, and
/// `resource` is its reference, released here. For a foreign Direct3D runtime, whose releases the
/// layer cannot see, a last reference that turns out to be OpenCL's is reported: the application
/// released the resource while the memory object lived. (dxcl's runtime reports that itself, when
/// it happens.)
pub(crate) fn resource_released(
    mem: usize,
    version: D3dVersion,
    kind: ResourceKind,
    app_resource: usize,
    resource: ComPtr,
) {
    if let Some(text) = released_by_the_application(mem, version, kind, app_resource, resource) {
        report(&text);
    }
}

/// [`resource_released`]'s report, if any (once per memory object).
fn released_by_the_application(
    mem: usize,
    version: D3dVersion,
    kind: ResourceKind,
    app_resource: usize,
    resource: ComPtr,
) -> Option<String> {
    let foreign = resource.query::<IDxclInteropResource>().is_none();
    let name = foreign.then(|| resource_name(version, app_resource, &resource));
    let left = resource.release_now();
    let name = name.filter(|_| left == Some(0) && first(mem, Kind::ReleasedWhileShared))?;
    Some(format!(
        "destruction of OpenCL memory object {mem:#x} drops the last reference to {} {name}: \
         the application released its own while the memory object lived (seen only now: the \
         Direct3D runtime is not dxcl's)",
        kind.interface_name(version),
    ))
}

/// A memory object still acquired at its context's last release.
pub(crate) struct StillAcquired {
    pub mem: usize,
    pub ext: Ext,
    pub kind: ResourceKind,
    pub subresource: u32,
    pub app_resource: usize,
    pub resource: ComPtr,
}

/// The application's last `clReleaseContext` (validation on): reports each memory object of the
/// context still acquired, which the application can no longer release (the specs require a
/// release before Direct3D uses the resource again).
pub(crate) fn context_released(context: usize, acquired: Vec<StillAcquired>) {
    for a in acquired {
        if !first(a.mem, Kind::ContextReleasedWhileAcquired) {
            continue;
        }
        report(&format!(
            "clReleaseContext on context {context:#x} drops its last reference while OpenCL memory \
             object {:#x} ({} {}, subresource {}) is still acquired ({}, no {})",
            a.mem,
            a.kind.interface_name(a.ext.version),
            resource_name(a.ext.version, a.app_resource, &a.resource),
            a.subresource,
            a.ext.acquire_call().to_string_lossy(),
            a.ext.release_call().to_string_lossy(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dxcl_abi::{
        ID3D11DeviceChild, ID3D11DeviceChildVtbl, IUnknown, IUnknownVtbl, E_NOINTERFACE, GUID,
        HRESULT, S_OK,
    };
    use std::ffi::c_void;
    use std::sync::atomic::AtomicU32;

    /// A foreign Direct3D 11 resource: answers only `IUnknown` and `ID3D11DeviceChild`, counts
    /// its references, and is named "foreign" by `WKPDID_D3DDebugObjectName`.
    #[repr(C)]
    struct Foreign {
        vtbl: *const ID3D11DeviceChildVtbl,
        refs: AtomicU32,
    }

    unsafe extern "system" fn query(
        this: *mut IUnknown,
        iid: *const GUID,
        out: *mut *mut c_void,
    ) -> HRESULT {
        // SAFETY: COM contract: valid pointers.
        let d1 = unsafe { (*iid).Data1 };
        let ours = [
            dxcl_abi::IID_IUnknown.Data1,
            dxcl_abi::IID_ID3D11DeviceChild.Data1,
        ];
        if !ours.contains(&d1) {
            // SAFETY: as above.
            unsafe { *out = std::ptr::null_mut() };
            return E_NOINTERFACE;
        }
        // SAFETY: `this` is a live Foreign; `out` is writable.
        unsafe {
            add_ref(this);
            *out = this.cast();
        }
        S_OK
    }

    unsafe extern "system" fn add_ref(this: *mut IUnknown) -> u32 {
        // SAFETY: `this` is a live Foreign (leaked by the test).
        unsafe { &*this.cast::<Foreign>() }
            .refs
            .fetch_add(1, Ordering::SeqCst)
            + 1
    }

    unsafe extern "system" fn release(this: *mut IUnknown) -> u32 {
        // SAFETY: as above.
        unsafe { &*this.cast::<Foreign>() }
            .refs
            .fetch_sub(1, Ordering::SeqCst)
            - 1
    }

    unsafe extern "system" fn private_data(
        _: *mut ID3D11DeviceChild,
        _: *const GUID,
        size: *mut u32,
        data: *mut c_void,
    ) -> HRESULT {
        let name = b"foreign";
        // SAFETY: `size` is writable and `data` holds `*size` bytes (the caller's buffer).
        unsafe {
            assert!(*size as usize >= name.len());
            std::ptr::copy_nonoverlapping(name.as_ptr(), data.cast(), name.len());
            *size = name.len() as u32;
        }
        S_OK
    }

    static VTBL: ID3D11DeviceChildVtbl = ID3D11DeviceChildVtbl {
        base: IUnknownVtbl {
            QueryInterface: query,
            AddRef: add_ref,
            Release: release,
        },
        GetPrivateData: private_data,
        ..ID3D11DeviceChildVtbl::NOT_IMPLEMENTED
    };

    /// The layer's counted reference to a new foreign resource the application holds `app`
    /// references to.
    fn foreign(app: u32) -> (ComPtr, usize) {
        let obj: &'static Foreign = Box::leak(Box::new(Foreign {
            vtbl: &VTBL,
            refs: AtomicU32::new(app + 1),
        }));
        let p = obj as *const Foreign as *mut IUnknown;
        // SAFETY: a live object (leaked) on which the caller owns the layer's reference.
        (unsafe { ComPtr::from_owned(p) }.unwrap(), p as usize)
    }

    #[test]
    fn a_foreign_resource_whose_last_reference_was_opencls_is_reported_once() {
        let (resource, p) = foreign(0);
        let text = released_by_the_application(
            0x5_0000,
            D3dVersion::D3D11,
            ResourceKind::Buffer,
            p,
            resource,
        )
        .expect("the application had released it");
        assert_eq!(
            text,
            format!(
                "destruction of OpenCL memory object 0x50000 drops the last reference to \
                 ID3D11Buffer \"foreign\" ({p:#x}): the application released its own while the \
                 memory object lived (seen only now: the Direct3D runtime is not dxcl's)"
            )
        );
        // The same memory object handle again (a second report of it): nothing.
        let (resource, p) = foreign(0);
        assert!(released_by_the_application(
            0x5_0000,
            D3dVersion::D3D11,
            ResourceKind::Buffer,
            p,
            resource
        )
        .is_none());
    }

    #[test]
    fn a_foreign_resource_the_application_still_holds_is_not_reported() {
        let (resource, p) = foreign(1);
        assert!(released_by_the_application(
            0x5_0001,
            D3dVersion::D3D11,
            ResourceKind::Texture2D,
            p,
            resource
        )
        .is_none());
    }
}
