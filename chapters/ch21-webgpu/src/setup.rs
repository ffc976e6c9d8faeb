//! The chapter's sizes and inputs, and chapter 9's result on the CPU that every kernel
//! must match.

use ch09_flash_attention::kernel::{AttentionShape, flash_attention_lse};
use shared::{Tensor, manual_seed, randn};

use crate::launch::{Inputs, Outputs};

/// The example: 2 heads of 200 tokens with 16 features, as PyTorch's `[batch, heads,
/// tokens, features]`.
pub const EXAMPLE: [usize; 4] = [1, 2, 200, 16];
/// Decoding: one new query per head over a cache of 2000 keys, cut into 8 parts.
pub const CACHE: usize = 2000;
/// The parts of the cache in split-KV decoding.
pub const SPLITS: u32 = 8;
/// The first program adds two arrays of this many floats: two workgroups of 64, the
/// second with 28 invocations past the end.
pub const ADD_LEN: usize = 100;
/// The arguments at which the page compares `exp` on the GPU with PyTorch's.
pub const EXP_AT: [f32; 6] = [-20.0, -5.0, -1.0, 0.5, 1.0, 10.0];

/// Queries, keys and values drawn from `randn` after `manual_seed(seed)`, in that order.
///
/// # Shapes
/// Returns `q` `[.., queries, d]`, `k` and `v` `[.., keys, d]` for `q_shape`, `kv_shape`.
pub fn draw_qkv(seed: u64, q_shape: &[usize], kv_shape: &[usize]) -> [Tensor; 3] {
    manual_seed(seed);
    let q = randn(q_shape);
    let k = randn(kv_shape);
    let v = randn(kv_shape);
    [q, k, v]
}

/// The first program's two arrays of `len` floats, drawn from `randn` after
/// `manual_seed(seed)`.
///
/// # Shapes
/// Returns `a` and `b`, `[len]` each.
pub fn draw_arrays(seed: u64, len: usize) -> [Tensor; 2] {
    manual_seed(seed);
    let a = randn(&[len]);
    let b = randn(&[len]);
    [a, b]
}

/// Row-major copies of `q`, `k`, `v` and their sizes, as the kernels take them.
#[derive(Clone, Debug)]
pub struct HostInputs {
    /// `[heads, queries, d]`.
    pub q: Vec<f32>,
    /// `[heads, keys, d]`.
    pub k: Vec<f32>,
    /// `[heads, keys, d_v]`.
    pub v: Vec<f32>,
    /// The sizes, leading dims multiplied into `heads`.
    pub shape: AttentionShape,
}

impl HostInputs {
    /// Copies tensors into row-major buffers.
    ///
    /// # Shapes
    /// `q`: `[.., queries, d]`, `k`: `[.., keys, d]`, `v`: `[.., keys, d_v]`, the same
    /// leading dims.
    pub fn new(q: &Tensor, k: &Tensor, v: &Tensor) -> HostInputs {
        let heads = q.sizes()[..q.dim() - 2].iter().product();
        HostInputs {
            q: q.contiguous().to_vec(),
            k: k.contiguous().to_vec(),
            v: v.contiguous().to_vec(),
            shape: AttentionShape {
                heads,
                queries: q.size(-2),
                keys: k.size(-2),
                d: q.size(-1),
                d_v: v.size(-1),
            },
        }
    }

    /// The borrowed view the kernels take.
    pub fn inputs(&self) -> Inputs<'_> {
        Inputs {
            q: &self.q,
            k: &self.k,
            v: &self.v,
            shape: self.shape,
        }
    }
}

/// Chapter 9's FlashAttention on the CPU, the result every kernel is compared with.
///
/// # Shapes
/// As [`HostInputs::new`]; returns `out` `[heads · queries · d_v]`, `lse`
/// `[heads · queries]`, row-major.
pub fn cpu_attention(q: &Tensor, k: &Tensor, v: &Tensor, causal: bool) -> Outputs {
    let (out, lse) = flash_attention_lse(q, k, v, causal);
    Outputs {
        out: out.to_vec(),
        lse: lse.to_vec(),
    }
}
