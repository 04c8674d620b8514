//! What each `clGet*Info` query returns, where a 32-bit caller's layout of it differs: the types
//! of the OpenCL 3.0 specification's query tables for the answers that hold `size_t`, pointers or
//! handles. Every other answer (integers of fixed width, bitfields, strings, structures of them)
//! is the same bytes in both layouts.

use opencl_sys::*;

use dxcl_abi::sharing::D3dVersion::{D3D10, D3D11};

use crate::gen::index;

/// How an answer is laid out, by the elements a 32-bit caller sees as 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The same bytes in both layouts.
    Bytes,
    /// `size_t` or `size_t[]`; also pointers (`CL_MEM_HOST_PTR`, a Direct3D resource), which a
    /// 32-bit program gave and which therefore fit.
    Words,
    /// A handle or an array of handles.
    Handles,
    /// A context's property list (pairs; `CL_CONTEXT_PLATFORM`'s value is a handle).
    ContextProperties,
    /// `CL_PROGRAM_BINARIES`: the caller's array of pointers to its buffers, which the host fills.
    Binaries,
}

/// The layout of query `name` of entry point `function` (an entry point's number).
pub fn answer(function: u32, name: u32) -> Answer {
    use Answer::*;
    match (function, name) {
        (
            index::clGetDeviceInfo,
            CL_DEVICE_MAX_WORK_GROUP_SIZE
            | CL_DEVICE_MAX_WORK_ITEM_SIZES
            | CL_DEVICE_IMAGE2D_MAX_WIDTH
            | CL_DEVICE_IMAGE2D_MAX_HEIGHT
            | CL_DEVICE_IMAGE3D_MAX_WIDTH
            | CL_DEVICE_IMAGE3D_MAX_HEIGHT
            | CL_DEVICE_IMAGE3D_MAX_DEPTH
            | CL_DEVICE_MAX_PARAMETER_SIZE
            | CL_DEVICE_PROFILING_TIMER_RESOLUTION
            | CL_DEVICE_IMAGE_MAX_BUFFER_SIZE
            | CL_DEVICE_IMAGE_MAX_ARRAY_SIZE
            | CL_DEVICE_PRINTF_BUFFER_SIZE
            | CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE
            | CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE
            | CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
            // cl_device_partition_property lists (intptr_t): numbers only.
            | CL_DEVICE_PARTITION_PROPERTIES
            | CL_DEVICE_PARTITION_TYPE,
        ) => Words,
        (index::clGetDeviceInfo, CL_DEVICE_PLATFORM | CL_DEVICE_PARENT_DEVICE) => Handles,
        (index::clGetContextInfo, CL_CONTEXT_DEVICES) => Handles,
        (index::clGetContextInfo, CL_CONTEXT_PROPERTIES) => ContextProperties,
        (
            index::clGetCommandQueueInfo,
            CL_QUEUE_CONTEXT | CL_QUEUE_DEVICE | CL_QUEUE_DEVICE_DEFAULT,
        ) => Handles,
        (index::clGetMemObjectInfo, CL_MEM_CONTEXT | CL_MEM_ASSOCIATED_MEMOBJECT) => Handles,
        (index::clGetMemObjectInfo, CL_MEM_SIZE | CL_MEM_HOST_PTR | CL_MEM_OFFSET) => Words,
        // The Direct3D resource queries return the program's own interface pointer.
        (index::clGetMemObjectInfo, q) if q == D3D10.mem_resource_query() => Words,
        (index::clGetMemObjectInfo, q) if q == D3D11.mem_resource_query() => Words,
        (
            index::clGetImageInfo,
            CL_IMAGE_ELEMENT_SIZE
            | CL_IMAGE_ROW_PITCH
            | CL_IMAGE_SLICE_PITCH
            | CL_IMAGE_WIDTH
            | CL_IMAGE_HEIGHT
            | CL_IMAGE_DEPTH
            | CL_IMAGE_ARRAY_SIZE,
        ) => Words,
        (index::clGetImageInfo, CL_IMAGE_BUFFER) => Handles,
        (index::clGetSamplerInfo, CL_SAMPLER_CONTEXT) => Handles,
        (index::clGetProgramInfo, CL_PROGRAM_CONTEXT | CL_PROGRAM_DEVICES) => Handles,
        (index::clGetProgramInfo, CL_PROGRAM_BINARY_SIZES | CL_PROGRAM_NUM_KERNELS) => Words,
        (index::clGetProgramInfo, CL_PROGRAM_BINARIES) => Binaries,
        (index::clGetProgramBuildInfo, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE) => Words,
        (index::clGetKernelInfo, CL_KERNEL_CONTEXT | CL_KERNEL_PROGRAM) => Handles,
        (
            index::clGetKernelWorkGroupInfo,
            CL_KERNEL_WORK_GROUP_SIZE
            | CL_KERNEL_COMPILE_WORK_GROUP_SIZE
            | CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
            | CL_KERNEL_GLOBAL_WORK_SIZE,
        ) => Words,
        // Every sub-group answer is a size_t or size_t[].
        (index::clGetKernelSubGroupInfo, _) => Words,
        (index::clGetEventInfo, CL_EVENT_COMMAND_QUEUE | CL_EVENT_CONTEXT) => Handles,
        _ => Bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_handles_and_bytes_are_told_apart() {
        let (d, c) = (index::clGetDeviceInfo, index::clGetContextInfo);
        assert_eq!(answer(d, CL_DEVICE_MAX_WORK_ITEM_SIZES), Answer::Words);
        assert_eq!(answer(d, CL_DEVICE_PLATFORM), Answer::Handles);
        assert_eq!(answer(d, CL_DEVICE_NAME), Answer::Bytes);
        assert_eq!(
            answer(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE),
            Answer::Bytes,
            "a cl_ulong"
        );
        assert_eq!(answer(c, CL_CONTEXT_PROPERTIES), Answer::ContextProperties);
        assert_eq!(answer(c, CL_CONTEXT_NUM_DEVICES), Answer::Bytes);
    }
}
