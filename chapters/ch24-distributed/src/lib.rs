//! # Chapter 24: attention across machines
//!
//! A context of a million tokens does not fit one device's memory or time, so long
//! contexts are cut along the sequence across devices. Chapter 17 merged attention over
//! parts of the keys by their log-sum-exps; this chapter runs that merge across
//! processes:
//!
//! - **ring attention** (Liu, Zaharia and Abbeel, "Ring Attention with Blockwise
//!   Transformers for Near-Infinite Context"): queries stay, keys and values travel
//!   around a ring of ranks ([`ring`], [`block`], [`block_kind`]);
//! - **zigzag shards** that balance the causal work (the head-tail balance of
//!   ring-flash-attention, Megatron-LM and PyTorch's context parallelism), counted in
//!   products and bytes ([`shards`], [`zigzag`], [`counts`], [`ring_bytes`]);
//! - **all-gather against a ring pass** ([`transfer`]);
//! - **Ulysses** (Jacobs et al., "DeepSpeed Ulysses"): two all-to-alls, sequence shards
//!   to head shards and back ([`ulysses`]);
//! - **tensor-parallel heads** (Shoeybi et al., "Megatron-LM") and the order of the sum
//!   that adds their outputs ([`tensor_parallel`]);
//! - **a training step across ranks**: chapter 22's Llama with its sequence cut across
//!   ranks, the ring's backward ([`ring_backward`]) for the attention, every other part
//!   token by token on a rank's own tokens ([`rank_tokens`], [`layer_on_rank`]), the sums
//!   over the sequence from every token's gathered pieces ([`sequence_sums`]), so that
//!   the step ([`training_step`]) gives one process's bits, and chapter 22's within the
//!   tolerance [`step_agreement`] derives.
//!
//! By default everything runs in one process, each rank's steps in turn. With the `mpi`
//! feature, `mpirun -np 4 ch24-mpi` runs the same steps in four processes that pass their
//! blocks by MPI (the `distributed` module, built with the feature), and gives the same
//! bits.
//!
//! [`setup`] holds the chapter's sizes.
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod agree;
pub mod block;
pub mod block_kind;
pub mod commas;
pub mod cost;
#[cfg_attr(feature = "exercise", path = "../exercises/counts.rs")]
pub mod counts;
#[cfg(feature = "mpi")]
pub mod distributed;
pub mod layer_on_rank;
pub mod narrative;
pub mod rank_tokens;
pub mod ring;
pub mod ring_backward;
#[cfg_attr(feature = "exercise", path = "../exercises/ring_bytes.rs")]
pub mod ring_bytes;
pub mod sequence_sums;
pub mod setup;
pub mod shards;
pub mod step_agreement;
pub mod tensor_parallel;
pub mod training_step;
pub mod transfer;
pub mod ulysses;
#[cfg_attr(feature = "exercise", path = "../exercises/zigzag.rs")]
pub mod zigzag;
