//! # Chapter 4: self-attention with trainable weights
//!
//! The attention of the previous chapters compared the input vectors with each other
//! directly, so there was nothing to learn. Here every token is first projected three times
//! by learned matrices: into a *query* (what this token looks for), a *key* (what it offers
//! to be found by) and a *value* (what it passes on when it is attended to). The scores are
//! dot products of queries with keys, divided by `√d_k` so that they do not grow with the
//! key size, turned into weights by softmax, and each token's output (its *context vector*)
//! is the weighted sum of the values. This is the scaled dot-product attention of Vaswani et
//! al., 2017, "Attention Is All You Need".
//!
//! The articles write the projection two ways, and the chapter follows each:
//! - the blog post keeps `W` as `[d_in, d_out]` and multiplies a row vector from the left:
//!   `q = x · W` (and `Q = X · W` for all tokens at once);
//! - seeds 004 and 001 keep `W` as `[d_out, d_in]`, as `nn.Linear` stores it, and multiply
//!   a column vector: `q = W · x`, so all tokens at once are `X · Wᵀ`.
//!
//! Both give the same vectors for `W` and its transpose. Raschka's article also shows that the
//! query/key size and the value size are separate choices (`d_q = d_k = 24`, `d_v = 28`):
//! queries and keys must match for their dot products, while the values set the size of
//! the output.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod answers;
#[cfg_attr(feature = "exercise", path = "../exercises/forward.rs")]
pub mod forward;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/scaled.rs")]
pub mod scaled;
pub mod self_attention;
#[cfg_attr(feature = "exercise", path = "../exercises/unscaled.rs")]
pub mod unscaled;

pub use self_attention::{SelfAttentionV1, SelfAttentionV2};
