//! The forward passes with a tape return exactly what the modules' own `forward` returns,
//! bits included, and draw the same dropout noise (they leave the generator in the same
//! state), so a training loop can use them in place of `forward`.

use ch05_causal::CausalAttention;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::causal::causal_forward;
use ch10_backward::multihead::multihead_forward;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::bits_difference;
use shared::{manual_seed, rand, randn};

proptest! {
    #![proptest_config(quiet(24))]

    #[test]
    fn forward_with_tape_equals_forward(
        (b, n, d_in, heads, head_dim) in (1usize..3, 1usize..7, 1usize..5, 1usize..4, 1usize..4),
        p in prop::sample::select(vec![0.0, 0.1, 0.5]),
        seed in 0u64..10_000,
    ) {
        manual_seed(seed);
        let x = randn(&[b, n, d_in]);
        let mha = MultiHeadAttention::new(d_in, heads * head_dim, n, p, heads, true);
        let ca = CausalAttention::new(d_in, head_dim, n, p, false);

        manual_seed(seed + 1);
        let (want_mha, want_ca, want_next) = (mha.forward(&x), ca.forward(&x), rand(&[1]));
        manual_seed(seed + 1);
        let got_mha = multihead_forward(&mha, &x).0;
        let got_ca = causal_forward(&ca, &x).0;
        let got_next = rand(&[1]);
        prop_assert_eq!(bits_difference(&got_mha, &want_mha), None);
        prop_assert_eq!(bits_difference(&got_ca, &want_ca), None);
        prop_assert_eq!(bits_difference(&got_next, &want_next), None, "the same number of draws");
    }
}
