//! Usage, bind, CPU-access and misc values of Direct3D 11 descriptions, as plain numbers.
//!
//! `core` is pure Rust and does not depend on the ABI crate; these are the D3D11 values (D3D10 uses
//! the same numbers for usage, bind and CPU access; its misc bits are translated by its face).

pub const USAGE_DEFAULT: u32 = 0;
pub const USAGE_IMMUTABLE: u32 = 1;
pub const USAGE_DYNAMIC: u32 = 2;
pub const USAGE_STAGING: u32 = 3;

pub const BIND_VERTEX_BUFFER: u32 = 0x1;
pub const BIND_INDEX_BUFFER: u32 = 0x2;
pub const BIND_CONSTANT_BUFFER: u32 = 0x4;
pub const BIND_SHADER_RESOURCE: u32 = 0x8;
pub const BIND_STREAM_OUTPUT: u32 = 0x10;
pub const BIND_RENDER_TARGET: u32 = 0x20;
pub const BIND_DEPTH_STENCIL: u32 = 0x40;
pub const BIND_UNORDERED_ACCESS: u32 = 0x80;
pub const BIND_DECODER: u32 = 0x200;
pub const BIND_VIDEO_ENCODER: u32 = 0x400;
/// Every bind bit Direct3D 11.1 defines.
pub const BIND_ALL: u32 = 0x6ff;

pub const CPU_ACCESS_WRITE: u32 = 0x10000;
pub const CPU_ACCESS_READ: u32 = 0x20000;
pub const CPU_ACCESS_ALL: u32 = CPU_ACCESS_WRITE | CPU_ACCESS_READ;

pub const MISC_GENERATE_MIPS: u32 = 0x1;
pub const MISC_SHARED: u32 = 0x2;
pub const MISC_TEXTURECUBE: u32 = 0x4;
pub const MISC_DRAWINDIRECT_ARGS: u32 = 0x10;
pub const MISC_BUFFER_ALLOW_RAW_VIEWS: u32 = 0x20;
pub const MISC_BUFFER_STRUCTURED: u32 = 0x40;
pub const MISC_RESOURCE_CLAMP: u32 = 0x80;
pub const MISC_SHARED_KEYEDMUTEX: u32 = 0x100;
pub const MISC_GDI_COMPATIBLE: u32 = 0x200;
pub const MISC_SHARED_NTHANDLE: u32 = 0x800;
/// Bits this runtime understands; the rest (restricted content, guarded, tiled, protected, ...) are
/// refused because the software adapter reports no support for those features.
pub const MISC_KNOWN: u32 = MISC_GENERATE_MIPS
    | MISC_SHARED
    | MISC_TEXTURECUBE
    | MISC_DRAWINDIRECT_ARGS
    | MISC_BUFFER_ALLOW_RAW_VIEWS
    | MISC_BUFFER_STRUCTURED
    | MISC_RESOURCE_CLAMP
    | MISC_SHARED_KEYEDMUTEX
    | MISC_GDI_COMPATIBLE
    | MISC_SHARED_NTHANDLE;
