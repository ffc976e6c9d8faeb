//! The training step across ranks: its per-token pieces are the rows of one process's,
//! and its loss, gradients and updated weights are chapter 22's one-process step's within
//! the tolerance `step_agreement` derives (the attention alone differs).

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::batches::Batch;
use ch22_pretraining::config::Arch;
use ch22_pretraining::model::Model;
use ch22_pretraining::model::llama::recipe;
use ch22_pretraining::train::{loss_and_gradients, train_step};
use ch24_distributed::layer_on_rank::before_ring;
use ch24_distributed::rank_tokens::{positions_of, rows_of};
use ch24_distributed::ring::Shard;
use ch24_distributed::setup::{STEP_LAYOUT, WORLD, step_config, step_settings};
use ch24_distributed::shards::Layout;
use ch24_distributed::step_agreement::{
    attention_steps, gradients_agree, weights_agree,
};
use ch24_distributed::training_step::{
    OneProcess, loss_and_gradients_across_ranks, train_step_across_ranks,
};
use proptest::prelude::*;
use shared::nn::Linear;
use shared::{Tensor, manual_seed, randint, randn};

fn model_and_batch(seed: u64) -> (Model, Batch) {
    let config = step_config();
    manual_seed(seed);
    let model = Model::new(Arch::Llama, &config).unwrap();
    let ids = randint(0, config.vocab_size, &[config.batch, config.context + 1]);
    let batch = Batch {
        x: ids.narrow(1, 0, config.context).contiguous(),
        y: ids.narrow(1, 1, config.context).contiguous(),
    };
    (model, batch)
}

fn weights(model: &Model) -> Vec<Tensor> {
    model
        .named_parameters()
        .into_iter()
        .map(|(_, p)| p.clone())
        .collect()
}

fn bits(a: &Tensor, b: &Tensor) -> bool {
    a.sizes() == b.sizes() && a.to_vec() == b.to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    #[test]
    fn the_step_across_ranks_is_chapter_22s_within_the_derived_tolerance(seed in 0u64..10_000) {
        let settings = step_settings();
        let (mut ours, batch) = model_and_batch(seed);
        let (mut theirs, _) = model_and_batch(seed);
        let Model::Llama(llama) = &ours else { unreachable!() };
        let ranks = OneProcess { world: WORLD };
        let (loss, grads) = loss_and_gradients_across_ranks(llama, &batch, &ranks, STEP_LAYOUT).unwrap();
        let (their_loss, their_grads) = loss_and_gradients::<PytorchOrder>(&theirs, &batch);
        let steps = attention_steps(batch.x.size(1), WORLD);
        // The loss is a mean of logs of softmaxes of the same outputs: within the
        // attention's bound of its size.
        let loss_bound = steps * 5.96e-8 * f64::from(their_loss);
        prop_assert!(f64::from((loss - their_loss).abs()) <= loss_bound,
            "seed {seed}: loss {loss} against chapter 22's {their_loss}, above {loss_bound:e}");
        for (((name, _), a), b) in theirs.named_parameters().iter().zip(&grads).zip(&their_grads) {
            let gap: f32 = (a - b).abs().max().item();
            let largest: f32 = b.abs().max().item();
            prop_assert!(gradients_agree(std::slice::from_ref(a), std::slice::from_ref(b), steps),
                "seed {seed}: {name}'s gradient is {gap:e} from chapter 22's, its largest {largest:e}: more than {steps} float32 steps of it");
        }
        let train = train_step_across_ranks(&mut ours, &mut settings.optimizer(), &settings, &batch, &ranks, STEP_LAYOUT).unwrap();
        let one = train_step::<PytorchOrder>(&mut theirs, &mut settings.optimizer(), &settings, 0, &batch).unwrap();
        prop_assert_eq!(train, loss);
        prop_assert_eq!(one, their_loss);
        prop_assert!(weights_agree([&weights(&ours), &weights(&theirs)], [&grads, &their_grads], settings.lr, f64::from(settings.grad_clip)),
            "seed {seed}: the weights after the step are further from chapter 22's than AdamW's step of the two gradients allows");
    }

    #[test]
    fn a_ranks_rows_of_a_product_are_the_whole_products_rows(
        seed in 0u64..10_000,
        batch in 1usize..4,
        len in 1usize..4,
        world in prop::sample::select(vec![1usize, 2, 4]),
        zigzag: bool,
        d_in in 2usize..64,
        d_out in 2usize..96,
    ) {
        let layout = if zigzag { Layout::Zigzag } else { Layout::Contiguous };
        let tokens = len * layout.chunks(world);
        // A product of one row is a matrix times a vector, which adds in another order:
        // the step's products have many rows, in the whole sequence and on every rank.
        prop_assume!(batch * tokens / world >= 2);
        manual_seed(seed);
        let x = randn(&[batch, tokens, d_in]);
        let layer = Linear::new(d_in, d_out, false);
        let whole = layer.forward(&x);
        for rank in 0..world {
            let mine = layer.forward(&rows_of(&x, rank, world, layout).unwrap());
            let theirs = rows_of(&whole, rank, world, layout).unwrap();
            prop_assert!(bits(&mine, &theirs),
                "[{batch}, {tokens}, {d_in}] · [{d_in}, {d_out}], rank {rank} of {world}, {layout:?}: its rows are {:e} from the whole product's",
                (&mine - &theirs).abs().max().item());
        }
    }

    #[test]
    fn a_ranks_queries_keys_and_values_are_the_whole_sequences(seed in 0u64..10_000, zigzag: bool) {
        let layout = if zigzag { Layout::Zigzag } else { Layout::Contiguous };
        let (model, _) = model_and_batch(seed);
        let Model::Llama(llama) = &model else { unreachable!() };
        let config = step_config();
        let tokens = config.context;
        let x = randn(&[config.batch, tokens, config.d_model]);
        let layer = &llama.layers[0];
        let all: Vec<usize> = (0..tokens).collect();
        let (q, k, v) = layer.attn.qkv(&layer.attn_norm.forward(&x), &all, &recipe());
        for rank in 0..WORLD {
            let positions = positions_of(tokens, rank, WORLD, layout).unwrap();
            let chunks = layout.chunks_of(rank, WORLD);
            let rows = rows_of(&x, rank, WORLD, layout).unwrap();
            let (_, mine) = before_ring(layer, &rows, &positions, &chunks);
            for (name, mine, whole) in [("q", &mine[0], &q), ("k", &mine[1], &k), ("v", &mine[2], &v)] {
                let theirs = Shard::of_rank(whole, layout, rank, WORLD).unwrap();
                for (a, b) in mine.blocks.iter().zip(&theirs.blocks) {
                    prop_assert!(bits(a, b), "{name}, rank {rank}, {layout:?}, positions {positions:?}: {:e} from the whole sequence's", (a - b).abs().max().item());
                }
            }
        }
    }
}

#[test]
fn ranks_that_do_not_split_the_sequence_are_an_error_naming_the_sizes() {
    let (model, batch) = model_and_batch(24);
    let Model::Llama(llama) = &model else {
        unreachable!()
    };
    let err = loss_and_gradients_across_ranks(
        llama,
        &batch,
        &OneProcess { world: 3 },
        Layout::Zigzag,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("16 tokens on 3 ranks"),
        "the error should name the tokens and ranks: {err}"
    );
}

#[test]
fn the_simulation_gives_the_same_bits_every_time() {
    let (model, batch) = model_and_batch(7);
    let Model::Llama(llama) = &model else {
        unreachable!()
    };
    let ranks = OneProcess { world: WORLD };
    let (l1, g1) =
        loss_and_gradients_across_ranks(llama, &batch, &ranks, STEP_LAYOUT).unwrap();
    let (l2, g2) =
        loss_and_gradients_across_ranks(llama, &batch, &ranks, STEP_LAYOUT).unwrap();
    assert_eq!(l1.to_bits(), l2.to_bits());
    assert!(g1.iter().zip(&g2).all(|(a, b)| bits(a, b)));
}
