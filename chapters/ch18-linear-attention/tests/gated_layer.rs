//! The layer around Gated DeltaNet's recurrence: the short convolution is the sum over its
//! four taps, sees zeros before the first token, and gives the same numbers token by token
//! as all at once; the layer token by token agrees with the layer in chunks; the output
//! gate can silence it. The tests that run the recurrence (it writes with the learner's
//! `delta_write`) are left out with `--features exercise`.

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, bits_difference};
use shared::{Tensor, manual_seed, randn};

use ch18_linear_attention::short_conv::{KERNEL, ShortConv};

/// `y[t, c] = Σ_i w[c, i] · x[t − 3 + i, c]` by a plain loop over numbers, the taps added
/// in order, the missing tokens before the first left out (they would add `w · 0`).
fn conv_by_hand(x: &Tensor, w: &Tensor) -> Vec<f32> {
    let (t, c) = (x.size(0), x.size(1));
    let (x, w) = (x.to_vec(), w.to_vec());
    let mut y = vec![0.0f32; t * c];
    for row in 0..t {
        for ch in 0..c {
            let mut sum = 0.0f32;
            for i in 0..KERNEL {
                let x = (row + i)
                    .checked_sub(KERNEL - 1)
                    .map_or(0.0, |s| x[s * c + ch]);
                sum = if i == 0 {
                    w[ch * KERNEL] * x
                } else {
                    sum + w[ch * KERNEL + i] * x
                };
            }
            y[row * c + ch] = sum;
        }
    }
    y
}

proptest! {
    #![proptest_config(quiet(32))]

    /// All at once, token by token and by hand: the same bits.
    #[test]
    fn the_short_convolution_is_the_sum_over_its_taps(
        seed in any::<u64>(), t in 1usize..24, channels in 1usize..9,
    ) {
        manual_seed(seed);
        let conv = ShortConv::new(channels);
        let x = randn(&[t, channels]);
        let whole = conv.forward(&x);
        prop_assert_eq!(whole.sizes(), &[t, channels][..], "the convolution changed the shape");
        prop_assert_eq!(bits_difference(&whole, &conv.decode(&x)), None, "the convolution token by token is not the convolution all at once");
        let by_hand = Tensor::from_vec(conv_by_hand(&x, &conv.weight), &[t, channels]);
        prop_assert_eq!(bits_difference(&whole, &by_hand), None, "the convolution is not the sum over its taps written by hand");
    }
}

#[test]
fn the_first_token_sees_zeros_before_it() {
    manual_seed(18);
    let conv = ShortConv::new(4);
    let x = randn(&[6, 4]);
    // y_0 = w_3 ⊙ x_0: the three taps before the sequence read zeros.
    let first = conv.forward(&x).get(0);
    let last_tap = conv.weight.select(1, (KERNEL - 1) as i64);
    assert_same_bits(
        &first,
        &(x.get(0) * last_tap),
        "the first token: its own tap only",
    );
    // The weights are drawn as nn.Conv1d's with 4 taps: within ±1/2, not all equal.
    let w = conv.weight.to_vec();
    assert!(w.iter().all(|x| x.abs() <= 0.5));
    assert!(w.iter().any(|&x| x != w[0]));
}

#[cfg(not(feature = "exercise"))]
mod with_the_solved_exercises {
    use super::*;
    use ch18_linear_attention::gated_layer::GatedDeltaNet;
    use shared::nn::Linear;
    use shared::zeros;

    /// A layer and its input and projections, drawn.
    fn layer_and_inputs(t: usize, d: usize) -> (GatedDeltaNet, [Tensor; 4]) {
        let h = randn(&[t, d]);
        let project = |h: &Tensor| Linear::new(d, d, false).forward(h);
        let (q, k, v) = (project(&h), project(&h), project(&h));
        (GatedDeltaNet::new(d), [h, q, k, v])
    }

    #[test]
    fn a_closed_output_gate_silences_the_layer() {
        manual_seed(18);
        let (mut layer, [h, q, k, v]) = layer_and_inputs(12, 8);
        assert!(layer.forward(&h, &q, &k, &v).abs().max().item() > 0.0);
        layer.w_gate.weight = zeros(&[8, 8]);
        assert_eq!(layer.forward(&h, &q, &k, &v).abs().max().item(), 0.0);
    }

    proptest! {
        #![proptest_config(quiet(16))]

        /// The layer token by token (the convolution's state, the delta state) agrees with
        /// the layer in chunks within 1e-5, for any length and chunk size.
        #[test]
        fn the_layer_token_by_token_agrees_with_the_layer_in_chunks(
            seed in any::<u64>(), t in 1usize..40, chunk in 1usize..20,
        ) {
            manual_seed(seed);
            let (layer, [h, q, k, v]) = layer_and_inputs(t, 8);
            let token_by_token = layer.forward(&h, &q, &k, &v);
            let chunked = layer.forward_chunked(&h, &q, &k, &v, chunk);
            let gap = (&token_by_token - &chunked).abs().max().item();
            prop_assert!(gap <= 1e-5, "the layer token by token is {} from the layer in chunks of {}, more than 1e-5", gap, chunk);
        }
    }
}
