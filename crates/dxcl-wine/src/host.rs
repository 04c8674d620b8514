//! The host's OpenCL: `libOpenCL.so.1` (the ICD loader, which loads `OPENCL_LAYERS`), opened once.

use std::ffi::{c_void, CStr, CString};
use std::sync::OnceLock;

use crate::gen::NAMES;

pub struct Host {
    /// Each core entry point by its number; null where the loader lacks it.
    functions: Vec<usize>,
}

static HOST: OnceLock<Result<Host, String>> = OnceLock::new();

fn open() -> Result<Host, String> {
    crate::signals::save();
    // SAFETY: a constant NUL-terminated name; dlopen has no other precondition.
    let library = unsafe { libc::dlopen(c"libOpenCL.so.1".as_ptr(), libc::RTLD_NOW) };
    if library.is_null() {
        // SAFETY: dlerror's text, if any, lives until the next dl call of this thread.
        let error = unsafe { libc::dlerror() };
        return Err(if error.is_null() {
            "libOpenCL.so.1: dlopen failed".to_owned()
        } else {
            // SAFETY: a NUL-terminated string from dlerror.
            unsafe { CStr::from_ptr(error) }
                .to_string_lossy()
                .into_owned()
        } + " (install an OpenCL ICD loader: Debian's ocl-icd-libopencl1)");
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
    Ok(Host { functions })
}

/// The host library, opened at the first call; `None` when it cannot be opened.
pub fn host() -> Option<&'static Host> {
    HOST.get_or_init(open).as_ref().ok()
}

/// Why the host library cannot be opened; `None` when it is open.
pub fn error() -> Option<&'static str> {
    HOST.get_or_init(open).as_ref().err().map(String::as_str)
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
