//! A float32 with all its digits: Python's `f"{x:.9g}"` of `t.item()`.
//!
//! Nine significant digits are always enough to tell a float32 from its neighbours, so two
//! values that print the same here are the same float32.

/// `f"{x:.9g}"` for the `f32` `x` (widened to `f64` first, as `.item()` does): nine
/// significant digits, trailing zeros dropped, scientific notation (`2.38418579e-07`)
/// below `1e-4` and from `1e9` on.
///
/// # Shapes
/// A scalar.
pub fn full_precision(x: f32) -> String {
    let x = f64::from(x);
    if x == 0.0 || !x.is_finite() {
        return match x {
            v if v.is_nan() => "nan".to_string(),
            v if v.is_infinite() => {
                (if v > 0.0 { "inf" } else { "-inf" }).to_string()
            }
            v => (if v.is_sign_negative() { "-0" } else { "0" }).to_string(),
        };
    }
    // Rounded to 9 significant digits first: the exponent is the rounded value's.
    let scientific = format!("{x:.8e}");
    let (mantissa, exponent) =
        scientific.split_once('e').expect("Rust's {:e} has an e");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    if (-4..9).contains(&exponent) {
        let decimals = (8 - exponent) as usize;
        strip_zeros(format!("{x:.decimals$}"))
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_zeros(mantissa.to_string()),
            exponent.abs()
        )
    }
}

/// Drops the trailing zeros of a decimal fraction, and its point if nothing follows it.
fn strip_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// How many float32 values lie from `a` to `b` (0 when equal), for two values of the same
/// sign: the distance of their bit patterns.
///
/// # Shapes
/// Scalars.
pub fn float32_steps(a: f32, b: f32) -> u32 {
    a.to_bits().abs_diff(b.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_python() {
        assert_eq!(full_precision(0.228_407_3), "0.228407294");
        assert_eq!(full_precision(2.384_185_8e-7), "2.38418579e-07");
        assert_eq!(full_precision(0.0), "0");
        assert_eq!(full_precision(1.5), "1.5");
        assert_eq!(full_precision(-1234.5), "-1234.5");
        assert_eq!(full_precision(1e-4), "9.99999975e-05");
        assert_eq!(full_precision(3e9), "3e+09");
        assert_eq!(float32_steps(1.0, f32::from_bits(1.0f32.to_bits() + 4)), 4);
    }
}
