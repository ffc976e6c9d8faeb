//! DeepSeek Sparse Attention at long lengths: no `T × T` matrix.
//!
//! [`crate::sparse`] writes DSA with tensor operations: it computes every index score and
//! every main score, then masks. That shows what the method computes, not what it saves, and
//! at 32768 tokens its `T × T` matrices alone would take 4 GiB each. This kernel computes
//! the same thing a tile of queries at a time:
//!
//! 1. the indexer scores the tile's queries against the keys they can see, a `tile × T`
//!    block of [`index_scores`](crate::sparse::index_scores);
//! 2. each query keeps its `k` best keys ([`keep_top_k`]);
//! 3. the main attention gathers those keys and values and runs chapter 9's kernel over
//!    them, for every head of the query at once.
//!
//! DeepSeek-V3.2 runs its sparse attention in MLA's absorbed form, where all the heads of a
//! query read one shared latent cache (chapter 17): the keys a query keeps are gathered once
//! and serve every head. The kernel takes that form, many query heads over one key and value
//! per token. The main attention then does `T · k` work per head instead of `T²/2`; the
//! indexer still scores every visible key, with its few small heads.

use std::ops::Range;

use ch09_flash_attention::kernel::{AttentionShape, Isa, flash_attention_slices};
use shared::{Error, Result, Tensor};

/// The keys one query keeps: the indices of the `top_k` best of `scores` (the query's index
/// scores of the keys it can see), in increasing order. Of equal scores the earlier key wins,
/// so the choice does not depend on how the selection is carried out.
///
/// # Shapes
/// `scores`: one score per visible key. Returns `min(top_k, scores.len())` indices.
// ANCHOR: keep_top_k
pub fn keep_top_k(scores: &[f32], top_k: usize) -> Vec<usize> {
    let mut keys: Vec<usize> = (0..scores.len()).collect();
    if top_k < keys.len() {
        // Key a comes before key b: a higher score, or the same score and earlier.
        let better = |a: &usize, b: &usize| {
            let by_score = scores[*b].total_cmp(&scores[*a]);
            by_score.then(a.cmp(b))
        };
        // Puts the `top_k` best keys first, in some order, without sorting the rest.
        keys.select_nth_unstable_by(top_k, better);
        keys.truncate(top_k);
        keys.sort_unstable();
    }
    keys
}
// ANCHOR_END: keep_top_k

/// The rows `queries` of the indexer's scores, over the keys those queries can see: a
/// block of [`index_scores`](crate::sparse::index_scores) without the rest of the matrix,
/// `I[t, s] = Σ_h w[t, h] · ReLU(q_I[t, h] · k_I[s])`. The products of every index head come
/// from one matrix product, `[rows · heads, d_I] × [d_I, keys]`; the entries of keys a query
/// cannot see (`s > t`) are left 0.
///
/// # Shapes
/// `q_index`: `[T, heads, d_I]`, `k_index`: `[T, d_I]`, `w`: `[T, heads]`. Returns
/// `[queries.len(), queries.end]`.
// ANCHOR: index_scores_of_tile
pub fn index_scores_of_tile(
    q_index: &Tensor,
    k_index: &Tensor,
    w: &Tensor,
    queries: Range<usize>,
) -> Tensor {
    let (rows, seen, heads) = (queries.len(), queries.end, q_index.size(1));
    let q_rows = q_index
        .slice(0, queries.clone())
        .reshape([rows * heads, q_index.size(2)]);
    let products = q_rows.matmul(&k_index.slice(0, 0..seen).t()).to_vec();
    let w = w.slice(0, queries.clone()).contiguous().to_vec();
    let mut scores = vec![0.0; rows * seen];
    for (r, t) in queries.enumerate() {
        let row = &mut scores[r * seen..][..=t];
        for h in 0..heads {
            let head = &products[(r * heads + h) * seen..][..=t];
            for (score, &product) in row.iter_mut().zip(head) {
                *score += w[r * heads + h] * product.max(0.0);
            }
        }
    }
    Tensor::from_vec(scores, &[rows, seen])
}
// ANCHOR_END: index_scores_of_tile

/// The indexer's inputs: DeepSeek's lightning indexer, a few small heads per query and one
/// small key per token.
pub struct Indexer<'a> {
    /// The indexer's queries, `[T, heads, d_I]`.
    pub q: &'a Tensor,
    /// The indexer's keys, `[T, d_I]`.
    pub k: &'a Tensor,
    /// Each query's weights of its index heads, `[T, heads]`.
    pub w: &'a Tensor,
}

/// DeepSeek Sparse Attention a tile of queries at a time: each query keeps the `top_k` keys
/// it can see with the best index scores, and each of its heads runs softmax attention over
/// those keys alone. Equals [`crate::sparse::sparse_attention`] over
/// [`crate::sparse::top_k_kept`], head by head, up to rounding (and to which of equally
/// scored keys are kept).
///
/// # Shapes
/// `q`: `[T, heads, d]`; `k`: `[T, d]` and `v`: `[T, d_v]`, one per token, shared by the
/// heads; the indexer as in [`Indexer`]; `top_k` ≥ 1, `tile` ≥ 1. Returns `[T, heads, d_v]`.
///
/// # Errors
/// If the shapes do not fit together, or `top_k` or `tile` is 0.
// ANCHOR: dsa_kernel
pub fn dsa_kernel(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    indexer: &Indexer,
    top_k: usize,
    tile: usize,
) -> Result<Tensor> {
    check_shapes("dsa_kernel", q, k, v, indexer, top_k, tile)?;
    let (t, heads, d, d_v) = (q.size(0), q.size(1), q.size(2), v.size(1));
    // Row after row: query i's heads, and key or value j, are stretches of these.
    let (q, k, v) = (q.to_vec(), k.to_vec(), v.to_vec());
    let mut out = Vec::with_capacity(t * heads * d_v);
    // The kept keys and values of one query, gathered; the buffers serve every query.
    let (mut k_kept, mut v_kept) = (Vec::new(), Vec::new());
    for start in (0..t).step_by(tile) {
        let queries = start..(start + tile).min(t);
        let rows = queries.clone();
        let scores = index_scores_of_tile(indexer.q, indexer.k, indexer.w, rows);
        let scores = scores.to_vec();
        for (row, i) in scores.chunks(queries.end).zip(queries) {
            // Query i sees keys 0..=i.
            let kept = keep_top_k(&row[..=i], top_k);
            gather_rows(&k, d, &kept, &mut k_kept);
            gather_rows(&v, d_v, &kept, &mut v_kept);
            // The query's heads are `heads` rows of queries over the same kept keys.
            let shape = AttentionShape {
                heads: 1,
                queries: heads,
                keys: kept.len(),
                d,
                d_v,
            };
            let q_i = &q[i * heads * d..][..heads * d];
            out.extend(flash_attention_slices(
                Isa::detect(),
                q_i,
                &k_kept,
                &v_kept,
                shape,
                false,
            ));
        }
    }
    Ok(Tensor::from_vec(out, &[t, heads, d_v]))
}
// ANCHOR_END: dsa_kernel

/// Writes into `gathered` the rows `rows` of a matrix of `width` columns stored row after
/// row in `x`.
///
/// # Shapes
/// `x`: `[_, width]`, flattened. `gathered` becomes `[rows.len(), width]`, flattened.
fn gather_rows(x: &[f32], width: usize, rows: &[usize], gathered: &mut Vec<f32>) {
    gathered.clear();
    for &row in rows {
        gathered.extend_from_slice(&x[row * width..][..width]);
    }
}

/// The errors of [`dsa_kernel`] (and of the faster versions of it outside the chapter),
/// named after `op`, with the shapes given.
///
/// # Shapes
/// As [`dsa_kernel`].
pub fn check_shapes(
    op: &'static str,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    indexer: &Indexer,
    top_k: usize,
    tile: usize,
) -> Result<()> {
    let invalid = |detail: String| Error::InvalidArgument { op, detail };
    if top_k == 0 || tile == 0 {
        return Err(invalid(format!(
            "top_k and tile must be at least 1, got top_k = {top_k} and tile = {tile}"
        )));
    }
    let (qi, ki, w) = (indexer.q, indexer.k, indexer.w);
    let fits = q.dim() == 3
        && k.dim() == 2
        && v.dim() == 2
        && qi.dim() == 3
        && ki.dim() == 2
        && w.dim() == 2
        && q.size(-1) > 0
        && {
            let t = q.size(0);
            [k.size(0), v.size(0), qi.size(0), ki.size(0), w.size(0)] == [t; 5]
                && k.size(1) == q.size(2)
                && ki.size(1) == qi.size(2)
                && w.size(1) == qi.size(1)
        };
    if fits {
        return Ok(());
    }
    Err(Error::Shape {
        op,
        detail: format!(
            "shapes q {:?}, k {:?}, v {:?}, index q {:?}, index k {:?}, index weights {:?} do \
             not fit q [T, heads, d] (d ≥ 1), k [T, d], v [T, d_v], index q [T, h, d_I], \
             index k [T, d_I], index weights [T, h]",
            q.sizes(),
            k.sizes(),
            v.sizes(),
            qi.sizes(),
            ki.sizes(),
            w.sizes()
        ),
    })
}
