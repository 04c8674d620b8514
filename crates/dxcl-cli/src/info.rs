//! `dxcl info`: what the layer adds where, which D3D adapters exist, and which sharing strategy
//! each (adapter, CL device) pairing gets.

use crate::{cl, d3d, dxvk, sharing};
use dxcl_abi::interop::{IDxclInteropDevice, DXCL_BACKEND_KIND_HOST, DXCL_BACKEND_KIND_VULKAN};
use dxcl_layer::{probe, strategy};
use opencl_sys::*;

const EXTENSIONS: [&str; 4] = [
    "cl_khr_d3d10_sharing",
    "cl_khr_d3d11_sharing",
    "cl_nv_d3d10_sharing",
    "cl_nv_d3d11_sharing",
];

fn d3d_extensions(list: &str) -> Vec<&'static str> {
    let words: Vec<&str> = list.split_whitespace().collect();
    EXTENSIONS
        .iter()
        .copied()
        .filter(|e| words.contains(e))
        .collect()
}

fn device_type(t: cl_device_type) -> &'static str {
    match t {
        t if t & CL_DEVICE_TYPE_GPU != 0 => "GPU",
        t if t & CL_DEVICE_TYPE_CPU != 0 => "CPU",
        t if t & CL_DEVICE_TYPE_ACCELERATOR != 0 => "accelerator",
        _ => "other",
    }
}

fn yes(b: cl_bool) -> &'static str {
    if b != 0 {
        "yes"
    } else {
        "no"
    }
}

pub fn run() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "OPENCL_LAYERS={}",
        std::env::var("OPENCL_LAYERS").unwrap_or_else(|_| "(unset)".into())
    );
    let adapters = d3d::adapters()?;
    println!("Direct3D adapters (dxcl runtime):");
    for (i, a) in adapters.iter().enumerate() {
        println!(
            "  [{i}] {} — vendor 0x{:04x}, device 0x{:04x}, LUID {:08x}:{:08x}, backend {}{}",
            a.description,
            a.vendor_id,
            a.device_id,
            a.luid.HighPart,
            a.luid.LowPart,
            a.backend.map(d3d::backend_name).unwrap_or("unknown"),
            if a.flags & dxcl_abi::DXGI_ADAPTER_FLAG_SOFTWARE as u32 != 0 {
                ", software"
            } else {
                ""
            }
        );
    }

    println!("OpenCL platforms:");
    for (pi, p) in cl::platforms()?.into_iter().enumerate() {
        let name = cl::platform_string(p, CL_PLATFORM_NAME)?;
        let version = cl::platform_string(p, CL_PLATFORM_VERSION)?;
        let exts = cl::platform_string(p, CL_PLATFORM_EXTENSIONS)?;
        let added = d3d_extensions(&exts);
        println!("  [{pi}] {name} — {version}");
        println!(
            "      D3D sharing extensions: {}",
            if added.is_empty() {
                "none (is the layer loaded?)".into()
            } else {
                added.join(" ")
            }
        );
        let devices = cl::devices(p)?;
        for (di, d) in devices.iter().enumerate() {
            let dname = cl::device_string(*d, CL_DEVICE_NAME)?;
            let ty: cl_device_type = cl::device_value(*d, CL_DEVICE_TYPE)?;
            let images: cl_bool = cl::device_value(*d, CL_DEVICE_IMAGE_SUPPORT)?;
            let unified: cl_bool = cl::device_value(*d, CL_DEVICE_HOST_UNIFIED_MEMORY)?;
            let dexts = cl::device_string(*d, CL_DEVICE_EXTENSIONS)?;
            println!(
                "      device [{di}] {dname} ({}): images {}, host-unified memory {}, D3D extensions: {}",
                device_type(ty),
                yes(images),
                yes(unified),
                d3d_extensions(&dexts).len()
            );
            describe_platform_behaviour(p, *d);
        }
        for (ai, a) in adapters.iter().enumerate() {
            let matched = sharing::devices_for_adapter(p, a.adapter.as_raw())?;
            print_preferred(&format!("adapter [{ai}]"), &devices, &matched);
            for m in &matched {
                let unified: cl_bool = cl::device_value(*m, CL_DEVICE_HOST_UNIFIED_MEMORY)?;
                let inputs = strategy::Inputs {
                    interop_resource: a.backend.is_some(),
                    host_memory: a.backend == Some(DXCL_BACKEND_KIND_HOST),
                    devices_host_unified: unified != 0,
                    forced_staging: strategy::forced_staging_from_env(),
                    dxvk: false,
                    dxvk_shadow: false,
                };
                let di = devices.iter().position(|d| d == m).unwrap_or(0);
                if a.backend == Some(DXCL_BACKEND_KIND_VULKAN) {
                    describe_vulkan(ai, di, *m, &inputs);
                } else {
                    println!(
                        "        sharing adapter [{ai}] ↔ device [{di}]: {}",
                        strategy::describe(&inputs)
                    );
                }
            }
        }
    }
    describe_dxvk()
}

/// DXVK-native's adapters, when `DXCL_DXVK_LIB` names its DXGI library: each adapter's
/// description (read as the layer reads it, whichever `WCHAR` width DXVK was built with), how
/// the layer pairs it with OpenCL devices, the preferred devices the layer answers for it on each
/// platform, and the strategy the layer's decision gives each kind of object there.
fn describe_dxvk() -> Result<(), Box<dyn std::error::Error>> {
    let found = match dxvk::open() {
        Ok(Some(found)) => found,
        Ok(None) => {
            println!(
                "DXVK-native: none found (set {}=/path/to/libdxvk_dxgi.so, or its folder: \
                 scripts/dxvk/build.sh makes build/dxvk/lib; docs/dxvk.md)",
                dxvk::ENV
            );
            return Ok(());
        }
        Err(why) => {
            println!(
                "DXVK-native ({}={}): not usable: {why}",
                dxvk::ENV,
                std::env::var_os(dxvk::ENV)
                    .unwrap_or_default()
                    .to_string_lossy()
            );
            return Ok(());
        }
    };
    println!("Direct3D adapters (DXVK-native, {}):", found.path.display());
    let adapters = found.adapters()?;
    if adapters.is_empty() {
        println!("  none (DXVK found no Vulkan device it can run on)");
    }
    let platforms = cl::platforms()?;
    for (ai, a) in adapters.iter().enumerate() {
        // SAFETY: a live adapter of DXVK's factory.
        let Some(facts) = (unsafe { dxcl_layer::adapter_facts(a.as_raw().cast()) }) else {
            println!("  [{ai}] (no adapter description)");
            continue;
        };
        println!(
            "  [{ai}] {} — vendor 0x{:04x}, device 0x{:04x}, LUID {:08x}:{:08x}{}",
            facts.description,
            facts.vendor_id,
            facts.device_id,
            facts.luid.HighPart,
            facts.luid.LowPart,
            if facts.wide_wchar {
                " (description with a 4-byte WCHAR)"
            } else {
                ""
            }
        );
        match facts.pairing {
            Some((id, source)) => println!(
                "      OpenCL devices preferred: {}, from {}",
                id.describe(),
                source.describe()
            ),
            None => {
                println!("      OpenCL devices preferred: none (the adapter is not identified)")
            }
        }
        let cpu_adapter = matches!(facts.pairing, Some((dxcl_layer::AdapterId::Software, _)));
        // The adapter's resources answer dxcl's interop interface only if the adapter does.
        let interop = a.cast::<IDxclInteropDevice>().is_some();
        for (pi, p) in platforms.iter().enumerate() {
            let devices = cl::devices(*p)?;
            let matched = sharing::devices_for_adapter(*p, a.as_raw())?;
            print_preferred(&format!("platform [{pi}]"), &devices, &matched);
            for m in &matched {
                let di = devices.iter().position(|d| d == m).unwrap_or(0);
                let unified: cl_bool = cl::device_value(*m, CL_DEVICE_HOST_UNIFIED_MEMORY)?;
                let inputs = strategy::Inputs {
                    interop_resource: interop,
                    host_memory: false,
                    devices_host_unified: unified != 0,
                    forced_staging: strategy::forced_staging_from_env(),
                    dxvk: !interop,
                    dxvk_shadow: false,
                };
                println!("        sharing adapter [{ai}] ↔ device [{di}]:");
                // A GPU adapter's device was matched by UUID: shadows and shared textures need it
                // to import opaque fds, and DXVK's device to export them (dxcl's Vulkan layer).
                let imports_fd =
                    handle_types(*m, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
                        .contains(&CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
                let share = if cpu_adapter {
                    Share::Host
                } else if imports_fd {
                    Share::Fd
                } else {
                    Share::None
                };
                let gpu_note = if share == Share::Fd {
                    " [with VK_LAYER_DXCL_external_fd on DXVK's device; without it, staging copies]"
                } else {
                    ""
                };
                for kind in strategy::ObjectKind::ALL {
                    // D3D11 2D textures: shadows in dxcl's memory on DXVK's device.
                    let two_d = matches!(
                        kind,
                        strategy::ObjectKind::Texture2D | strategy::ObjectKind::Texture2DArray
                    );
                    let shadow = !interop && two_d && share.shadows(unified != 0);
                    let inputs = strategy::Inputs {
                        dxvk_shadow: shadow,
                        ..inputs
                    };
                    println!(
                        "          {}: {}{}",
                        kind.name(),
                        strategy::choose_for(&inputs, kind, None).describe(),
                        if shadow { gpu_note } else { "" }
                    );
                }
                if !interop {
                    println!(
                        "          2D texture made by dxclCreateSharedTexture2D: {}{gpu_note}",
                        shared_texture_line(share, &inputs)
                    );
                }
            }
        }
    }
    Ok(())
}

/// What a texture made by `dxclCreateSharedTexture2D` gets on a DXVK adapter: host memory on a CPU
/// adapter, exportable memory on a GPU (with dxcl's Vulkan layer), each then the layer's own decision
/// for such memory (docs/dxvk.md).
fn shared_texture_line(share: Share, dxvk_inputs: &strategy::Inputs) -> String {
    let inputs = strategy::Inputs {
        interop_resource: true,
        host_memory: share == Share::Host,
        dxvk: false,
        ..*dxvk_inputs
    };
    match share {
        Share::Host => strategy::choose_for(&inputs, strategy::ObjectKind::Texture2D, None),
        Share::Fd => {
            let fd = strategy::FdResource {
                memory: strategy::FdMemory::Image,
                devices_import: true,
                device_local: true,
            };
            strategy::choose_for(&inputs, strategy::ObjectKind::Texture2D, Some(&fd))
        }
        Share::None => {
            return "made, but shared by staging copies (the OpenCL device imports no opaque fd)"
                .into()
        }
    }
    .describe()
}

/// How memory dxcl owns on a DXVK adapter's device reaches an OpenCL device.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Share {
    /// A CPU adapter: host memory, used in place by host-unified devices.
    Host,
    /// A GPU adapter whose (UUID-matched) device imports opaque fds.
    Fd,
    /// Neither.
    None,
}

impl Share {
    /// Whether a shadow in that memory can stand for a DXVK texture's subresource.
    fn shadows(self, host_unified: bool) -> bool {
        match self {
            Share::Host => host_unified,
            Share::Fd => true,
            Share::None => false,
        }
    }
}

/// The line naming the devices (as indices into `devices`) the layer prefers for `what`.
fn print_preferred(what: &str, devices: &[cl_device_id], matched: &[cl_device_id]) {
    let indices: Vec<String> = matched
        .iter()
        .filter_map(|m| devices.iter().position(|d| d == m))
        .map(|i| format!("[{i}]"))
        .collect();
    let listed = if indices.is_empty() {
        "none".to_string()
    } else {
        indices.join(" ")
    };
    println!("      {what} → preferred CL devices (clGetDeviceIDsFromD3D11KHR): {listed}");
}

/// What plain OpenCL objects on the device show, through the platform's own dispatch table (no
/// layer in between): whether `CL_MEM_USE_HOST_PTR` memory is used in place, which decides the
/// host-pointer strategy's copies, and the platform's deviations the layer works around.
fn describe_platform_behaviour(p: cl_platform_id, d: cl_device_id) {
    // SAFETY: a live device of an ICD-loader platform, which lives as long as the process.
    let Some(table) = (unsafe { probe::platform_table(d) }) else {
        println!("        host memory: not probed (the device has no dispatch table)");
        return;
    };
    let host = probe::probe_host_memory(table, d);
    println!("        host memory: {}", host.describe());
    if let Ok(v @ ("copy" | "in-place")) = std::env::var("DXCL_HOST_PTR").as_deref() {
        println!("          DXCL_HOST_PTR={v}: the layer follows it, not the probe");
    }
    for note in probe::platform_notes(table, p, d) {
        println!("        platform note: {note}");
    }
}

/// The handle types a device lists for an external-memory or semaphore import query.
fn handle_types(d: cl_device_id, name: cl_device_info) -> Vec<cl_uint> {
    cl::device_bytes(d, name)
        .map(|b| {
            b.chunks_exact(4)
                .map(|c| cl_uint::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default()
}

/// A Vulkan adapter's pairing: the layer's decision for each kind of object (DEFAULT usage), and
/// how acquire/release synchronise. The device was matched to the adapter by UUID (the preferred set).
fn describe_vulkan(ai: usize, di: usize, device: cl_device_id, inputs: &strategy::Inputs) {
    let imports = handle_types(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
        .contains(&CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
    let semaphores = handle_types(device, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR)
        .contains(&CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR);
    println!("        sharing adapter [{ai}] ↔ device [{di}]:");
    for kind in strategy::ObjectKind::ALL {
        // The runtime keeps buffers linear and textures as optimal-tiled images.
        let fd = strategy::FdResource {
            memory: if kind == strategy::ObjectKind::Buffer {
                strategy::FdMemory::Linear
            } else {
                strategy::FdMemory::Image
            },
            devices_import: imports,
            device_local: true,
        };
        println!(
            "          {}{}: {}",
            kind.name(),
            if kind == strategy::ObjectKind::Buffer {
                ""
            } else {
                " (mip 0)"
            },
            strategy::choose_for(inputs, kind, Some(&fd)).describe()
        );
    }
    if imports {
        println!(
            "          sync: {}",
            if !strategy::gpu_sync_from_env() {
                strategy::SyncMode::Cpu.describe()
            } else if semaphores {
                strategy::SyncMode::from_env().describe()
            } else {
                "CPU waits (the device imports no opaque-fd semaphores)"
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_textures_in_place_on_cpu_adapters_imported_on_gpus() {
        let dxvk = strategy::Inputs {
            interop_resource: false,
            host_memory: false,
            devices_host_unified: true,
            forced_staging: false,
            dxvk: true,
            dxvk_shadow: false,
        };
        assert!(shared_texture_line(Share::Host, &dxvk).starts_with("host-pointer"));
        assert!(shared_texture_line(Share::Fd, &dxvk).starts_with("external-memory"));
        assert!(shared_texture_line(Share::None, &dxvk).contains("staging copies"));
        let forced = strategy::Inputs {
            forced_staging: true,
            ..dxvk
        };
        assert!(shared_texture_line(Share::Host, &forced).starts_with("staging-copy"));
    }
}
