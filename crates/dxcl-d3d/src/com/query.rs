//! Queries: `D3D11_QUERY_EVENT` (a backend fence), `D3D11_QUERY_TIMESTAMP` and
//! `D3D11_QUERY_TIMESTAMP_DISJOINT` (the CPU's monotonic clock in nanoseconds, since the host
//! backend executes on the CPU). Other query types answer `E_NOTIMPL` at creation.

use std::mem::offset_of;
use std::ptr;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use super::abi::*;
use super::guard::{guard, lock};
use super::iid_in;
use super::object::*;
use super::private_data::*;
use super::shared::{child_get_device, Device, DeviceChild};
use crate::backend::Fence;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Never issued.
    Fresh,
    /// Begin called, End not yet.
    Begun,
    /// End called: the data is ready once `fence` completes.
    Ended { fence: Fence, timestamp: u64 },
}

/// A query object.
#[repr(C)]
pub struct Query {
    d3d11: *const ID3D11QueryVtbl,
    /// The `ID3D10Query` face, set by `com::d3d10` (null: no D3D10 IIDs).
    pub d3d10: *const c_void,
    refs: RefCounts,
    private: PrivateData,
    device: PrivateRef<Device>,
    pub kind: D3D11_QUERY,
    pub misc: u32,
    state: Mutex<State>,
}

// SAFETY: vtable pointers refer to immutable statics; the rest is Send + Sync.
unsafe impl Send for Query {}
// SAFETY: as above.
unsafe impl Sync for Query {}

pub const QUERY_FACE: usize = offset_of!(Query, d3d11);
pub const D3D10_QUERY_FACE: usize = offset_of!(Query, d3d10);

// SAFETY: the offsets are vtable pointer fields; `face_for` returns only those.
unsafe impl ComObject for Query {
    const KIND: ObjectKind = ObjectKind::Query;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[QUERY_FACE, D3D10_QUERY_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        // A query of a D3D10 device (D3D10 face set) answers IUnknown with its D3D10 face and no
        // D3D11 interface; a D3D11 query answers no D3D10 interface.
        let d3d10 = !self.d3d10.is_null();
        if d3d10 && iid_in(riid, &[IID_IUnknown]) {
            Some(D3D10_QUERY_FACE)
        } else if !d3d10
            && iid_in(
                riid,
                &[
                    IID_IUnknown,
                    IID_ID3D11DeviceChild,
                    IID_ID3D11Asynchronous,
                    IID_ID3D11Query,
                ],
            )
        {
            Some(QUERY_FACE)
        } else if d3d10
            && iid_in(
                riid,
                &[
                    IID_ID3D10DeviceChild,
                    IID_ID3D10Asynchronous,
                    IID_ID3D10Query,
                ],
            )
        {
            Some(D3D10_QUERY_FACE)
        } else {
            None
        }
    }
    fn on_public_acquire(&self) {
        self.device.validation.child(true);
        add_ref(&*self.device);
    }
    fn on_public_release(&self) {
        self.device.validation.child(false);
        // SAFETY: the reference taken in `on_public_acquire` (or at creation).
        unsafe { release(self.device.as_ptr()) };
    }
}

impl DeviceChild for Query {
    fn device(&self) -> &Device {
        &self.device
    }
}

/// Nanoseconds of the process's monotonic clock.
fn now_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

impl Query {
    /// Checks a `D3D11_QUERY_DESC`.
    pub fn validate(kind: D3D11_QUERY, misc: u32) -> Result<(), HRESULT> {
        if !(D3D11_QUERY_EVENT..=D3D11_QUERY_SO_OVERFLOW_PREDICATE_STREAM3).contains(&kind) {
            // D3D11_QUERY: only the defined values.
            return Err(E_INVALIDARG);
        }
        let predicate = kind == D3D11_QUERY_OCCLUSION_PREDICATE
            || (kind >= D3D11_QUERY_SO_OVERFLOW_PREDICATE
                && kind % 2 == 1
                && kind != D3D11_QUERY_OCCLUSION);
        if misc & !(D3D11_QUERY_MISC_PREDICATEHINT as u32) != 0 || (misc != 0 && !predicate) {
            // D3D11_QUERY_MISC_FLAG: PREDICATEHINT is the only flag, and only for predicates.
            return Err(E_INVALIDARG);
        }
        match kind {
            D3D11_QUERY_EVENT | D3D11_QUERY_TIMESTAMP | D3D11_QUERY_TIMESTAMP_DISJOINT => Ok(()),
            // Occlusion, pipeline and stream-output statistics need a pipeline this runtime lacks.
            _ => Err(E_NOTIMPL),
        }
    }

    /// A new query (one public reference). `kind` passed [`Query::validate`].
    pub fn create(device: &Device, kind: D3D11_QUERY, misc: u32) -> *mut Query {
        let q = into_raw(Query {
            d3d11: &QUERY_VTBL,
            d3d10: ptr::null(),
            refs: RefCounts::new_public(),
            private: PrivateData::default(),
            device: PrivateRef::new(device),
            kind,
            misc,
            state: Mutex::new(State::Fresh),
        });
        // SAFETY: just created; its first public reference takes the device reference.
        unsafe { (*q).on_public_acquire() };
        q
    }

    /// `GetDataSize`.
    pub fn data_size(&self) -> u32 {
        match self.kind {
            D3D11_QUERY_EVENT => size_of::<BOOL>() as u32,
            D3D11_QUERY_TIMESTAMP => size_of::<u64>() as u32,
            D3D11_QUERY_TIMESTAMP_DISJOINT => {
                size_of::<D3D11_QUERY_DATA_TIMESTAMP_DISJOINT>() as u32
            }
            _ => 0,
        }
    }

    /// `Begin`: only TIMESTAMP_DISJOINT brackets work; "Begin is not valid for EVENT and
    /// TIMESTAMP queries", so it is ignored there.
    pub fn begin(&self) {
        if self.kind == D3D11_QUERY_TIMESTAMP_DISJOINT {
            *lock(&self.state) = State::Begun;
        }
    }

    /// `End`: issues the query.
    pub fn end(&self) {
        let b = &self.device.backend;
        *lock(&self.state) = State::Ended {
            fence: b.signal(),
            timestamp: now_ns(),
        };
    }

    /// `GetData`. `data` may be null with `size` 0 to poll.
    ///
    /// # Safety
    /// `data` is null or writable for `size` bytes.
    pub unsafe fn get_data(&self, data: *mut c_void, size: u32, flags: u32) -> HRESULT {
        if flags & !(D3D11_ASYNC_GETDATA_DONOTFLUSH as u32) != 0 {
            // D3D11_ASYNC_GETDATA_FLAG: only DONOTFLUSH.
            return E_INVALIDARG;
        }
        if (data.is_null() && size != 0) || (!data.is_null() && size != self.data_size()) {
            // GetData: "DataSize ... must match GetDataSize, or be 0 when pData is NULL".
            return E_INVALIDARG;
        }
        let State::Ended { fence, timestamp } = *lock(&self.state) else {
            // GetData on a query that was never issued (or is between Begin and End).
            return DXGI_ERROR_INVALID_CALL;
        };
        let b = &self.device.backend;
        if !b.is_complete(fence) {
            if flags & D3D11_ASYNC_GETDATA_DONOTFLUSH as u32 == 0 {
                b.flush();
            }
            if !b.is_complete(fence) {
                // GetData: "S_FALSE ... the data is not yet available".
                return S_FALSE;
            }
        }
        if data.is_null() {
            return S_OK;
        }
        // SAFETY: `data` is writable for `size == data_size()` bytes (contract, checked above).
        unsafe {
            match self.kind {
                D3D11_QUERY_EVENT => *data.cast::<BOOL>() = 1,
                D3D11_QUERY_TIMESTAMP => ptr::write_unaligned(data.cast::<u64>(), timestamp),
                _ => ptr::write_unaligned(
                    data.cast::<D3D11_QUERY_DATA_TIMESTAMP_DISJOINT>(),
                    D3D11_QUERY_DATA_TIMESTAMP_DISJOINT {
                        Frequency: 1_000_000_000,
                        Disjoint: 0,
                    },
                ),
            }
        }
        S_OK
    }
}

type Q = Query;
const QO: usize = QUERY_FACE;

static QUERY_VTBL: ID3D11QueryVtbl = ID3D11QueryVtbl {
    base: ID3D11AsynchronousVtbl {
        base: ID3D11DeviceChildVtbl {
            base: unknown_vtbl::<Q, QO>(),
            GetDevice: child_get_device::<Q, ID3D11DeviceChild, QO>,
            GetPrivateData: get_private_data::<Q, ID3D11DeviceChild, QO>,
            SetPrivateData: set_private_data::<Q, ID3D11DeviceChild, QO>,
            SetPrivateDataInterface: set_private_data_interface::<Q, ID3D11DeviceChild, QO>,
        },
        GetDataSize: query_get_data_size::<ID3D11Asynchronous, QO>,
    },
    GetDesc: get_desc,
};

/// `GetDataSize` of the D3D11 and D3D10 query faces.
///
/// # Safety
/// `this` is face `OFF` of a live query.
pub(crate) unsafe extern "system" fn query_get_data_size<I, const OFF: usize>(this: *mut I) -> u32 {
    // SAFETY: function contract.
    guard(0, || unsafe { object::<Query, I>(this, OFF) }.data_size())
}

/// `GetDesc` of face `OFF`: `describe` of the query's kind and misc flags in `*out` (nothing
/// when `out` is null).
///
/// # Safety
/// `this` is face `OFF` of a live query; `out` is null or writable.
pub(crate) unsafe fn query_get_desc<I, T, const OFF: usize>(
    this: *mut I,
    out: *mut T,
    describe: fn(D3D11_QUERY, u32) -> T,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: function contract.
        let q = unsafe { object::<Query, I>(this, OFF) };
        // SAFETY: non-null and writable (contract).
        unsafe { *out = describe(q.kind, q.misc) };
    })
}

unsafe extern "system" fn get_desc(this: *mut ID3D11Query, out: *mut D3D11_QUERY_DESC) {
    let describe = |Query, MiscFlags| D3D11_QUERY_DESC { Query, MiscFlags };
    // SAFETY: COM contract.
    unsafe { query_get_desc::<_, _, QO>(this, out, describe) }
}
