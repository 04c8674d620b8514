//! The 24 D3D sharing entry points and the one table that drives both
//! `clGetExtensionFunctionAddress[ForPlatform]` and the KHR dispatch slots.

use std::ffi::{c_char, c_void, CStr};
use std::mem::offset_of;

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_mem, cl_mem_flags,
    cl_platform_id, cl_uint,
};

use super::{object, status};
use crate::core::tokens::ResourceKind;
use crate::core::tokens::{Call, D3dVersion, Ext, Flavor};

macro_rules! d3d_entry_points {
    ($ver:ident, $flavor:ident, $get:ident, $buffer:ident, $tex2d:ident, $tex3d:ident, $acquire:ident, $release:ident) => {
        pub(crate) unsafe extern "C" fn $get(
            platform: cl_platform_id,
            source: cl_uint,
            object: *mut c_void,
            set: cl_uint,
            num_entries: cl_uint,
            devices: *mut cl_device_id,
            num_devices: *mut cl_uint,
        ) -> cl_int {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            status(|| unsafe {
                super::devices::get_device_ids(
                    ext,
                    platform,
                    source,
                    object,
                    set,
                    num_entries,
                    devices,
                    num_devices,
                )
            })
        }
        pub(crate) unsafe extern "C" fn $buffer(
            context: cl_context,
            flags: cl_mem_flags,
            resource: *mut c_void,
            errcode_ret: *mut cl_int,
        ) -> cl_mem {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            unsafe {
                object(errcode_ret, || {
                    super::memory::create_from(
                        ext,
                        ResourceKind::Buffer,
                        context,
                        flags,
                        resource,
                        0,
                    )
                })
            }
        }
        pub(crate) unsafe extern "C" fn $tex2d(
            context: cl_context,
            flags: cl_mem_flags,
            resource: *mut c_void,
            subresource: cl_uint,
            errcode_ret: *mut cl_int,
        ) -> cl_mem {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            unsafe {
                object(errcode_ret, || {
                    super::memory::create_from(
                        ext,
                        ResourceKind::Texture2D,
                        context,
                        flags,
                        resource,
                        subresource,
                    )
                })
            }
        }
        pub(crate) unsafe extern "C" fn $tex3d(
            context: cl_context,
            flags: cl_mem_flags,
            resource: *mut c_void,
            subresource: cl_uint,
            errcode_ret: *mut cl_int,
        ) -> cl_mem {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            unsafe {
                object(errcode_ret, || {
                    super::memory::create_from(
                        ext,
                        ResourceKind::Texture3D,
                        context,
                        flags,
                        resource,
                        subresource,
                    )
                })
            }
        }
        pub(crate) unsafe extern "C" fn $acquire(
            queue: cl_command_queue,
            num_objects: cl_uint,
            mem_objects: *const cl_mem,
            num_events: cl_uint,
            wait_list: *const cl_event,
            event: *mut cl_event,
        ) -> cl_int {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            status(|| unsafe {
                super::share::acquire_release(
                    ext,
                    false,
                    queue,
                    num_objects,
                    mem_objects,
                    num_events,
                    wait_list,
                    event,
                )
            })
        }
        pub(crate) unsafe extern "C" fn $release(
            queue: cl_command_queue,
            num_objects: cl_uint,
            mem_objects: *const cl_mem,
            num_events: cl_uint,
            wait_list: *const cl_event,
            event: *mut cl_event,
        ) -> cl_int {
            let ext = Ext {
                version: D3dVersion::$ver,
                flavor: Flavor::$flavor,
            };
            // SAFETY: the caller's arguments obey the entry point's contract.
            status(|| unsafe {
                super::share::acquire_release(
                    ext,
                    true,
                    queue,
                    num_objects,
                    mem_objects,
                    num_events,
                    wait_list,
                    event,
                )
            })
        }
    };
}

d3d_entry_points!(
    D3D10,
    Khr,
    get_ids_10_khr,
    buffer_10_khr,
    tex2d_10_khr,
    tex3d_10_khr,
    acquire_10_khr,
    release_10_khr
);
d3d_entry_points!(
    D3D11,
    Khr,
    get_ids_11_khr,
    buffer_11_khr,
    tex2d_11_khr,
    tex3d_11_khr,
    acquire_11_khr,
    release_11_khr
);
d3d_entry_points!(
    D3D10,
    Nv,
    get_ids_10_nv,
    buffer_10_nv,
    tex2d_10_nv,
    tex3d_10_nv,
    acquire_10_nv,
    release_10_nv
);
d3d_entry_points!(
    D3D11,
    Nv,
    get_ids_11_nv,
    buffer_11_nv,
    tex2d_11_nv,
    tex3d_11_nv,
    acquire_11_nv,
    release_11_nv
);

/// One D3D entry point: its name, address, and (KHR only) its dispatch slot's byte offset.
pub(crate) struct Entry {
    pub name: &'static CStr,
    pub address: usize,
    pub slot: Option<usize>,
}

/// An NV entry point, named by the vocabulary (`dxcl_abi::sharing`).
macro_rules! entry {
    ($version:ident, $call:ident, $f:expr) => {
        Entry {
            name: Ext {
                version: D3dVersion::$version,
                flavor: Flavor::Nv,
            }
            .entry_point(Call::$call),
            address: $f as usize,
            slot: None,
        }
    };
}

/// A KHR entry point, named by its dispatch slot (the test checks the vocabulary agrees).
macro_rules! khr {
    ($slot:ident, $f:expr) => {
        Entry {
            name: match CStr::from_bytes_with_nul(concat!(stringify!($slot), "\0").as_bytes()) {
                Ok(name) => name,
                Err(_) => panic!("a slot's name has no NUL inside"),
            },
            address: $f as usize,
            slot: Some(offset_of!(cl_icd_dispatch, $slot)),
        }
    };
}

/// The table. KHR entries carry their dispatch slot; NV ones have none (REFERENCE.md).
pub(crate) fn entries() -> [Entry; 24] {
    [
        khr!(
            clGetDeviceIDsFromD3D10KHR,
            get_ids_10_khr as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D10BufferKHR,
            buffer_10_khr as unsafe extern "C" fn(_, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D10Texture2DKHR,
            tex2d_10_khr as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D10Texture3DKHR,
            tex3d_10_khr as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        khr!(
            clEnqueueAcquireD3D10ObjectsKHR,
            acquire_10_khr as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        khr!(
            clEnqueueReleaseD3D10ObjectsKHR,
            release_10_khr as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        khr!(
            clGetDeviceIDsFromD3D11KHR,
            get_ids_11_khr as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D11BufferKHR,
            buffer_11_khr as unsafe extern "C" fn(_, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D11Texture2DKHR,
            tex2d_11_khr as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        khr!(
            clCreateFromD3D11Texture3DKHR,
            tex3d_11_khr as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        khr!(
            clEnqueueAcquireD3D11ObjectsKHR,
            acquire_11_khr as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        khr!(
            clEnqueueReleaseD3D11ObjectsKHR,
            release_11_khr as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        entry!(
            D3D10,
            DeviceIds,
            get_ids_10_nv as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _
        ),
        entry!(
            D3D10,
            Buffer,
            buffer_10_nv as unsafe extern "C" fn(_, _, _, _) -> _
        ),
        entry!(
            D3D10,
            Texture2D,
            tex2d_10_nv as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        entry!(
            D3D10,
            Texture3D,
            tex3d_10_nv as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        entry!(
            D3D10,
            Acquire,
            acquire_10_nv as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        entry!(
            D3D10,
            Release,
            release_10_nv as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        entry!(
            D3D11,
            DeviceIds,
            get_ids_11_nv as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _
        ),
        entry!(
            D3D11,
            Buffer,
            buffer_11_nv as unsafe extern "C" fn(_, _, _, _) -> _
        ),
        entry!(
            D3D11,
            Texture2D,
            tex2d_11_nv as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        entry!(
            D3D11,
            Texture3D,
            tex3d_11_nv as unsafe extern "C" fn(_, _, _, _, _) -> _
        ),
        entry!(
            D3D11,
            Acquire,
            acquire_11_nv as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
        entry!(
            D3D11,
            Release,
            release_11_nv as unsafe extern "C" fn(_, _, _, _, _, _) -> _
        ),
    ]
}

/// Writes every KHR entry point into its dispatch slot.
pub(crate) fn install_khr_slots(table: &mut cl_icd_dispatch) {
    let base = (table as *mut cl_icd_dispatch).cast::<u8>();
    for e in entries() {
        if let Some(offset) = e.slot {
            // SAFETY: `offset` is the offset of a function-pointer slot of the table (offset_of!),
            // aligned for a pointer; the stored address is a function with exactly that slot's
            // signature (checked by the `slots_are_typed` test).
            unsafe { base.add(offset).cast::<usize>().write(e.address) };
        }
    }
}

/// Our address for a D3D function name, if it is one of ours.
fn lookup(name: *const c_char) -> Option<*mut c_void> {
    if name.is_null() {
        return None;
    }
    // SAFETY: a non-null function name is a NUL-terminated C string (the caller's contract).
    let name = unsafe { CStr::from_ptr(name) }.to_bytes();
    entries()
        .into_iter()
        .find(|e| e.name.to_bytes() == name)
        .map(|e| e.address as *mut c_void)
}

pub(crate) unsafe extern "C" fn get_extension_function_address_for_platform(
    platform: cl_platform_id,
    name: *const c_char,
) -> *mut c_void {
    std::panic::catch_unwind(|| {
        if let Some(f) = lookup(name) {
            // Every platform gets the extensions (see api::platform), so every valid platform
            // gets the functions.
            if super::devices::platforms().is_ok_and(|p| p.contains(&(platform as usize))) {
                return f;
            }
            return std::ptr::null_mut();
        }
        match crate::cl::target().and_then(|t| t.clGetExtensionFunctionAddressForPlatform) {
            // SAFETY: arguments forwarded unchanged.
            Some(below) => unsafe { below(platform, name) },
            None => std::ptr::null_mut(),
        }
    })
    .unwrap_or(std::ptr::null_mut())
}

pub(crate) unsafe extern "C" fn get_extension_function_address(name: *const c_char) -> *mut c_void {
    std::panic::catch_unwind(|| {
        if let Some(f) = lookup(name) {
            return f;
        }
        match crate::cl::target().and_then(|t| t.clGetExtensionFunctionAddress) {
            // SAFETY: argument forwarded unchanged.
            Some(below) => unsafe { below(name) },
            None => std::ptr::null_mut(),
        }
    })
    .unwrap_or(std::ptr::null_mut())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_vocabulary() {
        // KHR D3D10, KHR D3D11, NV D3D10, NV D3D11: the order of Ext::ALL.
        let names: Vec<&CStr> = entries().iter().map(|e| e.name).collect();
        let vocabulary: Vec<&CStr> = Ext::ALL
            .iter()
            .flat_map(|ext| Call::ALL.map(|c| ext.entry_point(c)))
            .collect();
        assert_eq!(names, vocabulary);
    }

    #[test]
    fn slots_are_typed() {
        // Each KHR function fits its slot's type exactly; install_khr_slots writes the same
        // addresses through offsets.
        let mut t: cl_icd_dispatch = unsafe_zeroed();
        t.clGetDeviceIDsFromD3D10KHR = Some(get_ids_10_khr);
        t.clCreateFromD3D10BufferKHR = Some(buffer_10_khr);
        t.clCreateFromD3D10Texture2DKHR = Some(tex2d_10_khr);
        t.clCreateFromD3D10Texture3DKHR = Some(tex3d_10_khr);
        t.clEnqueueAcquireD3D10ObjectsKHR = Some(acquire_10_khr);
        t.clEnqueueReleaseD3D10ObjectsKHR = Some(release_10_khr);
        t.clGetDeviceIDsFromD3D11KHR = Some(get_ids_11_khr);
        t.clCreateFromD3D11BufferKHR = Some(buffer_11_khr);
        t.clCreateFromD3D11Texture2DKHR = Some(tex2d_11_khr);
        t.clCreateFromD3D11Texture3DKHR = Some(tex3d_11_khr);
        t.clEnqueueAcquireD3D11ObjectsKHR = Some(acquire_11_khr);
        t.clEnqueueReleaseD3D11ObjectsKHR = Some(release_11_khr);
        let mut u: cl_icd_dispatch = unsafe_zeroed();
        install_khr_slots(&mut u);
        assert_eq!(format!("{t:?}"), format!("{u:?}"));
    }

    #[test]
    fn table_has_24_distinct_names() {
        let e = entries();
        for (i, a) in e.iter().enumerate() {
            assert!(e[i + 1..]
                .iter()
                .all(|b| b.name != a.name && b.address != a.address));
            assert_eq!(a.slot.is_some(), a.name.to_bytes().ends_with(b"KHR"));
        }
        assert!(lookup(c"clCreateFromD3D11BufferNV".as_ptr()).is_some());
        assert!(lookup(c"clCreateFromD3D12BufferNV".as_ptr()).is_none());
    }

    fn unsafe_zeroed() -> cl_icd_dispatch {
        // SAFETY: all-zero is valid for a table of optional function pointers and integers.
        unsafe { std::mem::zeroed() }
    }
}
