//! The LUID dxcl gives an adapter whose driver reports none (Vulkan on Linux: `deviceLUIDValid`
//! is false). The runtime reports it through DXGI; the OpenCL layer recomputes it from
//! `CL_DEVICE_UUID_KHR` to find the device of a DXGI adapter. One function, so both agree.

/// `LUID.LowPart` of dxcl's software adapter ("dxcl" in ASCII), which a derived LUID never equals.
pub const SOFTWARE_LUID_LOW: u32 = 0x6478_636c;

/// FNV-1a (64-bit) of the device UUID as `(LowPart, HighPart)`: stable, never zero, never the
/// software adapter's.
pub fn luid_from_uuid(uuid: &[u8; 16]) -> (u32, i32) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in uuid {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let (low, high) = (h as u32, (h >> 32) as i32);
    if high == 0 && (low == 0 || low == SOFTWARE_LUID_LOW) {
        (low ^ 1, high | 1)
    } else {
        (low, high)
    }
}
