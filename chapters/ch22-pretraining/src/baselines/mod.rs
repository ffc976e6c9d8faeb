//! What a model must beat: the validation text's cross-entropy under three predictors
//! that need no training beyond counting. A model that has learnt nothing guesses
//! every character alike, `ln 84`; one that knows how often each letter occurs does
//! better, and one that knows which letter follows which better still. The counts
//! come from the training text, with one added to every count ("add-one", Laplace's
//! smoothing), so that a pair the training text never had is unlikely, not
//! impossible.

#[cfg_attr(feature = "exercise", path = "../../exercises/smoothed.rs")]
mod smoothed;

pub use smoothed::smoothed;

// ANCHOR: baselines
/// The loss of guessing every one of `vocab` tokens alike: `ln vocab`.
pub fn uniform(vocab: usize) -> f64 {
    (vocab as f64).ln()
}

/// The validation loss of predicting each character from how often it occurs in the
/// training text, add-one smoothed.
///
/// # Shapes
/// `train`, `validation`: ids below `vocab`, any lengths.
pub fn letters(train: &[u32], validation: &[u32], vocab: usize) -> f64 {
    let mut counts = vec![0; vocab];
    for &id in train {
        counts[id as usize] += 1;
    }
    let p = smoothed(&counts);
    cross_entropy(validation.iter().map(|&id| p[id as usize]))
}

/// The validation loss of predicting each character from the one before it: how often
/// each character follows each other in the training text, add-one smoothed row by
/// row.
///
/// # Shapes
/// `train`, `validation`: ids below `vocab`, any lengths.
pub fn letter_pairs(train: &[u32], validation: &[u32], vocab: usize) -> f64 {
    let mut counts = vec![vec![0; vocab]; vocab];
    for pair in train.windows(2) {
        counts[pair[0] as usize][pair[1] as usize] += 1;
    }
    let p: Vec<Vec<f64>> = counts.iter().map(|row| smoothed(row)).collect();
    cross_entropy(
        validation
            .windows(2)
            .map(|pair| p[pair[0] as usize][pair[1] as usize]),
    )
}

/// The mean of `-ln p` over the probabilities given to what came.
pub fn cross_entropy(probabilities: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) =
        probabilities.fold((0.0, 0usize), |(sum, n), p| (sum - p.ln(), n + 1));
    sum / n as f64
}
// ANCHOR_END: baselines

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_of_one_repeated_pair() {
        // Training "abab": a is followed by b twice, b by a once.
        let train = [0, 1, 0, 1];
        assert_eq!(uniform(2), 2f64.ln());
        // Counts 2 and 2, smoothed (3/6, 3/6): ln 2 for every character.
        assert!((letters(&train, &[0, 1, 1], 2) - 2f64.ln()).abs() < 1e-15);
        // a→b twice, b→a once: p(b|a) = 3/4, p(a|b) = 2/3.
        let expected = -((3.0f64 / 4.0).ln() + (2.0f64 / 3.0).ln()) / 2.0;
        assert!((letter_pairs(&train, &[0, 1, 0], 2) - expected).abs() < 1e-15);
    }
}
