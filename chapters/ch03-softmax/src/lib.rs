//! # Chapter 3: softmax
//!
//! Attention weights must be positive and add up to 1. Softmax makes them so:
//! `softmax(x)_i = exp(x_i) / Σ_j exp(x_j)`. The exponential makes every weight positive
//! and widens the gaps between scores (the best match gets a clearly larger share), and the
//! division makes the weights add up to 1. The name and its reading as probabilities go
//! back to Bridle (1990); attention uses it on every row of scores since Bahdanau et al.
//! (2014) and Vaswani et al. (2017), "Attention Is All You Need".
//!
//! Written as the formula, softmax breaks on large scores: a float32 `exp` overflows to
//! infinity above about 88.7, and `inf / inf` is NaN. Subtracting the largest score first
//! gives the same weights (the common factor `exp(-max)` cancels) with no exponent above 0:
//! the stable softmax that PyTorch computes. On a matrix the sum runs along one `dim`:
//! `dim=-1` normalises each row, which is what attention needs (one row per query).
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod answers;
#[cfg_attr(feature = "exercise", path = "../exercises/naive.rs")]
pub mod naive;
pub mod narrative;
#[cfg_attr(feature = "exercise", path = "../exercises/shift_scale.rs")]
pub mod shift_scale;
#[cfg_attr(feature = "exercise", path = "../exercises/stable.rs")]
pub mod stable;
