//! `torch.einsum` for two operands: name every dim with a letter, and say which letters
//! the result keeps. Letters shared by both operands are multiplied together; letters
//! missing from the result are summed away.
//!
//! `einsum("sd,hde->hse", x, w)` reads: for every head `h`, token `s` and output feature
//! `e`, sum over `d` the products `x[s, d] · w[h, d, e]`. It is one matmul per head,
//! written as a formula.

use crate::backend::on_libtorch;
use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::Tensor;

/// A parsed equation: the letters of each operand and of the output.
struct Equation {
    a: Vec<char>,
    b: Vec<char>,
    out: Vec<char>,
}

fn parse(equation: &str) -> Result<Equation> {
    let bad = |why: &str| Error::InvalidArgument {
        op: "einsum",
        detail: format!("equation {equation:?} {why}"),
    };
    let equation_clean: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (inputs, out) = match equation_clean.split_once("->") {
        Some((inputs, out)) => (inputs, Some(out)),
        None => (equation_clean.as_str(), None),
    };
    let (a, b) = inputs
        .split_once(',')
        .ok_or_else(|| bad("must name exactly two operands, like \"ij,jk->ik\""))?;
    let letters = |s: &str| -> Result<Vec<char>> {
        if s.chars().all(|c| c.is_ascii_alphabetic()) {
            Ok(s.chars().collect())
        } else {
            Err(bad("may only use letters for dims (no '...')"))
        }
    };
    let (a, b) = (letters(a)?, letters(b)?);
    let out = match out {
        Some(out) => letters(out)?,
        // Implicit output, as in PyTorch: the letters that appear once, in alphabetical order.
        None => {
            let mut once: Vec<char> = a
                .iter()
                .chain(&b)
                .copied()
                .filter(|c| a.iter().chain(&b).filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    for c in &out {
        if !a.contains(c) && !b.contains(c) {
            return Err(bad(&format!(
                "has output letter '{c}' that no operand names"
            )));
        }
        if out.iter().filter(|d| *d == c).count() > 1 {
            return Err(bad(&format!("repeats output letter '{c}'")));
        }
    }
    Ok(Equation { a, b, out })
}

/// `torch.einsum(equation, a, b)` for two operands and explicit letters (no `...`).
///
/// # Shapes
/// `a` has one dim per letter before the comma, `b` one per letter after it; a letter
/// names the same size wherever it appears. The result has one dim per output letter.
pub fn f_einsum(equation: &str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let eq = parse(equation)?;
    let mut sizes: Vec<(char, usize)> = Vec::new();
    for (letters, t, name) in [(&eq.a, a, "first"), (&eq.b, b, "second")] {
        if letters.len() != t.dim() {
            return Err(Error::Shape {
                op: "einsum",
                detail: format!(
                    "the {name} operand has shape {} but the equation {equation:?} names {} dims \
                     for it",
                    shape_list(t.dims()),
                    letters.len()
                ),
            });
        }
        for (&c, &n) in letters.iter().zip(t.dims()) {
            match sizes.iter().find(|(d, _)| *d == c) {
                Some(&(_, m)) if m != n => {
                    return Err(Error::Shape {
                        op: "einsum",
                        detail: format!(
                            "letter '{c}' has size {m} in one place and {n} in another \
                             (shapes {} and {})",
                            shape_list(a.dims()),
                            shape_list(b.dims())
                        ),
                    });
                }
                Some(_) => {}
                None => sizes.push((c, n)),
            }
        }
    }
    on_libtorch!(|device| Ok(crate::backend::torch::einsum(equation, a, b, device)));
    // Every letter gets a position in one combined index: output letters first, then the
    // summed ones.
    let mut letters: Vec<char> = eq.out.clone();
    letters.extend(
        sizes
            .iter()
            .map(|&(c, _)| c)
            .filter(|c| !eq.out.contains(c)),
    );
    let size_of = |c: char| sizes.iter().find(|(d, _)| *d == c).map_or(1, |&(_, n)| n);
    let extent: Vec<usize> = letters.iter().map(|&c| size_of(c)).collect();
    let position = |c: &char| letters.iter().position(|d| d == c).expect("known letter");
    let a_pos: Vec<usize> = eq.a.iter().map(position).collect();
    let b_pos: Vec<usize> = eq.b.iter().map(position).collect();
    let out_shape: Vec<usize> = extent[..eq.out.len()].to_vec();
    let summed: usize = extent[eq.out.len()..].iter().product();

    let mut values = Vec::with_capacity(out_shape.iter().product());
    let mut index = vec![0usize; letters.len()];
    let mut a_index = vec![0usize; a_pos.len()];
    let mut b_index = vec![0usize; b_pos.len()];
    for out_flat in 0..out_shape.iter().product::<usize>() {
        unflatten(out_flat, &out_shape, &mut index[..eq.out.len()]);
        let mut acc = 0.0f32;
        for sum_flat in 0..summed {
            unflatten(
                sum_flat,
                &extent[eq.out.len()..],
                &mut index[eq.out.len()..],
            );
            for (slot, &p) in a_index.iter_mut().zip(&a_pos) {
                *slot = index[p];
            }
            for (slot, &p) in b_index.iter_mut().zip(&b_pos) {
                *slot = index[p];
            }
            acc += a.data[a_index.as_slice()] * b.data[b_index.as_slice()];
        }
        values.push(acc);
    }
    Tensor::f_from_vec(values, &out_shape)
}

/// Plain form of [`f_einsum`].
#[track_caller]
pub fn einsum(equation: &str, a: &Tensor, b: &Tensor) -> Tensor {
    or_panic(f_einsum(equation, a, b))
}

/// Writes the row-major multi-index of `flat` within `shape` into `index`.
fn unflatten(mut flat: usize, shape: &[usize], index: &mut [usize]) {
    for (slot, &n) in index.iter_mut().zip(shape).rev() {
        *slot = flat % n;
        flat /= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{arange, tensor};

    #[test]
    fn matches_matmul() {
        let x = arange(0.0f32, 6.0, 1.0).view(&[2, 3]);
        let w = arange(0.0f32, 12.0, 1.0).view(&[2, 3, 2]);
        let per_head = einsum("sd,hde->hse", &x, &w);
        assert_eq!(per_head.shape(), [2, 2, 2]);
        assert_eq!(per_head.get(1).to_vec(), x.matmul(&w.get(1)).to_vec());
        let implicit = einsum("ij,jk", &x, &w.get(0));
        assert_eq!(implicit.to_vec(), x.matmul(&w.get(0)).to_vec());
    }

    #[test]
    fn errors() {
        let x = tensor!([[1.0, 2.0]]);
        assert_eq!(
            f_einsum("ij,jk->ik", &x, &x).unwrap_err().to_string(),
            "einsum: letter 'j' has size 2 in one place and 1 in another (shapes [1, 2] and [1, 2])"
        );
        assert_eq!(
            f_einsum("ijk,jk->ik", &x, &x).unwrap_err().to_string(),
            "einsum: the first operand has shape [1, 2] but the equation \"ijk,jk->ik\" names 3 dims for it"
        );
    }
}
