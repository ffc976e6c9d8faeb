//! Chapter 15: the first layer's attention weights over the prompt, with the recipe's
//! switches.
//!
//! The widget builds the chapter's `TinyModel` after `manual_seed` and runs the prompt
//! through the first layer's attention exactly as the chapter does: RMSNorm, the
//! projections, QK-norm and RoPE, the scores, the softcap, the mask (a sliding window if
//! one is set) and the softmax with or without each head's sink. With a sink on, a row
//! sums to less than 1: what is missing went to the sink.

use ch14_generation::window::sliding_window_mask;
use ch15_modern_layer::setup::{CONFIG, PROMPT};
use ch15_modern_layer::{Recipe, TinyModel};
use shared::{Tensor, manual_seed};

use super::{Heatmap, Settings};
use crate::controls::Control;

/// The chapter's softcap.
const SOFTCAP: f32 = 5.0;

/// The prompt, the window, the three switches, and the seed. The chapter's model starts
/// with every switch on and the window of its local layers (4).
pub(super) fn controls() -> Vec<Control> {
    let prompt = PROMPT.map(|id| id.to_string()).join(" ");
    let recipe = Recipe::default();
    vec![
        Control::words("prompt", "prompt (token ids 0 to 31)", prompt),
        Control::count("window", "sliding window (0: none)", [0, 8], recipe.window),
        Control::checkbox("sinks", "attention sinks", true),
        Control::checkbox("softcap", "softcap (5 · tanh(s / 5))", true),
        Control::checkbox("qk_norm", "QK-norm", true),
        Control::seed(),
    ]
}

/// Layer 0's weights, one matrix per query head, rows and columns labelled
/// `position: token id`.
pub(super) fn weights(settings: &Settings, seed: u64) -> Result<Heatmap, String> {
    let prompt = prompt(settings.prompt.as_deref())?;
    let window = settings.window.unwrap_or(Recipe::default().window);
    let recipe = Recipe {
        sinks: settings.sinks.unwrap_or(true),
        softcap: settings.softcap.unwrap_or(true).then_some(SOFTCAP),
        qk_norm: settings.qk_norm.unwrap_or(true),
        ..Recipe::default()
    };
    manual_seed(seed);
    let model = TinyModel::new(CONFIG);
    let layer = &model.layers[0];
    let t = prompt.len();
    let ids = Tensor::from_vec(prompt.clone(), &[1, t]);
    let x = layer.attn_norm.forward(&model.tok_emb.forward(&ids));
    let positions: Vec<usize> = (0..t).collect();
    let (q, k, _) = layer.attn.qkv(&x, &positions, &recipe);
    let hidden = sliding_window_mask(t, (window > 0).then_some(window));
    let weights = layer
        .attn
        .weights(&q, &k, &recipe, Some(&hidden))
        .select(0, 0);

    let label = |p: usize| format!("{p}: {}", prompt[p]);
    let sink = if recipe.sinks {
        "each row sums to less than 1: the rest went to the head's sink"
    } else {
        "each row sums to 1"
    };
    let caption = format!("Layer 0 of the chapter's model over the prompt; {sink}");
    let labels: Vec<String> = (0..t).map(label).collect();
    Ok(Heatmap::of_heads(&weights, labels.clone(), labels).caption(caption))
}

/// The prompt's token ids, the chapter's if `ids` is `None`: 1 to 12 ids below 32.
fn prompt(ids: Option<&[String]>) -> Result<Vec<i64>, String> {
    let Some(ids) = ids else {
        return Ok(PROMPT.to_vec());
    };
    if ids.is_empty() || ids.len() > 12 {
        return Err(format!("a prompt of 1 to 12 token ids, not {}", ids.len()));
    }
    let vocab = CONFIG.vocab_size as i64;
    ids.iter()
        .map(|id| match id.trim().parse::<i64>() {
            Ok(n) if (0..vocab).contains(&n) => Ok(n),
            _ => Err(format!("token ids are 0 to {}, not {id:?}", vocab - 1)),
        })
        .collect()
}
