//! Helpers on [`GUID`].

use core::fmt;

use crate::GUID;

impl GUID {
    /// A GUID from its registry form's numbers, `{data1-data2-data3-data4[0..2]-data4[2..8]}`.
    pub const fn new(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> Self {
        GUID {
            Data1: data1,
            Data2: data2,
            Data3: data3,
            Data4: data4,
        }
    }
}

impl fmt::Display for GUID {
    /// The registry form, `6d7f3a52-1c4e-4b8a-9f3d-2a61c0e5b7d1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.Data4;
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
            self.Data1, self.Data2, self.Data3, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]
        )
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use crate::*;

    #[test]
    fn display_is_the_registry_form() {
        assert_eq!(
            IID_IUnknown.to_string(),
            "00000000-0000-0000-c000-000000000046"
        );
        assert_eq!(
            IID_ID3D11Device.to_string(),
            "db6f6ddb-ac77-4e88-8253-819df9bbf140"
        );
    }

    #[test]
    fn equality_compares_all_bytes() {
        assert_eq!(
            IID_IDxclInteropResource,
            GUID::new(
                0x6d7f3a52,
                0x1c4e,
                0x4b8a,
                [0x9f, 0x3d, 0x2a, 0x61, 0xc0, 0xe5, 0xb7, 0xd1]
            )
        );
        assert_ne!(IID_IDxclInteropResource, IID_IDxclInteropDevice);
    }
}
