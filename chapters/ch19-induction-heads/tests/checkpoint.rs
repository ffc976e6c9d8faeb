//! The saved run: it reads back to the same bytes, and training from its seed reproduces
//! its first steps bit for bit, the parameters saved along the way included.

use ch19_induction_heads::checkpoint::{Checkpoint, parameters_of};
use ch19_induction_heads::data::Repeats;
use ch19_induction_heads::model::AttentionOnly;
use ch19_induction_heads::runs::{
    EVAL, FIXED_STEPS, LOG_EVERY, SAVED_RUN, SEED, STEPS, logged_training,
};
use shared::Tensor;
use shared::testing::assert_same_bits;

fn saved() -> Checkpoint {
    Checkpoint::from_bytes(SAVED_RUN, &AttentionOnly::new(), LOG_EVERY)
        .expect("a checkpoint")
}

#[test]
fn the_saved_run_reads_back_to_the_same_bytes() {
    let run = saved();
    assert_eq!(run.seed, SEED);
    assert_eq!(run.losses.len(), STEPS as usize);
    assert_eq!(run.log.len(), (STEPS / LOG_EVERY) as usize);
    assert_eq!(run.fixed_log.len(), (FIXED_STEPS / LOG_EVERY) as usize);
    assert_eq!(run.snapshots.len(), (STEPS / LOG_EVERY) as usize + 1);
    assert_eq!(run.to_bytes(), SAVED_RUN);
}

#[test]
fn the_saved_steps_load_and_other_steps_are_an_error() {
    let run = saved();
    let steps = run.saved_steps();
    assert_eq!(steps.len(), run.snapshots.len());
    assert_eq!(steps[..3], [0, LOG_EVERY, 2 * LOG_EVERY]);
    assert_eq!(steps.last(), Some(&STEPS));
    let mut model = AttentionOnly::new();
    run.load_step(2 * LOG_EVERY, &mut model).unwrap();
    assert_eq!(parameters_of(&model), run.snapshots[2]);
    run.load_into(&mut model);
    assert_eq!(&parameters_of(&model), run.snapshots.last().unwrap());
    let error = run.load_step(150, &mut model).unwrap_err().to_string();
    assert!(error.contains("step 150"), "{error}");
}

#[test]
fn a_cut_or_foreign_file_is_an_error_not_a_panic() {
    let model = AttentionOnly::new();
    assert!(
        Checkpoint::from_bytes(&SAVED_RUN[..SAVED_RUN.len() - 1], &model, LOG_EVERY)
            .is_err()
    );
    assert!(Checkpoint::from_bytes(b"not a checkpoint", &model, LOG_EVERY).is_err());
    let mut longer = SAVED_RUN.to_vec();
    longer.push(0);
    assert!(Checkpoint::from_bytes(&longer, &model, LOG_EVERY).is_err());
}

#[test]
fn training_from_the_seed_reproduces_the_first_logged_steps() {
    let run = saved();
    shared::manual_seed(SEED);
    let mut model = AttentionOnly::new();
    let eval = Repeats::Variable.draw(EVAL);
    let _shown = Repeats::Variable.draw(1);
    let (losses, log, snapshots) =
        logged_training(&mut model, Repeats::Variable, LOG_EVERY, &eval);
    let as_tensor = |xs: &[f32]| Tensor::from_vec(xs.to_vec(), &[xs.len()]);
    assert_same_bits(
        &as_tensor(&losses),
        &as_tensor(&run.losses[..LOG_EVERY as usize]),
        "the first logged steps' losses against the saved run's",
    );
    assert_eq!(log[0], run.log[0]);
    // The parameters before training and after the first logged step, bit for bit.
    assert_eq!(snapshots.len(), 2);
    for (when, (trained, saved)) in ["before training", "after the first logged step"]
        .iter()
        .zip(snapshots.iter().zip(&run.snapshots))
    {
        for (i, (ours, theirs)) in trained.iter().zip(saved).enumerate() {
            assert_same_bits(
                &as_tensor(ours),
                &as_tensor(theirs),
                format!("parameter {i} {when}, against the saved run's"),
            );
        }
    }
}
