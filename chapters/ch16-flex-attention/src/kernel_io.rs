//! What the kernel of [`crate::kernel`] (and the faster versions of it outside the
//! chapter) takes and gives: the checks on its inputs' shapes, its output and the tiles it
//! visited.

use shared::{Error, Result, Tensor};

use crate::block_mask::{BlockMask, TileVisit};

/// How many tiles the kernel computed, over every batch and head.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Visits {
    /// Full tiles: computed without a mask.
    pub full: usize,
    /// Partial tiles: computed and masked.
    pub partial: usize,
}

impl Visits {
    /// Counts one more tile computed.
    ///
    /// # Shapes
    /// Counts only.
    pub fn record(&mut self, tile: &TileVisit) {
        if tile.masked {
            self.partial += 1;
        } else {
            self.full += 1;
        }
    }
}

/// What the kernel computes: the output, every query's log-sum-exp, and the tiles it
/// visited.
#[derive(Clone, Debug)]
pub struct KernelOutput {
    /// `softmax(mask(score_mod(q·kᵀ/√d)))·v`, `[batch, heads, queries, d_v]`.
    pub out: Tensor,
    /// `log Σ exp(s)` over the modified scores `s` each query sees (`max + ln(sum)` of
    /// the online softmax), `[batch, heads, queries]`; `-∞` for a query that sees no key.
    pub lse: Tensor,
    /// The tiles computed.
    pub visits: Visits,
}

/// Checks for `op` that the queries `q` fit keys and values of sizes
/// `[batch, kv_heads, keys, d, d_v]`: `q` is `[batch, heads, queries, d]` with `heads` a
/// multiple of `kv_heads`.
///
/// # Shapes
/// As above; returns `(heads / kv_heads)`, the query heads per key/value head.
pub fn check_queries(
    op: &'static str,
    q: &Tensor,
    [batch, kv_heads, keys, d, d_v]: [usize; 5],
) -> Result<usize> {
    let qs = q.sizes();
    let fits = qs.len() == 4
        && qs[0] == batch
        && qs[3] == d
        && kv_heads > 0
        && qs[1].is_multiple_of(kv_heads);
    if !fits {
        return Err(Error::Shape {
            op,
            detail: format!(
                "expected q [batch, heads, queries, d] with heads a multiple of kv_heads for \
                 keys [batch, kv_heads, keys, d] = [{batch}, {kv_heads}, {keys}, {d}] and \
                 values [.., d_v] = [{batch}, {kv_heads}, {keys}, {d_v}], got q {qs:?}"
            ),
        });
    }
    Ok(qs[1] / kv_heads)
}

/// Checks for `op` that `block_mask` covers `queries × keys` for `batch` batches and
/// `heads` heads.
///
/// # Shapes
/// Sizes only.
pub fn check_block_mask(
    op: &'static str,
    block_mask: &BlockMask,
    [batch, heads, queries, keys]: [usize; 4],
) -> Result<()> {
    let fits = block_mask.queries == queries
        && block_mask.keys == keys
        && (block_mask.batch == 1 || block_mask.batch == batch)
        && (block_mask.heads == 1 || block_mask.heads == heads);
    if fits {
        return Ok(());
    }
    Err(Error::Shape {
        op,
        detail: format!(
            "the block mask covers {} queries × {} keys for {} batches and {} heads, the \
             attention has {queries} queries × {keys} keys for {batch} batches and {heads} heads",
            block_mask.queries, block_mask.keys, block_mask.batch, block_mask.heads
        ),
    })
}
