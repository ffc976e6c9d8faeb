//! The exercises' tests: each `exercise_NAME*` test checks exercise `NAME` alone, on
//! small inputs (none needs the text).

use ch22_pretraining::baselines::smoothed;
use ch22_pretraining::bpe::{merge, most_frequent_pair};
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;

/// Ids below 26 as the letters `a`..`z`, so that a merge can be checked with
/// `str::replace`, which also replaces left to right without overlaps.
fn letters(ids: &[u32]) -> String {
    ids.iter().map(|&id| char::from(b'a' + id as u8)).collect()
}

/// What is wrong with `merge(ids, pair, new_id)`, or `None`.
fn check_merge(ids: &[u32], pair: (u32, u32), new_id: u32) -> Option<String> {
    let merged = merge(ids, pair, new_id);
    let expected =
        letters(ids).replace(&letters(&[pair.0, pair.1]), &letters(&[new_id]));
    (letters(&merged) != expected).then(|| {
        format!(
            "merge({ids:?}, {pair:?}, {new_id}) returned {merged:?}, expected {:?}",
            expected
                .bytes()
                .map(|b| u32::from(b - b'a'))
                .collect::<Vec<_>>()
        )
    })
}

#[test]
fn exercise_merge_replaces_every_occurrence_left_to_right() {
    for (ids, pair, new_id, expected) in [
        (vec![0, 1, 2, 0, 1], (0, 1), 3, vec![3, 2, 3]),
        (vec![0, 0, 0], (0, 0), 1, vec![1, 0]),
        (vec![0, 0, 0, 0], (0, 0), 1, vec![1, 1]),
        (vec![2, 0, 1], (0, 1), 5, vec![2, 5]),
        (vec![1, 0], (0, 1), 5, vec![1, 0]),
        (vec![0], (0, 1), 5, vec![0]),
        (vec![], (0, 1), 5, vec![]),
    ] {
        assert_eq!(
            merge(&ids, pair, new_id),
            expected,
            "merge({ids:?}, {pair:?}, {new_id})"
        );
    }
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_merge_on_random_words(
        ids in prop::collection::vec(0u32..4, 0..24),
        a in 0u32..4,
        b in 0u32..4,
    ) {
        holds(check_merge(&ids, (a, b), 25))?;
    }
}

#[test]
fn exercise_most_frequent_pair_breaks_ties_towards_the_smaller_pair() {
    let counts = vec![vec![0, 3, 1], vec![5, 0, 0], vec![0, 5, 2]];
    assert_eq!(
        most_frequent_pair(&counts),
        Some((1, 0)),
        "counts {counts:?}"
    );
    let counts = vec![vec![0, 4], vec![4, 4]];
    assert_eq!(
        most_frequent_pair(&counts),
        Some((0, 1)),
        "counts {counts:?}"
    );
    let counts = vec![vec![0, 0], vec![0, 0]];
    assert_eq!(
        most_frequent_pair(&counts),
        None,
        "no pair occurs: {counts:?}"
    );
    assert_eq!(most_frequent_pair(&[]), None, "an empty table");
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_most_frequent_pair_on_random_counts(
        counts in (1usize..6).prop_flat_map(|n| {
            prop::collection::vec(prop::collection::vec(0u64..4, n), n)
        }),
    ) {
        let mut expected = None;
        for (a, row) in counts.iter().enumerate() {
            for (b, &count) in row.iter().enumerate() {
                let best = expected.map_or(0, |(x, y): (usize, usize)| counts[x][y]);
                if count > best {
                    expected = Some((a, b));
                }
            }
        }
        let expected = expected.map(|(a, b)| (a as u32, b as u32));
        let got = most_frequent_pair(&counts);
        holds((got != expected).then(|| {
            format!("counts {counts:?}: returned {got:?}, expected {expected:?}")
        }))?;
    }
}

/// What is wrong with `smoothed(counts)`, or `None`: each probability `(c + 1) / (N +
/// n)` within a few float64 steps.
fn check_smoothed(counts: &[u64]) -> Option<String> {
    let p = smoothed(counts);
    let total = (counts.iter().sum::<u64>() + counts.len() as u64) as f64;
    let expected: Vec<f64> = counts.iter().map(|&c| (c + 1) as f64 / total).collect();
    let close = p.len() == expected.len()
        && p.iter()
            .zip(&expected)
            .all(|(x, e)| (x - e).abs() <= 4.0 * f64::EPSILON * e);
    (!close).then(|| {
        format!("smoothed({counts:?}) returned {p:?}, expected {expected:?}")
    })
}

#[test]
fn exercise_smoothed_adds_one_to_every_count() {
    // [1/6, 2/6, 3/6]; with no counts at all, every outcome alike.
    for counts in [vec![0, 1, 2], vec![0, 0, 0, 0], vec![7]] {
        if let Some(problem) = check_smoothed(&counts) {
            panic!("{problem}");
        }
    }
}

proptest! {
    #![proptest_config(quiet(256))]

    #[test]
    fn exercise_smoothed_on_random_counts(
        counts in prop::collection::vec(0u64..1000, 1..30),
    ) {
        holds(check_smoothed(&counts))?;
    }
}
