//! The one-process simulation: the ring, its all-gather, Ulysses and tensor-parallel heads
//! against one process's attention, and the check of the ranks' sizes.

use ch24_distributed::agree::check_agreed_sizes;
use ch24_distributed::ring::ring_attention_simulated;
use ch24_distributed::setup::Sizes;
use ch24_distributed::shards::Layout;
use ch24_distributed::tensor_parallel::{
    Projections, all_heads, rank_partial, sum_in_rank_order,
};
use ch24_distributed::transfer::all_gather_simulated;
use ch24_distributed::ulysses::{causal_attention, ulysses_simulated};
use proptest::prelude::*;
use shared::{Tensor, manual_seed, randn};

fn inputs(seed: u64, heads: usize, tokens: usize, d: usize) -> [Tensor; 3] {
    manual_seed(seed);
    [0; 3].map(|_| randn(&[1, heads, tokens, d]))
}

fn largest_gap(a: &Tensor, b: &Tensor) -> f32 {
    (a - b).abs().max().item()
}

/// The ring's merges add in another order than one pass over all keys: each merge rounds
/// the output once more. With outputs of size about 1 and at most 2W merges, a few float32
/// steps of 1.2e-7 each bound the gap; 2e-6 leaves room for the kernel's own roundings.
const RING_TOLERANCE: f32 = 2e-6;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_ring_gives_one_processs_attention(seed in 0u64..1000, world in 1usize..5, len in 1usize..4, heads in 1usize..3, zigzag: bool) {
        let layout = if zigzag { Layout::Zigzag } else { Layout::Contiguous };
        let tokens = len * layout.chunks(world);
        let [q, k, v] = inputs(seed, heads, tokens, 4);
        let ring = ring_attention_simulated(&q, &k, &v, world, layout, |_, _, _| {}).unwrap();
        let one = causal_attention(&q, &k, &v).unwrap();
        let gap = largest_gap(&ring, &one);
        prop_assert!(gap < RING_TOLERANCE, "{layout:?}, {world} ranks, {tokens} tokens: the ring is {gap:e} from one process");
        let gathered = all_gather_simulated(&q, &k, &v, world, layout).unwrap();
        prop_assert!(gathered.to_vec() == ring.to_vec(), "{layout:?}, {world} ranks: the all-gather's bits differ from the ring's by up to {:e}", largest_gap(&gathered, &ring));
    }

    #[test]
    fn ulysses_gives_one_processs_bits(seed in 0u64..1000, world in 1usize..5, len in 1usize..4, per_rank in 1usize..3) {
        let (heads, tokens) = (world * per_rank, world * len);
        let [q, k, v] = inputs(seed, heads, tokens, 4);
        let ulysses = ulysses_simulated(&q, &k, &v, world).unwrap();
        let one = causal_attention(&q, &k, &v).unwrap();
        prop_assert!(ulysses.to_vec() == one.to_vec(), "{world} ranks, {heads} heads, {tokens} tokens: Ulysses is {:e} from one process", largest_gap(&ulysses, &one));
    }
}

#[test]
fn each_ring_step_merges_one_more_block() {
    // Contiguous shards on 4 ranks: rank r merges r + 1 blocks, at steps 0 to r.
    let [q, k, v] = inputs(24, 2, 8, 4);
    let mut merged = [[false; 4]; 4];
    ring_attention_simulated(
        &q,
        &k,
        &v,
        4,
        Layout::Contiguous,
        |rank, step, running| {
            merged[rank][step] = running[0].is_some();
        },
    )
    .unwrap();
    for (rank, steps) in merged.iter().enumerate() {
        assert_eq!(
            steps, &[true; 4],
            "rank {rank}: its own diagonal block comes first"
        );
    }
}

#[test]
fn tensor_parallel_heads_add_up_to_the_layer() {
    manual_seed(7);
    let x = randn(&[8, 16]);
    let w = Projections::random(16, 4, 4);
    let partials: Vec<Tensor> = (0..4)
        .map(|r| rank_partial(&x, &w, 4, r, 4).unwrap())
        .collect();
    let fixed = sum_in_rank_order(&partials);
    let by_hand = &(&(&partials[0] + &partials[1]) + &partials[2]) + &partials[3];
    assert_eq!(
        fixed.to_vec(),
        by_hand.to_vec(),
        "the sum in rank order is ((p0 + p1) + p2) + p3"
    );
    let one = all_heads(&x, &w, 4).unwrap();
    // Outputs of size about 1, 16 products each: a few float32 steps.
    let gap = largest_gap(&fixed, &one);
    assert!(
        gap < 1e-5,
        "the partial outputs' sum is {gap:e} from the all-heads product"
    );
}

#[test]
fn sizes_that_do_not_fit_are_named() {
    let fits = Sizes {
        tokens: 16,
        heads: 4,
        head_dim: 8,
    };
    assert_eq!(check_agreed_sizes(&[fits; 4]).unwrap(), fits);
    let cases = [
        (
            vec![fits, Sizes { tokens: 32, ..fits }, fits, fits],
            "rank 1 has 32 tokens",
        ),
        (
            vec![Sizes { tokens: 12, ..fits }; 4],
            "12 tokens on 4 ranks",
        ),
        (vec![Sizes { heads: 6, ..fits }; 4], "6 heads on 4 ranks"),
        (vec![Sizes { tokens: 8, ..fits }; 8], "8 tokens on 8 ranks"),
    ];
    for (reported, expected) in cases {
        let message = check_agreed_sizes(&reported).unwrap_err().to_string();
        assert!(
            message.contains(expected),
            "{reported:?}: the error {message:?} does not say {expected:?}"
        );
    }
    let message = ring_attention_simulated(
        &randn(&[1, 2, 10, 4]),
        &randn(&[1, 2, 10, 4]),
        &randn(&[1, 2, 10, 4]),
        4,
        Layout::Zigzag,
        |_, _, _| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("ring_attention") && message.contains("10 tokens"),
        "{message}"
    );
}

#[test]
fn the_cost_model_takes_the_longer_of_attending_and_sending() {
    use ch24_distributed::cost::CostModel;
    // 1024 tokens, 8 heads of 64, 4 ranks, zigzag: 1,049,600 products a rank, 262,400
    // a step; a block of keys and values is 2 · 256 · 8 · 64 · 4 = 1,048,576 bytes.
    let sizes = Sizes {
        tokens: 1024,
        heads: 8,
        head_dim: 64,
    };
    let model = CostModel {
        latency: 1e-3,
        bandwidth: 1_048_576.0,
        products_per_second: 262_400.0,
    };
    let e = model.ring(sizes, 8, 4, 4, Layout::Zigzag);
    assert!((e.compute_per_step - 1.0).abs() < 1e-12, "{e:?}");
    assert!((e.message_per_step - 1.001).abs() < 1e-12, "{e:?}");
    // The first step attends to the rank's own block; three more wait for the messages.
    assert!((e.total - (1.0 + 3.0 * 1.001)).abs() < 1e-12, "{e:?}");
    let fast = CostModel {
        bandwidth: 1e12,
        ..model
    };
    let e = fast.ring(sizes, 8, 4, 4, Layout::Zigzag);
    assert!(
        (e.total - 4.0).abs() < 1e-9,
        "messages hidden behind the attention: {e:?}"
    );
}
