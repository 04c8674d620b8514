//! `DXCL_VALIDATE=1` (docs/validation.md): reports, on stderr, the misuses of shared resources
//! that the sharing specs leave undefined and that only the runtime can see:
//! - a Direct3D call touching a subresource while OpenCL holds it acquired ("Accessing a
//!   Direct3D 11 resource while its corresponding OpenCL memory object is acquired is in error
//!   and will result in undefined behavior");
//! - the application's release of its last reference to a resource or device while OpenCL objects
//!   made from it live.
//!
//! The OpenCL layer tells the runtime what OpenCL does with a resource or device through
//! `IDxclInteropResource::SetOpenCLAccess` and `IDxclInteropDevice::SetOpenCLReference`. Off, the
//! cost is one cached check per hook ([`on`]); nothing is recorded.

use std::io::Write;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::Mutex;

use super::abi::*;
use super::guard::lock;

/// 0: not read yet; 1: off; 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether `DXCL_VALIDATE=1`, read once per process.
#[inline]
pub fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => read_env(),
    }
}

#[cold]
fn read_env() -> bool {
    let on = std::env::var_os("DXCL_VALIDATE").is_some_and(|v| v == "1");
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    on
}

/// Writes one report line: `dxcl validation: <text>`.
pub fn report(text: &str) {
    // One write per line, so reports from several threads do not interleave.
    let line = format!("dxcl validation: {text}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// What an object can be reported for, each at most once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A Direct3D call touched it while OpenCL held it acquired.
    AccessWhileAcquired = 1,
    /// The application released its last reference while OpenCL objects made from it lived.
    ReleasedWhileShared = 2,
}

/// The kinds an object has been reported for.
#[derive(Debug, Default)]
pub struct Reported(AtomicU8);

impl Reported {
    /// True the first time `kind` is asked for.
    pub fn first(&self, kind: Kind) -> bool {
        self.0.fetch_or(kind as u8, Ordering::AcqRel) & kind as u8 == 0
    }
}

/// A subresource OpenCL uses: its state and the OpenCL call that set it.
#[derive(Debug)]
struct Use {
    subresource: u32,
    access: DXCL_OPENCL_ACCESS,
    /// The call that set `access`.
    call: String,
    /// The call that made the memory object (the first that left NONE).
    made_by: String,
}

/// What OpenCL does with a resource, as the layer said (`SetOpenCLAccess`).
#[derive(Debug, Default)]
pub struct OpenClUse {
    /// Subresources that are SHARED or ACQUIRED.
    uses: Mutex<Vec<Use>>,
    /// Their number: each holds one of the layer's references to the resource.
    held: AtomicU32,
    pub reported: Reported,
}

impl OpenClUse {
    pub fn set(&self, subresource: u32, access: DXCL_OPENCL_ACCESS, call: &str) {
        let mut uses = lock(&self.uses);
        let old = uses
            .iter()
            .position(|u| u.subresource == subresource)
            .map(|i| uses.remove(i));
        if access != DXCL_OPENCL_ACCESS_NONE {
            uses.push(Use {
                subresource,
                access,
                call: call.to_owned(),
                made_by: old.map_or_else(|| call.to_owned(), |u| u.made_by),
            });
        }
        self.held.store(uses.len() as u32, Ordering::Release);
    }

    /// The layer's references: subresources with a live OpenCL memory object.
    pub fn held(&self) -> u32 {
        self.held.load(Ordering::Acquire)
    }

    /// The first of `subresources` (`None`: any) that OpenCL holds acquired, with the call.
    pub fn acquired(&self, subresources: Option<&[u32]>) -> Option<(u32, String)> {
        if self.held() == 0 {
            return None;
        }
        lock(&self.uses)
            .iter()
            .find(|u| {
                u.access == DXCL_OPENCL_ACCESS_ACQUIRED
                    && subresources.is_none_or(|s| s.contains(&u.subresource))
            })
            .map(|u| (u.subresource, u.call.clone()))
    }

    /// The OpenCL call that made the first live memory object (for the release report).
    pub fn made_by(&self) -> Option<String> {
        lock(&self.uses).first().map(|u| u.made_by.clone())
    }
}

/// What the layer holds of a device (`SetOpenCLReference`), and the device's references held by
/// its children (a child with public references holds one public reference on its device), so
/// that the application's own references can be told apart.
#[derive(Debug, Default)]
pub struct DeviceUse {
    pub opencl: AtomicU32,
    pub children: AtomicU32,
    pub reported: Reported,
}

impl DeviceUse {
    /// A child took (`true`) or dropped its reference on the device. Counted only when validating.
    pub fn child(&self, acquired: bool) {
        if !on() {
            return;
        }
        if acquired {
            self.children.fetch_add(1, Ordering::AcqRel);
        } else {
            let _ = self
                .children
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }

    pub fn opencl_reference(&self, held: bool) {
        if held {
            self.opencl.fetch_add(1, Ordering::AcqRel);
        } else {
            let _ = self
                .opencl
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }

    /// After a `Release` left `remaining` public references: true (once) when none of them is
    /// the application's while OpenCL holds some.
    pub fn application_let_go(&self, remaining: u32) -> bool {
        let opencl = self.opencl.load(Ordering::Acquire);
        opencl > 0
            && remaining <= opencl + self.children.load(Ordering::Acquire)
            && self.reported.first(Kind::ReleasedWhileShared)
    }
}

/// How a report names an object: `"name" (0x…)` from its `WKPDID_D3DDebugObjectName`, else
/// `0x… (description)`.
pub fn name(data: &super::private_data::PrivateData, face: usize, description: &str) -> String {
    match data.bytes(&WKPDID_D3DDebugObjectName) {
        Some(bytes) => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            format!("\"{}\" ({face:#x})", String::from_utf8_lossy(&bytes[..end]))
        }
        None => format!("{face:#x} ({description})"),
    }
}
