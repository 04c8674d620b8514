/* dxcl's Vulkan layer (crates/dxcl-vk-layer) on DXVK-native's own device: DXVK creates its VkDevice
 * without VK_KHR_external_memory_fd; with VK_LAYER_DXCL_external_fd in the chain the device has
 * vkGetMemoryFdKHR and exports memory allocated on it as an fd (what dxcl needs for GPU-side
 * sharing with DXVK, docs/dxvk.md). Run by scripts/dxvk/test.sh twice: EXPECT_FD=0 without the
 * layer, EXPECT_FD=1 with it. Exits 0 when the device matches the expectation. */
#define COBJMACROS
#include <d3d11.h>
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* IDXGIVkInteropDevice {e2ef5fa5-dc21-4af7-90c4-f67ef6a09323}: after IUnknown, GetVulkanHandles
 * first (DXVK's src/dxgi/dxgi_interfaces.h; only that method is called here). */
static const GUID iid_interop_device = {0xe2ef5fa5, 0xdc21, 0x4af7, {0x90, 0xc4, 0xf6, 0x7e, 0xf6, 0xa0, 0x93, 0x23}};
typedef struct interop_device interop_device;
typedef struct {
    HRESULT(STDMETHODCALLTYPE *QueryInterface)(interop_device *, REFIID, void **);
    ULONG(STDMETHODCALLTYPE *AddRef)(interop_device *);
    ULONG(STDMETHODCALLTYPE *Release)(interop_device *);
    void(STDMETHODCALLTYPE *GetVulkanHandles)(interop_device *, VkInstance *, VkPhysicalDevice *, VkDevice *);
} interop_device_vtbl;
struct interop_device {
    const interop_device_vtbl *lpVtbl;
};

/* The first device-local memory type (lavapipe's only type is; any type allocates here). */
static uint32_t memory_type(PFN_vkGetInstanceProcAddr gipa, VkInstance instance, VkPhysicalDevice physical)
{
    PFN_vkGetPhysicalDeviceMemoryProperties get =
        gipa ? (PFN_vkGetPhysicalDeviceMemoryProperties)gipa(instance, "vkGetPhysicalDeviceMemoryProperties") : NULL;
    if (!get)
        return 0;
    VkPhysicalDeviceMemoryProperties p;
    get(physical, &p);
    for (uint32_t i = 0; i < p.memoryTypeCount; i++)
        if (p.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
            return i;
    return 0;
}

/* Memory of DXVK's device exported as an opaque fd: 1 exported, 0 not possible, -1 failed. */
static int export_fd(PFN_vkGetDeviceProcAddr gdpa, VkDevice dev, uint32_t type)
{
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)gdpa(dev, "vkGetMemoryFdKHR");
    PFN_vkAllocateMemory alloc = (PFN_vkAllocateMemory)gdpa(dev, "vkAllocateMemory");
    PFN_vkFreeMemory release = (PFN_vkFreeMemory)gdpa(dev, "vkFreeMemory");
    printf("vk_layer: DXVK's device: vkGetMemoryFdKHR %s\n", get_fd ? "present" : "absent");
    if (!get_fd)
        return 0;
    if (!alloc || !release)
        return -1;
    VkExportMemoryAllocateInfo export = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                         .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                 .pNext = &export,
                                 .allocationSize = 65536,
                                 .memoryTypeIndex = type};
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkResult r = alloc(dev, &info, NULL, &memory);
    if (r != VK_SUCCESS) {
        printf("vk_layer: vkAllocateMemory (exportable) = %d\n", r);
        return -1;
    }
    VkMemoryGetFdInfoKHR get = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                                .memory = memory,
                                .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    r = get_fd(dev, &get, &fd);
    printf("vk_layer: vkGetMemoryFdKHR = %d, fd %d\n", r, fd);
    if (fd >= 0)
        close(fd);
    release(dev, memory, NULL);
    return r == VK_SUCCESS && fd >= 0 ? 1 : -1;
}

int main(void)
{
    const char *e = getenv("EXPECT_FD");
    int expect = e && strcmp(e, "1") == 0;
    ID3D11Device *device = NULL;
    HRESULT hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION, &device,
                                   NULL, NULL);
    if (FAILED(hr)) {
        printf("FAIL vk_layer: D3D11CreateDevice = 0x%08x\n", (unsigned)hr);
        return 1;
    }
    interop_device *interop = NULL;
    hr = ID3D11Device_QueryInterface(device, &iid_interop_device, (void **)&interop);
    int got = -1;
    if (SUCCEEDED(hr)) {
        VkInstance instance = VK_NULL_HANDLE;
        VkPhysicalDevice physical = VK_NULL_HANDLE;
        VkDevice dev = VK_NULL_HANDLE;
        interop->lpVtbl->GetVulkanHandles(interop, &instance, &physical, &dev);
        /* The loader DXVK already loaded (through SDL). */
        void *vulkan = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD);
        PFN_vkGetDeviceProcAddr gdpa = vulkan ? (PFN_vkGetDeviceProcAddr)dlsym(vulkan, "vkGetDeviceProcAddr") : NULL;
        PFN_vkGetInstanceProcAddr gipa =
            vulkan ? (PFN_vkGetInstanceProcAddr)dlsym(vulkan, "vkGetInstanceProcAddr") : NULL;
        if (gdpa && dev)
            got = export_fd(gdpa, dev, memory_type(gipa, instance, physical));
        else
            printf("vk_layer: no Vulkan loader in the process, or no device\n");
        if (vulkan)
            dlclose(vulkan);
        interop->lpVtbl->Release(interop);
    } else {
        printf("vk_layer: QueryInterface(IDXGIVkInteropDevice) = 0x%08x\n", (unsigned)hr);
    }
    ULONG left = ID3D11Device_Release(device);
    int ok = got == expect;
    printf("%s vk_layer: expected %s, DXVK's device %s (device's last Release: %lu)\n", ok ? "PASS" : "FAIL",
           expect ? "an exported fd" : "no vkGetMemoryFdKHR",
           got == 1 ? "exported an fd" : got == 0 ? "has no vkGetMemoryFdKHR" : "failed", (unsigned long)left);
    return ok && left == 0 ? 0 : 1;
}
