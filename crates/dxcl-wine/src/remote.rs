//! Stand-ins for a Windows program's COM objects (its Direct3D device, context, resources): unix
//! objects whose methods run the real ones on a Windows thread of the bridge.
//!
//! Unix code must not call Windows code. A stand-in's method queues the call (the Windows
//! object, the method's vtable slot, its arguments) and waits; a server thread of `dxclcl.dll`,
//! waiting in the unix call `NEXT_REQUEST`, makes it and reports the result. Interface pointers
//! cross both ways: a stand-in passed to a method becomes its Windows object, a Windows object a
//! method returns becomes a stand-in of the interface it was asked as, and a unix COM object of
//! the layer's (private data it attaches) becomes a Windows-side wrapper whose `IUnknown` methods
//! call back into it. The method tables are generated from dxcl-gen's interface description
//! (`gen_stand_ins.rs`).
//!
//! An `Unmap` (Direct3D 11's on a context, Direct3D 10's on a buffer or texture) has no result and
//! nothing waits for it but the calls after it, so it takes no round trip of its own: it is kept
//! and runs on the server thread just before the next request's method, whichever thread makes
//! that one. A staging hand-off makes six calls (copy, Map, Unmap each way); four reach a server.

use std::ffi::c_void;

use dxcl_abi::GUID;

/// A structure's field, for its copy in a 32-bit program's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// A pointer or `SIZE_T`: 8 bytes, 8-aligned, for the host; 4 for the program.
    Word,
    /// So many bytes of this alignment, the same in both layouts.
    Data(usize, usize),
}

impl Field {
    /// A field of type `T`.
    pub const fn of<T>() -> Field {
        Field::Data(std::mem::size_of::<T>(), std::mem::align_of::<T>())
    }
}

/// What a pointer to data points at, for its copy in a 32-bit program's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pointee {
    /// So many bytes, the same in both layouts.
    Bytes(usize),
    /// A structure holding pointers or `SIZE_T`s, field by field (`D3D11_MAPPED_SUBRESOURCE`,
    /// `DXGI_ADAPTER_DESC1`, a `void *`).
    Fields(&'static [Field]),
    /// As many bytes as argument `k` says.
    BytesArg(usize),
    /// As many bytes as the `UINT` argument `k` points at says.
    BytesAt(usize),
}

/// How one argument of a remoted method crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Passed as it is: integers, enums, handles.
    Value,
    /// A pointer to data the method reads. A 64-bit program's object gets it as it is; a 32-bit
    /// one's a copy in its layout, in memory it reaches (`low`).
    In(Pointee),
    /// A pointer to data the method reads and writes: as `In`, the copy then written back.
    InOut(Pointee),
    /// A pointer to data a 32-bit program's object cannot be given (the description does not
    /// say what it points at), and why; passed as it is to a 64-bit one's.
    Not32(&'static str),
    /// An interface pointer passed in (`ID3D11Resource *pResource`).
    InIface,
    /// An out interface pointer of interface `iid` (`ID3D11Buffer **ppBuffer`).
    OutIface(&'static GUID),
    /// `void **ppv` whose interface is named by the `REFIID` argument at this index.
    OutIfaceRiid(usize),
}

mod frame32;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use dxcl_abi::{IUnknown, IUnknownVtbl, E_FAIL, E_NOINTERFACE, E_POINTER, HRESULT, REFIID, ULONG};

use crate::gen_limits::MAX_METHOD_ARGS;
use crate::unixlib::{Request, Reverse};
use crate::wait::Signal;
use frame32::Frame32;

/// The stand-in table of a plain `IUnknown` (the generated tables, `gen_stand_ins.rs`, cover the rest).
pub static IUNKNOWN_REMOTE: IUnknownVtbl = IUnknownVtbl {
    QueryInterface: query_interface,
    AddRef: add_ref,
    Release: release,
};

/// The stand-in table of an interface by IID (`gen_stand_ins::remote_vtable`, given at `start`: the
/// generated tables call into this module, so it does not name them).
type Vtables = fn(&GUID) -> Option<*const c_void>;
static VTABLES: std::sync::OnceLock<Vtables> = std::sync::OnceLock::new();

fn remote_vtable(iid: &GUID) -> Option<*const c_void> {
    VTABLES.get().and_then(|f| f(iid))
}

/// A stand-in: the vtable of the interface it stands for, then its Windows object.
#[repr(C)]
struct StandIn {
    vtbl: *const c_void,
    windows: u64,
    /// References the layer holds on the stand-in.
    refs: AtomicU32,
    /// References the stand-in holds on its Windows object, released when `refs` reaches zero.
    windows_refs: AtomicU32,
}

/// A Windows-side wrapper of a unix COM object (the layer's), laid out as `dxclcl.dll`'s reverse
/// vtable expects: the vtable (Windows functions, given at start-up), then the unix object.
#[repr(C)]
struct Wrapper {
    vtbl: u64,
    unix: *mut IUnknown,
    refs: AtomicU32,
}

// A 32-bit program's wrappers lie in slots of its block.
const _: () = assert!(std::mem::size_of::<Wrapper>() <= crate::low::WRAPPER);

/// Method `slot` of Windows object `object`, with its arguments as they cross.
struct Method {
    object: u64,
    slot: u32,
    args: Vec<u64>,
}

struct Pending {
    id: u64,
    method: Method,
    /// A deferred method to run first (see `defer`).
    first: Option<Method>,
}

#[derive(Default)]
struct Queue {
    next_id: u64,
    queued: VecDeque<Pending>,
    /// Results of finished calls by id (`rax`, the method's nanoseconds), until their callers
    /// take them.
    done: HashMap<u64, (u64, u64)>,
    /// A method deferred by `defer`, until the next request takes it.
    deferred: Option<Method>,
    /// The request that took a deferred method, until that method has run (`first_done`): no
    /// request is queued before then, so every call made after the deferred one runs after it.
    carrying: Option<u64>,
    /// Set when the Windows side goes away: calls fail at once from then on.
    closed: bool,
}

struct Remote {
    queue: Mutex<Queue>,
    finished: Condvar,
    /// Stand-ins by (Windows object, vtable), never freed (see `release`).
    stand_ins: Mutex<HashMap<(u64, usize), usize>>,
    /// The same stand-ins' addresses, to tell a stand-in from any other pointer.
    addresses: Mutex<std::collections::HashSet<usize>>,
    /// Wrappers by unix object.
    wrappers: Mutex<HashMap<usize, usize>>,
    /// The Windows side's vtable for wrappers; 0 until `dxclcl.dll` started its servers.
    wrapper_vtbl: std::sync::atomic::AtomicU64,
    started: AtomicBool,
}

static REMOTE: std::sync::LazyLock<Remote> = std::sync::LazyLock::new(|| Remote {
    queue: Mutex::new(Queue::default()),
    finished: Condvar::new(),
    stand_ins: Mutex::new(HashMap::new()),
    addresses: Mutex::new(std::collections::HashSet::new()),
    wrappers: Mutex::new(HashMap::new()),
    wrapper_vtbl: std::sync::atomic::AtomicU64::new(0),
    started: AtomicBool::new(false),
});

/// Signalled when a request is queued or the bridge closes: the servers sleep on it
/// (`wait::until`).
pub static REQUESTS: Signal = Signal::new();

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data behind the locks: carry on after a panic elsewhere.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Unix call `START`: the Windows side's servers are about to wait for requests; `vtbl` is its
/// vtable for wrappers of unix objects, `vtables` the stand-in tables by IID.
pub fn start(vtbl: u64, vtables: Vtables) {
    let _ = VTABLES.set(vtables);
    REMOTE.wrapper_vtbl.store(vtbl, Ordering::Release);
    REMOTE.started.store(true, Ordering::Release);
}

/// Unix call `STOP` (the process detaches `dxclcl.dll`): waiting and later calls fail at once.
/// At process exit (`process_exit`) the servers are not woken: Wine is ending them, and a server
/// that returned now would run its thread's exit while Wine's signal reaches it.
pub fn stop(process_exit: bool) {
    let mut q = lock(&REMOTE.queue);
    q.closed = true;
    // The servers are gone: a deferred Unmap's object goes with the process.
    q.deferred = None;
    drop(q);
    REMOTE.finished.notify_all();
    if !process_exit {
        REQUESTS.notify_all();
    }
}

/// Runs method `slot` of `object` on a server thread; the value its `rax` held. `None` when no
/// Windows side serves (not under Wine, or after `stop`).
fn run(object: u64, slot: u32, args: Vec<u64>) -> Option<u64> {
    if !REMOTE.started.load(Ordering::Acquire) {
        return None;
    }
    let mut q = lock(&REMOTE.queue);
    let traced = crate::trace::on().then(std::time::Instant::now);
    // A deferred method another request took runs before this one can start.
    while q.carrying.is_some() && !q.closed {
        q = REMOTE.finished.wait(q).unwrap_or_else(|e| e.into_inner());
    }
    if q.closed {
        return None;
    }
    q.next_id += 1;
    let id = q.next_id;
    let first = q.deferred.take();
    if first.is_some() {
        q.carrying = Some(id);
    }
    q.queued.push_back(Pending {
        id,
        method: Method { object, slot, args },
        first,
    });
    REQUESTS.notify_one();
    loop {
        if let Some((ret, method_ns)) = q.done.remove(&id) {
            drop(q);
            if let Some(t) = traced {
                crate::trace::trip(slot, t.elapsed().as_nanos() as u64, method_ns);
            }
            return Some(ret);
        }
        if q.closed {
            return None;
        }
        q = REMOTE.finished.wait(q).unwrap_or_else(|e| e.into_inner());
    }
}

/// Unix call `NEXT_REQUEST`, one try: reports the finished call `done_id` (once), then takes the
/// next request if one is queued. `None` while none is (the server sleeps on [`REQUESTS`] and
/// tries again); `Some(false)` when the bridge is closing (the server thread ends).
pub fn try_next_request(r: &mut Request) -> Option<bool> {
    let mut q = lock(&REMOTE.queue);
    if r.done_id != 0 {
        q.done.insert(r.done_id, (r.done_ret, r.done_ns));
        if q.carrying == Some(r.done_id) {
            q.carrying = None;
        }
        r.done_id = 0;
        REMOTE.finished.notify_all();
    }
    if q.closed {
        return Some(false);
    }
    let p = q.queued.pop_front()?;
    r.id = p.id;
    (r.object, r.slot, r.nargs, r.args) = crossing(&p.method);
    (r.first_object, r.first_slot, r.first_nargs, r.first_args) = match &p.first {
        Some(m) => crossing(m),
        None => (0, 0, 0, [0; MAX_METHOD_ARGS]),
    };
    Some(true)
}

/// A method as `struct dxcl_request` carries it.
fn crossing(m: &Method) -> (u64, u32, u32, [u64; MAX_METHOD_ARGS]) {
    let mut args = [0; MAX_METHOD_ARGS];
    args[..m.args.len()].copy_from_slice(&m.args);
    (m.object, m.slot, m.args.len() as u32, args)
}

/// Unix call `FIRST_DONE`: the deferred method request `r` carried has run; the calls queued
/// after it may start.
pub fn first_done(r: &Request) {
    let mut q = lock(&REMOTE.queue);
    if q.carrying == Some(r.id) {
        q.carrying = None;
        REMOTE.finished.notify_all();
    }
}

/// Keeps method `slot` of `object` (an Unmap: no result, no out arguments, no wrappers) for the
/// next request to run first, instead of a round trip now. False where it cannot be kept (no
/// Windows side, or one is kept already: the caller then runs it, and that request takes the
/// kept one first).
fn defer(object: u64, slot: u32, args: &[u64]) -> bool {
    if !REMOTE.started.load(Ordering::Acquire) {
        return false;
    }
    let mut q = lock(&REMOTE.queue);
    if q.closed || q.deferred.is_some() {
        return false;
    }
    q.deferred = Some(Method {
        object,
        slot,
        args: args.to_vec(),
    });
    drop(q);
    if crate::trace::on() {
        crate::trace::deferred();
    }
    true
}

/// Whether method `slot` of a stand-in with vtable `vtbl` is an Unmap, which `call` defers.
fn is_unmap(vtbl: *const c_void, slot: usize) -> bool {
    // ID3D11DeviceContext::Unmap; ID3D10Buffer/Texture1D/2D/3D::Unmap.
    let of = |iid: &GUID| remote_vtable(iid) == Some(vtbl);
    match slot {
        15 => of(&dxcl_abi::IID_ID3D11DeviceContext),
        11 => [
            &dxcl_abi::IID_ID3D10Buffer,
            &dxcl_abi::IID_ID3D10Texture1D,
            &dxcl_abi::IID_ID3D10Texture2D,
            &dxcl_abi::IID_ID3D10Texture3D,
        ]
        .into_iter()
        .any(of),
        _ => false,
    }
}

fn stand_in_of(ptr: usize) -> Option<&'static StandIn> {
    lock(&REMOTE.addresses).contains(&ptr).then(|| {
        // SAFETY: a stand-in's address (stand-ins are never freed).
        unsafe { &*(ptr as *const StandIn) }
    })
}

/// The stand-in of Windows object `windows` as interface `vtbl`, taking over one reference the
/// caller owns on the Windows object.
fn wrap_owned(windows: u64, vtbl: *const c_void) -> *mut c_void {
    let mut map = lock(&REMOTE.stand_ins);
    if let Some(&s) = map.get(&(windows, vtbl as usize)) {
        // SAFETY: a stand-in of the map (never freed), resting or not; we hold the lock.
        let s = unsafe { &*(s as *const StandIn) };
        s.refs.fetch_add(1, Ordering::Relaxed);
        s.windows_refs.fetch_add(1, Ordering::Relaxed);
        return (s as *const StandIn).cast_mut().cast();
    }
    let s = Box::into_raw(Box::new(StandIn {
        vtbl,
        windows,
        refs: AtomicU32::new(1),
        windows_refs: AtomicU32::new(1),
    }));
    map.insert((windows, vtbl as usize), s as usize);
    lock(&REMOTE.addresses).insert(s as usize);
    s.cast()
}

/// A stand-in (IUnknown face) for a Windows object the program passed to an entry point, with one
/// reference of the caller's: release it with [`release`] once the layer's call returned (the
/// layer holds references of its own for what it keeps). Null for null.
pub fn borrow(windows: u64) -> *mut c_void {
    borrow_with(windows, (&IUNKNOWN_REMOTE as *const IUnknownVtbl).cast())
}

/// [`borrow`], as the program typed the pointer: a stand-in with interface `iid`'s table (for a
/// context's `CL_CONTEXT_D3D1x_DEVICE_KHR`, "a pointer to ID3D1xDevice"). The layer's
/// `QueryInterface` for `iid` then gives this very stand-in back only where the Windows object's
/// answer is the program's pointer itself, as it would on Windows; the layer judges that.
pub fn borrow_as(windows: u64, iid: &GUID) -> *mut c_void {
    match remote_vtable(iid) {
        Some(vtbl) => borrow_with(windows, vtbl),
        None => borrow(windows),
    }
}

/// A stand-in with table `vtbl` for `windows`, holding a Windows reference of its own.
fn borrow_with(windows: u64, vtbl: *const c_void) -> *mut c_void {
    // IUnknown::AddRef is slot 1.
    if windows == 0 || run(windows, 1, vec![]).is_none() {
        return std::ptr::null_mut();
    }
    wrap_owned(windows, vtbl)
}

/// The Windows object behind a stand-in (`ptr` itself when it is not one: a program's pointer).
pub fn windows_of(ptr: u64) -> u64 {
    stand_in_of(ptr as usize).map_or(ptr, |s| s.windows)
}

/// A Windows-side wrapper for a unix COM object (null for null).
fn wrapper_of(unix: *mut IUnknown) -> u64 {
    if unix.is_null() {
        return 0;
    }
    let mut map = lock(&REMOTE.wrappers);
    if let Some(&w) = map.get(&(unix as usize)) {
        return w as u64;
    }
    let wrapper = Wrapper {
        vtbl: REMOTE.wrapper_vtbl.load(Ordering::Acquire),
        unix,
        refs: AtomicU32::new(0),
    };
    let w = match crate::low::get() {
        // A 32-bit program's code calls it: it lies in the program's block.
        Some(low) => {
            let Some(slot) = low.wrappers.try_take() else {
                return 0;
            };
            // SAFETY: a free slot of the block, WRAPPER (32) bytes, 8-aligned; ours until given back.
            unsafe { (slot as usize as *mut Wrapper).write(wrapper) };
            slot as *mut Wrapper
        }
        None => Box::into_raw(Box::new(wrapper)),
    };
    map.insert(unix as usize, w as usize);
    w as u64
}

/// Frees the wrappers no Windows code holds (after the call that handed them over).
fn drop_unheld_wrappers(wrappers: &[u64]) {
    let mut map = lock(&REMOTE.wrappers);
    for &w in wrappers {
        // SAFETY: a wrapper made by wrapper_of, still in the map while we hold the lock.
        let held = unsafe { &*(w as *const Wrapper) }
            .refs
            .load(Ordering::Acquire);
        if held == 0 {
            // SAFETY: as above.
            let unix = unsafe { &*(w as *const Wrapper) }.unix;
            if map.remove(&(unix as usize)).is_some() {
                match crate::low::get() {
                    Some(low) => low.wrappers.give(w),
                    // SAFETY: unheld and out of the map: ours to free.
                    None => drop(unsafe { Box::from_raw(w as *mut Wrapper) }),
                }
            }
        }
    }
}

/// Unix call `REVERSE`: a Windows caller's AddRef (1) or Release (2) of a wrapper.
pub fn reverse(p: &mut Reverse) {
    let w = p.wrapper as *const Wrapper;
    // SAFETY: a wrapper of ours (the Windows side calls only through wrappers we made), alive
    // while Windows code holds references to it.
    let (unix, refs) = unsafe { ((*w).unix, &(*w).refs) };
    // SAFETY: the layer's live COM object, whose IUnknown methods take these arguments.
    let vt = unsafe { &*(*unix).lpVtbl };
    p.ret = match p.method {
        1 => {
            refs.fetch_add(1, Ordering::AcqRel);
            // SAFETY: as above.
            unsafe { (vt.AddRef)(unix) }
        }
        _ => {
            let left = refs.fetch_sub(1, Ordering::AcqRel) - 1;
            // SAFETY: as above; the layer's object stays alive until its own count says so.
            let r = unsafe { (vt.Release)(unix) };
            if left == 0 {
                drop_unheld_wrappers(&[p.wrapper]);
            }
            r
        }
    };
}

/// Calls method `slot` of the Windows object behind the stand-in `this` (generated methods).
///
/// # Safety
/// `this` is a live stand-in; `args` are the method's arguments and `kinds` say how each crosses.
pub unsafe fn call(this: *mut c_void, slot: usize, args: &[u64], kinds: &[Kind]) -> u64 {
    // SAFETY: the caller's contract.
    let s = unsafe { &*(this as *const StandIn) };
    // A 32-bit program's objects reach only its block: pointees are copied there.
    let mut frame = crate::low::get().map(|low| Frame32::new(low, slot));
    let mut wrappers = Vec::new();
    // SAFETY: the caller's contract.
    let crossing = match unsafe { windows_args(slot, args, kinds, &mut frame, &mut wrappers) } {
        Ok(c) => c,
        Err(hr) => {
            drop_unheld_wrappers(&wrappers);
            return hr as u32 as u64;
        }
    };
    if wrappers.is_empty() && is_unmap(s.vtbl, slot) && defer(s.windows, slot as u32, &crossing) {
        return 0;
    }
    let ret = run(s.windows, slot as u32, crossing).unwrap_or(E_FAIL as u32 as u64);
    if let Some(f) = &frame {
        // SAFETY: the layer's pointers of this call, still its own.
        unsafe { f.write_back() };
    }
    for (&a, kind) in args.iter().zip(kinds) {
        let iid = match kind {
            Kind::OutIface(iid) => Some(*iid),
            // SAFETY: as above.
            Kind::OutIfaceRiid(k) => unsafe { (args[*k] as *const GUID).as_ref() },
            _ => None,
        };
        let (Some(iid), true) = (iid, a != 0) else {
            continue;
        };
        // SAFETY: the caller's out pointer, written by the Windows method.
        let out = unsafe { &mut *(a as *mut u64) };
        if *out != 0 {
            match remote_vtable(iid) {
                Some(vtbl) => *out = wrap_owned(*out, vtbl) as u64,
                None => {
                    // An interface the stand-ins do not cover: give back the reference.
                    let _ = run(*out, 2, vec![]);
                    *out = 0;
                }
            }
        }
    }
    drop_unheld_wrappers(&wrappers);
    ret
}

/// The arguments as the Windows object takes them (`frame`: a 32-bit program's), or the
/// `HRESULT` the method fails with. Wrappers made for it go into `wrappers`.
///
/// # Safety
/// As [`call`]'s.
unsafe fn windows_args(
    slot: usize,
    args: &[u64],
    kinds: &[Kind],
    frame: &mut Option<Frame32>,
    wrappers: &mut Vec<u64>,
) -> Result<Vec<u64>, HRESULT> {
    let mut crossing = Vec::with_capacity(args.len());
    for (&a, kind) in args.iter().zip(kinds) {
        crossing.push(match (kind, frame.as_mut()) {
            (Kind::Value, _) => a,
            (Kind::In(_) | Kind::InOut(_) | Kind::Not32(_), None) => a,
            (Kind::In(_) | Kind::InOut(_) | Kind::Not32(_), Some(_)) if a == 0 => 0,
            (Kind::In(p), Some(f)) => {
                // SAFETY: the method's pointer to that pointee (the caller's contract).
                unsafe { f.data(a, *p, false, args) }?
            }
            (Kind::InOut(p), Some(f)) => {
                // SAFETY: as above.
                unsafe { f.data(a, *p, true, args) }?
            }
            (Kind::Not32(why), Some(_)) => return Err(frame32::refuse(slot, why)),
            (Kind::InIface, _) => match stand_in_of(a as usize) {
                Some(inner) => inner.windows,
                None if a == 0 => 0,
                None => {
                    let w = wrapper_of(a as *mut IUnknown);
                    if w == 0 {
                        return Err(frame32::E_OUTOFMEMORY);
                    }
                    wrappers.push(w);
                    w
                }
            },
            (Kind::OutIface(_) | Kind::OutIfaceRiid(_), f) => {
                if let Kind::OutIfaceRiid(k) = kind {
                    // SAFETY: the REFIID argument of the method, a GUID the caller passes.
                    let iid = unsafe { (args[*k] as *const GUID).as_ref() };
                    if iid.and_then(remote_vtable).is_none() {
                        if a != 0 {
                            // SAFETY: the caller's out pointer.
                            unsafe { *(a as *mut u64) = 0 };
                        }
                        return Err(E_NOINTERFACE);
                    }
                }
                if a == 0 {
                    0
                } else {
                    // SAFETY: the caller's out pointer: cleared, so a failed call leaves null.
                    unsafe { *(a as *mut u64) = 0 };
                    match f {
                        Some(f) => f.out_iface(a)?,
                        None => a,
                    }
                }
            }
        });
    }
    Ok(crossing)
}

/// `IUnknown::QueryInterface` of every stand-in.
pub unsafe extern "system" fn query_interface(
    this: *mut IUnknown,
    riid: REFIID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    if ppv.is_null() || riid.is_null() {
        return E_POINTER;
    }
    // SAFETY: a live stand-in; QueryInterface is slot 0 with (REFIID, void **).
    (unsafe {
        call(
            this.cast(),
            0,
            &[riid as u64, ppv as u64],
            &[
                Kind::In(Pointee::Bytes(std::mem::size_of::<GUID>())),
                Kind::OutIfaceRiid(0),
            ],
        )
    }) as u32 as HRESULT
}

/// `IUnknown::AddRef` of every stand-in: the layer's count (the Windows object keeps the references
/// the stand-in took over from wraps, at most as many; see `release`).
pub unsafe extern "system" fn add_ref(this: *mut IUnknown) -> ULONG {
    // SAFETY: a live stand-in.
    unsafe { &*(this as *const StandIn) }
        .refs
        .fetch_add(1, Ordering::Relaxed)
        + 1
}

/// `IUnknown::Release` of every stand-in: gives back a Windows reference that would outnumber the
/// layer's; at zero, the stand-in gives back its references to its Windows object and rests. It is
/// not freed: a COM object's identity is its address, which the layer keeps and compares (a
/// device's `IUnknown`, a resource), so a Windows object keeps one stand-in address per interface
/// for as long as it lives, and an object at the same address later gets the same stand-in. What stays is one small record per Windows address and
/// interface the layer has seen.
pub unsafe extern "system" fn release(this: *mut IUnknown) -> ULONG {
    let map = lock(&REMOTE.stand_ins);
    // SAFETY: a stand-in (they are never freed); the lock orders this with a concurrent wrap.
    let s = unsafe { &*(this as *const StandIn) };
    let left = s.refs.fetch_sub(1, Ordering::AcqRel) - 1;
    if left > 0 {
        // Each wrap brings a Windows reference with the layer's (a QueryInterface, a second borrow,
        // a second context on one device); the layer's own AddRefs bring none. So the Windows
        // references never outnumber the layer's, and one goes back when they would: the program
        // then counts the references the layer holds, as it does with a native device.
        let surplus = s.windows_refs.load(Ordering::Acquire) > left;
        if surplus {
            s.windows_refs.fetch_sub(1, Ordering::AcqRel);
        }
        drop(map);
        if surplus {
            // IUnknown::Release is slot 2.
            let _ = run(s.windows, 2, vec![]);
        }
        return left;
    }
    let windows_refs = s.windows_refs.swap(0, Ordering::AcqRel);
    drop(map);
    for _ in 0..windows_refs {
        // IUnknown::Release is slot 2.
        let _ = run(s.windows, 2, vec![]);
    }
    0
}

#[cfg(test)]
mod tests;
