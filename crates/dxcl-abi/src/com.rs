//! [`Com`], an owning reference to a Direct3D COM interface: the one COM pointer of every crate
//! (the layer's `ComPtr` wraps it with what its lifetime rules add).

use core::ffi::c_void;
use core::fmt;
use core::ptr::{self, NonNull};

use crate::{IUnknown, Interface, SUCCEEDED};

/// One counted reference to a COM interface of type `T` (`ID3D11Device`, `ID3D11Texture2D`, …
/// from this crate): `Clone` calls `AddRef`, `Drop` calls `Release`.
///
/// Not `Send`: Direct3D 10 devices may be single-threaded, and the crate makes no claim about
/// interfaces it does not know.
pub struct Com<T: Interface>(NonNull<T>);

impl<T: Interface> Com<T> {
    /// Takes over one reference the caller owns (a pointer a `Create…` call returned).
    /// `None` for a null pointer.
    ///
    /// # Safety
    /// `ptr` is null or a live interface pointer of type `T`, and the caller gives up the
    /// reference it holds (it must not `Release` it again).
    pub unsafe fn from_raw(ptr: *mut T) -> Option<Com<T>> {
        NonNull::new(ptr).map(Com)
    }

    /// Adds a reference to a pointer the caller keeps owning. `None` for a null pointer.
    ///
    /// # Safety
    /// `ptr` is null or a live interface pointer of type `T`.
    pub unsafe fn from_raw_borrowed(ptr: *mut T) -> Option<Com<T>> {
        let com = Com(NonNull::new(ptr)?);
        // SAFETY: the pointer is live (contract); the new reference is the one `com` releases.
        unsafe { com.add_ref() };
        Some(com)
    }

    /// The interface pointer, still owned by `self`.
    pub fn as_raw(&self) -> *mut T {
        self.0.as_ptr()
    }

    /// Gives the reference up to the caller, who must `Release` it.
    pub fn into_raw(self) -> *mut T {
        let ptr = self.as_raw();
        core::mem::forget(self);
        ptr
    }

    /// Gives the reference back now and returns the count `Release` reports (COM promises
    /// nothing of it beyond diagnostics).
    pub fn release(self) -> u32 {
        let unknown = self.unknown();
        core::mem::forget(self);
        // SAFETY: `self` owned one reference to a live object; this gives it back once, and the
        // forgotten `self` does not give it back again.
        unsafe { ((*(*unknown).lpVtbl).Release)(unknown) }
    }

    /// The same reference seen as interface `U` (no COM call).
    ///
    /// # Safety
    /// `T` derives from `U` in COM's single inheritance, so a pointer to `T` is a valid pointer
    /// to `U`.
    pub unsafe fn into_base<U: Interface>(self) -> Com<U> {
        let ptr = self.0.cast::<U>();
        core::mem::forget(self);
        Com(ptr)
    }

    /// `QueryInterface` for `U`: `None` when the object does not implement it.
    pub fn cast<U: Interface>(&self) -> Option<Com<U>> {
        let unknown = self.unknown();
        let mut out: *mut c_void = ptr::null_mut();
        // SAFETY: every COM interface begins with IUnknown's vtable, and `self` is live.
        let hr = unsafe { ((*(*unknown).lpVtbl).QueryInterface)(unknown, &U::IID, &mut out) };
        if !SUCCEEDED(hr) {
            return None;
        }
        // SAFETY: on success `out` is a new reference to a `U`, which the `Com` takes over.
        unsafe { Com::from_raw(out.cast::<U>()) }
    }

    fn unknown(&self) -> *mut IUnknown {
        self.as_raw().cast()
    }

    /// # Safety
    /// The caller pairs the reference with exactly one `Release`.
    unsafe fn add_ref(&self) {
        let unknown = self.unknown();
        // SAFETY: IUnknown is the start of every interface; `self` is live.
        unsafe { ((*(*unknown).lpVtbl).AddRef)(unknown) };
    }
}

impl<T: Interface> Clone for Com<T> {
    fn clone(&self) -> Com<T> {
        // SAFETY: the clone owns the new reference and releases it on drop.
        unsafe { self.add_ref() };
        Com(self.0)
    }
}

impl<T: Interface> Drop for Com<T> {
    fn drop(&mut self) {
        let unknown = self.unknown();
        // SAFETY: `self` owns one reference to a live object; this gives it back once.
        unsafe { ((*(*unknown).lpVtbl).Release)(unknown) };
    }
}

impl<T: Interface> PartialEq for Com<T> {
    /// Same interface pointer (COM identity needs `IUnknown`; this compares faces).
    fn eq(&self, other: &Com<T>) -> bool {
        self.0 == other.0
    }
}

impl<T: Interface> Eq for Com<T> {}

impl<T: Interface> fmt::Debug for Com<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Com({:p})", self.0)
    }
}
