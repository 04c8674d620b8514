//! The boundary between the COM layer and whatever holds resource memory.
//!
//! The COM layer validates descriptions, computes [`ResourceLayout`]s and enforces Direct3D's rules;
//! a backend only stores bytes and orders work. The host backend ([`host::HostBackend`]) keeps
//! every resource in page-aligned host memory and executes each operation at once on the CPU; a
//! Vulkan backend keeps device memory exportable as an opaque fd and runs copies on a GPU queue.

pub mod host;
pub mod vulkan;

use crate::core::{BlockRegion, LayoutRules, ResourceDesc, ResourceLayout};

/// What a `Map` will do with the bytes (`D3D11_MAP`): a backend that maps through a staging copy
/// reads back only for `read` and writes back only for `write`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapAccess {
    /// The old contents must be visible (READ, READ_WRITE, WRITE, WRITE_NO_OVERWRITE: a partial
    /// write keeps the rest).
    pub read: bool,
    /// CPU writes must reach the resource at unmap.
    pub write: bool,
}

/// Where a resource's bytes live, as the interop interface reports it (`DXCL_MEMORY_KIND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// Host memory: `Allocation::host` is the start of the allocation.
    Host = 1,
    /// Device memory that can be exported as an opaque fd, in the linear layout.
    OpaqueFd = 2,
    /// Device memory exportable as an opaque fd holding an optimal-tiled Vulkan image of the
    /// texture's format and extent; the layout describes Map's linear copies only.
    OpaqueFdImage = 3,
}

/// Which implementation backs an adapter (`DXCL_BACKEND_KIND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Host = 1,
    Vulkan = 2,
}

/// What DXGI and the interop interface report about an adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterDesc {
    pub backend: BackendKind,
    pub description: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub sub_sys_id: u32,
    pub revision: u32,
    pub dedicated_video_memory: u64,
    pub dedicated_system_memory: u64,
    pub shared_system_memory: u64,
    /// `LUID { LowPart, HighPart }`.
    pub luid: (u32, i32),
    /// Vulkan `deviceUUID`; zero for the software adapter.
    pub uuid: [u8; 16],
    /// `DXGI_ADAPTER_FLAG_SOFTWARE`.
    pub software: bool,
}

/// A backend's failure, mapped to an `HRESULT` by the COM layer in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// `E_OUTOFMEMORY`.
    OutOfMemory,
    /// `E_NOTIMPL`: the operation does not exist for this kind of memory.
    NotSupported,
    /// `DXGI_ERROR_DEVICE_REMOVED`: the device was lost.
    DeviceLost,
    /// `E_INVALIDARG`: a shared-semaphore id this backend never handed out (or destroyed).
    UnknownId,
}

/// A fence value: work issued before [`Backend::signal`] returned it is complete once
/// [`Backend::is_complete`] says so.
pub type Fence = u64;

/// One resource's memory, made by [`Backend::allocate`].
#[derive(Debug)]
pub struct Allocation {
    pub kind: MemoryKind,
    /// Start of the allocation for [`MemoryKind::Host`]; null otherwise.
    pub host: *mut u8,
    /// Bytes in the allocation.
    pub size: u64,
    /// The layout the memory was allocated with.
    pub layout: ResourceLayout,
    /// Backend-private handle (the Vulkan backend's memory and image ids).
    pub handle: u64,
}

// SAFETY: an `Allocation` is a description of memory; the raw pointer is only dereferenced through
// the backend's `unsafe` methods, whose callers synchronise access (Direct3D's own threading rules:
// one immediate context, map state guarded by the resource).
unsafe impl Send for Allocation {}
// SAFETY: as above; shared references never write through `host`.
unsafe impl Sync for Allocation {}

/// The operations the COM layer needs from a memory implementation.
///
/// # Safety
///
/// For implementors: `allocate` returns memory of at least `layout.size` bytes, zero-filled, laid
/// out exactly as `layout` says, which stays valid until `free`; for `MemoryKind::Host`, `host` is
/// page-aligned. `map` returns a pointer to the subresource's first byte, valid for
/// `layout.subresources[i].size` bytes until `unmap` or `free`.
///
/// For callers (the `unsafe` methods): every [`Allocation`] passed in was made by `allocate` of
/// this same backend and not yet freed; subresource indices exist in its layout; regions lie within
/// their subresources (use [`ResourceLayout::box_region`] / [`ResourceLayout::place_region`]); a
/// destination is not written concurrently from another thread; source pointers given to
/// `write_region` are readable for the region described with the given pitches.
pub unsafe trait Backend: Send + Sync {
    fn adapter(&self) -> &AdapterDesc;

    /// The alignments every resource of this backend is laid out with.
    fn layout_rules(&self) -> LayoutRules;

    /// Whether the device was lost (`GetDeviceRemovedReason`).
    fn is_lost(&self) -> bool {
        false
    }

    /// Allocates zero-filled memory for a validated description and its layout.
    fn allocate(
        &self,
        desc: &ResourceDesc,
        layout: &ResourceLayout,
    ) -> Result<Allocation, BackendError>;

    /// Releases memory once the work issued on it has completed: at once, or later without
    /// blocking the caller (the Vulkan backend defers it).
    ///
    /// # Safety
    /// See the trait. The allocation is not used afterwards.
    unsafe fn free(&self, allocation: &mut Allocation);

    /// Makes a subresource CPU-visible and returns its first byte, after all work issued on the
    /// allocation (and every shared-semaphore wait) completed.
    ///
    /// # Safety
    /// See the trait; the subresource is not mapped.
    unsafe fn map(
        &self,
        allocation: &Allocation,
        subresource: u32,
        access: MapAccess,
    ) -> Result<*mut u8, BackendError>;

    /// Ends a [`Backend::map`]; CPU writes become visible to later work.
    ///
    /// # Safety
    /// See the trait; the subresource is mapped.
    unsafe fn unmap(&self, allocation: &Allocation, subresource: u32);

    /// Copies a region of blocks from `src` to `dst` (the regions have equal extents and equal
    /// bytes per block). `dst` and `src` may be the same allocation when the regions do not overlap.
    ///
    /// # Safety
    /// See the trait.
    #[allow(clippy::too_many_arguments)] // Source and destination each need allocation, index, region.
    unsafe fn copy_region(
        &self,
        dst: &Allocation,
        dst_subresource: u32,
        dst_region: &BlockRegion,
        src: &Allocation,
        src_subresource: u32,
        src_region: &BlockRegion,
    );

    /// Writes a region from host memory with the given source pitches (`UpdateSubresource`,
    /// initial data).
    ///
    /// # Safety
    /// See the trait: `data` is readable for `region.d` slices of `depth_pitch` bytes, each of
    /// `region.h` rows of `row_pitch` bytes holding `region.w` blocks.
    unsafe fn write_region(
        &self,
        dst: &Allocation,
        subresource: u32,
        region: &BlockRegion,
        data: *const u8,
        row_pitch: usize,
        depth_pitch: usize,
    );

    /// Makes host memory the caller owns reachable by [`Backend::read_to_host`] and
    /// [`Backend::write_from_host`] without a copy through the backend's own memory. `Ok(false)`
    /// when the backend needs no registration (it reaches any host memory).
    ///
    /// # Safety
    /// `host` is valid for `len` bytes until [`Backend::unregister_host`] for it returns, and is
    /// not registered already.
    unsafe fn register_host(&self, _host: *mut u8, _len: usize) -> Result<bool, BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Waits for the copies into or out of memory registered at `host`, then forgets it.
    /// `UnknownId` when nothing is registered there.
    fn unregister_host(&self, _host: *mut u8) -> Result<(), BackendError> {
        Err(BackendError::UnknownId)
    }

    /// Copies `regions` of a subresource into `host` (the subresource tightly packed: rows of
    /// its blocks, slices of its rows), after all work issued so far, each region to its place in
    /// that packing; `done(i)` runs on this thread once region `i`'s bytes are in, in order.
    /// `NotSupported` when `host` is not memory the backend reaches (see `register_host`).
    ///
    /// # Safety
    /// See the trait; `host` is writable for the packed subresource's bytes and nobody else
    /// touches them meanwhile.
    unsafe fn read_to_host(
        &self,
        _src: &Allocation,
        _subresource: u32,
        _regions: &[BlockRegion],
        _host: *mut u8,
        _done: &mut dyn FnMut(usize),
    ) -> Result<(), BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Copies the whole subresource from `host`, packed as for [`Backend::read_to_host`], after
    /// all work issued so far. `host` may be reused once this returns.
    ///
    /// # Safety
    /// See the trait; `host` is readable for the packed subresource's bytes.
    unsafe fn write_from_host(
        &self,
        dst: &Allocation,
        subresource: u32,
        host: *const u8,
    ) -> Result<(), BackendError> {
        // SAFETY: the caller's contract.
        unsafe { write_packed(self, dst, subresource, host) }
    }

    /// A fence after every operation issued so far.
    fn signal(&self) -> Fence;
    fn is_complete(&self, fence: Fence) -> bool;
    fn wait(&self, fence: Fence);
    /// Submits recorded work (`ID3D11DeviceContext::Flush`).
    fn flush(&self);
    /// Whether work that touches the allocation is still running (for `D3D11_MAP_FLAG_DO_NOT_WAIT`).
    fn is_busy(&self, allocation: &Allocation) -> bool;
    /// Whether work that touches the allocation is recorded or running, without submitting
    /// anything (interop `QueryDeviceWorkDone`: the caller orders after it if so).
    fn has_pending_work(&self, allocation: &Allocation) -> bool {
        self.is_busy(allocation)
    }

    /// A new fd for [`MemoryKind::OpaqueFd`] memory, owned by the caller.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn export_fd(&self, allocation: &Allocation) -> Result<i32, BackendError>;

    /// A new binary semaphore exportable as an opaque fd: its id and a new fd owned by the caller
    /// (`IDxclInteropDevice::CreateSharedSemaphore`). Backends without GPU queues have none.
    fn create_shared_semaphore(&self) -> Result<(u64, i32), BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Submits now, after all work issued so far, a signal of the semaphore.
    fn signal_shared_semaphore(&self, _id: u64) -> Result<(), BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Submits now a wait for the semaphore that all later work, and CPU access through `map`,
    /// is ordered after.
    fn wait_shared_semaphore(&self, _id: u64) -> Result<(), BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Whether every signal and wait submitted on the semaphore has executed.
    fn shared_semaphore_idle(&self, _id: u64) -> Result<bool, BackendError> {
        Err(BackendError::NotSupported)
    }

    /// Waits for the semaphore's submitted operations, then destroys it.
    fn destroy_shared_semaphore(&self, _id: u64) -> Result<(), BackendError> {
        Err(BackendError::NotSupported)
    }
}

/// [`Backend::write_from_host`] through [`Backend::write_region`], the upload every backend has.
///
/// # Safety
/// As [`Backend::write_from_host`].
pub(crate) unsafe fn write_packed<B: Backend + ?Sized>(
    backend: &B,
    dst: &Allocation,
    subresource: u32,
    host: *const u8,
) -> Result<(), BackendError> {
    let (full, row, slice) = dst
        .layout
        .packed(subresource)
        .ok_or(BackendError::NotSupported)?;
    // SAFETY: the caller's contract: `host` holds the region packed with these pitches.
    unsafe { backend.write_region(dst, subresource, &full, host, row as usize, slice as usize) };
    Ok(())
}
