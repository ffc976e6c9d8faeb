//! What a tensor can hold, and how the printer reads it.

use crate::fmt::Values;

/// The element types a tensor can hold: `f32` (the default, like `torch.float32`),
/// `i64` (token ids, like `torch.int64`) and `bool` (masks, like `torch.bool`).
pub trait Element:
    Copy + PartialEq + std::fmt::Debug + Default + Send + Sync + 'static
{
    /// PyTorch's name of the dtype, e.g. `torch.float32`.
    const DTYPE: &'static str;

    /// Borrows the values for the printer.
    fn values(values: &[Self]) -> Values<'_>;
}

impl Element for f32 {
    const DTYPE: &'static str = "torch.float32";
    fn values(values: &[Self]) -> Values<'_> {
        Values::F32(values)
    }
}

impl Element for i64 {
    const DTYPE: &'static str = "torch.int64";
    fn values(values: &[Self]) -> Values<'_> {
        Values::I64(values)
    }
}

impl Element for bool {
    const DTYPE: &'static str = "torch.bool";
    fn values(values: &[Self]) -> Values<'_> {
        Values::Bool(values)
    }
}
