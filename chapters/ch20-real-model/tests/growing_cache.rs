//! The cache that grows in place against chapter 15's step, which rebuilds its cache
//! every token: the same logits, bit for bit, on chapter 15's drawn model with every recipe
//! (windows and sink tokens included) and on the tiny checkpoint; and the cache's own
//! contents against chapter 15's `kept` after any sequence of appends. Several sequences
//! stepped side by side give each sequence's own logits, bit for bit, and sampled
//! continuations decoded side by side are the ones decoded alone.

mod common;

use ch14_generation::KvCache;
use ch15_modern_layer::attention::kept;
use ch15_modern_layer::setup::{CONFIG, samplers, variants};
use ch15_modern_layer::{Recipe, TinyModel};
use ch20_real_model::generate::{
    Choice, Limits, as_batch, generate, generate_side_by_side, prefill,
};
use ch20_real_model::growing_cache::{
    GrowingCache, growing, step, step_side_by_side,
};
use ch20_real_model::loader::{load, model_for_tests};
use common::fixture;
use proptest::prelude::*;
use shared::{Tensor, cat, manual_seed, randn};

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().iter().map(|v| v.to_bits()).collect()
}

/// The first step whose logits differ, with its values, if any.
fn first_difference(old: &[Tensor], new: &[Tensor]) -> Option<String> {
    old.iter().zip(new).enumerate().find_map(|(i, (a, b))| {
        (bits(a) != bits(b)).then(|| {
            let diff = (a - b).abs().max().item();
            format!(
                "step {i}: largest difference {diff:e}\n  rebuilt {a}\n  in place {b}"
            )
        })
    })
}

/// `n` greedy steps after `prompt`, with chapter 15's step and with the cache grown in
/// place (from a capacity of `capacity`); the logits of every step, both ways.
fn both_ways(
    model: &TinyModel,
    prompt: &[i64],
    n: usize,
    recipe: &Recipe,
    capacity: usize,
) -> (Vec<Tensor>, Vec<Tensor>) {
    let ids = Tensor::from_vec(prompt.to_vec(), &[1, prompt.len()]);
    let (_, mut rebuilt) = model.forward(&ids, recipe);
    let mut grown = growing(&rebuilt, recipe, capacity);
    let (mut old, mut new) = (Vec::new(), Vec::new());
    let mut token = prompt[prompt.len() - 1];
    for s in 0..n {
        let position = prompt.len() + s;
        let t = Tensor::from_vec(vec![token], &[1, 1]);
        let a = model.step(&t, position, &mut rebuilt, recipe);
        let b = step(model, &t, position, &mut grown, recipe);
        token = a.argmax().item();
        old.push(a);
        new.push(b);
    }
    for (r, g) in rebuilt.iter().zip(&grown) {
        assert_eq!(bits(&r.keys), bits(&g.keys()), "the cached keys");
        assert_eq!(bits(&r.values), bits(&g.values()), "the cached values");
    }
    (old, new)
}

/// Chapter 15's recipes, and two more: sink tokens beside a window, and an output gate.
fn recipes() -> Vec<(&'static str, Recipe)> {
    let mut recipes = variants();
    recipes.push((
        "sink tokens 2, window 3, every layer local",
        Recipe {
            window: 3,
            sink_tokens: 2,
            local_per_global: Some(100),
            ..Recipe::default()
        },
    ));
    recipes.push((
        "sink tokens 1, output gate, all global",
        Recipe {
            sink_tokens: 1,
            output_gate: true,
            local_per_global: None,
            ..Recipe::default()
        },
    ));
    recipes
}

#[test]
fn every_recipe_of_chapter_15_steps_to_the_same_bits() {
    let prompt = [0i64, 7, 14, 21, 28, 3];
    for (name, recipe) in recipes() {
        manual_seed(0);
        let model = TinyModel::new(CONFIG);
        // A capacity of 1 makes the buffers grow while decoding, twice and more.
        for capacity in [1, 64] {
            let (old, new) = both_ways(&model, &prompt, 12, &recipe, capacity);
            if let Some(d) = first_difference(&old, &new) {
                panic!("{name}, capacity {capacity}: {d}");
            }
        }
    }
}

#[test]
fn the_tiny_checkpoints_step_to_the_same_bits() {
    for name in ["tiny-llama", "tiny-qwen3", "tiny-llama.gguf"] {
        let m = load(&fixture(name), |_, _| {}).expect("the tiny checkpoint loads");
        let prompt = [1i64, 5, 9, 2, 7, 3, 3, 8];
        let (old, new) = both_ways(&m.model, &prompt, 24, &m.recipe, 8);
        if let Some(d) = first_difference(&old, &new) {
            panic!("{name}: {d}");
        }
    }
}

#[test]
fn the_real_model_steps_to_the_same_bits() {
    // Heads of 64 features over more than 7 cached tokens: the one-row products take
    // their sgemv orders here, which the tiny models' short heads never reach.
    let Some(path) = model_for_tests() else {
        return;
    };
    let m = load(&path, |_, _| {}).expect("the model loads");
    let prompt: Vec<i64> = (0..40).map(|i| 1000 + 37 * i).collect();
    let (old, new) = both_ways(&m.model, &prompt, 4, &m.recipe, 41);
    if let Some(d) = first_difference(&old, &new) {
        panic!("SmolLM2: {d}");
    }
    let prompts: Vec<Vec<i64>> = (0..3)
        .map(|j| (0..20).map(|i| 1000 + 37 * i + 501 * j).collect())
        .collect();
    if let Some(d) = side_by_side_difference(&m.model, &prompts, 3, &m.recipe) {
        panic!("SmolLM2 side by side: {d}");
    }
}

/// `n` greedy steps of each of `prompts` (all of one length): each sequence alone with
/// [`step`], and all of them side by side; the first step and sequence whose logits differ.
fn side_by_side_difference(
    model: &TinyModel,
    prompts: &[Vec<i64>],
    n: usize,
    recipe: &Recipe,
) -> Option<String> {
    let len = prompts[0].len();
    let prefills: Vec<_> = prompts
        .iter()
        .map(|p| {
            model
                .forward(&Tensor::from_vec(p.clone(), &[1, len]), recipe)
                .1
        })
        .collect();
    let mut alone: Vec<Vec<GrowingCache>> = prefills
        .iter()
        .map(|c| growing(c, recipe, len + n))
        .collect();
    let joined: Vec<KvCache> = (0..model.layers.len())
        .map(|l| {
            let keys: Vec<&Tensor> = prefills.iter().map(|c| &c[l].keys).collect();
            let values: Vec<&Tensor> =
                prefills.iter().map(|c| &c[l].values).collect();
            KvCache {
                keys: cat(&keys, 0),
                values: cat(&values, 0),
                window: prefills[0][l].window,
            }
        })
        .collect();
    let mut together = growing(&joined, recipe, len + n);
    let mut tokens: Vec<i64> = prompts.iter().map(|p| p[len - 1]).collect();
    for s in 0..n {
        let position = len + s;
        let batch = Tensor::from_vec(tokens.clone(), &[prompts.len(), 1]);
        let side = step_side_by_side(model, &batch, position, &mut together, recipe);
        for (j, caches) in alone.iter_mut().enumerate() {
            let one = Tensor::from_vec(vec![tokens[j]], &[1, 1]);
            let a = step(model, &one, position, caches, recipe);
            let b = side.narrow(0, j, 1);
            if bits(&a) != bits(&b) {
                let diff = (&a - &b).abs().max().item();
                return Some(format!(
                    "step {s}, sequence {j}: largest difference {diff:e}"
                ));
            }
            tokens[j] = a.argmax().item();
        }
    }
    None
}

#[test]
fn every_recipe_steps_side_by_side_to_each_sequences_bits() {
    let prompts = vec![
        vec![0i64, 7, 14, 21, 28, 3],
        vec![5, 5, 9, 1, 30, 2],
        vec![31, 0, 4, 4, 17, 11],
    ];
    for (name, recipe) in recipes() {
        manual_seed(0);
        let model = TinyModel::new(CONFIG);
        if let Some(d) = side_by_side_difference(&model, &prompts, 10, &recipe) {
            panic!("{name}: {d}");
        }
    }
}

#[test]
fn sampled_continuations_side_by_side_are_the_ones_alone() {
    manual_seed(0);
    let model = TinyModel::new(CONFIG);
    let recipe = Recipe::default();
    let prompt = [0u32, 7, 14, 21, 28, 3];
    let mut choices = vec![Choice::Greedy];
    choices.extend(samplers().into_iter().map(|(_, s)| Choice::Sample(s)));
    // An end-of-sequence token that some continuations reach early.
    for eos in [None, Some(5)] {
        let limits = Limits {
            max_new_tokens: 12,
            eos,
            context_length: 64,
        };
        let side =
            generate_side_by_side(&model, &recipe, &prompt, &choices, &limits, 42)
                .expect("a valid prompt");
        for (choice, side) in choices.iter().zip(&side) {
            manual_seed(42);
            let alone = generate(&model, &recipe, &prompt, *choice, &limits, |_| {})
                .expect("a valid prompt");
            assert_eq!(side, &alone, "{choice:?}, eos {eos:?}");
        }
    }
}

#[test]
fn the_prefill_gives_the_last_row_of_the_whole_forward() {
    let m =
        load(&fixture("tiny-llama.gguf"), |_, _| {}).expect("the tiny checkpoint");
    for tokens in 1..=9 {
        let ids: Vec<u32> = (0..tokens).map(|i| (i * 11 + 3) % 200).collect();
        let (all, caches) = m.model.forward(&as_batch(&ids), &m.recipe);
        let (last, ours) = prefill(&m.model, &as_batch(&ids), &m.recipe);
        assert_eq!(
            bits(&last),
            bits(&all.select(1, -1)),
            "{tokens} tokens: {last} against {}",
            all.select(1, -1)
        );
        for (a, b) in caches.iter().zip(&ours) {
            assert_eq!(bits(&a.keys), bits(&b.keys), "{tokens} tokens: the keys");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After every append, the positions in use hold what chapter 15's step keeps:
    /// `kept` of the old cache with the new key concatenated.
    #[test]
    fn appends_keep_what_chapter_15_keeps(
        prompt in 0usize..6,
        appends in 1usize..20,
        window in proptest::option::of(1usize..6),
        sink_tokens in 0usize..3,
        capacity in 0usize..8,
        seed in any::<u64>(),
    ) {
        manual_seed(seed);
        let (keys, values) = (randn(&[1, 2, prompt, 3]), randn(&[1, 2, prompt, 3]));
        let mut rebuilt = if prompt == 0 {
            KvCache { keys, values, window }
        } else {
            kept(&keys, &values, window, sink_tokens)
        };
        let mut grown = GrowingCache::new(&rebuilt, sink_tokens, capacity);
        for a in 0..appends {
            let (k, v) = (randn(&[1, 2, 1, 3]), randn(&[1, 2, 1, 3]));
            rebuilt = kept(
                &cat(&[&rebuilt.keys, &k], 2),
                &cat(&[&rebuilt.values, &v], 2),
                window,
                sink_tokens,
            );
            grown.append(&k, &v);
            prop_assert_eq!(grown.len(), rebuilt.keys.size(2), "append {}", a);
            prop_assert!(grown.capacity() >= grown.len());
            prop_assert_eq!(bits(&grown.keys()), bits(&rebuilt.keys), "keys after append {}", a);
            prop_assert_eq!(bits(&grown.values()), bits(&rebuilt.values), "values after append {}", a);
        }
    }
}
