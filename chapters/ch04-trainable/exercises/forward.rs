//! Exercise: the forward passes of the two self-attention modules. Replace each `todo!()`;
//! test with `cargo test -p ch04-trainable --features exercise self_attention`.
//! The structs and their `new` are in `src/self_attention.rs`.

use shared::Tensor;

use crate::self_attention::{SelfAttentionV1, SelfAttentionV2};

impl SelfAttentionV1 {
    /// The context vector of every token: `softmax(Q·Kᵀ / √d_k) · V`.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_in]`. Returns `[tokens, d_out]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: project x into keys, values and queries with `x · W` (the matrices are
        // [d_in, d_out]), score every query against every key (queries · keysᵀ), turn the
        // scores into weights with `crate::scaled::scaled_attention_weights`, and return
        // weights · values.
        let _ = x;
        todo!("SelfAttentionV1::forward")
    }
}

impl SelfAttentionV2 {
    /// The same computation with the `Linear` layers.
    ///
    /// # Shapes
    /// `x`: `[tokens, d_in]`. Returns `[tokens, d_out]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        // TODO: as in SelfAttentionV1::forward, but project with the layers
        // (`self.w_key.forward(x)`, ...), which compute `x · Wᵀ (+ b)`.
        let _ = x;
        todo!("SelfAttentionV2::forward")
    }
}
