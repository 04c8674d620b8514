//! Resource descriptions in one shape for every resource kind and API, and their validation with
//! Direct3D 11's rules.
//!
//! The COM faces translate `D3D11_BUFFER_DESC` / `D3D11_TEXTURE*_DESC` (and later the D3D10 ones)
//! into a [`ResourceDesc`], call [`ResourceDesc::validate`], and turn [`DescError::Invalid`] into
//! `E_INVALIDARG` and [`DescError::Unsupported`] into `E_NOTIMPL`.

use super::flags::*;
use super::format::{format, multisample_quality_levels, Dimension, Format};

/// `D3D11_REQ_TEXTURE1D_U_DIMENSION`, `D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION`.
pub const MAX_TEXTURE_DIMENSION_2D: u32 = 16384;
/// `D3D11_REQ_TEXTURE1D_ARRAY_AXIS_DIMENSION`, `D3D11_REQ_TEXTURE2D_ARRAY_AXIS_DIMENSION`.
pub const MAX_TEXTURE_ARRAY_SIZE: u32 = 2048;
/// `D3D11_REQ_TEXTURE3D_U_V_OR_W_DIMENSION`.
pub const MAX_TEXTURE_DIMENSION_3D: u32 = 2048;
/// `D3D11_REQ_MIP_LEVELS`.
pub const MAX_MIP_LEVELS: u32 = 15;
/// `D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT` constants of 16 bytes.
pub const MAX_CONSTANT_BUFFER_BYTES: u32 = 4096 * 16;
/// `D3D11_REQ_RESOURCE_SIZE_IN_MEGABYTES_EXPRESSION_C_TERM`: no resource is larger than 2048 MiB.
pub const MAX_RESOURCE_BYTES: u64 = 2048 << 20;
/// `D3D11_REQ_MULTI_ELEMENT_STRUCTURE_SIZE_IN_BYTES`: the largest structure stride.
pub const MAX_STRUCTURE_STRIDE: u32 = 2048;

/// Why a description was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescError {
    /// Direct3D refuses it: `E_INVALIDARG`. The text names the rule.
    Invalid(&'static str),
    /// Valid for Direct3D but not implemented by this runtime: `E_NOTIMPL`.
    Unsupported(&'static str),
}

use DescError::{Invalid, Unsupported};

/// A resource description, common to buffers and 1D/2D/3D textures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceDesc {
    pub dimension: Dimension,
    /// Texels (`ByteWidth` for buffers).
    pub width: u32,
    /// 1 for buffers and 1D textures.
    pub height: u32,
    /// 1 except for 3D textures.
    pub depth: u32,
    /// 1 for buffers and 3D textures.
    pub array_size: u32,
    /// 0 asks for the full chain; after [`ResourceDesc::validate`] it is the real count.
    pub mip_levels: u32,
    /// `DXGI_FORMAT` value; 0 for buffers.
    pub format: u32,
    pub sample_count: u32,
    pub sample_quality: u32,
    pub usage: u32,
    pub bind: u32,
    pub cpu_access: u32,
    pub misc: u32,
    /// `StructureByteStride` of buffers.
    pub structure_stride: u32,
}

/// Levels of a full mip chain for a top level of this size: `1 + floor(log2(max dimension))`.
pub fn full_mip_chain(width: u32, height: u32, depth: u32) -> u32 {
    let largest = width.max(height).max(depth).max(1);
    32 - largest.leading_zeros()
}

/// `D3D11CalcSubresource`: `MipSlice + ArraySlice * MipLevels`.
pub fn calc_subresource(mip_slice: u32, array_slice: u32, mip_levels: u32) -> u32 {
    mip_slice + array_slice * mip_levels
}

impl ResourceDesc {
    /// A buffer description.
    pub fn buffer(
        byte_width: u32,
        usage: u32,
        bind: u32,
        cpu_access: u32,
        misc: u32,
        stride: u32,
    ) -> Self {
        ResourceDesc {
            dimension: Dimension::Buffer,
            width: byte_width,
            height: 1,
            depth: 1,
            array_size: 1,
            mip_levels: 1,
            format: 0,
            sample_count: 1,
            sample_quality: 0,
            usage,
            bind,
            cpu_access,
            misc,
            structure_stride: stride,
        }
    }

    /// Number of subresources (`mip_levels * array_size`); valid after [`ResourceDesc::validate`].
    pub fn subresource_count(&self) -> u32 {
        self.mip_levels * self.array_size
    }

    /// The format row of a texture; `None` for buffers.
    pub fn format_info(&self) -> Option<&'static Format> {
        match self.dimension {
            Dimension::Buffer => None,
            _ => format(self.format),
        }
    }

    /// Texel size of a mip level: `max(1, size >> mip)` in each dimension.
    pub fn mip_extent(&self, mip: u32) -> (u32, u32, u32) {
        if self.dimension == Dimension::Buffer {
            return (self.width, 1, 1);
        }
        let shrink = |v: u32| (v >> mip).max(1);
        (shrink(self.width), shrink(self.height), shrink(self.depth))
    }

    /// Checks the description with Direct3D 11's rules and resolves `mip_levels == 0`.
    /// `has_initial_data` says whether the application passed `pInitialData`.
    pub fn validate(&self, has_initial_data: bool) -> Result<ResourceDesc, DescError> {
        let mut d = *self;
        d.validate_usage(has_initial_data)?;
        match d.dimension {
            Dimension::Buffer => d.validate_buffer()?,
            _ => d.validate_texture()?,
        }
        Ok(d)
    }

    fn validate_usage(&self, has_initial_data: bool) -> Result<(), DescError> {
        if self.bind & !BIND_ALL != 0 {
            // D3D11_BIND_FLAG: only the defined bits may be set.
            return Err(Invalid("unknown bind flag"));
        }
        if self.cpu_access & !CPU_ACCESS_ALL != 0 {
            // D3D11_CPU_ACCESS_FLAG: only READ and WRITE exist.
            return Err(Invalid("unknown CPU access flag"));
        }
        if self.misc & !MISC_KNOWN != 0 {
            // Tiled, guarded, protected and restricted resources need features this adapter lacks.
            return Err(Invalid("unsupported misc flag"));
        }
        let gpu_write =
            BIND_STREAM_OUTPUT | BIND_RENDER_TARGET | BIND_DEPTH_STENCIL | BIND_UNORDERED_ACCESS;
        match self.usage {
            USAGE_DEFAULT => {
                if self.cpu_access != 0 {
                    // D3D11_USAGE_DEFAULT: "no CPU access" (mappable default buffers are a D3D11.2
                    // option this feature level 11_1 runtime does not offer).
                    return Err(Invalid("DEFAULT usage takes no CPU access"));
                }
            }
            USAGE_IMMUTABLE => {
                if !has_initial_data {
                    // D3D11_USAGE_IMMUTABLE: "cannot be created without initial data".
                    return Err(Invalid("IMMUTABLE usage needs initial data"));
                }
                if self.cpu_access != 0 || self.bind & gpu_write != 0 {
                    // D3D11_USAGE_IMMUTABLE: "can only be read by the GPU; cannot be accessed by the CPU".
                    return Err(Invalid(
                        "IMMUTABLE resources are read-only for the GPU and have no CPU access",
                    ));
                }
            }
            USAGE_DYNAMIC => {
                if self.cpu_access != CPU_ACCESS_WRITE {
                    // D3D11_USAGE_DYNAMIC: "accessible by the GPU (read only) and the CPU (write only)";
                    // CPUAccessFlags must be D3D11_CPU_ACCESS_WRITE.
                    return Err(Invalid(
                        "DYNAMIC usage needs CPU write access and no CPU read",
                    ));
                }
                if self.bind & gpu_write != 0 {
                    // D3D11_USAGE_DYNAMIC: the GPU only reads dynamic resources.
                    return Err(Invalid("DYNAMIC resources cannot be GPU outputs"));
                }
            }
            USAGE_STAGING => {
                if self.bind != 0 {
                    // D3D11_USAGE_STAGING: a staging resource cannot be bound to the pipeline.
                    return Err(Invalid("STAGING usage takes no bind flags"));
                }
                if self.cpu_access == 0 {
                    // D3D11_USAGE_STAGING: "supports data transfer (copy) from the GPU to the CPU";
                    // CPUAccessFlags must not be 0.
                    return Err(Invalid("STAGING usage needs CPU access"));
                }
            }
            // D3D11_USAGE: only the four values exist.
            _ => return Err(Invalid("unknown usage")),
        }
        if self.misc & MISC_SHARED_KEYEDMUTEX != 0 && self.misc & MISC_SHARED != 0 {
            // D3D11_RESOURCE_MISC_SHARED_KEYEDMUTEX: "cannot be used with D3D11_RESOURCE_MISC_SHARED".
            return Err(Invalid("SHARED and SHARED_KEYEDMUTEX are exclusive"));
        }
        if self.misc & (MISC_SHARED | MISC_SHARED_KEYEDMUTEX) != 0 && self.usage != USAGE_DEFAULT {
            // Shared resources are GPU resources: only D3D11_USAGE_DEFAULT can be shared.
            return Err(Invalid("shared resources need DEFAULT usage"));
        }
        if self.misc & MISC_SHARED_NTHANDLE != 0
            && self.misc & (MISC_SHARED | MISC_SHARED_KEYEDMUTEX) == 0
        {
            // D3D11_RESOURCE_MISC_SHARED_NTHANDLE: "must be combined with SHARED or SHARED_KEYEDMUTEX".
            return Err(Invalid("SHARED_NTHANDLE needs SHARED or SHARED_KEYEDMUTEX"));
        }
        if self.misc & (MISC_SHARED_KEYEDMUTEX | MISC_SHARED_NTHANDLE | MISC_GDI_COMPATIBLE) != 0 {
            // Keyed mutexes, NT handles and GDI surfaces need Windows kernel objects.
            return Err(Unsupported(
                "keyed-mutex, NT-handle and GDI-compatible resources",
            ));
        }
        Ok(())
    }

    fn validate_buffer(&mut self) -> Result<(), DescError> {
        if self.width == 0 {
            // CreateBuffer: "ByteWidth ... must be greater than zero".
            return Err(Invalid("ByteWidth is 0"));
        }
        if self.width as u64 > MAX_RESOURCE_BYTES {
            // D3D11_REQ_RESOURCE_SIZE_IN_MEGABYTES_EXPRESSION_C_TERM caps every resource.
            return Err(Invalid("buffer larger than the resource size limit"));
        }
        if self.misc & (MISC_GENERATE_MIPS | MISC_TEXTURECUBE) != 0 {
            // GENERATE_MIPS and TEXTURECUBE apply to textures only.
            return Err(Invalid("texture misc flag on a buffer"));
        }
        if self.bind & BIND_DEPTH_STENCIL != 0 {
            // A depth-stencil view needs a texture.
            return Err(Invalid("DEPTH_STENCIL bind on a buffer"));
        }
        if self.bind & BIND_CONSTANT_BUFFER != 0 {
            if self.bind != BIND_CONSTANT_BUFFER {
                // D3D11_BIND_CONSTANT_BUFFER: "cannot be combined with any other bind flags".
                return Err(Invalid(
                    "CONSTANT_BUFFER bind combined with another bind flag",
                ));
            }
            if !self.width.is_multiple_of(16) || self.width > MAX_CONSTANT_BUFFER_BYTES {
                // D3D11_BUFFER_DESC: constant buffers are a multiple of 16 bytes and at most
                // D3D11_REQ_CONSTANT_BUFFER_ELEMENT_COUNT * 16 bytes.
                return Err(Invalid(
                    "constant buffer size not a multiple of 16 or above 65536",
                ));
            }
        }
        let structured = self.misc & MISC_BUFFER_STRUCTURED != 0;
        if structured {
            let s = self.structure_stride;
            if s == 0
                || !s.is_multiple_of(4)
                || s > MAX_STRUCTURE_STRIDE
                || !self.width.is_multiple_of(s)
            {
                // D3D11_BUFFER_DESC: StructureByteStride of a structured buffer is a non-zero
                // multiple of 4, at most 2048, and divides ByteWidth.
                return Err(Invalid("bad StructureByteStride for a structured buffer"));
            }
            if self.misc & (MISC_BUFFER_ALLOW_RAW_VIEWS | MISC_DRAWINDIRECT_ARGS) != 0 {
                // BUFFER_STRUCTURED "cannot be specified with" ALLOW_RAW_VIEWS or DRAWINDIRECT_ARGS.
                return Err(Invalid("structured buffer with raw views or indirect args"));
            }
            if self.bind
                & (BIND_VERTEX_BUFFER
                    | BIND_INDEX_BUFFER
                    | BIND_CONSTANT_BUFFER
                    | BIND_STREAM_OUTPUT)
                != 0
            {
                // Structured buffers bind only as shader resources or unordered-access views.
                return Err(Invalid(
                    "structured buffer bound as a fixed-function buffer",
                ));
            }
        }
        Ok(())
    }

    fn validate_texture(&mut self) -> Result<(), DescError> {
        let dim = self.dimension;
        let fmt = match format(self.format) {
            Some(f) if f.allows_dimension(dim) => f,
            // A texture needs a format its dimension supports (DXGI_FORMAT_UNKNOWN never does).
            _ => return Err(Invalid("format not supported for this texture dimension")),
        };
        if self.misc
            & (MISC_BUFFER_ALLOW_RAW_VIEWS | MISC_BUFFER_STRUCTURED | MISC_DRAWINDIRECT_ARGS)
            != 0
        {
            // These misc flags apply to buffers only.
            return Err(Invalid("buffer misc flag on a texture"));
        }
        let (max_wh, max_array) = match dim {
            Dimension::Texture3D => (MAX_TEXTURE_DIMENSION_3D, 1),
            _ => (MAX_TEXTURE_DIMENSION_2D, MAX_TEXTURE_ARRAY_SIZE),
        };
        let (w, h, d) = (self.width, self.height, self.depth);
        if w == 0 || h == 0 || d == 0 || w > max_wh || h > max_wh || d > max_wh {
            // D3D11_TEXTURE*_DESC: every dimension is at least 1 and at most the
            // D3D11_REQ_TEXTURE*_DIMENSION limit.
            return Err(Invalid("texture dimension 0 or above the limit"));
        }
        if self.array_size == 0 || self.array_size > max_array {
            // D3D11_REQ_TEXTURE*_ARRAY_AXIS_DIMENSION: 1..=2048 slices.
            return Err(Invalid("ArraySize 0 or above 2048"));
        }
        let chain = full_mip_chain(w, h, d);
        if self.mip_levels == 0 {
            // MipLevels: "Use 0 to generate a full set of subtextures".
            self.mip_levels = chain;
        } else if self.mip_levels > chain || self.mip_levels > MAX_MIP_LEVELS {
            // A chain cannot go past the 1x1x1 level.
            return Err(Invalid("MipLevels above the chain length"));
        }
        let (bw, bh, _) = fmt.blocks().expect("allows_dimension implies storage");
        if w % bw != 0 || (dim != Dimension::Texture1D && h % bh != 0) {
            // D3D11: the top level of a block-compressed texture is a multiple of 4 texels in width
            // and height (of 2 in width for packed 4:2:2 formats).
            return Err(Invalid(
                "top level not a whole number of compression blocks",
            ));
        }
        if !fmt.allows_bind(self.bind) {
            // CheckFormatSupport: the format must support every requested bind flag.
            return Err(Invalid("format does not support the bind flags"));
        }
        if dim == Dimension::Texture3D && self.bind & BIND_DEPTH_STENCIL != 0 {
            // Depth-stencil views exist for 1D and 2D textures only.
            return Err(Invalid("DEPTH_STENCIL bind on a 3D texture"));
        }
        if self.bind
            & (BIND_VERTEX_BUFFER | BIND_INDEX_BUFFER | BIND_CONSTANT_BUFFER | BIND_STREAM_OUTPUT)
            != 0
        {
            // Vertex, index, constant and stream-output bindings are for buffers.
            return Err(Invalid("buffer bind flag on a texture"));
        }
        if self.misc & MISC_GENERATE_MIPS != 0
            && self.bind & (BIND_SHADER_RESOURCE | BIND_RENDER_TARGET)
                != (BIND_SHADER_RESOURCE | BIND_RENDER_TARGET)
        {
            // D3D11_RESOURCE_MISC_GENERATE_MIPS: "the resource must be created with the
            // D3D11_BIND_RENDER_TARGET and D3D11_BIND_SHADER_RESOURCE bind flags".
            return Err(Invalid(
                "GENERATE_MIPS needs SHADER_RESOURCE and RENDER_TARGET",
            ));
        }
        if self.misc & MISC_TEXTURECUBE != 0
            && (dim != Dimension::Texture2D || !self.array_size.is_multiple_of(6) || w != h)
        {
            // D3D11_RESOURCE_MISC_TEXTURECUBE: a 2D texture array of 6*n square faces.
            return Err(Invalid("TEXTURECUBE needs a 2D array of 6*n square slices"));
        }
        if self.usage == USAGE_DYNAMIC && (self.mip_levels != 1 || self.array_size != 1) {
            // D3D11_USAGE_DYNAMIC textures have one mip level and one array slice.
            return Err(Invalid("DYNAMIC texture with several mips or slices"));
        }
        self.validate_samples(fmt)
    }

    fn validate_samples(&self, fmt: &Format) -> Result<(), DescError> {
        let (count, quality) = (self.sample_count, self.sample_quality);
        if count == 1 {
            if quality != 0 {
                // DXGI_SAMPLE_DESC: a single-sampled resource has quality 0.
                return Err(Invalid("SampleDesc.Quality must be 0 with Count 1"));
            }
            return Ok(());
        }
        if self.dimension != Dimension::Texture2D {
            // Only 2D textures are multisampled.
            return Err(Invalid(
                "multisampling on a resource that is not a 2D texture",
            ));
        }
        if quality >= multisample_quality_levels(self.format, count) {
            // DXGI_SAMPLE_DESC: Quality is below CheckMultisampleQualityLevels(Format, Count); a
            // count the format does not support has 0 levels.
            return Err(Invalid(
                "sample count or quality not supported by the format",
            ));
        }
        if self.mip_levels != 1 {
            // Multisampled textures have one mip level.
            return Err(Invalid("multisampled texture with MipLevels != 1"));
        }
        if self.usage != USAGE_DEFAULT || self.cpu_access != 0 {
            // Multisampled resources live on the GPU only: DEFAULT usage, no CPU access.
            return Err(Invalid(
                "multisampled texture must be DEFAULT without CPU access",
            ));
        }
        if self.bind & (BIND_RENDER_TARGET | BIND_DEPTH_STENCIL) == 0
            || self.bind & BIND_UNORDERED_ACCESS != 0
        {
            // A multisampled texture is a render target or depth-stencil, never an unordered-access
            // resource.
            return Err(Invalid(
                "multisampled texture needs RENDER_TARGET or DEPTH_STENCIL bind",
            ));
        }
        if self.misc & MISC_GENERATE_MIPS != 0 || fmt.blocks().is_none() {
            // Mips cannot be generated for a single-level resource.
            return Err(Invalid("GENERATE_MIPS on a multisampled texture"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tex2d(w: u32, h: u32, mips: u32, array: u32, format: u32) -> ResourceDesc {
        ResourceDesc {
            dimension: Dimension::Texture2D,
            width: w,
            height: h,
            depth: 1,
            array_size: array,
            mip_levels: mips,
            format,
            sample_count: 1,
            sample_quality: 0,
            usage: USAGE_DEFAULT,
            bind: BIND_SHADER_RESOURCE,
            cpu_access: 0,
            misc: 0,
            structure_stride: 0,
        }
    }

    fn invalid(d: ResourceDesc, init: bool) {
        assert!(
            matches!(d.validate(init), Err(DescError::Invalid(_))),
            "{d:?}"
        );
    }

    #[test]
    fn mip_chain_and_subresources() {
        assert_eq!(full_mip_chain(1, 1, 1), 1);
        assert_eq!(full_mip_chain(256, 16, 1), 9);
        assert_eq!(full_mip_chain(5, 3, 1), 3);
        assert_eq!(full_mip_chain(16384, 1, 1), 15);
        let d = tex2d(64, 32, 0, 3, 28).validate(false).unwrap();
        assert_eq!(d.mip_levels, 7);
        assert_eq!(d.subresource_count(), 21);
        assert_eq!(d.mip_extent(6), (1, 1, 1));
        assert_eq!(d.mip_extent(1), (32, 16, 1));
        assert_eq!(calc_subresource(2, 1, 7), 9);
        invalid(tex2d(64, 32, 8, 1, 28), false);
    }

    #[test]
    fn usage_rules() {
        let mut d = tex2d(4, 4, 1, 1, 28);
        d.usage = USAGE_IMMUTABLE;
        invalid(d, false);
        assert!(d.validate(true).is_ok());
        d.cpu_access = CPU_ACCESS_READ;
        invalid(d, true);

        let mut d = tex2d(4, 4, 1, 1, 28);
        d.usage = USAGE_DYNAMIC;
        invalid(d, false);
        d.cpu_access = CPU_ACCESS_WRITE;
        assert!(d.validate(false).is_ok());
        d.cpu_access = CPU_ACCESS_ALL;
        invalid(d, false);
        d.cpu_access = CPU_ACCESS_WRITE;
        d.mip_levels = 2;
        invalid(d, false);
        d.mip_levels = 1;
        d.bind |= BIND_RENDER_TARGET;
        invalid(d, false);

        let mut d = tex2d(4, 4, 1, 1, 28);
        d.usage = USAGE_STAGING;
        d.cpu_access = CPU_ACCESS_READ;
        invalid(d, false);
        d.bind = 0;
        assert!(d.validate(false).is_ok());
        d.cpu_access = 0;
        invalid(d, false);

        let mut d = tex2d(4, 4, 1, 1, 28);
        d.cpu_access = CPU_ACCESS_WRITE;
        invalid(d, false);
        d.cpu_access = 0;
        d.usage = 4;
        invalid(d, false);
    }

    #[test]
    fn buffer_rules() {
        let ok = |d: ResourceDesc| d.validate(false).unwrap();
        ok(ResourceDesc::buffer(1, USAGE_DEFAULT, 0, 0, 0, 0));
        invalid(ResourceDesc::buffer(0, USAGE_DEFAULT, 0, 0, 0, 0), false);
        ok(ResourceDesc::buffer(
            64,
            USAGE_DYNAMIC,
            BIND_CONSTANT_BUFFER,
            CPU_ACCESS_WRITE,
            0,
            0,
        ));
        invalid(
            ResourceDesc::buffer(60, USAGE_DEFAULT, BIND_CONSTANT_BUFFER, 0, 0, 0),
            false,
        );
        invalid(
            ResourceDesc::buffer(65536 + 16, USAGE_DEFAULT, BIND_CONSTANT_BUFFER, 0, 0, 0),
            false,
        );
        invalid(
            ResourceDesc::buffer(
                64,
                USAGE_DEFAULT,
                BIND_CONSTANT_BUFFER | BIND_SHADER_RESOURCE,
                0,
                0,
                0,
            ),
            false,
        );
        ok(ResourceDesc::buffer(
            64,
            USAGE_DEFAULT,
            BIND_SHADER_RESOURCE,
            0,
            MISC_BUFFER_STRUCTURED,
            16,
        ));
        invalid(
            ResourceDesc::buffer(
                64,
                USAGE_DEFAULT,
                BIND_SHADER_RESOURCE,
                0,
                MISC_BUFFER_STRUCTURED,
                0,
            ),
            false,
        );
        invalid(
            ResourceDesc::buffer(
                60,
                USAGE_DEFAULT,
                BIND_SHADER_RESOURCE,
                0,
                MISC_BUFFER_STRUCTURED,
                16,
            ),
            false,
        );
        invalid(
            ResourceDesc::buffer(64, USAGE_DEFAULT, 0, 0, MISC_TEXTURECUBE, 0),
            false,
        );
        invalid(
            ResourceDesc::buffer(64, USAGE_DEFAULT, 0x800, 0, 0, 0),
            false,
        );
        assert_eq!(
            ResourceDesc::buffer(64, USAGE_DEFAULT, 0, 0, MISC_SHARED_KEYEDMUTEX, 0)
                .validate(false),
            Err(DescError::Unsupported(
                "keyed-mutex, NT-handle and GDI-compatible resources"
            ))
        );
        invalid(
            ResourceDesc::buffer(64, USAGE_STAGING, 0, CPU_ACCESS_READ, MISC_SHARED, 0),
            false,
        );
    }

    #[test]
    fn texture_rules() {
        invalid(tex2d(0, 4, 1, 1, 28), false);
        invalid(tex2d(16385, 4, 1, 1, 28), false);
        invalid(tex2d(4, 4, 1, 2049, 28), false);
        invalid(tex2d(4, 4, 1, 1, 0), false);
        invalid(tex2d(4, 4, 1, 1, 103), false); // NV12 is refused
                                                // BC: the top level is whole blocks; lower mips need not be.
        assert!(tex2d(8, 8, 0, 1, 71).validate(false).is_ok());
        invalid(tex2d(6, 8, 1, 1, 71), false);
        let mut d = tex2d(8, 8, 1, 1, 71);
        d.bind = BIND_RENDER_TARGET;
        invalid(d, false);
        // Cubes.
        let mut d = tex2d(8, 8, 1, 6, 28);
        d.misc = MISC_TEXTURECUBE;
        assert!(d.validate(false).is_ok());
        d.array_size = 7;
        invalid(d, false);
        d.array_size = 6;
        d.height = 4;
        invalid(d, false);
        // Depth.
        let mut d = tex2d(8, 8, 1, 1, 45);
        invalid(d, false);
        d.bind = BIND_DEPTH_STENCIL;
        assert!(d.validate(false).is_ok());
        d.format = 44;
        d.bind |= BIND_SHADER_RESOURCE;
        assert!(d.validate(false).is_ok());
        // 3D.
        let mut d = tex2d(8, 8, 0, 1, 28);
        d.dimension = Dimension::Texture3D;
        d.depth = 4;
        assert_eq!(d.validate(false).unwrap().mip_levels, 4);
        d.depth = 2049;
        invalid(d, false);
        // 1D has no BC.
        let mut d = tex2d(8, 1, 1, 1, 71);
        d.dimension = Dimension::Texture1D;
        invalid(d, false);
    }

    #[test]
    fn multisample_rules() {
        let mut d = tex2d(8, 8, 1, 1, 28);
        d.bind = BIND_RENDER_TARGET;
        d.sample_count = 4;
        assert!(d.validate(false).is_ok());
        d.sample_quality = 1;
        invalid(d, false);
        d.sample_quality = 0;
        d.sample_count = 3;
        invalid(d, false);
        d.sample_count = 4;
        d.mip_levels = 2;
        invalid(d, false);
        d.mip_levels = 1;
        d.bind = BIND_SHADER_RESOURCE;
        invalid(d, false);
        let mut d = tex2d(8, 8, 1, 1, 28);
        d.sample_quality = 1;
        invalid(d, false);
    }
}
