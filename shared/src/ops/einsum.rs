//! `torch.einsum`: name every dim of every operand with a letter, and say which letters the
//! result keeps. Letters shared by operands are multiplied together; letters missing from
//! the result are summed away.
//!
//! `einsum("sd,hde->hse", x, w)` reads: for every head `h`, token `s` and output feature
//! `e`, sum over `d` the products `x[s, d] · w[h, d, e]`. It is one matmul per head,
//! written as a formula.
//!
//! The rest of the notation, as in PyTorch: any number of operands (`"ij,jk,kl->il"`); `...`
//! for "whatever dims come here", which broadcast like elementwise operands
//! (`"...ij,...jk->...ik"` is a batched matmul); a letter repeated in one operand takes the
//! diagonal (`"ii->i"`); a letter of size 1 broadcasts against a larger size; without `->`
//! the result keeps the `...` dims and then the letters used once, in alphabetical order.
//!
//! The computation follows PyTorch's: it lines every operand up on one list of dims, then
//! contracts the operands two at a time from the left, each pair as one batched matrix
//! product (`bmm`). So wherever PyTorch's einsum is one matrix product, ours gives the same
//! bits.

use crate::backend::on_libtorch;
use crate::error::{Error, Result, or_panic, shape_list};
use crate::tensor::Tensor;

/// One position in an operand's subscripts.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Label {
    Letter(char),
    /// `...`: as many dims as the operand has beyond its letters.
    Ellipsis,
}

/// A parsed equation: the labels of each operand and of the output (`None` without `->`).
struct Equation {
    operands: Vec<Vec<Label>>,
    output: Option<Vec<Label>>,
}

fn error(detail: String) -> Error {
    Error::Shape {
        op: "einsum",
        detail,
    }
}

/// Reads one side of the equation (an operand's or the output's subscripts), starting at
/// byte `offset` of the whole equation (for the position in messages).
fn parse_term(term: &str, offset: usize, whose: &str) -> Result<Vec<Label>> {
    let mut labels = Vec::new();
    let mut dots = 0;
    for (i, c) in term.char_indices() {
        match c {
            ' ' => {}
            '.' => {
                if labels.contains(&Label::Ellipsis) {
                    return Err(error(format!(
                        "found '.' for {whose} but an ellipsis (...) was already found"
                    )));
                }
                dots += 1;
                if dots == 3 {
                    labels.push(Label::Ellipsis);
                    dots = 0;
                }
            }
            c if c.is_ascii_alphabetic() && dots == 0 => {
                labels.push(Label::Letter(c))
            }
            _ if dots != 0 => {
                return Err(error(format!(
                    "found '.' for {whose} that is not part of any ellipsis (...)"
                )));
            }
            _ => {
                return Err(error(format!(
                    "invalid subscript given at index {} in the equation string, subscripts \
                     must be in [a-zA-Z]",
                    offset + i
                )));
            }
        }
    }
    if dots != 0 {
        return Err(error(format!(
            "found '.' for {whose} that is not part of any ellipsis (...)"
        )));
    }
    Ok(labels)
}

fn parse(equation: &str, num_operands: usize) -> Result<Equation> {
    let (lhs, rhs) = match equation.split_once("->") {
        Some((lhs, rhs)) => (lhs, Some(rhs)),
        None => (equation, None),
    };
    let mut operands = Vec::new();
    let mut offset = 0;
    for (i, term) in lhs.split(',').enumerate() {
        operands.push(parse_term(term, offset, &format!("operand {i}"))?);
        offset += term.len() + 1;
    }
    if num_operands == 0 {
        return Err(error("must provide at least one operand".to_string()));
    }
    if operands.len() != num_operands {
        let which = if operands.len() > num_operands {
            "fewer"
        } else {
            "more"
        };
        return Err(error(format!(
            "{which} operands were provided than specified in the equation"
        )));
    }
    let output = match rhs {
        Some(rhs) => Some(parse_term(rhs, lhs.len() + 2, "output")?),
        None => None,
    };
    Ok(Equation { operands, output })
}

/// One dim of the shared list: a letter, or the `k`-th of the dims `...` stands for
/// (counted so that every operand's `...` dims line up at the right, as in broadcasting).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Dim {
    Letter(char),
    Ellipsis(usize),
}

/// Where each operand's dims go on one list of dims shared by all operands: the output
/// dims first, then the summed ones.
struct Layout {
    /// The size of every dim (1 where no operand has it larger).
    sizes: Vec<usize>,
    /// How many of the dims, from the front, the result keeps.
    kept: usize,
    /// For each operand, the position of each of its dims in `sizes`.
    places: Vec<Vec<usize>>,
}

/// The labels the output keeps, in order: the explicit output, checked, or PyTorch's
/// implicit one (`...` first, then the letters used exactly once, in ASCII order).
fn output_labels(eq: &Equation) -> Result<Vec<Label>> {
    let all = || eq.operands.iter().flatten().copied();
    let used = |label: Label| all().filter(|&l| l == label).count();
    let Some(output) = &eq.output else {
        let mut letters: Vec<char> = all()
            .filter_map(|l| match l {
                Label::Letter(c) if used(l) == 1 => Some(c),
                _ => None,
            })
            .collect();
        letters.sort_unstable();
        let ellipsis = all().any(|l| l == Label::Ellipsis);
        return Ok(ellipsis
            .then_some(Label::Ellipsis)
            .into_iter()
            .chain(letters.into_iter().map(Label::Letter))
            .collect());
    };
    for (i, &label) in output.iter().enumerate() {
        if let Label::Letter(c) = label {
            if used(label) == 0 {
                return Err(error(format!(
                    "output subscript {c} does not appear in the equation for any input operand"
                )));
            }
            if output[..i].contains(&label) {
                return Err(error(format!(
                    "output subscript {c} appears more than once in the output"
                )));
            }
        }
    }
    Ok(output.clone())
}

/// The dims of one operand: its letters, and its `...` expanded to `count` dims.
fn operand_dims(labels: &[Label], count: usize, num_ellipsis: usize) -> Vec<Dim> {
    labels
        .iter()
        .flat_map(|&l| match l {
            Label::Letter(c) => vec![Dim::Letter(c)],
            Label::Ellipsis => (num_ellipsis - count..num_ellipsis)
                .map(Dim::Ellipsis)
                .collect(),
        })
        .collect()
}

/// How many dims `...` stands for in each operand, after checking each operand's rank.
fn ellipsis_counts(eq: &Equation, operands: &[&Tensor]) -> Result<Vec<usize>> {
    let mut counts = Vec::new();
    for (i, (labels, t)) in eq.operands.iter().zip(operands).enumerate() {
        let letters = labels.iter().filter(|&&l| l != Label::Ellipsis).count();
        let has_ellipsis = letters != labels.len();
        if has_ellipsis && t.dim() < letters {
            return Err(error(format!(
                "the number of subscripts in the equation ({letters}) is more than the number \
                 of dimensions ({}) for operand {i}",
                t.dim()
            )));
        }
        if !has_ellipsis && t.dim() != letters {
            return Err(error(format!(
                "the number of subscripts in the equation ({letters}) does not match the number \
                 of dimensions ({}) for operand {i} and no ellipsis was given",
                t.dim()
            )));
        }
        counts.push(t.dim() - letters);
    }
    Ok(counts)
}

/// Lines up every operand's dims on one list and checks that the sizes agree.
fn layout(eq: &Equation, operands: &[&Tensor]) -> Result<Layout> {
    let counts = ellipsis_counts(eq, operands)?;
    let num_ellipsis = counts.iter().copied().max().unwrap_or(0);
    let output = output_labels(eq)?;
    // The output's dims, then `...` if the output drops it, then the summed letters.
    let mut order = operand_dims(&output, num_ellipsis, num_ellipsis);
    let kept = order.len();
    if !output.contains(&Label::Ellipsis) {
        order.extend((0..num_ellipsis).map(Dim::Ellipsis));
    }
    let mut summed: Vec<char> = eq
        .operands
        .iter()
        .flatten()
        .filter_map(|&l| match l {
            Label::Letter(c) if !output.contains(&l) => Some(c),
            _ => None,
        })
        .collect();
    summed.sort_unstable();
    summed.dedup();
    order.extend(summed.into_iter().map(Dim::Letter));

    let mut sizes = vec![1; order.len()];
    let mut places = Vec::new();
    for (i, (labels, t)) in eq.operands.iter().zip(operands).enumerate() {
        let dims = operand_dims(labels, counts[i], num_ellipsis);
        let place: Vec<usize> = dims
            .iter()
            .map(|d| {
                order
                    .iter()
                    .position(|o| o == d)
                    .expect("every dim is listed")
            })
            .collect();
        // A letter repeated in one operand (a diagonal) needs equal sizes.
        for (axis, &p) in place.iter().enumerate() {
            let n = t.sizes()[axis];
            if let Some(first) = place[..axis].iter().position(|&q| q == p) {
                let m = t.sizes()[first];
                if n != m {
                    return Err(error(format!(
                        "subscript {} is repeated for operand {i} but the sizes don't match, \
                         {n} != {m}",
                        name(dims[axis])
                    )));
                }
            }
        }
        // Across operands, sizes broadcast: equal, or 1 on one side.
        for (axis, &p) in place.iter().enumerate() {
            let n = t.sizes()[axis];
            if n != 1 && sizes[p] != 1 && sizes[p] != n {
                return Err(error(format!(
                    "subscript {} has size {n} for operand {i} which does not broadcast with \
                     previously seen size {} (operand shapes {})",
                    name(dims[axis]),
                    sizes[p],
                    operands
                        .iter()
                        .map(|t| shape_list(t.sizes()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            if n != 1 {
                sizes[p] = n;
            }
        }
        places.push(place);
    }
    Ok(Layout {
        sizes,
        kept,
        places,
    })
}

/// A dim's name for messages.
fn name(dim: Dim) -> String {
    match dim {
        Dim::Letter(c) => c.to_string(),
        Dim::Ellipsis(k) => format!("... (dim {k} of the ellipsis)"),
    }
}

/// One operand on the shared list of dims: every dim of the list is there, of size 1
/// where the operand does not have it. Like PyTorch's, it is a view of the operand
/// (unsqueezed and permuted), so the sums that follow walk its memory as PyTorch's do.
fn align(t: &Tensor, place: &[usize], layout: &Layout) -> Result<Tensor> {
    let (t, place) = take_diagonals(t, place);
    let mut order = vec![None; layout.sizes.len()];
    for (axis, &p) in place.iter().enumerate() {
        order[p] = Some(axis as i64);
    }
    let mut t = t;
    let mut next = place.len() as i64;
    let order: Vec<i64> = order
        .into_iter()
        .map(|axis| {
            axis.unwrap_or_else(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    for _ in place.len()..layout.sizes.len() {
        t = t.f_unsqueeze(-1)?;
    }
    t.f_permute(&order)
}

/// A letter repeated in one operand reads its diagonal: the result has that dim once. The
/// values are copied (PyTorch makes a strided view; the numbers are the same).
fn take_diagonals(t: &Tensor, place: &[usize]) -> (Tensor, Vec<usize>) {
    let mut unique: Vec<usize> = Vec::new();
    for &p in place {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    if unique.len() == place.len() {
        return (t.clone(), place.to_vec());
    }
    let shape: Vec<usize> = unique
        .iter()
        .map(|p| t.sizes()[place.iter().position(|q| q == p).expect("listed")])
        .collect();
    let numel: usize = shape.iter().product();
    let (mut at, mut index) = (vec![0; shape.len()], vec![0; place.len()]);
    let values = (0..numel)
        .map(|flat| {
            unflatten(flat, &shape, &mut at);
            for (slot, p) in index.iter_mut().zip(place) {
                *slot = at[unique.iter().position(|q| q == p).expect("listed")];
            }
            t.array()[index.as_slice()]
        })
        .collect();
    (Tensor::from_vec(values, &shape), unique)
}

/// Writes the row-major multi-index of `flat` within `shape` into `index`.
fn unflatten(mut flat: usize, shape: &[usize], index: &mut [usize]) {
    for (slot, &n) in index.iter_mut().zip(shape).rev() {
        *slot = flat % n;
        flat /= n;
    }
}

fn as_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| d as i64).collect()
}

/// Sums `t` over `dims`, keeping them as size 1.
fn sum_keep(t: Tensor, dims: &[usize]) -> Result<Tensor> {
    dims.iter().try_fold(t, |t, &d| t.f_sum_dim(d as i64, true))
}

/// Multiplies two aligned operands and sums over `sum_dims` (kept as size 1), as one
/// batched matrix product: the dims both have are the batch, the dims only the left one
/// has are the rows, the summed dims the inner dim, and the right one's own dims the
/// columns (PyTorch's `sumproduct_pair`).
///
/// # Shapes
/// `left`, `right`: the same rank, every dim equal or 1 on one side; `sum_dims` larger
/// than 1 on both. Returns that rank, 1 on `sum_dims`.
fn sumproduct_pair(
    left: &Tensor,
    right: &Tensor,
    sum_dims: &[usize],
) -> Result<Tensor> {
    if sum_dims.is_empty() {
        return left.f_mul(right);
    }
    let (mut batch, mut rows, mut cols) = (Vec::new(), Vec::new(), Vec::new());
    for d in (0..left.dim()).filter(|d| !sum_dims.contains(d)) {
        match (left.sizes()[d] != 1, right.sizes()[d] != 1) {
            (true, true) => batch.push(d),
            (true, false) => rows.push(d),
            _ => cols.push(d),
        }
    }
    let size = |t: &Tensor, dims: &[usize]| {
        dims.iter().map(|&d| t.sizes()[d]).product::<usize>()
    };
    let (b, m, k, n) = (
        size(left, &batch),
        size(left, &rows),
        size(left, sum_dims),
        size(right, &cols),
    );
    // The product's dims, in the order [batch, rows, summed (as 1), cols], and where each
    // original dim ends up there.
    let product_order = [&batch[..], &rows, sum_dims, &cols].concat();
    let product_shape: Vec<usize> = product_order
        .iter()
        .map(|&d| match sum_dims.contains(&d) {
            true => 1,
            false => left.sizes()[d].max(right.sizes()[d]),
        })
        .collect();
    let back: Vec<usize> = (0..left.dim())
        .map(|d| {
            product_order
                .iter()
                .position(|&p| p == d)
                .expect("every dim")
        })
        .collect();
    let left = left
        .f_permute(&as_i64(&product_order))?
        .f_reshape([b, m, k])?;
    let right_order = [&batch[..], sum_dims, &cols, &rows].concat();
    let right = right
        .f_permute(&as_i64(&right_order))?
        .f_reshape([b, k, n])?;
    left.f_bmm(&right)?
        .f_reshape(product_shape.as_slice())?
        .f_permute(&as_i64(&back))
}

/// Contracts the aligned operands two at a time from the left, as PyTorch does without a
/// contraction path: before each pair, the summed dims no later operand has are summed
/// (inside the pair's matrix product when both have them).
fn contract(operands: Vec<Tensor>, layout: &Layout) -> Result<Tensor> {
    let (all, kept) = (layout.sizes.len(), layout.kept);
    let out_shape = as_i64(&layout.sizes[..kept]);
    if operands.iter().any(|t| t.numel() == 0) {
        return Ok(crate::zeros(&layout.sizes[..kept]));
    }
    if operands.len() == 1 {
        let only = operands.into_iter().next().expect("one operand");
        if kept == 0 {
            // Everything summed: one reduction over all values, as PyTorch's `sum()`.
            return Ok(only.sum());
        }
        let summed: Vec<usize> = (kept..all).collect();
        return sum_keep(only, &summed)?.f_reshape(&out_shape);
    }
    // How many operands (still to be contracted) have each dim larger than 1.
    let mut counts: Vec<usize> = (0..all)
        .map(|d| operands.iter().filter(|t| t.sizes()[d] != 1).count())
        .collect();
    let mut operands = std::collections::VecDeque::from(operands);
    while operands.len() > 1 {
        let a = operands.pop_front().expect("two operands");
        let b = operands.pop_front().expect("two operands");
        let (mut sum_dims, mut a_only, mut b_only) =
            (Vec::new(), Vec::new(), Vec::new());
        for (d, count) in counts.iter_mut().enumerate().skip(kept) {
            let (in_a, in_b) = (a.sizes()[d] != 1, b.sizes()[d] != 1);
            if in_a && in_b {
                // The pair becomes one operand: summed now if no later operand has `d`.
                *count -= 1;
                if *count == 1 {
                    sum_dims.push(d);
                    *count = 0;
                }
            } else if *count == 1 && in_a {
                a_only.push(d);
                *count = 0;
            } else if *count == 1 && in_b {
                b_only.push(d);
                *count = 0;
            }
        }
        let (a, b) = (sum_keep(a, &a_only)?, sum_keep(b, &b_only)?);
        operands.push_front(sumproduct_pair(&a, &b, &sum_dims)?);
    }
    // Only the result is left; its summed dims are all of size 1 now.
    operands
        .pop_front()
        .expect("the result")
        .f_reshape(&out_shape)
}

/// Parses the equation and lines the operands up, with every check PyTorch makes.
fn f_layout(equation: &str, operands: &[&Tensor]) -> Result<Layout> {
    let eq = parse(equation, operands.len())?;
    layout(&eq, operands)
}

/// `torch.einsum(equation, *operands)` for any number of operands.
///
/// ```
/// use shared::{einsum_n, tensor};
/// let a = tensor!([[1.0, 2.0], [3.0, 4.0]]);
/// assert_eq!(einsum_n("ii->", &[&a]).item(), 5.0); // the trace
/// assert_eq!(einsum_n("ij,jk,kl->il", &[&a, &a, &a]).to_vec(), a.matmul(&a).matmul(&a).to_vec());
/// ```
///
/// # Shapes
/// Each operand has one dim per letter of its subscripts, plus any number for `...`; a
/// letter names the same size everywhere, or 1 (which broadcasts). The result has one dim
/// per output letter, and the broadcast `...` dims where the output puts `...`.
pub fn f_einsum_n(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
    let layout = f_layout(equation, operands)?;
    compute(&layout, operands)
}

/// Plain form of [`f_einsum_n`].
#[track_caller]
pub fn einsum_n(equation: &str, operands: &[&Tensor]) -> Tensor {
    or_panic(f_einsum_n(equation, operands))
}

fn compute(layout: &Layout, operands: &[&Tensor]) -> Result<Tensor> {
    let aligned = operands
        .iter()
        .zip(&layout.places)
        .map(|(t, place)| align(t, place, layout))
        .collect::<Result<_>>()?;
    contract(aligned, layout)
}

/// `torch.einsum(equation, a, b)`: the two-operand form the attention chapters use (see
/// [`f_einsum_n`] for one, three or more operands).
///
/// # Shapes
/// `a` has one dim per letter before the comma (plus any for `...`), `b` one per letter
/// after it; a letter names the same size wherever it appears, or 1. The result has one dim
/// per output letter.
pub fn f_einsum(equation: &str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let layout = f_layout(equation, &[a, b])?;
    on_libtorch!(|device| crate::backend::torch::f_einsum(
        equation,
        a,
        b,
        &layout.sizes[..layout.kept],
        device
    ));
    compute(&layout, &[a, b])
}

/// Plain form of [`f_einsum`].
#[track_caller]
pub fn einsum(equation: &str, a: &Tensor, b: &Tensor) -> Tensor {
    or_panic(f_einsum(equation, a, b))
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
    fn ellipsis_diagonal_and_broadcasting() {
        let m = arange(0.0f32, 9.0, 1.0).view(&[3, 3]);
        assert_eq!(einsum_n("ii->i", &[&m]).to_vec(), vec![0.0, 4.0, 8.0]);
        assert_eq!(
            einsum_n("...j->j...", &[&m]).to_vec(),
            m.t().contiguous().to_vec()
        );
        let batch = arange(0.0f32, 18.0, 1.0).view(&[2, 3, 3]);
        assert_eq!(
            einsum("...ij,jk->...ik", &batch, &m).to_vec(),
            batch.matmul(&m).to_vec()
        );
        let col = tensor!([[1.0], [2.0]]);
        let row = tensor!([[10.0, 20.0, 30.0]]);
        assert_eq!(einsum("ij,ij->ij", &col, &row).sizes(), [2, 3]);
    }

    #[test]
    fn errors() {
        let x = tensor!([[1.0, 2.0]]);
        assert_eq!(
            f_einsum("ij,jk->ik", &x, &tensor!([[1.0], [2.0], [3.0]]))
                .unwrap_err()
                .to_string(),
            "einsum: subscript j has size 3 for operand 1 which does not broadcast with \
             previously seen size 2 (operand shapes [1, 2], [3, 1])"
        );
        assert_eq!(
            f_einsum("ijk,jk->ik", &x, &x).unwrap_err().to_string(),
            "einsum: the number of subscripts in the equation (3) does not match the number of \
             dimensions (2) for operand 0 and no ellipsis was given"
        );
        assert!(f_einsum_n("ij,jk", &[&x]).is_err());
        assert!(f_einsum_n("i.j", &[&x]).is_err());
    }
}
