//! Split-KV decoding: one new query per head over a long cache, the cache cut into parts
//! that are attended separately (on a GPU, by different workers at once), their results
//! merged by their log-sum-exps.
//!
//! Dao, Haziza, Massa and Sizov, "Flash-Decoding for long-context inference": a decoding
//! step has one query per head, too little work to keep many workers busy if each head's
//! keys are walked by one. Cut the keys into parts instead. Part `p` gives its own
//! attention `O_p`, normalised over its keys alone, and its log-sum-exp
//! `L_p = log Σ_{j in p} exp(s_j)`, which chapter 16's kernel keeps anyway. Since
//! `exp(L_p)` is the part's share of the softmax's denominator, the whole is
//!
//! ```text
//! L = log Σ_p exp(L_p)        O = Σ_p exp(L_p − L) · O_p
//! ```
//!
//! Each part here is chapter 16's kernel over a [`KeyRange`] of the cache, so the parts
//! read a paged cache through its block table like the whole does.

use std::ops::Range;

use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::kernel::{check_queries, flex_kernel_over};
use ch16_flex_attention::kv_rows::KvRows;
use ch16_flex_attention::recipes::{no_mask, unchanged};
use shared::{Error, Result, Tensor};

use crate::key_range::KeyRange;

/// Attention over some of the keys: the output normalised over those keys alone, and the
/// log-sum-exp of their scores.
#[derive(Clone, Debug)]
pub struct Part {
    /// `softmax(q·kᵀ/√d)·v` over the part's keys, `[batch, heads, queries, d_v]`.
    pub out: Tensor,
    /// `log Σ exp(q·kᵀ/√d)` over the part's keys, `[batch, heads, queries]`.
    pub lse: Tensor,
}

/// The attention of `q` over positions `keys` of `kv` (every query sees every key there),
/// by chapter 16's kernel in tiles of `tile`.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]`, `kv`: `[batch, kv_heads, tokens, d, d_v]`, `keys`
/// a non-empty range within `0..tokens`. Returns `[batch, heads, queries, d_v]` and
/// `[batch, heads, queries]`.
// ANCHOR: attend_part
pub fn attend_part(
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    keys: Range<usize>,
    tile: usize,
) -> Result<Part> {
    check_queries("attend_part", q, kv.sizes())?;
    let [_, _, tokens, _, _] = kv.sizes();
    let Some(part) = KeyRange::new(kv, keys.clone()) else {
        return Err(Error::InvalidArgument {
            op: "attend_part",
            detail: format!("keys {keys:?} of a cache of {tokens} tokens"),
        });
    };
    let block_mask = BlockMask::new(no_mask, 1, 1, q.size(2), keys.len(), tile)?;
    let result = flex_kernel_over(q, &part, &block_mask, unchanged, no_mask)?;
    Ok(Part {
        out: result.out,
        lse: result.lse,
    })
}
// ANCHOR_END: attend_part

/// The attention over the keys of all `parts` together: `L = log Σ_p exp(L_p)` and
/// `O = Σ_p exp(L_p − L)·O_p`, each exponential taken relative to the largest `L_p`
/// so that none overflows. A query no part saw a key for gets zeros and `L = -∞`.
///
/// # Shapes
/// Every part `[batch, heads, queries, d_v]` and `[batch, heads, queries]`, at least one
/// part. Returns the same shapes.
// ANCHOR: merge_parts
pub fn merge_parts(parts: &[Part]) -> Result<Part> {
    let [batch, heads, queries, d_v] = check_parts(parts)?;
    let outs: Vec<Vec<f32>> = parts.iter().map(|p| p.out.to_vec()).collect();
    let lses: Vec<Vec<f32>> = parts.iter().map(|p| p.lse.to_vec()).collect();
    let rows = batch * heads * queries;
    let mut out = vec![0.0f32; rows * d_v];
    let mut lse = vec![f32::NEG_INFINITY; rows];
    for row in 0..rows {
        let max = lses.iter().fold(f32::NEG_INFINITY, |m, l| m.max(l[row]));
        if max == f32::NEG_INFINITY {
            continue; // no part saw a key
        }
        let sum: f32 = lses.iter().map(|l| (l[row] - max).exp()).sum();
        lse[row] = max + sum.ln();
        let out_row = &mut out[row * d_v..][..d_v];
        for (part_out, part_lse) in outs.iter().zip(&lses) {
            // The part's share of the whole softmax's denominator.
            let share = (part_lse[row] - lse[row]).exp();
            for (o, x) in out_row.iter_mut().zip(&part_out[row * d_v..][..d_v]) {
                *o += share * x;
            }
        }
    }
    Ok(Part {
        out: Tensor::from_vec(out, &[batch, heads, queries, d_v]),
        lse: Tensor::from_vec(lse, &[batch, heads, queries]),
    })
}
// ANCHOR_END: merge_parts

/// Checks that there is at least one part and that all have the first one's shapes,
/// which it returns.
fn check_parts(parts: &[Part]) -> Result<[usize; 4]> {
    let error = |detail: String| {
        Err(Error::Shape {
            op: "merge_parts",
            detail,
        })
    };
    let Some(first) = parts.first() else {
        return error("no part to merge".into());
    };
    let (out, lse) = (first.out.sizes(), first.lse.sizes());
    if out.len() != 4 || lse != &out[..3] {
        return error(format!(
            "expected out [batch, heads, queries, d_v] and lse [batch, heads, queries], got \
             {out:?} and {lse:?}"
        ));
    }
    for (p, part) in parts.iter().enumerate() {
        let (part_out, part_lse) = (part.out.sizes(), part.lse.sizes());
        if part_out != out || part_lse != lse {
            return error(format!(
                "part 0 has out {out:?} and lse {lse:?}, part {p} has {part_out:?} and \
                 {part_lse:?}"
            ));
        }
    }
    Ok([out[0], out[1], out[2], out[3]])
}

/// `tokens` positions cut into `splits` consecutive parts whose lengths differ by at most
/// one, the longer ones first.
///
/// # Shapes
/// Counts only: `1 ≤ splits ≤ tokens`.
pub fn even_parts(tokens: usize, splits: usize) -> Result<Vec<Range<usize>>> {
    if splits == 0 || splits > tokens {
        return Err(Error::InvalidArgument {
            op: "split_kv_decode",
            detail: format!(
                "{splits} parts of a cache of {tokens} tokens: expected 1 to {tokens} parts, \
                 each with at least one key"
            ),
        });
    }
    // The first `longer` parts hold one key more than the others.
    let (len, longer) = (tokens / splits, tokens % splits);
    Ok((0..splits)
        .map(|p| {
            let start = p * len + p.min(longer);
            start..start + len + usize::from(p < longer)
        })
        .collect())
}

/// Split-KV decoding: `q`'s attention over all of `kv`, the keys cut into `splits` parts
/// ([`even_parts`]), each attended by chapter 16's kernel in tiles of `tile`, the parts
/// merged by their log-sum-exps.
///
/// # Shapes
/// `q`: `[batch, heads, queries, d]` (decoding: `queries = 1`), `kv`:
/// `[batch, kv_heads, tokens, d, d_v]`. Returns `[batch, heads, queries, d_v]` and
/// `[batch, heads, queries]`.
// ANCHOR: split_kv_decode
pub fn split_kv_decode(
    q: &Tensor, // [batch, heads, queries, d]
    kv: &impl KvRows,
    splits: usize,
    tile: usize,
) -> Result<Part> {
    check_queries("split_kv_decode", q, kv.sizes())?;
    let [_, _, tokens, _, _] = kv.sizes();
    let parts = even_parts(tokens, splits)?
        .into_iter()
        .map(|keys| attend_part(q, kv, keys, tile))
        .collect::<Result<Vec<Part>>>()?;
    merge_parts(&parts)
}
// ANCHOR_END: split_kv_decode
