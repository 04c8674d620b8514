//! How a Direct3D resource is shared with an OpenCL context: a pure decision, public so that
//! `dxcl info` (and tests) can describe it without creating anything.

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
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::HostPointer => "host-pointer",
            Strategy::StagingCopy => "staging-copy",
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
}

/// A decision with the reason for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decision {
    pub strategy: Strategy,
    pub reason: &'static str,
}

/// Picks the strategy.
pub fn choose(inputs: &Inputs) -> Decision {
    let staging = |reason| Decision {
        strategy: Strategy::StagingCopy,
        reason,
    };
    if inputs.forced_staging {
        staging("forced by DXCL_STRATEGY=staging")
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

/// One line describing the decision, as `dxcl info` and `DXCL_LOG=1` print it.
pub fn describe(inputs: &Inputs) -> String {
    let d = choose(inputs);
    format!("{} ({})", d.strategy.name(), d.reason)
}

/// `DXCL_STRATEGY=staging` in the environment.
pub fn forced_staging_from_env() -> bool {
    std::env::var("DXCL_STRATEGY")
        .map(|v| v.eq_ignore_ascii_case("staging"))
        .unwrap_or(false)
}

/// `DXCL_LOG=1` in the environment.
pub fn logging_enabled() -> bool {
    std::env::var("DXCL_LOG").map(|v| v == "1").unwrap_or(false)
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
    eprintln!(
        "dxcl-layer: {what}: {} ({})",
        decision.strategy.name(),
        decision.reason
    );
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
}
