//! Properties of the paged cache and of speculative decoding: reading the cache through
//! block tables is data movement only (bit-equal to a contiguous cache, whatever the
//! block size and the order in which sequences took their blocks), sharing and copying
//! never change what a sequence reads, and greedy speculative decoding writes exactly the
//! target's greedy tokens; the block-table lookup and the count of kept draft tokens.

use ch15_modern_layer::TinyModel;
use ch15_modern_layer::model::generate_cached;
use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;
use shared::testing::{assert_same_bits, bits_difference};
use shared::{Tensor, cat, manual_seed, randn};

use ch17_inference::accepted::accepted;
use ch17_inference::block_table::slot;
use ch17_inference::paged::{BlockPool, Sequence};
use ch17_inference::paged_decode::{generate_paged, prefill_paged, step_paged};
use ch17_inference::setup::{CONFIG, recipe};
use ch17_inference::speculative::speculate_greedy;

const PYTORCH: &str = include_str!("../../../reference/expected/ch17-inference.txt");

fn ids(tokens: &[i64]) -> Tensor<i64> {
    Tensor::from_vec(tokens.to_vec(), &[1, tokens.len()])
}

fn models(seed: u64, draft_layers: usize) -> (TinyModel, TinyModel) {
    manual_seed(seed);
    let target = TinyModel::new(CONFIG);
    manual_seed(seed);
    let mut draft = TinyModel::new(CONFIG);
    draft.layers.truncate(draft_layers);
    (target, draft)
}

proptest! {
    #![proptest_config(quiet(48))]

    /// Three sequences append random keys and values in a random interleaving; each reads
    /// back through its table exactly its own keys and values, and attention over the
    /// gathered cache equals attention over the contiguous one, bit for bit.
    #[test]
    fn gathering_through_block_tables_equals_a_contiguous_cache(
        block_size in 1usize..7,
        order in prop::collection::vec(0usize..3, 1..40),
        seed in any::<u64>(),
    ) {
        manual_seed(seed);
        let (n_layers, n_kv, hd) = (2, 2, 4);
        let mut pool = BlockPool::new(40, block_size, n_layers).unwrap();
        let mut seqs = [Sequence::default(), Sequence::default(), Sequence::default()];
        let mut own: Vec<Vec<Vec<(Tensor, Tensor)>>> = vec![vec![Vec::new(); n_layers]; 3];
        for &s in &order {
            let kv: Vec<(Tensor, Tensor)> = (0..n_layers)
                .map(|_| (randn(&[1, n_kv, 1, hd]), randn(&[1, n_kv, 1, hd])))
                .collect();
            for (layer, pair) in kv.iter().enumerate() {
                own[s][layer].push(pair.clone());
            }
            pool.append(&mut seqs[s], s as i64, kv).unwrap();
        }
        let q = randn(&[1, 2 * n_kv, 1, hd]);
        for (s, seq) in seqs.iter().enumerate() {
            prop_assert_eq!(seq.table.len(), seq.len().div_ceil(block_size), "sequence {} of {} tokens holds the wrong number of blocks", s, seq.len());
            for (layer, pairs) in own[s].iter().enumerate().filter(|(_, p)| !p.is_empty()) {
                let gathered = pool.gather(seq, layer).unwrap();
                let keys = cat(&pairs.iter().map(|(k, _)| k).collect::<Vec<_>>(), 2);
                let values = cat(&pairs.iter().map(|(_, v)| v).collect::<Vec<_>>(), 2);
                prop_assert_eq!(bits_difference(&gathered.keys, &keys), None, "sequence {}'s keys gathered through its table are not its keys, layer {}", s, layer);
                prop_assert_eq!(bits_difference(&gathered.values, &values), None, "sequence {}'s values gathered through its table are not its values, layer {}", s, layer);
                let attend = |k: &Tensor, v: &Tensor| {
                    let k = ch14_generation::gqa::repeat_kv(k, 2);
                    let v = ch14_generation::gqa::repeat_kv(v, 2);
                    (q.matmul(&k.transpose(2, 3)) * 0.5).softmax(-1).matmul(&v)
                };
                prop_assert_eq!(bits_difference(&attend(&gathered.keys, &gathered.values), &attend(&keys, &values)), None, "attention over sequence {}'s gathered cache differs from attention over its own", s);
            }
        }
    }
}

proptest! {
    #![proptest_config(quiet(6))]

    /// Greedy decoding through the pool gives the tokens and logits of chapter 15's
    /// cached generation, also when the prompt's first blocks come from the prefix cache.
    #[test]
    fn paged_decoding_equals_contiguous_decoding(
        block_size in 1usize..6,
        shared in prop::collection::vec(0i64..32, 1..8),
        tail in prop::collection::vec(0i64..32, 1..4),
        seed in 0u64..1000,
    ) {
        let (target, _) = models(seed, 1);
        let recipe = recipe();
        let mut pool = BlockPool::new(32, block_size, CONFIG.n_layers).unwrap();
        let first: Vec<i64> = [&shared[..], &[1, 2]].concat();
        let second: Vec<i64> = [&shared[..], &tail[..]].concat();
        let (_keep, _) = prefill_paged(&target, &mut pool, &first, &recipe).unwrap();
        let (mut seq, logits) = prefill_paged(&target, &mut pool, &second, &recipe).unwrap();
        // The tail may begin like `[1, 2]`, so the prompts can share more than `shared`.
        let common = first.iter().zip(&second).take_while(|(a, b)| a == b).count();
        prop_assert_eq!(pool.hits, common.min(second.len() - 1) / block_size, "the second prompt found the wrong number of cached blocks");
        let (tokens, logits) = generate_paged(&target, &mut pool, &mut seq, logits, 3, &recipe).unwrap();
        let alone = generate_cached(&target, &ids(&second), 3, &recipe, TinyModel::forward_row_by_row);
        prop_assert_eq!(tokens.to_vec(), alone.ids.narrow(1, second.len(), 3).to_vec(), "paged decoding wrote other tokens than contiguous decoding");
        prop_assert_eq!(bits_difference(&logits, &alone.logits), None, "paged decoding's logits are not contiguous decoding's");
    }
}

proptest! {
    #![proptest_config(quiet(6))]

    /// Greedy speculative decoding writes exactly plain greedy decoding's tokens, for any
    /// draft length and any draft.
    #[test]
    fn greedy_speculative_decoding_equals_greedy_decoding(
        prompt in prop::collection::vec(0i64..32, 1..6),
        k in 1usize..5,
        draft_layers in 1usize..4,
        seed in 0u64..1000,
    ) {
        let (target, draft) = models(seed, draft_layers);
        let recipe = recipe();
        let spec = speculate_greedy(&draft, &target, &ids(&prompt), 6, k, &recipe);
        let plain = generate_cached(&target, &ids(&prompt), 6, &recipe, TinyModel::forward_row_by_row);
        prop_assert_eq!(spec.ids.to_vec(), plain.ids.to_vec(), "speculative decoding wrote other tokens than greedy decoding");
        let new: usize = spec.rounds.iter().map(|r| r.accepted + 1).sum();
        prop_assert_eq!(new, 6, "the passes' kept tokens plus one each do not add up to the 6 new tokens");
        for round in &spec.rounds {
            prop_assert!(round.drafted.len() <= k && round.accepted <= round.drafted.len(), "a pass drafted {} tokens (at most {}) and kept {}", round.drafted.len(), k, round.accepted);
        }
    }
}

#[test]
fn a_forked_sequence_copies_its_shared_block_once() {
    let (target, _) = models(3, 1);
    let recipe = recipe();
    let mut pool = BlockPool::new(8, 4, CONFIG.n_layers).unwrap();
    let (mut a, _) =
        prefill_paged(&target, &mut pool, &[0, 1, 2, 3, 4, 5], &recipe).unwrap();
    let mut b = pool.fork(&a);
    let before = pool.gather(&b, 3).unwrap();
    step_paged(&target, &mut pool, &mut a, 9, &recipe).unwrap();
    assert_eq!(pool.copies, 1);
    assert_eq!(a.table[0], b.table[0], "the full block stays shared");
    assert_ne!(a.table[1], b.table[1], "the partial block was copied");
    let after = pool.gather(&b, 3).unwrap();
    assert_same_bits(&before.keys, &after.keys, "the shared block's keys");
    step_paged(&target, &mut pool, &mut b, 10, &recipe).unwrap();
    step_paged(&target, &mut pool, &mut a, 11, &recipe).unwrap();
    assert_eq!(pool.copies, 1, "after the copy both write in place");
    assert_eq!(pool.used(), 3);
    pool.release(a);
    pool.release(b);
    assert_eq!(pool.used(), 0);
}

#[test]
fn bad_input_is_an_error_naming_the_op() {
    let err = BlockPool::new(4, 0, 1).unwrap_err().to_string();
    assert!(err.contains("BlockPool::new"), "{err}");
    let mut pool = BlockPool::new(1, 1, 1).unwrap();
    let mut seq = Sequence::default();
    let kv = || vec![(randn(&[1, 1, 1, 2]), randn(&[1, 1, 1, 2]))];
    pool.append(&mut seq, 0, kv()).unwrap();
    let err = pool.append(&mut seq, 1, kv()).unwrap_err().to_string();
    assert!(
        err.contains("BlockPool::allocate")
            && err.contains("all 1 blocks are in use"),
        "{err}"
    );
    let err = pool
        .append(&mut seq, 1, Vec::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("BlockPool::append"), "{err}");
    let err = pool
        .gather(&Sequence::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cat"), "{err}");
}

proptest! {
    #![proptest_config(quiet(16))]

    /// The absorbed path computes the naive path's attention: the same numbers up to the
    /// order of their additions, from a cache a fraction of the naive one's size.
    #[test]
    fn absorbed_mla_agrees_with_naive_mla(tokens in 1usize..8, seed in any::<u64>()) {
        use ch17_inference::mla::Mla;
        use ch17_inference::setup::MLA;
        manual_seed(seed);
        let mla = Mla::new(MLA);
        let x = randn(&[1, tokens, MLA.d_model]);
        let naive = mla.forward_naive(&x);
        let mut cache = None;
        let steps: Vec<Tensor> = (0..tokens)
            .map(|t| mla.step_absorbed(&x.narrow(1, t, 1), t, &mut cache))
            .collect();
        let absorbed = cat(&steps, 1);
        let cache = cache.unwrap();
        prop_assert_eq!(cache.latent.shape().to_vec(), vec![1, tokens, MLA.latent_dim], "the latent cache does not hold one latent per token");
        prop_assert_eq!(cache.rope_key.shape().to_vec(), vec![1, tokens, MLA.rope_dim], "the cache does not hold one RoPE key per token");
        let gap = (&naive - &absorbed).abs().max().item();
        prop_assert!(gap < 1e-5, "the absorbed path's outputs are {gap} from the naive path's, more than 1e-5");
    }
}

proptest! {
    #![proptest_config(quiet(6))]

    /// A pass over several tokens against the cache gives, bit for bit, the logits of
    /// the whole sequence computed one row at a time; a rejected tail dropped from the
    /// cache leaves no trace.
    #[test]
    fn the_target_pass_equals_recomputing_the_sequence(
        tokens in prop::collection::vec(0i64..32, 3..10),
        split in 1usize..3,
        junk in prop::collection::vec(0i64..32, 1..4),
        seed in 0u64..1000,
    ) {
        use ch17_inference::target_pass::{empty_caches, target_pass, truncate};
        let (target, _) = models(seed, 1);
        let recipe = recipe();
        let (whole, _) = target.forward_row_by_row(&ids(&tokens), &recipe);
        let mut caches = empty_caches(&target);
        let first = target_pass(&target, &ids(&tokens[..split]), 0, &mut caches, &recipe);
        target_pass(&target, &ids(&junk), split, &mut caches, &recipe);
        truncate(&mut caches, split);
        let rest = target_pass(&target, &ids(&tokens[split..]), split, &mut caches, &recipe);
        prop_assert_eq!(bits_difference(&cat(&[&first, &rest], 1), &whole), None, "the passes against the cache, a rejected tail dropped between them, are not the whole sequence's logits");
    }
}

#[test]
fn slot_finds_the_example() {
    // Blocks 7, 2, 5 hold the sequence's tokens 0..4, 4..8, 8..12.
    assert_eq!(slot(&[7, 2, 5], 4, 0), (7, 0));
    assert_eq!(slot(&[7, 2, 5], 4, 5), (2, 1));
    assert_eq!(slot(&[7, 2, 5], 4, 11), (5, 3));
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Tokens written into a flat pool of shuffled blocks read back in order.
    #[test]
    fn slot_reads_back_what_was_written(
        block_size in 1usize..6,
        len in 1usize..30,
        shuffle in any::<u64>(),
    ) {
        let n_blocks = len.div_ceil(block_size);
        let mut table: Vec<usize> = (0..n_blocks + 3).collect();
        // a fixed pseudo-random order of physical blocks
        table.sort_by_key(|&b| (b as u64).wrapping_mul(shuffle | 1).rotate_left(17));
        table.truncate(n_blocks);
        let mut pool = vec![None; (n_blocks + 3) * block_size];
        for (logical, &physical) in table.iter().enumerate() {
            for offset in 0..block_size {
                pool[physical * block_size + offset] = Some(logical * block_size + offset);
            }
        }
        for position in 0..len {
            let (block, offset) = slot(&table, block_size, position);
            prop_assert!(offset < block_size, "position {} has offset {} in a block of {}", position, offset, block_size);
            prop_assert_eq!(pool[block * block_size + offset], Some(position), "position {} reads another token's slot", position);
        }
    }
}

#[test]
fn accepted_matches_the_reference_passes() {
    let text = step_text(
        PYTORCH,
        "Greedy speculative decoding, 3 draft tokens per target pass",
    )
    .expect("the step is in the reference output");
    let list = |s: &str| -> Vec<i64> {
        s.trim_matches(|c| c == '[' || c == ']')
            .split(", ")
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let mut passes = 0;
    for line in text.lines().filter(|l| l.starts_with("pass ")) {
        let draft =
            &line[line.find("draft ").unwrap() + 6..line.find(", target").unwrap()];
        let target =
            &line[line.find("target ").unwrap() + 7..line.find(", kept").unwrap()];
        let kept: usize = line
            [line.find("kept ").unwrap() + 5..line.find(" +").unwrap()]
            .parse()
            .unwrap();
        assert_eq!(accepted(&list(draft), &list(target)), kept, "{line}");
        passes += 1;
    }
    assert!(
        passes > 0,
        "no pass in PyTorch's greedy speculative decoding"
    );
}

proptest! {
    #![proptest_config(quiet(128))]

    /// A draft that agrees for `n` tokens and then differs keeps exactly `n`.
    #[test]
    fn accepted_stops_at_the_first_mismatch(
        agree in prop::collection::vec(0i64..32, 0..6),
        rest in prop::collection::vec(0i64..32, 0..6),
        wrong in 1i64..32,
        tail in 0i64..32,
    ) {
        let mut target = agree.clone();
        let mut drafted = agree.clone();
        if let Some(&first) = rest.first() {
            target.push(first);
            drafted.push((first + wrong) % 32); // differs from the target here
            drafted.extend_from_slice(&rest[1..]);
            target.extend_from_slice(&rest[1..]); // agreeing again does not count
            target.push(tail);
            prop_assert_eq!(accepted(&drafted, &target), agree.len(), "a draft agreeing for {} tokens, then not, keeps another count", agree.len());
        } else {
            target.push(tail);
            prop_assert_eq!(accepted(&drafted, &target), agree.len(), "a draft agreeing for {} tokens, then not, keeps another count", agree.len());
        }
    }
}
