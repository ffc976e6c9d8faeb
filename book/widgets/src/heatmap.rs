//! A chapter's attention weights under the settings a reader picks on the page.
//!
//! The same few steps as the chapters take, with each knob where the chapter puts it:
//! the words of "Your journey starts with one step" (chapter 1's embeddings), queries and
//! keys (the words themselves up to chapter 3, `Linear` projections from chapter 4, split
//! into heads from chapter 6), RoPE on both (chapter 12), the scores divided by the
//! temperature, the causal mask or a sliding window (chapter 5, chapter 14), softmax, and
//! dropout on the weights. Chapter 11 shows its trained model's weights after any number
//! of training steps; chapter 14 shows the cache filling up, one decoded token at a time.

use ch01_embeddings::inputs::{YOUR_JOURNEY_WORDS, your_journey};
use ch05_causal::mask::causal_mask;
use ch05_causal::sliding_window::sliding_window_mask;
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use serde::{Deserialize, Serialize};
use shared::nn::Dropout;
use shared::{Tensor, manual_seed};

/// The knobs of a chapter's widget; any left out takes the chapter's value.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The chapter, 2 to 14.
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
    /// The seed of `manual_seed` before the weights are drawn (and before dropout).
    pub seed: Option<String>,
    /// Attention heads (from chapter 6 on; 2 by default).
    pub heads: Option<usize>,
    /// The width of the queries and keys, all heads together (2 per head by default).
    pub d_out: Option<usize>,
    /// Rotate queries and keys by their position (chapter 12).
    pub rope: Option<bool>,
    /// Each token sees itself and the `window - 1` tokens before it (chapter 14).
    pub window: Option<usize>,
    /// Chapter 11: training steps before the weights are shown (0 to 60).
    pub step: Option<u32>,
    /// Chapter 14: tokens in the cache so far (1 to the sentence's length).
    pub decoded: Option<usize>,
}

/// The weights to draw: one `[queries, keys]` matrix per head, rows labelled by the
/// queries' words, columns by the keys'.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Heatmap {
    pub queries: Vec<String>,
    pub keys: Vec<String>,
    pub heads: Vec<Vec<Vec<f32>>>,
}

/// The largest number of heads and the widest `d_out` the widgets offer.
pub const MAX_HEADS: usize = 4;
pub const MAX_D_OUT: usize = 16;

/// The attention weights of `settings.chapter` under `settings`.
pub fn heatmap(settings: &Settings) -> Result<Heatmap, String> {
    let chapter = settings.chapter;
    if !(2..=14).contains(&chapter) {
        return Err(format!(
            "the widgets are on chapters 2 to 14, not {chapter}"
        ));
    }
    let seed = match &settings.seed {
        Some(text) => Some(crate::request::parse_seed(text)?),
        None => None,
    };
    if chapter == 11 {
        return Ok(trained(seed.unwrap_or(123), settings.step.unwrap_or(60)));
    }
    let mut words = sentence(settings.words.as_deref())?;
    // Chapter 14, while decoding: the cache holds the tokens decoded so far, and only they
    // have asked their question.
    if let Some(n) = settings.decoded.filter(|_| chapter == 14) {
        if !(1..=words.len()).contains(&n) {
            return Err(format!("decoded tokens: 1 to {}, not {n}", words.len()));
        }
        words.truncate(n);
    }
    let ids = Tensor::from_vec(
        words.iter().map(|&(id, _)| id as i64).collect(),
        &[words.len()],
    );
    let x = your_journey().index_select(0, &ids); // [tokens, 3]
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
            settings.heads.unwrap_or(2)
        } else {
            1
        };
        let d_out = settings.d_out.unwrap_or(2 * heads);
        if !(1..=MAX_HEADS).contains(&heads) {
            return Err(format!("heads: 1 to {MAX_HEADS}, not {heads}"));
        }
        if !(1..=MAX_D_OUT).contains(&d_out) || !d_out.is_multiple_of(heads) {
            return Err(format!(
                "d_out must be a multiple of the {heads} heads, from {heads} to {MAX_D_OUT}, \
                 not {d_out}"
            ));
        }
        let rope = chapter == 12 && settings.rope.unwrap_or(true);
        if rope && !(d_out / heads).is_multiple_of(2) {
            return Err(format!(
                "RoPE turns pairs of features: each head needs an even width, not {}",
                d_out / heads
            ));
        }
        manual_seed(seed.unwrap_or(123));
        let mha = MultiHeadAttention::new(x.size(1), d_out, tokens, 0.0, heads, false);
        let batch = x.unsqueeze(0);
        let q = split_heads(&mha.w_query.forward(&batch), heads).select(0, 0);
        let k = split_heads(&mha.w_key.forward(&context.unsqueeze(0)), heads).select(0, 0);
        if rope {
            // Chapter 12's RoPE, with the usual base 10000.
            let rotate = |x: &Tensor| ch12_positions::half_split::rope_half_split(x, 10_000.0);
            (rotate(&q), rotate(&k), d_out / heads)
        } else {
            (q, k, d_out / heads)
        }
    };

    let temperature = settings.temperature.unwrap_or(if chapter <= 3 {
        1.0
    } else {
        (head_dim as f32).sqrt()
    });
    if !(temperature > 0.0 && temperature.is_finite()) {
        return Err(format!(
            "the temperature must be above 0, not {temperature}"
        ));
    }
    let scores = queries.matmul(&keys.transpose(-2, -1)) / temperature;
    // A query of one sequence has no "future" in the other: no causal mask across.
    let causal = settings.causal.unwrap_or(chapter >= 5) && !cross;
    let hidden = match settings.window.filter(|_| chapter == 14) {
        Some(0) => return Err("a window holds at least the token itself: 1 or more".into()),
        Some(window) => Some(sliding_window_mask(tokens, window)),
        None => causal.then(|| causal_mask(tokens)),
    };
    let scores = match &hidden {
        Some(mask) => scores.masked_fill(mask, f32::NEG_INFINITY),
        None => scores,
    };
    let mut weights = scores.softmax(-1);
    let p = settings.dropout.unwrap_or(0.0);
    if p > 0.0 {
        manual_seed(seed.unwrap_or(123));
        let dropout = Dropout::f_new(p).map_err(|e| e.to_string())?;
        weights = dropout.forward(&weights);
    }
    let label = |words: &[(usize, &str)]| -> Vec<String> {
        words.iter().map(|&(_, w)| w.to_string()).collect()
    };
    Ok(Heatmap {
        queries: label(&words),
        keys: label(&key_words),
        heads: (0..weights.size(0))
            .map(|h| matrix(&weights.select(0, h as i64), tokens))
            .collect(),
    })
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

/// Chapter 11: the shown sequence's weights after `steps` training steps from `seed`.
fn trained(seed: u64, steps: u32) -> Heatmap {
    let steps = steps.min(ch11_training::narrative::DEFAULT_STEPS);
    let run = ch11_training::narrative::training_run(seed, steps, |_, _| {});
    let weights = if steps == 0 { run.before } else { run.after }.select(0, 0);
    let labels: Vec<String> = run
        .shown
        .select(0, 0)
        .to_vec()
        .iter()
        .map(|id| id.to_string())
        .collect();
    let tokens = labels.len();
    Heatmap {
        queries: labels.clone(),
        keys: labels,
        heads: (0..weights.size(0))
            .map(|h| matrix(&weights.select(0, h as i64), tokens))
            .collect(),
    }
}

/// The first `rows` rows of a `[queries, keys]` matrix, as nested vectors.
fn matrix(weights: &Tensor, rows: usize) -> Vec<Vec<f32>> {
    (0..rows)
        .map(|i| weights.select(0, i as i64).to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(chapter: u32) -> Settings {
        Settings {
            chapter,
            ..Settings::default()
        }
    }

    #[test]
    fn every_row_sums_to_one_and_the_causal_mask_hides_the_future() {
        for chapter in 2..=14 {
            let map = heatmap(&settings(chapter)).unwrap();
            for head in &map.heads {
                for (i, row) in head.iter().enumerate() {
                    let sum: f32 = row.iter().sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-5,
                        "chapter {chapter}: row {i} sums to {sum}"
                    );
                    if chapter >= 5 && chapter != 8 {
                        assert!(row[i + 1..].iter().all(|&w| w == 0.0), "chapter {chapter}");
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
            row.iter().copied().fold(f32::MIN, f32::max) - row.iter().copied().fold(1.0, f32::min)
        };
        assert!(spread(&flat) < spread(&sharp));
    }

    #[test]
    fn heads_the_sentence_and_the_decoding_step_shape_the_map() {
        let map = heatmap(&Settings {
            heads: Some(3),
            d_out: Some(6),
            words: Some(vec!["step".into(), "one".into()]),
            ..settings(7)
        })
        .unwrap();
        assert_eq!(map.heads.len(), 3);
        assert_eq!(map.keys, ["step", "one"]);
        let map = heatmap(&Settings {
            decoded: Some(2),
            window: Some(1),
            ..settings(14)
        })
        .unwrap();
        assert_eq!(map.queries, ["Your", "journey"]);
        assert_eq!(map.keys, ["Your", "journey"]);
        // A window of one: every token sees only itself.
        assert_eq!(map.heads[0][1], [0.0, 1.0]);
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
    fn chapter_11_shows_the_narratives_weights_after_training() {
        let map = heatmap(&settings(11)).unwrap();
        let run = ch11_training::narrative::training_run(123, 60, |_, _| {});
        assert_eq!(
            map.heads[1][7],
            run.after.select(0, 0).select(0, 1).select(0, 7).to_vec()
        );
    }

    #[test]
    fn bad_settings_get_a_message() {
        let error = |s: Settings| heatmap(&s).unwrap_err();
        assert!(error(settings(15)).contains("chapters 2 to 14"));
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
    }
}
