//! The formatter: one number style and one column width for a whole tensor.
//!
//! PyTorch (`_Formatter` in `torch/_tensor_str.py`) looks at the shown elements once,
//! before printing anything, and decides:
//!
//! * for floating dtypes, a [`FloatStyle`]: integer-looking (`3.`), fixed (`0.1376`) or
//!   scientific (`1.0000e-05`);
//! * a width: the longest cell among the values that made the decision.
//!
//! Every cell is then right-aligned to that width, so columns line up. Cells that took no
//! part in the decision (zeros, NaN, infinities) can be longer than the width; they are
//! printed whole, which is why `tensor([1., -inf])` is not aligned.

use super::Values;

/// Digits after the point (PyTorch's default `precision=4`).
const PRECISION: usize = 4;

/// How every float cell of one tensor is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FloatStyle {
    /// All decision values are whole numbers: `%.0f` plus a dot (`3.`, `-0.`, `1000.`),
    /// the dot telling the reader that this is still a float tensor.
    Integer,
    /// `%.4f`: `0.1376`, `-0.0000`, `10.0000`.
    Fixed,
    /// `%.4e` with Python's exponent: `1.0000e-05`, `-3.4028e+38`.
    Scientific,
}

/// One formatter for a whole tensor: it turns any element into its padded cell text.
#[derive(Debug)]
pub(super) struct Formatter<'a> {
    values: Values<'a>,
    /// `None` for integer and bool dtypes, whose cells are just their decimal text.
    style: Option<FloatStyle>,
    /// Every cell is left-padded with spaces to at least this many characters.
    width: usize,
}

impl<'a> Formatter<'a> {
    /// Decides the style and width from the elements at `shown` (flat row-major offsets).
    ///
    /// Only the shown elements count: in a summarised tensor, a hidden NaN or `1e20`
    /// changes nothing.
    pub(super) fn new(values: Values<'a>, shown: &[usize]) -> Self {
        let (style, width) = match values {
            Values::F32(v) => {
                float_style_and_width(shown.iter().map(|&i| f64::from(v[i])))
            }
            Values::F64(v) => float_style_and_width(shown.iter().map(|&i| v[i])),
            Values::I64(_) | Values::I32(_) | Values::Bool(_) => {
                // Integers and bools have nothing to decide: the width is simply the
                // longest shown cell.
                let longest =
                    shown.iter().map(|&i| plain_text(values, i).len()).max();
                (None, longest.unwrap_or(0).max(1))
            }
        };
        Formatter {
            values,
            style,
            width,
        }
    }

    /// The column width: every cell is at least this long.
    pub(super) fn width(&self) -> usize {
        self.width
    }

    /// The text of the element at flat offset `index`, right-aligned to the width.
    pub(super) fn cell(&self, index: usize) -> String {
        let text = match (self.style, self.values) {
            (Some(style), Values::F32(v)) => float_text(f64::from(v[index]), style),
            (Some(style), Values::F64(v)) => float_text(v[index], style),
            _ => plain_text(self.values, index),
        };
        // `{:>width$}` pads on the left and leaves longer text whole, exactly like
        // PyTorch's `(max_width - len(ret)) * " " + ret`.
        format!("{text:>width$}", width = self.width)
    }
}

/// The text of an integer or bool element: `-5`, `True`.
///
/// # Panics
/// On float values, which always have a [`FloatStyle`].
fn plain_text(values: Values<'_>, index: usize) -> String {
    match values {
        Values::I64(v) => v[index].to_string(),
        Values::I32(v) => v[index].to_string(),
        // Python's `str(True)`.
        Values::Bool(v) => String::from(if v[index] { "True" } else { "False" }),
        Values::F32(_) | Values::F64(_) => {
            unreachable!("float cells are written by float_text")
        }
    }
}

/// Decides the style and width of a float tensor from its shown values.
///
/// The decision uses only S, the shown values that are finite and non-zero: a column of
/// zeros, NaNs and infinities says nothing about the magnitudes to display.
fn float_style_and_width(
    shown: impl Iterator<Item = f64>,
) -> (Option<FloatStyle>, usize) {
    let s: Vec<f64> = shown.filter(|v| v.is_finite() && *v != 0.0).collect();
    let style = float_style(&s);
    // Each value of S contributes the length of its own cell; others contribute nothing.
    let width = s.iter().map(|&v| float_text(v, style).len()).max();
    (Some(style), width.unwrap_or(0).max(1))
}

/// The style chosen for S, the finite non-zero shown values.
fn float_style(s: &[f64]) -> FloatStyle {
    if s.is_empty() {
        return FloatStyle::Integer;
    }
    // The values arrive already widened to f64 and the comparisons below are done in
    // f64, as PyTorch does (it converts the min and max to Python floats, i.e. doubles).
    // This matters at the edges: float32(0.01) is slightly above 0.01, so 10 / it is
    // 999.99998 in float32 arithmetic but 1000.0000224 in double, which is > 1000.
    let lo = s.iter().map(|v| v.abs()).fold(f64::INFINITY, f64::min);
    let hi = s.iter().map(|v| v.abs()).fold(0.0, f64::max);
    // Strict comparisons: a ratio of exactly 1000 or a maximum of exactly 1e8 stays fixed.
    if hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4 {
        FloatStyle::Scientific
    } else if s.iter().all(|v| *v == v.ceil()) {
        FloatStyle::Integer
    } else {
        FloatStyle::Fixed
    }
}

/// The unpadded text of one float value in the given style.
fn float_text(x: f64, style: FloatStyle) -> String {
    // Python writes every NaN as `nan`, whatever its sign bit or payload (Rust: `NaN`),
    // and never adds the integer style's dot to `nan` / `inf`.
    if x.is_nan() {
        return String::from("nan");
    }
    if x.is_infinite() {
        return String::from(if x > 0.0 { "inf" } else { "-inf" });
    }
    // For finite values Rust's `{:.N}` rounds the exact binary value to N digits with
    // ties to even and keeps the sign of -0, exactly like Python's `%.Nf`.
    match style {
        FloatStyle::Integer => format!("{x:.0}."),
        FloatStyle::Fixed => format!("{x:.PRECISION$}"),
        FloatStyle::Scientific => scientific(x),
    }
}

/// Python's `%.4e` of a finite value: `1.0000e-05`, `-0.0000e+00`, `1.0000e-300`.
///
/// Rust's `{:.4e}` already gives the right (correctly rounded) mantissa, but writes the
/// exponent its own way (`1.0000e-5`, `5.0000e2`); C and Python always write its sign and at
/// least two digits.
fn scientific(x: f64) -> String {
    let rust = format!("{x:.PRECISION$e}");
    let (mantissa, exponent) = rust
        .split_once('e')
        .expect("Rust's {:e} output always contains an 'e'");
    let exponent: i32 = exponent
        .parse()
        .expect("Rust's {:e} exponent is a decimal integer");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style_of(values: &[f32]) -> FloatStyle {
        let widened: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        float_style(&widened)
    }

    #[test]
    fn thresholds_are_strict_and_evaluated_in_double() {
        use FloatStyle::*;
        // float32(1e-4) is 9.99999974738e-05, just below 1e-4.
        assert_eq!(style_of(&[1e-4]), Scientific);
        assert_eq!(style_of(&[f32::from_bits(1e-4_f32.to_bits() + 1)]), Fixed);
        assert_eq!(style_of(&[1.0, 1000.0]), Integer);
        assert_eq!(style_of(&[1.0, 1001.0]), Scientific);
        assert_eq!(style_of(&[0.001, 1.0]), Fixed);
        assert_eq!(style_of(&[0.01, 10.0]), Scientific);
        assert_eq!(style_of(&[0.1, 100.0]), Fixed);
        assert_eq!(style_of(&[1e8]), Integer);
        assert_eq!(style_of(&[100_000_008.0]), Scientific);
        assert_eq!(float_style(&[1e-4]), Fixed, "float64 can hold 1e-4 exactly");
        assert_eq!(style_of(&[]), Integer);
    }

    #[test]
    fn ties_round_to_even_on_the_exact_value() {
        assert_eq!(float_text(1.03125, FloatStyle::Fixed), "1.0312");
        assert_eq!(float_text(424.71875, FloatStyle::Fixed), "424.7188");
        assert_eq!(float_text(1.03125, FloatStyle::Scientific), "1.0312e+00");
        assert_eq!(float_text(750755.0, FloatStyle::Scientific), "7.5076e+05");
        assert_eq!(float_text(9.99996e5, FloatStyle::Scientific), "1.0000e+06");
    }

    #[test]
    fn negative_zero_keeps_its_sign() {
        assert_eq!(float_text(-0.0, FloatStyle::Integer), "-0.");
        assert_eq!(float_text(-0.0, FloatStyle::Fixed), "-0.0000");
        assert_eq!(float_text(-0.0, FloatStyle::Scientific), "-0.0000e+00");
    }

    #[test]
    fn non_finite_cells_have_no_sign_on_nan_and_no_dot() {
        let negative_nan = f64::from(f32::from_bits(0xffc0_0000));
        let payload_nan = f64::from(f32::from_bits(0x7f80_0001));
        for style in [
            FloatStyle::Integer,
            FloatStyle::Fixed,
            FloatStyle::Scientific,
        ] {
            assert_eq!(float_text(negative_nan, style), "nan");
            assert_eq!(float_text(payload_nan, style), "nan");
            assert_eq!(float_text(f64::INFINITY, style), "inf");
            assert_eq!(float_text(f64::NEG_INFINITY, style), "-inf");
        }
    }

    #[test]
    fn scientific_exponent_has_a_sign_and_at_least_two_digits() {
        assert_eq!(scientific(1e-5), "1.0000e-05");
        assert_eq!(scientific(f64::from(f32::MAX)), "3.4028e+38");
        assert_eq!(scientific(f64::from(f32::from_bits(1))), "1.4013e-45");
        assert_eq!(scientific(1e-300), "1.0000e-300");
        assert_eq!(scientific(-123.0), "-1.2300e+02");
    }

    proptest::proptest! {
        /// Rewriting Rust's exponent keeps the value and always gives Python's shape:
        /// optional `-`, one digit, `.`, four digits, `e`, sign, two or three digits.
        #[test]
        fn scientific_rewrite_keeps_the_value(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits);
            proptest::prop_assume!(x.is_finite());
            let text = scientific(x);
            let rust: f64 = format!("{x:.4e}").parse().unwrap();
            proptest::prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), rust.to_bits());
            let unsigned = text.strip_prefix('-').unwrap_or(&text);
            let (mantissa, exponent) = unsigned.split_once('e').unwrap();
            proptest::prop_assert_eq!(mantissa.len(), 6);
            proptest::prop_assert_eq!(&mantissa[1..2], ".");
            proptest::prop_assert!(exponent.starts_with(['+', '-']));
            proptest::prop_assert!((3..=4).contains(&exponent.len()));
        }
    }

    #[test]
    fn width_comes_from_finite_non_zero_values_only() {
        let values = [1.0, f32::NEG_INFINITY, 0.0, f32::NAN];
        let formatter = Formatter::new(Values::F32(&values), &[0, 1, 2, 3]);
        assert_eq!(formatter.width(), 2);
        assert_eq!(formatter.cell(0), "1.");
        assert_eq!(formatter.cell(1), "-inf");
        assert_eq!(formatter.cell(2), "0.");
        assert_eq!(formatter.cell(3), "nan");
    }

    #[test]
    fn rounding_up_can_widen_the_column() {
        let values = [9.99995_f32, 1.0];
        let formatter = Formatter::new(Values::F32(&values), &[0, 1]);
        assert_eq!(formatter.width(), 7);
        assert_eq!(formatter.cell(1), " 1.0000");
    }

    #[test]
    fn integer_and_bool_cells() {
        let ints = [-1_i64, 10];
        let formatter = Formatter::new(Values::I64(&ints), &[0, 1]);
        assert_eq!(
            (formatter.cell(0), formatter.cell(1)),
            ("-1".into(), "10".into())
        );
        let bools = [true, false];
        let formatter = Formatter::new(Values::Bool(&bools), &[0, 1]);
        assert_eq!(formatter.cell(0), " True");
        let min = [i64::MIN];
        assert_eq!(
            Formatter::new(Values::I64(&min), &[0]).cell(0),
            "-9223372036854775808"
        );
    }
}
