//! Numeric literals of the description (C spelling: `0x80004001`, `-1`, `16384`, `0.5`).

/// The value of an integer literal.
pub fn int_value(lit: &str) -> Option<i128> {
    let (neg, body) = match lit.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, lit),
    };
    let v = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) => i128::from_str_radix(hex, 16).ok()?,
        None => body.parse::<i128>().ok()?,
    };
    Some(if neg { -v } else { v })
}

pub fn is_float(lit: &str) -> bool {
    int_value(lit).is_none() && lit.parse::<f64>().is_ok()
}

/// Bits and signedness of a Rust primitive integer type.
pub fn int_shape(prim: &str) -> Option<(u32, bool)> {
    Some(match prim {
        "u8" => (8, false),
        "u16" => (16, false),
        "u32" => (32, false),
        "u64" => (64, false),
        "usize" => (64, false),
        "i8" => (8, true),
        "i16" => (16, true),
        "i32" => (32, true),
        "i64" => (64, true),
        _ => return None,
    })
}

/// The Rust expression of an integer literal for a constant whose type is `prim`. A value that
/// only fits the unsigned type of the same width (HRESULT 0x80004001) is written as a bit cast,
/// as C converts it.
pub fn rust_int(lit: &str, prim: &str) -> Result<String, String> {
    let v = int_value(lit).ok_or_else(|| format!("`{lit}` is not an integer"))?;
    let (bits, signed) =
        int_shape(prim).ok_or_else(|| format!("`{prim}` is not an integer type"))?;
    let (min, max) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if v >= min && v <= max {
        Ok(lit.to_string())
    } else if signed && v > max && v < (1i128 << bits) {
        Ok(format!("{lit}_u{bits} as {prim}"))
    } else {
        Err(format!("`{lit}` does not fit `{prim}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(int_value("0x80004001"), Some(0x8000_4001));
        assert_eq!(int_value("-1"), Some(-1));
        assert_eq!(int_value("0.5"), None);
        assert!(is_float("3.402823466e+38"));
        assert!(!is_float("16"));
    }

    #[test]
    fn rust_spelling_of_constants() {
        assert_eq!(rust_int("7", "u32").unwrap(), "7");
        assert_eq!(
            rust_int("0x80004001", "i32").unwrap(),
            "0x80004001_u32 as i32"
        );
        assert_eq!(
            rust_int("0xffffffff", "i32").unwrap(),
            "0xffffffff_u32 as i32"
        );
        assert_eq!(rust_int("-1", "i32").unwrap(), "-1");
        assert!(rust_int("-1", "u32").is_err());
        assert!(rust_int("0x100000000", "u32").is_err());
    }
}
