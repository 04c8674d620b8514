//! What one create call asks of a strategy, and the plain OpenCL object of its size and format.

use opencl_sys::{
    cl_context, cl_image_desc, cl_image_format, cl_int, cl_mem, cl_mem_flags, cl_mem_object_type,
    CL_MEM_OBJECT_IMAGE3D,
};

use crate::core::tokens::{D3dVersion, ResourceKind};
use crate::d3d::com::ComPtr;
use crate::d3d::interop;
use crate::d3d::resource::Resource;

/// What one create call asks for, its arguments already checked by `api/`.
pub(crate) struct Request<'a> {
    pub version: D3dVersion,
    pub kind: ResourceKind,
    pub context: cl_context,
    pub flags: cl_mem_flags,
    pub resource: &'a Resource,
    pub subresource: u32,
    pub mip: u32,
    /// Texels of the subresource's mip level (buffers: ByteWidth, 1, 1).
    pub extent: (u32, u32, u32),
    /// The CL format and image type (textures).
    pub image: Option<(cl_image_format, cl_mem_object_type)>,
    /// Every context device reports CL_DEVICE_HOST_UNIFIED_MEMORY.
    pub host_unified: bool,
    /// The context's Direct3D device.
    pub device: &'a ComPtr,
}

impl Request<'_> {
    /// Bytes of one element: a texel, or a byte for buffers.
    pub fn pixel_size(&self) -> usize {
        self.image
            .map_or(1, |(f, _)| crate::core::format::pixel_size(&f))
    }

    /// The image description of the whole subresource; `pitches` when the image uses the
    /// resource's memory in place.
    pub fn image_desc(&self, pitches: Option<interop::Layout>) -> Option<cl_image_desc> {
        let (_, image_type) = self.image?;
        let (width, height, depth) = self.extent;
        let three_d = image_type == CL_MEM_OBJECT_IMAGE3D;
        let (row_pitch, slice_pitch) = match pitches {
            Some(l) => (
                l.row_pitch as usize,
                if three_d { l.depth_pitch as usize } else { 0 },
            ),
            None => (0, 0),
        };
        Some(cl_image_desc {
            image_type,
            image_width: width as usize,
            image_height: height as usize,
            // 0 for 2D: "image_depth ... is only used if the image is a 3D image", and a platform
            // that answers CL_IMAGE_DEPTH with the description's value (rusticl 22.3) then still
            // answers "For a ... 2D image ... depth = 0".
            image_depth: if three_d { depth as usize } else { 0 },
            image_array_size: 0,
            image_row_pitch: row_pitch,
            image_slice_pitch: slice_pitch,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: std::ptr::null_mut(),
        })
    }

    /// A plain OpenCL buffer or image of the request's size and format; with `host` (pointer and
    /// the subresource's layout) it uses that memory in place (`CL_MEM_USE_HOST_PTR`).
    pub fn create_plain(&self, host: Option<(*mut u8, interop::Layout)>) -> Result<cl_mem, cl_int> {
        use crate::cl::{check, down};
        let flags = self.flags
            | if host.is_some() {
                opencl_sys::CL_MEM_USE_HOST_PTR
            } else {
                0
            };
        let ptr = host.map_or(std::ptr::null_mut(), |(p, _)| p.cast::<std::ffi::c_void>());
        let mut err = 0;
        let mem = match (self.image, self.image_desc(host.map(|(_, l)| l))) {
            (Some((format, _)), Some(desc)) => {
                let create = down!(clCreateImage);
                // SAFETY: valid context, format and desc; with USE_HOST_PTR the subresource's
                // memory spans row_pitch * height (* depth slices) bytes per the runtime's layout,
                // valid while the resource lives (the memory object's entry holds a reference).
                unsafe { create(self.context, flags, &format, &desc, ptr, &mut err) }
            }
            _ => {
                let create = down!(clCreateBuffer);
                // SAFETY: valid context; with USE_HOST_PTR, ptr spans ByteWidth bytes of the
                // resource's memory, valid while the resource lives.
                unsafe { create(self.context, flags, self.extent.0 as usize, ptr, &mut err) }
            }
        };
        check(err)?;
        Ok(mem)
    }
}
