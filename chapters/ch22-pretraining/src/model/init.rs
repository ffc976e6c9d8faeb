//! nanoGPT's initialisation: every matrix from a normal distribution of standard deviation
//! 0.02, the matrices that write into the residual stream with `0.02/√(2·n_layers)`
//! instead, the norms' weights ones.
//!
//! A freshly built layer holds PyTorch's default draws (`nn.Linear`'s uniform, the
//! embeddings' standard normal); the model then draws every matrix again, in
//! `named_parameters()` order, from the same generator, as nanoGPT's `_init_weights`.

use shared::Tensor;

use crate::config::Config;

/// Whether a parameter's name is a projection that adds into the residual stream: the
/// attention's `out_proj`, GPT-2's `c_proj`, SwiGLU's `w_down`.
pub fn writes_to_stream(name: &str) -> bool {
    ["out_proj.weight", "c_proj.weight", "w_down.weight"]
        .iter()
        .any(|end| name.ends_with(end))
}

/// Draws every matrix of `named` again, in order: normal(0, 0.02), or
/// [`Config::residual_std`] for those that write into the stream. Vectors (the norms'
/// weights) keep their ones.
///
/// # Shapes
/// `named`: the names and the tensors of `named_parameters()`, in order.
// ANCHOR: init
pub fn init_weights(config: &Config, named: Vec<(String, &mut Tensor)>) {
    for (name, p) in named {
        if p.dim() < 2 {
            continue;
        }
        let std = if writes_to_stream(&name) {
            config.residual_std()
        } else {
            0.02
        };
        p.normal_(0.0, std);
    }
}
// ANCHOR_END: init
