//! The recipes: attention variants as a `mask_mod` (which keys a query sees) and a
//! `score_mod` (how a visible score changes), with FlexAttention's arguments: the batch
//! `b`, the query head `h`, the query's position `q_idx` and the key's position `kv_idx`.
//!
//! Each is a plain function or a closure that captures its parameter (a window, the
//! documents' lengths, a cap). The formula and the kernel take them as generic
//! parameters, so every recipe is compiled into its own copy of the code, and a call is
//! as cheap as the comparison or the addition written in it.
//!
//! ALiBi's score_mod and a chunked causal mask are the exercises (modules
//! [`crate::alibi`] and [`crate::chunked`]).

/// A mask_mod: whether query `q_idx` of head `h` in batch `b` sees key `kv_idx`
/// (`mask_mod(b, h, q_idx, kv_idx)`).
pub trait MaskMod: Fn(usize, usize, usize, usize) -> bool {}
impl<F: Fn(usize, usize, usize, usize) -> bool> MaskMod for F {}

/// A score_mod: the new value of the scaled score `score` of query `q_idx` and key
/// `kv_idx` in head `h` of batch `b` (`score_mod(score, b, h, q_idx, kv_idx)`).
pub trait ScoreMod: Fn(f32, usize, usize, usize, usize) -> f32 {}
impl<F: Fn(f32, usize, usize, usize, usize) -> f32> ScoreMod for F {}

// ANCHOR: masks
/// Every query sees every key.
///
/// # Shapes
/// Indices only.
pub fn no_mask(_b: usize, _h: usize, _q_idx: usize, _kv_idx: usize) -> bool {
    true
}

/// A query sees itself and the keys before it.
///
/// # Shapes
/// Indices only.
pub fn causal(_b: usize, _h: usize, q_idx: usize, kv_idx: usize) -> bool {
    q_idx >= kv_idx
}

/// A query sees the keys less than `window` positions away, on both sides.
///
/// # Shapes
/// Indices only.
pub fn sliding_window(window: usize) -> impl MaskMod + Copy {
    move |_b, _h, q_idx, kv_idx| q_idx.abs_diff(kv_idx) < window
}

/// Causal, and only the last `window` keys (the query's own included).
///
/// # Shapes
/// Indices only.
pub fn causal_window(window: usize) -> impl MaskMod + Copy {
    move |_b, _h, q_idx, kv_idx| q_idx >= kv_idx && q_idx - kv_idx < window
}

/// Several documents packed into one sequence, one after another, of the given
/// `lengths`: causal inside each document, nothing across. Positions past the last
/// document form one more document.
///
/// # Shapes
/// Indices only.
pub fn document_mask(lengths: &[usize]) -> impl MaskMod + Clone {
    let document: Vec<usize> = (0..lengths.len())
        .flat_map(|doc| std::iter::repeat_n(doc, lengths[doc]))
        .collect();
    let doc_of = move |i: usize| document.get(i).copied().unwrap_or(lengths.len());
    move |_b, _h, q_idx, kv_idx| doc_of(q_idx) == doc_of(kv_idx) && q_idx >= kv_idx
}

/// A prefix-LM: the first `prefix` tokens (the prompt) see each other both ways, the
/// rest is causal.
///
/// # Shapes
/// Indices only.
pub fn prefix_lm(prefix: usize) -> impl MaskMod + Copy {
    move |_b, _h, q_idx, kv_idx| kv_idx < prefix || q_idx >= kv_idx
}
// ANCHOR_END: masks

// ANCHOR: score_mods
/// The score as it is: plain attention.
///
/// # Shapes
/// One score and its indices; returns one score.
pub fn unchanged(score: f32, _b: usize, _h: usize, _q: usize, _kv: usize) -> f32 {
    score
}

/// Gemma 2's softcap, `cap · tanh(score / cap)`: no score gets far past `±cap`.
///
/// # Shapes
/// Indices only.
pub fn softcap(cap: f32) -> impl ScoreMod + Copy {
    move |score, _b, _h, _q_idx, _kv_idx| cap * ((score / cap) as f64).tanh() as f32
}
// ANCHOR_END: score_mods
