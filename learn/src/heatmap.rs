//! Attention weights as pictures in a failed check: when a check compares two matrices of
//! weights (every value between 0 and 1), the verdict draws both side by side with
//! `shared::viz`, one shaded cell per weight, so a mask on the wrong side of the diagonal
//! or a softmax over the wrong dim shows at a glance.
//!
//! The verdict only has the test's message, so this module reads the two tensors back
//! from their printed text. A message that already draws them (`assert_close` does) is
//! left as it is.

use shared::Tensor;
use shared::viz::{self, side_by_side};

/// What every drawing ends with: the message already has its pictures.
const LEGEND: &str = "(blank = 0, ";

/// The two matrices a failed check names (`left`/`right` of `assert_eq!`, `got`/`want` of
/// `assert_close`), drawn side by side, if both are 2-D weights of the same shape and the
/// message does not draw them already.
pub fn heatmaps(message: &str) -> Option<String> {
    if message.contains(LEGEND) {
        return None;
    }
    let [(a_label, a), (b_label, b)] = named_tensors(message)?;
    let (a, b) = (parse_matrix(&a)?, parse_matrix(&b)?);
    let a = viz::heatmap_indexed(&a).ok()?.title(a_label);
    let b = viz::heatmap_indexed(&b).ok()?.title(b_label);
    let same_shape = (a.rows.len(), a.cols.len()) == (b.rows.len(), b.cols.len());
    (same_shape && a.is_weights() && b.is_weights()).then(|| side_by_side(&a, &b))
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

/// A printed 2-D tensor, `tensor([[0.5, 0.5], [1.0, 0.0]])`, read back.
///
/// # Shapes
/// Returns `[rows, cols]`.
fn parse_matrix(text: &str) -> Option<Tensor> {
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
    if !rows.iter().all(|r| r.len() == n && n > 0) {
        return None;
    }
    let shape = [rows.len(), n];
    Some(Tensor::from_vec(rows.concat(), &shape))
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
            "left              right\n\
             \x20   0      1          0      1\n\
             0 ██1.00      0   0      0 ██1.00\n\
             1 ▒▒0.50 ▒▒0.50   1 ▒▒0.50 ▒▒0.50\n\
             (blank = 0, ██ = 1.00)\n"
        );
    }

    #[test]
    fn reads_got_and_want_and_skips_what_is_not_weights() {
        let close = "tensors are not close: at index 0\ngot  tensor([[0.2000, 0.8000]])\nwant tensor([[0.8000, 0.2000]])";
        let drawn = heatmaps(close).unwrap();
        assert!(drawn.starts_with("got               want\n"), "{drawn}");
        assert!(
            drawn.contains("0 ░░0.20 ▓▓0.80   0 ▓▓0.80 ░░0.20\n"),
            "{drawn}"
        );
        let scores =
            "got  tensor([[2.5000, -1.0000]])\nwant tensor([[0.8000, 0.2000]])";
        assert_eq!(heatmaps(scores), None, "scores are not weights");
        let vectors =
            "  left: \"tensor([0.5000, 0.5000])\"\n right: \"tensor([1., 0.])\"";
        assert_eq!(heatmaps(vectors), None, "1-D tensors are not drawn");
        let shapes = "got  tensor([[0.5000, 0.5000]])\nwant tensor([[1.0000]])";
        assert_eq!(heatmaps(shapes), None, "different shapes");
    }

    #[test]
    fn leaves_a_message_that_draws_its_weights_already() {
        let want = shared::tensor!([[1.0, 0.0], [0.5, 0.5]]);
        let got = shared::tensor!([[0.0, 1.0], [0.5, 0.5]]);
        let message = std::panic::catch_unwind(|| {
            shared::testing::assert_close(&got, &want, 1e-5, 1e-8);
        })
        .unwrap_err()
        .downcast::<String>()
        .unwrap();
        assert!(message.contains("(blank = 0, ██ = 1.00)"), "{message}");
        assert_eq!(heatmaps(&message), None);
    }
}
