//! Platform deviations from the OpenCL spec that the layer works around, each shown with plain
//! OpenCL objects (no Direct3D, no layer), so that `dxcl info` states them as the platform's
//! rather than hiding them. The conformance suite proves the same ones (docs/conformance.md).

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;

use super::plain::{name, ok, slot, Plain, Step};
use crate::cl::info::query_value;

/// The notes for `device` of `platform`: one sentence per deviation found; a probe that cannot
/// run says so instead.
pub fn platform_notes(
    t: &cl_icd_dispatch,
    platform: cl_platform_id,
    device: cl_device_id,
) -> Vec<String> {
    [
        default_device(t, platform),
        image_depth(t, device),
        early_finish(t, device),
    ]
    .into_iter()
    .filter_map(|r| match r {
        Ok(note) => note,
        Err(why) => Some(format!("(a probe could not run: {why})")),
    })
    .collect()
}

/// "CL_DEVICE_TYPE_DEFAULT: The default OpenCL device in the platform": a platform with devices
/// has one, so a context of that type must be made.
fn default_device(t: &cl_icd_dispatch, platform: cl_platform_id) -> Step<Option<String>> {
    let create = slot!(t, clCreateContextFromType);
    let props = [
        CL_CONTEXT_PLATFORM as cl_context_properties,
        platform as _,
        0,
    ];
    let mut err = CL_SUCCESS;
    // SAFETY: a zero-terminated property list alive for the call.
    let ctx = unsafe {
        create(
            props.as_ptr(),
            CL_DEVICE_TYPE_DEFAULT,
            None,
            std::ptr::null_mut(),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        if let Some(release) = t.clReleaseContext {
            // SAFETY: the context just made, released once.
            unsafe { release(ctx) };
        }
        return Ok(None);
    }
    Ok(Some(format!(
        "clCreateContextFromType(CL_DEVICE_TYPE_DEFAULT) of a plain context fails with {} \
         though the platform has devices; the layer's D3D contexts fail the same way",
        name(err)
    )))
}

/// "image_depth is the depth of the image in pixels. This is only used if the image is a 3D
/// image", and CL_IMAGE_DEPTH is 0 for a 2D image.
fn image_depth(t: &cl_icd_dispatch, device: cl_device_id) -> Step<Option<String>> {
    let info = slot!(t, clGetDeviceInfo);
    // SAFETY: our own buffer of the queried type's size.
    let images: cl_bool =
        query_value(|n, p, r| unsafe { info(device, CL_DEVICE_IMAGE_SUPPORT, n, p, r) })
            .map_err(|e| format!("clGetDeviceInfo failed with {e}"))?;
    if images == 0 {
        return Ok(None);
    }
    let cl = Plain::new(t, device)?;
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let img = cl.image_2d(format, (8, 8, 1), None)?;
    let get = slot!(t, clGetImageInfo);
    // SAFETY: our own buffer of the queried type's size.
    let depth: usize = query_value(|n, p, r| unsafe { get(img.mem, CL_IMAGE_DEPTH, n, p, r) })
        .map_err(|e| format!("clGetImageInfo(CL_IMAGE_DEPTH) failed with {e}"))?;
    Ok((depth != 0).then(|| {
        format!(
            "CL_IMAGE_DEPTH of a plain 2D image created with image_depth = 1 is {depth}; the \
             spec says 0 (the layer creates 2D images with image_depth = 0)"
        )
    }))
}

/// clFinish "blocks until all previously queued OpenCL commands in command_queue are issued to
/// the associated device and have completed": also commands an earlier clFlush sent on. A read
/// held back by a user event, clFlush, the event set, clFinish: the read must have completed.
fn early_finish(t: &cl_icd_dispatch, device: cl_device_id) -> Step<Option<String>> {
    const TRIES: usize = 10;
    const SIZE: usize = 1 << 20;
    let cl = Plain::new(t, device)?;
    let buf = cl.buffer(SIZE, None)?;
    let (fill, user, set, read, flush, finish) = (
        slot!(t, clEnqueueWriteBuffer),
        slot!(t, clCreateUserEvent),
        slot!(t, clSetUserEventStatus),
        slot!(t, clEnqueueReadBuffer),
        slot!(t, clFlush),
        slot!(t, clFinish),
    );
    let info = slot!(t, clGetEventInfo);
    let src = vec![0x5au8; SIZE];
    // SAFETY: a blocking write from `src`, which spans the buffer.
    let r = unsafe {
        fill(
            cl.queue,
            buf.mem,
            CL_TRUE,
            0,
            SIZE,
            src.as_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueWriteBuffer")?;
    let mut early = 0;
    for _ in 0..TRIES {
        let mut dst = vec![0u8; SIZE];
        let mut err = CL_SUCCESS;
        // SAFETY: the probe's own context.
        let gate = unsafe { user(cl.context, &mut err) };
        ok(err, "clCreateUserEvent")?;
        let mut ev = std::ptr::null_mut();
        // SAFETY: a read into `dst`, which outlives it: the event is waited for below before
        // `dst` goes, whatever clFinish does.
        let r = unsafe {
            read(
                cl.queue,
                buf.mem,
                CL_FALSE,
                0,
                SIZE,
                dst.as_mut_ptr().cast(),
                1,
                &gate,
                &mut ev,
            )
        };
        // SAFETY: the queue and the user event are the probe's own.
        unsafe {
            flush(cl.queue);
            set(gate, CL_COMPLETE as cl_int);
        }
        if r != CL_SUCCESS {
            cl.wait(gate)?;
            return Err(format!("clEnqueueReadBuffer failed with {r}"));
        }
        // SAFETY: as above.
        let f = unsafe { finish(cl.queue) };
        // After clFinish the read must have completed: its status says whether it has, without
        // touching the memory it may still be writing.
        // SAFETY: our own buffer of the queried type's size; the read's event we hold.
        let status: Result<cl_int, cl_int> =
            query_value(|n, p, r| unsafe { info(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r) });
        // Only now may `dst` go.
        cl.wait(ev)?;
        cl.wait(gate)?;
        ok(f, "clFinish")?;
        let status = status.map_err(|e| format!("clGetEventInfo failed with {e}"))?;
        if status != CL_COMPLETE as cl_int {
            early += 1;
        }
    }
    Ok((early > 0).then(|| {
        format!(
            "clFinish returned before a read that an earlier clFlush sent on had run, in {early} \
             of {TRIES} tries; the layer's clFinish waits for its own hand-off copies"
        )
    }))
}
