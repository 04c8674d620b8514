//! [`AdapterId`]: how an adapter is recognised among OpenCL devices, whoever found it out (the
//! DXGI description in [`super::adapter`], Vulkan in [`super::vulkan`]).

/// How an adapter is recognised among OpenCL devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterId {
    /// An adapter that runs on the CPU (software adapter, lavapipe): CPU devices with
    /// host-unified memory.
    Software,
    /// A hardware adapter known by its device UUID (`CL_DEVICE_UUID_KHR`).
    Uuid([u8; 16]),
    /// A hardware adapter known by its LUID (`CL_DEVICE_LUID_KHR`), bytes as laid out in memory.
    Luid([u8; 8]),
}

impl AdapterId {
    /// Which OpenCL devices the rule prefers, as `dxcl info` prints it.
    pub fn describe(&self) -> String {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        match self {
            AdapterId::Software => {
                "runs on the CPU: CPU devices with host-unified memory".to_string()
            }
            AdapterId::Uuid(u) => format!("the device whose CL_DEVICE_UUID_KHR is {}", hex(u)),
            AdapterId::Luid(l) => format!("the device whose CL_DEVICE_LUID_KHR is {}", hex(l)),
        }
    }
}
