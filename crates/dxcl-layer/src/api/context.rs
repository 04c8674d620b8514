//! Context creation with `CL_CONTEXT_D3D1x_DEVICE_*` and the context queries.

use std::ffi::{c_char, c_void};

use opencl_sys::{
    cl_bool, cl_context, cl_context_info, cl_context_properties, cl_device_id, cl_device_type,
    cl_int, cl_platform_id, cl_uint, CL_CONTEXT_DEVICES, CL_CONTEXT_INTEROP_USER_SYNC,
    CL_CONTEXT_PLATFORM, CL_CONTEXT_PROPERTIES, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_DEVICE_PLATFORM,
    CL_FALSE, CL_INVALID_OPERATION, CL_INVALID_PROPERTY, CL_SUCCESS,
};

use super::{check, down, object, status};
use crate::cl::info::{query_bytes, query_value, write_bytes, write_value};
use crate::core::tokens::D3dVersion;
use crate::d3d;
use crate::registry::{self, key, ContextEntry};

type Notify = Option<unsafe extern "C" fn(*const c_char, *const c_void, usize, *mut c_void)>;

/// Property names of other graphics APIs: with a D3D device they make the context
/// CL_INVALID_OPERATION. GL (CL_GL_CONTEXT_KHR, CL_EGL_DISPLAY_KHR, CL_GLX_DISPLAY_KHR,
/// CL_WGL_HDC_KHR, CL_CGL_SHAREGROUP_KHR), DX9 media adapters (CL_CONTEXT_ADAPTER_D3D9_KHR,
/// ..D3D9EX_KHR, ..DXVA_KHR) and Intel's D3D9 devices (CL_CONTEXT_D3D9_DEVICE_INTEL,
/// CL_CONTEXT_D3D9EX_DEVICE_INTEL, CL_CONTEXT_DXVA_DEVICE_INTEL).
const OTHER_GRAPHICS_APIS: [isize; 11] = [
    0x2008, 0x2009, 0x200A, 0x200B, 0x200C, 0x2025, 0x2026, 0x2027, 0x4026, 0x4072, 0x4073,
];

/// A property list as the application gave it, with the D3D facts taken out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Properties {
    /// The application's list, terminator included (empty for a null list).
    pub original: Vec<isize>,
    /// What the platform gets: the D3D device properties removed.
    pub stripped: Vec<isize>,
    pub d3d: Option<(D3dVersion, usize)>,
    /// Every D3D device property named, NULL values included (stripped all the same).
    pub d3d_named: Vec<D3dVersion>,
    pub user_sync: bool,
    pub platform: Option<usize>,
}

/// Parses and checks a property list.
///
/// # Safety
/// `properties` is null or a 0-terminated list of (name, value) pairs.
pub(crate) unsafe fn parse(properties: *const cl_context_properties) -> Result<Properties, cl_int> {
    let mut p = Properties {
        original: vec![],
        stripped: vec![],
        d3d: None,
        d3d_named: Vec::new(),
        user_sync: false,
        platform: None,
    };
    if properties.is_null() {
        return Ok(p);
    }
    let mut other_graphics = false;
    let mut i = 0;
    loop {
        // SAFETY: the list is 0-terminated and we stop at the terminator.
        let name = unsafe { *properties.add(i) };
        if name == 0 {
            break;
        }
        // SAFETY: a non-zero name is followed by its value.
        let value = unsafe { *properties.add(i + 1) };
        i += 2;
        p.original.extend([name, value]);
        if let Some(v) = D3dVersion::ALL
            .into_iter()
            .find(|v| v.context_property() == name)
        {
            // CL_INVALID_PROPERTY "if the same property name is specified more than once".
            if p.d3d_named.contains(&v) {
                return Err(CL_INVALID_PROPERTY);
            }
            p.d3d_named.push(v);
            // NULL is the property's default ("If a property is not specified in properties, then
            // its default value (listed in table 4.4) is used"): no D3D device, nothing to share.
            if value == 0 {
                continue;
            }
            if p.d3d.is_some() {
                // CL_INVALID_OPERATION "if Direct3D 1x interoperability is specified by setting
                // CL_CONTEXT_D3D1x_DEVICE to a non-NULL value, and interoperability with another
                // graphics API is also specified" (D3D10 and D3D11 together).
                return Err(CL_INVALID_OPERATION);
            }
            p.d3d = Some((v, value as usize));
            continue;
        }
        if OTHER_GRAPHICS_APIS.contains(&name) && value != 0 {
            other_graphics = true;
        }
        if name == CL_CONTEXT_INTEROP_USER_SYNC {
            // CL_INVALID_PROPERTY "if the value specified for a supported property name is not
            // valid": this one is a cl_bool.
            if value != CL_FALSE as isize && value != opencl_sys::CL_TRUE as isize {
                return Err(CL_INVALID_PROPERTY);
            }
            p.user_sync = value != CL_FALSE as isize;
        }
        if name == CL_CONTEXT_PLATFORM {
            p.platform = Some(value as usize);
        }
        p.stripped.extend([name, value]);
    }
    p.original.push(0);
    if p.d3d.is_some() {
        // The layer implements CL_CONTEXT_INTEROP_USER_SYNC for its D3D sharing, and some
        // platforms refuse the property in a context without interop of their own (NVIDIA:
        // CL_INVALID_VALUE), so it goes with the D3D property.
        p.stripped = p
            .stripped
            .chunks_exact(2)
            .filter(|kv| kv[0] != CL_CONTEXT_INTEROP_USER_SYNC)
            .flatten()
            .copied()
            .collect();
    }
    p.stripped.push(0);
    if p.d3d.is_some() && other_graphics {
        // CL_INVALID_OPERATION "if Direct3D 1x interoperability is specified ... and
        // interoperability with another graphics API is also specified".
        return Err(CL_INVALID_OPERATION);
    }
    Ok(p)
}

pub(crate) unsafe extern "C" fn create_context(
    properties: *const cl_context_properties,
    num_devices: cl_uint,
    devices: *const cl_device_id,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: errcode_ret is the caller's; the closure forwards the caller's arguments.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clCreateContext);
            create(properties, |props, err| {
                below(props, num_devices, devices, pfn_notify, user_data, err)
            })
        })
    }
}

pub(crate) unsafe extern "C" fn create_context_from_type(
    properties: *const cl_context_properties,
    device_type: cl_device_type,
    pfn_notify: Notify,
    user_data: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    // SAFETY: as in create_context.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clCreateContextFromType);
            create(properties, |props, err| {
                below(props, device_type, pfn_notify, user_data, err)
            })
        })
    }
}

/// # Safety
/// `properties` obeys clCreateContext's contract; `make` calls the platform below.
unsafe fn create(
    properties: *const cl_context_properties,
    make: impl FnOnce(*const cl_context_properties, *mut cl_int) -> cl_context,
) -> Result<cl_context, cl_int> {
    // SAFETY: caller's contract.
    let props = unsafe { parse(properties) }?;
    let Some((version, device_ptr)) = props.d3d else {
        if props.d3d_named.is_empty() {
            // No D3D property: the platform sees the application's list untouched.
            let mut err = 0;
            let ctx = make(properties, &mut err);
            check(err)?;
            return Ok(ctx);
        }
        // Only NULL D3D devices: a plain context. The platform must not see the D3D property,
        // and CL_CONTEXT_PROPERTIES still answers the application's list.
        let mut err = 0;
        let ctx = make(props.stripped.as_ptr(), &mut err);
        check(err)?;
        registry::with(|r| {
            r.plain_properties.insert(key(ctx), props.original.clone());
            r.track_context(key(ctx));
        });
        return Ok(ctx);
    };
    // CL_INVALID_D3D1x_DEVICE "if the value of the property CL_CONTEXT_D3D1x_DEVICE is non-NULL and
    // does not specify a valid Direct3D 1x device": the value is "a pointer to ID3D1xDevice",
    // not another interface of an object that also has one (open_exact).
    // SAFETY: a non-null value of this property is an application's COM pointer.
    let device = unsafe { d3d::device::open_exact(version, device_ptr as *mut c_void) }
        .ok_or(version.invalid_device())?;
    let mut err = 0;
    let ctx = make(props.stripped.as_ptr(), &mut err);
    check(err)?;
    match register(ctx, version, device, &props) {
        Ok(()) => Ok(ctx),
        Err(e) => {
            if let Some(release) = crate::cl::target().and_then(|t| t.clReleaseContext) {
                // SAFETY: ctx is the live context we just created and nobody else holds.
                unsafe { release(ctx) };
            }
            Err(e)
        }
    }
}

fn register(
    ctx: cl_context,
    version: D3dVersion,
    device: d3d::device::Device,
    props: &Properties,
) -> Result<(), cl_int> {
    let get_info = down!(clGetContextInfo);
    let dev_info = down!(clGetDeviceInfo);
    // SAFETY: size-query protocol on a live context with our own buffers.
    let bytes = query_bytes(|n, p, r| unsafe { get_info(ctx, CL_CONTEXT_DEVICES, n, p, r) })?;
    let devices: Vec<usize> = bytes
        .chunks_exact(size_of_ptr())
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()))
        .collect();
    let platform = match props.platform {
        Some(p) => p,
        // SAFETY: a device of a live context, our own buffer.
        None => query_value::<usize>(|n, p, r| unsafe {
            dev_info(devices[0] as cl_device_id, CL_DEVICE_PLATFORM, n, p, r)
        })?,
    };
    // CL_INVALID_D3D1x_DEVICE "if the Direct3D 1x device specified for interoperability is not
    // compatible with the devices against which the context is to be created".
    let compatible = super::devices::interoperable(version, &device, platform as cl_platform_id)?;
    if devices.iter().any(|d| !compatible.contains(d)) {
        return Err(version.invalid_device());
    }
    let mut host_unified = true;
    for d in &devices {
        // SAFETY: a device of a live context, our own buffer.
        let unified: cl_bool = query_value(|n, p, r| unsafe {
            dev_info(*d as cl_device_id, CL_DEVICE_HOST_UNIFIED_MEMORY, n, p, r)
        })
        .unwrap_or(CL_FALSE);
        host_unified &= unified != CL_FALSE;
    }
    let entry = ContextEntry {
        version,
        validation: crate::validate::DeviceMark::new(&device.com),
        identity: device.identity,
        device: Some(device.com),
        user_sync: props.user_sync,
        properties: props.original.clone(),
        host_unified,
    };
    registry::with(|r| r.insert_context(key(ctx), entry));
    crate::cl::exit::watch();
    Ok(())
}

/// `clRetainContext`: forwards, and counts the application's reference.
pub(crate) unsafe extern "C" fn retain_context(context: cl_context) -> cl_int {
    status(|| {
        let below = down!(clRetainContext);
        // SAFETY: argument forwarded unchanged.
        let result = unsafe { below(context) };
        if result == CL_SUCCESS {
            registry::with(|r| r.context_retained(key(context)));
        }
        check(result)
    })
}

/// `clReleaseContext`: forwards, and at the application's last reference releases the D3D
/// device: "The Direct3D 1x reference count is decremented when the OpenCL reference count on
/// the returned OpenCL context drops to zero." The count is the application's, kept here, not
/// the platform's (which may include its own references, or be read only after the fact).
pub(crate) unsafe extern "C" fn release_context(context: cl_context) -> cl_int {
    status(|| {
        let below = down!(clReleaseContext);
        // Before the release: what the layer still holds of this context for a completion
        // callback that never came, or for a polled watch whose event has ended, goes first,
        // its events before their queues.
        crate::cl::events::run_overdue_callbacks();
        // SAFETY: argument forwarded unchanged.
        let result = unsafe { below(context) };
        // The semaphore pool's CL semaphores hold the platform's context alive: closing the pool
        // at the application's last reference lets the platform destroy it.
        if result == CL_SUCCESS && registry::context_released(key(context)) {
            crate::strategy::external::sync::close_pool(context);
            if crate::validate::on() {
                crate::validate::context_released(key(context), still_acquired(key(context)));
            }
        }
        check(result)
    })
}

/// The context's memory objects the application holds acquired (validation).
fn still_acquired(context: usize) -> Vec<crate::validate::StillAcquired> {
    registry::with(|r| {
        r.mems
            .iter()
            .filter(|(_, e)| {
                e.context == context
                    && e.acquire.state() == crate::registry::AcquireState::Acquired
                    && !e.app_released
            })
            .map(|(&mem, e)| crate::validate::StillAcquired {
                mem,
                ext: e.acquire.acquired_by().unwrap_or(crate::core::tokens::Ext {
                    version: e.version,
                    flavor: crate::core::tokens::Flavor::Khr,
                }),
                kind: e.kind,
                subresource: e.subresource,
                app_resource: e.app_resource,
                // An AddRef, released outside the lock with the report.
                resource: e.resource.clone(),
            })
            .collect()
    })
}

fn size_of_ptr() -> usize {
    std::mem::size_of::<usize>()
}

pub(crate) unsafe extern "C" fn get_context_info(
    context: cl_context,
    param_name: cl_context_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetContextInfo);
        enum Answer {
            Properties(Vec<isize>),
            PreferShared,
        }
        let answer = registry::with(|r| {
            if param_name == CL_CONTEXT_PROPERTIES {
                if let Some(list) = r.plain_properties.get(&key(context)) {
                    return Some(Answer::Properties(list.clone()));
                }
            }
            let e = r.contexts.get(&key(context))?;
            if param_name == CL_CONTEXT_PROPERTIES {
                Some(Answer::Properties(e.properties.clone()))
            } else if param_name == e.version.prefer_shared_query() {
                Some(Answer::PreferShared)
            } else {
                None
            }
        });
        match answer {
            // "CL_CONTEXT_PROPERTIES: the properties argument specified in clCreateContext".
            Some(Answer::Properties(list)) => {
                // SAFETY: a Vec<isize> is plain data; the slice covers it exactly.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        list.as_ptr().cast::<u8>(),
                        list.len() * size_of_ptr(),
                    )
                };
                // SAFETY: caller's buffers per clGetContextInfo.
                unsafe { write_bytes(bytes, param_value_size, param_value, size_ret) }
            }
            // CL_TRUE only "if Direct3D 1x resources created as shared by setting MiscFlags to
            // include D3D1x_RESOURCE_MISC_SHARED will perform faster when shared with OpenCL": both
            // strategies treat shared and unshared resources alike, so it is CL_FALSE.
            // SAFETY: caller's buffers per clGetContextInfo.
            Some(Answer::PreferShared) => unsafe {
                write_value::<cl_bool>(CL_FALSE, param_value_size, param_value, size_ret)
            },
            // SAFETY: every other query goes down unchanged with the caller's arguments.
            None => check(unsafe {
                below(context, param_name, param_value_size, param_value, size_ret)
            }),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_list(list: &[isize]) -> Result<Properties, cl_int> {
        // SAFETY: test lists are 0-terminated.
        unsafe { parse(list.as_ptr()) }
    }

    #[test]
    fn d3d_properties_are_stripped_and_the_rest_kept() {
        let p = parse_list(&[0x1084, 7, 0x401D, 0x1000, 0x1085, 1, 0]).unwrap();
        assert_eq!(p.original, vec![0x1084, 7, 0x401D, 0x1000, 0x1085, 1, 0]);
        // USER_SYNC (0x1085) is the layer's own with a D3D device: not passed down.
        assert_eq!(p.stripped, vec![0x1084, 7, 0]);
        assert_eq!(p.d3d, Some((D3dVersion::D3D11, 0x1000)));
        assert!(p.user_sync);
        assert_eq!(p.platform, Some(7));
        let p = parse_list(&[0x4014, 0x2000, 0x1085, 0, 0]).unwrap();
        assert_eq!(
            (p.d3d, p.user_sync),
            (Some((D3dVersion::D3D10, 0x2000)), false)
        );
    }

    #[test]
    fn two_graphics_apis_are_an_invalid_operation() {
        assert_eq!(
            parse_list(&[0x4014, 1, 0x401D, 2, 0]),
            Err(CL_INVALID_OPERATION)
        );
        for other in OTHER_GRAPHICS_APIS {
            assert_eq!(
                parse_list(&[0x401D, 1, other, 5, 0]),
                Err(CL_INVALID_OPERATION)
            );
            // A NULL value names no other API.
            assert!(parse_list(&[0x401D, 1, other, 0, 0]).is_ok());
        }
        assert_eq!(
            parse_list(&[0x401D, 1, 0x401D, 1, 0]),
            Err(CL_INVALID_PROPERTY)
        );
    }

    #[test]
    fn null_list_is_empty() {
        // SAFETY: null is allowed.
        let p = unsafe { parse(std::ptr::null()) }.unwrap();
        assert!(p.original.is_empty() && p.d3d.is_none());
    }
}
