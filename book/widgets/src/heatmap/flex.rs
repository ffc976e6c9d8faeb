//! Chapter 16: the weights of FlexAttention's recipes, with the block mask over them.
//!
//! The widget draws the chapter's queries and keys after `manual_seed` (4 query heads
//! reading 2 key/value heads, 16 tokens of 8 features) and computes the weights by the
//! chapter's formula: `q·kᵀ · scale`, the recipe's score_mod on every score, `-∞` where
//! its mask_mod hides the key, softmax. Beside the weights it sends the chapter's block
//! mask, every tile full, partial or empty, for the page to draw over them: an empty tile
//! is one the kernel skips, and every weight in it is 0.

use ch07_multihead_split::grouped::repeat_kv;
use ch16_flex_attention::alibi::{alibi, alibi_slopes};
use ch16_flex_attention::block_mask::{BlockMask, TileKind};
use ch16_flex_attention::formula::{hidden, modified};
use ch16_flex_attention::recipes::{
    MaskMod, ScoreMod, causal, causal_window, document_mask, no_mask, prefix_lm,
    sliding_window, softcap, unchanged,
};
use ch16_flex_attention::setup::{CAP, DOCUMENTS, PREFIX, SIZES, TILE, WINDOW};
use shared::{Tensor, manual_seed, randn};

use super::{Heatmap, Settings, Tiles};
use crate::controls::Control;

/// The chapter's seed.
pub(super) const SEED: u64 = 16;

/// The recipes, as the page names them.
const RECIPES: [&str; 8] = [
    "causal",
    "sliding window",
    "causal window",
    "document mask",
    "prefix-LM",
    "ALiBi",
    "softcap",
    "no mask",
];

/// The recipe, the window of the windowed ones, the tile size and the seed, at the
/// chapter's values.
pub(super) fn controls() -> Vec<Control> {
    let [.., tokens, _] = SIZES;
    vec![
        Control::choice("recipe", "recipe", &RECIPES, RECIPES[0]),
        Control::count("window", "window", [0, tokens], WINDOW),
        Control::count("tile", "tile size", [1, tokens], TILE),
        Control::seed_from(SEED),
    ]
}

/// The weights of the 4 query heads under the recipe, rows the queries' positions,
/// columns the keys', with the recipe's block mask.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let recipe = settings.recipe.as_deref().unwrap_or(RECIPES[0]);
    let window = settings.window.unwrap_or(WINDOW);
    let tile = settings.tile.unwrap_or(TILE);
    let [batch, heads, kv_heads, tokens, d] = SIZES;
    manual_seed(seed);
    let q = randn(&[batch, heads, tokens, d]);
    let k = randn(&[batch, kv_heads, tokens, d]);
    let qk = [&q, &k];
    let ((weights, block_mask), what): ((Tensor, BlockMask), String) = match recipe {
        "causal" => (
            recipe_weights(qk, unchanged, causal, tile)?,
            "causal".into(),
        ),
        "sliding window" => (
            recipe_weights(qk, unchanged, sliding_window(window), tile)?,
            format!(
                "sliding window: keys less than {window} positions away, both sides"
            ),
        ),
        "causal window" => (
            recipe_weights(qk, unchanged, causal_window(window), tile)?,
            format!(
                "causal, window of {window}: the query and the {} keys before it",
                window.saturating_sub(1)
            ),
        ),
        "document mask" => {
            let lengths: Vec<String> =
                DOCUMENTS.iter().map(|n| n.to_string()).collect();
            (
                recipe_weights(qk, unchanged, document_mask(&DOCUMENTS), tile)?,
                format!(
                    "documents of {} tokens, causal inside each",
                    lengths.join(", ")
                ),
            )
        }
        "prefix-LM" => (
            recipe_weights(qk, unchanged, prefix_lm(PREFIX), tile)?,
            format!(
                "prefix-LM: the first {PREFIX} tokens see each other, the rest is causal"
            ),
        ),
        "ALiBi" => (
            recipe_weights(qk, alibi(alibi_slopes(heads)), causal, tile)?,
            "ALiBi, causal: each head its own distance penalty".into(),
        ),
        "softcap" => (
            recipe_weights(qk, softcap(CAP), causal, tile)?,
            format!("softcap {CAP}, causal: {CAP} · tanh(score / {CAP})"),
        ),
        "no mask" => (
            recipe_weights(qk, unchanged, no_mask, tile)?,
            "no mask".into(),
        ),
        _ => {
            return Err(format!(
                "the recipes are {}, not {recipe:?}",
                RECIPES.join(", ")
            ));
        }
    };
    let positions: Vec<String> = (0..tokens).map(|t| t.to_string()).collect();
    let [full, partial, empty] = [TileKind::Full, TileKind::Partial, TileKind::Empty]
        .map(|kind| block_mask.count(kind));
    let caption = format!(
        "{what}. Tiles of {tile} × {tile}: {} of {} computed ({full} full, {partial} partial \
         and masked inside), {empty} skipped (empty, greyed)",
        full + partial,
        full + partial + empty,
    );
    let tiles = Tiles {
        size: tile,
        kinds: block_mask
            .grid(0, 0)
            .iter()
            .map(|line| line.replace(' ', ""))
            .collect(),
    };
    Ok(Heatmap::of_heads(&weights, positions.clone(), positions)
        .caption(caption)
        .tiles(tiles))
}

/// The weights of `score_mod` and `mask_mod` by the chapter's formula, and the block mask
/// of `tile × tile` tiles, or a message where a query sees no key (a softmax of nothing)
/// or the tile is 0.
///
/// # Shapes
/// `q`: `[1, heads, tokens, d]`, `k`: `[1, kv_heads, tokens, d]`. Returns the weights
/// `[heads, tokens, tokens]`.
fn recipe_weights(
    [q, k]: [&Tensor; 2],
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod + Clone,
    tile: usize,
) -> Result<(Tensor, BlockMask), String> {
    let tokens = q.size(2);
    let block_mask = BlockMask::new(mask_mod.clone(), 1, 1, tokens, tokens, tile)
        .map_err(|e| e.to_string())?;
    if let Some(query) =
        (0..tokens).find(|&i| (0..tokens).all(|j| !mask_mod(0, 0, i, j)))
    {
        return Err(format!(
            "under this mask the query at position {query} sees no key: its softmax has \
             nothing to weigh (a window must be at least 1)"
        ));
    }
    let k = repeat_kv(k, q.size(1) / k.size(1));
    let scale = (1.0 / (q.size(-1) as f64).sqrt()) as f32;
    let scores = modified(&(q.matmul(&k.transpose(-2, -1)) * scale), score_mod);
    let weights = scores
        .masked_fill(&hidden(mask_mod, scores.dims()), f32::NEG_INFINITY)
        .softmax(-1)
        .select(0, 0);
    Ok((weights, block_mask))
}

#[cfg(test)]
mod tests {
    use super::super::tests::settings;
    use super::super::{Settings, heatmap};
    use super::*;
    use ch16_flex_attention::formula::flex_attention;

    fn recipe(name: &str, window: usize, tile: usize) -> Settings {
        Settings {
            recipe: Some(name.into()),
            window: Some(window),
            tile: Some(tile),
            ..settings(16)
        }
    }

    #[test]
    fn the_weights_times_v_are_the_chapters_flex_attention() {
        // The chapter's causal step: its output is these weights times v, bit for bit.
        let map = heatmap(&settings(16)).unwrap();
        manual_seed(SEED);
        let [batch, heads, kv_heads, tokens, d] = SIZES;
        let q = randn(&[batch, heads, tokens, d]);
        let k = randn(&[batch, kv_heads, tokens, d]);
        let v = randn(&[batch, kv_heads, tokens, d]);
        let out = flex_attention(&q, &k, &v, unchanged, causal).unwrap();
        let rows: Vec<f32> = map.heads.concat().concat();
        let weights = Tensor::from_vec(rows, &[1, heads, tokens, tokens]);
        assert!(weights.matmul(&repeat_kv(&v, heads / kv_heads)) == out);
    }

    #[test]
    fn every_recipe_draws_its_block_mask_and_empty_tiles_hold_no_weight() {
        for name in RECIPES {
            for tile in [1, 3, 4, 16] {
                let map = heatmap(&recipe(name, WINDOW, tile)).unwrap();
                let tiles = map.tiles.as_ref().unwrap();
                assert_eq!(tiles.size, tile);
                assert_eq!(tiles.kinds.len(), 16usize.div_ceil(tile));
                for head in &map.heads {
                    for (i, row) in head.iter().enumerate() {
                        assert!(
                            (row.iter().sum::<f32>() - 1.0).abs() < 1e-5,
                            "{name}"
                        );
                        for (j, &w) in row.iter().enumerate() {
                            let kind = tiles.kinds[i / tile].as_bytes()[j / tile];
                            if kind == b'.' {
                                assert_eq!(
                                    w, 0.0,
                                    "{name}: an empty tile has weight"
                                );
                            }
                            if kind == b'F' {
                                assert!(w > 0.0, "{name}: a full tile hides a key");
                            }
                        }
                    }
                }
                let caption = map.caption.unwrap();
                assert!(caption.contains("computed") && caption.contains("skipped"));
            }
        }
        // The chapter's causal grid: 10 tiles computed, 6 skipped.
        let causal = heatmap(&settings(16)).unwrap();
        assert!(
            causal
                .caption
                .unwrap()
                .contains("10 of 16 computed (6 full, 4 partial")
        );
    }

    #[test]
    fn alibi_gives_each_head_its_own_weights_and_bad_settings_get_a_message() {
        let map = heatmap(&recipe("ALiBi", WINDOW, TILE)).unwrap();
        let causal = heatmap(&settings(16)).unwrap();
        assert_ne!(map.heads, causal.heads);
        assert_eq!(map.tiles, causal.tiles);
        let error = |s: Settings| heatmap(&s).unwrap_err();
        assert!(error(recipe("sliding window", 0, TILE)).contains("sees no key"));
        assert!(error(recipe("causal window", 0, TILE)).contains("sees no key"));
        assert!(error(recipe("causal", 0, 0)).contains("tile 0"));
        assert!(error(recipe("dilated", 4, 4)).contains("\"dilated\""));
        // The window means nothing to the causal mask: 0 is no error there.
        assert_eq!(heatmap(&recipe("causal", 0, TILE)).unwrap(), causal);
    }
}
