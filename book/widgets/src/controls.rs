//! The controls of a widget: which settings a reader can change on a chapter's page, how
//! the page draws each one, and where each starts.
//!
//! Every chapter declares its own, next to the code that computes its weights (see
//! [`crate::heatmap::controls`]), and starts them at the chapter's own values, so that
//! the widget first draws what the chapter prints. A knob that means nothing for a
//! chapter's model (a temperature where the model fixes `√d_k`, dropout where it has none)
//! is not offered there.

use serde::Serialize;

/// The widest `d_out` the widgets offer.
pub const MAX_D_OUT: usize = 16;

/// The seed of every chapter's runs up to chapter 15 unless the reader picks another.
pub const DEFAULT_SEED: u64 = 123;

/// One control of a widget.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Control {
    /// The setting it sets: a field of [`Settings`](crate::heatmap::Settings).
    pub knob: &'static str,
    /// Its label on the page.
    pub label: &'static str,
    /// How the page draws it, and its first value.
    #[serde(flatten)]
    pub input: Input,
}

/// How the page draws a control, and what it sends for it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "input", rename_all = "lowercase")]
pub enum Input {
    /// A slider from `min` to `max` by `step` (to any value in between without one): a
    /// number.
    Range {
        min: f64,
        max: f64,
        step: Option<f64>,
        value: f64,
    },
    /// One of `options`: a number.
    Select { options: Vec<usize>, value: usize },
    /// One of `options`, named: the name.
    Choice {
        options: Vec<&'static str>,
        value: &'static str,
    },
    /// On or off: `true` or `false`.
    Checkbox { value: bool },
    /// Words separated by spaces: a list of strings.
    Words { value: String },
    /// A seed: a string (JavaScript's numbers cannot hold every `u64`).
    Seed { value: String },
}

impl Control {
    /// The words of the sentence, all six of "Your journey starts with one step" at first.
    pub fn sentence(label: &'static str) -> Control {
        let value = ch01_embeddings::inputs::YOUR_JOURNEY_WORDS.join(" ");
        Control::words("words", label, value)
    }

    /// What the scores are divided by, from 0.05 to 4, starting at `value`.
    pub fn temperature(value: f32) -> Control {
        let input = Input::Range {
            min: 0.05,
            max: 4.0,
            step: None,
            value: value.into(),
        };
        Control::new("temperature", "temperature", input)
    }

    /// The width `d_out` of the queries and keys, 1 to [`MAX_D_OUT`] (a model's `d_model`
    /// where `label` says so).
    pub fn width(label: &'static str, value: usize) -> Control {
        let options = (1..=MAX_D_OUT).collect();
        Control::new("d_out", label, Input::Select { options, value })
    }

    /// A number of heads (of `knob`, `heads` or `kv_heads`) among `options`.
    pub fn heads(
        knob: &'static str,
        label: &'static str,
        options: &[usize],
        value: usize,
    ) -> Control {
        let options = options.to_vec();
        Control::new(knob, label, Input::Select { options, value })
    }

    /// Dropout's probability on the weights, 0 to 0.9, off at first.
    pub fn dropout() -> Control {
        let input = Input::Range {
            min: 0.0,
            max: 0.9,
            step: Some(0.1),
            value: 0.0,
        };
        Control::new("dropout", "dropout p", input)
    }

    /// The seed of `manual_seed`, the chapters' 123 at first.
    pub fn seed() -> Control {
        Control::seed_from(DEFAULT_SEED)
    }

    /// The seed of `manual_seed`, a chapter's own `value` at first.
    pub fn seed_from(value: u64) -> Control {
        let value = value.to_string();
        Control::new("seed", "seed", Input::Seed { value })
    }

    /// One of the named `options` for `knob`, starting at `value`.
    pub fn choice(
        knob: &'static str,
        label: &'static str,
        options: &[&'static str],
        value: &'static str,
    ) -> Control {
        let options = options.to_vec();
        Control::new(knob, label, Input::Choice { options, value })
    }

    /// A checkbox for `knob`.
    pub fn checkbox(knob: &'static str, label: &'static str, value: bool) -> Control {
        Control::new(knob, label, Input::Checkbox { value })
    }

    /// A slider of whole numbers for `knob`, from `min` to `max`.
    pub fn count(
        knob: &'static str,
        label: &'static str,
        [min, max]: [usize; 2],
        value: usize,
    ) -> Control {
        let input = Input::Range {
            min: min as f64,
            max: max as f64,
            step: Some(1.0),
            value: value as f64,
        };
        Control::new(knob, label, input)
    }

    /// A line of words for `knob`.
    pub fn words(knob: &'static str, label: &'static str, value: String) -> Control {
        Control::new(knob, label, Input::Words { value })
    }

    fn new(knob: &'static str, label: &'static str, input: Input) -> Control {
        Control { knob, label, input }
    }
}
