//! The backend's one queue: a batch being recorded, batches in flight, and the timeline values
//! that order them.
//!
//! Batch `n` (counting from 1) signals the timeline with value `n` when it is submitted, so
//! "everything issued so far" is the value of the batch being recorded, or of the last one
//! submitted when nothing is recorded.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ash::vk;

use super::image::{self, Image};
use super::lane::Lane;
use super::staging::{SparePool, Staging, UploadRing};
use super::{Memory, VulkanBackend};
use crate::backend::BackendError;

/// A submitted batch: its command buffer returns to the pool and its staging buffers to the
/// spares once the timeline reaches `value`.
pub struct Batch {
    pub value: u64,
    pub cmd: Option<vk::CommandBuffer>,
    pub staging: Vec<Staging>,
}

pub struct Queue {
    pub raw: vk::Queue,
    pub pool: vk::CommandPool,
    /// The command buffer being recorded, if any.
    pub recording: Option<vk::CommandBuffer>,
    /// Staging buffers the recorded commands read or write.
    pub staging: Vec<Staging>,
    /// The timeline value the next submission signals.
    pub next_value: u64,
    pub in_flight: VecDeque<Batch>,
    /// Command buffers whose batches completed.
    pub spare_cmds: Vec<vk::CommandBuffer>,
    /// The value of the last shared-semaphore wait: CPU access waits for it.
    pub floor: u64,
    /// Shared-semaphore waits for the next submission (value `next_value`), which carries the
    /// work that follows them rather than an empty batch of its own.
    pub waits: Vec<vk::Semaphore>,
    /// The upload ring, made by the first upload.
    pub ring: Option<UploadRing>,
    /// Staging buffers of completed batches, for the next map through a staging copy.
    pub spare: SparePool,
    /// What was freed while the device may still use it, destroyed once the timeline reaches
    /// each value (in no particular order).
    pub retired: Vec<(u64, Retired)>,
    /// The copy lane (`lane.rs`), where the device has a transfer-only family.
    pub lane: Option<Lane>,
    /// `recording` is a lane command buffer: transfers only, no compute stages; it is submitted
    /// on the lane.
    pub on_lane: bool,
    /// The value of the last lane batch the main queue's next batch has not waited for yet.
    pub lane_value: u64,
}

/// Something `free` (or a replaced upload ring) left for the device to finish with.
pub enum Retired {
    Memory(Arc<Memory>),
    Staging(Staging),
}

impl Queue {
    pub fn new(raw: vk::Queue, pool: vk::CommandPool, lane: Option<Lane>) -> Queue {
        Queue {
            raw,
            pool,
            recording: None,
            staging: Vec::new(),
            next_value: 1,
            in_flight: VecDeque::new(),
            spare_cmds: Vec::new(),
            floor: 0,
            waits: Vec::new(),
            ring: None,
            spare: SparePool::default(),
            retired: Vec::new(),
            lane,
            on_lane: false,
            lane_value: 0,
        }
    }
}

/// The engine a recorded command needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A transfer a copy engine takes (buffer offsets of image copies a multiple of 4): a new
    /// batch of them goes to the copy lane where there is one.
    Copy,
    /// The main queue's family: shader copies, clears, an image's first layout.
    Main,
}

/// From this many bytes on a copy between two resources runs on the main queue. A copy engine
/// moves device memory at about a fifth of the graphics engine's rate (on an H200 four copies of
/// a 256 MiB buffer took 12.1 ms on the lane against 2.6 ms on the main queue, two runs: 9 µs
/// more per MiB), so from about 16 MiB it costs more than the engine switch it spares OpenCL's
/// next command (about 150 µs, lane.rs). Copies across the bus (uploads, read-backs) stay on the
/// lane: that is what a copy engine is for.
pub const DEVICE_COPY_ON_LANE_BELOW: u64 = 16 << 20;

impl Engine {
    /// A copy between an image and a buffer at `buffer_offset`: a copy engine takes it at
    /// offsets of 4 bytes only.
    pub fn for_image_copy(buffer_offset: u64) -> Engine {
        if buffer_offset.is_multiple_of(4) {
            Engine::Copy
        } else {
            Engine::Main
        }
    }

    /// A copy of `bytes` between two resources ([`DEVICE_COPY_ON_LANE_BELOW`]).
    pub fn for_device_copy(bytes: u64) -> Engine {
        if bytes < DEVICE_COPY_ON_LANE_BELOW {
            Engine::Copy
        } else {
            Engine::Main
        }
    }

    /// The engine both rules allow: the copy lane only where neither needs the main queue.
    pub fn and(self, other: Engine) -> Engine {
        if self == Engine::Copy && other == Engine::Copy {
            Engine::Copy
        } else {
            Engine::Main
        }
    }
}

impl VulkanBackend {
    /// The command buffer being recorded, begun for `engine` if there is none: a new batch of
    /// copies goes to the copy lane, so that Direct3D's copies never take the engine the
    /// platform's OpenCL copies and kernels run on (lane.rs says what that costs). A batch
    /// already open takes copies as it is; a lane batch cannot take main-queue work and is
    /// submitted first (the timeline orders the two).
    pub(super) fn recording_on(
        &self,
        q: &mut Queue,
        engine: Engine,
    ) -> Result<vk::CommandBuffer, BackendError> {
        self.check_lost()?;
        if let Some(cmd) = q.recording {
            if !(q.on_lane && engine == Engine::Main) {
                return Ok(cmd);
            }
            self.submit(q, None, None)?;
        }
        if engine == Engine::Copy && q.lane.is_some() && super::lane::takes_batches() {
            return self.begin_on_lane(q);
        }
        let cmd = self.begin_command(q.pool, &mut q.spare_cmds)?;
        q.recording = Some(cmd);
        Ok(cmd)
    }

    /// Begins the recording on the copy lane (there is none being recorded).
    fn begin_on_lane(&self, q: &mut Queue) -> Result<vk::CommandBuffer, BackendError> {
        let lane = q.lane.as_mut().ok_or(BackendError::DeviceLost)?;
        let cmd = self.begin_command(lane.pool, &mut lane.spare)?;
        q.recording = Some(cmd);
        q.on_lane = true;
        Ok(cmd)
    }

    /// Orders a transfer or a shader copy after earlier ones on the same buffers and images
    /// (writes before reads and writes). Images stay in GENERAL. `transfers_only`: the command
    /// buffer is the copy lane's, whose queue has no compute stage.
    pub(super) fn transfer_barrier(
        &self,
        cmd: vk::CommandBuffer,
        buffers: &[vk::Buffer],
        images: &[Image],
        transfers_only: bool,
    ) {
        // Shader copies (compute_copy.rs) read and write as the transfers do.
        let (stages, src, dst) = if self.compute_copy.is_some() && !transfers_only {
            (
                vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_WRITE,
                vk::AccessFlags::TRANSFER_READ
                    | vk::AccessFlags::TRANSFER_WRITE
                    | vk::AccessFlags::SHADER_READ
                    | vk::AccessFlags::SHADER_WRITE,
            )
        } else {
            (
                vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE,
            )
        };
        let mut buffer_barriers: Vec<vk::BufferMemoryBarrier> = Vec::with_capacity(buffers.len());
        for &b in buffers {
            if buffer_barriers.iter().any(|x| x.buffer == b) {
                continue;
            }
            buffer_barriers.push(
                vk::BufferMemoryBarrier::default()
                    .src_access_mask(src)
                    .dst_access_mask(dst)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .buffer(b)
                    .offset(0)
                    .size(vk::WHOLE_SIZE),
            );
        }
        let mut image_barriers: Vec<vk::ImageMemoryBarrier> = Vec::with_capacity(images.len());
        for i in images {
            if image_barriers.iter().any(|x| x.image == i.raw) {
                continue;
            }
            image_barriers.push(
                vk::ImageMemoryBarrier::default()
                    .src_access_mask(src)
                    .dst_access_mask(dst)
                    .old_layout(vk::ImageLayout::GENERAL)
                    .new_layout(vk::ImageLayout::GENERAL)
                    .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                    .image(i.raw)
                    .subresource_range(image::all(i)),
            );
        }
        // SAFETY: `cmd` is recording (caller); the buffers and images are alive.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cmd,
                stages,
                stages,
                vk::DependencyFlags::empty(),
                &[],
                &buffer_barriers,
                &image_barriers,
            )
        };
    }

    /// Submits the recorded batch (or an empty one) with an optional binary-semaphore wait
    /// (at all stages), the waits deferred to it (`Queue::waits`) and an optional signal; the
    /// batch signals the timeline. Returns its value. A batch recorded on the copy lane goes
    /// there, after every batch before it.
    pub(super) fn submit(
        &self,
        q: &mut Queue,
        wait: Option<vk::Semaphore>,
        signal: Option<vk::Semaphore>,
    ) -> Result<u64, BackendError> {
        self.check_lost()?;
        let cmd = q.recording.take();
        let on_lane = std::mem::take(&mut q.on_lane) && cmd.is_some();
        if let Some(cmd) = cmd {
            if self.end_for_host(cmd).is_err() {
                return Err(self.lose());
            }
        }
        let value = q.next_value;
        let cmds: Vec<vk::CommandBuffer> = cmd.into_iter().collect();
        let mut waits: Vec<vk::Semaphore> = wait.into_iter().chain(q.waits.drain(..)).collect();
        // Binary semaphores ignore their value.
        let mut wait_values = vec![0u64; waits.len()];
        let after = if on_lane {
            // Every batch before this one, on either queue, signals a smaller value once it
            // completed and all before it did.
            Some(value - 1)
        } else {
            // After the copy lane's last batch (lane.rs): its writes are this batch's to read.
            Some(std::mem::take(&mut q.lane_value)).filter(|&v| v > 0)
        };
        // A value the CPU has already seen reached needs no wait (an idle device's usual case:
        // the last batch was waited for): nothing is left to order, and the timeline only grows.
        let reached = self.reached.load(Ordering::Acquire);
        if let Some(v) = after.filter(|&v| v > reached) {
            waits.push(self.timeline);
            wait_values.push(v);
            self.counters.timeline_waits.fetch_add(1, Ordering::Relaxed);
        }
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; waits.len()];
        let mut signals: Vec<vk::Semaphore> = signal.into_iter().collect();
        let mut signal_values = vec![0u64; signals.len()];
        signals.push(self.timeline);
        signal_values.push(value);
        let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&signal_values);
        let submit = vk::SubmitInfo::default()
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages)
            .command_buffers(&cmds)
            .signal_semaphores(&signals)
            .push_next(&mut timeline);
        let raw = match (&q.lane, on_lane) {
            (Some(lane), true) => lane.raw,
            _ => q.raw,
        };
        // SAFETY: both queues are used only under the lock the caller holds; the command buffer
        // is executable and of the pool of the queue it goes to (`on_lane` says which, set with
        // the recording); every array outlives the call; the timeline value is larger than any
        // signalled before: values only grow, one per batch, a lane batch waits for the value
        // before its own and a main batch for the lane's last one (`lane_value`) before it
        // signals. Resources, staging buffers and imported host memory are shared by both
        // families (CONCURRENT): no ownership transfer is needed.
        let result = unsafe { self.device.queue_submit(raw, &[submit], vk::Fence::null()) };
        self.counters.submissions.fetch_add(1, Ordering::Relaxed);
        let staging = std::mem::take(&mut q.staging);
        if result.is_err() {
            // The batch never runs, so its value is never reached: the device is unusable.
            for s in staging {
                self.destroy_staging(s);
            }
            return Err(self.lose());
        }
        let cmd = match (q.lane.as_mut(), on_lane, cmd) {
            (Some(lane), true, Some(cmd)) => {
                // The lane gives its command buffers back itself; the main queue's next batch
                // waits for this one.
                lane.busy.push_back((value, cmd));
                q.lane_value = value;
                None
            }
            (_, _, cmd) => cmd,
        };
        q.in_flight.push_back(Batch {
            value,
            cmd,
            staging,
        });
        q.next_value += 1;
        Ok(value)
    }

    /// Ends a recorded command buffer after a barrier that makes its transfer writes visible to
    /// the host (maps and host copies wait for the timeline first).
    pub(super) fn end_for_host(&self, cmd: vk::CommandBuffer) -> Result<(), vk::Result> {
        let to_host = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE);
        // SAFETY: `cmd` is recording (caller); ending it makes it executable.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
            self.device.end_command_buffer(cmd)
        }
    }

    /// Gives back what completed batches held: command buffers, staging buffers (kept as spares
    /// where there is room), bands of the upload ring, and what was freed while in use.
    pub(super) fn reclaim(&self, q: &mut Queue) {
        let ring_busy = q.ring.as_ref().is_some_and(|r| r.alloc.oldest().is_some());
        if q.in_flight.is_empty()
            && q.retired.is_empty()
            && !ring_busy
            && !q.lane.as_ref().is_some_and(Lane::has_busy)
        {
            return;
        }
        let done = self.completed();
        if let Some(lane) = q.lane.as_mut() {
            lane.reclaim(done);
        }
        while q.in_flight.front().is_some_and(|b| b.value <= done) {
            let Some(b) = q.in_flight.pop_front() else {
                break;
            };
            q.spare_cmds.extend(b.cmd);
            for s in b.staging {
                self.recycle_staging(q, s);
            }
        }
        if let Some(r) = q.ring.as_mut() {
            r.alloc.retire(done);
        }
        let mut i = 0;
        while i < q.retired.len() {
            if q.retired[i].0 > done {
                i += 1;
                continue;
            }
            match q.retired.swap_remove(i).1 {
                Retired::Memory(m) => self.destroy_memory(&m),
                Retired::Staging(s) => self.destroy_staging(s),
            }
        }
    }

    /// Keeps a staging buffer no pending work uses as a spare, or destroys it.
    pub(super) fn recycle_staging(&self, q: &mut Queue, s: Staging) {
        if let Some(s) = q.spare.keep(s) {
            self.destroy_staging(s);
        }
    }

    /// Runs `record` (which records transfers through [`VulkanBackend::recording_on`]) and
    /// submits at once: on the copy lane where there is one and the copy `fits_lane` (a copy
    /// engine takes image copies at buffer offsets of 4 bytes only), in the lane batch being
    /// recorded if there is one (whose copies then end with it); a batch open on the main queue
    /// goes first. Returns the batch's timeline value.
    pub(super) fn copy_batch(
        &self,
        q: &mut Queue,
        fits_lane: bool,
        record: impl FnOnce(&mut Queue) -> Result<(), BackendError>,
    ) -> Result<u64, BackendError> {
        if q.lane.is_some() && fits_lane {
            if q.recording.is_some() && !q.on_lane {
                self.submit(q, None, None)?;
            }
            if q.recording.is_none() {
                self.begin_on_lane(q)?;
            }
        }
        record(q)?;
        self.submit(q, None, None)
    }

    /// A command buffer of `pool` (the queue's or the lane's), begun for one submission: one of
    /// its `spare` buffers, whose batches completed, or a new one. Callers hold the queue lock,
    /// under which alone either pool is used.
    fn begin_command(
        &self,
        pool: vk::CommandPool,
        spare: &mut Vec<vk::CommandBuffer>,
    ) -> Result<vk::CommandBuffer, BackendError> {
        let cmd = match spare.pop() {
            Some(c) => c,
            None => {
                let info = vk::CommandBufferAllocateInfo::default()
                    .command_pool(pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1);
                // SAFETY: the pool is this device's and only used under the queue lock, which
                // the caller holds.
                let cmds = unsafe { self.device.allocate_command_buffers(&info) }
                    .map_err(|_| self.lose())?;
                cmds[0]
            }
        };
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cmd` is not pending (new, or its batch completed) and its pool allows resets
        // (RESET_COMMAND_BUFFER), which begin performs implicitly.
        if unsafe { self.device.begin_command_buffer(cmd, &begin) }.is_err() {
            spare.push(cmd);
            return Err(self.lose());
        }
        Ok(cmd)
    }

    /// Marks the device lost and returns the error to report.
    pub(super) fn lose(&self) -> BackendError {
        self.mark_lost();
        // Whatever was submitted finishes (or fails) before anything is freed: from now on
        // `completed` reports everything done.
        // SAFETY: callers hold the queue lock, under which alone the queue and the copy lane are
        // used.
        let _ = unsafe { self.device.device_wait_idle() };
        BackendError::DeviceLost
    }
}
