//! The dot product of two rows as PyTorch's vectorised softmax backward adds it up.
//!
//! PyTorch's CPU kernel handles W floats at once (W = 16 with AVX-512, 8 with AVX2): lane
//! `l` accumulates the products of elements `l`, `l + W`, `l + 2W`, ..., each product
//! rounded before it is added; the lanes are then added in pairs (a butterfly). A row
//! shorter than W is added left to right. The sum is the same number mathematically, but
//! the order decides the last bit, so following it gives PyTorch's gradients bit for bit.
//! `shared::cpu::capability()` says which build we follow.

use shared::cpu::{Capability, capability};

/// `Σ a[i]·b[i]` in the order of PyTorch's softmax backward on this capability.
///
/// # Shapes
/// `a`, `b`: the same length (an empty row gives 0).
pub fn row_dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(
        a.len(),
        b.len(),
        "row_dot: rows of lengths {} and {}",
        a.len(),
        b.len()
    );
    let mut products = a.iter().zip(b).map(|(x, y)| x * y);
    let w = capability().softmax_lanes();
    if a.len() < w {
        let first = products.next().unwrap_or(0.0);
        return products.fold(first, |acc, p| acc + p);
    }
    let mut lanes = [0.0f32; 16];
    for (lane, p) in lanes.iter_mut().zip(products.by_ref().take(w)) {
        *lane = p;
    }
    // A last partial block feeds only the first lanes.
    for (t, p) in products.enumerate() {
        lanes[t % w] += p;
    }
    combine(&mut lanes[..w])
}

/// Adds the lanes: pairwise (lane `l` takes lane `l xor dist` for dist = W/2, ..., 1) in
/// the vector builds, one after the other in the portable build.
fn combine(lanes: &mut [f32]) -> f32 {
    if capability() == Capability::Default {
        return lanes[1..].iter().fold(lanes[0], |acc, &x| acc + x);
    }
    let mut dist = lanes.len() / 2;
    while dist > 0 {
        let before = lanes.to_vec();
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane = before[l] + before[l ^ dist];
        }
        dist /= 2;
    }
    lanes[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rows_add_left_to_right() {
        assert_eq!(row_dot(&[], &[]), 0.0);
        assert_eq!(row_dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    }

    #[test]
    fn long_rows_equal_the_exact_sum_of_small_integers() {
        let a: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let b = vec![2.0; 37];
        assert_eq!(row_dot(&a, &b), (0..37).sum::<i32>() as f32 * 2.0);
    }
}
