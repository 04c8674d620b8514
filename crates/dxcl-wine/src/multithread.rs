//! The stand-in of a Direct3D device's own lock, `ID3D11Multithread` (on a D3D11 immediate
//! context) and `ID3D10Multithread` (on a D3D10 device): one IID, one vtable (IUnknown, `Enter`,
//! `Leave`, `SetMultithreadProtected`, `GetMultithreadProtected`). Hand-written: it is not in
//! dxcl-gen's interface description (`crates/dxcl-abi/api`), and `Enter`/`Leave` cannot be remoted.
//!
//! The layer turns protection on for a foreign device because a staging release writes back from a
//! platform thread while the program may be in the device itself. Under DXVK that matters: its
//! immediate context is not thread-safe unless protected, and two threads inside it at once corrupt
//! its command stream (wined3d takes its own lock in every call either way). So
//! `SetMultithreadProtected` and `GetMultithreadProtected` run on the Windows object, and each of
//! the device's calls is then made under its lock. `Enter` and `Leave` are not made: the lock is
//! the calling thread's, and the layer's next calls may run on another of the bridge's server
//! threads, which would wait for it forever. The layer's own device lock still orders its sequences
//! among its threads; against the program's calls each call is atomic, which is what the device's
//! consistency needs (the layer's staging copies are objects the program never touches).

use std::ffi::c_void;

use dxcl_abi::{IUnknownVtbl, BOOL, GUID};

use crate::remote::{add_ref, call, query_interface, release, Kind};

/// `IID_ID3D11Multithread` = `IID_ID3D10Multithread`.
pub const IID_MULTITHREAD: GUID = GUID::new(
    0x9b7e4e00,
    0x342c,
    0x4106,
    [0xa1, 0x9f, 0x4f, 0x27, 0x04, 0xf6, 0x89, 0xf0],
);

/// The interface's vtable (the SDK's order).
#[repr(C)]
pub struct MultithreadVtbl {
    base: IUnknownVtbl,
    enter: unsafe extern "system" fn(*mut c_void),
    leave: unsafe extern "system" fn(*mut c_void),
    set_multithread_protected: unsafe extern "system" fn(*mut c_void, BOOL) -> BOOL,
    get_multithread_protected: unsafe extern "system" fn(*mut c_void) -> BOOL,
}

/// The stand-ins' table.
pub static MULTITHREAD_REMOTE: MultithreadVtbl = MultithreadVtbl {
    base: IUnknownVtbl {
        QueryInterface: query_interface,
        AddRef: add_ref,
        Release: release,
    },
    enter,
    leave,
    set_multithread_protected,
    get_multithread_protected,
};

/// `Enter`, slot 3: not made (see the module's comment).
unsafe extern "system" fn enter(_this: *mut c_void) {}

/// `Leave`, slot 4: not made, as `Enter`.
unsafe extern "system" fn leave(_this: *mut c_void) {}

/// `SetMultithreadProtected`, slot 5.
unsafe extern "system" fn set_multithread_protected(this: *mut c_void, on: BOOL) -> BOOL {
    // SAFETY: `this` is a stand-in of this table; the method takes one BOOL.
    (unsafe { call(this, 5, &[on as u32 as u64], &[Kind::Value]) }) as BOOL
}

/// `GetMultithreadProtected`, slot 6.
unsafe extern "system" fn get_multithread_protected(this: *mut c_void) -> BOOL {
    // SAFETY: `this` is a stand-in of this table; the method takes no argument.
    (unsafe { call(this, 6, &[], &[]) }) as BOOL
}

/// The stand-in table of `iid`: the generated ones, and this one.
pub fn remote_vtable(iid: &GUID) -> Option<*const c_void> {
    crate::gen_stand_ins::remote_vtable(iid).or_else(|| {
        (*iid == IID_MULTITHREAD).then(|| std::ptr::from_ref(&MULTITHREAD_REMOTE).cast())
    })
}
