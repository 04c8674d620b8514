//! The DXGI format table: storage facts (block size and bytes per block) and the coarse capability
//! facts the runtime needs to validate descriptions and answer `CheckFormatSupport`.
//!
//! One row per `DXGI_FORMAT` value from 0 to 115; everything else about formats is derived from it.
//! Capabilities are deliberately coarse (see [`Format::allows_bind`]); they describe what this
//! runtime creates, not everything a hardware driver could offer.

use super::flags::*;

/// How a format stores its texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Cannot be stored in a resource by this runtime (`UNKNOWN`, `R1_UNORM`, palettised and planar
    /// video formats). Planar formats (NV12, P010, ...) are refused: each plane would need its own
    /// pitch and view rules, and the sharing extensions have no planar entries.
    None,
    /// `w` x `h` texels per block of `bytes` bytes: 1x1 for plain formats, 4x4 for BC1-BC7, 2x1 for
    /// the packed 4:2:2 formats (`R8G8_B8G8`, `YUY2`, `Y210`, ...).
    Blocks { w: u32, h: u32, bytes: u32 },
}

/// Property bits of a row of the table.
pub mod props {
    pub const TYPELESS: u16 = 1 << 0;
    /// A depth(-stencil) format that a depth-stencil view uses (D32, D24S8, D16, D32S8X24).
    pub const DEPTH: u16 = 1 << 1;
    /// A member of a depth format's family (its typeless parent or its read views).
    pub const DEPTH_FAMILY: u16 = 1 << 2;
    pub const SRGB: u16 = 1 << 3;
    pub const VIDEO: u16 = 1 << 4;
    pub const BC: u16 = 1 << 5;
    /// Can be rendered to (and so multisampled, and cleared) by a hardware driver.
    pub const RENDERABLE: u16 = 1 << 6;
    /// Can back an unordered-access view.
    pub const UAV: u16 = 1 << 7;
    /// Only Texture2D may use it (packed 4:2:2, video).
    pub const TEX2D_ONLY: u16 = 1 << 8;
}

/// One row of the format table.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    pub value: u32,
    pub name: &'static str,
    pub storage: Storage,
    /// The typeless format of this format's cast family (itself when it has no family).
    pub family: u32,
    pub props: u16,
}

use props::*;
use Storage::{Blocks, None as NoStorage};

const fn b(bytes: u32) -> Storage {
    Blocks { w: 1, h: 1, bytes }
}
const fn bc(bytes: u32) -> Storage {
    Blocks { w: 4, h: 4, bytes }
}
const fn p422(bytes: u32) -> Storage {
    Blocks { w: 2, h: 1, bytes }
}
const fn row(value: u32, name: &'static str, storage: Storage, family: u32, props: u16) -> Format {
    Format {
        value,
        name,
        storage,
        family,
        props,
    }
}

const R: u16 = RENDERABLE | UAV;
const RS: u16 = RENDERABLE | SRGB;

/// Rows indexed by `DXGI_FORMAT` value (row `i` has `value == i`; a test checks it).
pub static FORMATS: [Format; 116] = [
    row(0, "UNKNOWN", NoStorage, 0, 0),
    row(1, "R32G32B32A32_TYPELESS", b(16), 1, TYPELESS | R),
    row(2, "R32G32B32A32_FLOAT", b(16), 1, R),
    row(3, "R32G32B32A32_UINT", b(16), 1, R),
    row(4, "R32G32B32A32_SINT", b(16), 1, R),
    row(5, "R32G32B32_TYPELESS", b(12), 5, TYPELESS),
    row(6, "R32G32B32_FLOAT", b(12), 5, 0),
    row(7, "R32G32B32_UINT", b(12), 5, 0),
    row(8, "R32G32B32_SINT", b(12), 5, 0),
    row(9, "R16G16B16A16_TYPELESS", b(8), 9, TYPELESS | R),
    row(10, "R16G16B16A16_FLOAT", b(8), 9, R),
    row(11, "R16G16B16A16_UNORM", b(8), 9, R),
    row(12, "R16G16B16A16_UINT", b(8), 9, R),
    row(13, "R16G16B16A16_SNORM", b(8), 9, R),
    row(14, "R16G16B16A16_SINT", b(8), 9, R),
    row(15, "R32G32_TYPELESS", b(8), 15, TYPELESS | R),
    row(16, "R32G32_FLOAT", b(8), 15, R),
    row(17, "R32G32_UINT", b(8), 15, R),
    row(18, "R32G32_SINT", b(8), 15, R),
    row(19, "R32G8X24_TYPELESS", b(8), 19, TYPELESS | DEPTH_FAMILY),
    row(20, "D32_FLOAT_S8X24_UINT", b(8), 19, DEPTH | DEPTH_FAMILY),
    row(21, "R32_FLOAT_X8X24_TYPELESS", b(8), 19, DEPTH_FAMILY),
    row(22, "X32_TYPELESS_G8X24_UINT", b(8), 19, DEPTH_FAMILY),
    row(23, "R10G10B10A2_TYPELESS", b(4), 23, TYPELESS | R),
    row(24, "R10G10B10A2_UNORM", b(4), 23, R),
    row(25, "R10G10B10A2_UINT", b(4), 23, R),
    row(26, "R11G11B10_FLOAT", b(4), 26, R),
    row(27, "R8G8B8A8_TYPELESS", b(4), 27, TYPELESS | R),
    row(28, "R8G8B8A8_UNORM", b(4), 27, R),
    row(29, "R8G8B8A8_UNORM_SRGB", b(4), 27, RS),
    row(30, "R8G8B8A8_UINT", b(4), 27, R),
    row(31, "R8G8B8A8_SNORM", b(4), 27, R),
    row(32, "R8G8B8A8_SINT", b(4), 27, R),
    row(33, "R16G16_TYPELESS", b(4), 33, TYPELESS | R),
    row(34, "R16G16_FLOAT", b(4), 33, R),
    row(35, "R16G16_UNORM", b(4), 33, R),
    row(36, "R16G16_UINT", b(4), 33, R),
    row(37, "R16G16_SNORM", b(4), 33, R),
    row(38, "R16G16_SINT", b(4), 33, R),
    row(39, "R32_TYPELESS", b(4), 39, TYPELESS | R | DEPTH_FAMILY),
    row(40, "D32_FLOAT", b(4), 39, DEPTH | DEPTH_FAMILY),
    row(41, "R32_FLOAT", b(4), 39, R),
    row(42, "R32_UINT", b(4), 39, R),
    row(43, "R32_SINT", b(4), 39, R),
    row(44, "R24G8_TYPELESS", b(4), 44, TYPELESS | DEPTH_FAMILY),
    row(45, "D24_UNORM_S8_UINT", b(4), 44, DEPTH | DEPTH_FAMILY),
    row(46, "R24_UNORM_X8_TYPELESS", b(4), 44, DEPTH_FAMILY),
    row(47, "X24_TYPELESS_G8_UINT", b(4), 44, DEPTH_FAMILY),
    row(48, "R8G8_TYPELESS", b(2), 48, TYPELESS | R),
    row(49, "R8G8_UNORM", b(2), 48, R),
    row(50, "R8G8_UINT", b(2), 48, R),
    row(51, "R8G8_SNORM", b(2), 48, R),
    row(52, "R8G8_SINT", b(2), 48, R),
    row(53, "R16_TYPELESS", b(2), 53, TYPELESS | R | DEPTH_FAMILY),
    row(54, "R16_FLOAT", b(2), 53, R),
    row(55, "D16_UNORM", b(2), 53, DEPTH | DEPTH_FAMILY),
    row(56, "R16_UNORM", b(2), 53, R),
    row(57, "R16_UINT", b(2), 53, R),
    row(58, "R16_SNORM", b(2), 53, R),
    row(59, "R16_SINT", b(2), 53, R),
    row(60, "R8_TYPELESS", b(1), 60, TYPELESS | R),
    row(61, "R8_UNORM", b(1), 60, R),
    row(62, "R8_UINT", b(1), 60, R),
    row(63, "R8_SNORM", b(1), 60, R),
    row(64, "R8_SINT", b(1), 60, R),
    row(65, "A8_UNORM", b(1), 65, R),
    // One bit per texel: no Direct3D 11 resource can use it.
    row(66, "R1_UNORM", NoStorage, 66, 0),
    row(67, "R9G9B9E5_SHAREDEXP", b(4), 67, 0),
    row(68, "R8G8_B8G8_UNORM", p422(4), 68, TEX2D_ONLY),
    row(69, "G8R8_G8B8_UNORM", p422(4), 69, TEX2D_ONLY),
    row(70, "BC1_TYPELESS", bc(8), 70, TYPELESS | BC),
    row(71, "BC1_UNORM", bc(8), 70, BC),
    row(72, "BC1_UNORM_SRGB", bc(8), 70, BC | SRGB),
    row(73, "BC2_TYPELESS", bc(16), 73, TYPELESS | BC),
    row(74, "BC2_UNORM", bc(16), 73, BC),
    row(75, "BC2_UNORM_SRGB", bc(16), 73, BC | SRGB),
    row(76, "BC3_TYPELESS", bc(16), 76, TYPELESS | BC),
    row(77, "BC3_UNORM", bc(16), 76, BC),
    row(78, "BC3_UNORM_SRGB", bc(16), 76, BC | SRGB),
    row(79, "BC4_TYPELESS", bc(8), 79, TYPELESS | BC),
    row(80, "BC4_UNORM", bc(8), 79, BC),
    row(81, "BC4_SNORM", bc(8), 79, BC),
    row(82, "BC5_TYPELESS", bc(16), 82, TYPELESS | BC),
    row(83, "BC5_UNORM", bc(16), 82, BC),
    row(84, "BC5_SNORM", bc(16), 82, BC),
    row(85, "B5G6R5_UNORM", b(2), 85, RENDERABLE),
    row(86, "B5G5R5A1_UNORM", b(2), 86, RENDERABLE),
    row(87, "B8G8R8A8_UNORM", b(4), 90, RENDERABLE),
    row(88, "B8G8R8X8_UNORM", b(4), 92, RENDERABLE),
    row(89, "R10G10B10_XR_BIAS_A2_UNORM", b(4), 89, RENDERABLE),
    row(90, "B8G8R8A8_TYPELESS", b(4), 90, TYPELESS | RENDERABLE),
    row(91, "B8G8R8A8_UNORM_SRGB", b(4), 90, RS),
    row(92, "B8G8R8X8_TYPELESS", b(4), 92, TYPELESS | RENDERABLE),
    row(93, "B8G8R8X8_UNORM_SRGB", b(4), 92, RS),
    row(94, "BC6H_TYPELESS", bc(16), 94, TYPELESS | BC),
    row(95, "BC6H_UF16", bc(16), 94, BC),
    row(96, "BC6H_SF16", bc(16), 94, BC),
    row(97, "BC7_TYPELESS", bc(16), 97, TYPELESS | BC),
    row(98, "BC7_UNORM", bc(16), 97, BC),
    row(99, "BC7_UNORM_SRGB", bc(16), 97, BC | SRGB),
    row(100, "AYUV", b(4), 100, VIDEO | TEX2D_ONLY | RENDERABLE),
    row(101, "Y410", b(4), 101, VIDEO | TEX2D_ONLY),
    row(102, "Y416", b(8), 102, VIDEO | TEX2D_ONLY),
    row(103, "NV12", NoStorage, 103, VIDEO),
    row(104, "P010", NoStorage, 104, VIDEO),
    row(105, "P016", NoStorage, 105, VIDEO),
    row(106, "420_OPAQUE", NoStorage, 106, VIDEO),
    row(107, "YUY2", p422(4), 107, VIDEO | TEX2D_ONLY),
    row(108, "Y210", p422(8), 108, VIDEO | TEX2D_ONLY),
    row(109, "Y216", p422(8), 109, VIDEO | TEX2D_ONLY),
    row(110, "NV11", NoStorage, 110, VIDEO),
    row(111, "AI44", NoStorage, 111, VIDEO),
    row(112, "IA44", NoStorage, 112, VIDEO),
    row(113, "P8", NoStorage, 113, VIDEO),
    row(114, "A8P8", NoStorage, 114, VIDEO),
    row(115, "B4G4R4A4_UNORM", b(2), 115, 0),
];

/// The row of a `DXGI_FORMAT` value, or `None` for a value this table does not know.
pub fn format(value: u32) -> Option<&'static Format> {
    FORMATS.get(value as usize)
}

/// Which kind of resource a format is checked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    Buffer,
    Texture1D,
    Texture2D,
    Texture3D,
}

impl Format {
    fn has(&self, p: u16) -> bool {
        self.props & p != 0
    }
    pub fn is_typeless(&self) -> bool {
        self.has(TYPELESS)
    }
    /// A format a depth-stencil view can use (D32, D24S8, D16, D32S8X24).
    pub fn is_depth_stencil(&self) -> bool {
        self.has(DEPTH)
    }
    pub fn is_srgb(&self) -> bool {
        self.has(SRGB)
    }
    pub fn is_video(&self) -> bool {
        self.has(VIDEO)
    }
    pub fn is_block_compressed(&self) -> bool {
        self.has(BC)
    }
    /// Texels per block horizontally and vertically, and bytes per block; `None` when the runtime
    /// cannot store the format.
    pub fn blocks(&self) -> Option<(u32, u32, u32)> {
        match self.storage {
            Storage::Blocks { w, h, bytes } => Some((w, h, bytes)),
            Storage::None => None,
        }
    }
    /// Bits per texel for uncompressed formats (bytes per block * 8 / texels per block).
    pub fn bits_per_texel(&self) -> Option<u32> {
        self.blocks().map(|(w, h, bytes)| bytes * 8 / (w * h))
    }

    /// Whether a resource of this dimension may use the format.
    pub fn allows_dimension(&self, dim: Dimension) -> bool {
        if self.blocks().is_none() {
            return false;
        }
        match dim {
            // Buffers carry no format; typed views on buffers are out of scope.
            Dimension::Buffer => false,
            // D3D11: block-compressed and packed formats need two dimensions.
            Dimension::Texture1D => !self.has(BC | TEX2D_ONLY),
            Dimension::Texture2D => true,
            // D3D11: depth-stencil and video formats are 2D only (and 1D for depth).
            Dimension::Texture3D => !self.has(TEX2D_ONLY | DEPTH | DEPTH_FAMILY),
        }
    }

    /// Coarse bind-flag support (D3D11 bind bits) for a texture of this format:
    /// - depth formats: only `DEPTH_STENCIL` (a shader reads them through a typeless resource);
    /// - depth families' typeless and view formats: `DEPTH_STENCIL` (typeless) and `SHADER_RESOURCE`;
    /// - block-compressed: `SHADER_RESOURCE` only;
    /// - `RENDERABLE` rows add `RENDER_TARGET`; `UAV` rows (not sRGB) add `UNORDERED_ACCESS`;
    /// - video formats add `DECODER`/`VIDEO_ENCODER`.
    pub fn allowed_bind(&self) -> u32 {
        if self.blocks().is_none() {
            return 0;
        }
        if self.has(DEPTH) {
            return BIND_DEPTH_STENCIL;
        }
        let mut bind = BIND_SHADER_RESOURCE;
        if self.has(DEPTH_FAMILY) && self.has(TYPELESS) {
            bind |= BIND_DEPTH_STENCIL;
        }
        if self.has(RENDERABLE) {
            bind |= BIND_RENDER_TARGET;
        }
        if self.has(UAV) && !self.has(SRGB) {
            bind |= BIND_UNORDERED_ACCESS;
        }
        if self.has(VIDEO) {
            bind |= BIND_DECODER | BIND_VIDEO_ENCODER;
        }
        bind
    }

    /// Whether a bind set is allowed for a texture of this format.
    pub fn allows_bind(&self, bind: u32) -> bool {
        bind & !self.allowed_bind() == 0
    }

    /// Whether multisampled textures of this format exist: formats that can be rendered to or be a
    /// depth-stencil target, except video formats. Counts 2, 4 and 8 have one quality level each.
    pub fn allows_multisample(&self) -> bool {
        self.blocks().is_some()
            && !self.has(VIDEO | BC)
            && (self.has(RENDERABLE)
                || self.has(DEPTH)
                || (self.has(DEPTH_FAMILY) && self.has(TYPELESS)))
    }

    /// D3D11 copy compatibility: both formats are in the same cast family ("CopyResource: must have
    /// compatible DXGI formats, which means the formats must be identical or at least from the same
    /// type group").
    pub fn copy_compatible(&self, other: &Format) -> bool {
        self.value == other.value || self.family == other.family
    }
}

/// The sample counts this runtime accepts for multisampled textures.
pub const MSAA_COUNTS: [u32; 3] = [2, 4, 8];

/// Quality levels for a format at a sample count (0 means unsupported), as
/// `CheckMultisampleQualityLevels` reports them.
pub fn multisample_quality_levels(value: u32, count: u32) -> u32 {
    match format(value) {
        Some(f) if count == 1 && f.blocks().is_some() => 1,
        Some(f) if MSAA_COUNTS.contains(&count) && f.allows_multisample() => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_indexed_by_value() {
        for (i, f) in FORMATS.iter().enumerate() {
            assert_eq!(f.value as usize, i, "{}", f.name);
            // Each family head is a row of the same storage.
            let head = format(f.family).unwrap();
            if f.blocks().is_some() {
                assert_eq!(head.blocks(), f.blocks(), "{} family {}", f.name, head.name);
            }
        }
    }

    #[test]
    fn storage_facts() {
        assert_eq!(format(2).unwrap().bits_per_texel(), Some(128));
        assert_eq!(format(6).unwrap().bits_per_texel(), Some(96));
        assert_eq!(format(28).unwrap().blocks(), Some((1, 1, 4)));
        assert_eq!(format(71).unwrap().blocks(), Some((4, 4, 8)));
        assert_eq!(format(98).unwrap().blocks(), Some((4, 4, 16)));
        assert_eq!(format(107).unwrap().blocks(), Some((2, 1, 4)));
        assert_eq!(format(71).unwrap().bits_per_texel(), Some(4));
        assert!(format(103).unwrap().blocks().is_none());
        assert!(format(0).unwrap().blocks().is_none());
        assert!(format(116).is_none());
    }

    #[test]
    fn properties() {
        assert!(format(27).unwrap().is_typeless());
        assert!(format(29).unwrap().is_srgb());
        assert!(format(45).unwrap().is_depth_stencil());
        assert!(!format(44).unwrap().is_depth_stencil());
        assert!(format(103).unwrap().is_video());
        assert!(format(77).unwrap().is_block_compressed());
        // D24S8 cannot be sampled directly; its typeless parent can be both.
        assert!(!format(45).unwrap().allows_bind(BIND_SHADER_RESOURCE));
        assert!(format(44)
            .unwrap()
            .allows_bind(BIND_SHADER_RESOURCE | BIND_DEPTH_STENCIL));
        assert!(!format(77).unwrap().allows_bind(BIND_RENDER_TARGET));
        assert!(!format(29).unwrap().allows_bind(BIND_UNORDERED_ACCESS));
        assert!(format(28)
            .unwrap()
            .allows_bind(BIND_RENDER_TARGET | BIND_UNORDERED_ACCESS));
        assert!(!format(71).unwrap().allows_dimension(Dimension::Texture1D));
        assert!(format(71).unwrap().allows_dimension(Dimension::Texture3D));
        assert!(!format(45).unwrap().allows_dimension(Dimension::Texture3D));
    }

    #[test]
    fn copy_families() {
        let f = |v| format(v).unwrap();
        assert!(f(28).copy_compatible(f(29)));
        assert!(f(28).copy_compatible(f(27)));
        assert!(!f(28).copy_compatible(f(87)));
        assert!(f(40).copy_compatible(f(41)));
    }

    #[test]
    fn msaa_levels() {
        assert_eq!(multisample_quality_levels(28, 4), 1);
        assert_eq!(multisample_quality_levels(28, 1), 1);
        assert_eq!(multisample_quality_levels(28, 3), 0);
        assert_eq!(multisample_quality_levels(28, 16), 0);
        assert_eq!(multisample_quality_levels(77, 4), 0);
        assert_eq!(multisample_quality_levels(45, 8), 1);
    }
}
