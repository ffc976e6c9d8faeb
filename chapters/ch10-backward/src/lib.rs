//! # Chapter 10: the backward pass by hand
//!
//! Training changes every weight a little in the direction that lowers a loss, and that
//! direction is the gradient: how much the loss moves when one weight moves. PyTorch's
//! autograd records every operation of the forward pass and replays them backwards,
//! applying the chain rule (Rumelhart, Hinton and Williams, 1986, "Learning representations
//! by back-propagating errors"). This chapter does autograd's work by hand for everything
//! attention is made of, one backward function per forward step, and then chains them into
//! the backward pass of chapter 5's `CausalAttention` and chapter 7's `MultiHeadAttention`.
//! Every gradient it prints is the one `loss.backward()` leaves in `.grad`.
//!
//! In reading order:
//! - [`matmul`]: the backward of a (batched) matrix product, two more products;
//! - [`pointwise`]: scaling, `masked_fill` and dropout, one elementwise step each;
//! - [`softmax`]: softmax's backward as a Jacobian-vector product;
//! - [`linear`]: `nn.Linear`'s gradients for its weight, its bias and its input;
//! - [`heads`] and [`einsum`]: data movement and `einsum`, whose backwards are the same
//!   kind of operation again;
//! - [`attention`]: the attention core, with the record (the *tape*) its backward needs;
//! - [`causal`] and [`multihead`]: the two modules, forward with a tape and backward;
//! - [`zero_grads`]: which score gradients are exactly zero under a causal mask;
//! - [`recompute`]: the attention backward without storing `P`, from the row log-sum-exp;
//! - [`saturation`]: how small the scores' gradient gets when softmax saturates;
//! - [`pytorch_order`]: softmax's backward in the order PyTorch adds long rows, beside
//!   the formula (the book's appendix says why).
//!
//! With `--features exercise`, the modules marked below come from `exercises/` instead,
//! where the learner writes them.

pub mod attention;
pub mod causal;
pub mod einsum;
pub mod heads;
pub mod linear;
pub mod matmul;
pub mod multihead;
pub mod narrative;
pub mod pointwise;
pub mod pytorch_order;
pub mod recompute;
#[cfg_attr(feature = "exercise", path = "../exercises/saturation.rs")]
pub mod saturation;
#[cfg_attr(feature = "exercise", path = "../exercises/softmax.rs")]
pub mod softmax;
#[cfg_attr(feature = "exercise", path = "../exercises/zero_grads.rs")]
pub mod zero_grads;
