//! What a platform actually does where the spec leaves it a choice, or where it deviates, asked
//! of plain OpenCL objects through a dispatch table: the table below the layer (the layer's own
//! decisions, once per device), or the platform's own (`dxcl info`).
//!
//! - [`host_memory`]: whether `CL_MEM_USE_HOST_PTR` objects are the host memory (the host-pointer
//!   strategy then skips its copies).
//! - [`notes`]: deviations the layer works around, stated as platform notes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencl_sys::cl_device_id;
use opencl_sys::cl_icd::cl_icd_dispatch;

pub mod host_memory;
pub mod notes;
mod plain;

pub use host_memory::{probe as probe_host_memory, HostMemory, Verdict};
pub use notes::platform_notes;

/// Probes already run by the layer, per device handle.
static HOST_MEMORY: Mutex<Option<HashMap<usize, Arc<HostMemory>>>> = Mutex::new(None);

/// The host-memory probe of `device` through the table below the layer, run at its first use
/// and kept for the process. The lock is held while a probe runs: a second thread asking for
/// the same device waits for the one answer.
pub(crate) fn host_memory(device: cl_device_id) -> Arc<HostMemory> {
    let mut seen = HOST_MEMORY.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(HashMap::new);
    if let Some(found) = seen.get(&(device as usize)) {
        return found.clone();
    }
    let found = Arc::new(match crate::cl::target() {
        Some(t) => probe_host_memory(t, device),
        None => HostMemory {
            buffers: Verdict::Unknown("the layer has no table below it".into()),
            images: None,
        },
    });
    // DXCL_LOG=1, as for the layer's other decisions: once per device.
    if std::env::var("DXCL_LOG").is_ok_and(|v| v == "1") {
        eprintln!("dxcl-layer: device {device:p}: {}", found.describe());
    }
    seen.insert(device as usize, found.clone());
    found
}

/// The dispatch table of an OpenCL object of any platform: cl_khr_icd makes every object begin
/// with a pointer to its platform's table.
///
/// # Safety
/// `object` is a live object (platform, device, context…) of an ICD-loader platform, and the
/// platform outlives the returned reference.
pub unsafe fn platform_table<'a, T>(object: *mut T) -> Option<&'a cl_icd_dispatch> {
    // SAFETY: the caller's contract; the first field of an ICD object is its table pointer.
    unsafe { (*object.cast::<*const cl_icd_dispatch>()).as_ref() }
}
