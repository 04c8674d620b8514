//! `ID3D11Multithread` / `ID3D10Multithread`: a Direct3D device's own lock, which the layer holds
//! around its Direct3D work when that work may run on a thread of the OpenCL platform (a staging
//! release's write-back on a foreign device), so that it never overlaps the application's calls.
//!
//! Both interfaces share one IID and one vtable (IUnknown, `Enter`, `Leave`,
//! `SetMultithreadProtected`, `GetMultithreadProtected`); D3D11 answers it on the immediate
//! context, D3D10 on the device. With protection on, every call of the device takes the lock, and
//! `Enter`/`Leave` make a sequence of calls one.

use dxcl_abi::{IUnknownVtbl, Interface, BOOL, GUID};

use super::com::ComPtr;

/// The interface (either version: the same IID and vtable).
#[repr(C)]
pub(crate) struct IMultithread {
    lp_vtbl: *const IMultithreadVtbl,
}

#[repr(C)]
#[allow(non_snake_case)] // The SDK's method names.
pub(crate) struct IMultithreadVtbl {
    base: IUnknownVtbl,
    Enter: unsafe extern "system" fn(*mut IMultithread),
    Leave: unsafe extern "system" fn(*mut IMultithread),
    SetMultithreadProtected: unsafe extern "system" fn(*mut IMultithread, BOOL) -> BOOL,
    GetMultithreadProtected: unsafe extern "system" fn(*mut IMultithread) -> BOOL,
}

impl Interface for IMultithread {
    /// `IID_ID3D11Multithread` = `IID_ID3D10Multithread` ({9b7e4e00-342c-4106-a19f-4f2704f689f0}).
    const IID: GUID = GUID::new(
        0x9b7e4e00,
        0x342c,
        0x4106,
        [0xa1, 0x9f, 0x4f, 0x27, 0x04, 0xf6, 0x89, 0xf0],
    );
    type Vtbl = IMultithreadVtbl;
}

/// A device's multithread lock, protection turned on.
#[derive(Clone)]
pub(crate) struct Multithread(ComPtr<IMultithread>);

impl Multithread {
    /// The lock of the device `owner` belongs to (the D3D11 immediate context, or the D3D10
    /// device), with protection turned on; `None` where the runtime has no such interface.
    pub fn of<T: Interface>(owner: &ComPtr<T>) -> Option<Multithread> {
        let m = owner.query::<IMultithread>()?;
        let p = m.as_ptr();
        // SAFETY: a live IMultithread (QueryInterface answered its IID, whose vtable this is).
        unsafe { ((*(*p).lp_vtbl).SetMultithreadProtected)(p, 1) };
        Some(Multithread(m))
    }

    pub fn enter(&self) {
        let p = self.0.as_ptr();
        // SAFETY: a live IMultithread; Enter is balanced by `leave`.
        unsafe { ((*(*p).lp_vtbl).Enter)(p) };
    }

    pub fn leave(&self) {
        let p = self.0.as_ptr();
        // SAFETY: a live IMultithread, entered by this thread.
        unsafe { ((*(*p).lp_vtbl).Leave)(p) };
    }
}
