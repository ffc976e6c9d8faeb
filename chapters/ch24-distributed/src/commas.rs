//! Counts printed as people read them.

/// `n` with commas between groups of three digits, as Python's `f"{n:,}"`.
///
/// # Shapes
/// A count.
pub fn commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
