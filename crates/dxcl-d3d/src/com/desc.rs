//! D3D11 resource descriptions: to the runtime's [`ResourceDesc`] (for `Create*`) and back (for
//! `GetDesc`). The D3D10 faces go through these too, translating their own descriptions to and
//! from D3D11's (`d3d10::desc`).

use super::abi::*;
use crate::core::{Dimension, ResourceDesc, TexelBox};

/// A description `Create*` takes (either API's): the runtime description it stands for.
pub trait Describes {
    /// `Err`: a value the API does not define.
    fn resource_desc(&self) -> Result<ResourceDesc, HRESULT>;
}

/// [`Describes`] of a D3D11 description: its translation, which cannot fail.
macro_rules! describes {
    ($($t:ident: $f:ident),*) => {
        $(impl Describes for $t {
            fn resource_desc(&self) -> Result<ResourceDesc, HRESULT> {
                Ok($f(self))
            }
        })*
    };
}

describes!(
    D3D11_BUFFER_DESC: buffer,
    D3D11_TEXTURE1D_DESC: texture1d,
    D3D11_TEXTURE2D_DESC: texture2d,
    D3D11_TEXTURE3D_DESC: texture3d
);

/// A `D3D11_BUFFER_DESC` as a runtime description.
pub fn buffer(d: &D3D11_BUFFER_DESC) -> ResourceDesc {
    ResourceDesc::buffer(
        d.ByteWidth,
        d.Usage as u32,
        d.BindFlags,
        d.CPUAccessFlags,
        d.MiscFlags,
        d.StructureByteStride,
    )
}

/// The members every texture description has, and the dimension's own extent and samples.
#[allow(clippy::too_many_arguments)] // The members of a texture description.
fn texture(
    dimension: Dimension,
    (width, height, depth): (u32, u32, u32),
    mip_levels: u32,
    array_size: u32,
    format: DXGI_FORMAT,
    samples: DXGI_SAMPLE_DESC,
    usage: D3D11_USAGE,
    (bind, cpu_access, misc): (u32, u32, u32),
) -> ResourceDesc {
    ResourceDesc {
        dimension,
        width,
        height,
        depth,
        array_size,
        mip_levels,
        format: format as u32,
        sample_count: samples.Count,
        sample_quality: samples.Quality,
        usage: usage as u32,
        bind,
        cpu_access,
        misc,
        structure_stride: 0,
    }
}

/// One sample: the textures whose descriptions have no `SampleDesc`.
const SINGLE: DXGI_SAMPLE_DESC = DXGI_SAMPLE_DESC {
    Count: 1,
    Quality: 0,
};

/// A `D3D11_TEXTURE1D_DESC` as a runtime description.
pub fn texture1d(d: &D3D11_TEXTURE1D_DESC) -> ResourceDesc {
    let flags = (d.BindFlags, d.CPUAccessFlags, d.MiscFlags);
    let extent = (d.Width, 1, 1);
    let (dim, mips, array) = (Dimension::Texture1D, d.MipLevels, d.ArraySize);
    texture(dim, extent, mips, array, d.Format, SINGLE, d.Usage, flags)
}

/// A `D3D11_TEXTURE2D_DESC` as a runtime description.
pub fn texture2d(d: &D3D11_TEXTURE2D_DESC) -> ResourceDesc {
    let flags = (d.BindFlags, d.CPUAccessFlags, d.MiscFlags);
    let extent = (d.Width, d.Height, 1);
    let (dim, mips, array) = (Dimension::Texture2D, d.MipLevels, d.ArraySize);
    texture(
        dim,
        extent,
        mips,
        array,
        d.Format,
        d.SampleDesc,
        d.Usage,
        flags,
    )
}

/// A `D3D11_TEXTURE3D_DESC` as a runtime description.
pub fn texture3d(d: &D3D11_TEXTURE3D_DESC) -> ResourceDesc {
    let flags = (d.BindFlags, d.CPUAccessFlags, d.MiscFlags);
    let extent = (d.Width, d.Height, d.Depth);
    let (dim, mips) = (Dimension::Texture3D, d.MipLevels);
    texture(dim, extent, mips, 1, d.Format, SINGLE, d.Usage, flags)
}

/// `ID3D11Buffer::GetDesc` of a runtime description.
pub fn buffer_desc(d: &ResourceDesc) -> D3D11_BUFFER_DESC {
    let t = texture2d_desc(d);
    same_members!(t => D3D11_BUFFER_DESC {
        Usage, BindFlags, CPUAccessFlags, MiscFlags
    }, ByteWidth: d.width, StructureByteStride: d.structure_stride)
}

/// `ID3D11Texture1D::GetDesc` of a runtime description.
pub fn texture1d_desc(d: &ResourceDesc) -> D3D11_TEXTURE1D_DESC {
    let t = texture2d_desc(d);
    same_members!(t => D3D11_TEXTURE1D_DESC {
        Width, MipLevels, ArraySize, Format, Usage, BindFlags, CPUAccessFlags, MiscFlags
    })
}

/// `ID3D11Texture2D::GetDesc` of a runtime description.
pub fn texture2d_desc(d: &ResourceDesc) -> D3D11_TEXTURE2D_DESC {
    D3D11_TEXTURE2D_DESC {
        Width: d.width,
        Height: d.height,
        MipLevels: d.mip_levels,
        ArraySize: d.array_size,
        Format: d.format as DXGI_FORMAT,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: d.sample_count,
            Quality: d.sample_quality,
        },
        Usage: d.usage as D3D11_USAGE,
        BindFlags: d.bind,
        CPUAccessFlags: d.cpu_access,
        MiscFlags: d.misc,
    }
}

/// `ID3D11Texture3D::GetDesc` of a runtime description.
pub fn texture3d_desc(d: &ResourceDesc) -> D3D11_TEXTURE3D_DESC {
    let t = texture2d_desc(d);
    same_members!(t => D3D11_TEXTURE3D_DESC {
        Width, Height, MipLevels, Format, Usage, BindFlags, CPUAccessFlags, MiscFlags
    }, Depth: d.depth)
}

/// A `D3D11_BOX` (`D3D10_BOX` has its members) as the runtime's box.
pub fn texel_box(b: &D3D11_BOX) -> TexelBox {
    TexelBox {
        left: b.left,
        top: b.top,
        front: b.front,
        right: b.right,
        bottom: b.bottom,
        back: b.back,
    }
}
