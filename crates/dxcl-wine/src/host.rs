//! The host's OpenCL: `libOpenCL.so.1` (the ICD loader, which loads `OPENCL_LAYERS`), opened once.

use std::ffi::{c_void, CStr, CString};
use std::sync::OnceLock;

use crate::gen::NAMES;

pub struct Host {
    /// Each core entry point by its number; null where the loader lacks it.
    functions: Vec<usize>,
}

static HOST: OnceLock<Option<Host>> = OnceLock::new();

fn open() -> Option<Host> {
    // Wine's signal handlers, before a host library can replace them.
    crate::signals::save();
    // SAFETY: a constant NUL-terminated name; dlopen has no other precondition.
    let library = unsafe { libc::dlopen(c"libOpenCL.so.1".as_ptr(), libc::RTLD_NOW) };
    if library.is_null() {
        return None;
    }
    let functions = NAMES
        .iter()
        .map(|name| {
            let name = CString::new(*name).expect("entry point names have no NUL");
            // SAFETY: a live handle from dlopen and a NUL-terminated name.
            unsafe { libc::dlsym(library, name.as_ptr()) as usize }
        })
        .collect();
    // The library stays open for the process's life, as the loader expects.
    Some(Host { functions })
}

/// The host library, opened at the first call; `None` when it cannot be opened.
pub fn host() -> Option<&'static Host> {
    HOST.get_or_init(open).as_ref()
}

impl Host {
    /// Entry point `index`, null when the host has none.
    pub fn function(&self, index: u32) -> *const c_void {
        self.functions.get(index as usize).copied().unwrap_or(0) as *const c_void
    }

    /// An extension function of the host (through the layer), by platform; null when it has none.
    pub fn extension(&self, platform: *mut c_void, name: &CStr) -> *const c_void {
        let f = self.function(crate::gen::index::clGetExtensionFunctionAddressForPlatform);
        if f.is_null() {
            return std::ptr::null();
        }
        // SAFETY: the host's clGetExtensionFunctionAddressForPlatform has this signature.
        let f: crate::gen::sig::clGetExtensionFunctionAddressForPlatform =
            unsafe { std::mem::transmute(f) };
        // SAFETY: a platform handle from the program (the host validates it) and a NUL-terminated name.
        unsafe { f(platform, name.as_ptr() as *mut c_void) as *const c_void }
    }
}
