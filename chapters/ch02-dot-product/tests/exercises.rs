//! One test per exercise, named after it, so `cargo test -p ch02-dot-product --features
//! exercise NAME` checks just that exercise. Each compares with PyTorch's numbers (the text
//! the reference script printed) and checks properties on random inputs that a hard-coded
//! answer cannot satisfy.

use ch01_embeddings::inputs::your_journey;
use ch02_dot_product::all_at_once::{all_attention_scores, all_context_vectors};
use ch02_dot_product::answers::Score;
use ch02_dot_product::context::context_vector;
use ch02_dot_product::scores::attention_scores;
use ch02_dot_product::top_key::{cosine_scores, predict_always_itself, top_key};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::assert_close;
use shared::{Tensor, stack, tensor};

/// A random `[n, d]` matrix with entries in `-2..2`.
fn matrix(n: usize, d: usize) -> impl Strategy<Value = Tensor> {
    proptest::collection::vec(-2.0f32..2.0, n * d)
        .prop_map(move |v| Tensor::from_vec(v, &[n, d]))
}

/// A random matrix of 1 to 7 rows of 1 to 4 columns.
fn any_inputs() -> impl Strategy<Value = Tensor> {
    (1usize..8, 1usize..5).prop_flat_map(|(n, d)| matrix(n, d))
}

/// Random inputs and a random `[d]` query to go with them.
fn inputs_and_query() -> impl Strategy<Value = (Tensor, Tensor)> {
    any_inputs().prop_flat_map(|inputs| {
        let d = inputs.size(1);
        (Just(inputs), matrix(1, d).prop_map(|q| q.get(0)))
    })
}

/// Random inputs and random `[n]` weights, one per input.
fn inputs_and_weights() -> impl Strategy<Value = (Tensor, Tensor)> {
    any_inputs().prop_flat_map(|inputs| {
        let n = inputs.size(0);
        (Just(inputs), matrix(1, n).prop_map(|w| w.get(0)))
    })
}

#[test]
fn exercise_attention_scores() {
    let inputs = your_journey();
    let scores = attention_scores(&inputs.get(1), &inputs);
    assert_eq!(
        scores.to_string(),
        "tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])"
    );
    // Another query: the first word, "Your".
    assert_close(
        &attention_scores(&inputs.get(0), &inputs),
        &tensor!([0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310]),
        0.0,
        1e-5,
    );
}

#[test]
fn exercise_context_vector() {
    let inputs = your_journey();
    // The softmax weights of x(2), computed with the library's own matmul and softmax.
    let weights = inputs.matmul(&inputs.get(1)).softmax(0);
    assert_eq!(
        context_vector(&weights, &inputs).to_string(),
        "tensor([0.4419, 0.6515, 0.5683])"
    );
    // All the weight on one word gives back that word's vector.
    let one_hot = tensor!([0.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    assert_eq!(context_vector(&one_hot, &inputs), inputs.get(4));
}

#[test]
fn exercise_all_at_once_scores() {
    let inputs = your_journey();
    let scores = all_attention_scores(&inputs);
    assert_eq!(scores.shape(), [6, 6]);
    assert_eq!(
        scores.get(1).to_string(),
        "tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])"
    );
    assert_eq!(
        scores.get(4).to_string(),
        "tensor([0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935])"
    );
}

#[test]
fn exercise_all_at_once_context() {
    let inputs = your_journey();
    let weights = all_attention_scores(&inputs).softmax(-1);
    let context = all_context_vectors(&weights, &inputs);
    assert_eq!(
        context.to_string(),
        "tensor([[0.4421, 0.5931, 0.5790],\n        [0.4419, 0.6515, 0.5683],\n        [0.4431, 0.6496, 0.5671],\n        [0.4304, 0.6298, 0.5510],\n        [0.4671, 0.5910, 0.5266],\n        [0.4177, 0.6503, 0.5645]])"
    );
}

proptest! {
    #![proptest_config(quiet(32))]

    /// Score `i` is the dot product of the query with input `i`, whatever the inputs.
    #[test]
    fn exercise_attention_scores_are_dot_products((inputs, query) in inputs_and_query()) {
        let scores = attention_scores(&query, &inputs);
        let want: Vec<Tensor> = inputs.iter().map(|x_i| x_i.dot(&query)).collect();
        assert_close(&scores, &stack(&want, 0), 0.0, 1e-5);
    }

    /// The context vector is `Σ_i weights[i] · inputs[i]`, for any weights.
    #[test]
    fn exercise_context_vector_is_the_weighted_sum((inputs, weights) in inputs_and_weights()) {
        let want = weights.unsqueeze(0).matmul(&inputs).get(0);
        assert_close(&context_vector(&weights, &inputs), &want, 0.0, 1e-5);
    }

    /// Entry `(i, j)` of the score matrix is `inputs[i] · inputs[j]`, so it is symmetric.
    #[test]
    fn exercise_all_at_once_scores_are_all_dot_products(inputs in any_inputs()) {
        let scores = all_attention_scores(&inputs);
        let n = inputs.size(0);
        prop_assert_eq!(scores.shape(), [n, n]);
        for i in 0..n as i64 {
            for j in 0..n as i64 {
                let want = inputs.get(i).dot(&inputs.get(j)).item();
                prop_assert!((scores.get(i).get(j).item() - want).abs() <= 1e-5);
            }
        }
    }

    /// Row `i` of the context matrix is the weighted sum of the inputs with weights row `i`;
    /// weights that pick one input per row give back exactly those inputs (reversed here).
    #[test]
    fn exercise_all_at_once_context_rows_are_weighted_sums(inputs in any_inputs(), seed in 0u64..1000) {
        let n = inputs.size(0);
        shared::manual_seed(seed);
        let weights = shared::rand(&[n, n]);
        let context = all_context_vectors(&weights, &inputs);
        prop_assert_eq!(context.shape(), [n, inputs.size(1)]);
        for i in 0..n as i64 {
            let mut want = shared::zeros(&[inputs.size(1)]);
            for (j, x_j) in inputs.iter().enumerate() {
                want += &weights.get(i).get(j) * &x_j;
            }
            assert_close(&context.get(i), &want, 0.0, 1e-5);
        }
        let mut reverse = shared::zeros(&[n, n]);
        for i in 0..n {
            reverse.set(&[i, n - 1 - i], 1.0);
        }
        let picked = all_context_vectors(&reverse, &inputs);
        for i in 0..n as i64 {
            prop_assert_eq!(picked.get(i), inputs.get(n as i64 - 1 - i));
        }
    }
}

/// The key of the largest weight in every row, found by hand.
fn largest_per_row(weights: &Tensor) -> Vec<usize> {
    let n = weights.size(-1);
    let values = weights.to_vec();
    values
        .chunks(n)
        .map(|row| {
            (0..n).fold(0, |best, j| if row[j] > row[best] { j } else { best })
        })
        .collect()
}

/// `cos(xᵢ, xⱼ)` for every pair of rows, in `f64`.
fn cosines_by_hand(inputs: &Tensor) -> Tensor {
    let d = inputs.size(1);
    let rows: Vec<Vec<f64>> = inputs
        .to_vec()
        .chunks(d)
        .map(|r| r.iter().map(|&x| f64::from(x)).collect())
        .collect();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut cosines = Vec::new();
    for a in &rows {
        for b in &rows {
            cosines.push((dot(a, b) / (dot(a, a) * dot(b, b)).sqrt()) as f32);
        }
    }
    Tensor::from_vec(cosines, &[rows.len(), rows.len()])
}

#[test]
fn exercise_top_key() {
    let inputs = your_journey();
    let dot = inputs.matmul(&inputs.t()).softmax(-1);
    let cosine = cosine_scores(&inputs);
    assert_close(&cosine, &cosines_by_hand(&inputs), 1e-5, 1e-6);
    // The chapter's sentence: which token does each one look at most?
    assert_eq!(top_key(&dot), largest_per_row(&dot));
    let cosine_top = top_key(&cosine.softmax(-1));
    for (score, top) in [
        (Score::DotProduct, top_key(&dot)),
        (Score::Cosine, cosine_top),
    ] {
        let itself = top.iter().enumerate().all(|(i, &j)| i == j);
        if !itself {
            assert!(
                !predict_always_itself(score),
                "{score:?}: the top keys of 'Your journey starts with one step' are {top:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(quiet(64))]

    /// On random inputs: `top_key` finds the largest weight of every row; with cosine scores
    /// every token's largest weight is its own (so the prediction must say so), and
    /// whenever a dot product puts another key first, the prediction must not claim
    /// "always itself" for dot products.
    #[test]
    fn exercise_top_key_on_random_inputs(
        inputs in (2usize..8, 2usize..6)
            .prop_flat_map(|(n, d)| matrix(n, d))
            .prop_filter("no row near zero", |x| {
                let d = x.size(1);
                x.to_vec().chunks(d).all(|r| r.iter().map(|v| v * v).sum::<f32>() > 0.01)
            }),
    ) {
        let dot = inputs.matmul(&inputs.t()).softmax(-1);
        prop_assert_eq!(top_key(&dot), largest_per_row(&dot));
        let cosine = cosine_scores(&inputs);
        let by_hand = cosines_by_hand(&inputs).to_vec();
        prop_assert!(shared::testing::close(
            &cosine,
            &Tensor::from_vec(by_hand.clone(), cosine.sizes()),
            1e-4,
            1e-5
        ));
        let weights = cosine.softmax(-1);
        prop_assert_eq!(top_key(&weights), largest_per_row(&weights));
        let n = inputs.size(0);
        // Rows that point the same way tie with the query itself; random rows almost
        // never do, and then the query itself is the only top key.
        let distinct = |i: usize| (0..n).all(|j| j == i || by_hand[i * n + j] < 0.9999);
        for (i, &top) in top_key(&weights).iter().enumerate() {
            if distinct(i) {
                prop_assert_eq!(top, i);
            }
        }
        prop_assert!(predict_always_itself(Score::Cosine));
        if top_key(&dot).iter().enumerate().any(|(i, &j)| i != j) {
            prop_assert!(!predict_always_itself(Score::DotProduct));
        }
    }
}
