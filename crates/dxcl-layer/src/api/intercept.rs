//! Which dispatch slots the layer overrides. Everything else keeps pointing at the target.

use std::mem::{offset_of, size_of};

use opencl_sys::cl_icd::cl_icd_dispatch;

use super::{context, derived, ext, guard, memory, platform, queue};

/// The loader must pass at least this many slots: the highest slot overridden, plus one. The
/// OpenCL 3.0 `*WithProperties` slots past it are overridden when the table has them (a shorter
/// table loses them: see `loader::init`).
pub const REQUIRED_ENTRIES: usize =
    offset_of!(cl_icd_dispatch, clCloneKernel) / size_of::<usize>() + 1;

/// Overrides the intercepted slots of a copy of the target table.
pub(crate) fn override_slots(t: &mut cl_icd_dispatch) {
    t.clGetPlatformInfo = Some(platform::get_platform_info);
    t.clGetDeviceInfo = Some(platform::get_device_info);
    t.clCreateContext = Some(context::create_context);
    t.clCreateContextFromType = Some(context::create_context_from_type);
    t.clGetContextInfo = Some(context::get_context_info);
    t.clGetMemObjectInfo = Some(memory::get_mem_object_info);
    t.clGetImageInfo = Some(memory::get_image_info);
    t.clRetainContext = Some(context::retain_context);
    t.clReleaseContext = Some(context::release_context);
    t.clReleaseMemObject = Some(memory::release_mem_object);
    t.clRetainMemObject = Some(memory::retain_mem_object);
    t.clCreateBuffer = Some(derived::create_buffer);
    t.clCreateBufferWithProperties = Some(derived::create_buffer_with_properties);
    t.clCreateImage = Some(derived::create_image);
    t.clCreateImage2D = Some(derived::create_image_2d);
    t.clCreateImage3D = Some(derived::create_image_3d);
    t.clCreateImageWithProperties = Some(derived::create_image_with_properties);
    t.clCreateSubBuffer = Some(derived::create_sub_buffer);
    t.clSetKernelArg = Some(guard::set_kernel_arg);
    t.clCloneKernel = Some(guard::clone_kernel);
    t.clCreateKernel = Some(guard::create_kernel);
    t.clCreateKernelsInProgram = Some(guard::create_kernels_in_program);
    t.clReleaseKernel = Some(guard::release_kernel);
    t.clGetEventInfo = Some(guard::get_event_info);
    t.clReleaseEvent = Some(guard::release_event);
    t.clGetExtensionFunctionAddress = Some(ext::get_extension_function_address);
    t.clGetExtensionFunctionAddressForPlatform =
        Some(ext::get_extension_function_address_for_platform);
    t.clEnqueueReadBuffer = Some(guard::read_buffer);
    t.clEnqueueWriteBuffer = Some(guard::write_buffer);
    t.clEnqueueReadBufferRect = Some(guard::read_buffer_rect);
    t.clEnqueueWriteBufferRect = Some(guard::write_buffer_rect);
    t.clEnqueueCopyBuffer = Some(guard::copy_buffer);
    t.clEnqueueCopyBufferRect = Some(guard::copy_buffer_rect);
    t.clEnqueueFillBuffer = Some(guard::fill_buffer);
    t.clEnqueueReadImage = Some(guard::read_image);
    t.clEnqueueWriteImage = Some(guard::write_image);
    t.clEnqueueCopyImage = Some(guard::copy_image);
    t.clEnqueueCopyImageToBuffer = Some(guard::copy_image_to_buffer);
    t.clEnqueueCopyBufferToImage = Some(guard::copy_buffer_to_image);
    t.clEnqueueFillImage = Some(guard::fill_image);
    t.clEnqueueMapBuffer = Some(guard::map_buffer);
    t.clEnqueueMapImage = Some(guard::map_image);
    t.clEnqueueUnmapMemObject = Some(guard::unmap_mem_object);
    t.clEnqueueMigrateMemObjects = Some(guard::migrate_mem_objects);
    t.clEnqueueNativeKernel = Some(guard::native_kernel);
    t.clEnqueueNDRangeKernel = Some(guard::nd_range_kernel);
    t.clEnqueueTask = Some(guard::task);
    t.clFinish = Some(queue::finish);
    t.clReleaseCommandQueue = Some(queue::release);
    t.clSetCommandQueueProperty = Some(queue::set_property);
    ext::install_khr_slots(t);
}
