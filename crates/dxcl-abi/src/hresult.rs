//! HRESULT tests; the codes themselves are generated (`gen/win_types.rs`).

use crate::HRESULT;

/// The SDK's `SUCCEEDED(hr)`: the severity bit is clear.
#[allow(non_snake_case)] // the SDK's name
#[inline]
pub const fn SUCCEEDED(hr: HRESULT) -> bool {
    hr >= 0
}

/// The SDK's `FAILED(hr)`: the severity bit is set.
#[allow(non_snake_case)] // the SDK's name
#[inline]
pub const fn FAILED(hr: HRESULT) -> bool {
    hr < 0
}

#[cfg(test)]
mod tests {
    use crate::*;

    #[test]
    fn codes_and_tests() {
        assert!(SUCCEEDED(S_OK) && SUCCEEDED(S_FALSE) && SUCCEEDED(DXGI_STATUS_OCCLUDED));
        assert!(FAILED(E_NOTIMPL) && FAILED(DXGI_ERROR_WAS_STILL_DRAWING));
        assert_eq!(E_INVALIDARG as u32, 0x8007_0057);
        assert_eq!(DXGI_ERROR_NOT_FOUND as u32, 0x887A_0002);
    }
}
