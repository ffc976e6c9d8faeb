//! The backward of a two-operand `einsum`.
//!
//! `c = einsum("A,B->C", a, b)` multiplies `a` and `b` elementwise over the letters they
//! share and sums over the letters that are not in `C`. An element of `a` meets every
//! element of `b` and of `c` that agrees with it on the shared letters, so its gradient is
//! the sum of `grad_c · b` over those: `einsum("C,B->A", grad_c, b)`, and likewise
//! `einsum("A,C->B", a, grad_c)` for `b`. The backward of an einsum is two einsums with the
//! labels swapped. (`matmul`'s backward is the case `"ik,kj->ij"`.)

use shared::{Tensor, einsum};

/// The gradients of `c = einsum(equation, a, b)` with respect to `a` and `b`.
///
/// Works for equations with an explicit output (`"..->.."`) where every letter of one
/// operand also appears in the other operand or in the output, and no letter repeats within
/// one operand (the einsums of the chapters; a letter only one operand has, summed away,
/// would need a broadcast in the backward).
///
/// # Shapes
/// `a`, `b`: as the equation names them; `grad_c`: the shape of `c`. Returns the shapes of
/// `a` and `b`.
///
/// # Panics
/// If the equation is not of that form.
// ANCHOR: einsum_backward
pub fn einsum_backward(
    equation: &str,
    a: &Tensor,
    b: &Tensor,
    grad_c: &Tensor,
) -> (Tensor, Tensor) {
    let (lhs_a, lhs_b, out) = parse(equation);
    let grad_a = einsum(&format!("{out},{lhs_b}->{lhs_a}"), grad_c, b);
    let grad_b = einsum(&format!("{lhs_a},{out}->{lhs_b}"), a, grad_c);
    (grad_a, grad_b)
}
// ANCHOR_END: einsum_backward

/// Splits `"A,B->C"` into its three label strings, checking the form `einsum_backward`
/// handles.
fn parse(equation: &str) -> (String, String, String) {
    let clean: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let fail =
        |why: &str| -> ! { panic!("einsum_backward: equation {equation:?} {why}") };
    let Some((inputs, out)) = clean.split_once("->") else {
        fail("needs an explicit output (\"A,B->C\")")
    };
    let Some((lhs_a, lhs_b)) = inputs.split_once(',') else {
        fail("needs exactly two operands")
    };
    for (name, labels, others) in [
        ("first", lhs_a, [lhs_b, out]),
        ("second", lhs_b, [lhs_a, out]),
    ] {
        for (i, c) in labels.char_indices() {
            if !c.is_ascii_alphabetic() {
                fail(&format!(
                    "has {c:?} in the {name} operand; only letters are handled"
                ));
            }
            if labels[..i].contains(c) {
                fail(&format!("repeats {c:?} in the {name} operand"));
            }
            if !others.iter().any(|o| o.contains(c)) {
                fail(&format!("sums {c:?} out of the {name} operand alone"));
            }
        }
    }
    (lhs_a.to_string(), lhs_b.to_string(), out.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::matmul_backward;
    use shared::{manual_seed, randn};

    #[test]
    fn a_matrix_product_as_einsum_has_the_matmul_backward() {
        manual_seed(0);
        let (a, b, g) = (randn(&[2, 3, 4]), randn(&[2, 4, 5]), randn(&[2, 3, 5]));
        let (ga, gb) = einsum_backward("hik,hkj->hij", &a, &b, &g);
        let (ma, mb) = matmul_backward(&a, &b, &g);
        assert!(ga.allclose_default(&ma) && gb.allclose_default(&mb));
    }

    #[test]
    #[should_panic(
        expected = "einsum_backward: equation \"ij,jk\" needs an explicit output"
    )]
    fn an_implicit_output_is_refused() {
        let x = randn(&[2, 2]);
        einsum_backward("ij,jk", &x, &x, &x);
    }
}
