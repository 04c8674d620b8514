//! The typed description of every core entry point for 32-bit callers (Wine's new WoW64 mode):
//! `crates/dxcl-wine/src/wow64/gen.rs`.
//!
//! A 32-bit program's arguments reach the same unix call as a 64-bit one's, each widened to a
//! 64-bit slot, but what they point to keeps the 32-bit layout: handles, `size_t` and pointers are
//! 4 bytes there. For each parameter this says how the unix side must convert it (dxcl-wine's
//! `wow64` module does the converting). The types come from `CL/cl.h`; what the header does not
//! say, the length of each array parameter, comes from the table below, and a pointer parameter
//! the table does not cover is an error, so a new entry point cannot slip through unconverted.
//! (The Khronos registry's `cl.xml` gives no lengths either: its `<param>`s carry none.)

use std::fmt::Write;

use crate::opencl::{Function, Kind, Param};

/// Entry points a 32-bit program cannot use through the bridge, and why: each hands the program
/// an address of the host's memory, or hands the host a 32-bit program's code or address lists in
/// a form it would keep.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "clSVMAlloc",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clSVMFree",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMFree",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMMemcpy",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMMemFill",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMMap",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMUnmap",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clEnqueueSVMMigrateMem",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clSetKernelArgSVMPointer",
        "shared virtual memory lies where a 32-bit program cannot reach it",
    ),
    (
        "clSetKernelExecInfo",
        "its values are lists of shared virtual memory pointers",
    ),
    (
        "clEnqueueNativeKernel",
        "the host runs the function on a copy of its arguments in host memory",
    ),
];

/// Entry points whose 32-bit conversion is written by hand (dxcl-wine's `wow64` module):
/// `clSetKernelArg`'s value is a handle or plain bytes depending on the kernel's argument; a
/// mapping may lie beyond the program's reach, where it gets a copy (`wow64/mapping.rs`).
const BY_HAND: &[&str] = &[
    "clSetKernelArg",
    "clEnqueueMapBuffer",
    "clEnqueueMapImage",
    "clEnqueueUnmapMemObject",
];

/// Entry points the Windows side answers itself (addresses of its own functions).
const WINDOWS: &[&str] = &[
    "clGetExtensionFunctionAddress",
    "clGetExtensionFunctionAddressForPlatform",
];

/// How long an array parameter is: the candidates for the parameter giving its length (the first
/// the entry point has), or a fixed length.
fn length_of(name: &str) -> Option<Len> {
    Some(match name {
        "event" | "image_row_pitch" | "image_slice_pitch" => Len::One,
        "origin" | "region" | "src_origin" | "dst_origin" | "buffer_origin" | "host_origin" => {
            Len::Three
        }
        "event_wait_list" => Len::Param(&["num_events_in_wait_list"]),
        "event_list" => Len::Param(&["num_events"]),
        "devices" | "device_list" | "out_devices" | "binaries" => {
            Len::Param(&["num_entries", "num_devices"])
        }
        "platforms" => Len::Param(&["num_entries"]),
        "kernels" => Len::Param(&["num_kernels"]),
        "mem_objects" | "mem_list" => Len::Param(&["num_mem_objects"]),
        "input_programs" => Len::Param(&["num_input_programs"]),
        "input_headers" | "header_include_names" => Len::Param(&["num_input_headers"]),
        "strings" => Len::Param(&["count"]),
        "lengths" => Len::Param(&["count", "num_devices"]),
        "global_work_offset" | "global_work_size" | "local_work_size" => Len::Param(&["work_dim"]),
        _ => return None,
    })
}

enum Len {
    One,
    Three,
    Param(&'static [&'static str]),
}

fn index_of(f: &Function, name: &str) -> Option<usize> {
    f.params.iter().position(|p| p.name == name)
}

/// The Rust `Len` of array parameter `p`.
fn len(f: &Function, p: &Param) -> Result<String, String> {
    let at = |what: &str| format!("{}: `{}`: {what}", f.name, p.name);
    match length_of(&p.name).ok_or_else(|| at("an array with no length in wow64.rs"))? {
        Len::One => Ok("Len::One".into()),
        Len::Three => Ok("Len::Three".into()),
        Len::Param(names) => {
            let k = names
                .iter()
                .find_map(|n| index_of(f, n).filter(|k| f.params[*k].kind == Kind::Plain))
                .ok_or_else(|| at("none of its length parameters is there"))?;
            Ok(format!("Len::Arg({k})"))
        }
    }
}

fn is_info(f: &Function) -> bool {
    f.name.starts_with("clGet") && f.name.ends_with("Info") && index_of(f, "param_value").is_some()
}

/// The Rust `Arg` of parameter `p` of `f`.
fn arg(f: &Function, p: &Param) -> Result<String, String> {
    if p.callback {
        return Ok("Arg::Value".into());
    }
    let (to, konst) = match &p.kind {
        Kind::Plain | Kind::Size => return Ok("Arg::Value".into()),
        Kind::Handle => return Ok("Arg::Handle".into()),
        Kind::Pointer { to, konst } => (to.as_str(), *konst),
    };
    let info = is_info(f);
    let need = |name: &str| {
        index_of(f, name).ok_or_else(|| format!("{}: no `{name}` beside `{}`", f.name, p.name))
    };
    Ok(match (to, konst, p.name.as_str()) {
        ("handle", true, _) => format!("Arg::HandlesIn({})", len(f, p)?),
        ("handle", false, _) => format!("Arg::HandlesOut({})", len(f, p)?),
        ("size_t", true, _) => format!("Arg::SizesIn({})", len(f, p)?),
        ("size_t", false, "param_value_size_ret") if info => "Arg::InfoSizeRet".into(),
        ("size_t", false, _) => {
            return Err(format!(
                "{}: `{}`: a size_t out: convert it in wow64",
                f.name, p.name
            ))
        }
        ("intptr_t", true, _) => match f.name.as_str() {
            "clCreateContext" | "clCreateContextFromType" => "Arg::Props(Props::Context)".into(),
            "clCreateSubDevices" => "Arg::Props(Props::Partition)".into(),
            "clCreatePipe" => "Arg::Props(Props::Pipe)".into(),
            _ => {
                return Err(format!(
                    "{}: `{}`: an unknown property list",
                    f.name, p.name
                ))
            }
        },
        ("pointer", true, _) => format!("Arg::PointersIn({})", len(f, p)?),
        ("cl_image_desc", true, _) => "Arg::ImageDesc".into(),
        ("void", true, "buffer_create_info") => "Arg::BufferRegion".into(),
        ("void", true, "input_value") => {
            format!("Arg::SizeBytesIn({})", need("input_value_size")?)
        }
        ("void", false, "param_value") if info => format!(
            "Arg::InfoValue {{ name: {}, size: {}, size_ret: {} }}",
            need("param_name")?,
            need("param_value_size")?,
            need("param_value_size_ret")?
        ),
        ("pointer", false, _) => {
            return Err(format!("{}: `{}`: a pointer list out", f.name, p.name))
        }
        // Bytes, fixed-width integers and structures of them: the same in both layouts.
        _ => "Arg::Value".into(),
    })
}

fn shape(f: &Function) -> Result<String, String> {
    if WINDOWS.contains(&f.name.as_str()) {
        return Ok("Shape::Windows".into());
    }
    let errcode = f
        .params
        .iter()
        .rposition(|p| p.name == "errcode_ret")
        .filter(|k| k + 1 == f.params.len());
    if let Some((_, why)) = UNSUPPORTED.iter().find(|(n, _)| *n == f.name) {
        let fail = match (&f.ret_kind, errcode) {
            (Kind::Handle | Kind::Pointer { .. }, Some(k)) => format!("Fail::Errcode({k})"),
            (Kind::Handle | Kind::Pointer { .. }, None) => "Fail::Null".into(),
            _ => "Fail::Code".into(),
        };
        return Ok(format!("Shape::Unsupported({why:?}, {fail})"));
    }
    if BY_HAND.contains(&f.name.as_str()) {
        return Ok("Shape::ByHand".into());
    }
    let args = f
        .params
        .iter()
        .map(|p| arg(f, p))
        .collect::<Result<Vec<_>, _>>()?;
    let ret = match &f.ret_kind {
        Kind::Handle if errcode.is_some() => "Ret::Handle",
        Kind::Handle => return Err(format!("{}: returns a handle, no errcode_ret last", f.name)),
        Kind::Pointer { .. } => {
            return Err(format!(
                "{}: returns an address: list it as unsupported",
                f.name
            ))
        }
        _ => "Ret::Value",
    };
    Ok(format!("Shape::Call(&[{}], {ret})", args.join(", ")))
}

/// `crates/dxcl-wine/src/wow64/gen.rs`.
pub fn gen_rs(fns: &[Function]) -> Result<String, String> {
    let mut s = String::from(
        "//! Generated by dxcl-gen from the Khronos CL/cl.h and its wow64.rs: do not edit.\n\n\
         use super::{Arg, Fail, Len, Props, Ret, Shape};\n\n",
    );
    let _ = writeln!(
        s,
        "/// Each entry point's parameters as a 32-bit caller lays them out, by entry-point number.\n\
         pub const SHAPES: [Shape; {}] = [",
        fns.len()
    );
    for f in fns {
        let _ = writeln!(s, "    // {}\n    {},", f.name, shape(f)?);
    }
    s.push_str("];\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "typedef struct _cl_event * cl_event;\ntypedef struct _cl_kernel * cl_kernel;\n\
        typedef struct _cl_command_queue * cl_command_queue;\n\
        extern CL_API_ENTRY cl_int CL_API_CALL\nclEnqueueNDRangeKernel(cl_command_queue command_queue,\n\
        cl_kernel kernel, cl_uint work_dim, const size_t * global_work_offset, const size_t * global_work_size,\n\
        const size_t * local_work_size, cl_uint num_events_in_wait_list, const cl_event * event_wait_list,\n\
        cl_event * event) CL_API_SUFFIX__VERSION_1_0;\n\
        extern CL_API_ENTRY cl_int CL_API_CALL\nclOdd(cl_command_queue q, const cl_event * events) CL_API_SUFFIX;\n";

    #[test]
    fn arrays_take_their_length_parameters_and_handles_their_table() {
        let fns = crate::opencl::functions(SAMPLE).unwrap();
        assert_eq!(
            shape(&fns[0]).unwrap(),
            "Shape::Call(&[Arg::Handle, Arg::Handle, Arg::Value, Arg::SizesIn(Len::Arg(2)), \
             Arg::SizesIn(Len::Arg(2)), Arg::SizesIn(Len::Arg(2)), Arg::Value, \
             Arg::HandlesIn(Len::Arg(6)), Arg::HandlesOut(Len::One)], Ret::Value)"
        );
    }

    #[test]
    fn an_array_of_unknown_length_is_an_error() {
        let fns = crate::opencl::functions(SAMPLE).unwrap();
        let e = shape(&fns[1]).unwrap_err();
        assert!(e.contains("clOdd: `events`"), "{e}");
    }
}
