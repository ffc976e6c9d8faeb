//! `torch.Size`: the shape of a tensor, as `t.shape` returns and prints it.

use std::fmt;
use std::ops::Deref;

/// `torch.Size`, what `t.shape` prints: `torch.Size([6, 2])`.
///
/// It dereferences to `[usize]` (so `size[0]` and `size.len()` work) and compares equal to
/// plain slices, vectors and arrays, so tests can write `assert_eq!(t.shape(), [6, 2])`.
///
/// ```
/// use shared::fmt::Size;
///
/// let size = Size(vec![6, 2]);
/// assert_eq!(size.to_string(), "torch.Size([6, 2])");
/// assert_eq!(size, [6, 2]);
/// assert_eq!(size[0], 6);
/// assert_eq!(Size(vec![]).to_string(), "torch.Size([])");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Size(pub Vec<usize>);

impl fmt::Display for Size {
    /// `torch.Size([` + the dims joined by `", "` + `])`. It prints a Python list, so a
    /// single dim has no trailing comma (`torch.Size([5])`), unlike a tuple.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.0.iter().map(usize::to_string).collect();
        write!(f, "torch.Size([{}])", dims.join(", "))
    }
}

impl Deref for Size {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl From<&[usize]> for Size {
    fn from(dims: &[usize]) -> Self {
        Size(dims.to_vec())
    }
}

impl From<Vec<usize>> for Size {
    fn from(dims: Vec<usize>) -> Self {
        Size(dims)
    }
}

impl PartialEq<[usize]> for Size {
    fn eq(&self, other: &[usize]) -> bool {
        self.0 == other
    }
}

impl PartialEq<&[usize]> for Size {
    fn eq(&self, other: &&[usize]) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Vec<usize>> for Size {
    fn eq(&self, other: &Vec<usize>) -> bool {
        self.0 == *other
    }
}

impl<const N: usize> PartialEq<[usize; N]> for Size {
    fn eq(&self, other: &[usize; N]) -> bool {
        self.0 == other
    }
}
