//! One test per exercise, named after it, so `cargo test -p ch01-embeddings --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) or with the library's own layer, and checks a property a
//! hard-coded answer cannot satisfy.

use ch01_embeddings::answers::Agreement;
use ch01_embeddings::inputs::LIFE_IS_SHORT;
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::one_hot::{lookup_by_matmul, one_hot, predict_matmul_agreement};
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Embedding;
use shared::{manual_seed, tensor};

#[test]
fn exercise_vocabulary() {
    let vocab = vocabulary(LIFE_IS_SHORT);
    let words: Vec<(&str, usize)> =
        vocab.iter().map(|(w, &i)| (w.as_str(), i)).collect();
    assert_eq!(
        words,
        [
            ("Life", 0),
            ("dessert", 1),
            ("eat", 2),
            ("first", 3),
            ("is", 4),
            ("short", 5)
        ]
    );
    // Repeated words get one id; order of appearance does not matter.
    assert_eq!(vocabulary("b a, b").len(), 2);
    assert_eq!(vocabulary("b a")["a"], 0);
}

#[test]
fn exercise_token_ids() {
    let vocab = vocabulary(LIFE_IS_SHORT);
    let ids = token_ids(LIFE_IS_SHORT, &vocab);
    assert_eq!(ids.to_string(), "tensor([0, 4, 5, 2, 1, 3])");
    assert_eq!(token_ids("eat first, eat", &vocab).to_vec(), vec![2, 3, 2]);
}

#[test]
fn exercise_lookup() {
    manual_seed(123);
    let embed = Embedding::new(6, 16);
    let ids = tensor!([0, 4, 5, 2, 1, 3]);
    assert_eq!(lookup(&embed.weight, &ids), embed.forward(&ids));
}

proptest! {
    #![proptest_config(quiet(256))]
    /// Looking up any ids gives exactly the table rows, whatever the table holds.
    #[test]
    fn exercise_lookup_reads_rows(ids in proptest::collection::vec(0i64..10, 1..8), seed in 0u64..1000) {
        manual_seed(seed);
        let embed = Embedding::new(10, 4);
        let ids_tensor = shared::Tensor::from_vec(ids.clone(), &[ids.len()]);
        let out = lookup(&embed.weight, &ids_tensor);
        prop_assert_eq!(out.shape(), [ids.len(), 4]);
        for (row, &id) in ids.iter().enumerate() {
            prop_assert_eq!(out.get(row), embed.weight.get(id));
        }
    }
}

/// Whether two tensors hold the same `f32`s bit for bit, or only close ones.
fn agreement(a: &shared::Tensor, b: &shared::Tensor) -> Agreement {
    let bits = |t: &shared::Tensor| {
        t.to_vec().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    };
    if bits(a) == bits(b) {
        Agreement::BitForBit
    } else {
        Agreement::UpToRounding
    }
}

#[test]
fn exercise_one_hot() {
    assert_eq!(
        one_hot(&tensor!([2, 0]), 3).to_vec(),
        [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    );
    // The chapter's table and sentence: the product reads the same rows as the layer.
    manual_seed(123);
    let embed = Embedding::new(6, 16);
    let ids = tensor!([0, 4, 5, 2, 1, 3]);
    let by_matmul = lookup_by_matmul(&embed.weight, &ids);
    assert_eq!(by_matmul.shape(), [6, 16]);
    assert_eq!(
        predict_matmul_agreement(),
        agreement(&by_matmul, &embed.forward(&ids)),
        "the prediction does not match what the product gives"
    );
}

proptest! {
    #![proptest_config(quiet(64))]
    /// For any vocabulary, width and ids: one 1 per row, in the id's column; the product
    /// agrees with the embedding layer as predicted, and is close to it in any case.
    #[test]
    fn exercise_one_hot_is_a_lookup(
        ids in proptest::collection::vec(0i64..40, 1..10),
        vocab in 1usize..40, d in 1usize..24, seed in 0u64..1000,
    ) {
        let ids: Vec<i64> = ids.iter().map(|&id| id % vocab as i64).collect();
        let ids_tensor = shared::Tensor::from_vec(ids.clone(), &[ids.len()]);
        let rows = one_hot(&ids_tensor, vocab);
        prop_assert_eq!(rows.shape(), [ids.len(), vocab]);
        for (row, &id) in rows.to_vec().chunks(vocab).zip(&ids) {
            for (col, &x) in row.iter().enumerate() {
                prop_assert_eq!(x, if col as i64 == id { 1.0 } else { 0.0 });
            }
        }
        manual_seed(seed);
        let embed = Embedding::new(vocab, d);
        let by_matmul = lookup_by_matmul(&embed.weight, &ids_tensor);
        let by_lookup = embed.forward(&ids_tensor);
        prop_assert!(shared::testing::close(&by_matmul, &by_lookup, 1e-6, 1e-6));
        prop_assert_eq!(predict_matmul_agreement(), agreement(&by_matmul, &by_lookup));
    }
}
