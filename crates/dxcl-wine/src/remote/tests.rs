//! The servers and the 32-bit frames, with servers that answer as `dxclcl.dll`'s do.

use super::*;
use std::sync::Arc;

/// `NEXT_REQUEST` as the unix call makes it: sleeps until a request or the close.
fn next_request(r: &mut Request) -> bool {
    let args = (r as *mut Request).cast();
    crate::wait::until(&REQUESTS, args, |a| {
        // SAFETY: `a` is the Request above, borrowed for this call only.
        try_next_request(unsafe { &mut *a.cast::<Request>() }).map(u32::from)
    }) == 1
}

/// Objects from here on are the 32-bit program's fakes of `serve32`.
const FAKE32: u64 = 0x100;

/// A server thread as `dxclcl.dll` runs it, recording (object, slot) of each method it calls
/// and answering with the slot; the fakes' methods go to `serve32`.
fn serve(calls: Arc<Mutex<Vec<(u64, u32)>>>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = Request {
            done_id: 0,
            done_ret: 0,
            done_ns: 0,
            id: 0,
            object: 0,
            slot: 0,
            nargs: 0,
            args: [0; MAX_METHOD_ARGS],
            first_object: 0,
            first_slot: 0,
            first_nargs: 0,
            first_args: [0; MAX_METHOD_ARGS],
        };
        while next_request(&mut r) {
            if r.first_object != 0 {
                lock(&calls).push((r.first_object, r.first_slot));
                first_done(&r);
            }
            lock(&calls).push((r.object, r.slot));
            let ret = if r.object >= FAKE32 {
                serve32(&r)
            } else {
                u64::from(r.slot)
            };
            (r.done_id, r.done_ret) = (r.id, ret);
        }
    })
}

/// Reads a 4-byte value the way 32-bit code does: its pointer must lie below 4 GiB.
fn at32(addr: u64) -> *mut u32 {
    assert!(
        addr != 0 && addr < 1 << 32,
        "{addr:#x} is out of a 32-bit program's reach"
    );
    addr as usize as *mut u32
}

/// The methods of a 32-bit program's objects, as its code sees them: every pointer argument
/// within 4 GiB, pointees in the 32-bit layout.
fn serve32(r: &Request) -> u64 {
    let a = &r.args;
    // SAFETY: the pointers were checked by at32 and are the frame's, laid out by the method.
    unsafe {
        match (r.object, r.slot) {
            // ID3D11DeviceContext::Map(pResource, Subresource, MapType, MapFlags, pMapped):
            // D3D11_MAPPED_SUBRESOURCE is pData, RowPitch, DepthPitch, 4 bytes each.
            (FAKE32, 14) => {
                assert_eq!((a[1], a[2], a[3]), (3, 1, 0));
                let m = at32(a[4]);
                *m = 0x1234_5678;
                *m.add(1) = 256;
                *m.add(2) = 4096;
                0
            }
            // ID3D11DeviceChild::GetPrivateData(guid, pDataSize, pData).
            (FAKE32, 4) => {
                let guid = *(at32(a[0]) as *const GUID);
                assert_eq!(guid, dxcl_abi::IID_ID3D11Texture2D);
                assert_eq!(*at32(a[1]), 8, "the size copied in");
                std::ptr::copy_nonoverlapping(c"32-bit!".as_ptr(), at32(a[2]).cast(), 8);
                *at32(a[1]) = 7;
                0
            }
            // IUnknown::QueryInterface(riid, ppv): a 4-byte interface pointer back.
            (FAKE32, 0) => {
                let iid = *(at32(a[0]) as *const GUID);
                if iid != dxcl_abi::IID_ID3D11Texture2D {
                    return E_NOINTERFACE as u32 as u64;
                }
                *at32(a[1]) = 0x2000;
                0
            }
            // AddRef, Release.
            (_, 1 | 2) => 1,
            other => panic!("no fake method {other:?}"),
        }
    }
}

/// The stand-in of interface `iid` for fake object `windows`.
fn stand_in(windows: u64, iid: &GUID) -> *mut c_void {
    wrap_owned(windows, remote_vtable(iid).expect("a stand-in table"))
}

/// A 32-bit program's block, as its `dxclcl.dll` hands it over.
fn low_block() -> (u64, u64) {
    const SIZE: usize = 256 * 1024;
    (crate::low::test_mapping(SIZE), SIZE as u64)
}

/// The queue and the 32-bit block are global: this is the only test that starts them. First
/// a 64-bit program's side, then a 32-bit one's.
#[test]
fn servers_run_deferred_unmaps_first_and_32_bit_objects_get_their_own_layout() {
    start(0, crate::multithread::remote_vtable);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let servers = [serve(calls.clone()), serve(calls.clone())];
    deferred_unmaps_run_before_the_next_call_and_only_then(&calls);
    lock(&calls).clear();
    a_32_bit_programs_objects_get_arguments_they_reach_in_their_layout(&calls);
    stop(false);
    for s in servers {
        s.join().unwrap();
    }
    assert!(!defer(6, 15, &[]));
    assert_eq!(run(6, 14, vec![]), None);
}

fn deferred_unmaps_run_before_the_next_call_and_only_then(calls: &Mutex<Vec<(u64, u32)>>) {
    assert!(defer(1, 15, &[7, 0]));
    // One is kept already: the second runs as a call, which takes the first one along.
    assert!(!defer(2, 15, &[8, 0]));
    assert_eq!(run(2, 15, vec![8, 0]), Some(15));
    assert_eq!(*lock(calls), [(1, 15), (2, 15)]);
    assert!(defer(3, 11, &[0]));
    // From another thread: the kept Unmap still runs first.
    let other = std::thread::spawn(|| run(4, 46, vec![]));
    assert_eq!(other.join().unwrap(), Some(46));
    assert_eq!(run(5, 14, vec![]), Some(14));
    assert_eq!(*lock(calls), [(1, 15), (2, 15), (3, 11), (4, 46), (5, 14)]);
}

fn a_32_bit_programs_objects_get_arguments_they_reach_in_their_layout(
    calls: &Mutex<Vec<(u64, u32)>>,
) {
    use dxcl_abi::*;
    let (base, size) = low_block();
    assert!(crate::low::set(base, size));
    let ctx = stand_in(FAKE32, &IID_ID3D11DeviceContext).cast::<ID3D11DeviceContext>();
    // SAFETY: the stand-in's table is ID3D11DeviceContext's; the arguments are the layer's.
    unsafe {
        let vt = &*(*ctx).lpVtbl;
        let mut mapped = D3D11_MAPPED_SUBRESOURCE {
            pData: std::ptr::null_mut(),
            RowPitch: 0,
            DepthPitch: 0,
        };
        let hr = (vt.Map)(ctx, std::ptr::null_mut(), 3, 1, 0, &mut mapped);
        assert_eq!(hr, 0);
        assert_eq!(
            (mapped.pData as u64, mapped.RowPitch, mapped.DepthPitch),
            (0x1234_5678, 256, 4096),
            "D3D11_MAPPED_SUBRESOURCE widened into the host's layout"
        );

        let mut size = 8u32;
        let mut data = [0u8; 8];
        let hr = (vt.base.GetPrivateData)(
            ctx.cast(),
            &IID_ID3D11Texture2D,
            &mut size,
            data.as_mut_ptr().cast(),
        );
        assert_eq!((hr, size, &data), (0, 7, b"32-bit!\0"));

        let mut out: *mut c_void = std::ptr::null_mut();
        let hr = query_interface(ctx.cast(), &IID_ID3D11Texture2D, &mut out);
        assert_eq!(hr, 0);
        assert_eq!(
            windows_of(out as u64),
            0x2000,
            "a 4-byte out pointer, widened"
        );

        // A pointer whose pointee the description leaves open fails without a call.
        let made = lock(calls).len();
        let mut rects = [0u32; 4];
        let mut n = 1u32;
        (vt.RSGetScissorRects)(ctx, &mut n, rects.as_mut_ptr().cast());
        assert_eq!(
            lock(calls).len(),
            made,
            "RSGetScissorRects reached the object"
        );
    }
    assert_eq!(
        *lock(calls),
        [(FAKE32, 14), (FAKE32, 4), (FAKE32, 0)],
        "Map, GetPrivateData, QueryInterface; not RSGetScissorRects"
    );
}
