//! The device's timeline: the value batches have reached, waits for one, device loss, and
//! memory made safe for the CPU.

use super::*;

impl VulkanBackend {
    /// Records a failure that leaves the timeline unreliable: from now on the device is lost,
    /// waits return at once and CPU access fails with `DeviceLost`.
    pub(super) fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }

    pub(super) fn check_lost(&self) -> Result<(), BackendError> {
        if self.lost.load(Ordering::Acquire) {
            Err(BackendError::DeviceLost)
        } else {
            Ok(())
        }
    }

    /// Whether the timeline has passed `value`, asking the driver only when no earlier answer
    /// said so: a status query of work known complete (an idle hand-off's) costs no call.
    pub(super) fn passed(&self, value: u64) -> bool {
        value <= self.reached.load(Ordering::Acquire) || self.completed() >= value
    }

    /// The timeline's current value; `u64::MAX` once the device is lost (nothing is pending any
    /// more: waiting for it would never end).
    pub(super) fn completed(&self) -> u64 {
        if self.lost.load(Ordering::Acquire) {
            return u64::MAX;
        }
        // SAFETY: the timeline semaphore belongs to this device.
        match unsafe { self.device.get_semaphore_counter_value(self.timeline) } {
            Ok(v) => {
                self.reached.fetch_max(v, Ordering::AcqRel);
                v
            }
            Err(_) => {
                self.mark_lost();
                u64::MAX
            }
        }
    }

    /// Blocks until the timeline reaches `value` (which must have been submitted).
    pub(super) fn wait_value(&self, value: u64) -> Result<(), BackendError> {
        let semaphores = [self.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        self.counters.cpu_waits.fetch_add(1, Ordering::Relaxed);
        let spin = self.spin_us();
        if spin > 0 {
            // Polls the counter (a read of the semaphore's value, no wait set up in the driver).
            // A failed read only ends the poll: the sleeping wait below decides about a loss.
            let until = std::time::Instant::now() + std::time::Duration::from_micros(spin);
            while !self.lost.load(Ordering::Acquire) && std::time::Instant::now() < until {
                // SAFETY: the timeline semaphore belongs to this device.
                match unsafe { self.device.get_semaphore_counter_value(self.timeline) } {
                    Ok(v) if v >= value => {
                        self.reached.fetch_max(v, Ordering::AcqRel);
                        return Ok(());
                    }
                    Ok(_) => std::hint::spin_loop(),
                    Err(_) => break,
                }
            }
        }
        loop {
            self.check_lost()?;
            // SAFETY: the timeline semaphore belongs to this device; `info` outlives the call.
            // A bounded timeout lets a loss noticed elsewhere end the wait.
            match unsafe { self.device.wait_semaphores(&info, 100_000_000) } {
                Ok(()) => {
                    self.reached.fetch_max(value, Ordering::AcqRel);
                    return Ok(());
                }
                Err(vk::Result::TIMEOUT) => continue,
                Err(_) => {
                    self.mark_lost();
                    return Err(BackendError::DeviceLost);
                }
            }
        }
    }

    /// Makes the memory safe for the CPU: every batch that touches it, and every shared-semaphore
    /// wait, has completed.
    pub(super) fn settle(&self, m: &Memory) -> Result<(), BackendError> {
        let target = {
            let mut q = lock(&self.queue);
            let target = m.last_use.load(Ordering::Acquire).max(q.floor);
            if target >= q.next_value {
                self.submit(&mut q, None, None)?;
            }
            target
        };
        self.wait_value(target)?;
        self.reclaim(&mut lock(&self.queue));
        Ok(())
    }
}

/// How long a wait polls on a GPU when `DXCL_WAIT_SPIN_US` does not say: on an H200 a staging
/// hand-off of 256 KiB or 1 MiB took 0.56–0.85× the time of a sleeping wait's
/// (docs/runtime.md), and a wait is on a thread that has nothing else to do until the copy
/// ends. NVIDIA's OpenCL polls likewise while the CPU has cores to spare.
const GPU_SPIN_US: u64 = 60;

impl VulkanBackend {
    /// How long a wait polls the timeline before it sleeps: `DXCL_WAIT_SPIN_US` (microseconds,
    /// read once per process; 0 sleeps at once), else [`GPU_SPIN_US`] on a GPU and 0 on a CPU
    /// device, whose copies run on the CPU a poll would take.
    fn spin_us(&self) -> u64 {
        static SPIN: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
        let set = *SPIN.get_or_init(|| {
            std::env::var("DXCL_WAIT_SPIN_US")
                .ok()
                .and_then(|v| v.trim().parse().ok())
        });
        set.unwrap_or(if self.adapter.software {
            0
        } else {
            GPU_SPIN_US
        })
    }
}
