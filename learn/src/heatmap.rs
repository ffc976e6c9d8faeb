//! Attention weights as pictures in a failed check: when a check compares two matrices of
//! weights (every value between 0 and 1), the verdict draws both side by side, one shade per
//! weight, so a mask on the wrong side of the diagonal or a softmax over the wrong dim shows
//! at a glance.

/// The shades, from weight 0 to weight 1, each two characters wide so a cell is about square.
const SHADES: [&str; 5] = ["  ", "░░", "▒▒", "▓▓", "██"];

/// The two matrices a failed check names (`left`/`right` of `assert_eq!`, `got`/`want` of
/// `assert_close`), drawn side by side, if both are 2-D weights of the same shape.
pub fn heatmaps(message: &str) -> Option<String> {
    let [(a_label, a), (b_label, b)] = named_tensors(message)?;
    let (a, b) = (parse_matrix(&a)?, parse_matrix(&b)?);
    let weights = |m: &Vec<Vec<f32>>| m.iter().flatten().all(|v| (0.0..=1.0).contains(v));
    if a.len() != b.len() || a.first()?.len() != b.first()?.len() || !weights(&a) || !weights(&b) {
        return None;
    }
    let width = 2 * a[0].len();
    let mut out = format!("{a_label:<width$}   {b_label}\n");
    for (row_a, row_b) in a.iter().zip(&b) {
        out.push_str(&format!("{}   {}\n", shade_row(row_a), shade_row(row_b)));
    }
    out.push_str("(blank = 0, █ = 1)\n");
    Some(out)
}

fn shade_row(row: &[f32]) -> String {
    row.iter()
        .map(|&v| SHADES[((v * SHADES.len() as f32) as usize).min(SHADES.len() - 1)])
        .collect()
}

/// The printed tensors after `left:`/`right:` (as Rust's `Debug` quotes them) or after
/// `got`/`want`.
fn named_tensors(message: &str) -> Option<[(&'static str, String); 2]> {
    let after = |label: &str| -> Option<String> {
        let start = message.find(label)? + label.len();
        let rest = message[start..].trim_start().trim_start_matches('"');
        let text = rest.replace("\\n", "\n");
        let end = text.find(')')? + 1;
        text.starts_with("tensor(").then(|| text[..end].to_string())
    };
    for (a, b) in [("left:", "right:"), ("got ", "want ")] {
        if let (Some(x), Some(y)) = (after(a), after(b)) {
            let name = |l: &'static str| l.trim_end_matches(':').trim();
            return Some([(name(a), x), (name(b), y)]);
        }
    }
    None
}

/// The rows of a printed 2-D tensor, `tensor([[0.5, 0.5], [1.0, 0.0]])`.
fn parse_matrix(text: &str) -> Option<Vec<Vec<f32>>> {
    let body = text.strip_prefix("tensor([[")?;
    let body = &body[..body.find("]])")?];
    let rows: Option<Vec<Vec<f32>>> = body
        .split(']')
        .map(|row| row.trim_start_matches([',', ' ', '\n', '[']))
        .filter(|row| !row.trim().is_empty())
        .map(|row| row.split(',').map(|v| v.trim().parse().ok()).collect())
        .collect();
    let rows = rows?;
    let n = rows.first()?.len();
    rows.iter().all(|r| r.len() == n && n > 0).then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_two_weight_matrices_side_by_side() {
        let message = "assertion `left == right` failed\n  left: \"tensor([[1.0000, 0.0000],\\n        [0.5000, 0.5000]])\"\n right: \"tensor([[0.0000, 1.0000],\\n        [0.5000, 0.5000]])\"";
        let drawn = heatmaps(message).expect("two weight matrices");
        assert_eq!(
            drawn,
            "left   right\n██       ██\n▒▒▒▒   ▒▒▒▒\n(blank = 0, █ = 1)\n"
        );
    }

    #[test]
    fn reads_assert_close_and_skips_what_is_not_weights() {
        let close = "tensors are not close: at index 0\ngot  tensor([[0.2000, 0.8000]])\nwant tensor([[0.8000, 0.2000]])";
        assert!(
            heatmaps(close)
                .unwrap()
                .starts_with("got    want\n░░██   ██░░\n")
        );
        let scores = "got  tensor([[2.5000, -1.0000]])\nwant tensor([[0.8000, 0.2000]])";
        assert_eq!(heatmaps(scores), None, "scores are not weights");
        let vectors = "  left: \"tensor([0.5000, 0.5000])\"\n right: \"tensor([1., 0.])\"";
        assert_eq!(heatmaps(vectors), None, "1-D tensors are not drawn");
    }
}
