/* What a GPU machine offers dxcl's external-memory strategy, tested for real rather than read from
 * extension strings: Vulkan memory exported as an opaque fd, imported into OpenCL as a buffer, viewed
 * as a 2D image through a sub-buffer, written by a kernel and read back through Vulkan; binary
 * semaphores passed both ways; and the cost of a semaphore round trip against clFinish.
 *
 * `probe teardown ROUNDS HOLD_QUEUE` checks, in plain OpenCL, the context teardown pattern that hung
 * on the H100 (see teardown() below); `probe releases ROUNDS MODE` the image release pattern of the
 * staging strategy that hung there (see releases() below).
 *
 * Build: make -C tests/gpu probe    Run: tests/gpu/probe    (needs libvulkan.so.1 and libOpenCL.so.1)
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <vulkan/vulkan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#define VK(x)                                                                                      \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ != VK_SUCCESS) {                                                                    \
            printf("FAIL %s:%d %s -> VkResult %d\n", __FILE__, __LINE__, #x, r_);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CHECK_CL(err, what)                                                                        \
    do {                                                                                           \
        if ((err) != CL_SUCCESS) {                                                                 \
            printf("FAIL %s -> cl error %d\n", what, (int)(err));                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_uuid(const char *label, const uint8_t *u) {
    printf("%s", label);
    for (int i = 0; i < 16; i++) printf("%02x", u[i]);
    printf("\n");
}

/* ---- Vulkan -------------------------------------------------------------------------------- */
static VkInstance inst;
static VkPhysicalDevice phys;
static VkDevice dev;
static VkQueue queue;
static uint32_t queue_family;
static VkCommandPool pool;
static uint8_t vk_uuid[16];
static int quiet; /* lifecycle rounds print only their result */
/* The queue family vk_init takes: 0, or (crossing) the first of the asked kind. */
static VkQueueFlags family_has, family_lacks;

static uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    printf("FAIL no memory type %x in bits %x\n", want, bits);
    exit(1);
}

static void vk_init(void) {
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VK(vkCreateInstance(&ici, NULL, &inst));
    uint32_t n = 8;
    VkPhysicalDevice list[8];
    VK(vkEnumeratePhysicalDevices(inst, &n, list));
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
        vkGetPhysicalDeviceProperties2(list[i], &p2);
        printf("vulkan device %u: %s type %d api %u.%u vendor %04x device %04x luid_valid %u\n", i,
               p2.properties.deviceName, p2.properties.deviceType, VK_VERSION_MAJOR(p2.properties.apiVersion),
               VK_VERSION_MINOR(p2.properties.apiVersion), p2.properties.vendorID, p2.properties.deviceID,
               id.deviceLUIDValid);
        print_uuid("  deviceUUID ", id.deviceUUID);
        if (i == 0) {
            phys = list[i];
            memcpy(vk_uuid, id.deviceUUID, 16);
            printf("  limits: optimalBufferCopyRowPitchAlignment %llu nonCoherentAtomSize %llu\n",
                   (unsigned long long)p2.properties.limits.optimalBufferCopyRowPitchAlignment,
                   (unsigned long long)p2.properties.limits.nonCoherentAtomSize);
        }
    }
    uint32_t qn = 16;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &qn, qf);
    queue_family = 0;
    for (uint32_t i = 0; family_has && i < qn; i++)
        if ((qf[i].queueFlags & family_has) == family_has && !(qf[i].queueFlags & family_lacks)) {
            queue_family = i;
            break;
        }
    float prio = 1;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = queue_family, .queueCount = 1, .pQueuePriorities = &prio};
    const char *exts[] = {"VK_KHR_external_memory_fd", "VK_KHR_external_semaphore_fd"};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .timelineSemaphore = VK_TRUE};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12,
                              .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = 2, .ppEnabledExtensionNames = exts};
    VK(vkCreateDevice(phys, &dci, NULL, &dev));
    vkGetDeviceQueue(dev, queue_family, 0, &queue);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = queue_family};
    VK(vkCreateCommandPool(dev, &pci, NULL, &pool));
}

typedef struct {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
} vk_buffer;

static vk_buffer vk_buffer_new(VkDeviceSize size, int exportable, VkMemoryPropertyFlags props) {
    vk_buffer b = {.size = size};
    VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                            .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = exportable ? &ext : NULL,
                              .size = size,
                              .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
    VK(vkCreateBuffer(dev, &bci, NULL, &b.buf));
    VkMemoryDedicatedRequirements ded = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, .pNext = &ded};
    VkBufferMemoryRequirementsInfo2 ri = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2, .buffer = b.buf};
    vkGetBufferMemoryRequirements2(dev, &ri, &req);
    if (exportable && !quiet)
        printf("exportable buffer %llu bytes: alignment %llu size %llu prefersDedicated %u requiresDedicated %u\n",
               (unsigned long long)size, (unsigned long long)req.memoryRequirements.alignment,
               (unsigned long long)req.memoryRequirements.size, ded.prefersDedicatedAllocation,
               ded.requiresDedicatedAllocation);
    VkExportMemoryAllocateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = exportable ? &exp : NULL,
                                .allocationSize = req.memoryRequirements.size,
                                .memoryTypeIndex = memory_type(req.memoryRequirements.memoryTypeBits, props)};
    VK(vkAllocateMemory(dev, &mai, NULL, &b.mem));
    VK(vkBindBufferMemory(dev, b.buf, b.mem, 0));
    b.size = req.memoryRequirements.size;
    return b;
}

static void vk_buffer_free(vk_buffer b) {
    vkDestroyBuffer(dev, b.buf, NULL);
    vkFreeMemory(dev, b.mem, NULL);
}

static VkCommandBuffer begin(void) {
    VkCommandBuffer cb;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VK(vkBeginCommandBuffer(cb, &bi));
    return cb;
}

static void submit_wait(VkCommandBuffer cb) {
    VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VK(vkQueueWaitIdle(queue));
    vkFreeCommandBuffers(dev, pool, 1, &cb);
}

/* ---- OpenCL -------------------------------------------------------------------------------- */
static clEnqueueAcquireExternalMemObjectsKHR_fn acquire_ext;
static clEnqueueReleaseExternalMemObjectsKHR_fn release_ext;
static clCreateSemaphoreWithPropertiesKHR_fn create_sema;
static clEnqueueWaitSemaphoresKHR_fn wait_sema;
static clEnqueueSignalSemaphoresKHR_fn signal_sema;

static void print_device(cl_device_id d) {
    char name[256], ver[256];
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof ver, ver, NULL);
    printf("cl device: %s (%s)\n", name, ver);
    size_t n = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n);
    char *ext = malloc(n + 1);
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL);
    printf("  extensions: %s\n", ext);
    free(ext);
    uint8_t uuid[16] = {0};
    if (clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, 16, uuid, NULL) == CL_SUCCESS) print_uuid("  CL_DEVICE_UUID_KHR ", uuid);
    cl_uint u = 0;
    clGetDeviceInfo(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof u, &u, NULL);
    printf("  CL_DEVICE_IMAGE_PITCH_ALIGNMENT %u\n", u);
    u = 0;
    clGetDeviceInfo(d, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, sizeof u, &u, NULL);
    printf("  CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT %u\n", u);
    u = 0;
    clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof u, &u, NULL);
    printf("  CL_DEVICE_MEM_BASE_ADDR_ALIGN %u bits\n", u);
    cl_uint handles[8];
    size_t hn = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, sizeof handles, handles, &hn) == CL_SUCCESS)
        for (size_t i = 0; i < hn / sizeof(cl_uint); i++) printf("  memory import handle type 0x%x\n", handles[i]);
    cl_uint types[8];
    cl_int te = clGetDeviceInfo(d, CL_DEVICE_SEMAPHORE_TYPES_KHR, sizeof types, types, &hn);
    printf("  CL_DEVICE_SEMAPHORE_TYPES_KHR: err %d, %zu bytes\n", te, te ? 0 : hn);
    if (te == CL_SUCCESS)
        for (size_t i = 0; i < hn / sizeof(cl_uint); i++) printf("  semaphore type 0x%x\n", types[i]);
    if (clGetDeviceInfo(d, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, sizeof handles, handles, &hn) == CL_SUCCESS)
        for (size_t i = 0; i < hn / sizeof(cl_uint); i++) printf("  semaphore import handle type 0x%x\n", handles[i]);
    if (clGetDeviceInfo(d, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, sizeof handles, handles, &hn) == CL_SUCCESS)
        for (size_t i = 0; i < hn / sizeof(cl_uint); i++) printf("  semaphore export handle type 0x%x\n", handles[i]);
}

static const char *kernel_src =
    "__kernel void paint_buffer(__global uchar *b, uint pitch) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  __global uchar *px = b + y * pitch + x * 4;\n"
    "  px[0] = x & 255; px[1] = y & 255; px[2] = 7; px[3] = 255;\n"
    "}\n"
    "__kernel void invert2d(__read_only image2d_t src, __write_only image2d_t dst) {\n"
    "  int2 c = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imageui(dst, c, (uint4)(255) - read_imageui(src, c));\n"
    "}\n"
    "__kernel void verify_paint2d(__read_write image2d_t img, __global uint *bad) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  uint4 v = read_imageui(img, (int2)(x, y));\n"
    "  if (v.x != ((x * 3) & 255) || v.y != ((y * 5) & 255) || v.z != ((x ^ y) & 255) || v.w != 9) atomic_inc(bad);\n"
    "  write_imageui(img, (int2)(x, y), (uint4)(x & 255, y & 255, 77, 1));\n"
    "}\n"
    "__kernel void verify_paint3d(__read_write image3d_t img, __global uint *bad) {\n"
    "  int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n"
    "  uint4 v = read_imageui(img, (int4)(x, y, z, 0));\n"
    "  if (v.x != ((x * 3) & 255) || v.y != ((y * 5) & 255) || v.z != ((x ^ y ^ z) & 255) || v.w != 9) atomic_inc(bad);\n"
    "  write_imageui(img, (int4)(x, y, z, 0), (uint4)(x & 255, y & 255, z & 255, 1));\n"
    "}\n"
    "__kernel void invert2d_inplace(__read_write image2d_t img) {\n"
    "  int2 c = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imageui(img, c, (uint4)(255) - read_imageui(img, c));\n"
    "}\n";

static void image_cases(cl_context ctx, cl_command_queue q, cl_device_id cldev, vk_buffer host);

/* The CL device whose UUID is the Vulkan device's, and its platform; NULL when none matches. */
static cl_device_id match_cl_device(cl_platform_id *plat) {
    cl_platform_id plats[8];
    cl_uint np = 0;
    CHECK_CL(clGetPlatformIDs(8, plats, &np), "clGetPlatformIDs");
    cl_device_id cldev = NULL;
    for (cl_uint p = 0; p < np; p++) {
        char pname[256];
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        if (!quiet) printf("cl platform %u: %s\n", p, pname);
        cl_device_id ds[8];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 8, ds, &nd) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd; i++) {
            if (!quiet) print_device(ds[i]);
            uint8_t uuid[16];
            if (clGetDeviceInfo(ds[i], CL_DEVICE_UUID_KHR, 16, uuid, NULL) == CL_SUCCESS && !memcmp(uuid, vk_uuid, 16)) {
                *plat = plats[p];
                cldev = ds[i];
            }
        }
    }
    return cldev;
}

static int lifecycle(int rounds, const char *flags);
static int semfloor(void);
static int teardown(int rounds, int hold_queue);
static int releases(int rounds, int mode);
static int overlap(int mib);
static int crossing(const char *family);
static int crossing_cl(void);

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "overlap"))
        return overlap(atoi(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "teardown"))
        return teardown(atoi(argv[2]), atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "releases"))
        return releases(atoi(argv[2]), atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "lifecycle"))
        return lifecycle(atoi(argv[2]), argv[3]);
    if (argc == 2 && !strcmp(argv[1], "semfloor"))
        return semfloor();
    if (argc == 3 && !strcmp(argv[1], "crossing"))
        return crossing(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "crossing-cl"))
        return crossing_cl();
    vk_init();
    cl_platform_id plat = NULL;
    cl_device_id cldev = match_cl_device(&plat);
    if (!cldev) {
        printf("RESULT no CL device matches the Vulkan device's UUID\n");
        return 1;
    }
    printf("matched the Vulkan device by UUID\n");
    acquire_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    release_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    create_sema = clGetExtensionFunctionAddressForPlatform(plat, "clCreateSemaphoreWithPropertiesKHR");
    wait_sema = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueWaitSemaphoresKHR");
    signal_sema = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueSignalSemaphoresKHR");
    printf("functions: acquire %p release %p create_sema %p wait %p signal %p\n", (void *)acquire_ext,
           (void *)release_ext, (void *)create_sema, (void *)wait_sema, (void *)signal_sema);

    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
    CHECK_CL(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
    CHECK_CL(err, "clCreateCommandQueue");

    /* A 16 MiB exportable buffer; a 256x256 RGBA8 image lives at offset 65536 with a 1024-byte pitch. */
    const VkDeviceSize size = 16 << 20, img_off = 65536, pitch = 1024;
    const int W = 256, H = 256;
    vk_buffer shared = vk_buffer_new(size, 1, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vk_buffer host = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkCommandBuffer cb = begin();
    vkCmdFillBuffer(cb, shared.buf, 0, VK_WHOLE_SIZE, 0x11223344);
    submit_wait(cb);

    VkMemoryGetFdInfoKHR gfi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = shared.mem,
                                .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    PFN_vkGetMemoryFdKHR get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    int fd = -1;
    VK(get_memory_fd(dev, &gfi, &fd));
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                 CL_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cldev,
                                 CL_DEVICE_HANDLE_LIST_END_KHR, 0};
    double t0 = now_us();
    cl_mem buf = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, size, NULL, &err);
    printf("import buffer: err %d in %.1f us\n", err, now_us() - t0);
    CHECK_CL(err, "clCreateBufferWithProperties(opaque fd)");

    CHECK_CL(acquire_ext(q, 1, &buf, 0, NULL, NULL), "acquire external");
    uint32_t word = 0;
    CHECK_CL(clEnqueueReadBuffer(q, buf, CL_TRUE, 4096, 4, &word, 0, NULL, NULL), "read");
    printf("CL reads the Vulkan fill: 0x%08x (%s)\n", word, word == 0x11223344 ? "ok" : "WRONG");

    cl_buffer_region region = {img_off, pitch * H};
    cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    printf("sub-buffer at %llu: err %d\n", (unsigned long long)img_off, err);
    CHECK_CL(err, "clCreateSubBuffer");
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = H,
                          .image_row_pitch = pitch, .mem_object = sub};
    cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    printf("image2d from the imported sub-buffer: err %d\n", err);
    if (img) clReleaseMemObject(img);

    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
    err = clBuildProgram(prog, 1, &cldev, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(prog, cldev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        printf("build log: %s\n", log);
    }
    CHECK_CL(err, "build");
    cl_kernel k = clCreateKernel(prog, "paint_buffer", &err);
    CHECK_CL(err, "kernel");
    clSetKernelArg(k, 0, sizeof sub, &sub);
    cl_uint pitch_arg = pitch;
    clSetKernelArg(k, 1, sizeof pitch_arg, &pitch_arg);
    size_t gws[2] = {W, H};
    CHECK_CL(clEnqueueNDRangeKernel(q, k, 2, NULL, gws, NULL, 0, NULL, NULL), "ndrange");
    CHECK_CL(release_ext(q, 1, &buf, 0, NULL, NULL), "release external");
    CHECK_CL(clFinish(q), "finish");

    cb = begin();
    VkBufferCopy copy = {0, 0, size};
    vkCmdCopyBuffer(cb, shared.buf, host.buf, 1, &copy);
    submit_wait(cb);
    uint8_t *p;
    VK(vkMapMemory(dev, host.mem, 0, VK_WHOLE_SIZE, 0, (void **)&p));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *px = p + img_off + y * pitch + x * 4;
            if (px[0] != (x & 255) || px[1] != (y & 255) || px[2] != 7 || px[3] != 255) bad++;
        }
    uint32_t outside;
    memcpy(&outside, p + img_off - 4, 4);
    printf("RESULT kernel wrote the imported buffer in Vulkan memory: %d of %d texels wrong; word before it 0x%08x\n",
           bad, W * H, outside);
    vkUnmapMemory(dev, host.mem);

    image_cases(ctx, q, cldev, host);
    fflush(stdout);

    /* Semaphores both ways: Vulkan signals, CL waits; CL signals, Vulkan waits. */
    PFN_vkGetSemaphoreFdKHR get_sema_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");
    VkExportSemaphoreCreateInfo esci = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                        .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &esci};
    VkSemaphore to_cl, to_vk;
    VK(vkCreateSemaphore(dev, &sci, NULL, &to_cl));
    VK(vkCreateSemaphore(dev, &sci, NULL, &to_vk));
    cl_semaphore_khr s_to_cl = NULL, s_to_vk = NULL;
    int sfd[2];
    VkSemaphore vs[2] = {to_cl, to_vk};
    for (int i = 0; i < 2; i++) {
        VkSemaphoreGetFdInfoKHR sgi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, .semaphore = vs[i],
                                       .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VK(get_sema_fd(dev, &sgi, &sfd[i]));
        cl_semaphore_properties_khr sp[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                            CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)sfd[i],
                                            0};
        cl_semaphore_khr s = create_sema(ctx, sp, &err);
        printf("import semaphore %d (no device list): err %d\n", i, err);
        CHECK_CL(err, "clCreateSemaphoreWithPropertiesKHR");
        if (i == 0) s_to_cl = s; else s_to_vk = s;
    }
    VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo tsci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
    VkSemaphore timeline;
    VK(vkCreateSemaphore(dev, &tsci, NULL, &timeline));
    uint64_t tval = 0;

    enum { N = 200 };
    double floor_us[N], rt_us[N], cpu_us[N];
    for (int i = 0; i < N; i++) { /* floor: an empty marker and clFinish */
        double a = now_us();
        cl_event ev;
        clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
        clFinish(q);
        clReleaseEvent(ev);
        floor_us[i] = now_us() - a;
    }
    for (int i = 0; i < N; i++) { /* GPU-side: vk signal -> cl wait, acquire, release, cl signal -> vk wait */
        double a = now_us();
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .signalSemaphoreCount = 1, .pSignalSemaphores = &to_cl};
        VK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
        CHECK_CL(wait_sema(q, 1, &s_to_cl, NULL, 0, NULL, NULL), "wait semaphore");
        CHECK_CL(acquire_ext(q, 1, &buf, 0, NULL, NULL), "acquire");
        CHECK_CL(release_ext(q, 1, &buf, 0, NULL, NULL), "release");
        CHECK_CL(signal_sema(q, 1, &s_to_vk, NULL, 0, NULL, NULL), "signal semaphore");
        clFlush(q);
        tval++;
        VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
        VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                             .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &tval};
        VkSubmitInfo wi = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &tsi, .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &to_vk, .pWaitDstStageMask = &stage, .signalSemaphoreCount = 1,
                           .pSignalSemaphores = &timeline};
        VK(vkQueueSubmit(queue, 1, &wi, VK_NULL_HANDLE));
        clFinish(q);
        VkSemaphoreWaitInfo swi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                                   .pSemaphores = &timeline, .pValues = &tval};
        VK(vkWaitSemaphores(dev, &swi, UINT64_MAX));
        rt_us[i] = now_us() - a;
    }
    for (int i = 0; i < N; i++) { /* CPU-side: queue idle, acquire, release, clFinish */
        double a = now_us();
        vkQueueWaitIdle(queue);
        CHECK_CL(acquire_ext(q, 1, &buf, 0, NULL, NULL), "acquire");
        CHECK_CL(release_ext(q, 1, &buf, 0, NULL, NULL), "release");
        clFinish(q);
        cpu_us[i] = now_us() - a;
    }
    qsort(floor_us, N, sizeof(double), cmp_double);
    qsort(rt_us, N, sizeof(double), cmp_double);
    qsort(cpu_us, N, sizeof(double), cmp_double);
    printf("RESULT median us: floor (marker+clFinish) %.1f; semaphore round trip with acquire+release %.1f; "
           "cpu-synced acquire+release %.1f\n", floor_us[N / 2], rt_us[N / 2], cpu_us[N / 2]);
    printf("RESULT probe done\n");
    return 0;
}

/* A Vulkan image in exportable memory, imported into OpenCL as an image of the same format and
 * extent. Vulkan writes a pattern that depends on the coordinates; a CL kernel checks it texel by
 * texel and paints another; Vulkan reads that back. Both directions agree only if both APIs see the
 * same texel at the same address. */
static void image_case(cl_context ctx, cl_command_queue q, cl_device_id cldev, vk_buffer host, const char *label,
                       VkImageTiling tiling, VkImageUsageFlags usage, uint32_t w, uint32_t h, uint32_t d,
                       uint32_t mips, uint32_t layers) {
    VkExternalMemoryImageCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO,
                                           .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkImageCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, .pNext = &ext,
                             .imageType = d > 1 ? VK_IMAGE_TYPE_3D : VK_IMAGE_TYPE_2D,
                             .format = VK_FORMAT_R8G8B8A8_UINT, .extent = {w, h, d}, .mipLevels = mips,
                             .arrayLayers = layers, .samples = VK_SAMPLE_COUNT_1_BIT, .tiling = tiling,
                             .usage = usage, .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED};
    VkImage image;
    VkResult r = vkCreateImage(dev, &ici, NULL, &image);
    if (r != VK_SUCCESS) {
        printf("RESULT image %s: vkCreateImage %d\n", label, r);
        return;
    }
    VkMemoryDedicatedRequirements ded = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, .pNext = &ded};
    VkImageMemoryRequirementsInfo2 ri = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2, .image = image};
    vkGetImageMemoryRequirements2(dev, &ri, &req);
    VkMemoryDedicatedAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, .image = image};
    VkExportMemoryAllocateInfo exp = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                      .pNext = ded.requiresDedicatedAllocation ? &dai : NULL,
                                      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &exp,
                                .allocationSize = req.memoryRequirements.size,
                                .memoryTypeIndex = memory_type(req.memoryRequirements.memoryTypeBits,
                                                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    VkDeviceMemory mem;
    VK(vkAllocateMemory(dev, &mai, NULL, &mem));
    VK(vkBindImageMemory(dev, image, mem, 0));
    VkSubresourceLayout sl = {0};
    if (tiling == VK_IMAGE_TILING_LINEAR) {
        VkImageSubresource isr = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0};
        vkGetImageSubresourceLayout(dev, image, &isr, &sl);
    }
    printf("image %s: %ux%ux%u mips %u layers %u size %llu align %llu requiresDedicated %u linear rowPitch %llu\n",
           label, w, h, d, mips, layers, (unsigned long long)req.memoryRequirements.size,
           (unsigned long long)req.memoryRequirements.alignment, ded.requiresDedicatedAllocation,
           (unsigned long long)sl.rowPitch);

    uint8_t *p;
    VK(vkMapMemory(dev, host.mem, 0, VK_WHOLE_SIZE, 0, (void **)&p));
    for (uint32_t z = 0; z < d; z++)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint8_t *px = p + ((z * h + y) * w + x) * 4;
                px[0] = x * 3; px[1] = y * 5; px[2] = x ^ y ^ (d > 1 ? z : 0); px[3] = 9;
            }
    vkUnmapMemory(dev, host.mem);
    VkCommandBuffer cb = begin();
    VkImageMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, .srcAccessMask = 0,
                              .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                              .newLayout = VK_IMAGE_LAYOUT_GENERAL, .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                              .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED, .image = image,
                              .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, mips, 0, layers}};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &b);
    VkBufferImageCopy bic = {.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1}, .imageExtent = {w, h, d}};
    vkCmdCopyBufferToImage(cb, host.buf, image, VK_IMAGE_LAYOUT_GENERAL, 1, &bic);
    submit_wait(cb);

    PFN_vkGetMemoryFdKHR get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR gfi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = mem,
                                .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int fd = -1;
    VK(get_memory_fd(dev, &gfi, &fd));
    cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd,
                                 CL_DEVICE_HANDLE_LIST_KHR, (cl_mem_properties)cldev, CL_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc = {.image_type = d > 1 ? CL_MEM_OBJECT_IMAGE3D
                                              : (layers > 1 ? CL_MEM_OBJECT_IMAGE2D_ARRAY : CL_MEM_OBJECT_IMAGE2D),
                          .image_width = w, .image_height = h, .image_depth = d > 1 ? d : 0,
                          .image_array_size = layers > 1 ? layers : 0};
    cl_int err;
    cl_mem img = clCreateImageWithProperties(ctx, props, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
    if (err != CL_SUCCESS) {
        printf("RESULT image %s: import err %d\n", label, err);
        vkDestroyImage(dev, image, NULL);
        vkFreeMemory(dev, mem, NULL);
        return;
    }
    if (layers > 1) {
        printf("RESULT image %s: imports as an image2d_array (no kernel check)\n", label);
        clReleaseMemObject(img);
        vkDestroyImage(dev, image, NULL);
        vkFreeMemory(dev, mem, NULL);
        return;
    }
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, NULL, &err);
    CHECK_CL(clBuildProgram(prog, 1, &cldev, "-cl-std=CL3.0", NULL, NULL), "build");
    cl_kernel k = clCreateKernel(prog, d > 1 ? "verify_paint3d" : "verify_paint2d", &err);
    CHECK_CL(err, "kernel");
    cl_uint zero = 0, bad_cl = 0;
    cl_mem bad = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4, &zero, &err);
    clSetKernelArg(k, 0, sizeof img, &img);
    clSetKernelArg(k, 1, sizeof bad, &bad);
    size_t gws[3] = {w, h, d};
    CHECK_CL(acquire_ext(q, 1, &img, 0, NULL, NULL), "acquire image");
    CHECK_CL(clEnqueueNDRangeKernel(q, k, d > 1 ? 3 : 2, NULL, gws, NULL, 0, NULL, NULL), "ndrange image");
    CHECK_CL(release_ext(q, 1, &img, 0, NULL, NULL), "release image");
    CHECK_CL(clEnqueueReadBuffer(q, bad, CL_TRUE, 0, 4, &bad_cl, 0, NULL, NULL), "read bad");
    cb = begin();
    vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_GENERAL, host.buf, 1, &bic);
    submit_wait(cb);
    VK(vkMapMemory(dev, host.mem, 0, VK_WHOLE_SIZE, 0, (void **)&p));
    unsigned bad_vk = 0;
    for (uint32_t z = 0; z < d; z++)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++) {
                uint8_t *px = p + ((z * h + y) * w + x) * 4;
                if (px[0] != (x & 255) || px[1] != (y & 255) || px[2] != (d > 1 ? (z & 255) : 77) || px[3] != 1)
                    bad_vk++;
            }
    vkUnmapMemory(dev, host.mem);
    printf("RESULT image %s: CL saw %u of %u texels wrong; Vulkan saw %u wrong\n", label, bad_cl, w * h * d, bad_vk);
    clReleaseMemObject(bad);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(img);
    vkDestroyImage(dev, image, NULL);
    vkFreeMemory(dev, mem, NULL);
}

static void image_cases(cl_context ctx, cl_command_queue q, cl_device_id cldev, vk_buffer host) {
    const VkImageUsageFlags copy = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    const VkImageUsageFlags all = copy | VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
    const VkImageUsageFlags rt = all | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    image_case(ctx, q, cldev, host, "optimal 256x256 copy-only", VK_IMAGE_TILING_OPTIMAL, copy, 256, 256, 1, 1, 1);
    image_case(ctx, q, cldev, host, "optimal 256x256 storage", VK_IMAGE_TILING_OPTIMAL, all, 256, 256, 1, 1, 1);
    image_case(ctx, q, cldev, host, "optimal 256x256 render-target", VK_IMAGE_TILING_OPTIMAL, rt, 256, 256, 1, 1, 1);
    image_case(ctx, q, cldev, host, "optimal 1000x600", VK_IMAGE_TILING_OPTIMAL, all, 1000, 600, 1, 1, 1);
    image_case(ctx, q, cldev, host, "optimal 33x7", VK_IMAGE_TILING_OPTIMAL, copy, 33, 7, 1, 1, 1);
    image_case(ctx, q, cldev, host, "optimal 256x256 4 mips", VK_IMAGE_TILING_OPTIMAL, all, 256, 256, 1, 4, 1);
    image_case(ctx, q, cldev, host, "optimal 256x256 array 4", VK_IMAGE_TILING_OPTIMAL, all, 256, 256, 1, 1, 4);
    image_case(ctx, q, cldev, host, "optimal 3d 64x32x16", VK_IMAGE_TILING_OPTIMAL, all, 64, 32, 16, 1, 1);
    image_case(ctx, q, cldev, host, "linear 256x256", VK_IMAGE_TILING_LINEAR, copy, 256, 256, 1, 1, 1);
}

/* probe lifecycle ROUNDS FLAGS: ROUNDS times, what dxcl's layer does over one shared object's life,
 * with raw Vulkan and OpenCL (no dxcl): a context and queue, exportable Vulkan memory imported as a
 * CL buffer, then the objects released and the context last. It looks for the NVIDIA hang in
 * clReleaseContext that the conformance suite met (docs/gpu.md). FLAGS pick what each round does:
 *   a  acquire, fill, release (clEnqueueAcquire/ReleaseExternalMemObjectsKHR), a marker, clFlush
 *   f  clFinish before the objects are released
 *   v  free the Vulkan memory before clReleaseMemObject (dxcl frees it at the app's last release)
 *   e  keep the marker event across clReleaseContext, release it after (dxcl's pending work)
 *   w  Vulkan work on the memory each round, waited for on the CPU before the acquire
 *   2  a second, plain context made and released inside the round
 *   c  a destructor callback on the context (clSetContextDestructorCallback)
 *   m  a destructor callback on the memory object (clSetMemObjectDestructorCallback)
 * A round that takes 20 s ends the program with its number. */
static volatile int lifecycle_round;
static void lifecycle_watchdog(int sig) {
    (void)sig;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "RESULT lifecycle HUNG in round %d\n", lifecycle_round);
    if (n > 0) (void)!write(1, buf, (size_t)n);
    _exit(3);
}

static volatile int destructors_run;
static void CL_CALLBACK count_destructor_mem(cl_mem m, void *u) {
    (void)m;
    (void)u;
    __atomic_add_fetch(&destructors_run, 1, __ATOMIC_SEQ_CST);
}
static void CL_CALLBACK count_destructor_ctx(cl_context c, void *u) {
    (void)c;
    (void)u;
    __atomic_add_fetch(&destructors_run, 1, __ATOMIC_SEQ_CST);
}

static int lifecycle(int rounds, const char *flags) {
    quiet = 1;
    vk_init();
    cl_platform_id plat = NULL;
    cl_device_id cldev = match_cl_device(&plat);
    if (!cldev) {
        printf("RESULT no CL device matches the Vulkan device's UUID\n");
        return 1;
    }
    acquire_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    release_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    PFN_vkGetMemoryFdKHR get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    int acq = strchr(flags, 'a') != NULL, fin = strchr(flags, 'f') != NULL, vk_first = strchr(flags, 'v') != NULL;
    int hold = strchr(flags, 'e') != NULL, vk_work = strchr(flags, 'w') != NULL, second = strchr(flags, '2') != NULL;
    int ctx_callback = strchr(flags, 'c') != NULL, mem_callback = strchr(flags, 'm') != NULL;
    signal(SIGALRM, lifecycle_watchdog);
    double worst = 0, total = 0;
    for (int i = 0; i < rounds; i++) {
        lifecycle_round = i;
        alarm(20);
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
        CHECK_CL(err, "clCreateContext");
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
        CHECK_CL(err, "clCreateCommandQueue");
        if (ctx_callback) CHECK_CL(clSetContextDestructorCallback(ctx, count_destructor_ctx, NULL), "context callback");
        const VkDeviceSize size = 1 << 20;
        vk_buffer b = vk_buffer_new(size, 1, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (vk_work) {
            VkCommandBuffer cb = begin();
            vkCmdFillBuffer(cb, b.buf, 0, VK_WHOLE_SIZE, (uint32_t)i);
            submit_wait(cb);
        }
        VkMemoryGetFdInfoKHR gfi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = b.mem,
                                    .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        int fd = -1;
        VK(get_memory_fd(dev, &gfi, &fd));
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, 0};
        cl_mem m = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, size, NULL, &err);
        CHECK_CL(err, "clCreateBufferWithProperties(opaque fd)");
        if (mem_callback) CHECK_CL(clSetMemObjectDestructorCallback(m, count_destructor_mem, NULL), "memory callback");
        cl_event ev = NULL;
        if (acq) {
            CHECK_CL(acquire_ext(q, 1, &m, 0, NULL, NULL), "acquire external");
            uint32_t pattern = 0x5a5a0000u + (uint32_t)i;
            CHECK_CL(clEnqueueFillBuffer(q, m, &pattern, 4, 0, size, 0, NULL, NULL), "fill");
            CHECK_CL(release_ext(q, 1, &m, 0, NULL, NULL), "release external");
            CHECK_CL(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev), "marker");
            clFlush(q);
        }
        if (second) {
            cl_context other = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
            CHECK_CL(err, "clCreateContext (second)");
            clReleaseContext(other);
        }
        if (fin) clFinish(q);
        if (vk_first) {
            vk_buffer_free(b);
        }
        clReleaseMemObject(m);
        clReleaseCommandQueue(q);
        if (ev && !hold) clReleaseEvent(ev);
        double t0 = now_us();
        clReleaseContext(ctx);
        double dt = now_us() - t0;
        if (ev && hold) clReleaseEvent(ev);
        if (!vk_first) {
            vk_buffer_free(b);
        }
        total += dt;
        if (dt > worst) worst = dt;
    }
    alarm(0);
    printf("RESULT lifecycle '%s': %d rounds, clReleaseContext mean %.1f us, worst %.1f us; %d destructor callbacks "
           "ran\n", flags, rounds, total / rounds, worst, destructors_run);
    return 0;
}

/* probe semfloor: what makes clFinish slow once semaphores are in use (docs/gpu.md). The floor
 * (an empty marker + clFinish, median of 500) on the queue q is measured fresh, after importing two
 * semaphores, after q ran semaphore waits and signals, 300 ms later, on a second queue of the same
 * context, and after the semaphores are released. Then the same with the semaphore commands on a
 * separate queue qs, bridged to q by events: does q stay fast? Each design's round trip (Vulkan
 * signals, CL waits, acquire, release, CL signals, Vulkan waits, clFinish) is timed too. */
static cl_command_queue sf_q, sf_q2, sf_qs;
static cl_mem sf_buf;
static VkSemaphore sf_to_cl, sf_to_vk, sf_timeline;
static cl_semaphore_khr sf_s_to_cl, sf_s_to_vk;
static uint64_t sf_tval;

static double sf_floor(cl_command_queue q) {
    enum { N = 500 };
    double t[N];
    for (int i = 0; i < N; i++) {
        double a = now_us();
        clEnqueueMarkerWithWaitList(q, 0, NULL, NULL);
        clFinish(q);
        t[i] = now_us() - a;
    }
    qsort(t, N, sizeof(double), cmp_double);
    return t[N / 2];
}

static void sf_vk_wait_for_cl(void) {
    sf_tval++;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo tsi = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                         .signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &sf_tval};
    VkSubmitInfo wi = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &tsi, .waitSemaphoreCount = 1,
                       .pWaitSemaphores = &sf_to_vk, .pWaitDstStageMask = &stage, .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &sf_timeline};
    VK(vkQueueSubmit(queue, 1, &wi, VK_NULL_HANDLE));
}

static void sf_vk_done(void) {
    VkSemaphoreWaitInfo swi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                               .pSemaphores = &sf_timeline, .pValues = &sf_tval};
    VK(vkWaitSemaphores(dev, &swi, UINT64_MAX));
}

static void sf_vk_signal(void) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .signalSemaphoreCount = 1, .pSignalSemaphores = &sf_to_cl};
    VK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
}

/* The semaphore commands on q itself (what dxcl does). */
static double sf_round_same(void) {
    double a = now_us();
    sf_vk_signal();
    CHECK_CL(wait_sema(sf_q, 1, &sf_s_to_cl, NULL, 0, NULL, NULL), "wait semaphore");
    CHECK_CL(acquire_ext(sf_q, 1, &sf_buf, 0, NULL, NULL), "acquire");
    CHECK_CL(release_ext(sf_q, 1, &sf_buf, 0, NULL, NULL), "release");
    CHECK_CL(signal_sema(sf_q, 1, &sf_s_to_vk, NULL, 0, NULL, NULL), "signal semaphore");
    clFlush(sf_q);
    sf_vk_wait_for_cl();
    clFinish(sf_q);
    sf_vk_done();
    return now_us() - a;
}

/* The semaphore commands on qs, ordered with q's commands by events. */
static double sf_round_bridged(void) {
    double a = now_us();
    cl_event waited, released;
    sf_vk_signal();
    CHECK_CL(wait_sema(sf_qs, 1, &sf_s_to_cl, NULL, 0, NULL, &waited), "wait semaphore (qs)");
    clFlush(sf_qs);
    CHECK_CL(acquire_ext(sf_q, 1, &sf_buf, 1, &waited, NULL), "acquire");
    CHECK_CL(release_ext(sf_q, 1, &sf_buf, 0, NULL, &released), "release");
    clFlush(sf_q);
    CHECK_CL(signal_sema(sf_qs, 1, &sf_s_to_vk, NULL, 1, &released, NULL), "signal semaphore (qs)");
    clFlush(sf_qs);
    sf_vk_wait_for_cl();
    clFinish(sf_q);
    sf_vk_done();
    clReleaseEvent(waited);
    clReleaseEvent(released);
    return now_us() - a;
}

/* One direction alone: Vulkan signals, q waits, clFinish. */
static double sf_round_to_cl(void) {
    double a = now_us();
    sf_vk_signal();
    CHECK_CL(wait_sema(sf_q, 1, &sf_s_to_cl, NULL, 0, NULL, NULL), "wait semaphore");
    clFinish(sf_q);
    return now_us() - a;
}

/* The other alone: q signals, Vulkan waits, the CPU waits for Vulkan. */
static double sf_round_to_vk(void) {
    double a = now_us();
    CHECK_CL(signal_sema(sf_q, 1, &sf_s_to_vk, NULL, 0, NULL, NULL), "signal semaphore");
    clFlush(sf_q);
    sf_vk_wait_for_cl();
    sf_vk_done();
    return now_us() - a;
}

static double (*sf_before)(void);
static double sf_floor_once(void) {
    double a = now_us();
    clEnqueueMarkerWithWaitList(sf_q, 0, NULL, NULL);
    clFinish(sf_q);
    return now_us() - a;
}
/* A floor sample right after one round of sf_before (the bench's pattern). */
static double sf_floor_after(void) {
    sf_before();
    return sf_floor_once();
}

static double sf_rounds(double (*round)(void)) {
    enum { N = 200 };
    double t[N];
    for (int i = 0; i < N; i++) t[i] = round();
    qsort(t, N, sizeof(double), cmp_double);
    return t[N / 2];
}

static int semfloor(void) {
    quiet = 1;
    vk_init();
    cl_platform_id plat = NULL;
    cl_device_id cldev = match_cl_device(&plat);
    if (!cldev) {
        printf("RESULT no CL device matches the Vulkan device's UUID\n");
        return 1;
    }
    acquire_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueAcquireExternalMemObjectsKHR");
    release_ext = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueReleaseExternalMemObjectsKHR");
    create_sema = clGetExtensionFunctionAddressForPlatform(plat, "clCreateSemaphoreWithPropertiesKHR");
    wait_sema = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueWaitSemaphoresKHR");
    signal_sema = clGetExtensionFunctionAddressForPlatform(plat, "clEnqueueSignalSemaphoresKHR");
    clReleaseSemaphoreKHR_fn release_sema = clGetExtensionFunctionAddressForPlatform(plat, "clReleaseSemaphoreKHR");
    PFN_vkGetMemoryFdKHR get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    PFN_vkGetSemaphoreFdKHR get_sema_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(dev, "vkGetSemaphoreFdKHR");

    for (int design = 0; design < 2; design++) {
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
        CHECK_CL(err, "clCreateContext");
        sf_q = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
        sf_q2 = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
        sf_qs = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
        CHECK_CL(err, "clCreateCommandQueue");
        const char *name = design ? "bridged (semaphores on their own queue)" : "same queue";
        printf("RESULT semfloor %s: fresh floor %.1f us\n", name, sf_floor(sf_q));

        vk_buffer b = vk_buffer_new(1 << 20, 1, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        VkMemoryGetFdInfoKHR gfi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = b.mem,
                                    .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        int fd = -1;
        VK(get_memory_fd(dev, &gfi, &fd));
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, (cl_mem_properties)fd, 0};
        sf_buf = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
        CHECK_CL(err, "import buffer");
        printf("RESULT semfloor %s: after importing a buffer %.1f us\n", name, sf_floor(sf_q));

        VkExportSemaphoreCreateInfo esci = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                            .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &esci};
        VK(vkCreateSemaphore(dev, &sci, NULL, &sf_to_cl));
        VK(vkCreateSemaphore(dev, &sci, NULL, &sf_to_vk));
        VkSemaphore vs[2] = {sf_to_cl, sf_to_vk};
        cl_semaphore_khr cs[2];
        for (int i = 0; i < 2; i++) {
            VkSemaphoreGetFdInfoKHR sgi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, .semaphore = vs[i],
                                           .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
            int sfd;
            VK(get_sema_fd(dev, &sgi, &sfd));
            cl_semaphore_properties_khr sp[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                                CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, (cl_semaphore_properties_khr)sfd, 0};
            cs[i] = create_sema(ctx, sp, &err);
            CHECK_CL(err, "import semaphore");
        }
        sf_s_to_cl = cs[0];
        sf_s_to_vk = cs[1];
        VkSemaphoreTypeCreateInfo tci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                         .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
        VkSemaphoreCreateInfo tsci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tci};
        VK(vkCreateSemaphore(dev, &tsci, NULL, &sf_timeline));
        sf_tval = 0;
        printf("RESULT semfloor %s: after importing two semaphores %.1f us\n", name, sf_floor(sf_q));

        double rt = sf_rounds(design ? sf_round_bridged : sf_round_same);
        printf("RESULT semfloor %s: semaphore round trip with acquire+release+clFinish %.1f us\n", name, rt);
        printf("RESULT semfloor %s: floor after the round trips: q %.1f us, second queue %.1f us, semaphore queue %.1f us\n",
               name, sf_floor(sf_q), sf_floor(sf_q2), sf_floor(sf_qs));
        sf_before = design ? sf_round_bridged : sf_round_same;
        printf("RESULT semfloor %s: one floor sample right after each round trip %.1f us\n", name,
               sf_rounds(sf_floor_after));
        if (!design) {
            printf("RESULT semfloor Vulkan signals, CL waits, clFinish: %.1f us\n", sf_rounds(sf_round_to_cl));
            sf_before = sf_round_to_cl;
            printf("RESULT semfloor   then one floor sample: %.1f us\n", sf_rounds(sf_floor_after));
            printf("RESULT semfloor CL signals, Vulkan waits, CPU waits for Vulkan: %.1f us\n", sf_rounds(sf_round_to_vk));
            sf_before = sf_round_to_vk;
            printf("RESULT semfloor   then one floor sample: %.1f us\n", sf_rounds(sf_floor_after));
        }
        usleep(300 * 1000);
        printf("RESULT semfloor %s: 300 ms later: q %.1f us\n", name, sf_floor(sf_q));
        release_sema(sf_s_to_cl);
        release_sema(sf_s_to_vk);
        printf("RESULT semfloor %s: semaphores released: q %.1f us\n", name, sf_floor(sf_q));
        clReleaseMemObject(sf_buf);
        clReleaseCommandQueue(sf_q);
        clReleaseCommandQueue(sf_q2);
        clReleaseCommandQueue(sf_qs);
        clReleaseContext(ctx);
        vkDestroySemaphore(dev, sf_to_cl, NULL);
        vkDestroySemaphore(dev, sf_to_vk, NULL);
        vkDestroySemaphore(dev, sf_timeline, NULL);
        vk_buffer_free(b);
    }
    return 0;
}

/* teardown: the pattern of tests/conformance/contexts.c "context dies with its objects", in plain
 * OpenCL with no layer and no Direct3D, to tell a platform defect from the layer's. Each round: a
 * context, a queue, a user event `gate`, a marker waiting for it (the release's event) whose
 * completion callback hands the marker (and with `hold_queue`, the queue) to a releasing thread,
 * as the layer's reaper does; another thread sets `gate` 100 ms later; the main thread joins it,
 * clFinish, releases everything, and waits up to 2 s for the context's destructor callback.
 * Nothing disturbs the platform's threads. Prints a line per round and a RESULT line; an alarm
 * ends a hang with the round it hung in. */
#include <pthread.h>

static cl_event td_inbox[4096];
static cl_command_queue td_inbox_q[4096];
static int td_head, td_tail;
static pthread_mutex_t td_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t td_cond = PTHREAD_COND_INITIALIZER;
static volatile int td_round = -1;

static void *td_reaper(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&td_lock);
        while (td_head == td_tail)
            pthread_cond_wait(&td_cond, &td_lock);
        cl_event ev = td_inbox[td_tail % 4096];
        cl_command_queue q = td_inbox_q[td_tail % 4096];
        td_tail++;
        pthread_mutex_unlock(&td_lock);
        clReleaseEvent(ev);
        if (q)
            clReleaseCommandQueue(q);
    }
    return NULL;
}

static int td_hold_queue;
static cl_command_queue td_q;

static void CL_CALLBACK td_completed(cl_event ev, cl_int status, void *user) {
    (void)status;
    (void)user;
    pthread_mutex_lock(&td_lock);
    td_inbox[td_head % 4096] = ev;
    td_inbox_q[td_head % 4096] = td_hold_queue ? td_q : NULL;
    td_head++;
    pthread_cond_signal(&td_cond);
    pthread_mutex_unlock(&td_lock);
}

static void CL_CALLBACK td_gone(cl_context ctx, void *user) {
    (void)ctx;
    __atomic_store_n((int *)user, 1, __ATOMIC_RELEASE);
}

static void *td_set_later(void *gate) {
    usleep(100 * 1000);
    clSetUserEventStatus((cl_event)gate, CL_COMPLETE);
    return NULL;
}

/* The alarm of teardown and releases: which of them hung, in which round. */
static const char *hang_part = "teardown";

static void hang_alarm(int sig) {
    (void)sig;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "RESULT %s: HUNG in round %d\n", hang_part, td_round);
    (void)!write(1, buf, (size_t)n);
    _exit(3);
}

static int teardown(int rounds, int hold_queue) {
    cl_platform_id plat;
    cl_device_id dev;
    CHECK_CL(clGetPlatformIDs(1, &plat, NULL), "clGetPlatformIDs");
    CHECK_CL(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    td_hold_queue = hold_queue;
    pthread_t reaper;
    pthread_create(&reaper, NULL, td_reaper, NULL);
    signal(SIGALRM, hang_alarm);
    alarm((unsigned)rounds * 3 + 10); /* a round takes at most 2.2 s */
    int late = 0;
    for (int r = 0; r < rounds; r++) {
        td_round = r;
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
        CHECK_CL(err, "clCreateContext");
        /* Not on the stack: a lost context's callback may still come in a later round. */
        int *gone = calloc(1, sizeof *gone);
        CHECK_CL(clSetContextDestructorCallback(ctx, td_gone, gone), "clSetContextDestructorCallback");
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
        CHECK_CL(err, "clCreateCommandQueue");
        cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 256, NULL, &err);
        CHECK_CL(err, "clCreateBuffer");
        cl_event gate = clCreateUserEvent(ctx, &err);
        CHECK_CL(err, "clCreateUserEvent");
        cl_event done;
        CHECK_CL(clEnqueueMarkerWithWaitList(q, 1, &gate, &done), "clEnqueueMarkerWithWaitList");
        td_q = q;
        if (hold_queue)
            clRetainCommandQueue(q);
        CHECK_CL(clSetEventCallback(done, CL_COMPLETE, td_completed, NULL), "clSetEventCallback");
        pthread_t t;
        pthread_create(&t, NULL, td_set_later, gate);
        pthread_join(t, NULL);
        CHECK_CL(clFinish(q), "clFinish");
        clReleaseEvent(gate);
        clReleaseMemObject(buf);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        double t0 = now_us();
        while (!__atomic_load_n(gone, __ATOMIC_ACQUIRE) && now_us() - t0 < 2e6)
            usleep(1000);
        int ok = __atomic_load_n(gone, __ATOMIC_ACQUIRE);
        printf("teardown round %d: context %s after %.1f ms\n", r, ok ? "gone" : "NOT gone", (now_us() - t0) / 1e3);
        late += !ok;
    }
    printf("RESULT teardown (hold_queue=%d): %d of %d contexts not gone within 2 s\n", hold_queue, late, rounds);
    return late != 0;
}

/* releases: the pattern of tests/conformance/textures.c "all N subresources" with the staging
 * strategy, in plain OpenCL, no layer: in each round 21 small 2D images (a mip chain's sizes) are
 * written, then each gets a non-blocking read into host memory (the release's read-back) and a
 * marker after it, flushed; then every image is released at once. MODE 0: a completion callback on
 * each read and each marker hands the event to teardown's releasing thread (as the layer's do); 1: no
 * callbacks, the events are released at once; 2: as 0, with clFinish before the images' release.
 * Modes 3 to 5 take mode 0 apart: 3, callbacks that do nothing, the events released by the main
 * thread once the images are released and the queue finished (a callback pending during the
 * release, no release on another thread); 4, no callbacks, the events handed to the releasing
 * thread at once (releases on another thread, no callback); 5, as 0 with callbacks on the markers
 * only, each read's event released at once (no callback on a command that uses an image).
 * An alarm ends a hang with the round it hung in. */

static void CL_CALLBACK rl_nothing(cl_event ev, cl_int status, void *user) {
    (void)ev;
    (void)status;
    (void)user;
}

/* Hands `ev` to teardown's releasing thread, as a completion callback does. */
static void rl_hand_over(cl_event ev) {
    td_completed(ev, CL_COMPLETE, NULL);
}

static int releases(int rounds, int mode) {
    enum { N = 21 };
    cl_platform_id plat;
    cl_device_id dev;
    CHECK_CL(clGetPlatformIDs(1, &plat, NULL), "clGetPlatformIDs");
    CHECK_CL(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), "clGetDeviceIDs");
    pthread_t reaper;
    pthread_create(&reaper, NULL, td_reaper, NULL);
    hang_part = "releases";
    signal(SIGALRM, hang_alarm);
    alarm((unsigned)rounds / 4 + 30);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK_CL(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK_CL(err, "clCreateCommandQueue");
    cl_image_format fmt = {CL_RGBA, CL_UNORM_INT8};
    static unsigned char src[128 * 128 * 4], dst[N][128 * 128 * 4];
    cl_event later[2 * N];
    double t0 = now_us();
    for (int r = 0; r < rounds; r++) {
        td_round = r;
        cl_mem img[N];
        for (int i = 0; i < N; i++) {
            size_t w = (size_t)128 >> (i % 7), h = (size_t)64 >> (i % 6);
            cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = w, .image_height = h};
            img[i] = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
            CHECK_CL(err, "clCreateImage");
            size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
            CHECK_CL(clEnqueueWriteImage(q, img[i], CL_TRUE, origin, region, 0, 0, src, 0, NULL, NULL),
                     "clEnqueueWriteImage");
        }
        for (int i = 0; i < N; i++) {
            size_t w = (size_t)128 >> (i % 7), h = (size_t)64 >> (i % 6);
            size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
            cl_event read, marker;
            CHECK_CL(clEnqueueReadImage(q, img[i], CL_FALSE, origin, region, 0, 0, dst[i], 0, NULL, &read),
                     "clEnqueueReadImage");
            CHECK_CL(clEnqueueMarkerWithWaitList(q, 0, NULL, &marker), "clEnqueueMarkerWithWaitList");
            clFlush(q);
            switch (mode) {
            case 1:
                clReleaseEvent(read);
                clReleaseEvent(marker);
                break;
            case 3:
                CHECK_CL(clSetEventCallback(read, CL_COMPLETE, rl_nothing, NULL), "clSetEventCallback");
                CHECK_CL(clSetEventCallback(marker, CL_COMPLETE, rl_nothing, NULL), "clSetEventCallback");
                later[2 * i] = read;
                later[2 * i + 1] = marker;
                break;
            case 4:
                rl_hand_over(read);
                rl_hand_over(marker);
                break;
            case 5:
                clReleaseEvent(read);
                CHECK_CL(clSetEventCallback(marker, CL_COMPLETE, td_completed, NULL), "clSetEventCallback");
                break;
            default:
                CHECK_CL(clSetEventCallback(read, CL_COMPLETE, td_completed, NULL), "clSetEventCallback");
                CHECK_CL(clSetEventCallback(marker, CL_COMPLETE, td_completed, NULL), "clSetEventCallback");
            }
        }
        if (mode == 2)
            CHECK_CL(clFinish(q), "clFinish");
        for (int i = 0; i < N; i++)
            CHECK_CL(clReleaseMemObject(img[i]), "clReleaseMemObject");
        CHECK_CL(clFinish(q), "clFinish");
        if (mode == 3)
            for (int i = 0; i < 2 * N; i++)
                clReleaseEvent(later[i]);
    }
    printf("RESULT releases (mode %d): %d rounds of %d images, none hung (%.1f ms a round)\n", mode, rounds, N,
           (now_us() - t0) / 1e3 / rounds);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}

/* overlap MIB: whether a Vulkan copy out of the GPU and an OpenCL copy into it run at the same time
 * on the bus, which bounds a staging acquire on dxcl's runtime (the runtime downloads the Direct3D
 * resource into the pinned shadow with Vulkan while OpenCL uploads the landed pieces). Times, as
 * medians of 9 rounds of MIB MiB each: Vulkan device -> host-visible memory alone; OpenCL pinned host
 * -> device alone; both started together (two contexts); and, for contrast, OpenCL device -> pinned
 * host alone and together with the upload on a second queue of the same context. Together close to
 * the slower one alone: the directions overlap; close to the sum: the GPU runs one context's copy at
 * a time. */
static double ov_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* What overlap's timed cases copy with. */
static struct {
    const VkSubmitInfo *si;
    cl_command_queue q, q2;
    cl_mem up, down;
    void *host_up, *host_down;
    size_t size;
} ov;

/* OpenCL's upload on `ov.q`, or its download on `ov.q2`, non-blocking. */
static void ov_upload(void) {
    CHECK_CL(clEnqueueWriteBuffer(ov.q, ov.up, CL_FALSE, 0, ov.size, ov.host_up, 0, NULL, NULL), "clEnqueueWriteBuffer");
}

static void ov_download(void) {
    CHECK_CL(clEnqueueReadBuffer(ov.q2, ov.down, CL_FALSE, 0, ov.size, ov.host_down, 0, NULL, NULL), "clEnqueueReadBuffer");
}

/* The timed cases, in the order overlap() reports them. */
static void ov_vk_down(void) {
    VK(vkQueueSubmit(queue, 1, ov.si, VK_NULL_HANDLE));
    VK(vkQueueWaitIdle(queue));
}

static void ov_cl_up(void) {
    ov_upload();
    CHECK_CL(clFinish(ov.q), "clFinish");
}

static void ov_two_contexts(void) {
    VK(vkQueueSubmit(queue, 1, ov.si, VK_NULL_HANDLE));
    ov_upload();
    CHECK_CL(clFlush(ov.q), "clFlush");
    VK(vkQueueWaitIdle(queue));
    CHECK_CL(clFinish(ov.q), "clFinish");
}

static void ov_cl_down(void) {
    ov_download();
    CHECK_CL(clFinish(ov.q2), "clFinish");
}

static void ov_one_context(void) {
    ov_download();
    CHECK_CL(clFlush(ov.q2), "clFlush");
    ov_upload();
    CHECK_CL(clFinish(ov.q), "clFinish");
    CHECK_CL(clFinish(ov.q2), "clFinish");
}

static int overlap(int mib) {
    enum { ROUNDS = 9 };
    quiet = 1;
    vk_init();
    cl_platform_id plat = NULL;
    cl_device_id cldev = match_cl_device(&plat);
    if (!cldev) {
        /* Two devices then (a CPU run, say): the figures say nothing of one GPU's bus, but the
         * program runs. */
        CHECK_CL(clGetPlatformIDs(1, &plat, NULL), "clGetPlatformIDs");
        CHECK_CL(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &cldev, NULL), "clGetDeviceIDs");
        printf("overlap: no CL device matches the Vulkan device's UUID: the first CL device instead\n");
    }
    size_t size = (size_t)mib << 20;
    vk_buffer src = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vk_buffer dst = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkCommandBuffer cb;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb, &bi));
    VkBufferCopy region = {.size = size};
    vkCmdCopyBuffer(cb, src.buf, dst.buf, 1, &region);
    VK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};

    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
    CHECK_CL(err, "clCreateContext");
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, cldev, NULL, &err);
    CHECK_CL(err, "clCreateCommandQueue");
    cl_mem up = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    cl_mem down = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    cl_mem pin_up = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
    cl_mem pin_down = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
    CHECK_CL(err, "clCreateBuffer");
    void *host_up = clEnqueueMapBuffer(q, pin_up, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
    void *host_down = clEnqueueMapBuffer(q, pin_down, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
    CHECK_CL(err, "clEnqueueMapBuffer");
    memset(host_up, 0x5a, size);
    ov.si = &si;
    ov.q = q;
    ov.q2 = q2;
    ov.size = size;
    ov.up = up;
    ov.down = down;
    ov.host_up = host_up;
    ov.host_down = host_down;

    void (*cases[5])(void) = {ov_vk_down, ov_cl_up, ov_two_contexts, ov_cl_down, ov_one_context};
    double t[5][ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < 5; c++) {
            double t0 = now_us();
            cases[c]();
            t[c][r] = now_us() - t0;
        }
    double vk_down = ov_median(t[0], ROUNDS), cl_up = ov_median(t[1], ROUNDS), two = ov_median(t[2], ROUNDS);
    double cl_down = ov_median(t[3], ROUNDS), one = ov_median(t[4], ROUNDS);
    double gb = (double)size / 1e3; /* over a time in µs: GB/s */
    printf("overlap %d MiB: Vulkan device->host %.0f us (%.1f GB/s), OpenCL host->device %.0f us (%.1f GB/s), "
           "OpenCL device->host %.0f us (%.1f GB/s)\n",
           mib, vk_down, gb / vk_down, cl_up, gb / cl_up, cl_down, gb / cl_down);
    printf("RESULT overlap %d MiB, two contexts (Vulkan down + OpenCL up): %.0f us = %.2fx the slower alone, %.2fx "
           "the sum\n",
           mib, two, two / (vk_down > cl_up ? vk_down : cl_up), two / (vk_down + cl_up));
    printf("RESULT overlap %d MiB, one context (OpenCL down + up, two queues): %.0f us = %.2fx the slower alone, "
           "%.2fx the sum\n",
           mib, one, one / (cl_down > cl_up ? cl_down : cl_up), one / (cl_down + cl_up));
    clEnqueueUnmapMemObject(q, pin_up, host_up, 0, NULL, NULL);
    clEnqueueUnmapMemObject(q, pin_down, host_down, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(up);
    clReleaseMemObject(down);
    clReleaseMemObject(pin_up);
    clReleaseMemObject(pin_down);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(q2);
    clReleaseContext(ctx);
    vkFreeCommandBuffers(dev, pool, 1, &cb);
    return 0;
}

/* ---- crossing: what the first command of one API costs right after the other's ------------ */
/* A staging hand-off's four copies with no dxcl: Vulkan copies a device buffer out to host memory,
 * OpenCL writes those bytes into its buffer and finishes, reads them back and finishes, Vulkan
 * copies them in again; each timed with its wait. Against the same copies with the other API left
 * out. FAMILY picks the Vulkan queue: graphics (family 0), compute (a compute family without
 * graphics), transfer (a transfer family without graphics and compute). */
static double cr_p(double *v, int n, double q) {
    qsort(v, n, sizeof *v, cmp_double);
    return v[(int)(q * (n - 1))];
}

static void cr_vk_copy(VkCommandBuffer cb, VkFence fence) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VK(vkQueueSubmit(queue, 1, &si, fence));
    VK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
    VK(vkResetFences(dev, 1, &fence));
}

static VkCommandBuffer cr_record(VkBuffer from, VkBuffer to, VkDeviceSize size) {
    VkCommandBuffer cb;
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cb, &bi));
    VkBufferCopy region = {.size = size};
    vkCmdCopyBuffer(cb, from, to, 1, &region);
    VK(vkEndCommandBuffer(cb));
    return cb;
}

/* What both crossing probes open: the Vulkan device, the OpenCL context and queue of the same GPU,
 * a fence for Vulkan's copies. */
typedef struct {
    cl_context ctx;
    cl_command_queue q;
    VkFence fence;
} cr_session;

static int cr_open(const char *name, cr_session *s) {
    quiet = 1;
    vk_init();
    cl_platform_id plat = NULL;
    cl_device_id cldev = match_cl_device(&plat);
    if (!cldev) {
        printf("RESULT %s: no CL device matches the Vulkan device's UUID\n", name);
        return 0;
    }
    cl_int err;
    s->ctx = clCreateContext(NULL, 1, &cldev, NULL, NULL, &err);
    CHECK_CL(err, "clCreateContext");
    s->q = clCreateCommandQueueWithProperties(s->ctx, cldev, NULL, &err);
    CHECK_CL(err, "clCreateCommandQueue");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK(vkCreateFence(dev, &fci, NULL, &s->fence));
    return 1;
}

static void cr_close(cr_session *s) {
    vkDestroyFence(dev, s->fence, NULL);
    clReleaseCommandQueue(s->q);
    clReleaseContext(s->ctx);
}

/* A pinned OpenCL buffer of `size` bytes, mapped into *host (unmapped by clEnqueueUnmapMemObject). */
static cl_mem cr_pinned(cr_session *s, size_t size, void **host) {
    cl_int err;
    cl_mem pin = clCreateBuffer(s->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
    CHECK_CL(err, "clCreateBuffer pinned");
    *host = clEnqueueMapBuffer(s->q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
    CHECK_CL(err, "clEnqueueMapBuffer");
    return pin;
}

static int crossing(const char *family) {
    enum { ROUNDS = 300 };
    if (!strcmp(family, "compute")) {
        family_has = VK_QUEUE_COMPUTE_BIT;
        family_lacks = VK_QUEUE_GRAPHICS_BIT;
    } else if (!strcmp(family, "transfer")) {
        family_has = VK_QUEUE_TRANSFER_BIT;
        family_lacks = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    }
    cr_session ss;
    if (!cr_open("crossing", &ss)) return 1;
    printf("crossing: Vulkan queue family %u (%s)\n", queue_family, family);
    cl_context ctx = ss.ctx;
    cl_command_queue q = ss.q;
    VkFence fence = ss.fence;
    cl_int err;
    size_t sizes[] = {4 << 10, 16 << 10, 32 << 10, 64 << 10, 256 << 10, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t size = sizes[k];
        vk_buffer res = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        vk_buffer host = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        void *mapped;
        VK(vkMapMemory(dev, host.mem, 0, VK_WHOLE_SIZE, 0, &mapped));
        VkCommandBuffer out = cr_record(res.buf, host.buf, size), in = cr_record(host.buf, res.buf, size);
        cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
        CHECK_CL(err, "clCreateBuffer");
        void *pinned;
        cl_mem pin = cr_pinned(&ss, size, &pinned);
        char *heap = malloc(size);
        memset(heap, 0x5a, size);
        for (int pinned_side = 0; pinned_side < 2; pinned_side++) {
            void *shadow = pinned_side ? pinned : heap;
            /* 0..3: the four copies in a hand-off's order; 4..7: each alone, its API only. */
            double t[8][ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_us();
                cr_vk_copy(out, fence);
                memcpy(shadow, mapped, size);
                double t1 = now_us();
                CHECK_CL(clEnqueueWriteBuffer(q, mem, CL_FALSE, 0, size, shadow, 0, NULL, NULL), "write");
                CHECK_CL(clFinish(q), "clFinish");
                double t2 = now_us();
                CHECK_CL(clEnqueueReadBuffer(q, mem, CL_FALSE, 0, size, shadow, 0, NULL, NULL), "read");
                CHECK_CL(clFinish(q), "clFinish");
                double t3 = now_us();
                memcpy(mapped, shadow, size);
                cr_vk_copy(in, fence);
                double t4 = now_us();
                t[0][r] = t1 - t0, t[1][r] = t2 - t1, t[2][r] = t3 - t2, t[3][r] = t4 - t3;
            }
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_us();
                cr_vk_copy(out, fence);
                double t1 = now_us();
                cr_vk_copy(in, fence);
                double t2 = now_us();
                t[4][r] = t1 - t0, t[7][r] = t2 - t1;
            }
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now_us();
                CHECK_CL(clEnqueueWriteBuffer(q, mem, CL_FALSE, 0, size, shadow, 0, NULL, NULL), "write");
                CHECK_CL(clFinish(q), "clFinish");
                double t1 = now_us();
                CHECK_CL(clEnqueueReadBuffer(q, mem, CL_FALSE, 0, size, shadow, 0, NULL, NULL), "read");
                CHECK_CL(clFinish(q), "clFinish");
                double t2 = now_us();
                t[5][r] = t1 - t0, t[6][r] = t2 - t1;
            }
            const char *names[4] = {"vk out", "cl write", "cl read", "vk in"};
            printf("RESULT crossing %s %zu KiB %s shadow: median (p90) us, in a hand-off's order | alone:", family,
                   size >> 10, pinned_side ? "pinned" : "heap");
            double m[8], p[8];
            for (int c = 0; c < 8; c++) {
                m[c] = cr_p(t[c], ROUNDS, 0.5);
                p[c] = cr_p(t[c], ROUNDS, 0.9);
            }
            for (int c = 0; c < 4; c++) printf(" %s %.1f (%.1f) | %.1f (%.1f);", names[c], m[c], p[c], m[c + 4], p[c + 4]);
            printf(" sum %.1f | %.1f\n", m[0] + m[1] + m[2] + m[3], m[4] + m[5] + m[6] + m[7]);
        }
        free(heap);
        clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL);
        clFinish(q);
        clReleaseMemObject(pin);
        clReleaseMemObject(mem);
        VkCommandBuffer cbs[2] = {out, in};
        vkFreeCommandBuffers(dev, pool, 2, cbs);
        vkUnmapMemory(dev, host.mem);
        vk_buffer_free(res);
        vk_buffer_free(host);
    }
    cr_close(&ss);
    return 0;
}

/* crossing-cl: which OpenCL copy into a small buffer waits for the engine switch after Vulkan's
 * work on the graphics queue. Each way of copying host bytes into an OpenCL buffer (and an image,
 * for contrast), timed with its clFinish right after a Vulkan copy on the graphics queue and its
 * wait, against the same without the Vulkan copy. */
enum { CC_HEAP, CC_PINNED, CC_COPY, CC_BLOCKING, CC_MAP, CC_IMAGE, CC_WAYS };
static const char *cc_names[CC_WAYS] = {"write from heap", "write from pinned", "copy from a pinned buffer",
                                         "blocking write from heap", "map, memcpy, unmap", "image write from heap"};

static void cc_copy(int way, cl_command_queue q, cl_mem mem, cl_mem pin, void *pinned, void *heap, cl_mem img,
                    size_t size) {
    cl_int err = CL_SUCCESS;
    size_t origin[3] = {0, 0, 0}, region[3] = {size / 4 / 32, 32, 1};
    switch (way) {
    case CC_HEAP: err = clEnqueueWriteBuffer(q, mem, CL_FALSE, 0, size, heap, 0, NULL, NULL); break;
    case CC_PINNED: err = clEnqueueWriteBuffer(q, mem, CL_FALSE, 0, size, pinned, 0, NULL, NULL); break;
    case CC_COPY: err = clEnqueueCopyBuffer(q, pin, mem, 0, 0, size, 0, NULL, NULL); break;
    case CC_BLOCKING: err = clEnqueueWriteBuffer(q, mem, CL_TRUE, 0, size, heap, 0, NULL, NULL); break;
    case CC_MAP: {
        void *p = clEnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, size, 0, NULL, NULL, &err);
        CHECK_CL(err, "map");
        memcpy(p, heap, size);
        err = clEnqueueUnmapMemObject(q, mem, p, 0, NULL, NULL);
        break;
    }
    case CC_IMAGE: err = clEnqueueWriteImage(q, img, CL_FALSE, origin, region, 0, 0, heap, 0, NULL, NULL); break;
    }
    CHECK_CL(err, cc_names[way]);
    CHECK_CL(clFinish(q), "clFinish");
}

static int crossing_cl(void) {
    enum { ROUNDS = 300 };
    cr_session ss;
    if (!cr_open("crossing-cl", &ss)) return 1;
    cl_context ctx = ss.ctx;
    cl_command_queue q = ss.q;
    VkFence fence = ss.fence;
    cl_int err;
    size_t sizes[] = {4 << 10, 16 << 10, 64 << 10};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t size = sizes[k];
        vk_buffer a = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        vk_buffer b = vk_buffer_new(size, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        VkCommandBuffer d3d = cr_record(a.buf, b.buf, size);
        cl_mem mem = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
        CHECK_CL(err, "clCreateBuffer");
        void *pinned;
        cl_mem pin = cr_pinned(&ss, size, &pinned);
        cl_image_format f = {CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc idesc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = size / 4 / 32, .image_height = 32};
        cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &f, &idesc, NULL, &err);
        CHECK_CL(err, "clCreateImage");
        char *heap = malloc(size);
        memset(heap, 0x5a, size);
        for (int way = 0; way < CC_WAYS; way++) {
            double after[ROUNDS], alone[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                cr_vk_copy(d3d, fence);
                double t0 = now_us();
                cc_copy(way, q, mem, pin, pinned, heap, img, size);
                double t1 = now_us();
                cc_copy(way, q, mem, pin, pinned, heap, img, size);
                double t2 = now_us();
                after[r] = t1 - t0, alone[r] = t2 - t1;
            }
            printf("RESULT crossing-cl %zu KiB, %s: after Vulkan's graphics queue %.1f us (p90 %.1f), right after "
                   "itself %.1f us (p90 %.1f)\n",
                   size >> 10, cc_names[way], cr_p(after, ROUNDS, 0.5), cr_p(after, ROUNDS, 0.9),
                   cr_p(alone, ROUNDS, 0.5), cr_p(alone, ROUNDS, 0.9));
        }
        free(heap);
        clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL);
        clFinish(q);
        clReleaseMemObject(img);
        clReleaseMemObject(pin);
        clReleaseMemObject(mem);
        vkFreeCommandBuffers(dev, pool, 1, &d3d);
        vk_buffer_free(a);
        vk_buffer_free(b);
    }
    cr_close(&ss);
    return 0;
}
