//! Every kernel against chapter 9's FlashAttention on the CPU, causal and not, at sizes
//! that cross the tiles' edges, within the tolerance derived from the inputs
//! (`ch21_webgpu::tolerance`). A kernel is always compared, never only run: lavapipe
//! silently stops an invocation's loops after 65,535 iterations, and only a comparison
//! sees that.

mod common;

use ch16_flex_attention::kv_rows::InTensors;
use ch17_inference::split_kv::split_kv_decode;
use ch21_webgpu::kernels::Kernel;
use ch21_webgpu::launch::{Outputs, attention};
use ch21_webgpu::setup::{HostInputs, cpu_attention, draw_qkv};
use ch21_webgpu::tolerance::{Agreement, compare, rescales, tolerance};
use course::quiet_proptest::quiet;
use proptest::prelude::*;

/// Runs `kernel` on `randn` inputs of the given sizes and compares with the CPU.
fn check(
    kernel: Kernel,
    [heads, queries, keys, d, d_v]: [usize; 5],
    causal: bool,
    seed: u64,
) -> Option<(Agreement, Outputs, Outputs)> {
    let gpu = common::gpu()?;
    let [q, k, _] = draw_qkv(seed, &[heads, queries, d], &[heads, keys, d]);
    let v = shared::randn(&[heads, keys, d_v]);
    let host = HostInputs::new(&q, &k, &v);
    let cpu = cpu_attention(&q, &k, &v, causal);
    let got = attention(gpu, kernel, &host.inputs(), causal)
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
    let bound = tolerance(&host.inputs(), causal, rescales(kernel, keys));
    Some((compare(&got, &cpu, &bound), got, cpu))
}

fn assert_agrees(kernel: Kernel, sizes: [usize; 5], causal: bool, seed: u64) {
    let Some((agreement, got, cpu)) = check(kernel, sizes, causal, seed) else {
        return;
    };
    let (row, feature) = agreement.worst_at;
    let (ours, theirs) = match feature {
        Some(c) => {
            let i = row * sizes[4] + c;
            (got.out[i], cpu.out[i])
        }
        None => (got.lse[row], cpu.lse[row]),
    };
    assert!(
        agreement.within(),
        "{} at [heads, queries, keys, d, d_v] = {sizes:?}, causal {causal}: row {row}, \
         feature {feature:?}: GPU {ours}, CPU {theirs}, {:.3} times the tolerance",
        kernel.name(),
        agreement.worst_ratio
    );
}

/// Sizes that cross the tiles' edges: one query, fewer queries than keys and more, a last
/// tile of a few rows, d and d_v apart.
const SIZES: [[usize; 5]; 6] = [
    [1, 1, 1, 1, 1],
    [2, 7, 7, 5, 3],
    [1, 65, 130, 16, 8],
    [3, 130, 65, 8, 16],
    [2, 200, 200, 16, 16],
    [1, 150, 150, 64, 64],
];

#[test]
fn the_forward_kernels_match_chapter_9_causal_and_not() {
    for kernel in Kernel::FORWARD {
        for (seed, sizes) in SIZES.into_iter().enumerate() {
            for causal in [false, true] {
                assert_agrees(kernel, sizes, causal, seed as u64);
            }
        }
    }
}

#[test]
fn split_kv_matches_chapter_9_for_any_number_of_parts() {
    for splits in [1, 2, 3, 8, 40] {
        // 40 parts of 2000 keys; 7 keys in 8 parts leave the last one empty.
        assert_agrees(Kernel::SplitKv { splits }, [2, 1, 2000, 16, 16], false, 7);
        assert_agrees(Kernel::SplitKv { splits }, [1, 3, 7, 4, 5], false, 8);
    }
}

/// Kernel 4 against chapter 17's split-KV decoding on the CPU, which cuts the cache into
/// parts and merges their results by their log-sum-exps too: one query per head over a
/// long cache, and a cache of a few keys in nearly as many parts.
#[test]
fn split_kv_matches_chapter_17s_split_kv_decoding() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let (heads, d, d_v) = (2, 16, 8);
    for (seed, (splits, keys)) in [(1, 300), (3, 300), (8, 1000), (5, 7)]
        .into_iter()
        .enumerate()
    {
        let [q, k, _] = draw_qkv(seed as u64, &[heads, 1, d], &[heads, keys, d]);
        let v = shared::randn(&[heads, keys, d_v]);
        let host = HostInputs::new(&q, &k, &v);
        let kernel = Kernel::SplitKv { splits };
        let got = attention(gpu, kernel, &host.inputs(), false)
            .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
        // Chapter 17 reads a batch of caches, `[batch, kv_heads, keys, d]`, through KvRows.
        let (k, v) = (k.unsqueeze(0), v.unsqueeze(0));
        let cache = InTensors::new(&k, &v).expect("a cache");
        let part = split_kv_decode(&q.unsqueeze(0), &cache, splits as usize, 16)
            .expect("chapter 17's split-KV decoding");
        let cpu = Outputs {
            out: part.out.to_vec(),
            lse: part.lse.to_vec(),
        };
        let bound = tolerance(&host.inputs(), false, rescales(kernel, keys));
        let agreement = compare(&got, &cpu, &bound);
        assert!(
            agreement.within(),
            "{splits} parts of {keys} keys: {:.3} times the tolerance at {:?}",
            agreement.worst_ratio,
            agreement.worst_at
        );
    }
}

#[test]
fn a_wrong_result_is_outside_the_tolerance() {
    // The comparison can fail: the causal result against the one without the mask, and
    // a result nudged by one part in a thousand.
    let Some((_, got, _)) = check(Kernel::Flash, [1, 40, 40, 8, 8], true, 3) else {
        return;
    };
    let [q, k, v] = draw_qkv(3, &[1, 40, 8], &[1, 40, 8]);
    let host = HostInputs::new(&q, &k, &v);
    let unmasked = cpu_attention(&q, &k, &v, false);
    let bound = tolerance(&host.inputs(), true, 40);
    assert!(!compare(&got, &unmasked, &bound).within());
    let mut nudged = got.clone();
    nudged.out[100] *= 1.001;
    assert!(!compare(&nudged, &cpu_attention(&q, &k, &v, true), &bound).within());
}

#[test]
fn lavapipe_stops_long_loops_and_only_the_comparison_sees_it() {
    // Kernel 1's invocation loops over 512 keys × (64 + 1 + 64) times, past lavapipe's
    // 65,535: it returns wrong numbers without an error. Other adapters compute it right.
    let Some(gpu) = common::gpu() else {
        return;
    };
    let Some((agreement, ..)) = check(Kernel::Naive, [1, 64, 512, 64, 64], false, 5)
    else {
        return;
    };
    if common::is_lavapipe(gpu) {
        assert!(!agreement.within(), "lavapipe computed past its loop limit");
    } else {
        assert!(agreement.within(), "{agreement:?}");
    }
}

proptest! {
    #![proptest_config(quiet(8))]

    /// Random sizes (small enough for lavapipe's loop limit), every kernel.
    #[test]
    fn any_sizes_match_chapter_9(
        heads in 1usize..3, queries in 1usize..80, keys in 1usize..150, d in 1usize..33,
        d_v in 1usize..33, causal: bool, splits in 1u32..9, seed in 0u64..1000,
    ) {
        for kernel in Kernel::FORWARD {
            assert_agrees(kernel, [heads, queries, keys, d, d_v], causal, seed);
        }
        assert_agrees(Kernel::SplitKv { splits }, [heads, queries, keys, d, d_v], false, seed);
    }
}
