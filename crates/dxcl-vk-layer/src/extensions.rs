//! Which device extensions the layer adds: the fd export and import of external memory and
//! semaphores (what dxcl's OpenCL layer imports on Linux), where the physical device has them and
//! the application did not ask for them itself. Nothing else changes.

use std::ffi::CStr;

/// The extensions the layer adds, in this order.
pub const WANTED: [&CStr; 2] = [
    c"VK_KHR_external_memory_fd",
    c"VK_KHR_external_semaphore_fd",
];

/// The wanted extensions that `supported` has and `requested` lacks. Both need Vulkan 1.1 (their
/// base extensions are core there): below it, nothing is added.
pub fn to_add<'a>(requested: &[&CStr], supported: &[&CStr], api_1_1: bool) -> Vec<&'a CStr> {
    if !api_1_1 {
        return Vec::new();
    }
    WANTED
        .iter()
        .copied()
        .filter(|w| supported.contains(w) && !requested.contains(w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_what_the_device_has_and_the_application_lacks() {
        let supported = [c"VK_KHR_swapchain", c"VK_KHR_external_memory_fd"];
        assert_eq!(
            to_add(&[c"VK_KHR_swapchain"], &supported, true),
            vec![c"VK_KHR_external_memory_fd"]
        );
    }

    #[test]
    fn never_adds_twice_or_what_the_device_lacks() {
        let all = [
            c"VK_KHR_external_memory_fd",
            c"VK_KHR_external_semaphore_fd",
        ];
        assert!(to_add(&all, &all, true).is_empty());
        assert!(to_add(&[], &[c"VK_KHR_swapchain"], true).is_empty());
        assert_eq!(to_add(&[], &all, true).len(), 2);
    }

    #[test]
    fn adds_nothing_below_vulkan_1_1() {
        let all = [
            c"VK_KHR_external_memory_fd",
            c"VK_KHR_external_semaphore_fd",
        ];
        assert!(to_add(&[], &all, false).is_empty());
    }
}
