//! Properties of the hybrid stack: the pattern is three Gated DeltaNet layers then one
//! softmax layer; every layer is causal (a token changes no earlier output), each is a
//! residual block (with its output projection at zero it passes the stream through
//! unchanged), and what each layer keeps grows with the length only for the softmax layer.
//! The tests that run the stack (its Gated DeltaNet layers write with the learner's
//! `delta_write`) or count its memory (the learner's `numbers_kept`) are left out with
//! `--features exercise`.

use shared::manual_seed;

use ch18_linear_attention::hybrid::{Mixer, PATTERN, hybrid_stack};
use ch18_linear_attention::setup::D;

#[test]
fn three_gated_delta_layers_then_one_softmax_layer() {
    assert_eq!(
        PATTERN,
        [
            Mixer::GatedDelta,
            Mixer::GatedDelta,
            Mixer::GatedDelta,
            Mixer::Softmax
        ]
    );
    manual_seed(18);
    let layers = hybrid_stack(D);
    let mixers: Vec<Mixer> = layers.iter().map(|layer| layer.mixer).collect();
    assert_eq!(mixers, PATTERN);
    let gated: Vec<bool> = layers.iter().map(|layer| layer.delta.is_some()).collect();
    assert_eq!(gated, [true, true, true, false]);
}

#[cfg(not(feature = "exercise"))]
mod with_the_solved_exercises {
    use super::*;
    use course::quiet_proptest::quiet;
    use proptest::prelude::*;
    use shared::{Tensor, randn, zeros};

    use ch18_linear_attention::hybrid::hybrid_forward;
    use shared::testing::{assert_same_bits, bits_difference, same_bits};

    #[test]
    fn with_its_output_projection_at_zero_a_layer_passes_the_stream_through() {
        manual_seed(18);
        let mut layers = hybrid_stack(D);
        let x = randn(&[8, D]);
        for layer in &mut layers {
            layer.out_proj.weight = zeros(&[D, D]);
            assert_same_bits(&layer.forward(&x), &x, format!("{:?}", layer.mixer));
        }
        // With the projections drawn, every layer changes the stream.
        manual_seed(18);
        for layer in hybrid_stack(D) {
            assert!(!same_bits(&layer.forward(&x), &x), "{:?}", layer.mixer);
        }
    }

    #[test]
    fn only_the_softmax_layer_keeps_more_as_the_text_grows() {
        manual_seed(18);
        let layers = hybrid_stack(D);
        for n in [1, 64, 1000] {
            let kept: Vec<usize> =
                layers.iter().map(|layer| layer.numbers_kept(n)).collect();
            // A delta layer: its state and the last 3 inputs of its 3 convolutions.
            let delta = D * D + 3 * 3 * D;
            assert_eq!(kept, [delta, delta, delta, n * 2 * D], "n = {n}");
        }
    }

    proptest! {
        #![proptest_config(quiet(16))]

        /// Changing the last token changes no earlier row of the stack's output, and
        /// changes the last row.
        #[test]
        fn the_stack_is_causal(seed in any::<u64>(), tokens in 2usize..24) {
            manual_seed(seed);
            let layers = hybrid_stack(D);
            let x = randn(&[tokens, D]);
            let mut changed = x.to_vec();
            for f in &mut changed[(tokens - 1) * D..] {
                *f += 1.0;
            }
            let changed = Tensor::from_vec(changed, &[tokens, D]);
            let (a, b) = (hybrid_forward(&layers, &x), hybrid_forward(&layers, &changed));
            let earlier = |t: &Tensor| t.slice(0, ..tokens - 1);
            prop_assert_eq!(bits_difference(&earlier(&a), &earlier(&b)), None, "changing the last token changed an earlier output");
            prop_assert!(!same_bits(&a.get(-1), &b.get(-1)), "changing the last token did not change its own output");
        }
    }
}
