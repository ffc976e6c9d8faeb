//! TEMPORARY STUB (replaced by the fmt branch).
pub enum Values<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    I64(&'a [i64]),
    I32(&'a [i32]),
    Bool(&'a [bool]),
}
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Suffixes {
    pub requires_grad: bool,
    pub grad_fn: Option<String>,
}
pub fn format_tensor(_values: Values<'_>, _shape: &[usize], _suffixes: &Suffixes) -> String {
    todo!()
}
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Size(pub Vec<usize>);
impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "torch.Size({:?})", self.0)
    }
}
impl std::ops::Deref for Size {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.0
    }
}
impl From<Vec<usize>> for Size {
    fn from(v: Vec<usize>) -> Self {
        Size(v)
    }
}
impl From<&[usize]> for Size {
    fn from(v: &[usize]) -> Self {
        Size(v.to_vec())
    }
}
impl<const N: usize> PartialEq<[usize; N]> for Size {
    fn eq(&self, o: &[usize; N]) -> bool {
        self.0 == o
    }
}
