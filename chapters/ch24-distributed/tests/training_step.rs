//! The training step across ranks against chapter 22's one-process step.

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch22_pretraining::batches::Batch;
use ch22_pretraining::config::Arch;
use ch22_pretraining::model::Model;
use ch22_pretraining::train::train_step;
use ch24_distributed::setup::{STEP_LAYOUT, WORLD, step_config, step_settings};
use ch24_distributed::training_step::{OneProcess, train_step_across_ranks};
use shared::{Tensor, manual_seed, randint};

fn model_and_batch(seed: u64) -> (Model, Batch) {
    let config = step_config();
    manual_seed(seed);
    let model = Model::new(Arch::Llama, &config).unwrap();
    let ids = randint(0, config.vocab_size as i64, &[config.batch, config.context + 1]);
    let batch = Batch {
        x: ids.narrow(1, 0, config.context).contiguous(),
        y: ids.narrow(1, 1, config.context).contiguous(),
    };
    (model, batch)
}

fn weights(model: &Model) -> Vec<Tensor> {
    model.named_parameters().into_iter().map(|(_, p)| p.clone()).collect()
}

#[test]
fn measure() {
    let settings = step_settings();
    let (mut ours, batch) = model_and_batch(24);
    let (mut theirs, _) = model_and_batch(24);
    let before = weights(&ours);
    let mut opt = settings.optimizer();
    let t = std::time::Instant::now();
    let loss = train_step_across_ranks(&mut ours, &mut opt, &settings, &batch, &OneProcess { world: WORLD }, STEP_LAYOUT).unwrap();
    eprintln!("sim {:?}", t.elapsed());
    let mut opt2 = settings.optimizer();
    let t = std::time::Instant::now();
    let loss2 = train_step::<PytorchOrder>(&mut theirs, &mut opt2, &settings, 0, &batch).unwrap();
    eprintln!("ch22 {:?}", t.elapsed());
    eprintln!("loss {loss} {loss2}");
    for (((name, a), b), p) in ours.named_parameters().into_iter().zip(weights(&theirs)).zip(&before) {
        let gap: f32 = (a - &b).abs().max().item();
        let moved: f32 = (a - p).abs().max().item();
        eprintln!("{name}: gap {gap:e}, moved {moved:e}");
    }
}

#[test]
fn measure_grads() {
    use ch22_pretraining::train::loss_and_gradients;
    use ch24_distributed::training_step::loss_and_gradients_across_ranks;
    for seed in [24u64, 1, 2, 3, 5, 2026] {
        let (model, batch) = model_and_batch(seed);
        let Model::Llama(llama) = &model else { panic!() };
        let (l1, g1) = loss_and_gradients_across_ranks(llama, &batch, &OneProcess { world: WORLD }, STEP_LAYOUT).unwrap();
        let (l2, g2) = loss_and_gradients::<PytorchOrder>(&model, &batch);
        let mut worst = 0.0f32;
        let mut worst_abs = 0.0f32;
        let mut smallest = f32::MAX;
        for (a, b) in g1.iter().zip(&g2) {
            let gap: f32 = (a - b).abs().max().item();
            let scale: f32 = b.abs().max().item();
            worst = worst.max(gap / scale);
            worst_abs = worst_abs.max(gap);
            let m = b.abs().to_vec().into_iter().fold(f32::MAX, f32::min);
            smallest = smallest.min(m);
        }
        eprintln!("seed {seed}: loss gap {:e} ({l1}), worst relative grad gap {worst:e} ({:.1} u), abs {worst_abs:e}, smallest |g| {smallest:e}", (l1 - l2).abs(), worst / 5.96e-8);
    }
}
