//! The chapter's printed story, on the real model.

use course::narrative::{Narrative, Seed};

use crate::cli::{Options, load_with_progress};

/// The narrative with the default options.
pub fn narrative(seed: Seed) -> shared::Result<Narrative> {
    narrative_with(seed, &Options::default())
}

/// The narrative, on the model `options.model` names.
pub fn narrative_with(_seed: Seed, options: &Options) -> shared::Result<Narrative> {
    let loaded = load_with_progress(options.model.as_ref())?;
    let mut story = Narrative::new("Chapter 20: a real model");
    let c = &loaded.config;
    story.step("The model card").print(format!("{c:?}"));
    Ok(story)
}
