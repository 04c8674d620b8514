//! Side tables about objects of the platform below, keyed by handle (as `usize`: handles are
//! plain identities here, never dereferenced by the tables).
//!
//! Entries are added after a successful create and removed: for contexts, at the application's
//! last `clReleaseContext` (counted here, see `context_refs`); for D3D memory objects and
//! sub-buffers, at the application's last release or from their destructor callbacks; for
//! kernels, from the intercepted release when the reference count says the
//! object dies. COM references held by entries are released after the lock is dropped, because a
//! D3D release can call back into the layer.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::core::tokens::{D3dVersion, Ext, ResourceKind};
use crate::d3d::com::ComPtr;
use crate::strategy::SharingStrategy;

/// A context created with a Direct3D device.
pub(crate) struct ContextEntry {
    pub version: D3dVersion,
    /// Validation: tells dxcl's runtime that `device` is OpenCL's reference. Declared before
    /// `device` so it goes first.
    pub validation: Option<crate::validate::DeviceMark>,
    /// The application's device, AddRef'd until the application's last `clReleaseContext`
    /// ("decremented when the OpenCL reference count on the returned OpenCL context drops to
    /// zero"); None after it, while memory objects of the context still hold the entry.
    pub device: Option<ComPtr>,
    /// The device's `IUnknown` identity (for "resource from the same device").
    pub identity: usize,
    pub user_sync: bool,
    /// The application's property list, terminator included, returned by CL_CONTEXT_PROPERTIES.
    pub properties: Vec<isize>,
    /// Every device reports CL_DEVICE_HOST_UNIFIED_MEMORY.
    pub host_unified: bool,
}

/// A memory object created from a Direct3D resource.
pub(crate) struct MemEntry {
    pub context: usize,
    pub version: D3dVersion,
    pub kind: ResourceKind,
    /// The `resource` argument exactly as the application passed it (CL_MEM_D3D1x_RESOURCE).
    pub app_resource: usize,
    /// How it is shared, chosen once at creation. Declared before `resource` so it is dropped
    /// first: it may borrow the resource's interfaces.
    pub sharing: Arc<dyn SharingStrategy>,
    /// Validation: what OpenCL does with the subresource, as dxcl's runtime is told. Declared
    /// before `resource` so it goes first (its pointer is borrowed from `resource`).
    pub validation: Option<Arc<crate::validate::AccessMark>>,
    /// The resource, AddRef'd while the memory object lives (released when the entry drops).
    #[allow(dead_code)] // Held for its Drop.
    pub resource: ComPtr,
    /// The resource's `IUnknown` identity and subresource: the duplicate-creation key.
    pub key: (usize, u32),
    pub subresource: u32,
    /// Context-wide acquire state, and the extension of the acquire that holds it.
    pub acquire: Arc<AcquireCell>,
    /// The application released its last reference, but the platform still holds the object
    /// for commands in flight and the strategy uses the resource's memory in place, so the entry
    /// (and the resource reference) stays until the destructor callback. For the application the
    /// object is gone: the resource can be shared again.
    pub app_released: bool,
}

/// Where a memory object stands between OpenCL and Direct3D, for the whole context. An acquire or
/// release call claims the object (`Acquiring`, `Releasing`) before its Direct3D and OpenCL work
/// and settles it after, so another thread sees the object as free only once the call that
/// freed it has done its work: an acquire on another thread right after a release's claim would
/// otherwise read the resource before the release wrote it back (staging copies) or before it
/// ordered Direct3D after the release's commands (host pointer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AcquireState {
    /// Direct3D's: an acquire may claim it.
    #[default]
    Released,
    /// An acquire call is at work on it.
    Acquiring,
    /// OpenCL's: commands may use it; a release may claim it.
    Acquired,
    /// A release call is at work on it.
    Releasing,
}

/// An object's [`AcquireState`] and the extension of the acquire that holds it (validation
/// reports), in one atomic. A call claims the object by compare-and-swap, with the registry's
/// lock held or, for the object its thread claimed last, without ([`last_claimed`]); of two
/// claims at once one wins. Only the claiming call settles it, by a store, and a claim that
/// reads the state meanwhile finds the object still claimed. An idle hand-off so takes the
/// registry's lock at most once per call (docs/benchmarks.md, "A cold CPU on demand").
#[derive(Default)]
pub(crate) struct AcquireCell(AtomicU8);

impl AcquireCell {
    const STATES: [AcquireState; 4] = [
        AcquireState::Released,
        AcquireState::Acquiring,
        AcquireState::Acquired,
        AcquireState::Releasing,
    ];

    pub fn state(&self) -> AcquireState {
        Self::STATES[usize::from(self.0.load(Ordering::Acquire) & 3)]
    }

    pub fn acquired_by(&self) -> Option<Ext> {
        let by = usize::from(self.0.load(Ordering::Acquire) >> 2);
        by.checked_sub(1).map(|i| Ext::ALL[i])
    }

    fn encode(state: AcquireState, by: Option<Ext>) -> u8 {
        let state = Self::STATES.iter().position(|&s| s == state).unwrap_or(0);
        let by = by
            .and_then(|e| Ext::ALL.iter().position(|&x| x == e))
            .map_or(0, |i| i + 1);
        (by << 2 | state) as u8
    }

    /// Settles the object (the claiming call), or sets it outright (tests).
    pub fn set(&self, state: AcquireState, by: Option<Ext>) {
        self.0.store(Self::encode(state, by), Ordering::Release);
    }

    /// Claims the object if it is in state `from`: `to`, held by `by`. Of two calls claiming
    /// it at once, with the registry's lock or without ([`last_claimed`]), one wins. Returns
    /// what it replaced, for [`put_back`](Self::put_back).
    pub fn claim(&self, from: AcquireState, to: AcquireState, by: Option<Ext>) -> Option<u8> {
        let new = Self::encode(to, by);
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (Self::STATES[usize::from(now & 3)] == from).then_some(new)
            })
            .ok()
    }

    /// Undoes a [`claim`](Self::claim) of a call that claims nothing after all.
    pub fn put_back(&self, replaced: u8) {
        self.0.store(replaced, Ordering::Release);
    }
}

/// Bumped, under the registry's lock, whenever a memory object's or a context's entry is added,
/// replaced or removed: what a thread remembers of the entry it claimed last ([`last_claimed`])
/// holds only while this count is the one it read.
static CHANGES: AtomicU64 = AtomicU64::new(0);

fn changed() {
    CHANGES.fetch_add(1, Ordering::AcqRel);
}

/// What a claim needs of a memory object's entry and its context's, remembered by the thread
/// that claimed it last: an idle hand-off claims the same object again and again, and the
/// registry's lock and two table look-ups are much of a claim on a CPU whose caches lost them
/// (docs/benchmarks.md, "A cold CPU on demand").
struct Remembered {
    mem: usize,
    context: usize,
    version: D3dVersion,
    /// The count of [`CHANGES`] under the lock that found them.
    changes: u64,
    user_sync: bool,
    /// Weak: what a thread remembers must not keep a strategy past its memory object.
    sharing: std::sync::Weak<dyn SharingStrategy>,
    acquire: Arc<AcquireCell>,
}

thread_local! {
    static LAST_CLAIMED: std::cell::RefCell<Option<Remembered>> =
        const { std::cell::RefCell::new(None) };
}

/// Called with the registry's lock held, after this thread's claim of `mem` (`entry`, of a
/// context with `user_sync`): remembered for its next claim. Not a memory object with
/// validation marks: its claims take the lock.
pub(crate) fn remember(mem: usize, entry: &MemEntry, user_sync: bool) {
    if entry.validation.is_some() {
        return;
    }
    let remembered = Remembered {
        mem,
        context: entry.context,
        version: entry.version,
        changes: CHANGES.load(Ordering::Acquire),
        user_sync,
        sharing: Arc::downgrade(&entry.sharing),
        acquire: entry.acquire.clone(),
    };
    let _ = LAST_CLAIMED.try_with(|l| *l.borrow_mut() = Some(remembered));
}

/// What a claim of a memory object finds: its context's user sync, its strategy and its state.
pub(crate) type Claimable = (bool, Arc<dyn SharingStrategy>, Arc<AcquireCell>);

/// The entry of `mem` as this thread's last claim found it, while no entry was added or removed
/// since and it is a memory object of `version` in `context`, to be claimed with
/// [`AcquireCell::claim`]. None: look it up.
pub(crate) fn last_claimed(mem: usize, context: usize, version: D3dVersion) -> Option<Claimable> {
    LAST_CLAIMED
        .try_with(|l| {
            let l = l.borrow();
            let r = l.as_ref()?;
            let current = r.mem == mem
                && r.context == context
                && r.version == version
                && r.changes == CHANGES.load(Ordering::Acquire);
            if !current {
                return None;
            }
            Some((r.user_sync, r.sharing.upgrade()?, r.acquire.clone()))
        })
        .ok()
        .flatten()
}

impl MemEntry {
    /// Whether this entry makes creating another `cl_mem` from (subresource `key.1` of) the
    /// resource `key.0` an error: "a cl_mem from ... resource has already been created".
    pub fn holds(&self, key: (usize, u32)) -> bool {
        self.key == key && !self.app_released
    }
}

#[derive(Default)]
pub(crate) struct Registry {
    pub contexts: FxHashMap<usize, ContextEntry>,
    /// Contexts whose properties named only NULL D3D devices → the application's list (the
    /// platform saw it without them).
    pub plain_properties: FxHashMap<usize, Vec<isize>>,
    pub mems: FxHashMap<usize, MemEntry>,
    /// (resource identity, subresource) that a create call is sharing now ([`Claim`]).
    pub claims: FxHashSet<(usize, u32)>,
    /// Sub-buffer → its D3D parent.
    pub sub_buffers: FxHashMap<usize, usize>,
    /// Other memory objects that alias a D3D object's memory (images made from a D3D buffer or
    /// image, `CL_MEM_USE_HOST_PTR` inside its host memory, sub-buffers of those) → the D3D object.
    pub derived: FxHashMap<usize, usize>,
    /// The application's references to the contexts above (D3D and plain), counted by the
    /// intercepted `clRetainContext`/`clReleaseContext`. No destructor callback is used: the
    /// spec ties the device reference to this count, and NVIDIA's driver 580 can hang in
    /// `clReleaseContext` when a context and a memory object both have one (docs/gpu.md).
    pub context_refs: FxHashMap<usize, u32>,
    /// Memory objects watched by a destructor callback → that watch's number (its user data).
    /// NVIDIA runs these callbacks late, when the handle may already name a new object: a
    /// callback acts only while its number is still the handle's.
    pub watches: FxHashMap<usize, usize>,
    /// Watch numbers of memory objects whose entries went at the application's last release
    /// while the platform still held them → the signal their destructor callback sets.
    pub destroyed: FxHashMap<usize, Arc<crate::core::signal::Signal>>,
    /// Kernel → (argument index → D3D memory object set as that argument).
    pub kernel_args: FxHashMap<usize, BTreeMap<u32, usize>>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// A subresource one create call is sharing, from its check to its entry: of two threads
/// sharing the same subresource at once only one gets it, and nothing is made for the other.
pub(crate) struct Claim((usize, u32));

impl Claim {
    /// `key`, unless a memory object holds it ([`MemEntry::holds`]) or another call claims it.
    pub fn take(key: (usize, u32)) -> Option<Claim> {
        with(|r| {
            let free = !r.mems.values().any(|m| m.holds(key)) && r.claims.insert(key);
            // Made only when taken: a Claim dropped here would lock the registry again.
            free.then(|| Claim(key))
        })
    }

    /// Records `entry` for `mem`; the claim ends with it.
    pub fn register(self, mem: usize, entry: MemEntry) {
        // A stale entry of a handle the platform reused goes after the lock.
        let stale = with(|r| {
            changed();
            r.mems.insert(mem, entry)
        });
        drop(stale);
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        with(|r| r.claims.remove(&self.0));
    }
}

/// Runs `f` with the registry locked. Never call the platform or D3D from `f`.
pub(crate) fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut guard: MutexGuard<'_, Option<Registry>> =
        REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Registry::default))
}

impl Registry {
    /// The D3D memory object behind `mem`: itself, the parent of a sub-buffer, or the object a
    /// derived memory object aliases.
    pub fn root_key(&self, mem: usize) -> Option<usize> {
        if self.mems.contains_key(&mem) {
            return Some(mem);
        }
        let root = self
            .sub_buffers
            .get(&mem)
            .or_else(|| self.derived.get(&mem))?;
        self.mems.contains_key(root).then_some(*root)
    }

    pub fn d3d_root(&self, mem: usize) -> Option<&MemEntry> {
        self.mems.get(&self.root_key(mem)?)
    }

    /// Records that `mem` aliases the D3D object behind `parent` (if any); true when it does.
    pub fn record_derived(&mut self, mem: usize, parent: usize) -> bool {
        match self.root_key(parent) {
            Some(root) => {
                self.derived.insert(mem, root);
                true
            }
            None => false,
        }
    }

    /// Fails with CL_D3D1x_RESOURCE_NOT_ACQUIRED_* when `mem` is (or is a sub-buffer of) a D3D
    /// memory object that is not acquired.
    pub fn check_acquired(&self, mem: usize) -> Result<(), opencl_sys::cl_int> {
        match self.d3d_root(mem) {
            // "If an OpenCL memory object created from a Direct3D 1x resource is used while it is
            // not currently acquired by OpenCL, the call attempting to use that OpenCL memory
            // object will return CL_D3D1x_RESOURCE_NOT_ACQUIRED."
            Some(e) if e.acquire.state() != AcquireState::Acquired => Err(e.version.not_acquired()),
            _ => Ok(()),
        }
    }
}

/// Handle → key.
pub(crate) fn key<T>(handle: *mut T) -> usize {
    handle as usize
}

/// What an entry removal hands back, to be dropped (COM releases) outside the lock, in order:
/// a device's validation mark goes before the device.
type Released = (
    Option<ContextEntry>,
    Option<(Option<crate::validate::DeviceMark>, ComPtr)>,
);

impl Registry {
    /// Records the entry of a Direct3D context just created, which the application holds one
    /// reference to.
    pub fn insert_context(&mut self, context: usize, entry: ContextEntry) {
        changed();
        self.contexts.insert(context, entry);
        self.track_context(context);
    }

    /// Counts a context the application now holds one reference to (just created).
    pub fn track_context(&mut self, context: usize) {
        self.context_refs.insert(context, 1);
    }

    /// The application's `clRetainContext` succeeded.
    pub fn context_retained(&mut self, context: usize) {
        if let Some(n) = self.context_refs.get_mut(&context) {
            *n += 1;
        }
    }

    /// The application's `clReleaseContext` succeeded. At its last reference the device
    /// reference goes; the rest of the entry stays while the context's memory objects need it
    /// (acquire and release still read it), and goes with the last of them.
    fn context_released(&mut self, context: usize) -> Option<Released> {
        match self.context_refs.get_mut(&context) {
            Some(n) if *n > 1 => {
                *n -= 1;
                return None;
            }
            Some(_) => {
                self.context_refs.remove(&context);
            }
            None => return None,
        }
        self.plain_properties.remove(&context);
        if self.mems.values().any(|m| m.context == context) {
            let device = self.contexts.get_mut(&context).and_then(|e| {
                let mark = e.validation.take();
                Some((mark, e.device.take()?))
            });
            Some((None, device))
        } else {
            Some((self.contexts.remove(&context), None))
        }
    }

    /// A context the application released, once its last memory object is gone.
    fn retire_if_orphaned(&mut self, context: usize) -> Option<ContextEntry> {
        let orphan = !self.context_refs.contains_key(&context)
            && !self.mems.values().any(|m| m.context == context);
        orphan.then(|| self.contexts.remove(&context)).flatten()
    }
}

/// A new watch number for `mem`, to be passed as its destructor callback's user data.
pub(crate) fn watch_number(mem: usize) -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    with(|r| r.watches.insert(mem, n));
    n
}

/// Ends `mem`'s current watch, so its destructor callback drops nothing; returns the number for
/// [`restore_watch`] should the release fail.
pub(crate) fn retire_watch(mem: usize) -> Option<usize> {
    with(|r| r.watches.remove(&mem))
}

/// Puts back a watch [`retire_watch`] ended (the release it preceded failed).
pub(crate) fn restore_watch(mem: usize, n: usize) {
    with(|r| r.watches.insert(mem, n));
}

/// Which drop: the application's release of the object it holds (`Now`), or a destructor
/// callback carrying its watch number (`Watch`), ignored unless that number is still current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Removal {
    Now,
    Watch(usize),
}

/// The application released a context (see [`Registry::context_released`]); returns whether
/// that was its last reference to a context of ours.
pub(crate) fn context_released(context: usize) -> bool {
    let released = with(|r| {
        // The context's entry may go.
        changed();
        r.context_released(context)
    });
    let last = released.is_some();
    drop(released);
    last
}

/// Removes a memory object's entries (destructor callback), releasing COM references outside the
/// lock. A D3D object's derived entries go with it: a handle may be reused once its object is
/// gone, and must not inherit a guard.
/// Drops a memory object's entries; returns whether it was a D3D object of ours.
pub(crate) fn drop_mem(mem: usize, how: Removal) -> bool {
    let entry = with(|r| {
        if let Removal::Watch(n) = how {
            if let Some(destroyed) = r.destroyed.remove(&n) {
                destroyed.set();
            }
            if r.watches.get(&mem) != Some(&n) {
                return (None, None);
            }
        }
        r.watches.remove(&mem);
        r.sub_buffers.remove(&mem);
        r.derived.remove(&mem);
        let entry = r.mems.remove(&mem);
        if entry.is_some() {
            // Its context's entry may go with it.
            changed();
        }
        let context = entry.as_ref().and_then(|e| {
            r.sub_buffers.retain(|_, root| *root != mem);
            r.derived.retain(|_, root| *root != mem);
            r.retire_if_orphaned(e.context)
        });
        (entry, context)
    });
    let (mem_entry, context) = entry;
    let was_d3d = mem_entry.is_some();
    match mem_entry {
        Some(e) if crate::validate::on() => {
            // The same order as the entry's own drop, with the resource's release watched.
            let MemEntry {
                sharing,
                validation,
                resource,
                version,
                kind,
                app_resource,
                ..
            } = e;
            drop(sharing);
            drop(validation);
            crate::validate::resource_released(mem, version, kind, app_resource, resource);
        }
        e => drop(e),
    }
    drop(context);
    was_d3d
}

#[cfg(test)]
mod tests {
    use super::*;
    use dxcl_abi::{IUnknown, IUnknownVtbl};

    /// A COM object whose AddRef/Release do nothing (the stubs return 0), for entries' references.
    fn inert_com() -> ComPtr {
        static VTBL: IUnknownVtbl = IUnknownVtbl::NOT_IMPLEMENTED;
        let obj: &'static mut IUnknown = Box::leak(Box::new(IUnknown { lpVtbl: &VTBL }));
        // SAFETY: a live object (leaked) whose Release is a no-op.
        unsafe { ComPtr::from_owned(obj) }.unwrap()
    }

    /// A claim checks the object's state and sets it in one step: of two claims of the same
    /// object (eight threads here) one wins, and a claim undone puts back what was there.
    #[test]
    fn of_two_claims_one_wins_and_a_put_back_undoes_it() {
        let ext = Ext::ALL[1];
        let cell = AcquireCell::default();
        let was = cell
            .claim(AcquireState::Released, AcquireState::Acquiring, Some(ext))
            .expect("released: claimable");
        assert_eq!(
            (cell.state(), cell.acquired_by()),
            (AcquireState::Acquiring, Some(ext))
        );
        assert!(cell
            .claim(AcquireState::Released, AcquireState::Acquiring, Some(ext))
            .is_none());
        assert!(cell
            .claim(AcquireState::Acquired, AcquireState::Releasing, None)
            .is_none());
        cell.put_back(was);
        assert_eq!(
            (cell.state(), cell.acquired_by()),
            (AcquireState::Released, None)
        );
        let cell = Arc::new(AcquireCell::default());
        let start = Arc::new(std::sync::Barrier::new(8));
        let racers: Vec<_> = (0..8)
            .map(|_| {
                let (cell, start) = (cell.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    cell.claim(AcquireState::Released, AcquireState::Acquiring, None)
                        .is_some()
                })
            })
            .collect();
        let wins = racers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&won| won)
            .count();
        assert_eq!(wins, 1);
    }

    /// A thread finds the object it claimed last without the registry's lock while no entry was
    /// added or removed since, and only for the same object, context and version; the entry's
    /// end makes it look the object up again, and what it remembers keeps no strategy alive.
    #[test]
    fn a_thread_claims_its_last_object_again_until_an_entry_changes() {
        let mem = 0x9_0000;
        let v = D3dVersion::D3D11;
        with(|r| {
            changed();
            r.mems.insert(mem, d3d_mem(v));
            // Under the lock no other test's entry can change meanwhile.
            remember(mem, &r.mems[&mem], true);
            let (user_sync, _, cell) = last_claimed(mem, 1, v).expect("remembered");
            assert!(user_sync);
            assert!(Arc::ptr_eq(&cell, &r.mems[&mem].acquire));
            assert!(last_claimed(mem, 2, v).is_none(), "another context");
            assert!(
                last_claimed(mem, 1, D3dVersion::D3D10).is_none(),
                "another version"
            );
            assert!(last_claimed(mem + 1, 1, v).is_none(), "another object");
            changed();
            assert!(last_claimed(mem, 1, v).is_none(), "an entry changed");
            remember(mem, &r.mems[&mem], true);
            assert!(last_claimed(mem, 1, v).is_some(), "remembered again");
        });
        let strategy = with(|r| Arc::downgrade(&r.mems[&mem].sharing));
        assert!(drop_mem(mem, Removal::Now));
        assert!(last_claimed(mem, 1, v).is_none(), "gone");
        assert!(strategy.upgrade().is_none(), "not kept by the thread");
    }

    fn d3d_mem(version: D3dVersion) -> MemEntry {
        MemEntry {
            context: 1,
            version,
            kind: ResourceKind::Buffer,
            app_resource: 0,
            sharing: Arc::new(Unshared),
            validation: None,
            resource: inert_com(),
            key: (0, 0),
            subresource: 0,
            acquire: Default::default(),
            app_released: false,
        }
    }

    /// A strategy that does nothing: these tests exercise the tables only.
    struct Unshared;

    impl SharingStrategy for Unshared {
        fn decision(&self) -> crate::strategy::Decision {
            crate::strategy::Decision {
                strategy: crate::strategy::Strategy::HostPointer,
                reason: "test",
            }
        }
        fn acquire(
            &self,
            _: opencl_sys::cl_mem,
            _: &mut crate::strategy::HandOff<'_>,
        ) -> Result<(), opencl_sys::cl_int> {
            Ok(())
        }
        fn release(
            &self,
            _: opencl_sys::cl_mem,
            _: &mut crate::strategy::HandOff<'_>,
        ) -> Result<(), opencl_sys::cl_int> {
            Ok(())
        }
        fn released(
            &self,
            _: &mut crate::strategy::HandOff<'_>,
            _: opencl_sys::cl_event,
        ) -> Result<(), opencl_sys::cl_int> {
            Ok(())
        }
    }

    fn d3d_context() -> ContextEntry {
        ContextEntry {
            version: D3dVersion::D3D11,
            validation: None,
            device: Some(inert_com()),
            identity: 0,
            user_sync: false,
            properties: vec![0],
            host_unified: false,
        }
    }

    #[test]
    fn the_applications_last_context_release_drops_the_device() {
        let mut r = Registry::default();
        r.contexts.insert(1, d3d_context());
        r.track_context(1);
        r.context_retained(1);
        // One of two references: nothing goes.
        assert!(r.context_released(1).is_none());
        assert!(r.contexts[&1].device.is_some());
        // The last: no memory object needs the entry, so it goes whole.
        let (entry, device) = r.context_released(1).expect("the last reference");
        assert!(entry.is_some() && device.is_none());
        assert!(r.contexts.is_empty() && r.context_refs.is_empty());
        // A release the application should not have made changes nothing.
        assert!(r.context_released(1).is_none());
    }

    #[test]
    fn a_released_context_stays_for_its_memory_objects_without_the_device() {
        let mut r = Registry::default();
        r.contexts.insert(1, d3d_context());
        r.track_context(1);
        r.mems.insert(10, d3d_mem(D3dVersion::D3D11));
        assert!(
            r.retire_if_orphaned(1).is_none(),
            "the application holds it"
        );
        let (entry, device) = r.context_released(1).expect("the last reference");
        assert!(
            entry.is_none() && device.is_some(),
            "the device reference goes now"
        );
        assert!(r.contexts[&1].device.is_none());
        assert!(
            r.retire_if_orphaned(1).is_none(),
            "memory object 10 still needs it"
        );
        r.mems.remove(&10);
        assert!(r.retire_if_orphaned(1).is_some());
        assert!(r.contexts.is_empty());
    }

    #[test]
    fn derived_objects_resolve_to_their_d3d_object() {
        let mut r = Registry::default();
        r.mems.insert(10, d3d_mem(D3dVersion::D3D10));
        r.sub_buffers.insert(11, 10);
        // An image over a sub-buffer, a buffer aliasing that image's memory.
        assert!(r.record_derived(12, 11));
        assert!(r.record_derived(13, 12));
        assert!(!r.record_derived(14, 99), "a plain parent derives nothing");
        for m in [10, 11, 12, 13] {
            assert_eq!(r.root_key(m), Some(10), "{m}");
            assert_eq!(r.check_acquired(m), Err(D3dVersion::D3D10.not_acquired()));
        }
        assert_eq!(r.root_key(14), None);
        assert_eq!(r.check_acquired(14), Ok(()));
        for state in [AcquireState::Acquiring, AcquireState::Releasing] {
            r.mems[&10].acquire.set(state, None);
            assert_eq!(
                r.check_acquired(13),
                Err(D3dVersion::D3D10.not_acquired()),
                "{state:?}"
            );
        }
        r.mems[&10].acquire.set(AcquireState::Acquired, None);
        assert_eq!(r.check_acquired(13), Ok(()));
    }

    #[test]
    fn a_late_callback_leaves_a_new_object_of_the_same_handle_alone() {
        let mem = 0x8_0000;
        with(|r| r.mems.insert(mem, d3d_mem(D3dVersion::D3D11)));
        let old = watch_number(mem);
        // The application's release drops it; the handle is reused by a new object.
        assert!(drop_mem(mem, Removal::Now));
        with(|r| r.mems.insert(mem, d3d_mem(D3dVersion::D3D11)));
        let new = watch_number(mem);
        // The first object's callback arrives now (NVIDIA defers them): it must not drop.
        assert!(!drop_mem(mem, Removal::Watch(old)));
        assert!(with(|r| r.mems.contains_key(&mem)));
        assert!(drop_mem(mem, Removal::Watch(new)));
        assert!(!with(|r| r.mems.contains_key(&mem)));
    }

    #[test]
    fn a_callback_racing_the_applications_last_release_leaves_the_entry_to_it() {
        let mem = 0x9_0000;
        with(|r| r.mems.insert(mem, d3d_mem(D3dVersion::D3D11)));
        let n = watch_number(mem);
        // A release that failed below gives the callback its watch back.
        let retired = retire_watch(mem).expect("watched");
        restore_watch(mem, retired);
        // The release that succeeds: the callback, even if it runs first, drops nothing...
        assert_eq!(retire_watch(mem), Some(n));
        assert!(!drop_mem(mem, Removal::Watch(n)));
        assert!(with(|r| r.mems.contains_key(&mem)));
        // ...and the releasing thread drops the entry itself.
        assert!(drop_mem(mem, Removal::Now));
    }

    #[test]
    fn destruction_drops_derived_records() {
        // Keys unique to this test: the registry is process-wide.
        let (root, image, alias) = (0x7_0000, 0x7_0001, 0x7_0002);
        with(|r| {
            r.mems.insert(root, d3d_mem(D3dVersion::D3D11));
            assert!(r.record_derived(image, root) && r.record_derived(alias, image));
        });
        drop_mem(image, Removal::Now);
        with(|r| {
            assert!(!r.derived.contains_key(&image));
            assert_eq!(r.root_key(alias), Some(root));
        });
        // The D3D object goes: nothing may keep pointing at its (reusable) handle.
        drop_mem(root, Removal::Now);
        with(|r| {
            assert!(!r.derived.contains_key(&alias));
            assert_eq!(r.root_key(alias), None);
        });
    }
}
