//! The chapter's two models, the same size, built from the course's layers: [`gpt2`]
//! (chapter 13's block as nanoGPT writes it) and [`llama`] (chapter 15's layer), and their
//! initialisation ([`init`]).
//!
//! Both read token ids and return one logit per vocabulary entry at every position, and
//! both reuse the token table as the output head ("tied embeddings", Press and Wolf,
//! 2017): the logit of token `t` is the dot product of the final vector with `t`'s own
//! embedding, which saves `vocab_size × d_model` parameters.

pub mod gpt2;
pub mod init;
pub mod llama;

use shared::Tensor;

use crate::config::{Arch, Config};

pub use gpt2::Gpt2;
pub use llama::Llama;

/// Either architecture, built from one [`Config`].
pub enum Model {
    /// The GPT-2 model.
    Gpt2(Box<Gpt2>),
    /// The Llama model.
    Llama(Box<Llama>),
}

impl Model {
    /// Builds `arch` of size `config` and initialises it as nanoGPT does, drawing from the
    /// default generator.
    ///
    /// # Shapes
    /// Inputs of `[batch, tokens]` ids with `tokens <= config.context`.
    pub fn new(arch: Arch, config: &Config) -> shared::Result<Model> {
        config.check()?;
        Ok(match arch {
            Arch::Gpt2 => Model::Gpt2(Box::new(Gpt2::new(config))),
            Arch::Llama => Model::Llama(Box::new(Llama::new(config))),
        })
    }

    /// The logits of every position.
    ///
    /// # Shapes
    /// `ids`: `[batch, tokens]`. Returns `[batch, tokens, vocab_size]`.
    pub fn forward(&self, ids: &Tensor<i64>) -> Tensor {
        match self {
            Model::Gpt2(m) => m.forward_with_tape(ids).0,
            Model::Llama(m) => m.forward_with_tape(ids).0,
        }
    }

    /// Every parameter with its name, in `named_parameters()` order.
    pub fn named_parameters(&self) -> Vec<(String, &Tensor)> {
        match self {
            Model::Gpt2(m) => m.named_parameters(),
            Model::Llama(m) => m.named_parameters(),
        }
    }

    /// Every parameter, mutable, in `named_parameters()` order.
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        match self {
            Model::Gpt2(m) => m.parameters_mut(),
            Model::Llama(m) => m.parameters_mut(),
        }
    }

    /// The longest sequence the model reads: its position table's length (GPT-2), the
    /// context it was built for (Llama).
    pub fn context(&self) -> usize {
        match self {
            Model::Gpt2(m) => m.wpe.weight.size(0),
            Model::Llama(m) => m.context,
        }
    }

    /// Checks that `context` tokens fit the model.
    pub fn check_context(&self, context: usize) -> shared::Result<()> {
        if context > self.context() {
            return Err(shared::Error::InvalidArgument {
                op: "forward",
                detail: format!(
                    "a context of {context} tokens is longer than the model's {}",
                    self.context()
                ),
            });
        }
        Ok(())
    }

    /// The architecture.
    pub fn arch(&self) -> Arch {
        match self {
            Model::Gpt2(_) => Arch::Gpt2,
            Model::Llama(_) => Arch::Llama,
        }
    }
}

/// The tied head: `x · tableᵀ`, every position's vector against every token's embedding.
///
/// # Shapes
/// `x`: `[.., d_model]`, `table`: `[vocab_size, d_model]`. Returns `[.., vocab_size]`.
// ANCHOR: tied_head
pub fn tied_head(x: &Tensor, table: &Tensor) -> Tensor {
    x.matmul(&table.t())
}
// ANCHOR_END: tied_head
