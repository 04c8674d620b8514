//! The COM client: everything the layer asks of a Direct3D device, through standard COM calls
//! plus dxcl's optional interop interface.

pub(crate) mod adapter;
pub(crate) mod adapter_id;
pub(crate) mod com;
pub(crate) mod device;
pub(crate) mod device_lock;
pub(crate) mod dxvk_com;
pub(crate) mod interop;
pub(crate) mod multithread;
pub(crate) mod resource;
pub(crate) mod shared_texture;
pub(crate) mod vk_loader;
pub(crate) mod vulkan;
