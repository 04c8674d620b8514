//! `ID3D10Query`: the D3D10 face of a query. Direct3D 10 issues and reads queries through the
//! query itself (`ID3D10Asynchronous::Begin/End/GetData`), not through a context.

use std::ptr;

use super::super::abi::*;
use super::super::guard::guard;
use super::super::object::*;
use super::super::query::{query_get_data_size, query_get_desc, Query, D3D10_QUERY_FACE};
use super::child_get_device10;

type Q = Query;
const QO: usize = D3D10_QUERY_FACE;

static QUERY_VTBL: ID3D10QueryVtbl = ID3D10QueryVtbl {
    base: ID3D10AsynchronousVtbl {
        base: ID3D10DeviceChildVtbl {
            base: unknown_vtbl::<Q, QO>(),
            GetDevice: child_get_device10::<Q, ID3D10DeviceChild, QO>,
            GetPrivateData: get_private_data::<Q, ID3D10DeviceChild, QO>,
            SetPrivateData: set_private_data::<Q, ID3D10DeviceChild, QO>,
            SetPrivateDataInterface: set_private_data_interface::<Q, ID3D10DeviceChild, QO>,
        },
        Begin: begin,
        End: end,
        GetData: get_data,
        GetDataSize: query_get_data_size::<ID3D10Asynchronous, QO>,
    },
    GetDesc: get_desc,
};

/// Makes a query just created by a D3D10 device a D3D10 query.
///
/// # Safety
/// `q` was just created and no pointer to it has been handed out yet.
pub unsafe fn make_d3d10(q: *mut Query) {
    // SAFETY: nobody else uses the query yet (contract): the last step of its construction.
    unsafe { (*q).d3d10 = ptr::from_ref(&QUERY_VTBL).cast() };
}

/// # Safety
/// `this` is the D3D10 face of a live query.
unsafe fn query<'a, I>(this: *mut I) -> &'a Query {
    // SAFETY: function contract.
    unsafe { object::<Query, I>(this, QO) }
}

unsafe extern "system" fn begin(this: *mut ID3D10Asynchronous) {
    // SAFETY: COM contract.
    guard((), || unsafe { query(this) }.begin())
}

unsafe extern "system" fn end(this: *mut ID3D10Asynchronous) {
    // SAFETY: COM contract.
    guard((), || unsafe { query(this) }.end())
}

unsafe extern "system" fn get_data(
    this: *mut ID3D10Asynchronous,
    data: *mut c_void,
    size: u32,
    flags: u32,
) -> HRESULT {
    // SAFETY: COM contract: `pData` is null or writable for `DataSize` bytes. D3D10's GetData
    // flags (DONOTFLUSH) and result structures are D3D11's for the implemented query types.
    guard(E_FAIL, || unsafe {
        query(this).get_data(data, size, flags)
    })
}

unsafe extern "system" fn get_desc(this: *mut ID3D10Query, out: *mut D3D10_QUERY_DESC) {
    let describe = |Query, MiscFlags| D3D10_QUERY_DESC { Query, MiscFlags };
    // SAFETY: COM contract. The D3D10_QUERY values are D3D11's first eight.
    unsafe { query_get_desc::<_, _, QO>(this, out, describe) }
}
