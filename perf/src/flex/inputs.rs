//! What every tile of the vector kernels needs: the listing's inputs, checked by the
//! listing's own checks ([`check_queries`], [`check_block_mask`]), so that a wrong shape
//! gets the listing's message, named after the version that was called.

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{check_block_mask, check_queries};
use ch16_flex_attention::kv_rows::KvRows;
use shared::{Result, Tensor};

/// The queries (row-major), the keys and values, the block mask, the sizes, and the query
/// heads per key/value head.
pub(crate) struct Inputs<'a, K> {
    pub(crate) q: &'a [f32],
    pub(crate) kv: &'a K,
    pub(crate) block_mask: &'a BlockMask,
    /// `[batch, heads, queries, d]`.
    pub(crate) dims: [usize; 4],
    pub(crate) keys: usize,
    pub(crate) d_v: usize,
    pub(crate) groups: usize,
}

impl<'a, K: KvRows> Inputs<'a, K> {
    /// The inputs of operation `op`, once [`check_queries`] and [`check_block_mask`] have
    /// found their shapes consistent; `q_values` are `q`'s elements, row-major.
    ///
    /// # Shapes
    /// `q`: `[batch, heads, queries, d]`; `kv` of sizes `[batch, kv_heads, keys, d, d_v]`;
    /// `block_mask` for `queries × keys`.
    pub(crate) fn checked(
        op: &'static str,
        q: &Tensor,
        q_values: &'a [f32],
        kv: &'a K,
        block_mask: &'a BlockMask,
    ) -> Result<Self> {
        let groups = check_queries(op, q, kv.sizes())?;
        let [batch, heads, queries, d] = q.dims();
        let [_, _, keys, _, d_v] = kv.sizes();
        check_block_mask(op, block_mask, [batch, heads, queries, keys])?;
        Ok(Inputs {
            q: q_values,
            kv,
            block_mask,
            dims: [batch, heads, queries, d],
            keys,
            d_v,
            groups,
        })
    }
}
