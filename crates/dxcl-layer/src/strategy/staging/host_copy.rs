//! The staging copy's direct path on dxcl's runtime: the runtime copies a subresource straight
//! into the layer's host shadow and back (`IDxclInteropResource::CopyToHost` / `CopyFromHost`),
//! with no Direct3D staging resource and no host copy of the layer's own. The shadow is
//! registered with the runtime once (`IDxclInteropDevice::RegisterHostMemory`): its Vulkan
//! backend imports it, so the device writes the pinned shadow at the bus's speed, in pieces
//! that OpenCL copies on as each lands.

use std::ffi::c_void;

use dxcl_abi::interop::{IDxclInteropDevice, IDxclInteropResource, DXCL_BOX};
use dxcl_abi::{E_NOTIMPL, HRESULT, SUCCEEDED, S_OK};

use super::packed::{Layout, Piece};
use crate::core::tokens::ResourceKind;
use crate::d3d::com::ComPtr;

/// A shadow's registration with the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    /// Not tried yet.
    Untried,
    /// `at`, `len` bytes; `registered`: the runtime holds it (unregistered on detach), or it
    /// needed no registration (the software adapter).
    Attached {
        at: usize,
        len: usize,
        registered: bool,
    },
    /// The runtime cannot reach it: staging resources instead.
    Refused,
}

/// The runtime's faces of one shared subresource, and its shadow's registration.
pub(crate) struct HostCopy {
    resource: ComPtr<IDxclInteropResource>,
    device: ComPtr<IDxclInteropDevice>,
    subresource: u32,
    host: Host,
}

impl HostCopy {
    pub fn new(
        resource: ComPtr<IDxclInteropResource>,
        device: ComPtr<IDxclInteropDevice>,
        subresource: u32,
    ) -> HostCopy {
        HostCopy {
            resource,
            device,
            subresource,
            host: Host::Untried,
        }
    }

    /// Registers the shadow at `at` (`len` bytes) once; a later call with other memory, or after
    /// a refusal, does nothing.
    ///
    /// # Safety
    /// The memory stays valid until [`HostCopy::detach`] (or drop).
    pub unsafe fn attach(&mut self, at: *mut u8, len: usize) {
        if self.host != Host::Untried || at.is_null() || len == 0 {
            return;
        }
        let _register = crate::trace::span(crate::trace::Step::HostRegister);
        let d = self.device.as_ptr();
        // SAFETY: a live IDxclInteropDevice; the memory stays valid until detach (contract).
        let hr = unsafe { ((*(*d).lpVtbl).RegisterHostMemory)(d, at.cast(), len as u64) };
        self.host = if SUCCEEDED(hr) {
            Host::Attached {
                at: at as usize,
                len,
                registered: hr == S_OK,
            }
        } else {
            Host::Refused
        };
    }

    /// Lets the runtime forget the shadow (before its memory goes).
    pub fn detach(&mut self) {
        if let Host::Attached {
            at,
            registered: true,
            ..
        } = self.host
        {
            let d = self.device.as_ptr();
            // SAFETY: a live IDxclInteropDevice; `at` is what attach registered.
            unsafe { ((*(*d).lpVtbl).UnregisterHostMemory)(d, at as *mut c_void) };
        }
        if matches!(self.host, Host::Attached { .. }) {
            self.host = Host::Refused;
        }
    }

    /// Copies the subresource into `shadow` (attached) in `pieces`; `done` runs for each once its
    /// bytes are in. `Err(E_NOTIMPL)` when the shadow is not attached or the runtime refuses (the
    /// caller maps a staging resource instead; nothing was copied).
    pub fn download(
        &mut self,
        layout: &Layout,
        shadow: &mut [u8],
        pieces: &[Piece],
        mut done: impl FnMut(&Piece),
    ) -> Result<(), HRESULT> {
        let attached = matches!(self.host, Host::Attached { at, len, .. }
            if at == shadow.as_ptr() as usize && len == shadow.len());
        if !attached {
            return Err(E_NOTIMPL);
        }
        let _copy = crate::trace::span(crate::trace::Step::HostCopyTo);
        let boxes: Vec<DXCL_BOX> = pieces.iter().map(|p| piece_box(layout, p)).collect();
        let mut each = |i: usize| done(&pieces[i]);
        let mut call: &mut dyn FnMut(usize) = &mut each;
        let r = self.resource.as_ptr();
        // SAFETY: a live IDxclInteropResource; the shadow is ours for the call and holds the
        // packed subresource; the context is `call`, alive for the call, which `piece_done`
        // reads as what it is.
        let hr = unsafe {
            ((*(*r).lpVtbl).CopyToHost)(
                r,
                self.subresource,
                shadow.as_mut_ptr().cast(),
                shadow.len() as u64,
                boxes.as_ptr(),
                boxes.len() as u32,
                Some(piece_done),
                (&mut call as *mut &mut dyn FnMut(usize)).cast(),
            )
        };
        if hr == E_NOTIMPL {
            self.detach();
        }
        if SUCCEEDED(hr) {
            Ok(())
        } else {
            Err(hr)
        }
    }

    /// Copies `shadow` into the subresource (registered memory straight from it, other memory
    /// through the runtime's upload memory).
    pub fn upload(&self, shadow: &[u8]) -> Result<(), HRESULT> {
        let _copy = crate::trace::span(crate::trace::Step::HostCopyFrom);
        let r = self.resource.as_ptr();
        // SAFETY: a live IDxclInteropResource; the shadow holds the packed subresource and is
        // only read, before the call returns.
        let hr = unsafe {
            ((*(*r).lpVtbl).CopyFromHost)(
                r,
                self.subresource,
                shadow.as_ptr().cast(),
                shadow.len() as u64,
            )
        };
        if SUCCEEDED(hr) {
            Ok(())
        } else {
            Err(hr)
        }
    }
}

impl Drop for HostCopy {
    fn drop(&mut self) {
        self.detach();
    }
}

unsafe extern "system" fn piece_done(context: *mut c_void, piece: u32) {
    // SAFETY: the context is the `&mut dyn FnMut(usize)` that `download` passed, alive for the
    // CopyToHost call during which the runtime calls this, on that thread.
    let call = unsafe { &mut *context.cast::<&mut dyn FnMut(usize)>() };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(piece as usize)));
}

/// A piece as the runtime's box: texels (buffers: bytes in the first coordinate).
fn piece_box(layout: &Layout, p: &Piece) -> DXCL_BOX {
    let (o, r) = (p.origin, p.region);
    if layout.kind == ResourceKind::Buffer {
        return DXCL_BOX {
            Left: o[0] as u32,
            Top: 0,
            Front: 0,
            Right: (o[0] + r[0]) as u32,
            Bottom: 1,
            Back: 1,
        };
    }
    DXCL_BOX {
        Left: o[0] as u32,
        Top: o[1] as u32,
        Front: o[2] as u32,
        Right: (o[0] + r[0]) as u32,
        Bottom: (o[1] + r[1]) as u32,
        Back: (o[2] + r[2]) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_become_boxes() {
        let b = Layout {
            kind: ResourceKind::Buffer,
            extent: (1000, 1, 1),
            row_bytes: 1000,
        };
        let p = &b.pieces(300)[1];
        let x = piece_box(&b, p);
        assert_eq!(
            (x.Left, x.Right, x.Top, x.Bottom, x.Front, x.Back),
            (300, 600, 0, 1, 0, 1)
        );
        let t = Layout {
            kind: ResourceKind::Texture3D,
            extent: (4, 4, 8),
            row_bytes: 8,
        };
        for p in t.pieces(16) {
            let x = piece_box(&t, &p);
            assert_eq!((x.Left, x.Right), (0, 4));
            assert_eq!(x.Bottom - x.Top, p.region[1] as u32);
            assert_eq!(
                (x.Front, x.Back),
                (p.origin[2] as u32, p.origin[2] as u32 + 1)
            );
        }
    }
}
