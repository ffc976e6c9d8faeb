//! Chapter 14: the tiny decoder's cache as it fills, one decoding step at a time.
//!
//! The chapter generates greedily with a KV cache: the prompt goes through the model once
//! (the prefill), then every step feeds the newest token, appends its key and value to the
//! cache and lets its one query read every cached key. The widget runs the chapter's
//! `TinyDecoder` after the chapter's `manual_seed` and draws, per query head, what each fed
//! token attended to over the cache (`Generation::weight_rows`): after `n` steps, `n`
//! rows. Groups of query heads share one key/value head (grouped-query attention); with a
//! sliding window, the prefill's mask hides the keys outside it and the cache keeps only
//! the last `w` tokens.

use ch14_generation::generate::generate_cached;
use ch14_generation::setup::{CONFIG, N_NEW, PROMPT};
use ch14_generation::{DecoderConfig, TinyDecoder};
use shared::{Tensor, manual_seed, stack};

use super::{Heatmap, MAX_HEADS, Settings};
use crate::controls::Control;

/// The chapter's cached run appends `N_NEW` tokens; the last is chosen but never fed, so
/// its heatmaps have one row less.
const DEFAULT_STEPS: usize = N_NEW - 1;

/// The prompt, the decoding steps, the sliding window, the query and key/value heads, and
/// the seed. The model always divides by `√head_dim`, is causal and has no dropout.
pub(super) fn controls() -> Vec<Control> {
    let prompt = PROMPT.map(|id| id.to_string()).join(" ");
    let room = CONFIG.context_length - PROMPT.len();
    let heads = [1, 2, 4]; // the ones that share the 16 features evenly
    vec![
        Control::words("prompt", "prompt (token ids 0 to 15)", prompt),
        Control::count("decoded", "decoding steps", [1, room], DEFAULT_STEPS),
        Control::count(
            "window",
            "sliding window (0: none)",
            [0, CONFIG.context_length],
            0,
        ),
        Control::heads("heads", "query heads", &heads, CONFIG.n_heads),
        Control::heads("kv_heads", "key/value heads", &heads, CONFIG.n_kv_heads),
        Control::seed(),
    ]
}

/// Each fed token's weights over the cache, one matrix per query head, rows and columns
/// labelled `position: token id` as in the chapter.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let prompt = prompt(settings.prompt.as_deref())?;
    let steps = settings.decoded.unwrap_or(DEFAULT_STEPS);
    let room = CONFIG.context_length - prompt.len();
    if !(1..=room).contains(&steps) {
        return Err(format!(
            "the model knows {} positions: after a prompt of {} tokens, 1 to {room} decoding \
             steps, not {steps}",
            CONFIG.context_length,
            prompt.len()
        ));
    }
    let config = DecoderConfig {
        n_heads: settings.heads.unwrap_or(CONFIG.n_heads),
        n_kv_heads: settings.kv_heads.unwrap_or(CONFIG.n_kv_heads),
        window: settings.window.filter(|&w| w > 0),
        ..CONFIG
    };
    check_heads(&config)?;

    manual_seed(seed);
    let model = TinyDecoder::new(config);
    let ids = Tensor::from_vec(prompt.clone(), &[1, prompt.len()]);
    // One new token more than the steps: the last one is chosen, not fed.
    let run = generate_cached(&model, &ids, steps + 1, TinyDecoder::forward);
    let rows: Vec<Tensor> = (0..config.n_heads).map(|h| run.weight_rows(h)).collect();
    let weights = stack(&rows, 0); // [heads, steps, prompt + steps]

    let ids = run.ids.to_vec();
    let label = |p: usize| format!("{p}: {}", ids[p]);
    let fed = prompt.len()..prompt.len() + steps;
    let caption = match config.window {
        None => "Each token fed after the prompt (a row) over the cache it reads (position: \
                 token id); the cache grows by one token a step"
            .to_string(),
        Some(w) => format!(
            "Each token fed after the prompt (a row) over the cache it reads (position: token \
             id); the cache keeps the last {w} tokens, older positions get 0"
        ),
    };
    Ok(Heatmap::of_heads(
        &weights,
        fed.clone().map(label).collect(),
        (0..fed.end).map(label).collect(),
    )
    .caption(caption))
}

/// The prompt's token ids, the chapter's if `ids` is `None`.
fn prompt(ids: Option<&[String]>) -> Result<Vec<i64>, String> {
    let Some(ids) = ids else {
        return Ok(PROMPT.to_vec());
    };
    let vocab = CONFIG.vocab_size;
    if ids.is_empty() || ids.len() >= CONFIG.context_length {
        return Err(format!(
            "a prompt of 1 to {} token ids, not {}",
            CONFIG.context_length - 1,
            ids.len()
        ));
    }
    ids.iter()
        .map(|id| match id.trim().parse::<i64>() {
            Ok(n) if (0..vocab as i64).contains(&n) => Ok(n),
            _ => Err(format!("token ids are 0 to {}, not {id:?}", vocab - 1)),
        })
        .collect()
}

/// Checks the query and key/value heads: the query heads share the model's features, and
/// groups of them share each key/value head.
fn check_heads(config: &DecoderConfig) -> Result<(), String> {
    let (heads, kv_heads, d_model) =
        (config.n_heads, config.n_kv_heads, config.d_model);
    if !(1..=MAX_HEADS).contains(&heads) || !d_model.is_multiple_of(heads) {
        return Err(format!(
            "query heads: up to {MAX_HEADS}, sharing the {d_model} features evenly, not {heads}"
        ));
    }
    if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
        return Err(format!(
            "each key/value head serves a group of query heads: {kv_heads} do not divide the \
             {heads} query heads"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};
    use super::*;
    use course::Seed;
    use shared::viz;

    /// The heatmaps of the chapter's step titled `title`, one per head.
    fn recorded(title: &str) -> Vec<viz::Heatmap> {
        let story = ch14_generation::narrative::narrative(Seed::from(None)).unwrap();
        let step = story.steps.iter().find(|s| s.title.starts_with(title));
        step.unwrap().heatmaps.clone()
    }

    /// Whether `map` draws the chapter's `heatmaps`: the same labels, and weights within
    /// `tolerance` (0: the same bits).
    fn draws(map: &Heatmap, heatmaps: &[viz::Heatmap], tolerance: f32) -> bool {
        map.heads.len() == heatmaps.len()
            && map.heads.iter().zip(heatmaps).all(|(head, chapter)| {
                let values = head.iter().flatten();
                map.queries == chapter.rows
                    && map.keys == chapter.cols
                    && values
                        .zip(&chapter.values)
                        .all(|(w, c)| (w - c).abs() <= tolerance)
            })
    }

    #[test]
    fn the_default_rows_are_the_chapters_cache_as_it_fills() {
        let map = heatmap(&settings(14)).unwrap();
        assert_eq!(map.queries, ["3: 15", "4: 10", "5: 13", "6: 14", "7: 0"]);
        assert!(draws(
            &map,
            &recorded("Greedy decoding with a KV cache"),
            0.0
        ));
        // The chapter's run itself: Generation::weight_rows of every head.
        manual_seed(123);
        let model = TinyDecoder::new(CONFIG);
        let prompt = Tensor::from_vec(PROMPT.to_vec(), &[1, PROMPT.len()]);
        let run = generate_cached(&model, &prompt, N_NEW, TinyDecoder::forward);
        for (h, head) in map.heads.iter().enumerate() {
            let rows =
                Heatmap::of_heads(&run.weight_rows(h).unsqueeze(0), vec![], vec![]);
            assert_eq!(head, &rows.heads[0]);
        }
    }

    #[test]
    fn n_steps_are_n_rows_over_the_cache() {
        let full = heatmap(&settings(14)).unwrap();
        for n in 1..=DEFAULT_STEPS {
            let map = heatmap(&Settings {
                decoded: Some(n),
                ..settings(14)
            })
            .unwrap();
            assert_eq!(map.queries.len(), n);
            assert_eq!(map.keys.len(), PROMPT.len() + n);
            // Greedy decoding is causal: the first n rows never change.
            for (head, full_head) in map.heads.iter().zip(&full.heads) {
                for (row, full_row) in head.iter().zip(full_head) {
                    assert_eq!(row[..], full_row[..row.len()]);
                }
            }
        }
    }

    #[test]
    fn the_window_is_the_chapters_rolling_cache() {
        let map = heatmap(&Settings {
            window: Some(4),
            ..settings(14)
        })
        .unwrap();
        // The chapter's windowed run adds its prefill's products one row at a time: the
        // same weights up to rounding, and the same zeros outside the window.
        assert!(draws(&map, &recorded("Decoding with a window of 4"), 1e-6));
        for (i, row) in map.heads[0].iter().enumerate() {
            let position = PROMPT.len() + i;
            let seen = row.iter().enumerate().filter(|&(_, &w)| w > 0.0);
            assert!(seen.map(|(j, _)| j).eq(position - 3..=position));
        }
    }

    #[test]
    fn heads_prompts_and_steps_are_checked() {
        let map = heatmap(&Settings {
            heads: Some(2),
            kv_heads: Some(1),
            prompt: Some(vec!["3".into(), "1".into()]),
            ..settings(14)
        })
        .unwrap();
        assert_eq!(map.heads.len(), 2);
        assert_eq!(map.keys[..2], ["0: 3", "1: 1"]);
        let error = |s: Settings| heatmap(&s).unwrap_err();
        let kv = error(Settings {
            kv_heads: Some(3),
            ..settings(14)
        });
        assert!(kv.contains("do not divide"), "{kv}");
        assert!(
            error(Settings {
                heads: Some(3),
                ..settings(14)
            })
            .contains("query heads")
        );
        assert!(
            error(Settings {
                prompt: Some(vec!["16".into()]),
                ..settings(14)
            })
            .contains("0 to 15")
        );
        assert!(
            error(Settings {
                decoded: Some(14),
                ..settings(14)
            })
            .contains("1 to 13 decoding steps")
        );
    }
}
