//! The COM object base: reference counts, faces, identity and the registry of live objects.
//!
//! Model (DXVK's): an object has a *public* count (what `AddRef`/`Release` return) and a *private*
//! count. While the public count is non-zero it holds one private reference; internal users
//! (registry look-ups, children that need their parent's memory) take private references only, so
//! they never show in `AddRef`/`Release` return values. The object is destroyed when the private
//! count reaches zero.
//!
//! An object is a `#[repr(C)]` struct whose first fields are its faces: one vtable pointer per COM
//! interface family it implements, at fixed offsets. Face `OFFSET` of object `T` is the address
//! `obj + OFFSET`; every face forwards `AddRef`/`Release`/`QueryInterface` to the object.
//!
//! Application pointers are never trusted: [`lookup`] finds a pointer in the registry of live faces
//! (by address, with the object kind) before anything dereferences it as ours.

use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use super::abi::*;
use super::guard::{guard, lock};

/// The kinds of objects in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    Factory,
    Adapter,
    Device,
    Context,
    Resource,
    Query,
}

/// The two reference counts of an object.
#[derive(Debug)]
pub struct RefCounts {
    public: AtomicU32,
    private: AtomicU32,
}

impl RefCounts {
    /// Counts of a new object handed to the application: one public reference (which holds the
    /// one private reference).
    pub fn new_public() -> Self {
        RefCounts {
            public: AtomicU32::new(1),
            private: AtomicU32::new(1),
        }
    }
    /// Counts of an object owned internally, with no public reference yet (the immediate context).
    pub fn new_private() -> Self {
        RefCounts {
            public: AtomicU32::new(0),
            private: AtomicU32::new(1),
        }
    }
    pub fn public(&self) -> u32 {
        self.public.load(Ordering::Acquire)
    }
}

/// A COM object of this runtime.
///
/// # Safety
///
/// Implementors are `#[repr(C)]` structs allocated by [`into_raw`] whose `faces()` lists the
/// offsets of fields holding a vtable pointer; `query` returns only addresses of such fields of
/// `self`, after taking a public reference with [`add_ref`] for them.
pub unsafe trait ComObject: Sized + Send + Sync + 'static {
    const KIND: ObjectKind;
    fn refs(&self) -> &RefCounts;
    /// The object's private data (shared by all its faces).
    fn private_data(&self) -> &super::private_data::PrivateData;
    /// Offsets of the faces (vtable pointer fields) in the object.
    fn faces() -> &'static [usize];
    /// The face implementing `riid`, if any (without taking a reference).
    fn face_for(&self, riid: &GUID) -> Option<usize>;
    /// Public count went 0 -> 1 (a device child AddRefs its device here).
    fn on_public_acquire(&self) {}
    /// Public count went 1 -> 0 (a device child releases its device here).
    fn on_public_release(&self) {}
    /// `Release` left `remaining` public references (validation, `com::validation`).
    fn on_public_count(&self, _remaining: u32) {}
    /// Last private reference gone, just before the memory is freed: release what the object
    /// holds (unregistered already).
    fn on_destroy(&mut self) {}
}

/// Heap-allocates an object and registers its faces. Returns the object pointer.
pub fn into_raw<T: ComObject>(obj: T) -> *mut T {
    let p = Box::into_raw(Box::new(obj));
    let mut reg = lock(registry());
    for &off in T::faces() {
        reg.insert(p as usize + off, (T::KIND, p as usize));
    }
    p
}

/// The address of a face of an object.
pub fn face<T, I>(obj: *const T, offset: usize) -> *mut I {
    (obj as *mut u8).wrapping_add(offset).cast()
}

/// The object of a face pointer known to be face `OFFSET` of a `T`.
///
/// # Safety
/// `this` is face `offset` of a live `T`: true for `This` in the vtable methods of that face.
pub unsafe fn object<'a, T, I>(this: *mut I, offset: usize) -> &'a T {
    // SAFETY: the caller guarantees `this - offset` is a live `T`.
    unsafe { &*(this as *mut u8).wrapping_sub(offset).cast::<T>() }
}

/// `AddRef`: returns the new public count.
pub fn add_ref<T: ComObject>(obj: &T) -> u32 {
    let n = obj.refs().public.fetch_add(1, Ordering::AcqRel) + 1;
    if n == 1 {
        obj.refs().private.fetch_add(1, Ordering::AcqRel);
        obj.on_public_acquire();
    }
    n
}

/// `Release`: returns the new public count. A release past zero (an application bug) is ignored.
///
/// # Safety
/// `obj` was made by [`into_raw`]; the caller does not use it again unless it holds another reference.
pub unsafe fn release<T: ComObject>(obj: *const T) -> u32 {
    // SAFETY: the caller holds a public reference, so the object is alive here.
    let o = unsafe { &*obj };
    let dec = o
        .refs()
        .public
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    match dec {
        Ok(1) => {
            o.on_public_count(0);
            o.on_public_release();
            // SAFETY: the public count held this private reference.
            unsafe { release_private(obj) };
            0
        }
        Ok(n) => {
            o.on_public_count(n - 1);
            n - 1
        }
        Err(_) => 0,
    }
}

/// Takes a private reference.
pub fn add_ref_private<T: ComObject>(obj: &T) {
    obj.refs().private.fetch_add(1, Ordering::AcqRel);
}

/// Drops a private reference, destroying the object on the last one.
///
/// # Safety
/// `obj` was made by [`into_raw`] and the caller owns the private reference it drops.
pub unsafe fn release_private<T: ComObject>(obj: *const T) {
    // SAFETY: the caller's private reference keeps the object alive until the decrement.
    let last = unsafe { &*obj }
        .refs()
        .private
        .fetch_sub(1, Ordering::AcqRel)
        == 1;
    if !last {
        return;
    }
    {
        let mut reg = lock(registry());
        for &off in T::faces() {
            reg.remove(&(obj as usize + off));
        }
    }
    // SAFETY: the last reference is gone and the registry no longer hands the object out; the
    // pointer came from `Box::into_raw` in `into_raw`.
    let mut boxed = unsafe { Box::from_raw(obj as *mut T) };
    guard((), || boxed.on_destroy());
    drop(boxed);
}

/// A private reference that drops itself.
pub struct PrivateRef<T: ComObject>(*const T);

// SAFETY: `T: Send + Sync`; the reference count is atomic.
unsafe impl<T: ComObject> Send for PrivateRef<T> {}
// SAFETY: as above.
unsafe impl<T: ComObject> Sync for PrivateRef<T> {}

impl<T: ComObject> PrivateRef<T> {
    /// Takes a new private reference on an object known to be alive.
    pub fn new(obj: &T) -> Self {
        add_ref_private(obj);
        PrivateRef(obj)
    }
    pub fn as_ptr(&self) -> *const T {
        self.0
    }
}

impl<T: ComObject> std::ops::Deref for PrivateRef<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the private reference keeps the object alive.
        unsafe { &*self.0 }
    }
}

impl<T: ComObject> Clone for PrivateRef<T> {
    fn clone(&self) -> Self {
        PrivateRef::new(self)
    }
}

impl<T: ComObject> Drop for PrivateRef<T> {
    fn drop(&mut self) {
        // SAFETY: this value owns one private reference on an object made by `into_raw`.
        unsafe { release_private(self.0) }
    }
}

type Registry = Mutex<HashMap<usize, (ObjectKind, usize)>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Finds an application-provided interface pointer among the live faces of `T` objects and takes a
/// private reference on it. `None` for null, foreign pointers, other kinds, and objects being
/// destroyed.
pub fn lookup<T: ComObject, I>(ptr: *const I) -> Option<PrivateRef<T>> {
    if ptr.is_null() {
        return None;
    }
    let reg = lock(registry());
    let &(kind, addr) = reg.get(&(ptr as usize))?;
    if kind != T::KIND {
        return None;
    }
    // SAFETY: registered objects are alive until `release_private` unregisters them under this
    // lock, which we hold.
    let obj = unsafe { &*(addr as *const T) };
    // Only revive a private count that is still non-zero: zero means destruction has begun.
    obj.refs()
        .private
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n != 0).then_some(n + 1)
        })
        .ok()?;
    Some(PrivateRef(addr as *const T))
}

/// `QueryInterface` for any object: identity-preserving, `E_POINTER` for a null out pointer,
/// `E_NOINTERFACE` with `*ppv = NULL` for interfaces the object does not implement.
///
/// # Safety
/// `riid` is null or readable; `ppv` is null or writable.
pub unsafe fn query_interface<T: ComObject>(
    obj: &T,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    if ppv.is_null() {
        // IUnknown::QueryInterface: "E_POINTER if ppvObject is NULL".
        return E_POINTER;
    }
    // SAFETY: `ppv` is writable (caller contract).
    unsafe { *ppv = ptr::null_mut() };
    if riid.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: non-null `riid` is readable (caller contract).
    let iid = unsafe { *riid };
    match obj.face_for(&iid) {
        Some(off) => {
            add_ref(obj);
            // SAFETY: as above.
            unsafe { *ppv = face::<T, c_void>(obj, off) };
            S_OK
        }
        // IUnknown::QueryInterface: "E_NOINTERFACE ... *ppvObject is set to NULL".
        None => E_NOINTERFACE,
    }
}

/// Writes a new public reference to face `offset` of `obj` into an out pointer.
///
/// # Safety
/// `out` is writable.
pub unsafe fn hand_out<T: ComObject, I>(obj: &T, offset: usize, out: *mut *mut I) {
    add_ref(obj);
    // SAFETY: caller contract.
    unsafe { *out = face::<T, I>(obj, offset) };
}

/// `IUnknown::QueryInterface` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T` (COM calling convention); `riid`/`ppv` follow COM's contract.
pub unsafe extern "system" fn com_query_interface<T: ComObject, I, const OFF: usize>(
    this: *mut I,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: `this` is face `OFF` of a live `T` (function contract).
        let obj = unsafe { object::<T, I>(this, OFF) };
        // SAFETY: `riid`/`ppv` come from the caller with COM's contract.
        unsafe { query_interface(obj, riid, ppv) }
    })
}

/// `IUnknown::AddRef` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T`.
pub unsafe extern "system" fn com_add_ref<T: ComObject, I, const OFF: usize>(this: *mut I) -> u32 {
    // SAFETY: function contract.
    guard(0, || add_ref(unsafe { object::<T, I>(this, OFF) }))
}

/// `IUnknown::Release` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T` and the caller gives up one reference.
pub unsafe extern "system" fn com_release<T: ComObject, I, const OFF: usize>(this: *mut I) -> u32 {
    guard(0, || {
        // SAFETY: function contract.
        let obj: *const T = unsafe { object::<T, I>(this, OFF) };
        // SAFETY: the object was made by `into_raw`; the caller gives up its reference.
        unsafe { release(obj) }
    })
}

/// The `IUnknown` part of a vtable for face `OFF` of a `T`.
pub const fn unknown_vtbl<T: ComObject, const OFF: usize>() -> IUnknownVtbl {
    IUnknownVtbl {
        QueryInterface: com_query_interface::<T, IUnknown, OFF>,
        AddRef: com_add_ref::<T, IUnknown, OFF>,
        Release: com_release::<T, IUnknown, OFF>,
    }
}

// ---------------------------------------------------------------------------------------------
// Private data methods, shared by every object's faces (the storage is `private_data`'s).

/// `GetPrivateData` of face `OFF` of a `T` (D3D11, D3D10 and DXGI faces alike).
///
/// # Safety
/// `this` is face `OFF` of a live `T`; the other arguments follow
/// [`PrivateData::get`](super::private_data::PrivateData::get).
pub unsafe extern "system" fn get_private_data<T: ComObject, I, const OFF: usize>(
    this: *mut I,
    guid: *const GUID,
    size: *mut u32,
    data: *mut c_void,
) -> HRESULT {
    // SAFETY: function contract.
    guard(E_FAIL, || unsafe {
        object::<T, I>(this, OFF)
            .private_data()
            .get(guid, size, data)
    })
}

/// `SetPrivateData` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T`; the other arguments follow
/// [`PrivateData::set`](super::private_data::PrivateData::set).
pub unsafe extern "system" fn set_private_data<T: ComObject, I, const OFF: usize>(
    this: *mut I,
    guid: *const GUID,
    size: u32,
    data: *const c_void,
) -> HRESULT {
    // SAFETY: function contract.
    guard(E_FAIL, || unsafe {
        object::<T, I>(this, OFF)
            .private_data()
            .set(guid, size, data)
    })
}

/// `SetPrivateDataInterface` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T`; the other arguments follow
/// [`PrivateData::set_interface`](super::private_data::PrivateData::set_interface).
pub unsafe extern "system" fn set_private_data_interface<T: ComObject, I, const OFF: usize>(
    this: *mut I,
    guid: *const GUID,
    unk: *const IUnknown,
) -> HRESULT {
    // SAFETY: function contract.
    guard(E_FAIL, || unsafe {
        object::<T, I>(this, OFF)
            .private_data()
            .set_interface(guid, unk)
    })
}
