//! Chapter 18: the keys DeepSeek's indexer keeps, and softmax over them.
//!
//! The widget draws an example of the chapter's size after `manual_seed`: 16 tokens'
//! queries and keys of 16 features, then the indexer's small queries, keys and head
//! weights. The chapter's code scores every key before each query with the indexer, keeps
//! the best `k`, and takes the softmax of the attention scores over those alone. The
//! second matrix is softmax over every key before the query, the dense attention the
//! sparse one stands in for.

use ch05_causal::mask::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use ch18_linear_attention::setup::{D, D_INDEX, INDEX_HEADS, T_SPARSE, TOP_K};
use ch18_linear_attention::sparse::{index_scores, top_k_kept};
use shared::{manual_seed, randn, stack};

use super::{Heatmap, Settings};
use crate::controls::Control;

/// The chapter's seed.
pub(super) const SEED: u64 = 18;

/// How many keys the indexer keeps, and the seed, at the chapter's values.
pub(super) fn controls() -> Vec<Control> {
    vec![
        Control::count("top_k", "keys kept per query (k)", [0, T_SPARSE], TOP_K),
        Control::seed_from(SEED),
    ]
}

/// Two `[tokens, tokens]` matrices, rows the queries' positions, columns the keys':
/// softmax over the kept keys, then over every key up to the query.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let top_k = settings.top_k.unwrap_or(TOP_K);
    if top_k == 0 {
        return Err(
            "the indexer keeps at least 1 key for each query: with none, a query has \
             nothing to attend to"
                .to_string(),
        );
    }
    manual_seed(seed);
    let (q, k) = (randn(&[T_SPARSE, D]), randn(&[T_SPARSE, D]));
    let q_index = randn(&[T_SPARSE, INDEX_HEADS, D_INDEX]);
    let k_index = randn(&[T_SPARSE, D_INDEX]);
    let w_index = randn(&[T_SPARSE, INDEX_HEADS]);
    let kept = top_k_kept(&index_scores(&q_index, &k_index, &w_index), top_k);

    let scores = q.matmul(&k.t());
    let sparse = masked_softmax(&scores, &kept.logical_not(), D);
    let dense = masked_softmax(&scores, &causal_mask(T_SPARSE), D);
    let weights = stack(&[sparse, dense], 0);

    let positions: Vec<String> = (0..T_SPARSE).map(|t| t.to_string()).collect();
    let titles = vec![
        format!("softmax over the {top_k} keys the indexer keeps"),
        "softmax over every key up to the query".to_string(),
    ];
    let caption = format!(
        "{T_SPARSE} tokens: the indexer scores every key up to each query and keeps the \
         best {top_k} (all of them for the first {top_k} queries); the keys it drops get \
         weight 0"
    );
    Ok(Heatmap::of_heads(&weights, positions.clone(), positions)
        .caption(caption)
        .titles(titles))
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};

    fn top(k: usize) -> Settings {
        Settings {
            top_k: Some(k),
            ..settings(18)
        }
    }

    #[test]
    fn each_query_weighs_only_the_kept_keys() {
        for k in [1, 4, 7, 16] {
            let map = heatmap(&top(k)).unwrap();
            let [sparse, dense] = [&map.heads[0], &map.heads[1]];
            for (t, (row, full)) in sparse.iter().zip(dense).enumerate() {
                let seen = row.iter().filter(|&&w| w > 0.0).count();
                assert_eq!(seen, (t + 1).min(k), "k {k}, query {t}");
                assert!(row[t + 1..].iter().all(|&w| w == 0.0));
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                if t < k {
                    // Every visible key kept: the dense row, bit for bit.
                    assert_eq!(row, full);
                }
            }
        }
        assert_eq!(
            heatmap(&top(16)).unwrap().heads[0],
            heatmap(&top(16)).unwrap().heads[1]
        );
        assert!(heatmap(&top(0)).unwrap_err().contains("at least 1 key"));
    }
}
