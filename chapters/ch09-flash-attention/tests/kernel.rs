//! The fast kernel against chapter 7's materialised attention: on random inputs of odd
//! sizes (lengths around the 64-key tiles, `n = 1`, feature sizes that are no multiple of
//! the vector width, more or fewer queries than keys), with and without the causal mask,
//! on every instruction set this CPU has, on one thread and on several; and as the core of
//! chapter 7's `MultiHeadAttention`.

use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch09_flash_attention::blocks::{key_block_count, tile_needs_mask};
use ch09_flash_attention::core::{
    AttentionCore, Flash, Materialised, forward_with_core,
};
use ch09_flash_attention::kernel::{
    BLOCK_K, BLOCK_Q, Isa, flash_attention, flash_attention_with,
};
use proptest::prelude::*;
use shared::{Tensor, manual_seed, ones, rand, randn};

mod common;
use common::ODD_SIZES;

/// Chapter 7's attention, with the causal mask of PyTorch's `is_causal` if `causal`.
fn materialised(q: &Tensor, k: &Tensor, v: &Tensor, causal: bool) -> Tensor {
    let visible = ones(&[q.size(-2), k.size(-2)]).tril(0).bool();
    scaled_dot_product_attention(q, k, v, causal.then_some(&visible)).0
}

/// The largest `|a - b|` relative to the largest `|b|` (an output is a weighted average
/// of value rows, so its rounding error scales with the values, not with itself).
fn relative_error(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.sizes(), b.sizes());
    let scale = b.to_vec().iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let diff = a
        .to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
    if scale == 0.0 { diff } else { diff / scale }
}

/// Lengths that cross the tiles' edges more often than uniform ones would.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![
        1usize..5,
        Just(BLOCK_K - 1),
        Just(BLOCK_K),
        Just(BLOCK_K + 1),
        Just(BLOCK_Q + 7),
        1usize..200,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Within 1e-5 (relative) of chapter 7's attention, on every instruction set.
    #[test]
    fn flash_equals_materialised(
        batch in 1usize..3, heads in 1usize..3, queries in length(), same_length: bool,
        keys in length(), d in 1usize..70, d_v in 1usize..70, causal: bool, seed in 0u64..1000,
    ) {
        let keys = if same_length { queries } else { keys };
        manual_seed(seed);
        let q = randn(&[batch, heads, queries, d]);
        let k = randn(&[batch, heads, keys, d]);
        let v = randn(&[batch, heads, keys, d_v]);
        let expected = materialised(&q, &k, &v, causal);
        for isa in Isa::available() {
            let flash = flash_attention_with(isa, &q, &k, &v, causal);
            let error = relative_error(&flash, &expected);
            prop_assert!(error <= 1e-5, "{isa:?}: relative error {error}");
        }
    }

    /// Changing a later token leaves every earlier output exactly as it was: the kernel
    /// skips or masks everything after the diagonal.
    #[test]
    fn flash_is_causal(n in 2usize..150, later in 1usize..149, seed in 0u64..1000) {
        let later = 1 + later % (n - 1);
        manual_seed(seed);
        let (q, k, v) = (rand(&[1, 2, n, 8]), rand(&[1, 2, n, 8]), rand(&[1, 2, n, 8]));
        let from_later = Tensor::from_vec((0..n).map(|t| t >= later).collect(), &[n, 1]);
        let changed = |t: &Tensor| t.masked_fill(&from_later, 9.0);
        for isa in Isa::available() {
            let out = flash_attention_with(isa, &q, &k, &v, true);
            let out2 = flash_attention_with(isa, &changed(&q), &changed(&k), &changed(&v), true);
            prop_assert_eq!(out2.narrow(2, 0, later), out.narrow(2, 0, later));
        }
    }

    /// The tiles a block of queries visits are exactly those with a visible entry, and a
    /// tile needs the mask exactly when it holds a hidden entry.
    #[test]
    fn blocks_skip_exactly_the_hidden_tiles(
        q_block in 0usize..6, size in 1usize..9, keys in 1usize..40, queries in 1usize..40,
    ) {
        let q_start = q_block * size;
        prop_assume!(q_start < queries);
        let q_end = (q_start + size).min(queries);
        let visited = key_block_count(q_end, keys, size, true);
        for kb in 0..keys.div_ceil(size) {
            let k_start = kb * size;
            let k_end = (k_start + size).min(keys);
            let any_visible = (q_start..q_end).any(|i| (k_start..k_end).any(|j| j <= i));
            let any_hidden = (q_start..q_end).any(|i| (k_start..k_end).any(|j| j > i));
            prop_assert_eq!(kb < visited, any_visible, "tile {}", kb);
            if any_visible {
                prop_assert_eq!(tile_needs_mask(q_start, k_end, true), any_hidden);
            }
        }
        prop_assert_eq!(key_block_count(q_end, keys, size, false), keys.div_ceil(size));
    }
}

#[test]
fn odd_sizes() {
    for (queries, keys, d, d_v) in ODD_SIZES {
        for causal in [false, true] {
            manual_seed(7);
            let q = randn(&[1, 3, queries, d]);
            let k = randn(&[1, 3, keys, d]);
            let v = randn(&[1, 3, keys, d_v]);
            let expected = materialised(&q, &k, &v, causal);
            for isa in Isa::available() {
                let error = relative_error(
                    &flash_attention_with(isa, &q, &k, &v, causal),
                    &expected,
                );
                assert!(
                    error <= 1e-5,
                    "{isa:?} {queries}x{keys}, d = {d}, d_v = {d_v}, causal = {causal}: {error}"
                );
            }
        }
    }
}

#[test]
fn gpt2_sized_head() {
    // One head at GPT-2 small's size, long enough for many tiles and a large exponent range.
    manual_seed(1);
    let q = &randn(&[1, 1, 1024, 64]) * 3.0;
    let k = &randn(&[1, 1, 1024, 64]) * 3.0;
    let v = randn(&[1, 1, 1024, 64]);
    for causal in [false, true] {
        let expected = materialised(&q, &k, &v, causal);
        let error = relative_error(&flash_attention(&q, &k, &v, causal), &expected);
        assert!(error <= 1e-5, "causal = {causal}: {error}");
    }
}

#[test]
fn any_leading_dims() {
    manual_seed(3);
    let (q, k, v) = (
        rand(&[2, 3, 4, 9, 8]),
        rand(&[2, 3, 4, 9, 8]),
        rand(&[2, 3, 4, 9, 8]),
    );
    let error = relative_error(
        &flash_attention(&q, &k, &v, true),
        &materialised(&q, &k, &v, true),
    );
    assert!(error <= 1e-5);
    let (q, k, v) = (rand(&[9, 8]), rand(&[9, 8]), rand(&[9, 8]));
    assert_eq!(flash_attention(&q, &k, &v, false).shape(), [9, 8]);
}

#[test]
fn threads_do_not_change_a_bit() {
    manual_seed(5);
    let (q, k, v) = (
        randn(&[2, 3, 200, 64]),
        randn(&[2, 3, 200, 64]),
        randn(&[2, 3, 200, 64]),
    );
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| flash_attention(&q, &k, &v, true))
    };
    let one = on(1);
    assert_eq!(on(2), one);
    assert_eq!(on(3), one);
}

#[test]
#[should_panic(expected = "do not fit")]
fn mismatched_shapes_are_refused() {
    flash_attention(
        &rand(&[1, 4, 8]),
        &rand(&[1, 4, 7]),
        &rand(&[1, 4, 8]),
        false,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Chapter 7's module with the flash core computes what its own forward computes; with
    /// the materialised core, exactly the same numbers.
    #[test]
    fn drop_in_core(heads in 1usize..4, head_dim in 1usize..20, n in 1usize..80, bias: bool, seed in 0u64..1000) {
        manual_seed(seed);
        let d_out = heads * head_dim;
        let mha = MultiHeadAttention::new(5, d_out, n, 0.0, heads, bias);
        let x = randn(&[2, n, 5]);
        let expected = mha.forward(&x);
        let flash = forward_with_core(&mha, &x, &Flash);
        prop_assert!(relative_error(&flash, &expected) <= 1e-5);
        let materialised = forward_with_core(&mha, &x, &Materialised);
        prop_assert!(relative_error(&materialised, &expected) <= 1e-6);
    }
}

#[test]
fn cores_agree_on_gpt2_small_shapes() {
    manual_seed(11);
    let (q, k, v) = (
        randn(&[1, 12, 130, 64]),
        randn(&[1, 12, 130, 64]),
        randn(&[1, 12, 130, 64]),
    );
    let error = relative_error(
        &Flash.causal_attention(&q, &k, &v),
        &Materialised.causal_attention(&q, &k, &v),
    );
    assert!(error <= 1e-5, "{error}");
}

#[test]
fn printed_digits_are_the_same_on_every_instruction_set() {
    // The chapter prints the drop-in module's output: its digits must not depend on the CPU.
    let inputs = ch01_embeddings::inputs::your_journey();
    let batch = shared::stack(&[&inputs, &inputs], 0);
    manual_seed(123);
    let mha = MultiHeadAttention::new(3, 2, 6, 0.0, 2, false);
    let q = ch07_multihead_split::heads::split_heads(&mha.w_query.forward(&batch), 2);
    let k = ch07_multihead_split::heads::split_heads(&mha.w_key.forward(&batch), 2);
    let v = ch07_multihead_split::heads::split_heads(&mha.w_value.forward(&batch), 2);
    let printed = |isa| {
        let context = flash_attention_with(isa, &q, &k, &v, true);
        mha.out_proj
            .forward(&ch07_multihead_split::heads::merge_heads(&context))
            .to_string()
    };
    let expected = mha.forward(&batch).to_string();
    for isa in Isa::available() {
        assert_eq!(printed(isa), expected, "{isa:?}");
    }
}

#[test]
fn slices_give_the_tensor_results() {
    use ch09_flash_attention::kernel::{AttentionShape, flash_attention_slices};
    manual_seed(9);
    let (q, k, v) = (
        randn(&[2, 3, 70, 20]),
        randn(&[2, 3, 90, 20]),
        randn(&[2, 3, 90, 24]),
    );
    let shape = AttentionShape {
        heads: 6,
        queries: 70,
        keys: 90,
        d: 20,
        d_v: 24,
    };
    for causal in [false, true] {
        let from_slices = flash_attention_slices(
            Isa::detect(),
            &q.to_vec(),
            &k.to_vec(),
            &v.to_vec(),
            shape,
            causal,
        );
        assert_eq!(from_slices, flash_attention(&q, &k, &v, causal).to_vec());
    }
}
