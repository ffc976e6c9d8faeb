//! The ring's backward pass against chapter 10's backward of the whole attention, within a
//! tolerance derived from the sums each gradient takes.

use ch10_backward::attention::{attention_backward, attention_forward};
use ch24_distributed::ring_backward::ring_backward_simulated;
use ch24_distributed::shards::Layout;
use proptest::prelude::*;
use shared::nn::Dropout;
use shared::{Tensor, manual_seed, randn};

/// Float32's unit roundoff, 2⁻²⁴.
const U: f32 = 5.960_464_5e-8;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn the_rings_gradients_are_chapter_10s(seed in 0u64..1000, world in 1usize..5, len in 1usize..4, zigzag: bool) {
        let layout = if zigzag { Layout::Zigzag } else { Layout::Contiguous };
        let tokens = len * layout.chunks(world);
        let d = 4;
        manual_seed(seed);
        let [q, k, v, grad_out] = [0; 4].map(|_| randn(&[1, 2, tokens, d]));
        let ring = ring_backward_simulated([&q, &k, &v], &grad_out, world, layout).unwrap();
        let hidden: Vec<bool> = (0..tokens * tokens).map(|n| n % tokens > n / tokens).collect();
        let hidden = Tensor::from_vec(hidden, &[tokens, tokens]);
        let (_, tape) = attention_forward(&q, &k, &v, &hidden, &Dropout::new(0.0));
        let whole = attention_backward(&tape, &grad_out);
        // Each gradient is a sum over at most `tokens` terms of products of a weight, an
        // upstream gradient and a query, key or value; both sides round each of those sums,
        // and the ring rebuilds every weight from the log-sum-exp (a few roundings more).
        // A float32 sum of n terms is off by at most n·u·Σ|terms|; with inputs from the
        // standard normal, Σ|terms| stays below tokens · 16 here, so the bound
        // (tokens + 8) · u · tokens · 16 covers both sides with room for the exponentials.
        let bound = (tokens as f32 + 8.0) * U * tokens as f32 * 16.0;
        for (name, ring, whole) in [("q", &ring[0], &whole.queries), ("k", &ring[1], &whole.keys), ("v", &ring[2], &whole.values)] {
            let gap: f32 = (ring - whole).abs().max().item();
            prop_assert!(gap <= bound, "grad_{name}, {layout:?}, {world} ranks, {tokens} tokens: the ring is {gap:e} from chapter 10's, above the bound {bound:e}");
        }
    }
}
