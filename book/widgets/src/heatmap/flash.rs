//! Chapter 9: the weights the FlashAttention kernel implies without ever storing them.
//!
//! The kernel walks over the keys in tiles and forgets each tile of weights once it has
//! used it; what it returns is each query's output and the log-sum-exp `L` of its scores.
//! That one number per query is enough to rebuild any weight, `P = exp(q·k/√d − L)`, which
//! is how the chapter's backward pass gets them back tile by tile. The widget runs the
//! kernel on the queries, keys and values of the chapter's drop-in core (chapter 7's
//! `MultiHeadAttention` projections, split into heads) and rebuilds the weights the same
//! way.

use ch05_causal::causal_mask;
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch09_flash_attention::kernel::{Isa, flash_attention_lse_with};
use shared::nn::Linear;
use shared::simd::exp2_flushed_scalar;
use shared::{Tensor, manual_seed};

use super::{
    ANY_HEADS, Heatmap, Settings, check_heads, embeddings, labels, sentence,
};
use crate::controls::Control;

/// The chapter's drop-in core: `d_out = 2` in total, two heads of one feature each.
const D_OUT: usize = 2;
const HEADS: usize = 2;

/// The kernel compiled for any CPU, the one WebAssembly runs (it has no AVX): natively the
/// same version, so that the page and the native code draw the same bits on every machine
/// (the AVX versions add their products in other orders).
const KERNEL: Isa = Isa::Portable;

/// The sentence, the width and the heads, the causal mask the kernel takes, and the seed.
/// The kernel always divides the scores by `√d` and has no dropout: no temperature, no
/// dropout.
pub(super) fn controls() -> Vec<Control> {
    vec![
        Control::sentence("sentence"),
        Control::width("d_out", D_OUT),
        Control::heads("heads", "heads", &ANY_HEADS, HEADS),
        Control::checkbox("causal", "causal mask", true),
        Control::seed(),
    ]
}

/// The weights of the sentence's queries over its keys, rebuilt from the kernel's
/// log-sum-exp, one matrix per head.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let words = sentence(settings.words.as_deref())?;
    let heads = settings.heads.unwrap_or(HEADS);
    let d_out = settings.d_out.unwrap_or(D_OUT);
    check_heads("d_out", heads, d_out)?;
    let causal = settings.causal.unwrap_or(true);
    let x = embeddings(&words).unsqueeze(0); // [1, tokens, 3]

    manual_seed(seed);
    let mha =
        MultiHeadAttention::new(x.size(2), d_out, words.len(), 0.0, heads, false);
    let project = |linear: &Linear| split_heads(&linear.forward(&x), heads);
    let (q, k, v) = (
        project(&mha.w_query),
        project(&mha.w_key),
        project(&mha.w_value),
    );
    let (_, lse) = flash_attention_lse_with(KERNEL, &q, &k, &v, causal);
    let weights = rebuilt_weights(&q, &k, &lse, causal).select(0, 0);
    let caption = "The weights the kernel never stores, rebuilt from the one number per query \
                   it keeps: exp(q·k/√d − L), L the log-sum-exp of the query's scores";
    Ok(Heatmap::of_heads(&weights, labels(&words), labels(&words)).caption(caption))
}

/// The weights `P = exp(S − L)` from the scores `S = q·kᵀ/√d` and each query's
/// log-sum-exp `L`; a key the causal mask hides gets `exp(−∞) = 0`. The exponential is the
/// kernel's own, in base 2, `2^((S − L)·log₂ e)`: plain arithmetic, so the same bits on
/// every processor (a C library's `exp` may differ in the last one).
///
/// # Shapes
/// `q`, `k`: `[.., tokens, d]`, `lse`: `[.., tokens]`. Returns `[.., tokens, tokens]`.
fn rebuilt_weights(q: &Tensor, k: &Tensor, lse: &Tensor, causal: bool) -> Tensor {
    let d = q.size(-1) as f32;
    let mut scores = q.matmul(&k.transpose(-2, -1)) / d.sqrt();
    if causal {
        scores.masked_fill_(&causal_mask(q.size(-2)), f32::NEG_INFINITY);
    }
    let exponents = (&scores - &lse.unsqueeze(-1)) * std::f32::consts::LOG2_E;
    let weights = exponents.to_vec().into_iter().map(exp2_flushed_scalar);
    Tensor::from_vec(weights.collect(), exponents.sizes())
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};
    use super::*;

    /// The plain softmax of the same scores, as chapter 7 computes it.
    fn softmax_weights(settings: &Settings) -> Vec<Vec<Vec<f32>>> {
        let words = sentence(settings.words.as_deref()).unwrap();
        let heads = settings.heads.unwrap_or(HEADS);
        let x = embeddings(&words).unsqueeze(0);
        manual_seed(123);
        let d_out = settings.d_out.unwrap_or(D_OUT);
        let mha = MultiHeadAttention::new(3, d_out, words.len(), 0.0, heads, false);
        let q = split_heads(&mha.w_query.forward(&x), heads);
        let k = split_heads(&mha.w_key.forward(&x), heads);
        let mut scores =
            q.matmul(&k.transpose(-2, -1)) / ((d_out / heads) as f32).sqrt();
        if settings.causal.unwrap_or(true) {
            scores.masked_fill_(&causal_mask(words.len()), f32::NEG_INFINITY);
        }
        let weights = scores.softmax(-1).select(0, 0);
        Heatmap::of_heads(&weights, Vec::new(), Vec::new()).heads
    }

    #[test]
    fn the_rebuilt_weights_are_the_softmax_and_their_rows_sum_to_one() {
        let cases = [
            settings(9),
            Settings {
                causal: Some(false),
                heads: Some(3),
                d_out: Some(12),
                ..settings(9)
            },
            Settings {
                words: Some(vec!["step".into(), "one".into(), "Your".into()]),
                heads: Some(1),
                d_out: Some(16),
                ..settings(9)
            },
        ];
        for case in cases {
            let map = heatmap(&case).unwrap();
            let plain = softmax_weights(&case);
            assert_eq!(map.heads.len(), plain.len());
            for (head, plain_head) in map.heads.iter().zip(&plain) {
                for (i, (row, plain_row)) in head.iter().zip(plain_head).enumerate() {
                    let sum: f32 = row.iter().sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-6,
                        "{case:?}: row {i} sums to {sum}"
                    );
                    for (w, p) in row.iter().zip(plain_row) {
                        assert!(
                            (w - p).abs() < 1e-6,
                            "{case:?}: row {i}: {w} against {p}"
                        );
                    }
                    if case.causal.unwrap_or(true) {
                        assert!(row[i + 1..].iter().all(|&w| w == 0.0));
                    }
                }
            }
        }
    }

    #[test]
    fn the_rebuilt_weights_give_the_kernels_output() {
        // The chapter's drop-in core on the sentence: the weights times the values are
        // what the kernel returned, so they are the weights it used.
        let x = embeddings(&sentence(None).unwrap()).unsqueeze(0);
        manual_seed(123);
        let mha = MultiHeadAttention::new(3, D_OUT, 6, 0.0, HEADS, false);
        let project = |linear: &Linear| split_heads(&linear.forward(&x), HEADS);
        let (q, k, v) = (
            project(&mha.w_query),
            project(&mha.w_key),
            project(&mha.w_value),
        );
        let (out, lse) = flash_attention_lse_with(KERNEL, &q, &k, &v, true);
        let rebuilt = rebuilt_weights(&q, &k, &lse, true);
        assert!(rebuilt.matmul(&v).allclose(&out, 1e-5, 1e-6, false));
        let map = heatmap(&settings(9)).unwrap();
        assert_eq!(
            map.heads,
            Heatmap::of_heads(&rebuilt.select(0, 0), vec![], vec![]).heads
        );
    }
}
