//! The lock of one Direct3D device, held around each sequence of the layer's Direct3D calls on
//! it (the staging resources' copies and maps).
//!
//! The D3D11 immediate context is not thread-safe, and acquires and releases may run on any
//! number of application threads at once: all of the layer's Direct3D work on one device runs
//! under this lock, so the layer never overlaps itself. The application's own calls on other
//! threads are its side of the contract (the layer README's threading paragraph). D3D10 devices
//! are thread-safe unless created `D3D10_CREATE_DEVICE_SINGLETHREADED`; their work takes the same
//! lock, which costs nothing of note and covers that case.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::thread::ThreadId;

use super::multithread::Multithread;

/// The lock of one Direct3D device, shared by every staging resource of that device: held
/// around each sequence of the layer's calls on the device (its immediate context for D3D11).
///
/// Re-entrant: a staging release's write-back runs as the runtime's pending work (dxcl's runtime)
/// inside a Direct3D call, which may be one the layer makes under this lock on the same thread.
/// Where the device has a multithread lock ([`Multithread`]), that lock is taken first, then
/// this one, in every sequence, so a write-back on a platform thread (foreign devices) never
/// overlaps the application's own calls, and the two locks are always taken in one order.
#[derive(Clone)]
pub(crate) struct DeviceLock(Arc<DeviceLockState>);

struct DeviceLockState {
    /// The thread holding the lock and how many times it took it.
    owner: Mutex<Option<(ThreadId, usize)>>,
    freed: Condvar,
    multithread: Option<Multithread>,
}

/// One hold of a [`DeviceLock`], released on drop.
pub(crate) struct DeviceGuard<'a>(&'a DeviceLockState);

impl DeviceLock {
    /// The lock of the device whose `IUnknown` identity is `device` (`multithread`: its own lock,
    /// used by the first staging resource's lock of the device). The map keeps weak references: a
    /// lock lives as long as a staging resource of its device, and each of those holds the device,
    /// so an identity cannot be reused by another device while its lock lives.
    pub fn of(device: usize, multithread: Option<Multithread>) -> DeviceLock {
        static LOCKS: OnceLock<Mutex<HashMap<usize, Weak<DeviceLockState>>>> = OnceLock::new();
        let mut locks = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(lock) = locks.get(&device).and_then(Weak::upgrade) {
            return DeviceLock(lock);
        }
        locks.retain(|_, l| l.strong_count() > 0);
        let lock = Arc::new(DeviceLockState {
            owner: Mutex::new(None),
            freed: Condvar::new(),
            multithread,
        });
        locks.insert(device, Arc::downgrade(&lock));
        DeviceLock(lock)
    }

    pub fn hold(&self) -> DeviceGuard<'_> {
        let state = &*self.0;
        if let Some(m) = &state.multithread {
            m.enter();
        }
        let me = std::thread::current().id();
        // Nothing the lock guards can be left half-done by a panic (it guards no data).
        let mut owner = state.owner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &mut *owner {
                None => {
                    *owner = Some((me, 1));
                    break;
                }
                Some((t, depth)) if *t == me => {
                    *depth += 1;
                    break;
                }
                Some(_) => {
                    owner = state.freed.wait(owner).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
        DeviceGuard(state)
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        let mut owner = self.0.owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, depth)) = &mut *owner {
            *depth -= 1;
            if *depth == 0 {
                *owner = None;
                self.0.freed.notify_one();
            }
        }
        drop(owner);
        if let Some(m) = &self.0.multithread {
            m.leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether another thread could take the lock now.
    fn free_for_others(l: &DeviceLock) -> bool {
        let l = l.clone();
        std::thread::spawn(move || {
            l.0.owner
                .lock()
                .unwrap()
                .is_none_or(|(t, _)| t == std::thread::current().id())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn one_lock_per_device() {
        let a = DeviceLock::of(0x1000, None);
        let b = DeviceLock::of(0x1000, None);
        let other = DeviceLock::of(0x2000, None);
        assert!(Arc::ptr_eq(&a.0, &b.0), "one device, one lock");
        assert!(!Arc::ptr_eq(&a.0, &other.0), "two devices, two locks");
        let held = a.hold();
        assert!(
            !free_for_others(&b),
            "held for every staging resource of the device"
        );
        assert!(free_for_others(&other), "another device's work goes on");
        drop(held);
        // Once no staging resource of a device is left, its entry goes with the next new device.
        drop((a, b));
        let _third = DeviceLock::of(0x3000, None);
        assert!(free_for_others(&DeviceLock::of(0x1000, None)));
    }

    #[test]
    fn re_entrant_on_its_thread_only() {
        let lock = DeviceLock::of(0x4000, None);
        let outer = lock.hold();
        // Pending work inside a Direct3D call the layer makes under the lock takes it again.
        let inner = lock.hold();
        drop(inner);
        assert!(!free_for_others(&lock), "still held by the outer hold");
        let (l2, entered) = (
            lock.clone(),
            Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let e2 = entered.clone();
        let t = std::thread::spawn(move || {
            let _g = l2.hold();
            e2.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!entered.load(std::sync::atomic::Ordering::SeqCst));
        drop(outer);
        t.join().unwrap();
        assert!(entered.load(std::sync::atomic::Ordering::SeqCst));
        assert!(free_for_others(&lock));
    }
}
