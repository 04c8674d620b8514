/* The Vulkan devices winevulkan lists, read the same way by dxclcl.dll (which identifies the
 * device behind a DXGI adapter by them) and by dxcl-wine-info.exe (which says when there is none). */
#ifndef DXCL_WINE_VULKAN_DEVICES_H
#define DXCL_WINE_VULKAN_DEVICES_H

#include <windows.h>
#include <vulkan/vulkan.h>

typedef void (*vulkan_device_fn)(PFN_vkGetPhysicalDeviceProperties2 props2, VkPhysicalDevice device,
                                 uint32_t index, void *context);

/* Calls `each` for each of the first `max` (at most 16) Vulkan devices, then ends the instance;
 * returns how many it called it for: 0 without vulkan-1.dll or a Vulkan driver. */
static inline uint32_t vulkan_devices(uint32_t max, vulkan_device_fn each, void *context)
{
    static const VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "dxcl", 1, "dxcl", 1, VK_API_VERSION_1_1};
    const VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app};
    HMODULE vulkan = LoadLibraryA("vulkan-1.dll");
    PFN_vkGetInstanceProcAddr gipa = vulkan ? (PFN_vkGetInstanceProcAddr)(void *)GetProcAddress(vulkan, "vkGetInstanceProcAddr") : NULL;
    PFN_vkCreateInstance create = gipa ? (PFN_vkCreateInstance)(void *)gipa(NULL, "vkCreateInstance") : NULL;
    VkPhysicalDevice devices[16];
    uint32_t count = max < 16 ? max : 16, done = 0;
    VkInstance instance;
    if (!create || create(&info, NULL, &instance) != VK_SUCCESS) return 0;
    PFN_vkEnumeratePhysicalDevices enumerate = (PFN_vkEnumeratePhysicalDevices)(void *)gipa(instance, "vkEnumeratePhysicalDevices");
    PFN_vkGetPhysicalDeviceProperties2 props2 = (PFN_vkGetPhysicalDeviceProperties2)(void *)gipa(instance, "vkGetPhysicalDeviceProperties2");
    PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)(void *)gipa(instance, "vkDestroyInstance");
    if (enumerate && props2 && enumerate(instance, &count, devices) >= 0)
        for (; done < count; done++)
            if (each) each(props2, devices[done], done, context);
    if (destroy) destroy(instance, NULL);
    return done;
}

#endif
