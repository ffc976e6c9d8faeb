//! The weights kept as the file stores them, in quantised blocks, and each weight computed
//! from its block only when a product needs it.
//!
//! The float32 path dequantises the whole file once and then reads 538 MB of weights for
//! every new token. Here each matrix stays a list of blocks (20 bytes for 32 weights in
//! Q4_1, 34 in Q8_0), 92 MB in all. A product takes a few rows of a matrix at a time,
//! computes their weights from the blocks exactly as the loader does (`d·q + m`, the
//! same float32 operations), and adds the products in the order the float32 path adds
//! them. So every product, every logit and every token has the float32 path's bits, while
//! a decoding step reads six times fewer bytes of weights.
//!
//! - One row (a decoding step): the outputs a few rows of the matrix at a time, each with
//!   the order of chapter 14's one-row product (`shared::exact::row_dots_part`).
//! - Many rows (a prompt): a slab of rows of the matrix at a time, through the same
//!   product as the float32 path (each output's sum runs along the input features only,
//!   so cutting the matrix into slabs of outputs leaves every sum as it was).
//! - A prefill goes layer by layer: each layer dequantised into chapter 15's layer for the
//!   one pass over the prompt, then dropped.

use ch07_multihead_split::heads::split_heads;
use ch14_generation::KvCache;
use ch15_modern_layer::rope::{apply_rope, rope_tables};
use ch15_modern_layer::swiglu::SwiGLU;
use ch15_modern_layer::{Attention, Layer, Recipe};
use rayon::prelude::*;
use shared::nn::{Linear, RMSNorm};
use shared::{Tensor, cat, zeros};

use std::collections::HashMap;

use crate::config::{Architecture, Config};
use crate::error::LoadError;
use crate::gguf::{BLOCK, GgmlType, GgufFile, TensorInfo, q4_1_block, q8_0_block};
use crate::growing_cache::{GrowingCache, attend};
use crate::model::rms_norm;
use crate::unpermute::unpermute_rows;
use crate::weights::hf_name;

/// A weight matrix `[rows, cols]` as the file stores it: each row its own blocks.
#[derive(Clone, Debug)]
pub struct QuantMatrix {
    /// How the values are stored.
    pub ggml_type: GgmlType,
    /// Rows (output features).
    pub rows: usize,
    /// Columns (input features).
    pub cols: usize,
    /// The rows' bytes, one row after the other.
    bytes: Vec<u8>,
    /// The product of one row by this matrix: [`QuantMatrix::times_row`] (see
    /// [`OneRowProduct`]).
    one_row: OneRowProduct,
}

/// The product of one row by a matrix kept in blocks, `x·Wᵀ`: [`QuantMatrix::times_row`],
/// unless a version with the same bits is put in its place with
/// [`QuantModel::with_one_row_product`] (the timings of the appendix "Making it fast" put
/// a version in vector instructions there).
///
/// # Shapes
/// `x`: `[cols]`. Returns `[rows]`.
pub type OneRowProduct = fn(&QuantMatrix, &[f32]) -> Vec<f32>;

/// Rows dequantised together in a product of one row: a multiple of MKL's blocks of four
/// outputs, few enough that their weights (147 KB for 576 columns) stay in the cache.
const ROWS_PER_PASS: usize = 64;

/// Rows of the matrix per slab in a product of many rows.
const ROWS_PER_SLAB: usize = 1024;

impl QuantMatrix {
    /// A matrix of `rows` rows of `cols` values stored as `ggml_type`, from its bytes
    /// (`None` if they are not whole rows of whole blocks).
    ///
    /// # Shapes
    /// `bytes`: `rows` rows of `cols` values.
    pub fn new(
        ggml_type: GgmlType,
        rows: usize,
        cols: usize,
        bytes: Vec<u8>,
    ) -> Option<QuantMatrix> {
        let row_bytes = ggml_type.bytes_for(cols, "").ok()?;
        (bytes.len() == rows * row_bytes).then_some(QuantMatrix {
            ggml_type,
            rows,
            cols,
            bytes,
            one_row: QuantMatrix::times_row,
        })
    }

    /// The bytes of one row.
    fn row_bytes(&self) -> usize {
        self.bytes.len() / self.rows.max(1)
    }

    /// Row `i` as stored: its blocks, one after the other.
    ///
    /// # Shapes
    /// Returns the row's bytes (`cols / 32` blocks of 20 bytes in Q4_1, 34 in Q8_0).
    pub fn row(&self, i: usize) -> &[u8] {
        let n = self.row_bytes();
        &self.bytes[i * n..(i + 1) * n]
    }

    /// Row `i`'s weights, computed from its blocks as the loader computes them.
    ///
    /// # Shapes
    /// `out`: `[cols]` (overwritten).
    // ANCHOR: row_into
    pub fn row_into(&self, i: usize, out: &mut [f32]) {
        let row = self.row(i);
        match self.ggml_type {
            GgmlType::Q4_1 => {
                for (block, out) in
                    row.chunks_exact(20).zip(out.chunks_exact_mut(BLOCK))
                {
                    out.copy_from_slice(&q4_1_block(block));
                }
            }
            GgmlType::Q8_0 => {
                for (block, out) in
                    row.chunks_exact(34).zip(out.chunks_exact_mut(BLOCK))
                {
                    out.copy_from_slice(&q8_0_block(block));
                }
            }
            GgmlType::F16 => {
                for (b, out) in row.chunks_exact(2).zip(out.iter_mut()) {
                    *out = half::f16::from_le_bytes([b[0], b[1]]).to_f32();
                }
            }
            GgmlType::F32 => {
                for (b, out) in row.chunks_exact(4).zip(out.iter_mut()) {
                    *out = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
        }
    }
    // ANCHOR_END: row_into

    /// Rows `first..first + count`, dequantised, as a `[count, cols]` tensor.
    ///
    /// # Shapes
    /// Returns `[count, cols]`.
    pub fn rows_tensor(&self, first: usize, count: usize) -> Tensor {
        let mut values = vec![0.0f32; count * self.cols];
        for (i, out) in values.chunks_exact_mut(self.cols.max(1)).enumerate() {
            self.row_into(first + i, out);
        }
        Tensor::from_vec(values, &[count, self.cols])
    }

    /// The whole matrix, dequantised.
    ///
    /// # Shapes
    /// Returns `[rows, cols]`.
    pub fn dequantised(&self) -> Tensor {
        self.rows_tensor(0, self.rows)
    }

    /// `x·Wᵀ` for one row `x`: each output's weights computed from their blocks, a few rows
    /// at a time, then added as the float32 path's one-row product adds them.
    ///
    /// # Shapes
    /// `x`: `[cols]`. Returns `[rows]`.
    // ANCHOR: times_row
    pub fn times_row(&self, x: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0f32; self.rows];
        out.par_chunks_mut(ROWS_PER_PASS).enumerate().for_each_init(
            Vec::new,
            |weights, (pass, out)| {
                let first = pass * ROWS_PER_PASS;
                weights.resize(out.len() * self.cols, 0.0);
                for (i, row) in weights.chunks_exact_mut(self.cols.max(1)).enumerate()
                {
                    self.row_into(first + i, row);
                }
                // Output `first + i` of `rows`, in the order the float32 product gives it.
                shared::exact::row_dots_part(weights, x, first, out, self.rows);
            },
        );
        out
    }
    // ANCHOR_END: times_row

    /// `x·Wᵀ` over the last dim of `x`, as `Linear::forward` computes it with the
    /// dequantised weight: one row by [`QuantMatrix::times_row`] (or the version put in its
    /// place), many rows a slab of the matrix at a time.
    ///
    /// # Shapes
    /// `x`: `[.., cols]`. Returns `[.., rows]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let mut shape = x.sizes().to_vec();
        *shape.last_mut().expect("at least one dim") = self.rows;
        if x.numel() == self.cols {
            return Tensor::from_vec((self.one_row)(self, &x.to_vec()), &shape);
        }
        let slabs: Vec<Tensor> = (0..self.rows)
            .step_by(ROWS_PER_SLAB)
            .map(|first| {
                let count = ROWS_PER_SLAB.min(self.rows - first);
                x.matmul(&self.rows_tensor(first, count).t())
            })
            .collect();
        let slabs: Vec<&Tensor> = slabs.iter().collect();
        cat(&slabs, -1).reshape(shape.as_slice())
    }

    /// The bytes the matrix takes.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
}

/// Chapter 15's layer with its seven matrices kept quantised.
pub struct QuantLayer {
    /// The RMSNorm before attention.
    pub attn_norm: RMSNorm,
    /// Chapter 15's attention for its sizes, QK-norm and rules; its four projections are
    /// the quantised matrices below (here `[0, d_model]`, empty).
    pub attn: Attention,
    /// `W_q`, `W_k` (rows in the half-split order), `W_v`, `W_o`.
    pub w_query: QuantMatrix,
    /// See `w_query`.
    pub w_key: QuantMatrix,
    /// See `w_query`.
    pub w_value: QuantMatrix,
    /// See `w_query`.
    pub out_proj: QuantMatrix,
    /// The RMSNorm before the feed-forward.
    pub ffn_norm: RMSNorm,
    /// SwiGLU's `W_gate`, `W_up`, `W_down`.
    pub w_gate: QuantMatrix,
    /// See `w_gate`.
    pub w_up: QuantMatrix,
    /// See `w_gate`.
    pub w_down: QuantMatrix,
}

impl QuantLayer {
    /// Chapter 15's layer with these weights dequantised (for one pass over a prompt).
    pub fn dequantised(&self) -> Layer {
        let linear = |m: &QuantMatrix| Linear::from_parameters(m.dequantised(), None);
        let a = &self.attn;
        Layer {
            attn_norm: self.attn_norm.clone(),
            attn: Attention {
                n_heads: a.n_heads,
                n_kv_heads: a.n_kv_heads,
                head_dim: a.head_dim,
                w_query: linear(&self.w_query),
                w_key: linear(&self.w_key),
                w_value: linear(&self.w_value),
                out_proj: linear(&self.out_proj),
                qk_norm: a.qk_norm.clone(),
                sinks: a.sinks.clone(),
                w_gate: None, // no output gate (chapter 20's recipe)
            },
            ffn_norm: self.ffn_norm.clone(),
            ffn: SwiGLU {
                w_gate: linear(&self.w_gate),
                w_up: linear(&self.w_up),
                w_down: linear(&self.w_down),
            },
        }
    }

    /// Chapter 15's `Attention::qkv` for one new token, its projections read from the
    /// blocks.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`. Returns q `[batch, n_heads, 1, head_dim]`, k and v
    /// `[batch, n_kv_heads, 1, head_dim]`.
    fn qkv(
        &self,
        x_new: &Tensor,
        position: usize,
        recipe: &Recipe,
    ) -> (Tensor, Tensor, Tensor) {
        let a = &self.attn;
        let mut q = split_heads(&self.w_query.forward(x_new), a.n_heads);
        let mut k = split_heads(&self.w_key.forward(x_new), a.n_kv_heads);
        let v = split_heads(&self.w_value.forward(x_new), a.n_kv_heads);
        if let Some((q_norm, k_norm)) = &a.qk_norm
            && recipe.qk_norm
        {
            (q, k) = (q_norm.forward(&q), k_norm.forward(&k));
        }
        let (cos, sin) = rope_tables(
            &[position],
            a.head_dim,
            recipe.theta,
            recipe.llama31_scaling,
        );
        (apply_rope(&q, &cos, &sin), apply_rope(&k, &cos, &sin), v)
    }

    /// The layer for one new token at `position`, over its cache grown in place: the
    /// growing cache's step, its products reading the blocks.
    ///
    /// # Shapes
    /// `x_new`: `[batch, 1, d_model]`. Returns `[batch, 1, d_model]`.
    // ANCHOR: layer_step
    pub fn step(
        &self,
        x_new: &Tensor,
        position: usize,
        cache: &mut GrowingCache,
        recipe: &Recipe,
    ) -> Tensor {
        let attn_in = self.attn_norm.forward(x_new);
        let (q, k, v) = self.qkv(&attn_in, position, recipe);
        let heads = attend(&self.attn, &q, &k, &v, cache, recipe);
        let h = x_new + self.out_proj.forward(&heads);
        let ffn_in = self.ffn_norm.forward(&h);
        let gate = self.w_gate.forward(&ffn_in).silu();
        &h + self.w_down.forward(&(gate * self.w_up.forward(&ffn_in)))
    }
    // ANCHOR_END: layer_step
}

/// Chapter 15's model with its matrices kept quantised.
pub struct QuantModel {
    /// The token embedding `[vocab_size, d_model]`, quantised.
    pub embedding: QuantMatrix,
    /// The layers.
    pub layers: Vec<QuantLayer>,
    /// The final RMSNorm.
    pub final_norm: RMSNorm,
    /// The output head `[vocab_size, d_model]`, or `None` when it is the embedding (tied).
    pub lm_head: Option<QuantMatrix>,
}

impl QuantModel {
    /// The output head: its own matrix, or the embedding's.
    pub fn head(&self) -> &QuantMatrix {
        self.lm_head.as_ref().unwrap_or(&self.embedding)
    }

    /// The embeddings of `ids`: their rows of the embedding, dequantised.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, d_model]`.
    pub fn embed(&self, ids: &Tensor<i64>) -> Tensor {
        let d = self.embedding.cols;
        let shape = [ids.size(0), ids.size(1), d];
        let ids = ids.to_vec();
        let mut values = vec![0.0f32; ids.len() * d];
        for (&id, out) in ids.iter().zip(values.chunks_exact_mut(d.max(1))) {
            self.embedding.row_into(id as usize, out);
        }
        Tensor::from_vec(values, &shape)
    }

    /// The prefill of [`generate::prefill`](crate::generate::prefill): the prompt through
    /// each layer dequantised for the pass, every layer's cache, the last position's logits
    /// (from the last two positions, as there).
    ///
    /// # Shapes
    /// `ids`: `[1, tokens]`. Returns `[1, vocab_size]` and one cache per layer.
    pub fn prefill(
        &self,
        ids: &Tensor<i64>,
        recipe: &Recipe,
    ) -> (Tensor, Vec<KvCache>) {
        let mut x = self.embed(ids);
        let mut caches = Vec::with_capacity(self.layers.len());
        for (i, layer) in self.layers.iter().enumerate() {
            let cache;
            (x, cache) = layer.dequantised().forward(&x, recipe, recipe.window_of(i));
            caches.push(cache);
        }
        let x = self.final_norm.forward(&x);
        let rows = x.size(1).min(2);
        let last = x.narrow(1, x.size(1) - rows, rows);
        (self.head().forward(&last).select(1, -1), caches)
    }

    /// The logits of one new token at `position`, over caches grown in place.
    ///
    /// # Shapes
    /// `token`: `[1, 1]`. Returns `[1, vocab_size]`.
    pub fn step(
        &self,
        token: &Tensor<i64>,
        position: usize,
        caches: &mut [GrowingCache],
        recipe: &Recipe,
    ) -> Tensor {
        let mut x = self.embed(token);
        for (layer, cache) in self.layers.iter().zip(caches.iter_mut()) {
            x = layer.step(&x, position, cache, recipe);
        }
        self.head()
            .forward(&self.final_norm.forward(&x))
            .select(1, -1)
    }

    /// The model with `product` in place of [`QuantMatrix::times_row`] for every
    /// matrix's one-row products; the product must give its bits (the caller's promise).
    pub fn with_one_row_product(mut self, product: OneRowProduct) -> Self {
        for l in &mut self.layers {
            for m in [
                &mut l.w_query,
                &mut l.w_key,
                &mut l.w_value,
                &mut l.out_proj,
                &mut l.w_gate,
                &mut l.w_up,
                &mut l.w_down,
            ] {
                m.one_row = product;
            }
        }
        self.embedding.one_row = product;
        if let Some(head) = &mut self.lm_head {
            head.one_row = product;
        }
        self
    }

    /// The bytes of all the matrices as they are kept.
    pub fn size_in_bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| {
                [
                    &l.w_query,
                    &l.w_key,
                    &l.w_value,
                    &l.out_proj,
                    &l.w_gate,
                    &l.w_up,
                    &l.w_down,
                ]
                .iter()
                .map(|m| m.size_in_bytes())
                .sum::<usize>()
            })
            .sum();
        layers
            + self.embedding.size_in_bytes()
            + self.lm_head.as_ref().map_or(0, QuantMatrix::size_in_bytes)
    }
}

/// The quantised model of a GGUF file: the matrices' blocks kept as they are (the rows of
/// `W_q` and `W_k` put in the half-split order, as the float32 loader puts them), the
/// norms as float32.
pub fn from_gguf(file: &GgufFile, config: &Config) -> Result<QuantModel, LoadError> {
    let mut stored = Stored {
        file,
        config,
        infos: HashMap::new(),
    };
    for info in &file.tensors {
        let name = hf_name(&info.name).ok_or_else(|| LoadError::Unsupported {
            path: file.path.clone(),
            field: "tensor".into(),
            value: info.name.clone(),
        })?;
        stored.infos.insert(name, info);
    }
    let Config {
        vocab_size: v,
        d_model: d,
        n_heads: h,
        n_kv_heads: kv,
        head_dim: hd,
        d_ff,
        ..
    } = *config;
    let embedding = stored.matrix("model.embed_tokens.weight", [v, d], None)?;
    let lm_head = if config.tied_embeddings {
        None
    } else {
        Some(stored.matrix("lm_head.weight", [v, d], None)?)
    };
    let mut layers = Vec::with_capacity(config.n_layers);
    for i in 0..config.n_layers {
        let name = |n: &str| format!("model.layers.{i}.{n}");
        let qk_norm = if config.architecture == Architecture::Qwen3 {
            Some((
                stored.norm(&name("self_attn.q_norm.weight"), hd)?,
                stored.norm(&name("self_attn.k_norm.weight"), hd)?,
            ))
        } else {
            None
        };
        let empty = || Linear::from_parameters(zeros(&[0, d]), None);
        layers.push(QuantLayer {
            attn_norm: stored.norm(&name("input_layernorm.weight"), d)?,
            attn: Attention {
                n_heads: h,
                n_kv_heads: kv,
                head_dim: hd,
                w_query: empty(),
                w_key: empty(),
                w_value: empty(),
                out_proj: empty(),
                qk_norm,
                sinks: None,
                w_gate: None,
            },
            w_query: stored.matrix(
                &name("self_attn.q_proj.weight"),
                [h * hd, d],
                Some(h),
            )?,
            w_key: stored.matrix(
                &name("self_attn.k_proj.weight"),
                [kv * hd, d],
                Some(kv),
            )?,
            w_value: stored.matrix(
                &name("self_attn.v_proj.weight"),
                [kv * hd, d],
                None,
            )?,
            out_proj: stored.matrix(
                &name("self_attn.o_proj.weight"),
                [d, h * hd],
                None,
            )?,
            ffn_norm: stored.norm(&name("post_attention_layernorm.weight"), d)?,
            w_gate: stored.matrix(&name("mlp.gate_proj.weight"), [d_ff, d], None)?,
            w_up: stored.matrix(&name("mlp.up_proj.weight"), [d_ff, d], None)?,
            w_down: stored.matrix(&name("mlp.down_proj.weight"), [d, d_ff], None)?,
        });
    }
    let final_norm = stored.norm("model.norm.weight", d)?;
    // A tied checkpoint may still store the head: the embedding's numbers.
    if config.tied_embeddings {
        stored.infos.remove("lm_head.weight");
    }
    let mut extra: Vec<&String> = stored.infos.keys().collect();
    extra.sort();
    if let Some(extra) = extra.first() {
        return Err(LoadError::Unsupported {
            path: file.path.clone(),
            field: "tensor".into(),
            value: format!("{extra} (not part of the configuration)"),
        });
    }
    Ok(QuantModel {
        embedding,
        layers,
        final_norm,
        lm_head,
    })
}

/// A GGUF file's tensors not taken yet, under transformers' names.
struct Stored<'a> {
    file: &'a GgufFile,
    config: &'a Config,
    infos: HashMap<String, &'a TensorInfo>,
}

impl Stored<'_> {
    /// Removes the tensor `name`, checking its shape.
    fn take(
        &mut self,
        name: &str,
        shape: &[usize],
    ) -> Result<&TensorInfo, LoadError> {
        let info =
            self.infos
                .remove(name)
                .ok_or_else(|| LoadError::MissingTensor {
                    path: self.file.path.clone(),
                    name: name.to_string(),
                })?;
        if info.shape != shape {
            return Err(LoadError::Shape {
                tensor: name.to_string(),
                detail: format!(
                    "has shape {:?}, the configuration needs {shape:?}",
                    info.shape
                ),
            });
        }
        Ok(info)
    }

    /// The matrix `name` as stored; with `heads`, its rows un-permuted (`W_q`, `W_k`).
    fn matrix(
        &mut self,
        name: &str,
        [rows, cols]: [usize; 2],
        heads: Option<usize>,
    ) -> Result<QuantMatrix, LoadError> {
        let (file, head_dim) = (self.file, self.config.head_dim);
        let info = self.take(name, &[rows, cols])?;
        let mut bytes = file.tensor_bytes(info)?.to_vec();
        if let Some(heads) = heads {
            let row_bytes = bytes.len() / rows.max(1);
            bytes = unpermute_rows(&bytes, heads, head_dim, row_bytes);
        }
        QuantMatrix::new(info.ggml_type, rows, cols, bytes).ok_or_else(|| {
            LoadError::Shape {
                tensor: info.name.clone(),
                detail: format!(
                    "{cols} columns are not whole {:?} blocks",
                    info.ggml_type
                ),
            }
        })
    }

    /// The RMSNorm of the weight `name`, float32.
    fn norm(&mut self, name: &str, size: usize) -> Result<RMSNorm, LoadError> {
        let (file, eps) = (self.file, self.config.rms_norm_eps);
        let info = self.take(name, &[size])?;
        let (values, shape) = file.tensor(&info.name)?;
        Ok(rms_norm(Tensor::from_vec(values, &shape), eps))
    }
}
