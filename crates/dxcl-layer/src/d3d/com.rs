//! The layer's COM reference: `dxcl_abi`'s [`Com`] with what the layer's lifetime rules add
//! (references borrowed from the one a memory object holds, upcasts checked against the SDK's
//! inheritance, a claim that Direct3D's objects are free-threaded), and the `QueryInterface` of
//! the layer's own COM objects.

use std::ffi::c_void;
use std::mem::ManuallyDrop;

use dxcl_abi::com::Com;
use dxcl_abi::{IUnknown, Interface};

/// `Self` derives from `P` in COM's single inheritance: a pointer to `Self` is a valid pointer to
/// `P` (the vtable of `Self` begins with the whole vtable of `P`, nested as `base`).
///
/// # Safety
/// Implement only where the SDK declares `Self` as (transitively) deriving from `P`.
pub(crate) unsafe trait Derives<P: Interface>: Interface {}

// SAFETY: every COM interface derives from IUnknown.
unsafe impl<T: Interface> Derives<IUnknown> for T {}

/// Declares `child: parent, parent, …` derivations, each checked against the generated vtables:
/// the child's vtable must nest the parent's as its first member.
macro_rules! derives {
    ($($child:ident: $($parent:ident),+;)*) => {$($(
        // SAFETY: the SDK declares the child interface as deriving from the parent.
        unsafe impl Derives<dxcl_abi::$parent> for dxcl_abi::$child {}
    )+)*};
}

derives! {
    ID3D11Buffer: ID3D11Resource, ID3D11DeviceChild;
    ID3D11Texture2D: ID3D11Resource, ID3D11DeviceChild;
    ID3D11Texture3D: ID3D11Resource, ID3D11DeviceChild;
    ID3D11Resource: ID3D11DeviceChild;
    ID3D10Buffer: ID3D10Resource, ID3D10DeviceChild;
    ID3D10Texture2D: ID3D10Resource, ID3D10DeviceChild;
    ID3D10Texture3D: ID3D10Resource, ID3D10DeviceChild;
    ID3D10Resource: ID3D10DeviceChild;
}

/// A reference to a COM object seen as interface `T`: counted (a [`Com`], released on drop) or
/// borrowed (valid while another counted reference to the same object lives; see
/// [`ComPtr::into_borrowed`]).
pub(crate) struct ComPtr<T: Interface = IUnknown>(Reference<T>);

enum Reference<T: Interface> {
    Counted(Com<T>),
    Borrowed(*mut T),
}

// SAFETY: Direct3D 10/11 devices and resources are free-threaded COM objects (D3D11 devices and
// resources may be used from any thread; the layer serialises immediate-context use per call), so
// a reference may move between and be shared by threads.
unsafe impl<T: Interface> Send for ComPtr<T> {}
// SAFETY: see Send.
unsafe impl<T: Interface> Sync for ComPtr<T> {}

impl<T: Interface> ComPtr<T> {
    /// Takes ownership of one reference the caller already holds.
    ///
    /// # Safety
    /// `ptr` is null or a live COM object implementing `T` with a reference the caller transfers.
    pub unsafe fn from_owned(ptr: *mut T) -> Option<ComPtr<T>> {
        // SAFETY: the caller's contract is Com's.
        unsafe { Com::from_raw(ptr) }.map(|c| ComPtr(Reference::Counted(c)))
    }

    pub fn as_ptr(&self) -> *mut T {
        match &self.0 {
            Reference::Counted(c) => c.as_raw(),
            Reference::Borrowed(p) => *p,
        }
    }

    /// The same pointer seen as an interface `T` derives from (no COM call: an upcast).
    pub fn as_base<P: Interface>(&self) -> *mut P
    where
        T: Derives<P>,
    {
        self.as_ptr().cast()
    }

    /// Turns this reference into one on an interface `T` derives from (the same pointer).
    pub fn upcast<P: Interface>(self) -> ComPtr<P>
    where
        T: Derives<P>,
    {
        ComPtr(match self.0 {
            // SAFETY: `T: Derives<P>`.
            Reference::Counted(c) => Reference::Counted(unsafe { c.into_base() }),
            Reference::Borrowed(p) => Reference::Borrowed(p.cast()),
        })
    }

    /// Gives the reference back and keeps the pointer, for a second view of an object whose
    /// lifetime another counted reference guarantees: the specs let a `cl_mem` add exactly one
    /// reference to its resource ("This call will increment the internal Direct3D reference count
    /// on resource"), so the interop interface and the staging copy borrow that one.
    ///
    /// # Safety
    /// The caller keeps a counted reference to the same object for as long as the result is used.
    pub unsafe fn into_borrowed(self) -> ComPtr<T> {
        let ptr = match self.0 {
            Reference::Counted(c) => {
                let p = c.as_raw();
                drop(c);
                p
            }
            Reference::Borrowed(p) => p,
        };
        ComPtr(Reference::Borrowed(ptr))
    }

    /// Gives back a counted reference now and returns what `Release` returned (the count COM
    /// reports, for validation); `None` for a borrowed pointer.
    pub fn release_now(self) -> Option<u32> {
        match self.0 {
            Reference::Counted(c) => Some(c.release()),
            Reference::Borrowed(_) => None,
        }
    }

    /// `QueryInterface`: a new reference to interface `U`, or `None` (E_NOINTERFACE or any error).
    pub fn query<U: Interface>(&self) -> Option<ComPtr<U>> {
        // SAFETY: self holds a live COM object.
        unsafe { query_raw(self.as_ptr().cast()) }
    }

    /// The object's identity: the `IUnknown` pointer COM guarantees to be the same for every
    /// interface of one object.
    pub fn identity(&self) -> usize {
        self.query::<IUnknown>()
            .map_or(self.as_ptr() as usize, |u| u.as_ptr() as usize)
    }
}

/// `QueryInterface` for `U` on a raw pointer the application handed us.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn query_raw<U: Interface>(ptr: *mut c_void) -> Option<ComPtr<U>> {
    // SAFETY: a live object (caller's contract) seen through IUnknown, which every interface
    // begins with; the view adds no reference and gives none back (never dropped).
    let unknown = ManuallyDrop::new(unsafe { Com::from_raw(ptr.cast::<IUnknown>()) }?);
    unknown.cast::<U>().map(|c| ComPtr(Reference::Counted(c)))
}

impl<T: Interface> Clone for ComPtr<T> {
    fn clone(&self) -> Self {
        ComPtr(match &self.0 {
            Reference::Counted(c) => Reference::Counted(c.clone()),
            Reference::Borrowed(p) => Reference::Borrowed(*p),
        })
    }
}

/// `QueryInterface` of a COM object of the layer's own that is its one interface `iid`: S_OK with a
/// new reference (`add_ref`) for `iid` and IUnknown, else E_NOINTERFACE.
///
/// # Safety
/// `p` is a live object whose `add_ref` that is; `riid` and `out` are null or valid (COM contract).
pub(crate) unsafe fn query_one(
    p: *mut IUnknown,
    riid: dxcl_abi::REFIID,
    out: *mut *mut c_void,
    iid: &dxcl_abi::GUID,
    add_ref: unsafe extern "system" fn(*mut IUnknown) -> dxcl_abi::ULONG,
) -> dxcl_abi::HRESULT {
    if out.is_null() || riid.is_null() {
        return dxcl_abi::E_INVALIDARG;
    }
    let same = |a: &dxcl_abi::GUID, b: &dxcl_abi::GUID| {
        (a.Data1, a.Data2, a.Data3, a.Data4) == (b.Data1, b.Data2, b.Data3, b.Data4)
    };
    // SAFETY: valid IID and out pointer (checked non-null; caller's contract); a live object.
    unsafe {
        if same(&*riid, &IUnknown::IID) || same(&*riid, iid) {
            add_ref(p);
            *out = p.cast();
            dxcl_abi::S_OK
        } else {
            *out = std::ptr::null_mut();
            dxcl_abi::E_NOINTERFACE
        }
    }
}
