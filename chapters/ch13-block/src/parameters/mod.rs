//! How many numbers a block learns: listed from the modules themselves (as PyTorch's
//! `named_parameters()`), and counted from `d_model` alone with a formula, which is how one
//! sizes GPT-2 small (`d_model = 768`) without drawing its 7 million weights.

use ch07_multihead_split::multihead::MultiHeadAttention;
use shared::Tensor;
use shared::nn::{LayerNorm, Linear};

use crate::block::TransformerBlock;
use crate::mlp::Mlp;

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/attention_parameter_count.rs"
)]
mod attention;
pub use attention::attention_parameter_count;

#[cfg_attr(
    feature = "exercise",
    path = "../../exercises/model_parameter_count.rs"
)]
mod model;
pub use model::model_parameter_count;

/// The sizes of a whole GPT-style model: token and position embeddings, `n_layers` blocks,
/// a final layer norm and the output head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelShape {
    /// Rows of the token embedding (and of the output head).
    pub vocab_size: usize,
    /// Rows of the position embedding.
    pub context_length: usize,
    /// The width of every token's vector.
    pub d_model: usize,
    /// How many blocks.
    pub n_layers: usize,
    /// Whether every `Linear` and every layer norm has a bias (GPT-2: yes; many models
    /// since: no).
    pub bias: bool,
    /// Whether the output head reuses the token embedding's matrix (GPT-2: yes) instead of
    /// a `[vocab_size, d_model]` matrix of its own.
    pub tied_output: bool,
}

/// GPT-2 small: 50 257 tokens, 1024 positions, 768 features, 12 blocks, biases, the output
/// tied to the token embedding.
pub const GPT2_SMALL: ModelShape = ModelShape {
    vocab_size: 50_257,
    context_length: 1024,
    d_model: 768,
    n_layers: 12,
    bias: true,
    tied_output: true,
};

/// A module's parameters with PyTorch's dotted names (`attn.W_query.weight`), in the order
/// `named_parameters()` lists them: the order the module's parts were declared.
pub type Named<'a> = Vec<(String, &'a Tensor)>;

/// Prefixes every name with `prefix.`.
fn under<'a>(prefix: &str, params: Named<'a>) -> Named<'a> {
    params
        .into_iter()
        .map(|(name, p)| (format!("{prefix}.{name}"), p))
        .collect()
}

/// `weight`, then `bias` if there is one.
fn weight_and_bias<'a>(
    weight: Option<&'a Tensor>,
    bias: Option<&'a Tensor>,
) -> Named<'a> {
    let weight = weight.map(|w| ("weight".to_string(), w));
    let bias = bias.map(|b| ("bias".to_string(), b));
    weight.into_iter().chain(bias).collect()
}

fn linear(layer: &Linear) -> Named<'_> {
    weight_and_bias(Some(&layer.weight), layer.bias.as_ref())
}

/// A layer norm's `weight` and `bias` (when it has them).
pub fn layer_norm_parameters(layer: &LayerNorm) -> Named<'_> {
    weight_and_bias(layer.weight.as_ref(), layer.bias.as_ref())
}

/// Chapter 7's attention: `W_query`, `W_key`, `W_value`, `out_proj` (the causal mask is a
/// buffer, not a parameter: it is never trained).
pub fn attention_parameters(attn: &MultiHeadAttention) -> Named<'_> {
    [
        ("W_query", &attn.w_query),
        ("W_key", &attn.w_key),
        ("W_value", &attn.w_value),
        ("out_proj", &attn.out_proj),
    ]
    .into_iter()
    .flat_map(|(name, layer)| under(name, linear(layer)))
    .collect()
}

/// The MLP's `c_fc` and `c_proj`.
pub fn mlp_parameters(mlp: &Mlp) -> Named<'_> {
    let c_fc = under("c_fc", linear(&mlp.c_fc));
    c_fc.into_iter()
        .chain(under("c_proj", linear(&mlp.c_proj)))
        .collect()
}

/// `block.named_parameters()`: `ln_1`, `attn`, `ln_2`, `mlp`.
// ANCHOR: block_parameters
pub fn block_parameters(block: &TransformerBlock) -> Named<'_> {
    let mut all = under("ln_1", layer_norm_parameters(&block.ln_1));
    all.extend(under("attn", attention_parameters(&block.attn)));
    all.extend(under("ln_2", layer_norm_parameters(&block.ln_2)));
    all.extend(under("mlp", mlp_parameters(&block.mlp)));
    all
}

/// `sum(p.numel() for p in module.parameters())`.
pub fn count(params: &Named<'_>) -> usize {
    params.iter().map(|(_, p)| p.numel()).sum()
}
// ANCHOR_END: block_parameters

/// A layer norm's weight and bias: `2·d`.
pub fn layer_norm_parameter_count(d_model: usize) -> usize {
    2 * d_model
}

/// GPT-2's MLP: `c_fc` `4d·d + 4d`, `c_proj` `d·4d + d`, so `8d² + 5d`.
pub fn mlp_parameter_count(d_model: usize) -> usize {
    let hidden = 4 * d_model;
    (d_model * hidden + hidden) + (hidden * d_model + d_model)
}

/// A whole GPT-2 block: two layer norms, attention with query/key/value biases, the MLP.
// ANCHOR: block_parameter_count
pub fn block_parameter_count(d_model: usize) -> usize {
    2 * layer_norm_parameter_count(d_model)
        + attention_parameter_count(d_model, true)
        + mlp_parameter_count(d_model)
}
// ANCHOR_END: block_parameter_count
