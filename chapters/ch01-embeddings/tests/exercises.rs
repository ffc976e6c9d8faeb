//! One test per exercise, named after it, so `cargo test -p ch01-embeddings --features
//! exercise NAME` checks just that function. Each compares with PyTorch's numbers (through
//! the reference output) or with the library's own layer, and checks a property a
//! hard-coded answer cannot satisfy.

use ch01_embeddings::inputs::LIFE_IS_SHORT;
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Embedding;
use shared::{manual_seed, tensor};

#[test]
fn exercise_vocabulary() {
    let vocab = vocabulary(LIFE_IS_SHORT);
    let words: Vec<(&str, i64)> = vocab.iter().map(|(w, &i)| (w.as_str(), i)).collect();
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
            prop_assert_eq!(out.get(row as i64), embed.weight.get(id));
        }
    }
}
