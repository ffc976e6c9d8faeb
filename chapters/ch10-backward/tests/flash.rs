//! Chapter 9's tiled backward against this chapter's, which keeps the whole weight matrix:
//! the same gradients up to float32 rounding, with and without the causal mask.

use ch09_flash_attention::backward::flash_attention_backward;
use ch09_flash_attention::kernel::flash_attention_lse;
use ch10_backward::attention::{attention_backward, attention_forward};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Dropout;
use shared::testing::max_abs_diff;
use shared::{Tensor, manual_seed, randn, zeros};

/// The largest magnitude in `t`.
fn largest(t: &Tensor) -> f64 {
    t.abs().max().item() as f64
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Each gradient within float32's rounding of its terms: a few units of 2^-24 times the
    /// number of terms summed, times their largest size (`dP = dO·Vᵀ` and the keys or
    /// queries it multiplies for `dq` and `dk`, the output gradient for `dv`).
    #[test]
    fn chapter_9s_tiled_backward_equals_this_chapters(
        heads in 1usize..4, n in 1usize..80, d in 1usize..40, causal: bool, seed in 0u64..1000,
    ) {
        manual_seed(seed);
        let (q, k, v) = (randn(&[heads, n, d]), randn(&[heads, n, d]), randn(&[heads, n, d]));
        let grad_out = randn(&[heads, n, d]);
        let hidden = if causal { ch05_causal::causal_mask(n) } else { zeros(&[n, n]).bool() };
        let (_, tape) = attention_forward(&q, &k, &v, &hidden, &Dropout::new(0.0));
        let want = attention_backward(&tape, &grad_out);
        let (out, lse) = flash_attention_lse(&q, &k, &v, causal);
        let got = flash_attention_backward((&q, &k, &v), (&out, &lse), &grad_out, causal);

        let eps = f32::EPSILON as f64;
        let d_p = d as f64 * largest(&grad_out) * largest(&v);
        let scale = 1.0 / (d as f64).sqrt();
        for (name, got, want, terms) in [
            ("dq", &got.q, &want.queries, 2.0 * d_p * largest(&k) * scale),
            ("dk", &got.k, &want.keys, 2.0 * d_p * largest(&q) * scale),
            ("dv", &got.v, &want.values, largest(&grad_out)),
        ] {
            let tolerance = 16.0 * (n + d) as f64 * eps * terms;
            let gap = max_abs_diff(got, want) as f64;
            prop_assert!(
                gap <= tolerance,
                "{} heads, {} tokens of {} features, causal {}: {} differs by {:e} (tolerance {:e})",
                heads, n, d, causal, name, gap, tolerance
            );
        }
    }
}
