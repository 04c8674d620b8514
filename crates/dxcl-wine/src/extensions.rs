//! Which extensions a Windows program sees. An extension with entry points reaches the program
//! only where the bridge wraps them (a host function called with the Windows calling convention
//! would crash), so the platform's and devices' extension lists keep those below and nothing else:
//! the four Direct3D sharing extensions (wrapped in wine/dxclcl) and extensions with no entry
//! points (kernel language, image and device-query features).

use std::ffi::c_void;

use crate::gen::{index, sig, MAX_ARGS};
use crate::host::Host;

const CL_INVALID_VALUE: i32 = -30;
const CL_PLATFORM_EXTENSIONS: u32 = 0x0904;
const CL_PLATFORM_EXTENSIONS_WITH_VERSION: u32 = 0x0907;
const CL_DEVICE_EXTENSIONS: u32 = 0x1030;
const CL_DEVICE_EXTENSIONS_WITH_VERSION: u32 = 0x1060;
/// `cl_name_version`: a `cl_version`, then a 64-byte name.
const NAME_VERSION_SIZE: usize = 68;

/// Extensions a Windows program may see.
const KEPT: &[&str] = &[
    "cl_khr_d3d10_sharing",
    "cl_khr_d3d11_sharing",
    "cl_nv_d3d10_sharing",
    "cl_nv_d3d11_sharing",
    "cl_khr_3d_image_writes",
    "cl_khr_byte_addressable_store",
    "cl_khr_depth_images",
    "cl_khr_device_uuid",
    "cl_khr_expect_assume",
    "cl_khr_extended_async_copies",
    "cl_khr_extended_bit_ops",
    "cl_khr_extended_versioning",
    "cl_khr_fp16",
    "cl_khr_fp64",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_image2d_from_buffer",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_integer_dot_product",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_mipmap_image",
    "cl_khr_mipmap_image_writes",
    "cl_khr_pci_bus_info",
    "cl_khr_priority_hints",
    "cl_khr_spir",
    "cl_khr_spirv_no_integer_wrap_decoration",
    "cl_khr_srgb_image_writes",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_rotate",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_throttle_hints",
    "cl_khr_work_group_uniform_arithmetic",
    "cl_ext_float_atomics",
    "cl_nv_compiler_options",
    "cl_nv_device_attribute_query",
    "cl_nv_pragma_unroll",
];

/// Whether a program sees extension `name`.
fn kept(name: &str) -> bool {
    KEPT.contains(&name)
}

/// A space-separated extension string, NUL-terminated, with only the kept names.
pub fn filter_string(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes.split(|b| *b == 0).next().unwrap_or(&[]));
    let mut out = text
        .split_whitespace()
        .filter(|n| kept(n))
        .collect::<Vec<_>>()
        .join(" ")
        .into_bytes();
    out.push(0);
    out
}

/// An array of `cl_name_version` with only the kept names.
pub fn filter_versions(bytes: &[u8]) -> Vec<u8> {
    bytes
        .chunks_exact(NAME_VERSION_SIZE)
        .filter(|e| {
            let name = &e[4..];
            let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
            kept(&String::from_utf8_lossy(&name[..end]))
        })
        .flatten()
        .copied()
        .collect()
}

/// `clGetPlatformInfo`/`clGetDeviceInfo` for an extension query: the host's answer, filtered,
/// returned with the size protocol of the core spec. `None` for other queries.
///
/// # Safety
/// The program's arguments of entry point `i`.
pub unsafe fn filtered_info(host: &Host, i: u32, a: &[u64; MAX_ARGS]) -> Option<i32> {
    let (object, param) = (a[0] as usize as *mut c_void, a[1] as u32);
    let versions = match (i, param) {
        (index::clGetPlatformInfo, CL_PLATFORM_EXTENSIONS)
        | (index::clGetDeviceInfo, CL_DEVICE_EXTENSIONS) => false,
        (index::clGetPlatformInfo, CL_PLATFORM_EXTENSIONS_WITH_VERSION)
        | (index::clGetDeviceInfo, CL_DEVICE_EXTENSIONS_WITH_VERSION) => true,
        _ => return None,
    };
    let f = host.function(i);
    if f.is_null() {
        return None;
    }
    // SAFETY: clGetPlatformInfo and clGetDeviceInfo share this signature (CL/cl.h).
    let get: sig::clGetDeviceInfo = unsafe { std::mem::transmute(f) };
    let mut size = 0usize;
    // SAFETY: a size query with our own out pointer; the host validates the object.
    let r = unsafe {
        get(
            object,
            param,
            0,
            std::ptr::null_mut(),
            (&mut size as *mut usize).cast(),
        )
    };
    if r != 0 {
        return Some(r);
    }
    let mut raw = vec![0u8; size];
    // SAFETY: our buffer holds `size` bytes.
    let r = unsafe {
        get(
            object,
            param,
            size,
            raw.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return Some(r);
    }
    let out = if versions {
        filter_versions(&raw)
    } else {
        filter_string(&raw)
    };
    let (value_size, value, size_ret) = (a[2] as usize, a[3] as usize, a[4] as usize);
    if value != 0 {
        // CL_INVALID_VALUE "if size in bytes specified by param_value_size is < size of return type".
        if value_size < out.len() {
            return Some(CL_INVALID_VALUE);
        }
        // SAFETY: the program's buffer holds value_size >= out.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), value as *mut u8, out.len()) };
    }
    if size_ret != 0 {
        // SAFETY: the program's size_t out pointer.
        unsafe { *(size_ret as *mut usize) = out.len() };
    }
    Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_keep_sharing_and_function_free_extensions() {
        let all = b"cl_khr_icd cl_khr_fp64 cl_khr_d3d11_sharing cl_khr_gl_sharing\0";
        assert_eq!(filter_string(all), b"cl_khr_fp64 cl_khr_d3d11_sharing\0");
        assert_eq!(filter_string(b"\0"), b"\0");
    }

    #[test]
    fn versioned_lists_keep_the_same_names() {
        let entry = |v: u32, n: &str| {
            let mut e = v.to_ne_bytes().to_vec();
            let mut name = n.as_bytes().to_vec();
            name.resize(64, 0);
            e.extend(name);
            e
        };
        let mut list = entry(1, "cl_khr_icd");
        list.extend(entry(2, "cl_nv_d3d10_sharing"));
        assert_eq!(filter_versions(&list), entry(2, "cl_nv_d3d10_sharing"));
    }
}
