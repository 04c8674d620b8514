//! The layer in a real loader chain (the system's Vulkan loader and lavapipe): a device created
//! without `VK_KHR_external_memory_fd` gets it through the layer, and exports an fd; without the
//! layer it does not. Needs target/<profile>/libdxcl_vk_layer.so (`make test-rust` builds it).

use std::ffi::CStr;
use std::path::PathBuf;

use ash::vk;

fn layer_library() -> PathBuf {
    // target/<profile>/deps/layer-… → target/<profile>/libdxcl_vk_layer.so
    let exe = std::env::current_exe().unwrap();
    let lib = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("libdxcl_vk_layer.so");
    assert!(
        lib.exists(),
        "{} missing: cargo build -p dxcl-vk-layer first",
        lib.display()
    );
    lib
}

/// A manifest for the freshly built library in a folder of its own, set as `VK_LAYER_PATH`.
fn install_manifest() {
    let dir = std::env::temp_dir().join(format!("dxcl-vk-layer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = include_str!("../dxcl_external_fd.json.in")
        .replace("@LIBRARY@", layer_library().to_str().unwrap());
    std::fs::write(dir.join("dxcl_external_fd.json"), text).unwrap();
    // SAFETY: set before the loader reads it, while this test binary's only test runs.
    unsafe { std::env::set_var("VK_LAYER_PATH", &dir) };
}

/// Creates an instance (with the layer or not) and a device that asks for no extension, and
/// returns whether the device exports a memory fd.
fn device_exports_fd(entry: &ash::Entry, with_layer: bool) -> bool {
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
    let layers = [dxcl_vk_layer::LAYER_NAME.as_ptr()];
    let mut info = vk::InstanceCreateInfo::default().application_info(&app);
    if with_layer {
        info = info.enabled_layer_names(&layers);
    }
    // SAFETY: valid create info; everything made here is destroyed before returning.
    unsafe {
        let instance = entry
            .create_instance(&info, None)
            .expect("vkCreateInstance");
        let physical = instance.enumerate_physical_devices().unwrap();
        // The first device that supports the extension (lavapipe does).
        let physical = physical
            .into_iter()
            .find(|&p| {
                instance
                    .enumerate_device_extension_properties(p)
                    .unwrap()
                    .iter()
                    .any(|e| e.extension_name_as_c_str() == Ok(c"VK_KHR_external_memory_fd"))
            })
            .expect("a Vulkan device with VK_KHR_external_memory_fd (lavapipe has it)");
        let priority = [1.0];
        let queue = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(0)
            .queue_priorities(&priority)];
        let device = instance
            .create_device(
                physical,
                &vk::DeviceCreateInfo::default().queue_create_infos(&queue),
                None,
            )
            .expect("vkCreateDevice");
        let name: &CStr = c"vkGetMemoryFdKHR";
        let has =
            (instance.fp_v1_0().get_device_proc_addr)(device.handle(), name.as_ptr()).is_some();
        let mut exported = false;
        if has {
            // Real export: exportable memory, then its fd.
            let mut export = vk::ExportMemoryAllocateInfo::default()
                .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(65536)
                .memory_type_index(0)
                .push_next(&mut export);
            let memory = device
                .allocate_memory(&alloc, None)
                .expect("vkAllocateMemory");
            let fd_api = ash::khr::external_memory_fd::Device::new(&instance, &device);
            let get = vk::MemoryGetFdInfoKHR::default()
                .memory(memory)
                .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
            let fd = fd_api.get_memory_fd(&get).expect("vkGetMemoryFdKHR");
            assert!(fd >= 0);
            libc_close(fd);
            device.free_memory(memory, None);
            exported = true;
        }
        device.destroy_device(None);
        instance.destroy_instance(None);
        exported
    }
}

fn libc_close(fd: i32) {
    extern "C" {
        fn close(fd: i32) -> i32;
    }
    // SAFETY: an fd this test owns, closed once.
    unsafe { close(fd) };
}

#[test]
fn the_layer_adds_fd_export_to_a_device_that_did_not_ask() {
    install_manifest();
    // SAFETY: the system loader, loaded once for this test.
    let entry = unsafe { ash::Entry::load() }.expect("the Vulkan loader (libvulkan1)");
    // SAFETY: a plain query.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap();
    assert!(
        layers
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(dxcl_vk_layer::LAYER_NAME)),
        "the loader does not list the layer from VK_LAYER_PATH"
    );
    assert!(
        !device_exports_fd(&entry, false),
        "without the layer the device must lack the fd functions"
    );
    assert!(
        device_exports_fd(&entry, true),
        "with the layer the device must export an fd"
    );
}
