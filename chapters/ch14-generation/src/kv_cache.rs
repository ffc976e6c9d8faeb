//! The KV cache: the keys and values of the tokens seen so far.
//!
//! Under a causal mask a token's key and value depend only on that token and its position,
//! never on later tokens, so once computed they stay valid for the rest of the generation.
//! The queries are not cached: each is used once, by its own token's step. With a sliding
//! window of `w` the cache keeps only the last `w` keys and values, a rolling buffer: when
//! a new token arrives the oldest falls out. (Mistral's code writes slot `position % w`
//! instead of shifting, and reorders the slots before attending; here the buffer stays in
//! time order, so the keys are added up in the same order as without a cache.)

use shared::{Tensor, cat};

/// Keys and values of the cached tokens, per key/value head.
#[derive(Clone, Debug)]
// ANCHOR: kv_cache
pub struct KvCache {
    /// `[batch, n_kv_heads, cached, head_dim]`.
    pub keys: Tensor,
    /// `[batch, n_kv_heads, cached, head_dim]`.
    pub values: Tensor,
    /// With `Some(w)`, at most `w` tokens are kept.
    pub window: Option<usize>,
}
// ANCHOR_END: kv_cache

impl KvCache {
    /// A cache holding `keys` and `values` (only their last `window` tokens).
    ///
    /// # Shapes
    /// `keys`, `values`: `[batch, n_kv_heads, tokens, head_dim]`.
    pub fn new(keys: Tensor, values: Tensor, window: Option<usize>) -> KvCache {
        let mut cache = KvCache {
            keys,
            values,
            window,
        };
        cache.keep_window();
        cache
    }

    /// Appends one step's keys and values, dropping the oldest beyond the window.
    ///
    /// # Shapes
    /// `keys`, `values`: `[batch, n_kv_heads, new_tokens, head_dim]`.
    // ANCHOR: append
    pub fn append(&mut self, keys: &Tensor, values: &Tensor) {
        self.keys = cat(&[&self.keys, keys], 2);
        self.values = cat(&[&self.values, values], 2);
        self.keep_window();
    }
    // ANCHOR_END: append

    /// How many tokens the cache holds.
    pub fn len(&self) -> usize {
        self.keys.size(2)
    }

    /// Whether the cache holds no token.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of its keys and values, stored as float32.
    pub fn bytes(&self) -> usize {
        (self.keys.numel() + self.values.numel()) * std::mem::size_of::<f32>()
    }

    /// Drops all but the last `window` tokens.
    fn keep_window(&mut self) {
        if let Some(w) = self.window
            && self.len() > w
        {
            let start = self.len() - w;
            self.keys = self.keys.slice(2, start..).contiguous();
            self.values = self.values.slice(2, start..).contiguous();
        }
    }
}
