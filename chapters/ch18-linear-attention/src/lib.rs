//! # Chapter 18: beyond softmax
//!
//! Softmax attention keeps every key and value it has seen: its cache grows with the text.
//! Drop the softmax and write the weight of key `j` for query `i` as `φ(q_i)·φ(k_j)` with a
//! positive feature map `φ` (Katharopoulos et al., 2020, "Transformers are RNNs"), and the
//! sum over the past factors: `Σ_j φ(q_i)·φ(k_j) v_j = φ(q_i) S_i` with
//! `S_i = Σ_{j≤i} φ(k_j) v_jᵀ`, a `d × d` state that one token at a time updates. That is
//! linear attention, and it can be computed in three forms that give the same numbers up to
//! rounding: parallel, recurrent and chunked.
//!
//! A sum of outer products only adds; the delta rule (Schlag, Irie and Schmidhuber, 2021,
//! "Linear Transformers Are Secretly Fast Weight Programmers") first reads what the state
//! holds under a key and replaces it. Gated DeltaNet (Yang, Kautz and Hatamizadeh, 2024,
//! "Gated Delta Networks") adds a decay, and is the recurrent layer of Qwen3-Next and
//! Qwen3.5, three of every four layers.
//!
//! - [`feature_map`]: `φ(x) = elu(x) + 1`;
//! - [`parallel`], [`recurrent`], [`chunked`]: causal linear attention in three forms;
//! - [`delta`]: the delta rule's write;
//! - [`gates`]: the pieces of Gated DeltaNet's inputs (unit-length rows, the gates);
//! - [`gated_delta`]: Gated DeltaNet token by token;
//! - [`chunked_delta`]: the same, a chunk at a time (the WY / UT form);
//! - [`short_conv`], [`gated_layer`]: the layer around the recurrence, as Qwen3-Next
//!   builds it: a short convolution before, an RMSNorm and an output gate after;
//! - [`sparse`]: DeepSeek Sparse Attention, the other way out: softmax attention over
//!   the keys a small indexer picks (DeepSeek-AI, 2025,
//!   "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse Attention"),
//!   and the kept keys run by chapter 16's tiled kernel, which reads only their tiles;
//! - [`sparse_kernel`]: the same at long lengths, a tile of queries at a time, with no
//!   `T × T` matrix;
//! - [`recall`]: associative recall, what a state of fixed size forgets;
//! - [`memory`]: what the state keeps, against a KV cache, and where it starts to pay;
//! - [`hybrid`]: three Gated DeltaNet layers and one softmax layer, as Qwen3-Next and
//!   Kimi Linear stack them.
//!
//! With `--features exercise`, four functions come from `exercises/` instead, where the
//! learner writes them: `linear_recurrent`, `delta_write`, `ut_transform` and
//! `state_pays_after`.

pub mod chunked;
pub mod chunked_delta;
#[cfg_attr(feature = "exercise", path = "../exercises/delta.rs")]
pub mod delta;
pub mod feature_map;
pub mod gated_delta;
pub mod gated_layer;
pub mod gates;
pub mod hybrid;
pub mod memory;
pub mod narrative;
pub mod parallel;
pub mod recall;
#[cfg_attr(feature = "exercise", path = "../exercises/recurrent.rs")]
pub mod recurrent;
pub mod setup;
pub mod short_conv;
pub mod sparse;
pub mod sparse_kernel;
