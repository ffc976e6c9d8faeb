//! Where the kernel reads the keys and values: one row at a time.
//!
//! The kernel never needs a key tensor as a whole. For each score it asks for one row,
//! the key of position `j` in key/value head `kv_head` of batch `b`, and for each weight
//! the value of the same position. Keys and values held in tensors ([`InTensors`])
//! answer with a slice of their memory; a cache kept in blocks (chapter 17's paged cache) answers by looking
//! the position up in its block table, so the same kernel attends over it without first
//! copying it into one tensor.

use std::borrow::Cow;

use shared::{Error, Result, Tensor};

/// Keys and values the kernel can read row by row.
// ANCHOR: kv_rows
pub trait KvRows {
    /// The sizes of the keys and values: `[batch, kv_heads, keys, d, d_v]`.
    ///
    /// # Shapes
    /// Sizes only.
    fn sizes(&self) -> [usize; 5];

    /// The key of position `j` in key/value head `kv_head` of batch `b`.
    ///
    /// # Shapes
    /// `b < batch`, `kv_head < kv_heads`, `j < keys`; returns `d` numbers.
    fn k_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32];

    /// The value of the same position.
    ///
    /// # Shapes
    /// `b < batch`, `kv_head < kv_heads`, `j < keys`; returns `d_v` numbers.
    fn v_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32];
}
// ANCHOR_END: kv_rows

/// The elements of `t` in row-major order, borrowed when `t` holds them that way.
///
/// # Shapes
/// Any `t`; returns `t.numel()` numbers.
pub fn elements(t: &Tensor) -> Cow<'_, [f32]> {
    match t.as_slice() {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(t.to_vec()),
    }
}

/// Keys and values in two tensors, `[batch, kv_heads, keys, d]` and
/// `[batch, kv_heads, keys, d_v]`: a row is a slice of their row-major elements.
#[derive(Clone, Debug)]
pub struct InTensors<'a> {
    k: Cow<'a, [f32]>,
    v: Cow<'a, [f32]>,
    sizes: [usize; 5],
}

impl<'a> InTensors<'a> {
    /// The keys `k` and values `v`, borrowed where they lie in row-major order.
    ///
    /// # Shapes
    /// `k`: `[batch, kv_heads, keys, d]`, `v`: `[batch, kv_heads, keys, d_v]`.
    pub fn new(k: &'a Tensor, v: &'a Tensor) -> Result<InTensors<'a>> {
        let (ks, vs) = (k.sizes(), v.sizes());
        let (&[batch, kv_heads, keys, d], &[vb, vh, vk, d_v]) = (ks, vs) else {
            return Err(shape_error(ks, vs));
        };
        if [vb, vh, vk] != [batch, kv_heads, keys] {
            return Err(shape_error(ks, vs));
        }
        Ok(InTensors {
            k: elements(k),
            v: elements(v),
            sizes: [batch, kv_heads, keys, d, d_v],
        })
    }
}

fn shape_error(ks: &[usize], vs: &[usize]) -> Error {
    Error::Shape {
        op: "InTensors::new",
        detail: format!(
            "expected k [batch, kv_heads, keys, d] and v [batch, kv_heads, keys, d_v], got k \
             {ks:?} and v {vs:?}"
        ),
    }
}

impl KvRows for InTensors<'_> {
    fn sizes(&self) -> [usize; 5] {
        self.sizes
    }

    fn k_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        let [_, kv_heads, keys, d, _] = self.sizes;
        &self.k[((b * kv_heads + kv_head) * keys + j) * d..][..d]
    }

    fn v_row(&self, b: usize, kv_head: usize, j: usize) -> &[f32] {
        let [_, kv_heads, keys, _, d_v] = self.sizes;
        &self.v[((b * kv_heads + kv_head) * keys + j) * d_v..][..d_v]
    }
}
