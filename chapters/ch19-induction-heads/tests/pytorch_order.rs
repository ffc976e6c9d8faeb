//! The weight gradient summed in PyTorch's blocks agrees with the formula's plain sum to
//! a few units in the last place, and the blocks cover the rows in order; a whole training
//! step with the formulas agrees with one in PyTorch's order; the attention backward in one
//! pass has the bits of chapter 10's steps one after the other.

use ch05_causal::causal_mask;
use ch10_backward::attention::{AttentionGrads, attention_forward};
use ch10_backward::linear::linear_backward;
use ch10_backward::pytorch_order::attention_backward_in_pytorch_order;
use ch19_induction_heads::arithmetic::Formulas;
use ch19_induction_heads::data::Repeats;
use ch19_induction_heads::model::AttentionOnly;
use ch19_induction_heads::pytorch_order::{
    BLOCK_ROWS, PytorchOrder, attention_backward_by_sequences,
    attention_backward_in_one_pass, linear_backward_in_pytorch_order, row_blocks,
};
use ch19_induction_heads::train::{BATCH, Gradients, loss_and_gradients};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::exact::{Capability, set_capability};
use shared::nn::{Dropout, Linear};
use shared::{Tensor, manual_seed, randn, set_num_threads};

proptest! {
    #![proptest_config(quiet(200))]

    #[test]
    fn the_blocks_cover_the_rows_in_order(rows in 1usize..5000) {
        let blocks = row_blocks(rows);
        prop_assert_eq!(blocks[0].start, 0, "the first block does not start at row 0");
        prop_assert_eq!(blocks.last().unwrap().end, rows, "the last block does not end at the last row");
        for pair in blocks.windows(2) {
            prop_assert_eq!(pair[0].end, pair[1].start, "a gap or an overlap between two blocks");
        }
        prop_assert!(blocks.iter().all(|b| !b.is_empty() && b.len() <= BLOCK_ROWS), "a block is empty or longer than {} rows", BLOCK_ROWS);
    }
}

#[test]
fn a_short_sum_is_one_block_and_a_long_one_ends_in_two_halves() {
    assert_eq!(row_blocks(384), vec![0..384]);
    assert_eq!(row_blocks(385), vec![0..193, 193..385]);
    assert_eq!(row_blocks(1000), vec![0..384, 384..692, 692..1000]);
    assert_eq!(
        row_blocks(2048),
        vec![
            0..384,
            384..768,
            768..1152,
            1152..1536,
            1536..1792,
            1792..2048
        ]
    );
}

#[test]
fn blocked_and_plain_weight_gradients_agree_within_a_few_ulps() {
    manual_seed(3);
    let layer = Linear::new(32, 96, true);
    let x = randn(&[64, 32, 32]);
    let grad_y = randn(&[64, 32, 96]);
    let formula = linear_backward(&layer, &x, &grad_y);
    let ordered = linear_backward_in_pytorch_order(&layer, &x, &grad_y);
    assert_eq!(formula.input.to_vec(), ordered.input.to_vec());
    assert_eq!(
        formula.bias.unwrap().to_vec(),
        ordered.bias.unwrap().to_vec()
    );
    let (a, b) = (formula.weight.to_vec(), ordered.weight.to_vec());
    let scale = a.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let mut differ = 0;
    for (x, y) in a.iter().zip(&b) {
        // A sum of 2048 products: the two orders round differently, by far less than
        // a thousandth of the largest gradient.
        assert!((x - y).abs() <= scale * 1e-5, "{x} vs {y}");
        differ += usize::from(x != y);
    }
    assert!(differ > 0, "the orders should differ somewhere");
}

/// One training step of the chapter's model: the formulas and PyTorch's order give the
/// same loss to a millionth (a mean of 1984 terms added in two orders) and gradients equal
/// far below their scale.
#[test]
fn a_step_with_the_formulas_agrees_with_a_step_in_pytorch_order() {
    manual_seed(19);
    let model = AttentionOnly::new();
    let batch = Repeats::Variable.draw(BATCH);
    let (loss_f, Gradients(formulas)) =
        loss_and_gradients::<Formulas>(&model, &batch.ids);
    let (loss_p, Gradients(ordered)) =
        loss_and_gradients::<PytorchOrder>(&model, &batch.ids);
    assert!(
        (loss_f - loss_p).abs() <= 1e-6 * loss_p.abs(),
        "{loss_f} vs {loss_p}"
    );
    assert_eq!(formulas.len(), ordered.len());
    let mut differ = 0;
    for (f, p) in formulas.iter().zip(&ordered) {
        assert_eq!(f.sizes(), p.sizes());
        let (f, p) = (f.to_vec(), p.to_vec());
        let scale = p.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        for (x, y) in f.iter().zip(&p) {
            assert!((x - y).abs() <= scale * 1e-4, "{x} vs {y} (scale {scale})");
            differ += usize::from(x != y);
        }
    }
    // The orders are not the same computation: some last bits differ.
    assert!(
        differ > 0,
        "the two arithmetics gave identical bits everywhere"
    );
}

/// The bits of a tensor, to compare two results exactly.
fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|x| x.to_bits()).collect()
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Rows shorter than, as long as and longer than the softmax's lanes (8 and 16), on
    /// each build's lanes, with the chapter's `[tokens, tokens]` mask and with a mask that
    /// broadcasts (which takes chapter 10's steps one after the other): the gradients of the
    /// queries, keys and values have chapter 10's bits.
    #[test]
    fn the_one_pass_backward_has_chapter_10s_bits(
        tokens in 1usize..40,
        seed in 0u64..1000,
        build in 0usize..3,
        broadcast_mask: bool,
    ) {
        let capability = [Capability::Default, Capability::Avx2, Capability::Avx512][build];
        set_capability(Some(capability));
        manual_seed(seed);
        let shape = [3, 2, tokens, 16];
        let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape) * 3.0);
        let mask = causal_mask(tokens);
        let hidden = if broadcast_mask { mask.unsqueeze(0) } else { mask };
        let (_, tape) = attention_forward(&q, &k, &v, &hidden, &Dropout::new(0.0));
        let grad_out = randn(&shape);
        let chapter_10 = attention_backward_in_pytorch_order(&tape, &grad_out);
        let one_pass = attention_backward_in_one_pass(&tape, &grad_out);
        set_capability(None);
        prop_assert_eq!(bits(&one_pass.queries), bits(&chapter_10.queries));
        prop_assert_eq!(bits(&one_pass.keys), bits(&chapter_10.keys));
        prop_assert_eq!(bits(&one_pass.values), bits(&chapter_10.values));
    }
}

/// The training batch's size of weights (`[64, 2, 32, 32]`, four grains of rows), and an
/// odd batch of 5: inside a pool of one thread and of three, the rows and the sequences
/// split between threads differently, and the gradients keep chapter 10's bits, in one pass
/// and with the batch's sequences shared between the threads, whichever build the calling
/// thread computes as (the threads the rows go to compute as it does).
#[test]
fn the_one_pass_backward_has_chapter_10s_bits_on_any_number_of_threads() {
    manual_seed(11);
    let pool = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
        pool.expect("a pool")
    };
    let (one, three) = (pool(1), pool(3));
    for batch in [64, 5] {
        let shape = [batch, 2, 32, 16];
        let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
        let (_, tape) =
            attention_forward(&q, &k, &v, &causal_mask(32), &Dropout::new(0.0));
        let grad_out = randn(&shape);
        for capability in [Capability::Default, Capability::Avx2, Capability::Avx512]
        {
            let as_build =
                |pool: &rayon::ThreadPool,
                 f: &(dyn Fn() -> AttentionGrads + Sync)| {
                    pool.install(|| {
                        set_capability(Some(capability));
                        let grads = f();
                        set_capability(None);
                        grads
                    })
                };
            let chapter_10 = as_build(&one, &|| {
                attention_backward_in_pytorch_order(&tape, &grad_out)
            });
            for (threads, pool) in [(1, &one), (3, &three)] {
                let one_pass = as_build(pool, &|| {
                    attention_backward_in_one_pass(&tape, &grad_out)
                });
                let by_sequences = as_build(pool, &|| {
                    attention_backward_by_sequences(&tape, &grad_out)
                });
                for (way, grads) in
                    [("one pass", one_pass), ("by sequences", by_sequences)]
                {
                    for (name, ours, theirs) in [
                        ("queries", &grads.queries, &chapter_10.queries),
                        ("keys", &grads.keys, &chapter_10.keys),
                        ("values", &grads.values, &chapter_10.values),
                    ] {
                        assert_eq!(
                            ours.sizes(),
                            theirs.sizes(),
                            "{way}: {name}' gradient"
                        );
                        let where_ = format!(
                            "batch {batch}, {capability}, {threads} threads, {way}: {name}'"
                        );
                        assert_same_bits(ours, theirs, &where_);
                    }
                }
            }
        }
    }
}

/// A linear layer's gradients over the training batch's 2048 rows (six blocks of the weight
/// gradient) have the same bits inside a pool of one thread and of three, whichever build
/// and PyTorch thread count the calling thread computes as.
#[test]
fn the_linear_backward_has_the_same_bits_on_any_number_of_threads() {
    manual_seed(12);
    let layer = Linear::new(32, 96, true);
    let (x, grad_y) = (randn(&[64, 32, 32]), randn(&[64, 32, 96]));
    for (capability, torch_threads) in
        [(Capability::Default, 1), (Capability::Avx512, 4)]
    {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            pool.expect("a pool").install(|| {
                set_capability(Some(capability));
                set_num_threads(torch_threads);
                let grads = linear_backward_in_pytorch_order(&layer, &x, &grad_y);
                set_capability(None);
                grads
            })
        };
        let (one, three) = (on(1), on(3));
        let what = |name: &str| {
            format!("{capability}, {torch_threads} PyTorch threads: {name}")
        };
        assert_same_bits(&three.weight, &one.weight, &what("the weight's"));
        let (bias_one, bias_three) =
            (one.bias.expect("a bias"), three.bias.expect("a bias"));
        assert_same_bits(&bias_three, &bias_one, &what("the bias'"));
        assert_same_bits(&three.input, &one.input, &what("the input's"));
    }
}

/// Panics with the first element where `ours` and `theirs` differ, by value and in ulps.
fn assert_same_bits(ours: &Tensor, theirs: &Tensor, what: &str) {
    let pairs = ours.to_vec().into_iter().zip(theirs.to_vec()).enumerate();
    let mut differing = pairs.filter(|(_, (a, b))| a.to_bits() != b.to_bits());
    if let Some((i, (a, b))) = differing.next() {
        let ulps = (i64::from(a.to_bits()) - i64::from(b.to_bits())).abs();
        panic!("{what} gradient [{i}] {a:e}, expected {b:e} ({ulps} ulps)");
    }
}
