//! Extension strings: the four extension names are added to every platform and every device.
//!
//! Why every one: the staging-copy strategy works with any OpenCL device (it only needs
//! `clEnqueueRead/Write*`), so every device can share buffers with any D3D device. Texture sharing
//! additionally needs `CL_DEVICE_IMAGE_SUPPORT`; on a context without it, texture creation fails
//! with the platform's own image error. Which devices are *preferred* for a D3D device is the job
//! of `clGetDeviceIDsFromD3D1x*`.

use std::ffi::c_void;
use std::mem::size_of;

use opencl_sys::{
    cl_device_id, cl_device_info, cl_int, cl_name_version, cl_platform_id, cl_platform_info,
    CL_DEVICE_EXTENSIONS, CL_DEVICE_EXTENSIONS_WITH_VERSION, CL_NAME_VERSION_MAX_NAME_SIZE,
    CL_PLATFORM_EXTENSIONS, CL_PLATFORM_EXTENSIONS_WITH_VERSION,
};

use super::{down, status};
use crate::cl::info::{query_bytes, write_bytes};
use crate::core::tokens::EXTENSION_NAMES;

/// Version reported in the `*_WITH_VERSION` queries: 1.0.0.
const EXTENSION_VERSION: u32 = 1 << 22;

/// Appends the names missing from a space-separated extension string (NUL-terminated or not);
/// returns the new NUL-terminated string.
pub(crate) fn with_extension_names(original: &[u8]) -> Vec<u8> {
    let text = original.split(|&b| b == 0).next().unwrap_or(&[]);
    let text = String::from_utf8_lossy(text).into_owned();
    let mut out = text.trim_end().to_string();
    for name in EXTENSION_NAMES {
        if !text.split_ascii_whitespace().any(|n| n == name) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(name);
        }
    }
    let mut bytes = out.into_bytes();
    bytes.push(0);
    bytes
}

/// Appends the missing names to a `cl_name_version` array given as bytes.
pub(crate) fn with_extension_versions(original: &[u8]) -> Vec<u8> {
    let entry = size_of::<cl_name_version>();
    let mut out = original[..original.len() - original.len() % entry].to_vec();
    let present: Vec<String> = out
        .chunks(entry)
        .map(|c| {
            let name = &c[4..4 + CL_NAME_VERSION_MAX_NAME_SIZE];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect();
    for name in EXTENSION_NAMES {
        if present.iter().any(|p| p == name) {
            continue;
        }
        out.extend_from_slice(&EXTENSION_VERSION.to_ne_bytes());
        let mut field = [0u8; CL_NAME_VERSION_MAX_NAME_SIZE];
        field[..name.len()].copy_from_slice(name.as_bytes());
        out.extend_from_slice(&field);
    }
    out
}

pub(crate) unsafe extern "C" fn get_platform_info(
    platform: cl_platform_id,
    param_name: cl_platform_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetPlatformInfo);
        let edit: fn(&[u8]) -> Vec<u8> = match param_name {
            CL_PLATFORM_EXTENSIONS => with_extension_names,
            CL_PLATFORM_EXTENSIONS_WITH_VERSION => with_extension_versions,
            _ => {
                // SAFETY: every other query goes down unchanged with the caller's own arguments.
                return super::check(unsafe {
                    below(
                        platform,
                        param_name,
                        param_value_size,
                        param_value,
                        size_ret,
                    )
                });
            }
        };
        // SAFETY: size-query protocol on the platform below with buffers we own.
        let original = query_bytes(|n, p, r| unsafe { below(platform, param_name, n, p, r) })?;
        // SAFETY: the caller's buffers obey clGetPlatformInfo's contract.
        unsafe { write_bytes(&edit(&original), param_value_size, param_value, size_ret) }
    })
}

pub(crate) unsafe extern "C" fn get_device_info(
    device: cl_device_id,
    param_name: cl_device_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetDeviceInfo);
        let edit: fn(&[u8]) -> Vec<u8> = match param_name {
            CL_DEVICE_EXTENSIONS => with_extension_names,
            CL_DEVICE_EXTENSIONS_WITH_VERSION => with_extension_versions,
            _ => {
                // SAFETY: every other query goes down unchanged with the caller's own arguments.
                return super::check(unsafe {
                    below(device, param_name, param_value_size, param_value, size_ret)
                });
            }
        };
        // SAFETY: size-query protocol on the platform below with buffers we own.
        let original = query_bytes(|n, p, r| unsafe { below(device, param_name, n, p, r) })?;
        // SAFETY: the caller's buffers obey clGetDeviceInfo's contract.
        unsafe { write_bytes(&edit(&original), param_value_size, param_value, size_ret) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_added_once() {
        let s = with_extension_names(b"cl_khr_icd cl_nv_d3d10_sharing \0");
        assert_eq!(
            std::str::from_utf8(&s).unwrap(),
            "cl_khr_icd cl_nv_d3d10_sharing cl_khr_d3d10_sharing cl_khr_d3d11_sharing cl_nv_d3d11_sharing\0"
        );
        assert_eq!(with_extension_names(&s), s, "idempotent");
        assert_eq!(
            with_extension_names(b"\0").len(),
            EXTENSION_NAMES.join(" ").len() + 1
        );
    }

    #[test]
    fn versions_are_added_once() {
        let one = with_extension_versions(&[]);
        assert_eq!(one.len(), 4 * size_of::<cl_name_version>());
        assert_eq!(
            u32::from_ne_bytes(one[..4].try_into().unwrap()),
            EXTENSION_VERSION
        );
        assert_eq!(&one[4..4 + 20], b"cl_khr_d3d10_sharing");
        assert_eq!(with_extension_versions(&one), one);
    }
}
