//! The exercises' tests: each `exercise_NAME*` test checks exercise `NAME` alone.

use ch19_induction_heads::checkpoint::Checkpoint;
use ch19_induction_heads::data::{Batch, Repeats, TOKENS};
use ch19_induction_heads::heads::{copying_head, offset_score, previous_token_head};
use ch19_induction_heads::model::{AttentionOnly, D_MODEL, HEAD_DIM, HEADS};
use ch19_induction_heads::runs::{EVAL, LOG_EVERY, SAVED_RUN, SEED};
use ch19_induction_heads::scores::{attention_weights, scores};
use ch19_induction_heads::train::train;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::{Tensor, manual_seed, rand};

/// The trained model of the saved run and the chapter's evaluation batch.
fn trained() -> (AttentionOnly, Batch) {
    manual_seed(SEED);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    Checkpoint::from_bytes(SAVED_RUN, &model, LOG_EVERY)
        .expect("the saved run")
        .load_into(&mut model);
    (model, eval)
}

/// The same model with the two heads of `layer` swapped: their slices of the query, key
/// and value projections and their columns of the output projection trade places.
fn swap_heads(model: &mut AttentionOnly, layer: usize) {
    let block = &mut model.blocks[layer];
    let swap_rows = |t: &Tensor, width: usize| {
        let mut v = t.to_vec();
        for part in 0..3 {
            for r in 0..HEAD_DIM {
                for c in 0..width {
                    let a = (part * D_MODEL + r) * width + c;
                    v.swap(a, a + HEAD_DIM * width);
                }
            }
        }
        Tensor::from_vec(v, t.sizes())
    };
    block.qkv.weight = swap_rows(&block.qkv.weight, D_MODEL);
    let bias = block.qkv.bias.as_mut().expect("a bias");
    *bias = swap_rows(bias, 1);
    let mut w = block.proj.weight.to_vec();
    for row in w.chunks_mut(D_MODEL) {
        for c in 0..HEAD_DIM {
            row.swap(c, c + HEAD_DIM);
        }
    }
    block.proj.weight = Tensor::from_vec(w, &[D_MODEL, D_MODEL]);
}

/// The repeated-token loss with one head zeroed.
fn loss_without(model: &AttentionOnly, batch: &Batch, layer: usize, head: usize) -> f64 {
    scores(model, batch, Some((layer, head))).repeat_loss
}

/// Random causal attention weights: each row's weights on keys `0..=i` sum to 1.
fn causal_weights(n: usize) -> Tensor {
    let raw = rand(&[n, HEADS, TOKENS, TOKENS]).to_vec();
    let mut w = vec![0.0f32; raw.len()];
    for (row, (out, r)) in w.chunks_mut(TOKENS).zip(raw.chunks(TOKENS)).enumerate() {
        let i = row % TOKENS;
        let sum: f32 = r[..=i].iter().sum();
        for j in 0..=i {
            out[j] = r[j] / sum;
        }
    }
    Tensor::from_vec(w, &[n, HEADS, TOKENS, TOKENS])
}

#[test]
fn exercise_offset_score_of_a_head_that_always_looks_back() {
    // Head 0 puts all its weight `offset` back (row i < offset on key 0), head 1 on itself.
    for offset in [1, 15] {
        let mut w = vec![0.0f32; HEADS * TOKENS * TOKENS];
        for i in 0..TOKENS {
            w[i * TOKENS + i.saturating_sub(offset)] = 1.0;
            w[(TOKENS + i) * TOKENS + i] = 1.0;
        }
        let weights = Tensor::from_vec(w, &[1, HEADS, TOKENS, TOKENS]);
        assert_eq!(offset_score(&weights, offset), [1.0, 0.0]);
    }
}

proptest! {
    #![proptest_config(quiet(16))]

    #[test]
    fn exercise_offset_score_equals_the_chapter_s_previous_token_score(seed in 0u64..1000) {
        manual_seed(seed);
        let model = AttentionOnly::new();
        let batch = Repeats::Variable.draw(4);
        let weights = attention_weights(&model, &batch.ids, 0);
        let ours = offset_score(&weights, 1);
        let chapter = scores(&model, &batch, None).previous;
        for h in 0..HEADS {
            prop_assert!((ours[h] - chapter[h]).abs() < 1e-12, "{ours:?} vs {chapter:?}");
        }
    }

    #[test]
    fn exercise_offset_score_is_the_mean_over_rows_and_sequences(
        seed in 0u64..1000, offset in 1usize..TOKENS,
    ) {
        manual_seed(seed);
        let weights = causal_weights(3);
        let w = weights.to_vec();
        let ours = offset_score(&weights, offset);
        for (h, score) in ours.iter().enumerate() {
            let mut sum = 0.0;
            for b in 0..3 {
                for i in offset..TOKENS {
                    sum += f64::from(w[((b * HEADS + h) * TOKENS + i) * TOKENS + i - offset]);
                }
            }
            let mean = sum / (3 * (TOKENS - offset)) as f64;
            prop_assert!((score - mean).abs() < 1e-12, "head {h}: {score} vs {mean}");
        }
    }
}

#[test]
fn exercise_offset_score_shows_the_fixed_offset_shortcut() {
    // 200 steps of the chapter's fixed-offset run: the repeat is learned...
    manual_seed(SEED + 1);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Fixed.draw(EVAL);
    train(&mut model, Repeats::Fixed, 200, |_, _, _| {});
    let s = scores(&model, &eval, None);
    assert!(s.repeat_loss < 0.5, "repeat loss {}", s.repeat_loss);
    // ...by layer 1 looking 15 places back, while no layer-0 head looks at the previous
    // token: a rule about positions, not an induction circuit.
    let shortcut = offset_score(&attention_weights(&model, &eval.ids, 1), TOKENS / 2 - 1);
    let previous = offset_score(&attention_weights(&model, &eval.ids, 0), 1);
    assert!(
        shortcut.iter().all(|&s| s > 0.8),
        "layer 1, 15 back: {shortcut:?}"
    );
    assert!(
        previous.iter().all(|&p| p < 0.1),
        "layer 0, previous: {previous:?}"
    );
}

#[test]
fn exercise_copying_head_is_the_head_whose_loss_breaks_copying() {
    let (mut model, eval) = trained();
    let predicted = copying_head(&model, &eval);
    let worst = (0..2)
        .flat_map(|layer| (0..HEADS).map(move |h| (layer, h)))
        .max_by(|a, b| {
            loss_without(&model, &eval, a.0, a.1).total_cmp(&loss_without(&model, &eval, b.0, b.1))
        })
        .expect("four heads");
    assert_eq!(predicted, worst);
    swap_heads(&mut model, 1);
    assert_eq!(
        copying_head(&model, &eval),
        (1, 1 - worst.1),
        "after swapping the heads"
    );
}

#[test]
fn exercise_previous_token_head_is_the_layer_0_head_copying_needs() {
    let (mut model, eval) = trained();
    let predicted = previous_token_head(&model, &eval);
    let other = (0, 1 - predicted.1);
    assert_eq!(predicted.0, 0);
    assert!(
        loss_without(&model, &eval, 0, predicted.1) > loss_without(&model, &eval, 0, other.1) + 1.0,
        "zeroing {predicted:?} should undo the copying"
    );
    swap_heads(&mut model, 0);
    assert_eq!(
        previous_token_head(&model, &eval),
        other,
        "after swapping the heads"
    );
}
