//! The chapter's run on chapter 20's tiny checkpoint: the split, the adapters and a short
//! fine-tuning, in the order the reference script draws them.

use ch19_induction_heads::pytorch_order::PytorchOrder;
use ch20_real_model::loader::{Loaded, load};
use shared::{Tensor, manual_seed};

use crate::adapter::{Adapter, LoraConfig};
use crate::error::LoraError;
use crate::examples::Encoder;
use crate::setup::{
    ALPHA, BATCH, HELD_OUT, RANK, TARGETS, TINY, TINY_LR, TINY_STEPS, in_workspace,
};
use crate::task::{Sum, Sums, split};
use crate::train::{Schedule, run};
use ch11_training::adamw::AdamW;

/// The question the chapter shows.
pub const EXAMPLE: Sum = Sum { a: 17, b: 25 };

/// The tiny checkpoint with its fresh adapters.
pub struct TinyRun {
    /// The checkpoint.
    pub loaded: Loaded,
    /// Its questions' tokens.
    pub encoder: Encoder,
    /// The training and held-out sums.
    pub sums: Sums,
    /// The adapters, on the queries and values.
    pub adapter: Adapter,
}

impl TinyRun {
    /// Loads the checkpoint; from `manual_seed(seed)`, splits the sums and draws the
    /// adapters.
    pub fn new(seed: u64) -> Result<TinyRun, LoraError> {
        let loaded = load(&in_workspace(TINY), |_, _| {})?;
        let encoder = Encoder::new(&loaded)?;
        manual_seed(seed);
        let sums = split(HELD_OUT)?;
        let config = LoraConfig::new(RANK, ALPHA, &TARGETS)?;
        let adapter = Adapter::new(&loaded.model, &config)?;
        Ok(TinyRun {
            loaded,
            encoder,
            sums,
            adapter,
        })
    }

    /// The chapter's short run: `TINY_STEPS` steps of `BATCH` sums, in PyTorch's order.
    /// Returns the losses.
    pub fn train(&mut self) -> Result<Vec<f32>, LoraError> {
        run::<PytorchOrder>(
            &self.loaded.model,
            &self.loaded.recipe,
            &mut self.adapter,
            &self.encoder,
            &self.sums.train,
            &mut AdamW::new(TINY_LR),
            (TINY_STEPS, BATCH, Schedule::Constant(TINY_LR)),
            |_, _| {},
        )
    }

    /// The example's ids, a batch of one.
    ///
    /// # Shapes
    /// Returns `[1, tokens]`.
    pub fn example_ids(&self) -> Result<Tensor<i64>, LoraError> {
        let ids = self.encoder.example(&EXAMPLE)?.ids;
        Ok(Tensor::from_vec(
            ids.iter().map(|&i| i64::from(i)).collect(),
            &[1, ids.len()],
        ))
    }
}
