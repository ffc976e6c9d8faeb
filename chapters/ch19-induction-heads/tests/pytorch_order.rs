//! The weight gradient summed in PyTorch's blocks agrees with the formula's plain sum to
//! a few units in the last place, and the blocks cover the rows in order.

use ch10_backward::linear::linear_backward;
use ch19_induction_heads::pytorch_order::{
    BLOCK_ROWS, linear_backward_in_pytorch_order, row_blocks,
};
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::nn::Linear;
use shared::{manual_seed, randn};

proptest! {
    #![proptest_config(quiet(200))]

    #[test]
    fn the_blocks_cover_the_rows_in_order(rows in 1usize..5000) {
        let blocks = row_blocks(rows);
        prop_assert_eq!(blocks[0].start, 0);
        prop_assert_eq!(blocks.last().unwrap().end, rows);
        for pair in blocks.windows(2) {
            prop_assert_eq!(pair[0].end, pair[1].start);
        }
        prop_assert!(blocks.iter().all(|b| !b.is_empty() && b.len() <= BLOCK_ROWS));
    }
}

#[test]
fn a_short_sum_is_one_block_and_a_long_one_ends_in_two_halves() {
    assert_eq!(row_blocks(384), vec![0..384]);
    assert_eq!(row_blocks(385), vec![0..193, 193..385]);
    assert_eq!(row_blocks(1000), vec![0..384, 384..692, 692..1000]);
    assert_eq!(
        row_blocks(2048),
        vec![
            0..384,
            384..768,
            768..1152,
            1152..1536,
            1536..1792,
            1792..2048
        ]
    );
}

#[test]
fn blocked_and_plain_weight_gradients_agree_within_a_few_ulps() {
    manual_seed(3);
    let layer = Linear::new(32, 96, true);
    let x = randn(&[64, 32, 32]);
    let grad_y = randn(&[64, 32, 96]);
    let formula = linear_backward(&layer, &x, &grad_y);
    let ordered = linear_backward_in_pytorch_order(&layer, &x, &grad_y);
    assert_eq!(formula.input.to_vec(), ordered.input.to_vec());
    assert_eq!(
        formula.bias.unwrap().to_vec(),
        ordered.bias.unwrap().to_vec()
    );
    let (a, b) = (formula.weight.to_vec(), ordered.weight.to_vec());
    let scale = a.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let mut differ = 0;
    for (x, y) in a.iter().zip(&b) {
        // A sum of 2048 products: the two orders round differently, by far less than
        // a thousandth of the largest gradient.
        assert!((x - y).abs() <= scale * 1e-5, "{x} vs {y}");
        differ += usize::from(x != y);
    }
    assert!(differ > 0, "the orders should differ somewhere");
}
