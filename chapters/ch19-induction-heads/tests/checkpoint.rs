//! The saved run: it reads back to the same bytes, and training from its seed reproduces
//! its first steps bit for bit.

use ch19_induction_heads::checkpoint::Checkpoint;
use ch19_induction_heads::data::Repeats;
use ch19_induction_heads::model::AttentionOnly;
use ch19_induction_heads::narrative::{
    EVAL, FIXED_STEPS, LOG_EVERY, SAVED_RUN, SEED, STEPS, logged_training,
};

fn saved() -> Checkpoint {
    Checkpoint::from_bytes(SAVED_RUN, &AttentionOnly::new(), LOG_EVERY).expect("a checkpoint")
}

#[test]
fn the_saved_run_reads_back_to_the_same_bytes() {
    let run = saved();
    assert_eq!(run.seed, SEED);
    assert_eq!(run.losses.len(), STEPS as usize);
    assert_eq!(run.log.len(), (STEPS / LOG_EVERY) as usize);
    assert_eq!(run.fixed_log.len(), (FIXED_STEPS / LOG_EVERY) as usize);
    assert_eq!(run.to_bytes(), SAVED_RUN);
}

#[test]
fn a_cut_or_foreign_file_is_an_error_not_a_panic() {
    let model = AttentionOnly::new();
    assert!(Checkpoint::from_bytes(&SAVED_RUN[..SAVED_RUN.len() - 1], &model, LOG_EVERY).is_err());
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
    let (losses, log) = logged_training(&mut model, Repeats::Variable, LOG_EVERY, &eval);
    let bits = |xs: &[f32]| xs.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&losses), bits(&run.losses[..LOG_EVERY as usize]));
    assert_eq!(log[0], run.log[0]);
}
