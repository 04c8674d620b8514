//! The private data store of every object: `SetPrivateData` / `SetPrivateDataInterface` /
//! `GetPrivateData` keep it (the D3D11, D3D10 and DXGI faces of one object share one store, as on
//! Windows); their COM entry points are `object`'s.

use std::ptr;
use std::sync::Mutex;

use super::abi::*;
use super::guard::lock;

enum Entry {
    Bytes(Vec<u8>),
    /// An application interface we hold one reference on.
    Interface(*mut IUnknown),
}

/// The private data of one object.
#[derive(Default)]
pub struct PrivateData {
    entries: Mutex<Vec<(GUID, Entry)>>,
}

// SAFETY: stored interface pointers are COM objects, which are used here only through their own
// AddRef/Release; the list itself is behind a mutex.
unsafe impl Send for PrivateData {}
// SAFETY: as above.
unsafe impl Sync for PrivateData {}

fn same(a: &GUID, b: &GUID) -> bool {
    a.Data1 == b.Data1 && a.Data2 == b.Data2 && a.Data3 == b.Data3 && a.Data4 == b.Data4
}

/// Calls `Release` on an application interface.
///
/// # Safety
/// `unk` is a live COM interface pointer on which we own a reference.
unsafe fn release_unknown(unk: *mut IUnknown) {
    // SAFETY: COM contract: the first field of an interface is its vtable, whose `Release` takes it.
    unsafe { ((*(*unk).lpVtbl).Release)(unk) };
}

impl PrivateData {
    /// The bytes stored under `guid` by `SetPrivateData`, if any.
    pub fn bytes(&self, guid: &GUID) -> Option<Vec<u8>> {
        lock(&self.entries).iter().find_map(|(k, e)| match e {
            Entry::Bytes(b) if same(k, guid) => Some(b.clone()),
            _ => None,
        })
    }

    fn replace(&self, guid: GUID, entry: Option<Entry>) {
        let old = {
            let mut entries = lock(&self.entries);
            let old = entries
                .iter()
                .position(|(g, _)| same(g, &guid))
                .map(|i| entries.remove(i).1);
            if let Some(e) = entry {
                entries.push((guid, e));
            }
            old
        };
        if let Some(Entry::Interface(unk)) = old {
            // SAFETY: we owned one reference on it since SetPrivateDataInterface.
            unsafe { release_unknown(unk) };
        }
    }

    /// `SetPrivateData`: a size of 0 or null data removes the entry ("if DataSize is 0 or pData is
    /// NULL, the data associated with the GUID is deleted").
    ///
    /// # Safety
    /// `guid` is null or readable; `data` is null or readable for `size` bytes.
    pub unsafe fn set(&self, guid: *const GUID, size: u32, data: *const c_void) -> HRESULT {
        if guid.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: non-null and readable (contract).
        let g = unsafe { *guid };
        if size == 0 || data.is_null() {
            self.replace(g, None);
            return S_OK;
        }
        // SAFETY: readable for `size` bytes (contract).
        let bytes =
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size as usize) }.to_vec();
        self.replace(g, Some(Entry::Bytes(bytes)));
        S_OK
    }

    /// `SetPrivateDataInterface`: AddRefs the interface; null removes the entry.
    ///
    /// # Safety
    /// `guid` is null or readable; `unk` is null or a live COM interface.
    pub unsafe fn set_interface(&self, guid: *const GUID, unk: *const IUnknown) -> HRESULT {
        if guid.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: non-null and readable (contract).
        let g = unsafe { *guid };
        if unk.is_null() {
            self.replace(g, None);
            return S_OK;
        }
        let unk = unk as *mut IUnknown;
        // SAFETY: a live COM interface (contract); we keep the reference we take here.
        unsafe { ((*(*unk).lpVtbl).AddRef)(unk) };
        self.replace(g, Some(Entry::Interface(unk)));
        S_OK
    }

    /// `GetPrivateData`: `DXGI_ERROR_NOT_FOUND` (size set to 0) for an unknown GUID; with null
    /// `data`, only the size; `DXGI_ERROR_MORE_DATA` (size set to the needed size) when the
    /// buffer is too small. An interface entry yields the pointer, AddRef'd.
    ///
    /// # Safety
    /// `guid` is null or readable; `size` is null or writable; `data` is null or writable for
    /// `*size` bytes.
    pub unsafe fn get(&self, guid: *const GUID, size: *mut u32, data: *mut c_void) -> HRESULT {
        if guid.is_null() || size.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: non-null and readable/writable (contract).
        let (g, capacity) = unsafe { (*guid, *size) };
        let entries = lock(&self.entries);
        let Some((_, entry)) = entries.iter().find(|(k, _)| same(k, &g)) else {
            // SAFETY: as above.
            unsafe { *size = 0 };
            return DXGI_ERROR_NOT_FOUND;
        };
        let (src, len, unk) = match entry {
            Entry::Bytes(b) => (b.as_ptr(), b.len(), ptr::null_mut()),
            Entry::Interface(u) => (
                u as *const *mut IUnknown as *const u8,
                size_of::<*mut IUnknown>(),
                *u,
            ),
        };
        // SAFETY: as above.
        unsafe { *size = len as u32 };
        if data.is_null() {
            return S_OK;
        }
        if (capacity as usize) < len {
            return DXGI_ERROR_MORE_DATA;
        }
        if !unk.is_null() {
            // SAFETY: a live interface we hold a reference on; the caller gets its own.
            unsafe { ((*(*unk).lpVtbl).AddRef)(unk) };
        }
        // SAFETY: `src` is readable for `len` bytes; `data` writable for `capacity >= len`.
        unsafe { ptr::copy_nonoverlapping(src, data.cast::<u8>(), len) };
        S_OK
    }
}

impl Drop for PrivateData {
    fn drop(&mut self) {
        let entries = std::mem::take(self.entries.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (_, e) in entries {
            if let Entry::Interface(unk) = e {
                // SAFETY: we owned one reference on it since SetPrivateDataInterface.
                unsafe { release_unknown(unk) };
            }
        }
    }
}
