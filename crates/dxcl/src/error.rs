//! Errors: the OpenCL status codes the sharing calls return, by their specification names.

use std::fmt;

use opencl3::error_codes::ClError;
use opencl3::types::cl_int;

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

// One table gives the variants, their codes and their CL names, so the three cannot drift.
macro_rules! cl_errors {
    ($($(#[$doc:meta])* $variant:ident = $code:literal, $name:literal;)*) => {
        /// An error from a sharing call: the OpenCL status by its specification name, or a failure
        /// that happens before any OpenCL call (no platform, a Direct3D `HRESULT`).
        ///
        /// The KHR and NV extensions use the same values; [`Display`](fmt::Display) prints the KHR
        /// name and the code, e.g. `CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR (-1008)`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Error {
            $($(#[$doc])* #[doc = concat!("`", $name, "` (", stringify!($code), ")")] $variant,)*
            /// Any other OpenCL status code.
            Other(cl_int),
            /// No OpenCL platform offers the named extension with a device for the Direct3D
            /// device: the layer is not loaded (`OPENCL_LAYERS`) or no platform has devices.
            NoPlatform(&'static str),
            /// A Direct3D call failed with this `HRESULT`.
            D3d(i32),
        }

        impl Error {
            /// The error of an OpenCL status code (`CL_SUCCESS` is not an error; it maps to
            /// `Other(0)`).
            pub fn from_code(code: cl_int) -> Error {
                match code {
                    $($code => Error::$variant,)*
                    other => Error::Other(other),
                }
            }

            /// The OpenCL status code, when this error is one.
            pub fn code(&self) -> Option<cl_int> {
                match self {
                    $(Error::$variant => Some($code),)*
                    Error::Other(code) => Some(*code),
                    Error::NoPlatform(_) | Error::D3d(_) => None,
                }
            }

            /// The specification's name for the status (`"CL_INVALID_D3D11_RESOURCE_KHR"`), or
            /// `None` for codes this crate does not name and for non-OpenCL failures.
            pub fn name(&self) -> Option<&'static str> {
                match self {
                    $(Error::$variant => Some($name),)*
                    _ => None,
                }
            }
        }
    };
}

cl_errors! {
    InvalidD3D10Device = -1002, "CL_INVALID_D3D10_DEVICE_KHR";
    InvalidD3D10Resource = -1003, "CL_INVALID_D3D10_RESOURCE_KHR";
    D3D10ResourceAlreadyAcquired = -1004, "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR";
    D3D10ResourceNotAcquired = -1005, "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR";
    InvalidD3D11Device = -1006, "CL_INVALID_D3D11_DEVICE_KHR";
    InvalidD3D11Resource = -1007, "CL_INVALID_D3D11_RESOURCE_KHR";
    D3D11ResourceAlreadyAcquired = -1008, "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR";
    D3D11ResourceNotAcquired = -1009, "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR";
    DeviceNotFound = -1, "CL_DEVICE_NOT_FOUND";
    OutOfResources = -5, "CL_OUT_OF_RESOURCES";
    OutOfHostMemory = -6, "CL_OUT_OF_HOST_MEMORY";
    ImageFormatNotSupported = -10, "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    InvalidValue = -30, "CL_INVALID_VALUE";
    InvalidPlatform = -32, "CL_INVALID_PLATFORM";
    InvalidDevice = -33, "CL_INVALID_DEVICE";
    InvalidContext = -34, "CL_INVALID_CONTEXT";
    InvalidCommandQueue = -36, "CL_INVALID_COMMAND_QUEUE";
    InvalidMemObject = -38, "CL_INVALID_MEM_OBJECT";
    InvalidImageFormatDescriptor = -39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    InvalidEventWaitList = -57, "CL_INVALID_EVENT_WAIT_LIST";
    InvalidOperation = -59, "CL_INVALID_OPERATION";
    InvalidProperty = -64, "CL_INVALID_PROPERTY";
}

impl Error {
    /// `Ok(())` for `CL_SUCCESS`, the error otherwise.
    pub(crate) fn check(code: cl_int) -> Result<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(Error::from_code(code))
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self, self.name()) {
            (_, Some(name)) => write!(f, "{name} ({})", self.code().unwrap_or_default()),
            (Error::Other(code), None) => write!(f, "OpenCL error {code}"),
            (Error::NoPlatform(ext), None) => write!(
                f,
                "no OpenCL platform offers {ext} for this Direct3D device \
                 (is OPENCL_LAYERS set to libdxcl_layer.so?)"
            ),
            (Error::D3d(hr), None) => write!(f, "Direct3D call failed with 0x{:08x}", *hr as u32),
            (_, None) => write!(f, "{self:?}"),
        }
    }
}

impl std::error::Error for Error {}

/// opencl3's errors carry the bare status: `?` on an opencl3 call gives its named [`Error`].
impl From<ClError> for Error {
    fn from(e: ClError) -> Error {
        Error::from_code(e.0)
    }
}

/// And back, for code whose own error type is opencl3's (`NoPlatform` and `D3d` become
/// `CL_INVALID_VALUE`, the nearest status).
impl From<Error> for ClError {
    fn from(e: Error) -> ClError {
        ClError(e.code().unwrap_or(-30))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_display_their_names() {
        for code in -1100..=0 {
            let e = Error::from_code(code);
            assert_eq!(e.code(), Some(code));
            if let Some(name) = e.name() {
                assert_eq!(e.to_string(), format!("{name} ({code})"));
            } else {
                assert_eq!(e, Error::Other(code));
            }
        }
        assert_eq!(
            Error::from_code(-1008).to_string(),
            "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR (-1008)"
        );
        assert_eq!(Error::from_code(-34), Error::InvalidContext);
        assert_eq!(Error::from(ClError(-1009)), Error::D3D11ResourceNotAcquired);
        assert_eq!(ClError::from(Error::InvalidD3D10Resource).0, -1003);
    }

    #[test]
    fn names_match_the_khronos_tokens() {
        use cl3::{d3d10 as cl_d3d10, d3d11 as cl_d3d11};
        let pairs = [
            (
                Error::InvalidD3D10Device,
                cl_d3d10::CL_INVALID_D3D10_DEVICE_KHR,
            ),
            (
                Error::InvalidD3D10Resource,
                cl_d3d10::CL_INVALID_D3D10_RESOURCE_KHR,
            ),
            (
                Error::D3D10ResourceAlreadyAcquired,
                cl_d3d10::CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR,
            ),
            (
                Error::D3D10ResourceNotAcquired,
                cl_d3d10::CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR,
            ),
            (
                Error::InvalidD3D11Device,
                cl_d3d11::CL_INVALID_D3D11_DEVICE_KHR,
            ),
            (
                Error::InvalidD3D11Resource,
                cl_d3d11::CL_INVALID_D3D11_RESOURCE_KHR,
            ),
            (
                Error::D3D11ResourceAlreadyAcquired,
                cl_d3d11::CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR,
            ),
            (
                Error::D3D11ResourceNotAcquired,
                cl_d3d11::CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR,
            ),
        ];
        for (e, code) in pairs {
            assert_eq!(e.code(), Some(code));
        }
    }

    #[test]
    fn non_cl_failures_have_no_code() {
        assert_eq!(Error::D3d(-2147467263).code(), None);
        assert!(Error::NoPlatform("cl_khr_d3d11_sharing")
            .to_string()
            .contains("OPENCL_LAYERS"));
        assert_eq!(
            Error::D3d(0x80004001u32 as i32).to_string(),
            "Direct3D call failed with 0x80004001"
        );
    }
}
