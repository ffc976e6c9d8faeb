//! Multi-head latent attention (DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and
//! Efficient Mixture-of-Experts Language Model"), in its two orders.
//!
//! Every token is compressed to a latent `c = RMSNorm(W_DKV x)` of `latent_dim` values,
//! plus one RoPE key `k_pe` of `rope_dim` values that all heads share. Head `h`'s key is
//! `[W_UK,h c ; k_pe]` and its value `W_UV,h c`; its query is `[q_nope ; RoPE(q_pe)]`.
//!
//! - The **naive** path expands every latent into every head's key and value and runs
//!   ordinary attention: `score = q_nope·(W_UK c) + q_pe·k_pe`.
//! - The **absorbed** path folds `W_UK` into the query and `W_UV` into the output:
//!   `score = (q_nope W_UK)·c + q_pe·k_pe`, `out_h = (Σ_t w_t c_t) W_UVᵀ`. The cache holds
//!   only `c` and `k_pe`, and no latent is ever expanded.
//!
//! The two are equal as formulas (matrix products associate) but add their numbers in
//! different orders, so their float32 results differ in the last digits.
//!
//! The layout follows DeepSeek-V3's reference `MLA` (no query compression): `wq`,
//! `wkv_a` (the latent and the RoPE key in one projection), `kv_norm`, `wkv_b` (every
//! head's `W_UK` and `W_UV` rows, `[heads · (nope + v), latent]`), `wo`.

use ch07_multihead_split::heads::{merge_heads, split_heads};
use ch15_modern_layer::rope::{apply_rope, rope_tables};
use shared::nn::{Linear, RMSNorm};
use shared::{Tensor, cat};

use crate::absorbed_scores::absorbed_scores;

/// The sizes of an [`Mla`] layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MlaConfig {
    /// The width of the residual stream.
    pub d_model: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Per head: the query/key features without position (`qk_nope_head_dim`).
    pub nope_dim: usize,
    /// Per head: the rotated query features, and the shared RoPE key's (`qk_rope_head_dim`).
    pub rope_dim: usize,
    /// Per head: the value features (`v_head_dim`).
    pub v_dim: usize,
    /// The latent's width (`kv_lora_rank`).
    pub latent_dim: usize,
}

/// RoPE's base, and the latent norm's epsilon.
const THETA: f64 = 10_000.0;
const EPS: f64 = 1e-6;

/// One MLA attention layer.
// ANCHOR: mla_struct
pub struct Mla {
    /// The sizes.
    pub config: MlaConfig,
    /// `[n_heads · (nope_dim + rope_dim), d_model]`: the queries.
    pub wq: Linear,
    /// `[latent_dim + rope_dim, d_model]`: the raw latent and the RoPE key.
    pub wkv_a: Linear,
    /// The latent's RMSNorm.
    pub kv_norm: RMSNorm,
    /// `[n_heads · (nope_dim + v_dim), latent_dim]`: per head, `W_UK` then `W_UV`.
    pub wkv_b: Linear,
    /// `[d_model, n_heads · v_dim]`: mixes the heads.
    pub wo: Linear,
}
// ANCHOR_END: mla_struct

/// What the absorbed path caches per token: the normalised latent and the rotated key.
#[derive(Clone, Debug)]
pub struct LatentCache {
    /// `[batch, cached, latent_dim]`.
    pub latent: Tensor,
    /// `[batch, cached, rope_dim]`.
    pub rope_key: Tensor,
}

impl Mla {
    /// Draws `wq`, `wkv_a`, `wkv_b`, `wo` (as `nn.Linear`, no bias) in that order from
    /// the default generator.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens, d_model]`.
    pub fn new(config: MlaConfig) -> Mla {
        let MlaConfig {
            d_model,
            n_heads,
            nope_dim,
            rope_dim,
            v_dim,
            latent_dim,
        } = config;
        Mla {
            config,
            wq: Linear::new(d_model, n_heads * (nope_dim + rope_dim), false),
            wkv_a: Linear::new(d_model, latent_dim + rope_dim, false),
            kv_norm: RMSNorm::with_options(&[latent_dim], Some(EPS), true),
            wkv_b: Linear::new(latent_dim, n_heads * (nope_dim + v_dim), false),
            wo: Linear::new(n_heads * v_dim, d_model, false),
        }
    }

    fn scale(&self) -> f32 {
        (1.0 / ((self.config.nope_dim + self.config.rope_dim) as f64).sqrt()) as f32
    }

    /// Every head's query, split into its part without position and its rotated part.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, n_heads, tokens, nope_dim]` and
    /// `[batch, n_heads, tokens, rope_dim]`.
    fn queries(&self, x: &Tensor, positions: &[usize]) -> (Tensor, Tensor) {
        let c = self.config;
        let q = split_heads(&self.wq.forward(x), c.n_heads);
        let (cos, sin) = rope_tables(positions, c.rope_dim, THETA, false);
        (
            q.narrow(3, 0, c.nope_dim),
            apply_rope(&q.narrow(3, c.nope_dim, c.rope_dim), &cos, &sin),
        )
    }

    /// Every token's latent (normalised) and its rotated key, what the cache keeps.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, latent_dim]` and
    /// `[batch, tokens, rope_dim]`.
    // ANCHOR: compress
    pub fn compress(&self, x: &Tensor, positions: &[usize]) -> LatentCache {
        let c = self.config;
        let kv = self.wkv_a.forward(x);
        let (cos, sin) = rope_tables(positions, c.rope_dim, THETA, false);
        LatentCache {
            latent: self.kv_norm.forward(&kv.narrow(2, 0, c.latent_dim)),
            rope_key: apply_rope(&kv.narrow(2, c.latent_dim, c.rope_dim), &cos, &sin),
        }
    }
    // ANCHOR_END: compress

    /// The naive path over a whole sequence at positions `0..tokens`, causal: every latent
    /// expanded to every head's key and value, then attention as usual.
    ///
    /// # Shapes
    /// `x`: `[batch, tokens, d_model]`. Returns `[batch, tokens, d_model]`.
    // ANCHOR: naive
    pub fn forward_naive(&self, x: &Tensor) -> Tensor {
        let c = self.config;
        let t = x.size(1);
        let positions: Vec<usize> = (0..t).collect();
        let (q_nope, q_pe) = self.queries(x, &positions);
        let cache = self.compress(x, &positions);
        let kv = split_heads(&self.wkv_b.forward(&cache.latent), c.n_heads);
        let (k_nope, v) = (
            kv.narrow(3, 0, c.nope_dim),
            kv.narrow(3, c.nope_dim, c.v_dim),
        );
        let k_pe =
            cache
                .rope_key
                .unsqueeze(1)
                .expand([x.size(0), c.n_heads, t, c.rope_dim]);
        let q = cat(&[&q_nope, &q_pe], -1);
        let k = cat(&[&k_nope, &k_pe], -1);
        let mut scores = q.matmul(&k.transpose(2, 3)) * self.scale();
        let future = Tensor::<bool>::from_vec(
            (0..t).flat_map(|i| (0..t).map(move |j| j > i)).collect(),
            &[t, t],
        );
        scores.masked_fill_(&future, f32::NEG_INFINITY);
        let context = scores.softmax(-1).matmul(&v);
        self.wo.forward(&merge_heads(&context))
    }
    // ANCHOR_END: naive

    /// The absorbed path for one new token at `position`: its latent and rotated key
    /// appended to the cache, `W_UK` folded into its query, the weights applied to the
    /// latents, then `W_UV`.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]`.
    // ANCHOR: absorbed
    pub fn step_absorbed(
        &self,
        x_new: &Tensor,
        position: usize,
        cache: &mut Option<LatentCache>,
    ) -> Tensor {
        let c = self.config;
        let (q_nope, q_pe) = self.queries(x_new, &[position]);
        let new = self.compress(x_new, &[position]);
        let cached = match cache.take() {
            Some(old) => LatentCache {
                latent: cat(&[&old.latent, &new.latent], 1),
                rope_key: cat(&[&old.rope_key, &new.rope_key], 1),
            },
            None => new,
        };
        // wkv_b's rows per head: W_UK [nope_dim, latent_dim], W_UV [v_dim, latent_dim]
        let w =
            self.wkv_b
                .weight
                .view([c.n_heads, c.nope_dim + c.v_dim, c.latent_dim]);
        let (w_uk, w_uv) =
            (w.narrow(1, 0, c.nope_dim), w.narrow(1, c.nope_dim, c.v_dim));
        let scores = absorbed_scores(
            &q_nope,
            &q_pe,
            &w_uk,
            &cached.latent,
            &cached.rope_key,
            self.scale(),
        );
        let latent = cached.latent.unsqueeze(1); // [b, 1, cached, latent_dim]
        let mixed = scores.softmax(-1).matmul(&latent); // [b, heads, 1, latent_dim]
        let context = mixed.matmul(&w_uv.transpose(1, 2)); // [b, heads, 1, v_dim]
        *cache = Some(cached);
        self.wo.forward(&merge_heads(&context))
    }
    // ANCHOR_END: absorbed
}
