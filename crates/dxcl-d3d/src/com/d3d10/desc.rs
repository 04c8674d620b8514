//! D3D10 resource descriptions: translation to the runtime's [`ResourceDesc`] (D3D11 numbering)
//! and back, plus the rules where Direct3D 10 is stricter than the shared D3D11 validation.
//!
//! Usage, bind and CPU-access values are numerically the same in both APIs; D3D10 has fewer bind
//! bits, no structured buffers (no `StructureByteStride`), and numbers two misc flags differently
//! (`SHARED_KEYEDMUTEX` 0x10, `GDI_COMPATIBLE` 0x20 against D3D11's 0x100, 0x200).

use super::super::abi::*;
use super::super::desc::{self as desc11, Describes};
use crate::core::flags::*;
use crate::core::{Dimension, ResourceDesc, TexelBox};

/// Every `D3D10_BIND_FLAG` bit (VERTEX_BUFFER through DEPTH_STENCIL).
const D3D10_BIND_ALL: u32 = 0x7f;

/// `D3D10_RESOURCE_MISC_FLAG` bits and the D3D11 bits with the same meaning.
const MISC_PAIRS: [(u32, u32); 5] = [
    (D3D10_RESOURCE_MISC_GENERATE_MIPS as u32, MISC_GENERATE_MIPS),
    (D3D10_RESOURCE_MISC_SHARED as u32, MISC_SHARED),
    (D3D10_RESOURCE_MISC_TEXTURECUBE as u32, MISC_TEXTURECUBE),
    (
        D3D10_RESOURCE_MISC_SHARED_KEYEDMUTEX as u32,
        MISC_SHARED_KEYEDMUTEX,
    ),
    (
        D3D10_RESOURCE_MISC_GDI_COMPATIBLE as u32,
        MISC_GDI_COMPATIBLE,
    ),
];

/// `D3D10_REQ_TEXTURE1D_U_DIMENSION`, `D3D10_REQ_TEXTURE2D_U_OR_V_DIMENSION`.
const MAX_DIMENSION_2D: u32 = 8192;
/// `D3D10_REQ_TEXTURE1D/2D_ARRAY_AXIS_DIMENSION`.
const MAX_ARRAY_SIZE: u32 = 512;
/// `D3D10_REQ_TEXTURE3D_U_V_OR_W_DIMENSION`.
const MAX_DIMENSION_3D: u32 = 2048;

/// Every `D3D10_FORMAT_SUPPORT` bit (BUFFER through BACK_BUFFER_CAST); D3D11's higher bits
/// (typed UAVs, video) do not exist in D3D10.
pub const D3D10_FORMAT_SUPPORT_ALL: u32 = 0x1ff_ffff;

/// D3D10 misc flags in D3D11 numbering.
pub fn misc_from_d3d10(misc: u32) -> Result<u32, HRESULT> {
    let known = MISC_PAIRS.iter().fold(0, |a, &(m10, _)| a | m10);
    if misc & !known != 0 {
        // D3D10_RESOURCE_MISC_FLAG: only the defined bits may be set (D3D11-only flags such as
        // BUFFER_STRUCTURED do not exist in D3D10).
        return Err(E_INVALIDARG);
    }
    Ok(MISC_PAIRS
        .iter()
        .filter(|&&(m10, _)| misc & m10 != 0)
        .fold(0, |a, &(_, m11)| a | m11))
}

/// D3D11-numbered misc flags of a D3D10 resource back in D3D10 numbering (for `GetDesc`).
pub fn misc_to_d3d10(misc: u32) -> u32 {
    MISC_PAIRS
        .iter()
        .filter(|&&(_, m11)| misc & m11 != 0)
        .fold(0, |a, &(m10, _)| a | m10)
}

/// Whether a D3D10 device can use a format at all. `DXGI_FORMAT_B5G6R5_UNORM` and
/// `B5G5R5A1_UNORM` are "not supported by Direct3D 10, 10.1 or 11 devices"; BC6H and BC7 need
/// feature level 11_0; the video and 4-bit formats after them are Direct3D 11.1 additions.
pub fn format_allowed(format: u32) -> bool {
    let b5g6r5 = DXGI_FORMAT_B5G6R5_UNORM as u32;
    let b5g5r5a1 = DXGI_FORMAT_B5G5R5A1_UNORM as u32;
    format != b5g6r5 && format != b5g5r5a1 && format < DXGI_FORMAT_BC6H_TYPELESS as u32
}

/// Checks what Direct3D 10 refuses beyond the shared (D3D11) validation: bind bits D3D10 does not
/// define, formats a D3D10 device lacks, the feature level 10 size limits, and cube arrays below
/// feature level 10_1.
pub fn check(desc: &ResourceDesc, level: D3D_FEATURE_LEVEL) -> Result<(), HRESULT> {
    if desc.bind & !D3D10_BIND_ALL != 0 {
        // D3D10_BIND_FLAG: only the defined bits (no unordered access in Direct3D 10).
        return Err(E_INVALIDARG);
    }
    if desc.dimension == Dimension::Buffer {
        return Ok(());
    }
    if !format_allowed(desc.format) {
        // CreateTexture*: the format must be one the device supports (CheckFormatSupport).
        return Err(E_INVALIDARG);
    }
    let (max_wh, max_array) = match desc.dimension {
        Dimension::Texture3D => (MAX_DIMENSION_3D, 1),
        _ => (MAX_DIMENSION_2D, MAX_ARRAY_SIZE),
    };
    if desc.width > max_wh || desc.height > max_wh || desc.depth > max_wh {
        // D3D10_REQ_TEXTURE*_DIMENSION: 8192 texels for 1D/2D textures, 2048 for 3D textures.
        return Err(E_INVALIDARG);
    }
    if desc.array_size > max_array {
        // D3D10_REQ_TEXTURE*_ARRAY_AXIS_DIMENSION: at most 512 array slices.
        return Err(E_INVALIDARG);
    }
    if desc.misc & MISC_TEXTURECUBE != 0 && desc.array_size != 6 && level < D3D_FEATURE_LEVEL_10_1 {
        // D3D10_TEXTURE2D_DESC: a Direct3D 10.0 cube texture has ArraySize 6; arrays of cubes
        // need Direct3D 10.1.
        return Err(E_INVALIDARG);
    }
    Ok(())
}

/// The D3D11 description with a D3D10 one's members (misc flags renumbered), and back; the
/// runtime description a D3D10 one stands for (through D3D11's). Buffers: D3D10 has no structured
/// buffers (`StructureByteStride` 0).
macro_rules! to_and_from_d3d11 {
    ($to11:ident, $to10:ident: $d10:ident, $d11:ident { $($m:ident),* } $(, $n:ident: $v:expr)?) => {
        #[doc = concat!("A `", stringify!($d10), "` as the `", stringify!($d11), "` it stands for.")]
        pub fn $to11(d: &$d10) -> Result<$d11, HRESULT> {
            Ok(same_members!(d => $d11 { $($m),* }, MiscFlags: misc_from_d3d10(d.MiscFlags)? $(, $n: $v)?))
        }
        #[doc = concat!("A `", stringify!($d11), "` of a D3D10 resource as its `", stringify!($d10), "`.")]
        pub fn $to10(d: $d11) -> $d10 {
            same_members!(d => $d10 { $($m),* }, MiscFlags: misc_to_d3d10(d.MiscFlags))
        }
        impl Describes for $d10 {
            fn resource_desc(&self) -> Result<ResourceDesc, HRESULT> {
                $to11(self)?.resource_desc()
            }
        }
    };
}

to_and_from_d3d11!(buffer_to_d3d11, buffer_to_d3d10: D3D10_BUFFER_DESC, D3D11_BUFFER_DESC {
    ByteWidth, Usage, BindFlags, CPUAccessFlags
}, StructureByteStride: 0);
to_and_from_d3d11!(texture1d_to_d3d11, texture1d_to_d3d10: D3D10_TEXTURE1D_DESC, D3D11_TEXTURE1D_DESC {
    Width, MipLevels, ArraySize, Format, Usage, BindFlags, CPUAccessFlags
});
to_and_from_d3d11!(texture2d_to_d3d11, texture2d_to_d3d10: D3D10_TEXTURE2D_DESC, D3D11_TEXTURE2D_DESC {
    Width, Height, MipLevels, ArraySize, Format, SampleDesc, Usage, BindFlags, CPUAccessFlags
});
to_and_from_d3d11!(texture3d_to_d3d11, texture3d_to_d3d10: D3D10_TEXTURE3D_DESC, D3D11_TEXTURE3D_DESC {
    Width, Height, Depth, MipLevels, Format, Usage, BindFlags, CPUAccessFlags
});

/// A `D3D10_BOX` as the runtime's box (through the `D3D11_BOX` with its members).
pub fn texel_box(b: &D3D10_BOX) -> TexelBox {
    desc11::texel_box(&same_members!(b => D3D11_BOX { left, top, front, right, bottom, back }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misc_flags_round_trip_and_unknown_bits_fail() {
        let all10 = 0x1 | 0x2 | 0x4 | 0x10 | 0x20;
        let m11 = misc_from_d3d10(all10).unwrap();
        assert_eq!(
            m11,
            MISC_GENERATE_MIPS
                | MISC_SHARED
                | MISC_TEXTURECUBE
                | MISC_SHARED_KEYEDMUTEX
                | MISC_GDI_COMPATIBLE
        );
        assert_eq!(misc_to_d3d10(m11), all10);
        // 0x40 is D3D11's BUFFER_STRUCTURED; 0x8 is undefined in D3D10.
        assert_eq!(misc_from_d3d10(0x40), Err(E_INVALIDARG));
        assert_eq!(misc_from_d3d10(0x8), Err(E_INVALIDARG));
    }

    #[test]
    fn d3d10_limits() {
        let t = |w, a, misc| ResourceDesc {
            misc,
            ..(D3D10_TEXTURE2D_DESC {
                Width: w,
                Height: w,
                MipLevels: 1,
                ArraySize: a,
                Format: DXGI_FORMAT_R8G8B8A8_UNORM,
                SampleDesc: DXGI_SAMPLE_DESC {
                    Count: 1,
                    Quality: 0,
                },
                Usage: D3D10_USAGE_DEFAULT,
                BindFlags: 0,
                CPUAccessFlags: 0,
                MiscFlags: 0,
            })
            .resource_desc()
            .unwrap()
        };
        let l10 = D3D_FEATURE_LEVEL_10_0;
        assert_eq!(check(&t(8192, 512, 0), l10), Ok(()));
        assert_eq!(check(&t(8193, 1, 0), l10), Err(E_INVALIDARG));
        assert_eq!(check(&t(16, 513, 0), l10), Err(E_INVALIDARG));
        assert_eq!(check(&t(16, 6, MISC_TEXTURECUBE), l10), Ok(()));
        assert_eq!(check(&t(16, 12, MISC_TEXTURECUBE), l10), Err(E_INVALIDARG));
        assert_eq!(
            check(&t(16, 12, MISC_TEXTURECUBE), D3D_FEATURE_LEVEL_10_1),
            Ok(())
        );
        let uav = ResourceDesc {
            bind: BIND_UNORDERED_ACCESS,
            ..t(16, 1, 0)
        };
        assert_eq!(check(&uav, l10), Err(E_INVALIDARG));
        let bc7 = ResourceDesc {
            format: DXGI_FORMAT_BC7_UNORM as u32,
            ..t(16, 1, 0)
        };
        assert_eq!(check(&bc7, l10), Err(E_INVALIDARG));
    }
}
