//! A chapter's attention weights under the settings a reader picks on the page.
//!
//! Chapters 2 to 8 and 12 take the same few steps, each knob where the chapter puts it:
//! the words of "Your journey starts with one step" (chapter 1's embeddings), queries and
//! keys (the words themselves up to chapter 3, `Linear` projections from chapter 4, split
//! into heads from chapter 6), RoPE on both (chapter 12), the scores divided by the
//! temperature, the causal mask (chapter 5), softmax, and dropout on the weights.
//!
//! The other chapters show the weights inside their own models, computed by their own code:
//! - chapter 9 (`flash`): the weights the FlashAttention kernel never stores, rebuilt
//!   from the log-sum-exp it returns, as its backward pass rebuilds them;
//! - chapter 10 (`backward`): the weights the gradients flow through, after dropout, as
//!   the chapter's forward pass keeps them on its tape;
//! - chapter 11 (`training`): the trained model's weights after any number of steps;
//! - chapter 13 (`block`): the attention inside the transformer block, after its layer
//!   norm (or without it, as in the post-norm block);
//! - chapter 14 (`generation`): the tiny decoder's cache as it fills, one decoding step
//!   at a time, with grouped-query heads and a sliding window;
//! - chapter 15 (`modern`): the first layer of the 2026 model, with switches for its
//!   sinks, window, softcap and QK-norm;
//! - chapter 16 (`flex`): FlexAttention's recipes, with the block mask (full, partial and
//!   empty tiles) for the page to draw over the weights;
//! - chapter 18 (`sparse`): softmax over the keys DeepSeek's indexer keeps, beside softmax
//!   over every key;
//! - chapter 19 (`induction`): the four heads of the two-layer model at any saved step of
//!   its training run, as the previous-token and induction heads form.
//!
//! Which knobs each chapter offers, and where they start, is in [`crate::controls`].

mod backward;
mod block;
mod flash;
mod flex;
mod generation;
mod induction;
mod modern;
mod sparse;
mod training;

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS, your_journey};
use ch05_causal::mask::causal_mask;
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use serde::{Deserialize, Serialize};
use shared::nn::Dropout;
use shared::{Tensor, manual_seed};

use crate::controls::{Control, DEFAULT_SEED, MAX_D_OUT};

/// The knobs of a chapter's widget; any left out takes the chapter's value, and one the
/// chapter does not have is ignored.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The chapter, 2 to 16, 18 or 19.
    pub chapter: u32,
    /// The sentence: words of "Your journey starts with one step", in any order, 1 to 6 of
    /// them (the context). All six in order if left out.
    pub words: Option<Vec<String>>,
    /// What the scores are divided by before softmax: 1 up to chapter 3, then `√d_k`.
    pub temperature: Option<f32>,
    /// Hide the future (from chapter 5 on, where it is on by default).
    pub causal: Option<bool>,
    /// Dropout's probability on the weights (0 if left out).
    pub dropout: Option<f64>,
    /// The seed of `manual_seed` before the weights are drawn (the chapter's if left out:
    /// 123, chapter 16's 16, chapter 18's 18).
    pub seed: Option<String>,
    /// Attention heads (from chapter 6 on; in chapter 10, 1 is chapter 5's
    /// `CausalAttention`; in chapter 14, the query heads).
    pub heads: Option<usize>,
    /// The width of the queries and keys, all heads together (chapter 13's `d_model`).
    pub d_out: Option<usize>,
    /// Rotate queries and keys by their position (chapter 12).
    pub rope: Option<bool>,
    /// Chapter 13: layer norm before attention, as GPT-2's pre-norm block (on if left out);
    /// off, attention reads the residual stream itself, as in the post-norm block.
    pub pre_norm: Option<bool>,
    /// Chapters 14 and 15: the prompt's token ids (the chapter's prompt if left out).
    pub prompt: Option<Vec<String>>,
    /// Chapter 14: decoding steps with the cache after the prompt, one row each (the
    /// chapter's 5 if left out).
    pub decoded: Option<usize>,
    /// Chapters 14 and 15: each token sees itself and the `window - 1` tokens before it,
    /// and the cache keeps only that many; 0, no window (left out: none in chapter 14, the
    /// local layers' 4 in chapter 15). Chapter 16: the window of its windowed recipes (4 if
    /// left out).
    pub window: Option<usize>,
    /// Chapter 14: the key/value heads the query heads share (the chapter's 2 if left out).
    pub kv_heads: Option<usize>,
    /// Chapter 11: training steps before the weights are shown (0 to 60). Chapter 19: the
    /// saved step of the training run (0 to 3000 by 100).
    pub step: Option<u32>,
    /// Chapter 15: each head's learned sink logit in the softmax (on if left out).
    pub sinks: Option<bool>,
    /// Chapter 15: the scores softcapped at 5 (on if left out).
    pub softcap: Option<bool>,
    /// Chapter 15: QK-norm on every query and key head (on if left out).
    pub qk_norm: Option<bool>,
    /// Chapter 16: the recipe, a mask_mod and a score_mod ("causal" if left out).
    pub recipe: Option<String>,
    /// Chapter 16: queries and keys per tile of the block mask (the chapter's 4 if left
    /// out).
    pub tile: Option<usize>,
    /// Chapter 18: the keys DeepSeek's indexer keeps for each query (the chapter's 4 if
    /// left out).
    pub top_k: Option<usize>,
    /// Chapter 19: the sequence, the chapter's example or one drawn from the seed (the
    /// example if left out).
    pub input: Option<String>,
}

/// The weights to draw: one `[queries, keys]` matrix per head, rows labelled by the
/// queries, columns by the keys, and a line saying what they are where the chapter's model
/// is not the plain attention of the earlier chapters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    /// The rows' labels.
    pub queries: Vec<String>,
    /// The columns' labels.
    pub keys: Vec<String>,
    /// `[heads, queries, keys]`.
    pub heads: Vec<Vec<Vec<f32>>>,
    /// What the weights are, for the chapters with a model of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caption: Option<String>,
    /// Each matrix's title where "head 0", "head 1", ... would not say what it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub titles: Option<Vec<String>>,
    /// Chapter 16: the block mask over every matrix, for the page to outline its tiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiles: Option<Tiles>,
}

/// A block mask as the page draws it over the weights: tiles of `size × size` queries and
/// keys, `kinds[qt]` the tiles of query tile `qt`, one letter each: `F` full (every key
/// visible), `P` partial (masked inside), `.` empty (skipped, every weight 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tiles {
    /// Queries and keys per tile.
    pub size: usize,
    /// One line of `F`, `P` and `.` per query tile.
    pub kinds: Vec<String>,
}

impl Heatmap {
    /// The heatmap of `weights`, one matrix per head.
    ///
    /// # Shapes
    /// `weights`: `[heads, queries.len(), keys.len()]`.
    fn of_heads(
        weights: &Tensor,
        queries: Vec<String>,
        keys: Vec<String>,
    ) -> Heatmap {
        let heads = (0..weights.size(0))
            .map(|h| matrix(&weights.select(0, h as i64)))
            .collect();
        Heatmap {
            queries,
            keys,
            heads,
            caption: None,
            titles: None,
            tiles: None,
        }
    }

    /// The same heatmap with `caption` under its title.
    fn caption(self, caption: impl Into<String>) -> Heatmap {
        Heatmap {
            caption: Some(caption.into()),
            ..self
        }
    }

    /// The same heatmap with a title for each matrix.
    fn titles(self, titles: Vec<String>) -> Heatmap {
        Heatmap {
            titles: Some(titles),
            ..self
        }
    }

    /// The same heatmap with a block mask drawn over it.
    fn tiles(self, tiles: Tiles) -> Heatmap {
        Heatmap {
            tiles: Some(tiles),
            ..self
        }
    }
}

/// The largest number of heads the widgets offer.
pub const MAX_HEADS: usize = 4;

/// Every number of heads the widgets offer, 1 to [`MAX_HEADS`].
const ANY_HEADS: [usize; MAX_HEADS] = [1, 2, 3, 4];

/// Chapters 6 to 8 and 12 start with two heads, and every chapter from 4 on with two
/// features per head.
const HEADS: usize = 2;
const HEAD_DIM: usize = 2;

/// The chapters with a heatmap, as the messages name them.
const CHAPTERS: &str = "2 to 16, 18 and 19";

/// The attention weights of `settings.chapter` under `settings`.
pub fn heatmap(settings: &Settings) -> Result<Heatmap, String> {
    let chapter = settings.chapter;
    let seed = match &settings.seed {
        Some(text) => crate::seed::parse_seed(text)?,
        None => match chapter {
            16 => flex::SEED,
            18 => sparse::SEED,
            19 => ch19_induction_heads::runs::SEED,
            _ => DEFAULT_SEED,
        },
    };
    match chapter {
        9 => flash::weights(settings, seed),
        10 => backward::weights(settings, seed),
        11 => Ok(training::weights(settings, seed)),
        13 => block::weights(settings, seed),
        14 => generation::weights(settings, seed),
        15 => modern::weights(settings, seed),
        16 => flex::weights(settings, seed),
        18 => sparse::weights(settings, seed),
        19 => induction::weights(settings, seed),
        2..=8 | 12 => attention(settings, seed),
        _ => Err(format!(
            "the widgets are on chapters {CHAPTERS}, not {chapter}"
        )),
    }
}

/// The controls of `chapter`'s widget, each starting at the chapter's value.
pub fn controls(chapter: u32) -> Result<Vec<Control>, String> {
    match chapter {
        2..=8 | 12 => Ok(attention_controls(chapter)),
        9 => Ok(flash::controls()),
        10 => Ok(backward::controls()),
        11 => Ok(training::controls()),
        13 => Ok(block::controls()),
        14 => Ok(generation::controls()),
        15 => Ok(modern::controls()),
        16 => Ok(flex::controls()),
        18 => Ok(sparse::controls()),
        19 => Ok(induction::controls()),
        _ => Err(format!(
            "the widgets are on chapters {CHAPTERS}, not {chapter}"
        )),
    }
}

/// Chapters 2 to 8 and 12: the sentence's attention weights, step by step.
fn attention(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let chapter = settings.chapter;
    let words = sentence(settings.words.as_deref())?;
    let x = embeddings(&words); // [tokens, 3]
    let tokens = words.len();
    // Chapter 8's cross-attention: the sentence asks, the whole of "Your journey starts
    // with one step" answers (queries from one sequence, keys from another).
    let cross = chapter == 8;
    let (context, key_words) = if cross {
        (your_journey(), sentence(None)?)
    } else {
        (x.clone(), words.clone())
    };

    // Queries and keys, [heads, tokens, head_dim].
    let (queries, keys, head_dim) = if chapter <= 3 {
        // Chapters 2 and 3: each word's embedding is its own query and key.
        (x.unsqueeze(0), context.unsqueeze(0), x.size(1))
    } else {
        let heads = if chapter >= 6 {
            settings.heads.unwrap_or(HEADS)
        } else {
            1
        };
        let d_out = settings.d_out.unwrap_or(HEAD_DIM * heads);
        check_heads("d_out", heads, d_out)?;
        let rope = chapter == 12 && settings.rope.unwrap_or(true);
        if rope && !(d_out / heads).is_multiple_of(2) {
            return Err(format!(
                "RoPE turns pairs of features: each head needs an even width, not {}",
                d_out / heads
            ));
        }
        manual_seed(seed);
        let mha =
            MultiHeadAttention::new(x.size(1), d_out, tokens, 0.0, heads, false);
        let batch = x.unsqueeze(0);
        let q = split_heads(&mha.w_query.forward(&batch), heads).select(0, 0);
        let k = split_heads(&mha.w_key.forward(&context.unsqueeze(0)), heads)
            .select(0, 0);
        if rope {
            // Chapter 12's RoPE, with the usual base 10000.
            let rotate =
                |x: &Tensor| ch12_positions::half_split::rope_half_split(x, 10_000.0);
            (rotate(&q), rotate(&k), d_out / heads)
        } else {
            (q, k, d_out / heads)
        }
    };

    let temperature = settings
        .temperature
        .unwrap_or_else(|| default_temperature(chapter, head_dim));
    if !(temperature > 0.0 && temperature.is_finite()) {
        return Err(format!(
            "the temperature must be above 0, not {temperature}"
        ));
    }
    let scores = queries.matmul(&keys.transpose(-2, -1)) / temperature;
    // A query of one sequence has no "future" in the other: no causal mask across.
    let causal = settings.causal.unwrap_or(chapter >= 5) && !cross;
    let scores = if causal {
        scores.masked_fill(&causal_mask(tokens), f32::NEG_INFINITY)
    } else {
        scores
    };
    let mut weights = scores.softmax(-1);
    let p = settings.dropout.unwrap_or(0.0);
    if p > 0.0 {
        manual_seed(seed);
        weights = dropout(p)?.forward(&weights);
    }
    Ok(Heatmap::of_heads(
        &weights,
        labels(&words),
        labels(&key_words),
    ))
}

/// The knobs of chapters 2 to 8 and 12, where the chapter has them: the sentence, the
/// width and the heads, the temperature, the causal mask, RoPE, dropout and the seed.
fn attention_controls(chapter: u32) -> Vec<Control> {
    let label = if chapter == 8 {
        "queries from"
    } else {
        "sentence"
    };
    let mut controls = vec![Control::sentence(label)];
    if chapter <= 3 {
        controls.push(Control::temperature(default_temperature(chapter, 3)));
        return controls;
    }
    let heads = if chapter >= 6 { HEADS } else { 1 };
    controls.push(Control::width("d_out", HEAD_DIM * heads));
    if chapter >= 6 {
        controls.push(Control::heads("heads", "heads", &ANY_HEADS, heads));
    }
    controls.push(Control::temperature(default_temperature(chapter, HEAD_DIM)));
    if chapter != 8 {
        // Chapter 8 attends across two sequences: no causal mask there.
        controls.push(Control::checkbox("causal", "causal mask", chapter >= 5));
    }
    if chapter == 12 {
        controls.push(Control::checkbox("rope", "RoPE", true));
    }
    controls.extend([Control::dropout(), Control::seed()]);
    controls
}

/// What the scores are divided by unless the reader picks another temperature: 1 while
/// the words are their own queries and keys (chapters 2 and 3), then `√head_dim`.
pub fn default_temperature(chapter: u32, head_dim: usize) -> f32 {
    if chapter <= 3 {
        1.0
    } else {
        (head_dim as f32).sqrt()
    }
}

/// Checks a number of heads and a width against the widgets' limits: 1 to [`MAX_HEADS`]
/// heads, and a width (named `width` on the page) that they share evenly.
fn check_heads(width: &str, heads: usize, d_out: usize) -> Result<(), String> {
    if !(1..=MAX_HEADS).contains(&heads) {
        return Err(format!("heads: 1 to {MAX_HEADS}, not {heads}"));
    }
    if !(1..=MAX_D_OUT).contains(&d_out) || !d_out.is_multiple_of(heads) {
        return Err(format!(
            "{width} must be a multiple of the {heads} heads, from {heads} to {MAX_D_OUT}, \
             not {d_out}"
        ));
    }
    Ok(())
}

/// Dropout with probability `p`, or a message if `p` is not a probability.
fn dropout(p: f64) -> Result<Dropout, String> {
    Dropout::f_new(p).map_err(|e| e.to_string())
}

/// The words of the sentence, each with its row in chapter 1's embeddings.
fn sentence(words: Option<&[String]>) -> Result<Vec<(usize, &'static str)>, String> {
    let Some(words) = words else {
        return Ok(YOUR_JOURNEY_WORDS.iter().copied().enumerate().collect());
    };
    if words.is_empty() || words.len() > YOUR_JOURNEY_WORDS.len() {
        return Err(format!(
            "a sentence of 1 to {} words (the context), not {}",
            YOUR_JOURNEY_WORDS.len(),
            words.len()
        ));
    }
    words
        .iter()
        .map(|word| {
            YOUR_JOURNEY_WORDS
                .iter()
                .position(|w| w.eq_ignore_ascii_case(word.trim()))
                .map(|id| (id, YOUR_JOURNEY_WORDS[id]))
                .ok_or_else(|| {
                    format!(
                        "{word:?} is not in the vocabulary: {}",
                        YOUR_JOURNEY_WORDS.join(", ")
                    )
                })
        })
        .collect()
}

/// The sentence's rows of chapter 1's embeddings.
///
/// # Shapes
/// Returns `[words.len(), 3]`.
fn embeddings(words: &[(usize, &str)]) -> Tensor {
    let ids = Tensor::from_vec(
        words.iter().map(|&(id, _)| id as i64).collect(),
        &[words.len()],
    );
    your_journey().index_select(0, &ids)
}

/// The words of a sentence, as the rows' and columns' labels.
fn labels(words: &[(usize, &str)]) -> Vec<String> {
    words.iter().map(|&(_, w)| w.to_string()).collect()
}

/// A `[queries, keys]` matrix as nested vectors.
fn matrix(weights: &Tensor) -> Vec<Vec<f32>> {
    (0..weights.size(0))
        .map(|i| weights.select(0, i as i64).to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn settings(chapter: u32) -> Settings {
        Settings {
            chapter,
            ..Settings::default()
        }
    }

    /// What the page sends for `chapter`'s controls as they start.
    fn page_defaults(chapter: u32) -> Settings {
        use crate::controls::Input;
        use serde_json::json;
        let mut request = json!({ "chapter": chapter });
        for control in controls(chapter).unwrap() {
            request[control.knob] = match control.input {
                // JavaScript writes a whole number without a fraction.
                Input::Range { value, .. } if value.fract() == 0.0 => {
                    json!(value as i64)
                }
                Input::Range { value, .. } => json!(value),
                Input::Select { value, .. } => json!(value),
                Input::Choice { value, .. } => json!(value),
                Input::Checkbox { value } => json!(value),
                Input::Words { value } => {
                    json!(value.split_whitespace().collect::<Vec<_>>())
                }
                Input::Seed { value } => json!(value),
            };
        }
        serde_json::from_value(request).unwrap()
    }

    #[test]
    fn the_controls_start_at_the_chapters_values() {
        for chapter in (2..=16).chain([18, 19]) {
            let page = heatmap(&page_defaults(chapter)).unwrap();
            assert_eq!(
                page,
                heatmap(&settings(chapter)).unwrap(),
                "chapter {chapter}"
            );
        }
        for chapter in [1, 17, 20] {
            assert!(
                controls(chapter)
                    .unwrap_err()
                    .contains("chapters 2 to 16, 18 and 19")
            );
        }
    }

    #[test]
    fn every_row_sums_to_one_and_the_causal_mask_hides_the_future() {
        for chapter in (2..=13).filter(|&c| c != 11) {
            let map = heatmap(&settings(chapter)).unwrap();
            for head in &map.heads {
                for (i, row) in head.iter().enumerate() {
                    let sum: f32 = row.iter().sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-5,
                        "chapter {chapter}: row {i} sums to {sum}"
                    );
                    if chapter >= 5 && chapter != 8 {
                        assert!(
                            row[i + 1..].iter().all(|&w| w == 0.0),
                            "chapter {chapter}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_higher_temperature_flattens_the_weights() {
        let sharp = heatmap(&Settings {
            temperature: Some(0.25),
            ..settings(3)
        })
        .unwrap();
        let flat = heatmap(&Settings {
            temperature: Some(8.0),
            ..settings(3)
        })
        .unwrap();
        let spread = |m: &Heatmap| {
            let row = &m.heads[0][0];
            row.iter().copied().fold(f32::MIN, f32::max)
                - row.iter().copied().fold(1.0, f32::min)
        };
        assert!(spread(&flat) < spread(&sharp));
    }

    #[test]
    fn heads_and_the_sentence_shape_the_map() {
        let map = heatmap(&Settings {
            heads: Some(3),
            d_out: Some(6),
            words: Some(vec!["step".into(), "one".into()]),
            ..settings(7)
        })
        .unwrap();
        assert_eq!(map.heads.len(), 3);
        assert_eq!(map.keys, ["step", "one"]);
        assert_eq!(map.heads[0].len(), 2);
    }

    #[test]
    fn chapter_8_attends_across_to_the_whole_sentence() {
        let map = heatmap(&Settings {
            words: Some(vec!["one".into(), "step".into()]),
            causal: Some(true),
            ..settings(8)
        })
        .unwrap();
        assert_eq!(map.queries, ["one", "step"]);
        assert_eq!(map.keys, YOUR_JOURNEY_WORDS);
        // No causal mask across two sequences: every key gets some weight.
        assert!(map.heads[0][0].iter().all(|&w| w > 0.0));
    }

    #[test]
    fn bad_settings_get_a_message() {
        let error = |s: Settings| heatmap(&s).unwrap_err();
        assert!(error(settings(17)).contains("chapters 2 to 16, 18 and 19"));
        assert!(
            error(Settings {
                words: Some(vec!["cat".into()]),
                ..settings(4)
            })
            .contains("\"cat\"")
        );
        assert!(
            error(Settings {
                heads: Some(2),
                d_out: Some(5),
                ..settings(6)
            })
            .contains("multiple")
        );
        assert!(
            error(Settings {
                temperature: Some(0.0),
                ..settings(3)
            })
            .contains("above 0")
        );
        assert!(
            error(Settings {
                d_out: Some(6),
                heads: Some(2),
                ..settings(12)
            })
            .contains("even")
        );
        assert!(
            error(Settings {
                dropout: Some(1.5),
                ..settings(5)
            })
            .contains("1.5")
        );
    }

    #[test]
    fn chapter_15_switches_change_the_weights_and_sinks_take_weight() {
        let base = heatmap(&settings(15)).unwrap();
        let sums = |m: &Heatmap| -> Vec<f32> {
            m.heads[0].iter().map(|r| r.iter().sum()).collect()
        };
        assert!(
            sums(&base).iter().all(|&s| s < 1.0),
            "with sinks, rows sum below 1"
        );
        for off in [
            Settings {
                sinks: Some(false),
                ..settings(15)
            },
            Settings {
                softcap: Some(false),
                ..settings(15)
            },
            Settings {
                qk_norm: Some(false),
                ..settings(15)
            },
            Settings {
                window: Some(0),
                ..settings(15)
            },
        ] {
            assert_ne!(heatmap(&off).unwrap(), base, "{off:?}");
        }
        let no_sinks = heatmap(&Settings {
            sinks: Some(false),
            ..settings(15)
        })
        .unwrap();
        assert!(sums(&no_sinks).iter().all(|&s| (s - 1.0).abs() < 1e-5));
    }
}
