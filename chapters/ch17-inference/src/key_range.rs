//! A run of consecutive keys of a cache, read as a cache of its own: what one part of
//! split-KV decoding attends over.

use std::ops::Range;

use ch16_flex_attention::kv_rows::KvRows;

/// Keys `range` of `kv`: position `j` of the range is position `range.start + j` of `kv`.
#[derive(Clone, Debug)]
pub struct KeyRange<'a, R> {
    /// The whole cache.
    kv: &'a R,
    /// The positions read.
    range: Range<usize>,
}

impl<'a, R: KvRows> KeyRange<'a, R> {
    /// Positions `range` of `kv`; `None` unless they are some and all in `kv`.
    ///
    /// # Shapes
    /// `range` within `0..keys` of `kv`'s `[batch, kv_heads, keys, d, d_v]`.
    pub fn new(kv: &'a R, range: Range<usize>) -> Option<KeyRange<'a, R>> {
        let [_, _, keys, _, _] = kv.sizes();
        (!range.is_empty() && range.end <= keys).then_some(KeyRange { kv, range })
    }
}

impl<R: KvRows> KvRows for KeyRange<'_, R> {
    fn sizes(&self) -> [usize; 5] {
        let [batch, kv_heads, _, d, d_v] = self.kv.sizes();
        [batch, kv_heads, self.range.len(), d, d_v]
    }

    fn k_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        self.kv.k_row(b, kv_head, self.range.start + j)
    }

    fn v_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        self.kv.v_row(b, kv_head, self.range.start + j)
    }
}
