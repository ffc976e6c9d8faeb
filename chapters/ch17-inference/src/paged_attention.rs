//! Paged attention: chapter 16's tiled kernel reading the keys and values through the
//! block table, where they lie in the pool.
//!
//! Kwon et al., "Efficient Memory Management for Large Language Model Serving with
//! PagedAttention", never copy a sequence's cache into one tensor: the attention kernel
//! itself looks up the physical block of every key it reads. Chapter 16's kernel asks
//! for one key or value row at a time (its `KvRows`), so the paged cache only has to
//! answer that question with [`slot`]: the key of position `j` is the key at offset
//! `j mod B` of block `table[j / B]`. The kernel, its tiles, its online softmax and its
//! order of additions stay the same, so its output is the bits it computes on the
//! gathered cache.

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{
    KernelOutput, check_block_mask, check_queries, flex_kernel_over,
};
use ch16_flex_attention::kv_rows::KvRows;
use ch16_flex_attention::recipes::{MaskMod, ScoreMod};
use shared::{Error, Result, Tensor};

use crate::block_table::slot;
use crate::paged::{BlockPool, Sequence};

/// One layer of the pool as one sequence reads it, through its block table.
#[derive(Clone, Copy, Debug)]
// ANCHOR: paged_kv
pub struct PagedKv<'a> {
    /// The pool whose blocks hold the keys and values.
    pool: &'a BlockPool,
    /// The sequence's block table: the physical block of each logical block.
    table: &'a [usize],
    /// The layer read.
    layer: usize,
    /// `[batch, kv_heads, tokens, d, d_v]`.
    sizes: [usize; 5],
}

impl KvRows for PagedKv<'_> {
    fn sizes(&self) -> [usize; 5] {
        self.sizes
    }

    fn k_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        let (block, offset) = slot(self.table, self.pool.block_size, j);
        let (key, _) = &self.pool.blocks[block].slots[self.layer][offset];
        let [_, kv_heads, _, d, _] = self.sizes;
        &numbers(key)[(b * kv_heads + kv_head) * d..][..d]
    }

    fn v_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        let (block, offset) = slot(self.table, self.pool.block_size, j);
        let (_, value) = &self.pool.blocks[block].slots[self.layer][offset];
        let [_, kv_heads, _, _, d_v] = self.sizes;
        &numbers(value)[(b * kv_heads + kv_head) * d_v..][..d_v]
    }
}
// ANCHOR_END: paged_kv

/// A token's key or value as it lies in memory; [`PagedKv::new`] has checked that every
/// token's is one row-major slice.
fn numbers(t: &Tensor) -> &[f32] {
    t.as_slice()
        .expect("PagedKv::new checks that every key and value is contiguous")
}

impl<'a> PagedKv<'a> {
    /// `layer` of `pool` as `seq` reads it. Checks that the table covers every token of
    /// the sequence, that each of its blocks is in the pool and holds the token's key and
    /// value, and that all keys (and all values) have one shape.
    ///
    /// # Shapes
    /// Every key `[batch, kv_heads, 1, d]`, every value `[batch, kv_heads, 1, d_v]`;
    /// reads as `[batch, kv_heads, seq.len(), d]` and `[.., d_v]`.
    pub fn new(
        pool: &'a BlockPool,
        seq: &'a Sequence,
        layer: usize,
    ) -> Result<PagedKv<'a>> {
        let op = "PagedKv::new";
        let error = |detail: String| Err(Error::InvalidArgument { op, detail });
        let (tokens, block_size) = (seq.len(), pool.block_size);
        if layer >= pool.n_layers {
            return error(format!(
                "layer {layer} of a pool of {} layers",
                pool.n_layers
            ));
        }
        if seq.table.len() < tokens.div_ceil(block_size) {
            return error(format!(
                "a block table of {} blocks for {tokens} tokens in blocks of {block_size}",
                seq.table.len()
            ));
        }
        let mut sizes = None;
        for j in 0..tokens {
            let (block, offset) = slot(&seq.table, block_size, j);
            let Some(block) = pool.blocks.get(block) else {
                return error(format!(
                    "token {j} lies in block {block}, the pool has {} blocks",
                    pool.blocks.len()
                ));
            };
            let Some((k, v)) =
                block.slots.get(layer).and_then(|slots| slots.get(offset))
            else {
                return error(format!(
                    "token {j} lies at offset {offset} of block {}, which holds {} tokens in \
                     layer {layer}",
                    seq.table[j / block_size],
                    block.slots.get(layer).map_or(0, Vec::len)
                ));
            };
            let (ks, vs) = (k.sizes(), v.sizes());
            let token_sizes = match (ks, vs) {
                (&[batch, kv_heads, 1, d], &[vb, vh, 1, d_v])
                    if [vb, vh] == [batch, kv_heads] =>
                {
                    [batch, kv_heads, tokens, d, d_v]
                }
                _ => {
                    return Err(Error::Shape {
                        op,
                        detail: format!(
                            "expected token {j}'s key [batch, kv_heads, 1, d] and value \
                             [batch, kv_heads, 1, d_v], got {ks:?} and {vs:?}"
                        ),
                    });
                }
            };
            if *sizes.get_or_insert(token_sizes) != token_sizes {
                return Err(Error::Shape {
                    op,
                    detail: format!(
                        "token {j}'s key {ks:?} and value {vs:?} differ in shape from token 0's"
                    ),
                });
            }
            if k.as_slice().is_none() || v.as_slice().is_none() {
                return error(format!("token {j}'s key or value is a strided view"));
            }
        }
        let sizes = sizes.ok_or_else(|| Error::InvalidArgument {
            op,
            detail: "the sequence holds no token".into(),
        })?;
        Ok(PagedKv {
            pool,
            table: &seq.table,
            layer,
            sizes,
        })
    }
}

/// Chapter 16's kernel over a sequence's cache read through its block table:
/// `softmax(mask(score_mod(q·kᵀ/√d)))·v` and every query's log-sum-exp, without copying
/// the cache into one tensor. The block mask must come from the same `mask_mod`.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]` with `heads` a multiple of the cache's `kv_heads`;
/// `block_mask` for `queries × tokens`. Returns `[batch, heads, queries, d_v]` and
/// `[batch, heads, queries]`.
// ANCHOR: paged_attention
pub fn paged_attention(
    q: &Tensor, // [batch, heads, queries, d]
    cache: &PagedKv,
    block_mask: &BlockMask,
    score_mod: impl ScoreMod,
    mask_mod: impl MaskMod,
) -> Result<KernelOutput> {
    check_queries("paged_attention", q, cache.sizes())?;
    let [batch, heads, queries, _] = q.dims();
    let [_, _, tokens, _, _] = cache.sizes();
    check_block_mask(
        "paged_attention",
        block_mask,
        [batch, heads, queries, tokens],
    )?;
    flex_kernel_over(q, cache, block_mask, score_mod, mask_mod)
}
// ANCHOR_END: paged_attention
