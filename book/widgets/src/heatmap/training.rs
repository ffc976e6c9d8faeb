//! Chapter 11: the trained model's attention weights after any number of training steps.

use super::{Heatmap, Settings};
use crate::controls::Control;
use ch11_training::run::{DEFAULT_STEPS, training_run};

/// The training steps, 0 to the chapter's 60, and the seed.
pub(super) fn controls() -> Vec<Control> {
    let steps = DEFAULT_STEPS as usize;
    vec![
        Control::count("step", "training steps", [0, steps], steps),
        Control::seed(),
    ]
}

/// The weights of the sequence the chapter shows, after `settings.step` training steps
/// (the chapter's 60 if left out, at most 60) from `seed`: one matrix per head, rows and
/// columns labelled by the sequence's token ids.
pub(super) fn weights(settings: &Settings, seed: u64) -> Heatmap {
    let steps = settings.step.unwrap_or(DEFAULT_STEPS).min(DEFAULT_STEPS);
    let run = training_run(seed, steps, |_, _| {});
    let weights = if steps == 0 { run.before } else { run.after }.select(0, 0);
    let labels: Vec<String> = run
        .shown
        .select(0, 0)
        .to_vec()
        .iter()
        .map(|id| id.to_string())
        .collect();
    Heatmap::of_heads(&weights, labels.clone(), labels)
}

#[cfg(test)]
mod tests {
    use super::super::heatmap;
    use super::super::tests::settings;

    #[test]
    fn the_weights_are_the_narratives_after_training() {
        let map = heatmap(&settings(11)).unwrap();
        let run = ch11_training::run::training_run(123, 60, |_, _| {});
        assert_eq!(
            map.heads[1][7],
            run.after.select(0, 0).select(0, 1).select(0, 7).to_vec()
        );
    }
}
