//! Ulysses (Jacobs et al., "DeepSpeed Ulysses: System Optimizations for Enabling Training
//! of Extreme Long Sequence Transformer Models"): instead of moving keys around a ring,
//! trade the cut. Each rank starts with all heads of its tokens; one all-to-all gives each
//! rank all tokens of some heads, it runs ordinary attention on them, and a second
//! all-to-all gives the tokens back. A head never meets another head's numbers, so each
//! head's attention is computed exactly as one process computes it: the same bits.
//!
//! The cut needs the ranks to divide the heads. With grouped-query attention the keys and
//! values have fewer heads than the queries, and those set the limit: more ranks than
//! key/value heads would have to copy key/value heads to several ranks.

use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::recipes::{causal, unchanged};
use shared::{Error, Result, Tensor, cat};

/// Causal attention over a whole sequence, `softmax(mask(q·kᵀ/√d))·v` as chapter 16's
/// formula writes it: what one process computes, and what each Ulysses rank computes for
/// its heads.
///
/// # Shapes
/// `q`, `k`, `v`: `[batch, heads, tokens, d]`; returns `[batch, heads, tokens, d]`.
pub fn causal_attention(q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Tensor> {
    flex_attention(q, k, v, unchanged, causal)
}

/// Checks that `world` ranks divide `heads` heads for `op`.
///
/// # Shapes
/// Counts only.
pub fn check_heads(op: &'static str, heads: usize, world: usize) -> Result<usize> {
    if world == 0 || !heads.is_multiple_of(world) {
        return Err(Error::InvalidArgument {
            op,
            detail: format!(
                "{heads} heads on {world} ranks: the ranks must divide the heads"
            ),
        });
    }
    Ok(heads / world)
}

/// `t` cut into `world` equal pieces along `dim`: the piece for each rank, in rank order.
///
/// # Shapes
/// `t`: any shape whose size along `dim` `world` divides.
pub fn pieces(t: &Tensor, dim: i64, world: usize) -> Vec<Tensor> {
    let len = t.size(dim) / world;
    (0..world)
        .map(|r| t.narrow(dim, r * len, len).contiguous())
        .collect()
}

/// An all-to-all in one process: `sent[i][j]` is what rank `i` sends to rank `j`; returns
/// `received[j][i]`, what rank `j` gets from rank `i`.
///
/// # Shapes
/// `world × world` tensors of any shapes.
pub fn all_to_all(sent: Vec<Vec<Tensor>>) -> Vec<Vec<Tensor>> {
    let world = sent.len();
    let mut received: Vec<Vec<Tensor>> = (0..world).map(|_| Vec::new()).collect();
    for row in sent {
        for (j, piece) in row.into_iter().enumerate() {
            received[j].push(piece);
        }
    }
    received
}

/// Ulysses in one process: sequence shards to head shards (an all-to-all), attention per
/// rank on its heads, head shards back to sequence shards (a second all-to-all).
///
/// # Shapes
/// `q`, `k`, `v`: `[batch, heads, tokens, d]`, `world` dividing `heads` and `tokens`;
/// returns `[batch, heads, tokens, d]`.
// ANCHOR: ulysses
pub fn ulysses_simulated(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    world: usize,
) -> Result<Tensor> {
    check_heads("ulysses", q.size(1), world)?;
    // Rank i starts with tokens i of every head, and sends heads j of them to rank j.
    let to_heads = |t: &Tensor| {
        let sent = pieces(t, 2, world)
            .iter()
            .map(|s| pieces(s, 1, world))
            .collect();
        all_to_all(sent)
            .iter()
            .map(|from_each| cat(from_each, 2)) // all tokens of my heads
            .collect::<Vec<Tensor>>()
    };
    let (q_heads, k_heads, v_heads) = (to_heads(q), to_heads(k), to_heads(v));
    let mut sent = Vec::with_capacity(world);
    for rank in 0..world {
        let out = causal_attention(&q_heads[rank], &k_heads[rank], &v_heads[rank])?;
        sent.push(pieces(&out, 2, world)); // tokens j of my heads go back to rank j
    }
    let shards: Vec<Tensor> = all_to_all(sent).iter().map(|h| cat(h, 1)).collect();
    Ok(cat(&shards, 2))
}
// ANCHOR_END: ulysses
