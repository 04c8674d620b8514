//! `ID3D11Multithread` on the immediate context: protection, `Enter`/`Leave` across calls and
//! threads, and re-entrance (a thread inside `Enter`, and interop pending work that calls the
//! context from inside a context call).
// The call! helper passes test arguments into the vtable call it makes: test code only.
#![allow(clippy::macro_metavars_in_unsafe)]

mod common;

use common::*;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// `IID_ID3D11Multithread` (= `IID_ID3D10Multithread`).
const IID_MULTITHREAD: GUID = GUID {
    Data1: 0x9b7e4e00,
    Data2: 0x342c,
    Data3: 0x4106,
    Data4: [0xa1, 0x9f, 0x4f, 0x27, 0x04, 0xf6, 0x89, 0xf0],
};

#[repr(C)]
#[allow(non_snake_case)] // The SDK's method names.
struct MultithreadVtbl {
    base: IUnknownVtbl,
    Enter: unsafe extern "system" fn(*mut Multithread),
    Leave: unsafe extern "system" fn(*mut Multithread),
    SetMultithreadProtected: unsafe extern "system" fn(*mut Multithread, BOOL) -> BOOL,
    GetMultithreadProtected: unsafe extern "system" fn(*mut Multithread) -> BOOL,
}

#[repr(C)]
#[allow(non_snake_case)] // COM's field name, for call!.
struct Multithread {
    lpVtbl: *const MultithreadVtbl,
}

/// A context pointer that may cross threads (the test serialises nothing else through it).
#[derive(Clone, Copy)]
struct Ctx(*mut ID3D11DeviceContext);
// SAFETY: the runtime's immediate context is free-threaded internally; the test checks the lock.
unsafe impl Send for Ctx {}

static NESTED_FLUSHES: AtomicUsize = AtomicUsize::new(0);

unsafe extern "system" fn flush_context(context: *mut c_void) {
    let ctx = context.cast::<ID3D11DeviceContext>();
    call!(ctx, Flush());
    NESTED_FLUSHES.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn multithread_protection_enter_leave_and_re_entrance() {
    let (dev, ctx) = device();
    let (hr, mt): (HRESULT, *mut Multithread) = qi(ctx, &IID_MULTITHREAD);
    assert_eq!(hr, S_OK, "the immediate context answers ID3D11Multithread");
    assert_eq!(call!(mt, GetMultithreadProtected()), 0, "off by default");
    assert_eq!(
        call!(mt, SetMultithreadProtected(1)),
        0,
        "returns the old state"
    );
    assert_eq!(call!(mt, GetMultithreadProtected()), 1);

    // Enter holds the device's lock across calls: another thread's context call waits for Leave.
    call!(mt, Enter());
    call!(mt, Enter());
    call!(ctx, Flush()); // re-entrant on the holding thread
    let done = Arc::new(AtomicBool::new(false));
    let (d2, c2) = (done.clone(), Ctx(ctx));
    let other = std::thread::spawn(move || {
        let c = c2;
        call!(c.0, Flush());
        d2.store(true, Ordering::SeqCst);
    });
    std::thread::sleep(Duration::from_millis(100));
    assert!(!done.load(Ordering::SeqCst), "waits while entered");
    call!(mt, Leave());
    std::thread::sleep(Duration::from_millis(50));
    assert!(!done.load(Ordering::SeqCst), "entered twice, left once");
    call!(mt, Leave());
    other.join().unwrap();
    assert!(done.load(Ordering::SeqCst));

    // Pending interop work runs inside a protected context call and calls the context itself.
    let desc = buffer_desc(256, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0);
    let (mut a, mut b) = (ptr::null_mut(), ptr::null_mut());
    assert_eq!(call!(dev, CreateBuffer(&desc, ptr::null(), &mut a)), S_OK);
    assert_eq!(call!(dev, CreateBuffer(&desc, ptr::null(), &mut b)), S_OK);
    let (hr, ir): (HRESULT, *mut dxcl_abi::interop::IDxclInteropResource) =
        qi(a, &dxcl_abi::interop::IDxclInteropResource::IID);
    assert_eq!(hr, S_OK);
    assert_eq!(
        call!(ir, AddPendingWork(Some(flush_context), None, ctx.cast())),
        S_OK
    );
    call!(ctx, CopyResource(b.cast(), a.cast()));
    assert_eq!(NESTED_FLUSHES.load(Ordering::SeqCst), 1);

    assert_eq!(call!(mt, SetMultithreadProtected(0)), 1);
    for p in [ir.cast::<c_void>(), a.cast(), b.cast(), mt.cast()] {
        release(p);
    }
    release(ctx);
    release(dev);
}
