//! An owned COM reference and the three IUnknown calls.

use std::ffi::c_void;

use super::sys::{method, IID_IUnknown, ADD_REF, GUID, HRESULT, QUERY_INTERFACE, RELEASE};

type QueryInterfaceFn =
    unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT;
type RefFn = unsafe extern "system" fn(*mut c_void) -> u32;

/// A reference to a COM object: counted (released on drop) or borrowed (valid while another
/// counted reference to the same object lives; see [`ComPtr::into_borrowed`]).
pub(crate) struct ComPtr(*mut c_void, Counted);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Counted {
    Yes,
    No,
}

// SAFETY: Direct3D 10/11 devices and resources are free-threaded COM objects (D3D11 devices and
// resources may be used from any thread; the layer serialises immediate-context use per call), so
// a reference may move between and be shared by threads.
unsafe impl Send for ComPtr {}
// SAFETY: see Send.
unsafe impl Sync for ComPtr {}

impl ComPtr {
    /// Takes ownership of one reference the caller already holds.
    ///
    /// # Safety
    /// `ptr` is null or a live COM object with a reference the caller transfers.
    pub unsafe fn from_owned(ptr: *mut c_void) -> Option<ComPtr> {
        (!ptr.is_null()).then_some(ComPtr(ptr, Counted::Yes))
    }

    pub fn as_ptr(&self) -> *mut c_void {
        self.0
    }

    /// Gives the reference back and keeps the pointer, for a second view of an object whose
    /// lifetime another counted reference guarantees: the specs let a `cl_mem` add exactly one
    /// reference to its resource ("This call will increment the internal Direct3D reference count
    /// on resource"), so the interop interface and the staging copy borrow that one.
    ///
    /// # Safety
    /// The caller keeps a counted reference to the same object for as long as the result is used.
    pub unsafe fn into_borrowed(self) -> ComPtr {
        let this = std::mem::ManuallyDrop::new(self);
        if this.1 == Counted::Yes {
            // SAFETY: slot 2 is Release; we give back the reference we owned.
            unsafe { method::<RefFn>(this.0, RELEASE)(this.0) };
        }
        ComPtr(this.0, Counted::No)
    }

    /// `QueryInterface`: a new reference to the interface, or `None` (E_NOINTERFACE or any error).
    pub fn query(&self, iid: &GUID) -> Option<ComPtr> {
        // SAFETY: self holds a live COM object.
        unsafe { query_raw(self.0, iid) }
    }

    /// The object's identity: the `IUnknown` pointer COM guarantees to be the same for every
    /// interface of one object.
    pub fn identity(&self) -> usize {
        self.query(&IID_IUnknown)
            .map_or(self.0 as usize, |u| u.as_ptr() as usize)
    }
}

/// `QueryInterface` on a raw pointer the application handed us.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn query_raw(ptr: *mut c_void, iid: &GUID) -> Option<ComPtr> {
    if ptr.is_null() {
        return None;
    }
    let mut out = std::ptr::null_mut();
    // SAFETY: slot 0 of every COM vtable is QueryInterface with this signature.
    let hr = unsafe { method::<QueryInterfaceFn>(ptr, QUERY_INTERFACE)(ptr, iid, &mut out) };
    if hr >= 0 {
        // SAFETY: on success QueryInterface returned an AddRef'd pointer we now own.
        unsafe { ComPtr::from_owned(out) }
    } else {
        None
    }
}

impl Clone for ComPtr {
    fn clone(&self) -> Self {
        if self.1 == Counted::Yes {
            // SAFETY: slot 1 of every COM vtable is AddRef; the object is live.
            unsafe { method::<RefFn>(self.0, ADD_REF)(self.0) };
        }
        ComPtr(self.0, self.1)
    }
}

impl Drop for ComPtr {
    fn drop(&mut self) {
        if self.1 == Counted::Yes {
            // SAFETY: slot 2 is Release; we give back the reference we own.
            unsafe { method::<RefFn>(self.0, RELEASE)(self.0) };
        }
    }
}
