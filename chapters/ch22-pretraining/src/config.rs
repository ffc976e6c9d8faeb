//! The sizes of a model and of its training batches, one value for the whole chapter.
//!
//! nanoGPT's "baby GPT" for a CPU is the budget: 4 layers of 4 heads, 128 features per
//! token, a context of 64 characters, 12 sequences per step. Both architectures of the
//! chapter take the same sizes, so they have nearly the same number of parameters and cost
//! nearly the same per step.

use std::fmt;

/// Which model a [`Config`] builds (`--arch gpt2|llama` on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Arch {
    /// GPT-2 as nanoGPT writes it: LayerNorm, GELU MLP, learned positions.
    Gpt2,
    /// Llama: RMSNorm, SwiGLU, RoPE.
    Llama,
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arch::Gpt2 => "gpt2",
            Arch::Llama => "llama",
        })
    }
}

/// How a run cuts the text into tokens (`--tokenizer char|bpe` on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tokenizer {
    /// One token per character (nanoGPT's `shakespeare_char`).
    Char,
    /// The chapter's byte-pair encoding of 512 tokens.
    Bpe,
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tokenizer::Char => "characters",
            Tokenizer::Bpe => "byte-pair encoding",
        })
    }
}

/// The sizes of a model and of a training batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// ANCHOR: config
pub struct Config {
    /// Token ids `0..vocab_size`.
    pub vocab_size: usize,
    /// The longest sequence the model reads (nanoGPT's `block_size`).
    pub context: usize,
    /// Features per token in the residual stream.
    pub d_model: usize,
    /// Blocks (GPT-2) or layers (Llama).
    pub n_layers: usize,
    /// Attention heads per block.
    pub n_heads: usize,
    /// Sequences per training step.
    pub batch: usize,
}
// ANCHOR_END: config

impl Config {
    /// nanoGPT's baby GPT: 4 layers, 4 heads, width 128, context 64, batch 12.
    pub fn baby(vocab_size: usize) -> Config {
        Config {
            vocab_size,
            context: 64,
            d_model: 128,
            n_layers: 4,
            n_heads: 4,
            batch: 12,
        }
    }

    /// The longer run: the baby GPT with a context of 128 and 16 sequences per step.
    pub fn long(vocab_size: usize) -> Config {
        Config {
            context: 128,
            batch: 16,
            ..Config::baby(vocab_size)
        }
    }

    /// A small model for tests: 2 layers, 2 heads of 16 features, width 32, context 16,
    /// batch 4. (Heads of 16 features keep every product of the attention on MKL's path,
    /// whose order the course follows; PyTorch multiplies some smaller ones in a loop of
    /// its own.)
    pub fn tiny(vocab_size: usize) -> Config {
        Config {
            vocab_size,
            context: 16,
            d_model: 32,
            n_layers: 2,
            n_heads: 2,
            batch: 4,
        }
    }

    /// Features per head.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.n_heads
    }

    /// The width of Llama's SwiGLU: `8·d_model/3` (as many parameters as GPT-2's MLP of
    /// `4·d_model`, which has two matrices to SwiGLU's three), rounded up to a multiple of
    /// 8. 344 for a width of 128.
    // ANCHOR: swiglu_width
    pub fn swiglu_width(&self) -> usize {
        (8 * self.d_model).div_ceil(3).div_ceil(8) * 8
    }
    // ANCHOR_END: swiglu_width

    /// The standard deviation of the initial weights that write into the residual stream:
    /// `0.02/√(2·n_layers)`, GPT-2's scaling, since each layer adds two of them to the
    /// stream and the stream's variance grows with their number.
    pub fn residual_std(&self) -> f64 {
        0.02 / (2.0 * self.n_layers as f64).sqrt()
    }

    /// Checks the sizes: none zero, and the width a multiple of the heads.
    pub fn check(&self) -> shared::Result<()> {
        let sizes = [
            ("vocab_size", self.vocab_size),
            ("context", self.context),
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("n_heads", self.n_heads),
            ("batch", self.batch),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, n)| *n == 0) {
            return Err(shared::Error::InvalidArgument {
                op: "config",
                detail: format!("{name} must be at least 1, got 0"),
            });
        }
        if !self.d_model.is_multiple_of(self.n_heads)
            || !self.head_dim().is_multiple_of(2)
        {
            return Err(shared::Error::InvalidArgument {
                op: "config",
                detail: format!(
                    "d_model ({}) must be an even number of features per head for {} heads",
                    self.d_model, self.n_heads
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baby_swiglu_is_344_wide() {
        assert_eq!(Config::baby(65).swiglu_width(), 344);
        assert_eq!(Config::tiny(65).swiglu_width(), 88);
    }

    #[test]
    fn bad_sizes_are_errors() {
        let mut c = Config::tiny(10);
        c.batch = 0;
        assert!(c.check().unwrap_err().to_string().contains("batch"));
        let mut c = Config::tiny(10);
        c.n_heads = 3;
        assert!(c.check().is_err());
    }
}
