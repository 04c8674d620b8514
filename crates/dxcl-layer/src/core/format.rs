//! The DXGI → OpenCL image format table of the sharing specs (37 rows for KHR; NV lacks the
//! BGRA row). Defined once; lookups, pixel sizes and the counts are derived from it.

use opencl_sys::{
    cl_channel_order, cl_channel_type, cl_image_format, CL_BGRA, CL_FLOAT, CL_HALF_FLOAT, CL_R,
    CL_RG, CL_RGBA, CL_SIGNED_INT16, CL_SIGNED_INT32, CL_SIGNED_INT8, CL_SNORM_INT16,
    CL_SNORM_INT8, CL_UNORM_INT16, CL_UNORM_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32,
    CL_UNSIGNED_INT8,
};

use super::tokens::Flavor;

/// A `DXGI_FORMAT` value (the SDK's enum is a C `int`).
pub type DxgiFormat = i32;

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatRow {
    pub dxgi: DxgiFormat,
    pub name: &'static str,
    pub order: cl_channel_order,
    pub data_type: cl_channel_type,
    /// Only `cl_khr_d3d1x_sharing` lists it.
    pub khr_only: bool,
}

const fn row(
    dxgi: DxgiFormat,
    name: &'static str,
    order: cl_channel_order,
    data_type: cl_channel_type,
) -> FormatRow {
    FormatRow {
        dxgi,
        name,
        order,
        data_type,
        khr_only: false,
    }
}

/// The table, in the specs' order. DXGI values are the SDK's.
pub const TABLE: [FormatRow; 37] = [
    row(0x02, "DXGI_FORMAT_R32G32B32A32_FLOAT", CL_RGBA, CL_FLOAT),
    row(
        0x03,
        "DXGI_FORMAT_R32G32B32A32_UINT",
        CL_RGBA,
        CL_UNSIGNED_INT32,
    ),
    row(
        0x04,
        "DXGI_FORMAT_R32G32B32A32_SINT",
        CL_RGBA,
        CL_SIGNED_INT32,
    ),
    row(
        0x0a,
        "DXGI_FORMAT_R16G16B16A16_FLOAT",
        CL_RGBA,
        CL_HALF_FLOAT,
    ),
    row(
        0x0b,
        "DXGI_FORMAT_R16G16B16A16_UNORM",
        CL_RGBA,
        CL_UNORM_INT16,
    ),
    row(
        0x0c,
        "DXGI_FORMAT_R16G16B16A16_UINT",
        CL_RGBA,
        CL_UNSIGNED_INT16,
    ),
    row(
        0x0d,
        "DXGI_FORMAT_R16G16B16A16_SNORM",
        CL_RGBA,
        CL_SNORM_INT16,
    ),
    row(
        0x0e,
        "DXGI_FORMAT_R16G16B16A16_SINT",
        CL_RGBA,
        CL_SIGNED_INT16,
    ),
    row(0x1c, "DXGI_FORMAT_R8G8B8A8_UNORM", CL_RGBA, CL_UNORM_INT8),
    row(0x1e, "DXGI_FORMAT_R8G8B8A8_UINT", CL_RGBA, CL_UNSIGNED_INT8),
    row(0x1f, "DXGI_FORMAT_R8G8B8A8_SNORM", CL_RGBA, CL_SNORM_INT8),
    row(0x20, "DXGI_FORMAT_R8G8B8A8_SINT", CL_RGBA, CL_SIGNED_INT8),
    row(0x10, "DXGI_FORMAT_R32G32_FLOAT", CL_RG, CL_FLOAT),
    row(0x11, "DXGI_FORMAT_R32G32_UINT", CL_RG, CL_UNSIGNED_INT32),
    row(0x12, "DXGI_FORMAT_R32G32_SINT", CL_RG, CL_SIGNED_INT32),
    row(0x22, "DXGI_FORMAT_R16G16_FLOAT", CL_RG, CL_HALF_FLOAT),
    row(0x23, "DXGI_FORMAT_R16G16_UNORM", CL_RG, CL_UNORM_INT16),
    row(0x24, "DXGI_FORMAT_R16G16_UINT", CL_RG, CL_UNSIGNED_INT16),
    row(0x25, "DXGI_FORMAT_R16G16_SNORM", CL_RG, CL_SNORM_INT16),
    row(0x26, "DXGI_FORMAT_R16G16_SINT", CL_RG, CL_SIGNED_INT16),
    row(0x31, "DXGI_FORMAT_R8G8_UNORM", CL_RG, CL_UNORM_INT8),
    row(0x32, "DXGI_FORMAT_R8G8_UINT", CL_RG, CL_UNSIGNED_INT8),
    row(0x33, "DXGI_FORMAT_R8G8_SNORM", CL_RG, CL_SNORM_INT8),
    row(0x34, "DXGI_FORMAT_R8G8_SINT", CL_RG, CL_SIGNED_INT8),
    row(0x29, "DXGI_FORMAT_R32_FLOAT", CL_R, CL_FLOAT),
    row(0x2a, "DXGI_FORMAT_R32_UINT", CL_R, CL_UNSIGNED_INT32),
    row(0x2b, "DXGI_FORMAT_R32_SINT", CL_R, CL_SIGNED_INT32),
    row(0x36, "DXGI_FORMAT_R16_FLOAT", CL_R, CL_HALF_FLOAT),
    row(0x38, "DXGI_FORMAT_R16_UNORM", CL_R, CL_UNORM_INT16),
    row(0x39, "DXGI_FORMAT_R16_UINT", CL_R, CL_UNSIGNED_INT16),
    row(0x3a, "DXGI_FORMAT_R16_SNORM", CL_R, CL_SNORM_INT16),
    row(0x3b, "DXGI_FORMAT_R16_SINT", CL_R, CL_SIGNED_INT16),
    row(0x3d, "DXGI_FORMAT_R8_UNORM", CL_R, CL_UNORM_INT8),
    row(0x3e, "DXGI_FORMAT_R8_UINT", CL_R, CL_UNSIGNED_INT8),
    row(0x3f, "DXGI_FORMAT_R8_SNORM", CL_R, CL_SNORM_INT8),
    row(0x40, "DXGI_FORMAT_R8_SINT", CL_R, CL_SIGNED_INT8),
    FormatRow {
        dxgi: 0x57,
        name: "DXGI_FORMAT_B8G8R8A8_UNORM",
        order: CL_BGRA,
        data_type: CL_UNORM_INT8,
        khr_only: true,
    },
];

/// The CL image format for a DXGI format under one flavor's table, or `None` when the table does
/// not list it.
pub fn lookup(dxgi: DxgiFormat, flavor: Flavor) -> Option<cl_image_format> {
    TABLE
        .iter()
        .find(|r| r.dxgi == dxgi && (flavor == Flavor::Khr || !r.khr_only))
        .map(|r| cl_image_format {
            image_channel_order: r.order,
            image_channel_data_type: r.data_type,
        })
}

/// Bytes per pixel of a format the table produces.
pub fn pixel_size(format: &cl_image_format) -> usize {
    let channels = match format.image_channel_order {
        CL_R => 1,
        CL_RG => 2,
        _ => 4,
    };
    let bytes = match format.image_channel_data_type {
        CL_FLOAT | CL_UNSIGNED_INT32 | CL_SIGNED_INT32 => 4,
        CL_HALF_FLOAT | CL_UNORM_INT16 | CL_UNSIGNED_INT16 | CL_SNORM_INT16 | CL_SIGNED_INT16 => 2,
        _ => 1,
    };
    channels * bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn khr_has_37_and_nv_36_formats() {
        let nv = TABLE
            .iter()
            .filter(|r| lookup(r.dxgi, Flavor::Nv).is_some())
            .count();
        let khr = TABLE
            .iter()
            .filter(|r| lookup(r.dxgi, Flavor::Khr).is_some())
            .count();
        assert_eq!((khr, nv), (37, 36));
        assert!(lookup(0x57, Flavor::Nv).is_none());
        let bgra = lookup(0x57, Flavor::Khr).unwrap();
        assert_eq!(
            (bgra.image_channel_order, bgra.image_channel_data_type),
            (CL_BGRA, CL_UNORM_INT8)
        );
    }

    #[test]
    fn rows_are_unique_and_names_agree_with_pixel_sizes() {
        for (i, a) in TABLE.iter().enumerate() {
            assert!(
                TABLE[i + 1..].iter().all(|b| b.dxgi != a.dxgi),
                "{} twice",
                a.name
            );
            let f = cl_image_format {
                image_channel_order: a.order,
                image_channel_data_type: a.data_type,
            };
            // The name spells every channel with its bit width: R32G32 = 64 bits = 8 bytes.
            let bits: usize = a.name["DXGI_FORMAT_".len()..]
                .split('_')
                .next()
                .unwrap()
                .split(|c: char| c.is_ascii_alphabetic())
                .filter(|s| !s.is_empty())
                .map(|s| s.parse::<usize>().unwrap())
                .sum();
            assert_eq!(pixel_size(&f) * 8, bits, "{}", a.name);
        }
    }

    #[test]
    fn unknown_formats_are_not_in_the_table() {
        for dxgi in [
            0, 1, 29, /* R8G8B8A8_UNORM_SRGB */
            71, /* BC1 */
            0x1234,
        ] {
            assert!(lookup(dxgi, Flavor::Khr).is_none());
        }
        assert_eq!(
            lookup(0x1c, Flavor::Nv).unwrap().image_channel_order,
            CL_RGBA
        );
    }
}
