//! Which strategy shares a resource: a pure decision, public so that `dxcl info` (and tests)
//! can describe it without creating anything.

use std::collections::HashSet;
use std::sync::Mutex;

/// A sharing strategy, chosen per (context devices, resource).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Zero-copy: the `cl_mem` is created with `CL_MEM_USE_HOST_PTR` on the resource's own host
    /// memory (dxcl's host backend, devices with host-unified memory). Acquire/release cost O(1).
    HostPointer,
    /// A plain OpenCL object; acquire copies D3D → CL and release CL → D3D through D3D staging
    /// resources, using standard COM calls only. Works with any D3D device and any CL device.
    StagingCopy,
    /// Zero-copy on a GPU: the resource's exportable Vulkan memory is imported once
    /// (`cl_khr_external_memory_opaque_fd`) as a buffer or an image; acquire/release are
    /// `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`, ordered against D3D by shared semaphores
    /// where both sides have them. O(1) in the resource's size.
    ExternalMemory,
    /// A subresource an imported image cannot cover (a mip level above 0, one slice of an
    /// array): a one-subresource DEFAULT texture of the Vulkan backend is imported as above, and
    /// acquire/release copy between it and the subresource on D3D's queue. GPU-side, no host
    /// round trip.
    ExternalCopy,
    /// A DXVK texture, whose memory the layer cannot reach: a one-subresource texture in memory
    /// dxcl owns on DXVK's device (`dxclCreateSharedTexture2D`'s) is shared as dxcl's own
    /// resources are, and acquire/release copy between it and the subresource on DXVK's queue.
    /// No staging texture, no host round trip through the layer.
    ShadowCopy,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::HostPointer => "host-pointer",
            Strategy::StagingCopy => "staging-copy",
            Strategy::ExternalMemory => "external-memory",
            Strategy::ExternalCopy => "external-copy",
            Strategy::ShadowCopy => "shadow-copy",
        }
    }
}

/// What the decision depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inputs {
    /// The resource answers `IDxclInteropResource` (it comes from dxcl's runtime).
    pub interop_resource: bool,
    /// Its memory is `DXCL_MEMORY_KIND_HOST` (host backend).
    pub host_memory: bool,
    /// Every device of the context reports `CL_DEVICE_HOST_UNIFIED_MEMORY`.
    pub devices_host_unified: bool,
    /// `DXCL_STRATEGY=staging` is set (or a test forces it).
    pub forced_staging: bool,
    /// The resource's device is DXVK's (it answers DXVK's `IDXGIVkInteropDevice`): a foreign
    /// runtime that gives the layer no way to its resources' memory (docs/dxvk.md).
    pub dxvk: bool,
    /// A DXVK 2D texture whose subresource a shadow in dxcl's memory on DXVK's device can stand
    /// for, shared with every context device: host memory on a CPU device with host-unified
    /// OpenCL devices, or exportable memory on a GPU whose OpenCL devices import it (same UUID).
    pub dxvk_shadow: bool,
}

/// The kinds of memory object the sharing extensions make, as far as the decision tells them
/// apart (`dxcl info` prints one decision per kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    Buffer,
    /// A 2D texture with one array slice.
    Texture2D,
    /// A 2D texture with several array slices (one of them shared).
    Texture2DArray,
    Texture3D,
}

impl ObjectKind {
    pub const ALL: [ObjectKind; 4] = [
        ObjectKind::Buffer,
        ObjectKind::Texture2D,
        ObjectKind::Texture2DArray,
        ObjectKind::Texture3D,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ObjectKind::Buffer => "buffer",
            ObjectKind::Texture2D => "2D texture",
            ObjectKind::Texture2DArray => "2D texture array",
            ObjectKind::Texture3D => "3D texture",
        }
    }
}

/// How a dxcl resource's exportable memory is laid out (`DXCL_MEMORY_KIND_OPAQUE_FD*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FdMemory {
    /// The runtime's linear layout (Vulkan buffers): importable as a CL buffer.
    Linear,
    /// An optimal-tiled Vulkan image: importable as a CL image of the same format and extent.
    Image,
}

/// What the external-memory decision depends on, for resources whose memory is an opaque fd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct External {
    pub memory: FdMemory,
    /// The resource is a buffer (else a texture subresource).
    pub buffer: bool,
    /// Mip 0 of a texture with one array slice: what an imported image covers.
    pub whole_image: bool,
    /// Every context device imports `CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR`, has the D3D
    /// adapter's UUID, and its platform has the acquire/release entry points.
    pub devices_import: bool,
    /// The resource lives in device-local memory (not a DYNAMIC or STAGING resource, which the
    /// runtime keeps host-visible for Map).
    pub device_local: bool,
}

/// What the import of a resource whose memory is an opaque fd depends on besides the shape of
/// the shared subresource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FdResource {
    pub memory: FdMemory,
    /// As [`External::devices_import`].
    pub devices_import: bool,
    /// As [`External::device_local`].
    pub device_local: bool,
}

/// Whether an imported image covers the subresource: mip 0 of a 3D texture, or of a texture with
/// one array slice (an imported image is mip 0 with all its slices, docs/gpu.md).
pub fn covers_whole_image(three_d: bool, array_size: u32, mip: u32) -> bool {
    mip == 0 && (three_d || array_size == 1)
}

impl External {
    /// The inputs for one subresource of an opaque-fd resource.
    pub fn of(fd: &FdResource, buffer: bool, whole_image: bool) -> External {
        External {
            memory: fd.memory,
            buffer,
            whole_image,
            devices_import: fd.devices_import,
            device_local: fd.device_local,
        }
    }
}

/// A decision with the reason for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    pub strategy: Strategy,
    pub reason: &'static str,
}

/// Picks the strategy for a resource whose memory is not an opaque fd.
pub fn choose(inputs: &Inputs) -> Decision {
    choose_with(inputs, None)
}

/// Picks the strategy; `external` describes a resource whose memory is an opaque fd.
pub fn choose_with(inputs: &Inputs, external: Option<&External>) -> Decision {
    let staging = |reason| Decision {
        strategy: Strategy::StagingCopy,
        reason,
    };
    let Some(e) = external.filter(|_| inputs.interop_resource && !inputs.forced_staging) else {
        return choose_host(inputs);
    };
    let imported = |reason| Decision {
        strategy: Strategy::ExternalMemory,
        reason,
    };
    if e.devices_import && !e.device_local {
        // Measured on NVIDIA 580 (docs/gpu.md): OpenCL reads of imported host-visible Vulkan
        // memory do not see what the CPU wrote through Map.
        return staging("DYNAMIC/STAGING resource in host-visible memory: not imported");
    }
    match (e.devices_import, e.memory, e.buffer, e.whole_image) {
        (false, _, _, _) => staging(
            "a context device cannot import the resource's opaque fd (no \
             cl_khr_external_memory_opaque_fd, or another UUID)",
        ),
        (true, FdMemory::Linear, true, _) => imported("Vulkan buffer imported as a CL buffer"),
        (true, FdMemory::Linear, false, _) => {
            staging("linear texture memory: OpenCL imports only optimal-tiled images")
        }
        (true, FdMemory::Image, _, true) => imported("Vulkan image imported as a CL image"),
        (true, FdMemory::Image, _, false) => Decision {
            strategy: Strategy::ExternalCopy,
            reason: "an imported image covers only mip 0 of one slice: GPU copies through an \
                     imported one-subresource texture",
        },
    }
}

/// The decision for mip 0 of an object of `kind` (slice 0 of an array), as `dxcl info` reports
/// it per kind; `fd` describes a resource whose memory is an opaque fd.
pub fn choose_for(inputs: &Inputs, kind: ObjectKind, fd: Option<&FdResource>) -> Decision {
    let (three_d, array_size) = match kind {
        ObjectKind::Texture3D => (true, 1),
        ObjectKind::Texture2DArray => (false, 2),
        ObjectKind::Buffer | ObjectKind::Texture2D => (false, 1),
    };
    let e = fd.map(|f| {
        External::of(
            f,
            kind == ObjectKind::Buffer,
            covers_whole_image(three_d, array_size, 0),
        )
    });
    choose_with(inputs, e.as_ref())
}

fn choose_host(inputs: &Inputs) -> Decision {
    let staging = |reason| Decision {
        strategy: Strategy::StagingCopy,
        reason,
    };
    if inputs.forced_staging {
        staging("forced by DXCL_STRATEGY=staging")
    } else if !inputs.interop_resource && inputs.dxvk && inputs.dxvk_shadow {
        Decision {
            strategy: Strategy::ShadowCopy,
            reason: "DXVK texture: copies on DXVK's queue through a one-subresource texture in \
                     memory dxcl owns on DXVK's device, shared without a copy",
        }
    } else if !inputs.interop_resource && inputs.dxvk {
        staging(
            "DXVK resource: DXVK-native exports no memory of its resources on Linux (its \
             shared resources need VK_KHR_external_memory_win32)",
        )
    } else if !inputs.interop_resource {
        staging("resource has no dxcl interop interface (foreign D3D device)")
    } else if !inputs.host_memory {
        staging("resource memory is not host memory")
    } else if !inputs.devices_host_unified {
        staging("a context device lacks host-unified memory")
    } else {
        Decision {
            strategy: Strategy::HostPointer,
            reason: "host memory, host-unified devices: CL_MEM_USE_HOST_PTR",
        }
    }
}

impl Decision {
    /// "name (reason)", as `dxcl info` and `DXCL_LOG=1` print it.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.strategy.name(), self.reason)
    }
}

/// One line describing the decision, as `dxcl info` and `DXCL_LOG=1` print it.
pub fn describe(inputs: &Inputs) -> String {
    choose(inputs).describe()
}

/// [`describe`] for a resource whose memory is an opaque fd.
pub fn describe_with(inputs: &Inputs, external: &External) -> String {
    choose_with(inputs, Some(external)).describe()
}

/// `DXCL_STRATEGY=staging` in the environment.
pub fn forced_staging_from_env() -> bool {
    std::env::var("DXCL_STRATEGY")
        .map(|v| v.eq_ignore_ascii_case("staging"))
        .unwrap_or(false)
}

/// How external memory is ordered against Direct3D (`DXCL_SYNC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncMode {
    /// The default where the runtime exports semaphores and the platform imports them: each
    /// hand-off looks at what is pending. Acquire: no wait at all when Direct3D's work on the
    /// objects has completed, else a GPU-side semaphore wait. Release: Direct3D's next access
    /// finds the release complete (no wait) or, if it still runs, is ordered after it on the
    /// GPU through a semaphore signalled then. Neither blocks the CPU.
    Adaptive,
    /// A shared semaphore at every hand-off (`DXCL_SYNC=gpu`).
    Gpu,
    /// CPU waits (`DXCL_SYNC=cpu`): acquire waits for Direct3D, Direct3D's next access for the
    /// release.
    Cpu,
}

impl SyncMode {
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Adaptive => "adaptive",
            SyncMode::Gpu => "gpu",
            SyncMode::Cpu => "cpu",
        }
    }

    /// What the mode does, for `dxcl info` and the benchmarks.
    pub fn describe(self) -> &'static str {
        match self {
            SyncMode::Adaptive => {
                "adaptive: no wait where the other API's work is complete, else a GPU-side \
                 semaphore wait created then; the CPU never waits (the default)"
            }
            SyncMode::Gpu => {
                "GPU-side through a shared semaphore at every hand-off (DXCL_SYNC=gpu)"
            }
            SyncMode::Cpu => "CPU waits (DXCL_SYNC=cpu)",
        }
    }

    /// `DXCL_SYNC` from the environment (`adaptive`, `gpu`, `cpu`; anything else: the default).
    pub fn from_env() -> SyncMode {
        match std::env::var("DXCL_SYNC") {
            Ok(v) if v.eq_ignore_ascii_case("cpu") => SyncMode::Cpu,
            Ok(v) if v.eq_ignore_ascii_case("gpu") => SyncMode::Gpu,
            _ => SyncMode::Adaptive,
        }
    }
}

/// Whether external memory may synchronise through shared semaphores (GPU-side waits) where the
/// runtime and the platform both have them: yes unless `DXCL_SYNC=cpu` asks for CPU waits.
pub fn gpu_sync_from_env() -> bool {
    SyncMode::from_env() != SyncMode::Cpu
}

/// `DXCL_LOG=1` in the environment.
pub fn logging_enabled() -> bool {
    std::env::var("DXCL_LOG").map(|v| v == "1").unwrap_or(false)
}

/// With `DXCL_LOG=1`, prints `what` to stderr as the layer's, under `topic`.
pub(crate) fn log(topic: &str, what: std::fmt::Arguments<'_>) {
    if logging_enabled() {
        eprintln!("dxcl-layer: {topic}: {what}");
    }
}

static LOGGED: Mutex<Option<HashSet<Decision>>> = Mutex::new(None);

/// Prints a decision to stderr the first time it is made (with `DXCL_LOG=1`); returns whether it
/// printed.
pub(crate) fn log_once(what: &str, decision: Decision) -> bool {
    if !logging_enabled() {
        return false;
    }
    let mut seen = LOGGED.lock().unwrap_or_else(|p| p.into_inner());
    if !seen.get_or_insert_with(HashSet::new).insert(decision) {
        return false;
    }
    eprintln!("dxcl-layer: {what}: {}", decision.describe());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZERO_COPY: Inputs = Inputs {
        interop_resource: true,
        host_memory: true,
        devices_host_unified: true,
        forced_staging: false,
        dxvk: false,
        dxvk_shadow: false,
    };

    #[test]
    fn zero_copy_needs_every_condition() {
        assert_eq!(choose(&ZERO_COPY).strategy, Strategy::HostPointer);
        for flip in 0..4 {
            let mut i = ZERO_COPY;
            match flip {
                0 => i.interop_resource = false,
                1 => i.host_memory = false,
                2 => i.devices_host_unified = false,
                _ => i.forced_staging = true,
            }
            assert_eq!(choose(&i).strategy, Strategy::StagingCopy, "{i:?}");
        }
        assert!(describe(&ZERO_COPY).starts_with("host-pointer"));
    }

    const VULKAN: Inputs = Inputs {
        interop_resource: true,
        host_memory: false,
        devices_host_unified: false,
        forced_staging: false,
        dxvk: false,
        dxvk_shadow: false,
    };

    const IMPORTABLE_IMAGE: External = External {
        memory: FdMemory::Image,
        buffer: false,
        whole_image: true,
        devices_import: true,
        device_local: true,
    };

    #[test]
    fn external_memory_imports_buffers_and_whole_images() {
        let buffer = External {
            memory: FdMemory::Linear,
            buffer: true,
            whole_image: false,
            devices_import: true,
            device_local: true,
        };
        for e in [buffer, IMPORTABLE_IMAGE] {
            let d = choose_with(&VULKAN, Some(&e));
            assert_eq!(d.strategy, Strategy::ExternalMemory, "{e:?}");
        }
    }

    #[test]
    fn external_memory_falls_back_with_a_reason() {
        let cases = [
            External {
                devices_import: false,
                ..IMPORTABLE_IMAGE
            },
            External {
                device_local: false,
                ..IMPORTABLE_IMAGE
            },
            External {
                memory: FdMemory::Linear,
                ..IMPORTABLE_IMAGE
            },
        ];
        for e in cases {
            let d = choose_with(&VULKAN, Some(&e));
            assert_eq!(d.strategy, Strategy::StagingCopy, "{e:?}");
            assert!(!d.reason.is_empty());
        }
        // Forced staging and foreign resources win over importable memory.
        let forced = Inputs {
            forced_staging: true,
            ..VULKAN
        };
        let foreign = Inputs {
            interop_resource: false,
            ..VULKAN
        };
        for i in [forced, foreign] {
            let d = choose_with(&i, Some(&IMPORTABLE_IMAGE));
            assert_eq!(d.strategy, Strategy::StagingCopy, "{i:?}");
        }
        assert_eq!(choose_with(&VULKAN, None).strategy, Strategy::StagingCopy);
    }

    #[test]
    fn other_subresources_copy_on_the_gpu() {
        let part = External {
            whole_image: false,
            ..IMPORTABLE_IMAGE
        };
        assert_eq!(
            choose_with(&VULKAN, Some(&part)).strategy,
            Strategy::ExternalCopy
        );
    }

    #[test]
    fn dxvk_textures_with_a_possible_shadow_copy_through_it_unless_forced() {
        let shadow = Inputs {
            interop_resource: false,
            host_memory: false,
            devices_host_unified: true,
            forced_staging: false,
            dxvk: true,
            dxvk_shadow: true,
        };
        let d = choose_with(&shadow, None);
        assert_eq!(d.strategy, Strategy::ShadowCopy);
        assert!(d.reason.starts_with("DXVK texture"), "{}", d.reason);
        let forced = Inputs {
            forced_staging: true,
            ..shadow
        };
        assert_eq!(choose_with(&forced, None).strategy, Strategy::StagingCopy);
    }

    #[test]
    fn dxvk_resources_take_staging_copies_with_their_reason() {
        let dxvk = Inputs {
            interop_resource: false,
            host_memory: false,
            devices_host_unified: true,
            forced_staging: false,
            dxvk: true,
            dxvk_shadow: false,
        };
        for kind in ObjectKind::ALL {
            let d = choose_for(&dxvk, kind, None);
            assert_eq!(d.strategy, Strategy::StagingCopy, "{kind:?}");
            assert!(
                d.reason.starts_with("DXVK resource"),
                "{kind:?}: {}",
                d.reason
            );
        }
        // Forcing names itself first; any other foreign device keeps the generic reason.
        let forced = Inputs {
            forced_staging: true,
            ..dxvk
        };
        assert!(choose(&forced).reason.contains("DXCL_STRATEGY"));
        let other = Inputs {
            dxvk: false,
            ..dxvk
        };
        assert!(choose(&other).reason.contains("foreign D3D device"));
    }

    #[test]
    fn kinds_map_to_the_shapes_share_decides_on() {
        let fd = FdResource {
            memory: FdMemory::Image,
            devices_import: true,
            device_local: true,
        };
        let want = [
            (ObjectKind::Texture2D, Strategy::ExternalMemory),
            (ObjectKind::Texture2DArray, Strategy::ExternalCopy),
            (ObjectKind::Texture3D, Strategy::ExternalMemory),
        ];
        for (kind, strategy) in want {
            assert_eq!(
                choose_for(&VULKAN, kind, Some(&fd)).strategy,
                strategy,
                "{kind:?}"
            );
        }
        let linear = FdResource {
            memory: FdMemory::Linear,
            ..fd
        };
        assert_eq!(
            choose_for(&VULKAN, ObjectKind::Buffer, Some(&linear)).strategy,
            Strategy::ExternalMemory
        );
        assert!(covers_whole_image(false, 1, 0));
        assert!(!covers_whole_image(false, 1, 1));
        assert!(!covers_whole_image(false, 6, 0));
        assert!(covers_whole_image(true, 1, 0));
    }
}
