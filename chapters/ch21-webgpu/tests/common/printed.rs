//! Printed outputs compared "within one unit of the last printed digit, all other text
//! exactly": how a GPU's output is compared with PyTorch's.
//!
//! A stand-in until the course crate has the same comparison for the libtorch suite; it
//! is named so that it can be swapped for that one.

/// Compares `ours` with `pytorch` line by line: all text equal except numbers, and each
/// number within one unit of its last printed digit (`0.0907` and `0.0908` pass,
/// `0.0906` and `0.0908` do not; `2.06115369e-09` may differ by `1e-17`). Returns the
/// first difference, with its line.
pub fn within_one_unit_of_last_digit(ours: &str, pytorch: &str) -> Result<(), String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), pytorch.lines().collect());
    if a.len() != b.len() {
        return Err(format!("{} lines, PyTorch printed {}", a.len(), b.len()));
    }
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        if let Err(why) = line_within(x, y) {
            return Err(format!(
                "line {}: {why}\n  ours:    {x}\n  pytorch: {y}",
                n + 1
            ));
        }
    }
    Ok(())
}

/// One piece of a line: text, or a number as printed.
#[derive(Debug, PartialEq)]
enum Piece<'a> {
    Text(&'a str),
    Number(&'a str),
}

/// Splits a line into numbers (an optional `-`, digits, an optional fraction, an optional
/// exponent) and the text between them. Digits inside a word (`ch21`, `x2`) are text.
fn pieces(line: &str) -> Vec<Piece<'_>> {
    let bytes = line.as_bytes();
    let mut pieces = Vec::new();
    let (mut i, mut text_start) = (0, 0);
    while i < bytes.len() {
        if bytes[i].is_ascii_alphabetic() || bytes[i] == b'_' {
            // A word, digits and all.
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            continue;
        }
        let starts_number = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        i += usize::from(bytes[i] == b'-');
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'.' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < bytes.len() && bytes[i] == b'e' {
            let mut j = i + 1;
            if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
                j += 1;
            }
            if j < bytes.len() && bytes[j].is_ascii_digit() {
                while j < bytes.len() && bytes[j].is_ascii_digit() {
                    j += 1;
                }
                i = j;
            }
        }
        if text_start < start {
            pieces.push(Piece::Text(&line[text_start..start]));
        }
        pieces.push(Piece::Number(&line[start..i]));
        text_start = i;
    }
    if text_start < line.len() {
        pieces.push(Piece::Text(&line[text_start..]));
    }
    pieces
}

/// One unit of the last printed digit of `number`: `0.0001` for `0.0907`, `1` for
/// `20100`, `1e-17` for `2.06115369e-09`.
fn last_digit_unit(number: &str) -> f64 {
    let (mantissa, exponent) = match number.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (number, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    10f64.powi(exponent - decimals)
}

fn line_within(ours: &str, pytorch: &str) -> Result<(), String> {
    let (a, b) = (pieces(ours), pieces(pytorch));
    if a.len() != b.len() {
        return Err("the lines differ in more than numbers".into());
    }
    for (x, y) in a.iter().zip(&b) {
        match (x, y) {
            (Piece::Text(x), Piece::Text(y)) if x == y => {}
            (Piece::Number(x), Piece::Number(y)) => {
                let unit = last_digit_unit(y);
                if last_digit_unit(x) != unit {
                    return Err(format!("{x} and {y} are printed to different digits"));
                }
                let (p, q) = (x.parse::<f64>(), y.parse::<f64>());
                let (Ok(p), Ok(q)) = (p, q) else {
                    return Err(format!("{x} or {y} is not a number"));
                };
                // Half a unit of slack for the decimal-to-binary conversion of both sides.
                if (p - q).abs() > 1.5 * unit {
                    return Err(format!("{x} and {y} differ by more than one unit"));
                }
            }
            _ => return Err("the lines differ in more than numbers".into()),
        }
    }
    Ok(())
}

#[test]
fn numbers_may_differ_by_one_unit_of_their_last_digit() {
    let ok = within_one_unit_of_last_digit;
    assert!(ok("tensor([ 0.0907, -0.1428])", "tensor([ 0.0908, -0.1427])").is_ok());
    assert!(ok("tensor([ 0.0906])", "tensor([ 0.0908])").is_err());
    assert!(ok("x: 2.06115369e-09", "x: 2.06115370e-09").is_ok());
    assert!(ok("x: 2.06115369e-09", "x: 2.06115371e-09").is_err());
    assert!(ok("read 20100 keys", "read 20101 keys").is_ok());
    assert!(ok("read 20100 keys", "read 20102 keys").is_err());
    assert!(ok("True", "False").is_err());
    assert!(
        ok("tensor([ 0.0907])", "tensor([0.0907])").is_err(),
        "spacing is text"
    );
    assert!(ok("0.091", "0.0910").is_err(), "the same digits");
    assert!(ok("ch21: 1", "ch21: 1").is_ok());
    assert!(
        ok("ch21: 1", "ch22: 1").is_err(),
        "digits in a word are text"
    );
    assert!(ok("a\nb", "a").is_err());
    assert_eq!(last_digit_unit("0.0907"), 1e-4);
    assert_eq!(last_digit_unit("-20100"), 1.0);
    assert!((last_digit_unit("2.06115369e-09") - 1e-17).abs() < 1e-30);
}
