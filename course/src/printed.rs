//! Two printed texts compared the way a reader compares them: the same words, and every
//! measured number the same up to its last printed digit.
//!
//! PyTorch prints a float with a fixed number of digits, so two runs whose numbers differ in
//! their last bits (another processor adding a product in another order, a GPU) print the
//! same text except where a number sits next to a rounding boundary, and there its last digit
//! moves by one. [`compare`] accepts exactly that:
//!
//! - all text that is not a number is equal;
//! - a number written without a decimal point or an exponent (a count, an id, a shape, a
//!   step) is equal;
//! - any other number is within one unit of its last printed digit (`0.2284` and `0.2285`,
//!   `1.0966e-04` and `1.0967e-04`), or, inside a printed `tensor(...)`, within 1e-6 of that
//!   tensor's largest magnitude: a small entry printed in scientific notation is a sum whose
//!   terms were as large as the tensor's largest entries, and carries their rounding.
//!
//! ```
//! use course::printed::compare;
//! let pytorch = "loss 0.2284, step 3\ntensor([1.0000e+00, 1.0966e-04])\n";
//! let ours = "loss 0.2285, step 3\ntensor([1.0000e+00, 1.0968e-04])\n";
//! let agreement = compare(ours, pytorch).unwrap();
//! assert_eq!((agreement.numbers, agreement.differing), (3, 2));
//! assert!(compare("loss 0.2287, step 3\n", "loss 0.2284, step 3\n").is_err());
//! assert!(compare("loss 0.2284, step 4\n", "loss 0.2284, step 3\n").is_err());
//! ```

use std::fmt;

/// How two texts that [`compare`] accepts differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// The numbers compared within their printed digits.
    pub numbers: usize,
    /// How many of them are printed differently.
    pub differing: usize,
    /// The largest difference, in units of the last printed digit.
    pub largest_units: f64,
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} printed numbers differ, the largest by {:.2} units of the last digit",
            self.differing, self.numbers, self.largest_units
        )
    }
}

/// Whether `ours` prints what `pytorch` prints, up to the last printed digit of each
/// number (see the [module](self)); the error names the first line that differs, both
/// numbers and their difference in units of the last digit.
pub fn compare(ours: &str, pytorch: &str) -> Result<Agreement, String> {
    let (a, b) = (tokens(ours), tokens(pytorch));
    let mut agreement = Agreement {
        numbers: 0,
        differing: 0,
        largest_units: 0.0,
    };
    for (x, y) in a.iter().zip(&b) {
        let line = y.line;
        let mismatch = |why: String| {
            format!(
                "line {}: {why}\n  ours:    {}\n  PyTorch: {}",
                line + 1,
                ours.lines().nth(x.line).unwrap_or(""),
                pytorch.lines().nth(line).unwrap_or("")
            )
        };
        match (&x.kind, &y.kind) {
            (Kind::Text, Kind::Text) if x.text == y.text => {}
            (Kind::Integer, Kind::Integer) if x.text == y.text => {}
            (Kind::Measured(p), Kind::Measured(q)) => {
                agreement.numbers += 1;
                if x.text == y.text {
                    continue;
                }
                agreement.differing += 1;
                let difference = (p.value - q.value).abs();
                let unit = p.unit.max(q.unit);
                let units = difference / unit;
                agreement.largest_units = agreement.largest_units.max(units);
                let scale = y.tensor_scale.unwrap_or(0.0);
                if !(units <= 1.0 + 1e-9 || difference <= 1e-6 * scale) {
                    return Err(mismatch(format!(
                        "{} against PyTorch's {}: {units:.2} units of the last digit ({unit:e}) apart{}",
                        x.text,
                        y.text,
                        match y.tensor_scale {
                            Some(scale) => {
                                format!(
                                    ", more than 1e-6 of the tensor's largest |value| {scale}"
                                )
                            }
                            None => String::new(),
                        }
                    )));
                }
            }
            _ => {
                return Err(mismatch(format!(
                    "`{}` where PyTorch printed `{}`",
                    x.text, y.text
                )));
            }
        }
    }
    if a.len() != b.len() {
        let (line, who) = match (a.get(b.len()), b.get(a.len())) {
            (Some(extra), _) => (extra.line, "ours goes on"),
            (_, Some(extra)) => (extra.line, "PyTorch's goes on"),
            _ => unreachable!("one list is longer"),
        };
        return Err(format!(
            "line {}: {who} where the other text ends",
            line + 1
        ));
    }
    Ok(agreement)
}

/// A piece of printed text: a run of text that is not a number, or one number.
#[derive(Debug)]
struct Token<'a> {
    text: &'a str,
    kind: Kind,
    /// The line it starts on, from 0.
    line: usize,
    /// The largest magnitude printed in the `tensor(...)` it belongs to, if any.
    tensor_scale: Option<f64>,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Text,
    /// Digits only: compared as text.
    Integer,
    /// A decimal point or an exponent: compared within its printed digits.
    Measured(Number),
}

#[derive(Debug, PartialEq)]
struct Number {
    value: f64,
    /// One unit of the last printed digit: `1e-4` for `0.2284`, `1e-8` for `1.0966e-04`.
    unit: f64,
}

/// Splits `text` into numbers and the runs of text between them, and gives each number
/// inside a `tensor(...)` the largest magnitude printed in it.
fn tokens(text: &str) -> Vec<Token<'_>> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut out: Vec<Token> = Vec::new();
    let (mut i, mut text_start, mut line, mut text_line) = (0, 0, 0, 0);
    // Open `tensor(` groups: the index of their first token and their parenthesis depth.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0usize;
    fn push_text<'a>(
        out: &mut Vec<Token<'a>>,
        text: &'a str,
        from: usize,
        to: usize,
        line: usize,
    ) {
        if from < to {
            out.push(Token {
                text: &text[from..to],
                kind: Kind::Text,
                line,
                tensor_scale: None,
            });
        }
    }
    while i < bytes.len() {
        let starts_word = i == 0 || !word(bytes[i - 1]);
        if starts_word
            && let Some((end, kind)) = number_at(text, i, !groups.is_empty())
        {
            push_text(&mut out, text, text_start, i, text_line);
            out.push(Token {
                text: &text[i..end],
                kind,
                line,
                tensor_scale: None,
            });
            i = end;
            (text_start, text_line) = (i, line);
            continue;
        }
        match bytes[i] {
            b'\n' => line += 1,
            b'(' => {
                depth += 1;
                if text[..=i].ends_with("tensor(") {
                    groups.push((out.len(), depth));
                }
            }
            b')' => {
                if groups.last().is_some_and(|&(_, d)| d == depth) {
                    let (first, _) = groups.pop().expect("an open group");
                    // Close the pending text so the group's tokens end here.
                    push_text(&mut out, text, text_start, i, text_line);
                    (text_start, text_line) = (i, line);
                    let scale = out[first..]
                        .iter()
                        .filter_map(|t| match &t.kind {
                            Kind::Measured(n) => Some(n.value.abs()),
                            Kind::Integer => t.text.parse::<f64>().ok().map(f64::abs),
                            Kind::Text => None,
                        })
                        .fold(0.0, f64::max);
                    for token in &mut out[first..] {
                        token.tensor_scale.get_or_insert(scale);
                    }
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    push_text(&mut out, text, text_start, bytes.len(), text_line);
    // Merge neighbouring runs of text that the groups split, so texts compare as wholes.
    let mut merged: Vec<Token> = Vec::new();
    for token in out {
        match merged.last_mut() {
            Some(last) if last.kind == Kind::Text && token.kind == Kind::Text => {
                let start = last.text.as_ptr() as usize - text.as_ptr() as usize;
                let end = token.text.as_ptr() as usize - text.as_ptr() as usize
                    + token.text.len();
                last.text = &text[start..end];
            }
            _ => merged.push(token),
        }
    }
    merged
}

/// The number that starts at byte `i` of `text`, if one does and no letter follows it: its
/// end and kind. A number is an optional `-`, digits, an optional `.` with digits, and an
/// optional exponent (`e-04`). A point with no digits after it belongs to the number only
/// inside a tensor (`tensor([1., 2.])`); elsewhere it ends a sentence.
fn number_at(text: &str, i: usize, in_tensor: bool) -> Option<(usize, Kind)> {
    let bytes = text.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut end = i + usize::from(bytes[i] == b'-');
    let whole = digits(end);
    if whole == 0 {
        return None;
    }
    end += whole;
    let mut decimals = None;
    if bytes.get(end) == Some(&b'.') {
        let n = digits(end + 1);
        if n > 0 || in_tensor {
            decimals = Some(n);
            end += 1 + n;
        }
    }
    let mut exponent = None;
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let n = digits(end + 1 + sign);
        if n > 0 {
            exponent = text[end + 1..end + 1 + sign + n].parse::<i32>().ok();
            end += 1 + sign + n;
        }
    }
    if bytes
        .get(end)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    let kind = match (decimals, exponent) {
        (None, None) => Kind::Integer,
        _ => {
            let places = decimals.unwrap_or(0) as i32 - exponent.unwrap_or(0);
            Kind::Measured(Number {
                value: text[i..end].parse().ok()?,
                unit: 10f64.powi(-places),
            })
        }
    };
    Some((end, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_told_from_words() {
        let kinds: Vec<(&str, bool)> =
            tokens("ch05 x1 [4, -7] 0.2284 -1.0966e-04 3x3 tensor(1.) in 60.\n")
                .iter()
                .map(|t| (t.text, matches!(t.kind, Kind::Measured(_))))
                .collect();
        assert_eq!(
            kinds,
            [
                ("ch05 x1 [", false),
                ("4", false),
                (", ", false),
                ("-7", false),
                ("] ", false),
                ("0.2284", true),
                (" ", false),
                ("-1.0966e-04", true),
                (" 3x3 tensor(", false),
                ("1.", true),
                (") in ", false),
                ("60", false),
                (".\n", false),
            ]
        );
        let units: Vec<f64> = tokens("0.2284 1.0966e-04 tensor(12.) 1e-6")
            .iter()
            .filter_map(|t| match &t.kind {
                Kind::Measured(n) => Some(n.unit),
                _ => None,
            })
            .collect();
        assert_eq!(units, [1e-4, 1e-8, 1.0, 1e-6]);
    }

    #[test]
    fn one_unit_of_the_last_digit_is_accepted_and_two_are_not() {
        assert!(compare("a 0.2285\n", "a 0.2284\n").is_ok());
        assert!(compare("a 0.2283\n", "a 0.2284\n").is_ok());
        let error = compare("x\na 0.2286\n", "x\na 0.2284\n").unwrap_err();
        assert!(
            error.starts_with("line 2: 0.2286 against PyTorch's 0.2284: 2.00 units"),
            "{error}"
        );
        assert!(compare("7.9160e-05", "7.9161e-05").is_ok());
        assert!(compare("7.9158e-05", "7.9161e-05").is_err());
    }

    #[test]
    fn a_small_entry_of_a_tensor_is_measured_against_the_tensor() {
        let pytorch = "tensor([[-1.2960e-01,  1.0966e-04]])";
        let ours = "tensor([[-1.2960e-01,  1.0968e-04]])";
        let agreement = compare(ours, pytorch).unwrap();
        assert_eq!(agreement.differing, 1);
        assert!((agreement.largest_units - 2.0).abs() < 1e-6);
        // The same two numbers on their own are two units apart: a wrong value.
        assert!(compare("1.0968e-04", "1.0966e-04").is_err());
        // A tensor's largest entry does not excuse a wrong one: 1e-6 of 0.1296 is 1.3e-7.
        assert!(compare("tensor([-1.2960e-01, 1.1966e-04])", pytorch).is_err());
    }

    #[test]
    fn words_integers_and_layout_must_be_equal() {
        assert!(compare("equal True\n", "equal False\n").is_err());
        assert!(compare("ids [1, 2]\n", "ids [1, 3]\n").is_err());
        assert!(compare("0.5000 \n", "0.5000\n").is_err());
        assert!(compare("a\nb 0.1\n", "a\nb 0.1\nc\n").is_err());
        assert_eq!(
            compare("same 1.0\n", "same 1.0\n"),
            Ok(Agreement {
                numbers: 1,
                differing: 0,
                largest_units: 0.0
            })
        );
    }
}
