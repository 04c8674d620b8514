//! `clCreateFromD3D1x{Buffer,Texture2D,Texture3D}{KHR,NV}`, the D3D memory queries, and
//! sub-buffers of D3D buffers.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use opencl_sys::{
    cl_buffer_create_type, cl_context, cl_image_format, cl_image_info, cl_int, cl_mem,
    cl_mem_flags, cl_mem_info, cl_mem_object_type, cl_uint, CL_IMAGE_FORMAT, CL_INVALID_CONTEXT,
    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_INVALID_VALUE, CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE3D, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_TYPE, CL_MEM_WRITE_ONLY,
};

use super::{check, down, status};
use crate::cl::info::{query_bytes, query_value, write_value};
use crate::core::format;
use crate::core::signal::Signal;
use crate::core::tokens::{D3dVersion, Ext, ResourceKind};
use crate::d3d::resource;
use crate::registry::{self, key, MemEntry};
use crate::strategy::{self, Strategy};

/// D3D11_USAGE_IMMUTABLE and D3D10_USAGE_IMMUTABLE (the same value in both SDKs).
const USAGE_IMMUTABLE: i32 = 1;

/// Size of a mip level: `max(1, size >> mip)`.
pub(crate) fn mip_size(size: u32, mip: u32) -> u32 {
    size.checked_shr(mip).unwrap_or(0).max(1)
}

/// The mip level a subresource index names, or `None` past the last subresource.
pub(crate) fn subresource_mip(
    kind: ResourceKind,
    mip_levels: u32,
    array_size: u32,
    sub: u32,
) -> Option<u32> {
    let count = match kind {
        ResourceKind::Buffer => 1,
        ResourceKind::Texture2D => mip_levels.checked_mul(array_size)?,
        ResourceKind::Texture3D => mip_levels,
    };
    (sub < count).then(|| sub % mip_levels.max(1))
}

/// Checks the memory flags: only READ_ONLY, WRITE_ONLY or READ_WRITE; 0 means read-write.
pub(crate) fn check_flags(flags: cl_mem_flags) -> Result<cl_mem_flags, cl_int> {
    let access = CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE;
    // CL_INVALID_VALUE "if values specified in flags are not valid": "Only CL_MEM_READ_ONLY,
    // CL_MEM_WRITE_ONLY and CL_MEM_READ_WRITE values ... can be used", and one at a time.
    if flags & !access != 0 || (flags & access).count_ones() > 1 {
        return Err(CL_INVALID_VALUE);
    }
    Ok(if flags == 0 { CL_MEM_READ_WRITE } else { flags })
}

/// The body of the twelve create functions.
///
/// # Safety
/// `res` is null or the application's pointer to a COM object.
pub(crate) unsafe fn create_from(
    ext: Ext,
    kind: ResourceKind,
    context: cl_context,
    flags: cl_mem_flags,
    res: *mut c_void,
    subresource: cl_uint,
) -> Result<cl_mem, cl_int> {
    let v = ext.version;
    // CL_INVALID_CONTEXT "if context is not a valid context" or was not created from a D3D1x
    // device ("OpenCL memory objects may be created from Direct3D 1x objects if and only if the
    // OpenCL context has been created from a Direct3D 1x device").
    let (ctx_identity, host_unified, ctx_device) = registry::with(|r| {
        r.contexts
            .get(&key(context))
            .filter(|c| c.version == v)
            .and_then(|c| Some((c.identity, c.host_unified, c.device.clone()?)))
    })
    .ok_or(CL_INVALID_CONTEXT)?;
    let flags = check_flags(flags)?;
    // CL_INVALID_D3D1x_RESOURCE "if resource is not a Direct3D 1x buffer/texture resource".
    // SAFETY: caller's contract.
    let r = unsafe { resource::open(v, kind, res) }.ok_or(v.invalid_resource())?;
    let d = r.desc;
    // CL_INVALID_D3D1x_RESOURCE "if resource was created with the D3D1x_USAGE flag
    // D3D1x_USAGE_IMMUTABLE".
    if d.usage == USAGE_IMMUTABLE {
        return Err(v.invalid_resource());
    }
    // CL_INVALID_D3D1x_RESOURCE "if a resource is a multisampled texture".
    if d.sample_count > 1 {
        return Err(v.invalid_resource());
    }
    // CL_INVALID_D3D1x_RESOURCE "if context was not created against the same Direct3D 1x device
    // from which resource was created".
    if r.device_identity != ctx_identity {
        return Err(v.invalid_resource());
    }
    // CL_INVALID_VALUE "if subresource is not a valid subresource index for resource".
    let sub = if kind == ResourceKind::Buffer {
        0
    } else {
        subresource
    };
    let mip = subresource_mip(kind, d.mip_levels, d.array_size, sub).ok_or(CL_INVALID_VALUE)?;
    let reg_key = (r.identity, sub);
    // CL_INVALID_D3D1x_RESOURCE "if a cl_mem from (subresource subresource of) resource has
    // already been created": checked once, and held until the new object's entry is in.
    let claim = registry::Claim::take(reg_key).ok_or(v.invalid_resource())?;
    let image = match kind {
        ResourceKind::Buffer => None,
        _ => Some(image_format(ext, context, flags, kind, d.format)?),
    };
    let (width, height, depth) = match kind {
        ResourceKind::Buffer => (d.byte_width, 1, 1),
        ResourceKind::Texture2D => (mip_size(d.width, mip), mip_size(d.height, mip), 1),
        ResourceKind::Texture3D => (
            mip_size(d.width, mip),
            mip_size(d.height, mip),
            mip_size(d.depth, mip),
        ),
    };

    let shared = strategy::share(&strategy::Request {
        version: v,
        kind,
        context,
        flags,
        resource: &r,
        subresource: sub,
        mip,
        extent: (width, height, depth),
        image,
        host_unified,
        device: &ctx_device,
    })?;
    Ok(register(
        RegisterArgs {
            ext,
            kind,
            context,
            res,
            resource: r.com,
            reg_key,
            sub,
        },
        claim,
        shared,
    ))
}

/// What a new memory object's registry entry records.
struct RegisterArgs {
    ext: Ext,
    kind: ResourceKind,
    context: cl_context,
    res: *mut c_void,
    resource: crate::d3d::com::ComPtr,
    reg_key: (usize, u32),
    sub: u32,
}

/// Records a new memory object under its claim and hooks its destruction.
fn register(a: RegisterArgs, claim: registry::Claim, shared: strategy::Shared) -> cl_mem {
    let mem = shared.mem;
    let tagged = shared.strategy.decision().strategy;
    let tag = a.resource.clone();
    let validation =
        crate::validate::AccessMark::new(&a.resource, a.sub, a.ext.create_call(a.kind));
    let entry = MemEntry {
        context: key(a.context),
        version: a.ext.version,
        kind: a.kind,
        app_resource: a.res as usize,
        sharing: shared.strategy,
        validation: validation.map(Arc::new),
        resource: a.resource,
        key: a.reg_key,
        subresource: a.sub,
        acquire: Default::default(),
        app_released: false,
    };
    claim.register(key(mem), entry);
    app_refs(|m| m.insert(key(mem), 1));
    tag_strategy(a.ext.version, &tag, tagged);
    super::watch_destruction(mem, mem_destroyed);
    mem
}

/// Names the strategy on the resource (`DXCL_PRIVATE_DATA_CL_STRATEGY`), so tools can show how
/// an object is shared where the platform's own queries cannot tell (NVIDIA answers no
/// `CL_MEM_PROPERTIES` for an imported buffer). Best effort: a resource that refuses private
/// data just goes untagged.
fn tag_strategy(version: D3dVersion, resource: &crate::d3d::com::ComPtr, strategy: Strategy) {
    let guid = dxcl_abi::interop::DXCL_PRIVATE_DATA_CL_STRATEGY;
    let name = strategy.name();
    // ID3D10DeviceChild and ID3D11DeviceChild: the same method, typed per version.
    macro_rules! set_on {
        ($child:ty) => {
            if let Some(child) = resource.query::<$child>() {
                let p = child.as_ptr();
                // SAFETY: a live device child; the GUID and the name outlive the call, which
                // copies the bytes.
                unsafe {
                    ((*(*p).lpVtbl).SetPrivateData)(
                        p,
                        &guid,
                        name.len() as u32,
                        name.as_ptr().cast(),
                    )
                };
            }
        };
    }
    match version {
        D3dVersion::D3D11 => set_on!(dxcl_abi::ID3D11DeviceChild),
        D3dVersion::D3D10 => set_on!(dxcl_abi::ID3D10DeviceChild),
    }
}

/// The CL format and image type of a texture, with the format checks.
fn image_format(
    ext: Ext,
    context: cl_context,
    flags: cl_mem_flags,
    kind: ResourceKind,
    dxgi: i32,
) -> Result<(cl_image_format, cl_mem_object_type), cl_int> {
    let image_type = if kind == ResourceKind::Texture3D {
        CL_MEM_OBJECT_IMAGE3D
    } else {
        CL_MEM_OBJECT_IMAGE2D
    };
    // CL_INVALID_IMAGE_FORMAT_DESCRIPTOR "if the Direct3D 1x texture format of resource is not
    // listed in" the table.
    let fmt = format::lookup(dxgi, ext.flavor).ok_or(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    {
        let get = down!(clGetSupportedImageFormats);
        let mut n: cl_uint = 0;
        // SAFETY: count query on a valid context.
        check(unsafe { get(context, flags, image_type, 0, std::ptr::null_mut(), &mut n) })?;
        let mut list = vec![
            cl_image_format {
                image_channel_order: 0,
                image_channel_data_type: 0
            };
            n as usize
        ];
        if n > 0 {
            // SAFETY: our buffer holds n formats.
            check(unsafe {
                get(
                    context,
                    flags,
                    image_type,
                    n,
                    list.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            })?;
        }
        if !list.iter().any(|f| {
            f.image_channel_order == fmt.image_channel_order
                && f.image_channel_data_type == fmt.image_channel_data_type
        }) {
            // A table format the context's devices lack, both flavours: the core rule for
            // creating an image, CL_IMAGE_FORMAT_NOT_SUPPORTED "if the image_format is not
            // supported". NV names no error of its own for it. KHR's "or if the Direct3D 1x
            // texture format of resource does not map to a supported OpenCL image format" is
            // read as the table's mapping (the format has no OpenCL counterpart): the Khronos
            // CTS takes CL_IMAGE_FORMAT_NOT_SUPPORTED as "the device lacks the format, skip"
            // and fails on any other error (docs/errors.md, "Formats the device lacks").
            return Err(opencl_sys::CL_IMAGE_FORMAT_NOT_SUPPORTED);
        }
    }
    Ok((fmt, image_type))
}

/// The platform destroyed a D3D memory object: its entries go, unless [`release_mem_object`]
/// dropped them already or the process is exiting ([`crate::core::exit::in_callback`]).
unsafe extern "C" fn mem_destroyed(mem: cl_mem, user_data: *mut c_void) {
    let watch = registry::Removal::Watch(user_data as usize);
    crate::core::exit::in_callback(|| drop_entries(mem, watch));
}

/// The application's own references to D3D memory objects, which the platform's count exceeds
/// while commands are in flight: at the application's last release the resource reference can
/// go at once when the strategy keeps no pointer into the resource's memory, and the resource
/// can be shared again in any case.
static APP_REFS: Mutex<Option<std::collections::HashMap<usize, u32>>> = Mutex::new(None);

fn app_refs<R>(f: impl FnOnce(&mut std::collections::HashMap<usize, u32>) -> R) -> R {
    let mut g = APP_REFS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(std::collections::HashMap::new))
}

/// `clRetainMemObject`: counts the application's references of the objects above.
pub(crate) unsafe extern "C" fn retain_mem_object(mem: cl_mem) -> cl_int {
    status(|| {
        let below = down!(clRetainMemObject);
        // SAFETY: argument forwarded unchanged.
        let result = unsafe { below(mem) };
        if result == opencl_sys::CL_SUCCESS {
            app_refs(|m| {
                if let Some(n) = m.get_mut(&key(mem)) {
                    *n += 1;
                }
            });
        }
        check(result)
    })
}

/// Drops a D3D memory object's entries (the resource reference); a late destructor callback
/// whose watch is no longer the handle's drops nothing.
fn drop_entries(mem: cl_mem, how: registry::Removal) {
    if registry::drop_mem(key(mem), how) {
        app_refs(|m| m.remove(&key(mem)));
    }
}

/// `clReleaseMemObject`: forwards, and when that was the application's last reference to a D3D
/// object nothing else aliases, drops the resource reference at once. The destructor callback
/// may run much later (NVIDIA defers it), and "the Direct3D resource's reference count is
/// decremented when the OpenCL memory object is destroyed" should hold when the application
/// can observe it.
pub(crate) unsafe extern "C" fn release_mem_object(mem: cl_mem) -> cl_int {
    status(|| {
        let below = down!(clReleaseMemObject);
        let tracked = registry::with(|r| {
            r.mems.contains_key(&key(mem))
                && !r.sub_buffers.values().any(|&p| p == key(mem))
                && !r.derived.values().any(|&p| p == key(mem))
        });
        let count_before = if tracked {
            let info = down!(clGetMemObjectInfo);
            // SAFETY: our own buffer; an invalid object just fails the query.
            query_value::<cl_uint>(|n, p, r| unsafe {
                info(mem, opencl_sys::CL_MEM_REFERENCE_COUNT, n, p, r)
            })
            .ok()
        } else {
            None
        };
        let app_last = app_refs(|m| m.get(&key(mem)) == Some(&1));
        let aliases = registry::with(|r| {
            r.mems
                .get(&key(mem))
                .is_some_and(|e| e.sharing.aliases_resource_memory())
        });
        // "The internal Direct3D reference count on resource will be decremented when the OpenCL
        // reference count on the returned OpenCL memory object drops to zero": the application's
        // last release drops the resource reference. When the platform still holds the object
        // for commands in flight and the strategy uses the resource's memory in place, that
        // memory is kept (without a reference) until the platform destroys the object.
        let dropping = tracked && (count_before == Some(1) || app_last);
        let keeping = dropping && count_before != Some(1) && aliases;
        // A D3D object with sub-buffers or derived objects lives on below the layer after the
        // application's last reference: its entry waits for the platform's destruction, but its
        // hand-offs are over all the same. What the strategy holds for them must go now: a
        // staging write-back waiting for Direct3D's next access holds its read-back's event,
        // and with it the context, until that access, which may never come (the fuzzer's
        // staging context leak: tests/fuzz/regressions, a sub-buffer of a shared buffer).
        let ending = dropping || app_last && registry::with(|r| r.mems.contains_key(&key(mem)));
        // This thread drops the entries: the destructor callback, which may run on the
        // platform's thread as soon as the object goes below (NVIDIA), must not take them
        // first and release the resource after this call has returned. It only sets the
        // signal the kept memory waits for, which must be in place before the release below.
        if ending {
            // The strategy lets go of what it holds for hand-offs; an object still acquired
            // is handed back to the platform first.
            let held = registry::with(|r| {
                r.mems.get(&key(mem)).map(|e| {
                    (
                        e.sharing.clone(),
                        e.acquire.state() == registry::AcquireState::Acquired,
                    )
                })
            });
            if let Some((sharing, acquired)) = held {
                sharing.let_go(mem, acquired);
            }
        }
        let retired = dropping.then(|| registry::retire_watch(key(mem))).flatten();
        let destroyed = retired.filter(|_| keeping).map(|n| {
            let signal = Arc::new(Signal::default());
            registry::with(|r| r.destroyed.insert(n, signal.clone()));
            signal
        });
        // SAFETY: argument forwarded unchanged.
        let result = unsafe { below(mem) };
        if result != opencl_sys::CL_SUCCESS {
            if let Some(n) = retired {
                registry::with(|r| r.destroyed.remove(&n));
                registry::restore_watch(key(mem), n);
            }
            return check(result);
        }
        app_refs(|m| match m.get_mut(&key(mem)) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                m.remove(&key(mem));
            }
            None => {}
        });
        let sharing = registry::with(|r| r.mems.get(&key(mem)).map(|e| e.sharing.clone()));
        match (destroyed, sharing) {
            (Some(signal), Some(sharing)) if !sharing.keep_memory_until(signal.clone()) => {
                // The runtime cannot wait for the platform: the entry, and the reference, wait
                // for the destructor callback instead (unless it already ran); the application
                // is done with the object all the same.
                if let Some(n) = retired.filter(|_| !signal.is_set()) {
                    registry::restore_watch(key(mem), n);
                    // For the application the object is gone: so it is for validation.
                    let mark = registry::with(|r| {
                        r.destroyed.remove(&n);
                        r.mems.get_mut(&key(mem)).and_then(|e| {
                            e.app_released = true;
                            e.validation.take()
                        })
                    });
                    drop(mark);
                } else {
                    drop_entries(mem, registry::Removal::Now);
                }
            }
            // No destructor callback to wait for: the entry stays, ended for the application.
            (None, Some(_)) if keeping => {
                let mark = registry::with(|r| {
                    r.mems.get_mut(&key(mem)).and_then(|e| {
                        e.app_released = true;
                        e.validation.take()
                    })
                });
                drop(mark);
            }
            _ if dropping => drop_entries(mem, registry::Removal::Now),
            _ => {}
        }
        check(result)
    })
}

pub(crate) unsafe extern "C" fn get_mem_object_info(
    mem: cl_mem,
    param_name: cl_mem_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetMemObjectInfo);
        let Some(version) = crate::core::tokens::D3dVersion::ALL
            .into_iter()
            .find(|v| v.mem_resource_query() == param_name)
        else {
            // SAFETY: other queries go down with the caller's arguments.
            return check(unsafe {
                below(mem, param_name, param_value_size, param_value, size_ret)
            });
        };
        let found = registry::with(|r| {
            r.mems
                .get(&key(mem))
                .filter(|m| m.version == version)
                .map(|m| m.app_resource)
        });
        let Some(resource) = found else {
            // CL_INVALID_MEM_OBJECT "if memobj is a not a valid memory object".
            // SAFETY: a query with our own buffer; the platform validates the handle.
            query_bytes(|n, p, r| unsafe { below(mem, CL_MEM_TYPE, n, p, r) })?;
            // CL_INVALID_D3D1x_RESOURCE "if param_name is CL_MEM_D3D1x_RESOURCE and memobj was
            // not created by the function clCreateFromD3D1xBuffer, clCreateFromD3D1xTexture2D,
            // or clCreateFromD3D1xTexture3D".
            return Err(version.invalid_resource());
        };
        // "returns the resource argument specified when memobj was created".
        // SAFETY: caller's buffers per clGetMemObjectInfo.
        unsafe {
            write_value(
                resource as *mut c_void,
                param_value_size,
                param_value,
                size_ret,
            )
        }
    })
}

pub(crate) unsafe extern "C" fn get_image_info(
    image: cl_mem,
    param_name: cl_image_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetImageInfo);
        let Some(version) = crate::core::tokens::D3dVersion::ALL
            .into_iter()
            .find(|v| v.image_subresource_query() == param_name)
        else {
            // SAFETY: other queries go down with the caller's arguments.
            return check(unsafe {
                below(image, param_name, param_value_size, param_value, size_ret)
            });
        };
        let found = registry::with(|r| {
            r.mems
                .get(&key(image))
                .filter(|m| m.version == version && m.kind != ResourceKind::Buffer)
                .map(|m| m.subresource)
        });
        let Some(sub) = found else {
            // CL_INVALID_MEM_OBJECT "if image is a not a valid image object".
            // SAFETY: a query with our own buffer; the platform validates the handle.
            query_bytes(|n, p, r| unsafe { below(image, CL_IMAGE_FORMAT, n, p, r) })?;
            // CL_INVALID_D3D1x_RESOURCE "if param_name is CL_IMAGE_D3D1x_SUBRESOURCE and image was
            // not created by the function clCreateFromD3D1xTexture2D or
            // clCreateFromD3D1xTexture3D".
            return Err(version.invalid_resource());
        };
        // "returns the subresource argument specified when image was created".
        // SAFETY: caller's buffers per clGetImageInfo.
        unsafe { write_value::<cl_uint>(sub, param_value_size, param_value, size_ret) }
    })
}

/// Sub-buffers of a D3D buffer are D3D objects too: they follow the parent's acquire state.
pub(crate) unsafe extern "C" fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's.
    unsafe {
        super::object(errcode_ret, || {
            let below = down!(clCreateSubBuffer);
            let mut err = 0;
            let sub = below(buffer, flags, create_type, create_info, &mut err);
            check(err)?;
            let parent_is_d3d = registry::with(|r| {
                let is = r.mems.contains_key(&key(buffer));
                if is {
                    r.sub_buffers.insert(key(sub), key(buffer));
                }
                is
            });
            if parent_is_d3d {
                super::watch_destruction(sub, mem_destroyed);
            }
            Ok(sub)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        assert_eq!(check_flags(0), Ok(CL_MEM_READ_WRITE));
        for f in [CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE] {
            assert_eq!(check_flags(f), Ok(f));
        }
        assert_eq!(
            check_flags(opencl_sys::CL_MEM_USE_HOST_PTR),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(
            check_flags(CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(
            check_flags(CL_MEM_READ_WRITE | opencl_sys::CL_MEM_COPY_HOST_PTR),
            Err(CL_INVALID_VALUE)
        );
    }

    #[test]
    fn subresources() {
        use ResourceKind::*;
        assert_eq!(subresource_mip(Buffer, 1, 1, 0), Some(0));
        assert_eq!(subresource_mip(Buffer, 1, 1, 1), None);
        // 3 mips x 2 slices: D3D11CalcSubresource(mip, slice, 3) = mip + slice * 3.
        assert_eq!(subresource_mip(Texture2D, 3, 2, 4), Some(1));
        assert_eq!(subresource_mip(Texture2D, 3, 2, 5), Some(2));
        assert_eq!(subresource_mip(Texture2D, 3, 2, 6), None);
        assert_eq!(subresource_mip(Texture3D, 4, 1, 3), Some(3));
        assert_eq!(subresource_mip(Texture3D, 4, 1, 4), None);
        assert_eq!(
            subresource_mip(Texture2D, u32::MAX, 2, 0),
            None,
            "overflow is no subresource"
        );
        assert_eq!(
            (mip_size(64, 3), mip_size(5, 4), mip_size(1, 40)),
            (8, 1, 1)
        );
    }
}
