//! The exercises' tests: each `exercise_NAME*` test checks exercise `NAME` alone.

use ch19_induction_heads::checkpoint::Checkpoint;
use ch19_induction_heads::data::{Batch, Repeats, TOKENS, VOCAB};
use ch19_induction_heads::heads::{
    copying_head, key_reads, offset_score, previous_token_head,
};
use ch19_induction_heads::model::{AttentionOnly, D_MODEL, HEAD_DIM, HEADS};
use ch19_induction_heads::runs::{EVAL, LOG_EVERY, SAVED_RUN, SEED};
use ch19_induction_heads::scores::{attention_weights, scores};
use ch19_induction_heads::train::train;
use course::quiet_proptest::{holds, quiet};
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
fn loss_without(
    model: &AttentionOnly,
    batch: &Batch,
    layer: usize,
    head: usize,
) -> f64 {
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
        let got = offset_score(&weights, offset);
        assert_eq!(
            got,
            [1.0, 0.0],
            "head 0 looks {offset} back from every row, head 1 at itself: the scores should be [1, 0]"
        );
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
        holds(mean_broken(&offset_score, seed, offset))?;
    }
}

/// Each head's mean weight `offset` back, over every sequence and every query that has such
/// a key, written here so that the tests of other exercises need not call `offset_score`.
fn mean_weight_back(weights: &Tensor, offset: usize) -> [f64; HEADS] {
    let (n, w) = (weights.size(0), weights.to_vec());
    let mut out = [0.0; HEADS];
    for (h, score) in out.iter_mut().enumerate() {
        let mut sum = 0.0;
        for b in 0..n {
            for i in offset..TOKENS {
                sum += f64::from(
                    w[((b * HEADS + h) * TOKENS + i) * TOKENS + i - offset],
                );
            }
        }
        *score = sum / (n * (TOKENS - offset)) as f64;
    }
    out
}

/// Where `f` is not each head's mean weight `offset` back, over every sequence and every
/// query that has such a key, on random causal weights drawn from `seed`.
fn mean_broken(
    f: &dyn Fn(&Tensor, usize) -> [f64; HEADS],
    seed: u64,
    offset: usize,
) -> Option<String> {
    manual_seed(seed);
    let weights = causal_weights(3);
    let (ours, want) = (f(&weights, offset), mean_weight_back(&weights, offset));
    (0..HEADS).find_map(|h| {
        ((ours[h] - want[h]).abs() >= 1e-12).then(|| {
            format!(
                "random weights from seed {seed}, offset {offset}: head {h}'s score is {}, \
                 the mean of its {} weights {offset} back is {}",
                ours[h],
                3 * (TOKENS - offset),
                want[h]
            )
        })
    })
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
    let shortcut =
        offset_score(&attention_weights(&model, &eval.ids, 1), TOKENS / 2 - 1);
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

/// An answer that names a head of the trained model.
type HeadChoice = dyn Fn(&AttentionOnly, &Batch) -> (usize, usize);

/// Where `f` does not name the head whose zeroing raises the repeated-token loss the
/// most, on the trained model and on the same model with layer 1's two heads swapped.
fn copying_broken(f: &HeadChoice) -> Option<String> {
    let (mut model, eval) = trained();
    let losses: Vec<((usize, usize), f64)> = (0..2)
        .flat_map(|layer| (0..HEADS).map(move |h| (layer, h)))
        .map(|(layer, h)| ((layer, h), loss_without(&model, &eval, layer, h)))
        .collect();
    let worst = losses
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("four heads")
        .0;
    let predicted = f(&model, &eval);
    if predicted != worst {
        return Some(format!(
            "you name {predicted:?}; zeroing each head gives repeated-token losses {losses:?}, \
             the highest without {worst:?}"
        ));
    }
    swap_heads(&mut model, 1);
    let swapped = f(&model, &eval);
    (swapped != (1, 1 - worst.1)).then(|| {
        format!(
            "with layer 1's heads swapped the copying head is (1, {}), you name {swapped:?}",
            1 - worst.1
        )
    })
}

/// Where `f` does not name the layer-0 head whose zeroing undoes the copying (the
/// repeated-token loss at least 1 higher than without the other layer-0 head), on the
/// trained model and with layer 0's heads swapped.
fn previous_broken(f: &HeadChoice) -> Option<String> {
    let (mut model, eval) = trained();
    let predicted = f(&model, &eval);
    if predicted.0 != 0 || predicted.1 >= HEADS {
        return Some(format!("you name {predicted:?}, not a head of layer 0"));
    }
    let other = (0, 1 - predicted.1);
    let (with, without) = (
        loss_without(&model, &eval, 0, predicted.1),
        loss_without(&model, &eval, 0, other.1),
    );
    if with <= without + 1.0 {
        return Some(format!(
            "you name {predicted:?}; zeroing it leaves a repeated-token loss of {with:.3}, \
             zeroing {other:?} one of {without:.3}: it is not the head copying needs"
        ));
    }
    swap_heads(&mut model, 0);
    let swapped = f(&model, &eval);
    (swapped != other).then(|| {
        format!("with layer 0's heads swapped the previous-token head is {other:?}, you name {swapped:?}")
    })
}

#[test]
fn exercise_copying_head_is_the_head_whose_loss_breaks_copying() {
    if let Some(broken) = copying_broken(&copying_head) {
        panic!("{broken}");
    }
}

#[test]
fn exercise_previous_token_head_is_the_layer_0_head_copying_needs() {
    if let Some(broken) = previous_broken(&previous_token_head) {
        panic!("{broken}");
    }
}

/// A plausible mistake for each exercise, each caught: a mean over every row (the rows
/// without a key `offset` back counted as zeros), the head of either layer that looks most
/// at the previous token, and the layer-0 head that looks least at it.
#[test]
fn wrong_answers_fail_the_exercise_tests() {
    let over_every_row = |weights: &Tensor, offset: usize| {
        let mean = mean_weight_back(weights, offset);
        mean.map(|m| m * (TOKENS - offset) as f64 / TOKENS as f64)
    };
    assert!(
        mean_broken(&over_every_row, 1, 3).is_some(),
        "the offset_score tests accept a mean over every row"
    );
    let by_previous_score = |model: &AttentionOnly, batch: &Batch| {
        let scores: Vec<((usize, usize), f64)> = (0..2)
            .flat_map(|layer| {
                let previous =
                    mean_weight_back(&attention_weights(model, &batch.ids, layer), 1);
                (0..HEADS).map(move |h| ((layer, h), previous[h]))
            })
            .collect();
        scores
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("four heads")
            .0
    };
    assert!(
        copying_broken(&by_previous_score).is_some(),
        "the copying_head tests accept the head, of either layer, that looks most at the previous token"
    );
    let least_previous = |model: &AttentionOnly, batch: &Batch| {
        let previous = scores(model, batch, None).previous;
        (0, usize::from(previous[1] < previous[0]))
    };
    assert!(
        previous_broken(&least_previous).is_some(),
        "the previous_token_head tests accept the other layer-0 head"
    );
}

/// An answer to `key_reads`.
type KeyReads = dyn Fn(usize, usize, usize) -> bool;

/// Where `f`'s answer for layer `layer`, the key at `key` and the token at `token` differs
/// from what changing that token does to that key, on an untrained model and a sequence
/// drawn from `seed`. A key that cannot see the change keeps its bits (the mask gives the
/// later keys a weight of exactly 0); one that can, moves.
fn reads_broken(
    f: &dyn Fn(usize, usize, usize) -> bool,
    seed: u64,
    (layer, key, token): (usize, usize, usize),
) -> Option<String> {
    manual_seed(seed);
    let model = AttentionOnly::new();
    let ids = Repeats::Variable.draw(1).ids;
    let mut changed = ids.to_vec();
    changed[token] = (changed[token] + 1) % VOCAB as i64;
    let changed = Tensor::from_vec(changed, &[1, TOKENS]);
    let key_at = |ids: &Tensor<i64>| {
        let (_, tape) = model.forward_with_tape(ids, None);
        let keys = model.blocks[layer].qkv.forward(&tape.blocks[layer].x);
        keys.select(0, 0)
            .select(0, key)
            .slice(0, D_MODEL..2 * D_MODEL)
    };
    let moved = shared::testing::max_abs_diff(&key_at(&ids), &key_at(&changed)) > 0.0;
    let said = f(layer, key, token);
    (said != moved).then(|| {
        format!(
            "layer {layer}, the key at position {key}, the token at position {token}: you say \
             the key {} read it; changing the token {} the key",
            if said { "can" } else { "cannot" },
            if moved { "moves" } else { "leaves the bits of" }
        )
    })
}

proptest! {
    #![proptest_config(quiet(24))]

    /// Any layer, key position and token position: the answer is what changing the token
    /// does to the key.
    #[test]
    fn exercise_key_reads_what_the_layers_below_wrote(
        seed in 0u64..1000,
        layer in 0usize..2,
        key in 0usize..TOKENS,
        token in 0usize..TOKENS,
    ) {
        holds(reads_broken(&key_reads, seed, (layer, key, token)))?;
    }
}

#[test]
fn exercise_key_reads_the_previous_token_only_from_layer_1() {
    // The previous-token head's work: the token before position 20 reaches the key at 20
    // in layer 1, never in layer 0.
    for (layer, want) in [(0, false), (1, true)] {
        if let Some(broken) = reads_broken(&key_reads, 3, (layer, 20, 19)) {
            panic!("{broken}");
        }
        assert_eq!(
            key_reads(layer, 20, 19),
            want,
            "layer {layer}, key 20, token 19"
        );
    }
}

/// Two mistakes, each caught: a layer-0 key that reads every earlier token too (as if
/// attention came before the key), and a layer-1 key that still reads its own token only.
#[test]
fn wrong_answers_fail_the_key_reads_tests() {
    let causal_everywhere = |_layer: usize, key: usize, token: usize| token <= key;
    let own_token_only = |_layer: usize, key: usize, token: usize| token == key;
    let wrong: [(&str, &KeyReads); 2] = [
        ("layer 0 reading earlier tokens", &causal_everywhere),
        ("layer 1 reading its own token only", &own_token_only),
    ];
    for (name, answer) in wrong {
        let caught = [(0, 20, 19), (1, 20, 19)]
            .into_iter()
            .any(|case| reads_broken(answer, 3, case).is_some());
        assert!(caught, "the key_reads tests accept a wrong answer: {name}");
    }
}
