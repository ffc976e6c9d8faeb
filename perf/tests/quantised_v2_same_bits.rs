//! Version 2 of chapter 20's one-row product over quantised blocks equals the listing
//! (version 1, `QuantMatrix::times_row`): the same weights from the same blocks, the same
//! product, so the same bits, for Q4_1 and Q8_0 blocks of any scale; and a model whose
//! one-row products are version 2 gives the listing's logits at every step (the tiny GGUF
//! always, SmolLM2 when its file is there).

use std::path::Path;

use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::Tensor;
use shared::testing::bits_difference;

use attention_perf::quantised::v2_same_bits;
use ch20_real_model::generate::as_batch;
use ch20_real_model::gguf::GgmlType;
use ch20_real_model::growing_cache::growing;
use ch20_real_model::loader::{load_quantised, model_for_tests};
use ch20_real_model::quantised::QuantMatrix;

/// A float16's bits made finite (an exponent of all ones, infinity or NaN, halved): any
/// sign, normal or subnormal.
fn finite_half(bits: u16) -> [u8; 2] {
    let bits = if bits & 0x7C00 == 0x7C00 {
        bits & !0x4000
    } else {
        bits
    };
    bits.to_le_bytes()
}

/// The bytes of a block of `ggml_type`.
fn block_bytes(ggml_type: GgmlType) -> usize {
    if ggml_type == GgmlType::Q4_1 { 20 } else { 34 }
}

/// A matrix of `rows` rows of `blocks` blocks of `ggml_type` from random `bytes`, each
/// block's scale (and minimum) made a finite float16.
fn matrix(
    ggml_type: GgmlType,
    rows: usize,
    blocks: usize,
    mut bytes: Vec<u8>,
) -> QuantMatrix {
    let halves = if ggml_type == GgmlType::Q4_1 { 2 } else { 1 };
    for block in bytes.chunks_exact_mut(block_bytes(ggml_type)) {
        for half in block[..2 * halves].chunks_exact_mut(2) {
            let finite = finite_half(u16::from_le_bytes([half[0], half[1]]));
            half.copy_from_slice(&finite);
        }
    }
    QuantMatrix::new(ggml_type, rows, blocks * 32, bytes).expect("whole blocks")
}

/// A block type, a number of rows and of blocks a row, and random bytes for them.
fn shapes_and_bytes() -> impl Strategy<Value = (GgmlType, usize, usize, Vec<u8>)> {
    (
        prop_oneof![Just(GgmlType::Q4_1), Just(GgmlType::Q8_0)],
        1usize..=150,
        1usize..=8,
    )
        .prop_flat_map(|(ggml_type, rows, blocks)| {
            let n = rows * blocks * block_bytes(ggml_type);
            (
                Just(ggml_type),
                Just(rows),
                Just(blocks),
                prop::collection::vec(any::<u8>(), n),
            )
        })
}

/// Where the two products differ, with both values and how far apart.
fn difference(want: &[f32], got: &[f32]) -> Option<String> {
    bits_difference(
        &Tensor::from_vec(got.to_vec(), &[got.len()]),
        &Tensor::from_vec(want.to_vec(), &[want.len()]),
    )
}

proptest! {
    #![proptest_config(quiet(64))]

    #[test]
    fn version_2_is_the_listing_bit_for_bit(
        (ggml_type, rows, blocks, bytes) in shapes_and_bytes(),
        x in prop::collection::vec(-4.0f32..4.0, 256),
    ) {
        let m = matrix(ggml_type, rows, blocks, bytes);
        let x = &x[..m.cols];
        for i in [0, rows / 2, rows - 1] {
            let (mut want, mut got) = (vec![0.0; m.cols], vec![0.0; m.cols]);
            m.row_into(i, &mut want);
            v2_same_bits::row_into(&m, i, &mut got);
            if let Some(diff) = difference(&want, &got) {
                prop_assert!(false, "{ggml_type:?}: row {i}'s weights: {diff}");
            }
        }
        let (want, got) = (m.times_row(x), v2_same_bits::times_row(&m, x));
        if let Some(diff) = difference(&want, &got) {
            prop_assert!(false, "{ggml_type:?}, {rows} × {}: x·Wᵀ: {diff}", m.cols);
        }
    }
}

/// The prefill of `prompt` and `steps` greedy steps after it on the model at `path`, its
/// one-row products by the listing and by version 2: the logits compared bit for bit.
fn same_logits(path: &Path, prompt: &[u32], steps: usize) {
    let listing = load_quantised(path).expect("the GGUF file loads quantised");
    let fast = load_quantised(path)
        .expect("the GGUF file loads quantised")
        .model
        .with_one_row_product(v2_same_bits::times_row);
    let recipe = &listing.recipe;
    let (a, caches_a) = listing.model.prefill(&as_batch(prompt), recipe);
    let (b, caches_b) = fast.prefill(&as_batch(prompt), recipe);
    assert_eq!(bits_difference(&b, &a), None, "the prefill's logits");
    let capacity = prompt.len() + steps;
    let mut caches_a = growing(&caches_a, recipe, capacity);
    let mut caches_b = growing(&caches_b, recipe, capacity);
    let mut token = a.select(0, 0).argmax().item() as u32;
    for s in 0..steps {
        let (t, position) = (as_batch(&[token]), prompt.len() + s);
        let a = listing.model.step(&t, position, &mut caches_a, recipe);
        let b = fast.step(&t, position, &mut caches_b, recipe);
        assert_eq!(bits_difference(&b, &a), None, "step {s}'s logits");
        token = a.select(0, 0).argmax().item() as u32;
    }
}

#[test]
fn the_tiny_model_with_version_2_keeps_the_listings_logits() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../chapters/ch20-real-model/fixtures/tiny-llama.gguf");
    same_logits(&path, &[5, 17, 42, 99, 3], 8);
}

#[test]
fn smollm2_with_version_2_keeps_the_listings_logits() {
    let Some(path) = model_for_tests() else {
        return;
    };
    let prompt: Vec<u32> = (0..20).map(|i| 1000 + 37 * i).collect();
    same_logits(&path, &prompt, 3);
}
