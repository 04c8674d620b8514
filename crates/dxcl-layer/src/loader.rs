//! Loader integration (`cl_loader_layers`): the four exported entry points and the two dispatch
//! tables.
//!
//! The loader hands [`clInitLayer`] the table of the next layer (or its own trampolines); the layer
//! copies it, overrides only the slots it intercepts, and hands its copy back. Calls the layer
//! makes "down" go through the saved target table, so objects are always the platform's own.

use std::ffi::c_void;
use std::mem::size_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::{
    cl_layer_info, cl_layer_properties, CL_LAYER_API_VERSION, CL_LAYER_API_VERSION_100,
    CL_LAYER_NAME,
};
use opencl_sys::{cl_int, cl_uint, CL_INVALID_VALUE, CL_OUT_OF_HOST_MEMORY, CL_SUCCESS};

use crate::api;

/// Number of slots in the dispatch table as `opencl-sys` lays it out.
pub const TABLE_ENTRIES: usize = size_of::<cl_icd_dispatch>() / size_of::<usize>();

/// The table the layer handed to the loader (leaked for the same reason).
static LAYER: AtomicPtr<cl_icd_dispatch> = AtomicPtr::new(null_mut());

/// The table the layer handed to the loader (tests and the function-address lookup use it).
pub fn layer_table() -> Option<&'static cl_icd_dispatch> {
    let table = LAYER.load(Ordering::Acquire);
    // SAFETY: LAYER only ever holds null or a pointer leaked from a Box in `init`, never freed.
    unsafe { table.as_ref() }
}

const LAYER_NAME: &[u8] = b"dxcl D3D10/D3D11 sharing layer\0";

/// Answers the loader's questions about the layer.
///
/// # Safety
/// `param_value` must be null or point to `param_value_size` writable bytes; `param_value_size_ret`
/// must be null or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn clGetLayerInfo(
    param_name: cl_layer_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    let version = CL_LAYER_API_VERSION_100;
    let bytes: &[u8] = match param_name {
        // The loader skips a layer whose CL_LAYER_API_VERSION is not exactly 100.
        CL_LAYER_API_VERSION => {
            // SAFETY: a cl_uint is plain data; the slice covers exactly its bytes and lives
            // while `version` does (this whole function).
            unsafe {
                std::slice::from_raw_parts(
                    (&version as *const cl_uint).cast(),
                    size_of::<cl_uint>(),
                )
            }
        }
        CL_LAYER_NAME => LAYER_NAME,
        // CL_INVALID_VALUE if param_name is not one of the supported values.
        _ => return CL_INVALID_VALUE,
    };
    // SAFETY: the caller's pointers obey this function's contract, which `write_info` shares.
    match unsafe {
        crate::cl::info::write_bytes(bytes, param_value_size, param_value, param_value_size_ret)
    } {
        Ok(()) => CL_SUCCESS,
        Err(e) => e,
    }
}

/// Initialises the layer with the loader's (or the next layer's) dispatch table.
///
/// # Safety
/// `target_dispatch` must point to `num_entries` valid dispatch slots; the two return pointers
/// must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: forwarded contract.
        unsafe {
            init(
                num_entries,
                target_dispatch,
                num_entries_ret,
                layer_dispatch_ret,
            )
        }
    }))
    .unwrap_or(CL_OUT_OF_HOST_MEMORY)
}

/// As [`clInitLayer`], with a property list (required by newer Khronos loaders). The layer
/// defines no properties: any listed property is refused.
///
/// # Safety
/// As [`clInitLayer`]; `properties` is null or a 0-terminated list.
#[no_mangle]
pub unsafe extern "C" fn clInitLayerWithProperties(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
    properties: *const cl_layer_properties,
) -> cl_int {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller passes null or a 0-terminated list.
        if !properties.is_null() && unsafe { *properties } != 0 {
            // The layer knows no layer property, so any given one is an invalid value.
            return CL_INVALID_VALUE;
        }
        // SAFETY: forwarded contract.
        unsafe {
            init(
                num_entries,
                target_dispatch,
                num_entries_ret,
                layer_dispatch_ret,
            )
        }
    }))
    .unwrap_or(CL_OUT_OF_HOST_MEMORY)
}

/// Called by the loader when it unloads layers. The tables stay allocated (calls may still be in
/// flight); the side tables die with their objects (see `core::registry`).
#[no_mangle]
pub extern "C" fn clDeinitLayer() -> cl_int {
    CL_SUCCESS
}

/// # Safety
/// See [`clInitLayer`].
unsafe fn init(
    num_entries: cl_uint,
    target_dispatch: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    let entries = num_entries as usize;
    // The loader's rules: refuse a table too short to hold every slot the layer overrides.
    if target_dispatch.is_null()
        || num_entries_ret.is_null()
        || layer_dispatch_ret.is_null()
        || entries < api::intercept::REQUIRED_ENTRIES
    {
        return CL_INVALID_VALUE;
    }
    let copied = entries.min(TABLE_ENTRIES);
    // Copy the slots the target has; any slot past its end stays null ("not supported").
    let mut target: Box<cl_icd_dispatch> = Box::new(empty_table());
    // SAFETY: `target_dispatch` holds at least `entries >= copied` pointer-sized slots; the
    // destination is a whole table of TABLE_ENTRIES >= copied slots; they do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            target_dispatch.cast::<usize>(),
            (&mut *target as *mut cl_icd_dispatch).cast::<usize>(),
            copied,
        );
    }
    let mut layer = Box::new(*target);
    api::intercept::override_slots(&mut layer);
    // The layer never offers a slot the target did not have.
    truncate(&mut layer, copied);
    crate::cl::set_target(target);
    let layer = Box::into_raw(layer);
    LAYER.store(layer, Ordering::Release);
    // SAFETY: both checked non-null above; the caller guarantees they are writable.
    unsafe {
        *num_entries_ret = copied as cl_uint;
        *layer_dispatch_ret = layer;
    }
    CL_SUCCESS
}

fn empty_table() -> cl_icd_dispatch {
    // SAFETY: every field is an `Option` of a function pointer or an integer, for which all-zero
    // bytes are the valid value `None` / 0.
    unsafe { std::mem::zeroed() }
}

/// Clears every slot at index `len` and beyond.
fn truncate(table: &mut cl_icd_dispatch, len: usize) {
    let slots = (table as *mut cl_icd_dispatch).cast::<usize>();
    for i in len..TABLE_ENTRIES {
        // SAFETY: i < TABLE_ENTRIES, so the write stays inside the table; zero is a valid value
        // for every slot (see `empty_table`).
        unsafe { slots.add(i).write(0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_khronos_slot_count() {
        // 150 slots through clGetKernelSuggestedLocalWorkSize; ocl-icd 2.3.1 passes 149.
        assert_eq!(TABLE_ENTRIES, 150);
        const { assert!(api::intercept::REQUIRED_ENTRIES <= 149) };
    }

    #[test]
    fn layer_info_reports_version_100() {
        let mut v: cl_uint = 0;
        let mut size = 0usize;
        // SAFETY: valid out pointers of the right size.
        let r = unsafe {
            clGetLayerInfo(
                CL_LAYER_API_VERSION,
                4,
                (&mut v as *mut cl_uint).cast(),
                &mut size,
            )
        };
        assert_eq!((r, v, size), (CL_SUCCESS, 100, 4));
        // SAFETY: as above; a too-small buffer is refused before any write.
        let r = unsafe {
            clGetLayerInfo(
                CL_LAYER_API_VERSION,
                2,
                (&mut v as *mut cl_uint).cast(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_INVALID_VALUE);
        // SAFETY: null value pointer: size query only.
        let r = unsafe { clGetLayerInfo(0x1234, 0, null_mut(), null_mut()) };
        assert_eq!(r, CL_INVALID_VALUE);
    }

    #[test]
    fn init_refuses_short_tables_and_null_pointers() {
        let table = empty_table();
        let mut n = 0;
        let mut out: *const cl_icd_dispatch = std::ptr::null();
        // SAFETY: the table is a whole valid table; the loader contract holds.
        unsafe {
            assert_eq!(clInitLayer(10, &table, &mut n, &mut out), CL_INVALID_VALUE);
            assert_eq!(
                clInitLayer(149, std::ptr::null(), &mut n, &mut out),
                CL_INVALID_VALUE
            );
            assert_eq!(
                clInitLayer(149, &table, null_mut(), &mut out),
                CL_INVALID_VALUE
            );
        }
    }
}
