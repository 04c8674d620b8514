//! The immediate context: the resource operations of `ID3D11DeviceContext` (Map/Unmap,
//! UpdateSubresource, CopyResource, CopySubresourceRegion, Flush, queries). Drawing, views and
//! state methods stay `NOT_IMPLEMENTED` (void methods do nothing).
//!
//! The context is its own COM object, owned by its device (one private reference); while the
//! application holds it, it holds a public reference on the device.
//!
//! Threads: the runtime's own state is behind locks, so overlapping calls do no harm here, but
//! Direct3D 11 does not allow them ("the immediate context is not thread-safe"). On a device
//! created with `D3D11_CREATE_DEVICE_DEBUG` the context checks the rule the way the SDK's debug
//! layer does: two threads inside its methods at once is `CORRUPTED_MULTITHREADING`, reported on
//! stderr, and the process aborts (dxcl has no info queue to break into).
//!
//! `ID3D11Multithread` (queried from the context, as in the SDK): with protection on, every method
//! of the context takes the device's lock, and `Enter`/`Leave` hold it across calls. The lock is
//! re-entrant, as the SDK's is: a thread inside `Enter` calls the context, and the runtime runs the
//! interop layer's pending work inside a context call, which may call the context again (the
//! OpenCL layer's staging write-back).

use std::cell::Cell;
use std::mem::offset_of;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;

use super::abi::*;
use super::desc::texel_box;
use super::guard::{guard, lock};
use super::iid_in;
use super::object::*;
use super::private_data::*;
use super::query::Query;
use super::resource::{
    copy_resource_of, copy_subresource_region_of, update_subresource_of, Resource,
};
use super::shared::{child_get_device, Device, DeviceChild, IID_ID3D10MULTITHREAD};

/// The immediate context of a device.
#[repr(C)]
pub struct Context {
    d3d11: *const ID3D11DeviceContextVtbl,
    multithread: *const MultithreadVtbl,
    refs: RefCounts,
    private: PrivateData,
    device: *const Device,
    /// The debug layer's thread check: on (`D3D11_CREATE_DEVICE_DEBUG`), and the thread inside a
    /// method now (0: none; see [`thread_token`]).
    check_threads: bool,
    inside: AtomicU64,
    /// `SetMultithreadProtected`: every method takes `lock`.
    protected: AtomicBool,
    lock: DeviceLock,
}

/// `ID3D11Multithread`'s vtable (`ID3D10Multithread` has the same IID and methods); not yet in
/// `dxcl_abi`.
#[repr(C)]
#[allow(non_snake_case)] // The SDK's method names.
pub struct MultithreadVtbl {
    base: IUnknownVtbl,
    Enter: unsafe extern "system" fn(*mut c_void),
    Leave: unsafe extern "system" fn(*mut c_void),
    SetMultithreadProtected: unsafe extern "system" fn(*mut c_void, BOOL) -> BOOL,
    GetMultithreadProtected: unsafe extern "system" fn(*mut c_void) -> BOOL,
}

/// A re-entrant lock that a thread may take in one call and give back in another (`Enter`,
/// `Leave`).
#[derive(Default)]
struct DeviceLock {
    /// The thread holding it and how many times it took it.
    owner: Mutex<Option<(ThreadId, usize)>>,
    freed: Condvar,
}

impl DeviceLock {
    fn take(&self) {
        let me = std::thread::current().id();
        let mut owner = lock(&self.owner);
        loop {
            match &mut *owner {
                None => {
                    *owner = Some((me, 1));
                    return;
                }
                Some((t, depth)) if *t == me => {
                    *depth += 1;
                    return;
                }
                Some(_) => owner = self.freed.wait(owner).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }

    /// Gives back one hold of the calling thread; a `Leave` without its `Enter` does nothing
    /// (the SDK leaves it undefined).
    fn give_back(&self) {
        let me = std::thread::current().id();
        let mut owner = lock(&self.owner);
        if let Some((t, depth)) = &mut *owner {
            if *t == me {
                *depth -= 1;
                if *depth == 0 {
                    *owner = None;
                    self.freed.notify_one();
                }
            }
        }
    }
}

// SAFETY: the vtable pointer refers to an immutable static; `device` outlives the context (the
// device destroys it) and is Send + Sync.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

pub const CONTEXT_FACE: usize = offset_of!(Context, d3d11);
pub const MULTITHREAD_FACE: usize = offset_of!(Context, multithread);

// SAFETY: `d3d11` is the only face; `face_for` returns its offset only.
unsafe impl ComObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[CONTEXT_FACE, MULTITHREAD_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        if iid_in(riid, &[IID_ID3D10MULTITHREAD]) {
            // IID_ID3D11Multithread is the same IID.
            return Some(MULTITHREAD_FACE);
        }
        iid_in(
            riid,
            &[IID_IUnknown, IID_ID3D11DeviceChild, IID_ID3D11DeviceContext],
        )
        .then_some(CONTEXT_FACE)
    }
    fn on_public_acquire(&self) {
        self.device().validation.child(true);
        add_ref(self.device());
    }
    fn on_public_release(&self) {
        self.device().validation.child(false);
        // SAFETY: the reference taken in `on_public_acquire`.
        unsafe { release(self.device) };
    }
}

impl DeviceChild for Context {
    fn device(&self) -> &Device {
        // SAFETY: the device owns the context and outlives it.
        unsafe { &*self.device }
    }
}

impl Context {
    /// The context of a device under construction (no public reference; the device holds the
    /// one private reference); `check_threads` for a device created with the debug layer.
    pub fn create(device: *const Device, check_threads: bool) -> *mut Context {
        into_raw(Context {
            d3d11: &CONTEXT_VTBL,
            multithread: &MULTITHREAD_VTBL,
            refs: RefCounts::new_private(),
            private: PrivateData::default(),
            device,
            check_threads,
            inside: AtomicU64::new(0),
            protected: AtomicBool::new(false),
            lock: DeviceLock::default(),
        })
    }

    /// Marks the calling thread inside `method` until the returned guard drops; on a debug
    /// device, another thread inside at the same time is reported and aborts the process.
    fn enter(&self, method: &str) -> Inside<'_> {
        // Multithread protection: the device's lock for the whole call.
        let locked = self.protected.load(Ordering::Acquire).then(|| {
            self.lock.take();
            &self.lock
        });
        if !self.check_threads {
            return Inside(None, locked);
        }
        let me = thread_token();
        match self
            .inside
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Inside(Some(&self.inside), locked),
            // A method of this thread called back into the context (nested): the outer call
            // clears the mark.
            Err(other) if other == me => Inside(None, locked),
            Err(other) => {
                eprintln!(
                    "D3D11 CORRUPTION: ID3D11DeviceContext::{method}: Two threads were found to be \
                     executing functions associated with the same Device[Context] at the same time. \
                     This will cause corruption of memory. Appropriate thread synchronization needs \
                     to occur external to the Direct3D API (or through the ID3D10Multithread \
                     interface). {me} and {other} are the implicated thread ids. \
                     [ MISCELLANEOUS CORRUPTION #28: CORRUPTED_MULTITHREADING ]"
                );
                std::process::abort();
            }
        }
    }

    /// One of this device's queries behind an application pointer.
    fn query<I>(&self, p: *const I) -> Option<PrivateRef<Query>> {
        lookup::<Query, I>(p).filter(|q| ptr::eq(q.device(), self.device()))
    }
}

/// A thread inside a context method (see [`Context::enter`]), holding the device's lock when
/// protected.
struct Inside<'a>(Option<&'a AtomicU64>, Option<&'a DeviceLock>);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        if let Some(inside) = self.0 {
            inside.store(0, Ordering::Release);
        }
        if let Some(lock) = self.1 {
            lock.give_back();
        }
    }
}

/// A number unique to the calling thread, never 0 (the thread ids of the corruption message).
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TOKEN: Cell<u64> = const { Cell::new(0) });
    TOKEN.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

type C = Context;
const CO: usize = CONTEXT_FACE;
const MO: usize = MULTITHREAD_FACE;

static MULTITHREAD_VTBL: MultithreadVtbl = MultithreadVtbl {
    base: unknown_vtbl::<C, MO>(),
    Enter: mt_enter,
    Leave: mt_leave,
    SetMultithreadProtected: mt_set_protected,
    GetMultithreadProtected: mt_get_protected,
};

/// # Safety
/// `this` is the multithread face of a live context.
unsafe fn mt<'a>(this: *mut c_void) -> &'a Context {
    // SAFETY: function contract.
    unsafe { object::<Context, _>(this, MO) }
}

/// `Enter`: takes the device's lock (re-entrant), whether or not protection is on.
unsafe extern "system" fn mt_enter(this: *mut c_void) {
    guard((), || {
        // SAFETY: COM contract: `this` is the multithread face of a live context.
        let c = unsafe { mt(this) };
        c.lock.take()
    })
}

/// `Leave`: gives back one `Enter` of this thread.
unsafe extern "system" fn mt_leave(this: *mut c_void) {
    guard((), || {
        // SAFETY: COM contract: `this` is the multithread face of a live context.
        let c = unsafe { mt(this) };
        c.lock.give_back()
    })
}

/// `SetMultithreadProtected`: returns whether protection was on.
unsafe extern "system" fn mt_set_protected(this: *mut c_void, on: BOOL) -> BOOL {
    guard(0, || {
        // SAFETY: COM contract.
        let c = unsafe { mt(this) };
        c.protected.swap(on != 0, Ordering::AcqRel) as BOOL
    })
}

/// `GetMultithreadProtected`.
unsafe extern "system" fn mt_get_protected(this: *mut c_void) -> BOOL {
    guard(0, || {
        // SAFETY: COM contract: `this` is the multithread face of a live context.
        let c = unsafe { mt(this) };
        c.protected.load(Ordering::Acquire) as BOOL
    })
}

static CONTEXT_VTBL: ID3D11DeviceContextVtbl = ID3D11DeviceContextVtbl {
    base: ID3D11DeviceChildVtbl {
        base: unknown_vtbl::<C, CO>(),
        GetDevice: child_get_device::<C, ID3D11DeviceChild, CO>,
        GetPrivateData: get_private_data::<C, ID3D11DeviceChild, CO>,
        SetPrivateData: set_private_data::<C, ID3D11DeviceChild, CO>,
        SetPrivateDataInterface: set_private_data_interface::<C, ID3D11DeviceChild, CO>,
    },
    Map: map,
    Unmap: unmap,
    Begin: begin,
    End: end,
    GetData: get_data,
    CopySubresourceRegion: copy_subresource_region_m,
    CopyResource: copy_resource_m,
    UpdateSubresource: update_subresource,
    ClearState: clear_state,
    Flush: flush,
    GetType: get_type,
    GetContextFlags: get_context_flags,
    ..ID3D11DeviceContextVtbl::NOT_IMPLEMENTED
};

/// # Safety
/// `this` is the face of a live context.
unsafe fn ctx<'a>(this: *mut ID3D11DeviceContext) -> &'a Context {
    // SAFETY: function contract.
    unsafe { object::<Context, _>(this, CO) }
}

unsafe extern "system" fn map(
    this: *mut ID3D11DeviceContext,
    resource: *mut ID3D11Resource,
    sub: u32,
    map_type: D3D11_MAP,
    flags: u32,
    out: *mut D3D11_MAPPED_SUBRESOURCE,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // Map: pMappedResource is required for the resources this runtime maps.
            return E_INVALIDARG;
        }
        // SAFETY: non-null and writable (COM contract); cleared so failures leave no stale pointer.
        unsafe {
            *out = D3D11_MAPPED_SUBRESOURCE {
                pData: ptr::null_mut(),
                RowPitch: 0,
                DepthPitch: 0,
            }
        };
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("Map");
        let Some(r) = Resource::of_device(c.device(), resource) else {
            // A resource that is not this device's cannot be mapped.
            return E_INVALIDARG;
        };
        match r.map(sub, map_type as u32, flags) {
            Ok(m) => {
                // SAFETY: as above.
                unsafe {
                    *out = D3D11_MAPPED_SUBRESOURCE {
                        pData: m.data.cast(),
                        RowPitch: m.row_pitch,
                        DepthPitch: m.depth_pitch,
                    }
                };
                S_OK
            }
            Err(hr) => hr,
        }
    })
}

unsafe extern "system" fn unmap(
    this: *mut ID3D11DeviceContext,
    resource: *mut ID3D11Resource,
    sub: u32,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("Unmap");
        if let Some(r) = Resource::of_device(c.device(), resource) {
            r.unmap(sub);
        }
    })
}

unsafe extern "system" fn update_subresource(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    sub: u32,
    dst_box: *const D3D11_BOX,
    data: *const c_void,
    row_pitch: u32,
    depth_pitch: u32,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("UpdateSubresource");
        // SAFETY: null or readable (COM contract).
        let b = unsafe { dst_box.as_ref() }.map(texel_box);
        let pitches = (row_pitch, depth_pitch);
        // SAFETY: D3D's contract: pSrcData is readable for the box with the given pitches.
        unsafe { update_subresource_of(c.device(), dst, sub, b.as_ref(), data, pitches, false) };
    })
}

unsafe extern "system" fn copy_resource_m(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    src: *mut ID3D11Resource,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("CopyResource");
        copy_resource_of(c.device(), dst, src);
    })
}

unsafe extern "system" fn copy_subresource_region_m(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    dst_sub: u32,
    x: u32,
    y: u32,
    z: u32,
    src: *mut ID3D11Resource,
    src_sub: u32,
    src_box: *const D3D11_BOX,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("CopySubresourceRegion");
        // SAFETY: null or readable (COM contract).
        let b = unsafe { src_box.as_ref() }.map(texel_box);
        copy_subresource_region_of(
            c.device(),
            dst,
            dst_sub,
            (x, y, z),
            src,
            src_sub,
            b.as_ref(),
        );
    })
}

unsafe extern "system" fn begin(this: *mut ID3D11DeviceContext, query: *mut ID3D11Asynchronous) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("Begin");
        if let Some(q) = c.query(query) {
            q.begin();
        }
    })
}

unsafe extern "system" fn end(this: *mut ID3D11DeviceContext, query: *mut ID3D11Asynchronous) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("End");
        if let Some(q) = c.query(query) {
            q.end();
        }
    })
}

unsafe extern "system" fn get_data(
    this: *mut ID3D11DeviceContext,
    query: *mut ID3D11Asynchronous,
    data: *mut c_void,
    size: u32,
    flags: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("GetData");
        let Some(q) = c.query(query) else {
            // GetData needs one of this device's queries.
            return E_INVALIDARG;
        };
        // SAFETY: `data` is null or writable for `size` bytes (COM contract).
        unsafe { q.get_data(data, size, flags) }
    })
}

unsafe extern "system" fn clear_state(_this: *mut ID3D11DeviceContext) {
    // The context keeps no pipeline state: nothing to reset.
}

unsafe extern "system" fn flush(this: *mut ID3D11DeviceContext) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        let _inside = c.enter("Flush");
        c.device().backend.flush()
    })
}

unsafe extern "system" fn get_type(_this: *mut ID3D11DeviceContext) -> D3D11_DEVICE_CONTEXT_TYPE {
    D3D11_DEVICE_CONTEXT_IMMEDIATE
}

unsafe extern "system" fn get_context_flags(_this: *mut ID3D11DeviceContext) -> u32 {
    // Immediate contexts have no creation flags.
    0
}
