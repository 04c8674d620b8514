//! The copy lane: a queue of a transfer-only family (a copy engine) for the runtime's copies:
//! uploads, read-backs, copies between resources under 16 MiB (`DEVICE_COPY_ON_LANE_BELOW`), and
//! copies between resources and registered host memory.
//!
//! Why: on NVIDIA the first OpenCL command after Vulkan work on the graphics or compute engine,
//! and the first Vulkan command after OpenCL's, waits about 150 µs for that engine to switch
//! between the two contexts where the platform runs a small copy there (from heap memory up to
//! 64 KiB, from pinned memory up to 16 KiB) or any kernel. A staging hand-off crosses twice: a
//! 4 KiB buffer took 227 µs against 18 µs for the platform's own copies. A copy engine never makes
//! that engine switch: `probe crossing` on an H200 (docs/gpu.md) measured a 4 KiB hand-off's four
//! copies at 422.8 µs from the graphics queue, 407.5 µs from a compute queue, 90.9 µs from a
//! transfer one.
//!
//! So a batch begun with a copy is recorded on the lane (`VulkanBackend::recording_on`,
//! `queue.rs`) and submitted there; what needs the main queue's family (a shader copy, an image's
//! first layout and clear, an image copy at a buffer offset that is no multiple of 4) or runs
//! faster there (a large copy between resources) goes to the main queue, the lane's open batch
//! submitted first. Copies to and from registered host memory are submitted at once
//! (`VulkanBackend::copy_batch`), each piece in a batch of its own that the host waits for, the
//! first joining a lane batch left open by the copies before it. The lane shares the backend's
//! timeline: a lane batch takes the next value, waits on the GPU for every batch before it and
//! signals its value, and the main queue's next batch waits for it, so the timeline still orders
//! everything. Resources, staging buffers and imported host memory are shared by both families
//! (`VK_SHARING_MODE_CONCURRENT`). `DXCL_COPY_QUEUE=0` turns the lane off ([`setting`]).

use std::collections::VecDeque;

use ash::vk;

/// The lane's queue and its command buffers.
pub struct Lane {
    pub raw: vk::Queue,
    pub family: u32,
    pub pool: vk::CommandPool,
    /// Command buffers whose batches completed.
    pub spare: Vec<vk::CommandBuffer>,
    /// Submitted command buffers and the timeline value each signals.
    pub busy: VecDeque<(u64, vk::CommandBuffer)>,
}

impl Lane {
    pub fn new(raw: vk::Queue, family: u32, pool: vk::CommandPool) -> Lane {
        Lane {
            raw,
            family,
            pool,
            spare: Vec::new(),
            busy: VecDeque::new(),
        }
    }

    /// Whether submitted command buffers wait to be given back.
    pub fn has_busy(&self) -> bool {
        !self.busy.is_empty()
    }

    /// Gives back the command buffers of batches the timeline passed (`done`).
    pub fn reclaim(&mut self, done: u64) {
        while let Some(&(v, cmd)) = self.busy.front() {
            if v > done {
                break;
            }
            self.busy.pop_front();
            self.spare.push(cmd);
        }
    }
}

/// `DXCL_COPY_QUEUE`, read once: `0` turns the lane off; `host` keeps it to the copies between
/// resources and registered host memory (the other copies on the main queue, to compare);
/// `all` makes one on a CPU device too (its one queue family's queue, so that the suites
/// exercise the lane's batches where no GPU is); anything else leaves it to GPUs with a
/// transfer-only family.
fn setting() -> &'static str {
    static SETTING: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SETTING.get_or_init(|| std::env::var("DXCL_COPY_QUEUE").unwrap_or_default())
}

/// Whether the backend may use a copy lane.
pub fn wanted() -> bool {
    setting() != "0"
}

/// Whether batches begun with a copy go to the lane (all but `DXCL_COPY_QUEUE=host`).
pub fn takes_batches() -> bool {
    setting() != "host"
}

/// Whether a CPU device gets a lane too (`DXCL_COPY_QUEUE=all`).
pub fn on_cpu() -> bool {
    setting() == "all"
}
