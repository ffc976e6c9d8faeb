//! Chapter 12's figures: the sinusoidal encodings, and RoPE's rotation (the cosine of every
//! pair's angle, and the scores that depend only on the distance).

use ch12_positions::{rope_angles, rope_interleaved, sinusoidal_encoding};
use shared::{manual_seed, randn};

use crate::{Figure, Panel};

/// `["0", "1", ...]`: position labels.
fn positions(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// The sinusoidal encodings of 16 positions in 16 dims: sin and cos of `pos·θ_i`.
pub(crate) fn ch12_sinusoidal() -> Figure {
    let (n, d) = (16, 16);
    let features: Vec<String> = (0..d)
        .map(|j| format!("{}{}", if j % 2 == 0 { "s" } else { "c" }, j / 2))
        .collect();
    Figure {
        name: "ch12-sinusoidal",
        title: "Sinusoidal encodings: sᵢ = sin(pos·θᵢ), cᵢ = cos(pos·θᵢ), θᵢ = 1/10000^(2i/16)",
        panels: vec![Panel::new(
            "positions × features",
            &positions(n),
            &features,
            &sinusoidal_encoding(n, d),
        )],
        panels_per_row: 1,
    }
}

/// RoPE's rotation: `cos(m·θ_i)` for 16 positions and the 8 pairs of a 16-d head, and the
/// printed scores of one query and one key placed at every position (head_dim 8).
pub(crate) fn ch12_rope() -> Figure {
    let pairs: Vec<String> = (0..8).map(|i| format!("θ{i}")).collect();
    let cosines = rope_angles(16, 16, 10000.0).cos();

    // The chapter's last step: x = randn(1, 2, 6, 8) after manual_seed(123).
    manual_seed(123);
    let x = randn(&[1, 2, 6, 8]);
    let q = x.get(0).get(0).get(0);
    let k = x.get(0).get(1).get(0);
    let q_at = rope_interleaved(&q.expand(&[6, 8]), 10000.0);
    let k_at = rope_interleaved(&k.expand(&[6, 8]), 10000.0);
    let scores = q_at.matmul(&k_at.t());
    let (query_at, key_at): (Vec<String>, Vec<String>) =
        (0..6).map(|i| (format!("q@{i}"), format!("k@{i}"))).unzip();
    Figure {
        name: "ch12-rope",
        title: "RoPE turns pair i by m·θᵢ; the score of q at m and k at n depends on n − m only",
        panels: vec![
            Panel::new(
                "cos(m·θᵢ), positions × pairs",
                &positions(16),
                &pairs,
                &cosines,
            ),
            Panel::new("scores (q at m) · (k at n)", &query_at, &key_at, &scores),
        ],
        panels_per_row: 2,
    }
}
