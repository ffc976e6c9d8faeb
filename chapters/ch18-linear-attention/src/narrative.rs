//! The chapter's printed steps, in the order of the reference script
//! `reference/ch18_linear_attention.py`.

use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::nn::Linear;
use shared::{Result, Tensor, manual_seed, randn, zeros};

use ch15_modern_layer::gate::sigmoid;

use crate::chunked::linear_chunked;
use crate::chunked_delta::gated_delta_chunked;
use crate::delta::delta_write;
use crate::feature_map::elu_plus_one;
use crate::gated_delta::gated_delta_recurrent;
use crate::gated_layer::GatedDeltaNet;
use crate::gates::{exp, l2_normalize, log_sigmoid};
use crate::hybrid::{Mixer, hybrid_forward, hybrid_stack};
use crate::memory::numbers_kept;
use crate::parallel::{linear_parallel, softmax_attention};
use crate::recall::{pairs_recalled, recall};
use crate::recurrent::linear_recurrent;
use crate::setup::{
    CHUNK, D, D_INDEX, HYBRID_LENGTHS, INDEX_HEADS, RECALL_PAIRS, T, T_SPARSE, TILE,
    TOP_K, TOP_TILES,
};
use crate::sparse::{
    index_scores, sparse_attention, sparse_attention_tiled, top_k_kept,
    top_k_tiles_kept,
};
use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::recipes::causal;

/// `x[:rows, :cols]`.
fn corner(x: &Tensor, rows: usize, cols: usize) -> Tensor {
    x.slice(0, ..rows).slice(1, ..cols)
}

/// Whether two forms of one output agree up to float32 rounding, every entry within 1e-5,
/// printed as Python prints a bool. They add the same terms in other orders, so they are not
/// equal bit for bit; `tests/properties.rs` measures by how much they differ.
fn agree(a: &Tensor, b: &Tensor) -> &'static str {
    python_bool(a.allclose(b, 0.0, 1e-5, false))
}

/// Runs the chapter and returns what it prints; `seed` replaces the chapter's seed 18.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("Chapter 18: Beyond softmax");
    manual_seed(seed.or(18));
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    linear_attention(&mut story, seed, &q, &k, &v);
    key_written_twice(&mut story);
    gated_deltanet(&mut story);
    sparse(&mut story, &q, &k, &v)?;
    associative_recall(&mut story);
    memory(&mut story);
    gated_layer(&mut story);
    hybrid(&mut story);
    Ok(story)
}

fn linear_attention(
    story: &mut Narrative,
    seed: Seed,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
) {
    let step = story.step(format!(
        "Queries, keys and values (manual_seed({}))",
        seed.or(18)
    ));
    step.print(format!("q, k, v: {T} tokens x {D} features each"));
    step.print("q[:2, :6]:").print(corner(q, 2, 6));

    let step = story.step("Causal softmax attention, the starting point");
    step.print("softmax(q k^T / 4, causal) v, rows 0-2, first 6 features:")
        .print(corner(&softmax_attention(q, k, v), 3, 6));

    let step = story.step("The feature map phi(x) = elu(x) + 1");
    step.print("q[0, :6]:").print(q.get(0).slice(0, ..6));
    step.print("phi(q)[0, :6]:")
        .print(elu_plus_one(q).get(0).slice(0, ..6));
    let positive = |x: &Tensor| elu_plus_one(x).to_vec().iter().all(|&f| f > 0.0);
    step.print(format!(
        "every phi(q), phi(k) > 0: {}",
        python_bool(positive(q) && positive(k))
    ));

    // ANCHOR: three_forms
    let parallel = linear_parallel(q, k, v);
    let recurrent = linear_recurrent(q, k, v);
    let chunked = linear_chunked(q, k, v, CHUNK);
    // ANCHOR_END: three_forms
    let step = story.step("Linear attention in three forms");
    step.print("parallel, rows 0-2, first 6 features:")
        .print(corner(&parallel, 3, 6));
    step.print("recurrent, rows 0-2, first 6 features:")
        .print(corner(&recurrent, 3, 6));
    step.print(format!(
        "chunked (chunks of {CHUNK}), rows 0-2, first 6 features:"
    ))
    .print(corner(&chunked, 3, 6));
    step.print("the last row, parallel and recurrent:")
        .print(parallel.get(-1).slice(0, ..6))
        .print(recurrent.get(-1).slice(0, ..6));

    let step = story.step("The gaps between the forms");
    for (name, a, b) in [
        ("parallel vs recurrent", &parallel, &recurrent),
        ("chunked vs recurrent", &chunked, &recurrent),
        ("chunked vs parallel", &chunked, &parallel),
    ] {
        step.print(format!("{name}: agree within 1e-5: {}", agree(a, b)));
    }
    step.print(format!("max |output| {}", recurrent.abs().max()));
}

fn key_written_twice(story: &mut Narrative) {
    let key =
        l2_normalize(&Tensor::from_vec(vec![1.0, 2.0, 0.0, 2.0], &[1, 4])).get(0);
    let first = Tensor::from_vec(vec![1.0, 0.0, 0.0, 0.0], &[4]);
    let second = Tensor::from_vec(vec![0.0, 0.0, 3.0, 0.0], &[4]);
    // ANCHOR: written_twice
    let (mut summed, mut replaced) = (zeros(&[4, 4]), zeros(&[4, 4]));
    for value in [&first, &second] {
        summed += value.outer(&key);
        replaced = delta_write(&replaced, &key, value, 1.0);
    }
    // ANCHOR_END: written_twice
    let step = story.step("A key written twice");
    step.print(format!("key {key}"));
    step.print(format!("written: {first}, then {second}"));
    step.print(format!(
        "linear attention reads back {}",
        summed.matmul(&key)
    ));
    step.print(format!(
        "the delta rule reads back   {}",
        replaced.matmul(&key)
    ));
}

fn gated_deltanet(story: &mut Narrative) {
    // ANCHOR: gated_inputs
    let (q, k, v) = (randn(&[T, D]), randn(&[T, D]), randn(&[T, D]));
    let (q, k) = (l2_normalize(&q), l2_normalize(&k));
    let beta = sigmoid(&randn(&[T]));
    let log_alpha = log_sigmoid(&(randn(&[T]) + 3.0));
    let alpha = exp(&log_alpha);
    // ANCHOR_END: gated_inputs
    let step = story.step("Gated DeltaNet's inputs (drawn next)");
    step.print("|q_t| = |k_t| = 1, rows 0-2 of k, first 6 features:")
        .print(corner(&k, 3, 6));
    step.print("write strengths b_t = sigmoid(.), first 8:")
        .print(beta.slice(0, ..8));
    step.print("decays a_t = sigmoid(. + 3), first 8:")
        .print(alpha.slice(0, ..8));

    // ANCHOR: gated_forms
    let recurrent = gated_delta_recurrent(&q, &k, &v, &alpha, &beta);
    let chunked = gated_delta_chunked(&q, &k, &v, &log_alpha, &beta, CHUNK);
    // ANCHOR_END: gated_forms
    let step = story.step("Gated DeltaNet, token by token and chunk by chunk");
    step.print("recurrent, rows 0-2, first 6 features:")
        .print(corner(&recurrent, 3, 6));
    step.print(format!(
        "chunked (chunks of {CHUNK}), rows 0-2, first 6 features:"
    ))
    .print(corner(&chunked, 3, 6));
    step.print("the last row, recurrent and chunked:")
        .print(recurrent.get(-1).slice(0, ..6))
        .print(chunked.get(-1).slice(0, ..6));
    step.print(format!(
        "recurrent and chunked agree within 1e-5: {}",
        agree(&chunked, &recurrent)
    ));
    step.print(format!("max |output| {}", recurrent.abs().max()));
}

fn sparse(story: &mut Narrative, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<()> {
    let first = |x: &Tensor| x.slice(0, ..T_SPARSE);
    let (q, k, v) = (first(q), first(k), first(v));
    // ANCHOR: indexer
    let q_index = randn(&[T_SPARSE, INDEX_HEADS, D_INDEX]);
    let k_index = randn(&[T_SPARSE, D_INDEX]);
    let w_index = randn(&[T_SPARSE, INDEX_HEADS]);
    let scores = index_scores(&q_index, &k_index, &w_index);
    let kept = top_k_kept(&scores, TOP_K);
    // ANCHOR_END: indexer
    let step = story.step("DeepSeek's indexer picks the keys");
    step.print(format!(
        "the first {T_SPARSE} tokens; {INDEX_HEADS} index heads of {D_INDEX} features; top {TOP_K}"
    ));
    step.print(format!("index scores of query {}:", T_SPARSE - 1))
        .print(scores.get(-1));
    step.print(format!("keys kept (1) by queries 8-{}:", T_SPARSE - 1));
    for t in 8..T_SPARSE {
        let row = kept.get(t).to_vec();
        let marks: String = row.iter().map(|&x| if x { '1' } else { '.' }).collect();
        step.print(format!("  {t:2}: {marks}"));
    }

    // ANCHOR: sparse
    let sparse = sparse_attention(&q, &k, &v, &kept);
    let dense = softmax_attention(&q, &k, &v);
    // ANCHOR_END: sparse
    let step = story.step("Softmax over the kept keys only");
    step.print(format!(
        "sparse, rows 12-{}, first 6 features:",
        T_SPARSE - 1
    ))
    .print(sparse.slice(0, 12..).slice(1, ..6));
    step.print(format!(
        "dense (every visible key), rows 12-{}, first 6 features:",
        T_SPARSE - 1
    ))
    .print(dense.slice(0, 12..).slice(1, ..6));
    let rows = |x: &Tensor| x.slice(0, ..TOP_K);
    step.print(format!(
        "rows 0-{} (every visible key kept) equal dense: {}",
        TOP_K - 1,
        python_bool(rows(&sparse) == rows(&dense))
    ));

    let tiles_read = |kept: &Tensor<bool>| -> Result<(BlockMask, usize)> {
        let (_, block_mask, visits) = sparse_attention_tiled(&q, &k, &v, kept, TILE)?;
        Ok((block_mask, visits.full + visits.partial))
    };
    let tiles = T_SPARSE.div_ceil(TILE).pow(2);
    let causal_tiles = BlockMask::new(causal, 1, 1, T_SPARSE, T_SPARSE, TILE)?;
    let step = story.step("The kept keys in tiles: chapter 16's kernel");
    step.print(format!(
        "tiles of {TILE} x {TILE}; the causal mask alone leaves {} of {tiles} to read",
        tiles - causal_tiles.count(TileKind::Empty)
    ));
    let (_, read) = tiles_read(&kept)?;
    step.print(format!(
        "top {TOP_K} keys per query: the kernel reads {read} tiles"
    ));
    // ANCHOR: sparse_tiles
    let block_kept = top_k_tiles_kept(&scores, TILE, TOP_TILES);
    let (block_mask, read) = tiles_read(&block_kept)?;
    let by_blocks = sparse_attention(&q, &k, &v, &block_kept);
    // ANCHOR_END: sparse_tiles
    step.print(format!(
        "top {TOP_TILES} tiles of keys per tile of queries (F: full, P: partial, .: empty):"
    ));
    for row in block_mask.grid(0, 0) {
        step.print(format!("  {row}"));
    }
    step.print(format!("the kernel reads {read} tiles of {tiles}"));
    step.print(format!(
        "softmax over their keys, rows 12-{}, first 6 features:",
        T_SPARSE - 1
    ))
    .print(by_blocks.slice(0, 12..).slice(1, ..6));
    Ok(())
}

fn associative_recall(story: &mut Narrative) {
    let step = story.step(format!("Associative recall: n pairs, a {D} x {D} state"));
    step.print(format!(
        "keys of length 1 and random values in {D} features; a pair is recalled when its key"
    ));
    step.print("reads back a vector nearer to its own value than to any other");
    step.print("      n   linear   delta   softmax   last 4 written: linear, delta");
    for n in RECALL_PAIRS {
        // ANCHOR: recall_pairs
        let (keys, values) = (l2_normalize(&randn(&[n, D])), randn(&[n, D]));
        let answers = recall(&keys, &values);
        let every = answers.each_ref().map(|r| pairs_recalled(r, &values, 0..n));
        let last = answers
            .each_ref()
            .map(|r| pairs_recalled(r, &values, n - 4..n));
        // ANCHOR_END: recall_pairs
        step.print(format!(
            "  {n:5}  {:7}  {:6}  {:8}   {}/4, {}/4",
            every[0], every[1], every[2], last[0], last[1]
        ));
    }
}

fn memory(story: &mut Narrative) {
    let step = story.step("The state against a KV cache");
    step.print("numbers kept per head, d_k = d_v = 128:");
    for n in [1024, 32768, 262144] {
        let kept = numbers_kept(n, 128, 128);
        step.print(format!(
            "  n = {n:6}: KV cache {:9}, state {}",
            kept.kv_cache, kept.state
        ));
    }
}

fn gated_layer(story: &mut Narrative) {
    // ANCHOR: gated_layer
    let h = randn(&[T, D]);
    let project = || Linear::new(D, D, false);
    let (w_query, w_key, w_value) = (project(), project(), project());
    let layer = GatedDeltaNet::new(D);
    let (q, k, v) = (w_query.forward(&h), w_key.forward(&h), w_value.forward(&h));
    let token_by_token = layer.forward(&h, &q, &k, &v);
    let chunked = layer.forward_chunked(&h, &q, &k, &v, CHUNK);
    // ANCHOR_END: gated_layer
    let step = story.step("A Gated DeltaNet layer: convolution, norm and gate");
    step.print("conv weights of q, channels 0-2 (taps t-3, t-2, t-1, t):")
        .print(corner(&layer.conv_query.weight, 3, 4));
    let whole = layer.conv_query.forward(&q);
    step.print(format!(
        "conv(q) all at once equals token by token: {}",
        python_bool(whole == layer.conv_query.decode(&q))
    ));
    step.print("token by token, rows 0-2, first 6 features:")
        .print(corner(&token_by_token, 3, 6));
    step.print(format!(
        "the last row, token by token and chunked (chunks of {CHUNK}):"
    ))
    .print(token_by_token.get(-1).slice(0, ..6))
    .print(chunked.get(-1).slice(0, ..6));
    step.print(format!(
        "token by token and chunked agree within 1e-5: {}",
        agree(&chunked, &token_by_token)
    ));
    step.print(format!("max |output| {}", token_by_token.abs().max()));
}

fn hybrid(story: &mut Narrative) {
    // ANCHOR: hybrid
    let layers = hybrid_stack(D);
    let x = randn(&[T, D]);
    let out = hybrid_forward(&layers, &x);
    // ANCHOR_END: hybrid
    let step =
        story.step("A hybrid stack: three Gated DeltaNet layers, one softmax layer");
    let names: Vec<&str> = layers
        .iter()
        .map(|layer| match layer.mixer {
            Mixer::GatedDelta => "gated delta",
            Mixer::Softmax => "softmax",
        })
        .collect();
    step.print(format!("layers: {}", names.join(", ")));
    step.print(format!(
        "each pre-norm and residual; {T} tokens x {D} features"
    ));
    step.print("output, rows 0-2, first 6 features:")
        .print(corner(&out, 3, 6));
    step.print("the last row, first 6 features:")
        .print(out.get(-1).slice(0, ..6));
    step.print(format!("max |output| {}", out.abs().max()));
    step.print(format!("numbers kept per sequence, d_k = d_v = {D}:"));
    for n in HYBRID_LENGTHS {
        let kept: Vec<usize> =
            layers.iter().map(|layer| layer.numbers_kept(n)).collect();
        step.print(format!(
            "  n = {n:5}: layers {:?}, stack {}",
            kept,
            kept.iter().sum::<usize>()
        ));
    }
}
