//! Training batches as nanoGPT's `get_batch` draws them: `batch` random starting points in
//! the token sequence, a window of `context` tokens from each as the input, and the same
//! window moved one token on as the targets, the token each position must predict.

use shared::rng::{Generator, with_default_generator};
use shared::{Error, Result, Tensor};

/// One batch: inputs and targets.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// `[batch, context]` token ids.
    pub x: Tensor<i64>,
    /// `[batch, context]`: `y[b, t] = x[b, t + 1]`, the next token after every position.
    pub y: Tensor<i64>,
}

/// A batch drawn with `generator`: `torch.randint(len(data) − context, (batch,))`, then
/// the windows at those starts.
///
/// # Shapes
/// `data`: any length above `context`. Returns `[batch, context]` twice.
// ANCHOR: get_batch
pub fn draw_batch(
    generator: &mut Generator,
    data: &[u32],
    context: usize,
    batch: usize,
) -> Result<Batch> {
    if batch == 0 || context == 0 || data.len() <= context {
        return Err(Error::InvalidArgument {
            op: "get_batch",
            detail: format!(
                "need a batch and a context of at least 1 and more than context ({context}) \
                 tokens, got batch {batch} and {} tokens",
                data.len()
            ),
        });
    }
    let mut starts = vec![0i64; batch];
    generator.fill_randint(&mut starts, 0, (data.len() - context) as i64);
    let window = |offset: usize| -> Vec<i64> {
        starts
            .iter()
            .flat_map(|&s| {
                let s = s as usize + offset;
                data[s..s + context].iter().map(|&t| i64::from(t))
            })
            .collect()
    };
    Ok(Batch {
        x: Tensor::from_vec(window(0), &[batch, context]),
        y: Tensor::from_vec(window(1), &[batch, context]),
    })
}
// ANCHOR_END: get_batch

/// [`draw_batch`] with the default generator, as nanoGPT's training loop draws.
///
/// # Shapes
/// As [`draw_batch`].
pub fn get_batch(data: &[u32], context: usize, batch: usize) -> Result<Batch> {
    with_default_generator(|g| draw_batch(g, data, context, batch))
}

/// The fixed evaluation batches: `count` batches drawn from a generator of their own,
/// seeded with `seed`, so every evaluation of a run, and of every model, scores the same
/// windows (and the training batches do not depend on how often one evaluates).
///
/// # Shapes
/// Returns `count` batches of `[batch, context]`.
pub fn fixed_batches(
    data: &[u32],
    context: usize,
    batch: usize,
    count: usize,
    seed: u64,
) -> Result<Vec<Batch>> {
    let mut generator = Generator::new(seed);
    (0..count)
        .map(|_| draw_batch(&mut generator, data, context, batch))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_the_inputs_one_token_on() {
        let data: Vec<u32> = (0..50).collect();
        let mut g = Generator::new(3);
        let batch = draw_batch(&mut g, &data, 8, 5).expect("a batch");
        let (x, y) = (batch.x.to_vec(), batch.y.to_vec());
        assert!(x.iter().zip(&y).all(|(a, b)| b - a == 1));
        assert!(x.iter().all(|&t| (0..50).contains(&t)));
    }

    #[test]
    fn too_little_data_or_an_empty_batch_is_an_error() {
        let data: Vec<u32> = (0..8).collect();
        let mut g = Generator::new(3);
        assert!(draw_batch(&mut g, &data, 8, 2).is_err());
        assert!(draw_batch(&mut g, &data, 4, 0).is_err());
        let fixed = fixed_batches(&data, 4, 2, 3, 7).expect("batches");
        assert_eq!(fixed, fixed_batches(&data, 4, 2, 3, 7).expect("batches"));
    }
}
