//! Shared memory objects ([`SharedBuffer`], [`SharedImage`]) and the [`Subresource`] index.

use std::fmt;

use opencl3::types::{cl_mem, cl_mem_flags};

use crate::api::{Api, Shape};
use crate::com::Com;
use crate::error::{Error, Result};

/// How OpenCL kernels may use a shared object (the `cl_mem_flags` of the creation call; the
/// extensions accept these three only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Access {
    /// `CL_MEM_READ_WRITE`.
    #[default]
    ReadWrite,
    /// `CL_MEM_READ_ONLY`.
    ReadOnly,
    /// `CL_MEM_WRITE_ONLY`.
    WriteOnly,
}

impl Access {
    pub(crate) const fn flags(self) -> cl_mem_flags {
        match self {
            Access::ReadWrite => 1 << 0,
            Access::WriteOnly => 1 << 1,
            Access::ReadOnly => 1 << 2,
        }
    }
}

/// A texture subresource by mip level and array slice (3D textures: slice 0).
///
/// Direct3D numbers subresources mip-major within each slice:
/// `index = mip + slice * mip_levels` (`D3D11CalcSubresource`).
///
/// ```
/// use dxcl::Subresource;
/// let s = Subresource::new(2, 1);
/// assert_eq!(s.calc(4), 6);
/// assert_eq!(s.index(4, 2), Ok(6));
/// assert!(s.index(2, 2).is_err()); // no mip 2 in a 2-level chain
/// assert_eq!(Subresource::from_index(6, 4), s);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Subresource {
    /// Mip level, 0 the largest.
    pub mip: u32,
    /// Array slice (0 for textures without an array, and for 3D textures).
    pub slice: u32,
}

impl Subresource {
    /// Mip level `mip` of array slice `slice`.
    pub const fn new(mip: u32, slice: u32) -> Subresource {
        Subresource { mip, slice }
    }

    /// Mip level `mip` of slice 0.
    pub const fn mip(mip: u32) -> Subresource {
        Subresource { mip, slice: 0 }
    }

    /// `D3D11CalcSubresource(mip, slice, mip_levels)`, unchecked (wrapping like the C macro).
    pub const fn calc(self, mip_levels: u32) -> u32 {
        self.mip.wrapping_add(self.slice.wrapping_mul(mip_levels))
    }

    /// The index in a texture of `mip_levels` levels and `array_size` slices.
    ///
    /// # Errors
    /// [`Error::InvalidValue`], the extensions' status for a subresource that does not exist,
    /// when `mip >= mip_levels` or `slice >= array_size`.
    pub fn index(self, mip_levels: u32, array_size: u32) -> Result<u32> {
        if self.mip >= mip_levels || self.slice >= array_size {
            return Err(Error::InvalidValue);
        }
        // Both below their bounds: at most mip_levels * array_size - 1, which D3D keeps in a UINT.
        self.slice
            .checked_mul(mip_levels)
            .and_then(|s| s.checked_add(self.mip))
            .ok_or(Error::InvalidValue)
    }

    /// The mip and slice of subresource `index` in a texture of `mip_levels` levels.
    ///
    /// # Panics
    /// When `mip_levels` is 0.
    pub const fn from_index(index: u32, mip_levels: u32) -> Subresource {
        Subresource {
            mip: index % mip_levels,
            slice: index / mip_levels,
        }
    }
}

mod sealed {
    use opencl3::types::cl_mem;

    /// Only this crate can make one: it keeps [`Sealed::raw_mem`] uncallable outside, even
    /// through a `dyn Shared` (whose supertrait methods need no import).
    pub struct Token(());

    pub const TOKEN: Token = Token(());

    // Code outside the crate reaches a shared object's `cl_mem` only through an `Acquired` guard.
    pub trait Sealed {
        fn raw_mem(&self, _: Token) -> cl_mem;
    }
}

pub(crate) use sealed::TOKEN;

/// A memory object made from a Direct3D resource: [`SharedBuffer`] or [`SharedImage`].
/// [`Queue::acquire`](crate::Queue::acquire) takes a list of them. Sealed.
pub trait Shared<A: Api>: sealed::Sealed {}

/// An OpenCL buffer shared with a Direct3D buffer. Its `cl_mem` is reachable only through an
/// [`Acquired`](crate::Acquired) guard, so kernels can use it only while it is acquired.
pub struct SharedBuffer<A: Api> {
    mem: cl_mem,
    resource: Com<A::Buffer>,
}

impl<A: Api> SharedBuffer<A> {
    /// # Safety
    /// `mem` is a live memory object made from `resource`, whose one reference the value owns.
    pub(crate) unsafe fn from_raw(mem: cl_mem, resource: Com<A::Buffer>) -> SharedBuffer<A> {
        SharedBuffer { mem, resource }
    }

    /// The Direct3D buffer.
    pub fn resource(&self) -> &Com<A::Buffer> {
        &self.resource
    }

    /// Its size in bytes (`CL_MEM_SIZE`).
    ///
    /// # Errors
    /// The status of `clGetMemObjectInfo`.
    pub fn size(&self) -> Result<usize> {
        let size = cl3::memory::get_mem_object_info(self.mem, cl3::memory::CL_MEM_SIZE)
            .map_err(Error::from_code)?;
        Ok(usize::from(size))
    }
}

/// The texture an image was made from.
enum Texture<A: Api> {
    D2(Com<A::Texture2D>),
    D3(Com<A::Texture3D>),
}

/// An OpenCL image shared with one subresource of a Direct3D 2D or 3D texture. As with
/// [`SharedBuffer`], its `cl_mem` is reachable only through an [`Acquired`](crate::Acquired)
/// guard.
pub struct SharedImage<A: Api> {
    mem: cl_mem,
    texture: Texture<A>,
    subresource: Subresource,
    shape: Shape,
}

impl<A: Api> SharedImage<A> {
    /// # Safety
    /// `mem` is a live image made from `subresource` of `texture`, whose one reference the value
    /// owns.
    pub(crate) unsafe fn from_texture2d(
        mem: cl_mem,
        texture: Com<A::Texture2D>,
        subresource: Subresource,
        shape: Shape,
    ) -> SharedImage<A> {
        SharedImage {
            mem,
            texture: Texture::D2(texture),
            subresource,
            shape,
        }
    }

    /// # Safety
    /// As [`SharedImage::from_texture2d`].
    pub(crate) unsafe fn from_texture3d(
        mem: cl_mem,
        texture: Com<A::Texture3D>,
        subresource: Subresource,
        shape: Shape,
    ) -> SharedImage<A> {
        SharedImage {
            mem,
            texture: Texture::D3(texture),
            subresource,
            shape,
        }
    }

    /// The subresource it shares.
    pub fn subresource(&self) -> Subresource {
        self.subresource
    }

    /// The 2D texture, when it was made from one.
    pub fn texture2d(&self) -> Option<&Com<A::Texture2D>> {
        match &self.texture {
            Texture::D2(t) => Some(t),
            Texture::D3(_) => None,
        }
    }

    /// The 3D texture, when it was made from one.
    pub fn texture3d(&self) -> Option<&Com<A::Texture3D>> {
        match &self.texture {
            Texture::D3(t) => Some(t),
            Texture::D2(_) => None,
        }
    }

    /// Width, height and depth in texels of its mip level (`max(1, size >> mip)` each; depth 1
    /// for 2D textures): the region to read or write it whole.
    pub fn extent(&self) -> [usize; 3] {
        let at = |n: u32| (n >> self.subresource.mip).max(1) as usize;
        [
            at(self.shape.width),
            at(self.shape.height),
            at(self.shape.depth),
        ]
    }
}

impl<A: Api> sealed::Sealed for SharedBuffer<A> {
    fn raw_mem(&self, _: sealed::Token) -> cl_mem {
        self.mem
    }
}

impl<A: Api> sealed::Sealed for SharedImage<A> {
    fn raw_mem(&self, _: sealed::Token) -> cl_mem {
        self.mem
    }
}

impl<A: Api> Shared<A> for SharedBuffer<A> {}
impl<A: Api> Shared<A> for SharedImage<A> {}

fn release(mem: cl_mem) {
    // SAFETY: the owner gives up its one reference, once, from its drop.
    if let Err(code) = unsafe { cl3::memory::release_mem_object(mem) } {
        eprintln!(
            "dxcl: clReleaseMemObject failed: {}",
            Error::from_code(code)
        );
    }
}

impl<A: Api> Drop for SharedBuffer<A> {
    fn drop(&mut self) {
        release(self.mem);
    }
}

impl<A: Api> Drop for SharedImage<A> {
    fn drop(&mut self) {
        release(self.mem);
    }
}

impl<A: Api> fmt::Debug for SharedBuffer<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBuffer")
            .field("api", &A::NAME)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl<A: Api> fmt::Debug for SharedImage<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedImage")
            .field("api", &A::NAME)
            .field("subresource", &self.subresource)
            .field("extent", &self.extent())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subresource_index_is_d3d11_calc_subresource() {
        // D3D11CalcSubresource(MipSlice, ArraySlice, MipLevels) = MipSlice + ArraySlice * MipLevels
        for levels in 1..6 {
            for slices in 1..4 {
                let mut expected = 0;
                for slice in 0..slices {
                    for mip in 0..levels {
                        let s = Subresource::new(mip, slice);
                        assert_eq!(s.index(levels, slices), Ok(expected));
                        assert_eq!(s.calc(levels), expected);
                        assert_eq!(Subresource::from_index(expected, levels), s);
                        expected += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn subresources_past_the_texture_are_invalid_value() {
        assert_eq!(Subresource::new(3, 0).index(3, 1), Err(Error::InvalidValue));
        assert_eq!(Subresource::new(0, 1).index(3, 1), Err(Error::InvalidValue));
        assert_eq!(Subresource::mip(0).index(0, 1), Err(Error::InvalidValue));
        assert_eq!(
            Subresource::new(0, u32::MAX - 1).index(2, u32::MAX),
            Err(Error::InvalidValue),
            "overflow"
        );
    }

    #[test]
    fn access_flags_are_the_cl_mem_flags() {
        assert_eq!(Access::ReadWrite.flags(), cl3::memory::CL_MEM_READ_WRITE);
        assert_eq!(Access::ReadOnly.flags(), cl3::memory::CL_MEM_READ_ONLY);
        assert_eq!(Access::WriteOnly.flags(), cl3::memory::CL_MEM_WRITE_ONLY);
    }
}
