//! The orders in which MKL adds up the products of one output, each a function of the
//! output's pairs: a fused chain (`sgemm`), pairwise lanes (narrow transposed products),
//! `sgemv`'s row dots and column sweeps, `sdot`'s tree. [`matmul`](super::matmul) says which
//! product takes which order; [`row_dots`](super::row_dots) computes many row dots at once
//! in this order, and [`gemm`](super::gemm)'s micro-kernels keep the fused chain's. Each is
//! written for one output, so that the faster loops have a reference to equal bit for bit.
//!
//! Measured against PyTorch 2.13.0 with MKL on an Intel AVX-512 processor
//! (`tests/fixtures/ops_fixtures.json`, `edge_fixtures.json`, `shared/tests/kernels.rs`).

/// `Σ a[i]·b[i]` as MKL's `sdot` (AVX-512) adds two contiguous vectors, which is what
/// `torch.dot` calls: the products are fused into four accumulators of 16 lanes, a round of
/// 64 entries at a time (entry `64·r + 16·v + l` into lane `l` of accumulator `v`); then
/// one round of 32 into the first two, one of 16 into the first, and the last fewer than
/// 16 (masked) into the first as well. The accumulators are added lane by lane (`(0 + 1)
/// + (2 + 3)`, the last two only if a round of 64 ran), and the 16 lanes are reduced as
/// the vector instructions do: the upper eight onto the lower, then four onto four, then
/// neighbours (`(l0 + l1) + (l2 + l3)`).
///
/// # Shapes
/// `a` and `b` of the same length.
pub fn sdot_sum(a: &[f32], b: &[f32]) -> f32 {
    let k = a.len();
    let mut accs = [[0.0f32; 16]; 4];
    let mut add = |acc: usize, e: usize| {
        accs[acc][e % 16] = a[e].mul_add(b[e], accs[acc][e % 16]);
    };
    let mut e = 0;
    while e + 64 <= k {
        (e..e + 64).for_each(|i| add((i - e) / 16, i));
        e += 64;
    }
    let four = e > 0;
    if e + 32 <= k {
        (e..e + 32).for_each(|i| add((i - e) / 16, i));
        e += 32;
    }
    (e..k).for_each(|i| add(0, i));
    let pairwise = |x: [f32; 16], y: [f32; 16]| std::array::from_fn(|l| x[l] + y[l]);
    let mut lanes: [f32; 16] = pairwise(accs[0], accs[1]);
    if four {
        lanes = pairwise(lanes, pairwise(accs[2], accs[3]));
    }
    let eight: [f32; 8] = std::array::from_fn(|l| lanes[l] + lanes[l + 8]);
    let four: [f32; 4] = std::array::from_fn(|l| eight[l] + eight[l + 4]);
    (four[0] + four[1]) + (four[2] + four[3])
}

/// `Σ x·y` as MKL's `sdot` adds two vectors when either is strided: four scalar
/// accumulators take the products in turn (fused), then `(0 + 2)` and `(1 + 3)` become a
/// pair, the next two products are fused into the pair's two halves, the halves are
/// added, and a last product is fused onto the sum.
///
/// # Shapes
/// Any number of pairs.
pub fn strided_sdot_sum(mut pairs: impl ExactSizeIterator<Item = (f32, f32)>) -> f32 {
    let k = pairs.len();
    let mut next = || pairs.next().expect("as many pairs as counted");
    let mut accs = [0.0f32; 4];
    for e in 0..k / 4 * 4 {
        let (x, y) = next();
        accs[e % 4] = x.mul_add(y, accs[e % 4]);
    }
    let mut halves = [accs[0] + accs[2], accs[1] + accs[3]];
    if k % 4 >= 2 {
        for half in &mut halves {
            let (x, y) = next();
            *half = x.mul_add(y, *half);
        }
    }
    let sum = halves[0] + halves[1];
    if k % 2 == 1 {
        let (x, y) = next();
        return x.mul_add(y, sum);
    }
    sum
}

/// `Σ x·y` in order, each product rounded before it is added: what `Order::Plain` computes
/// for each output, written out for the tests.
#[cfg(test)]
fn plain_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    pairs.fold(0.0, |acc, (x, y)| acc + x * y)
}

/// `Σ x·y` in order, each product fused into the running sum (one rounding per step).
#[inline(always)]
pub fn fused_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    pairs.fold(0.0, |acc, (x, y)| x.mul_add(y, acc))
}

/// `Σ x·y` of at most 16 products, added as 16 vector lanes are reduced: lane `i` holds
/// product `i` (or 0), then lane `i` and lane `i + half` are added while more than one is
/// left (`half` = 8, 4, 2, 1).
#[inline(always)]
pub fn lane_sum(pairs: impl Iterator<Item = (f32, f32)>) -> f32 {
    let mut lanes = [0.0f32; 16];
    for (lane, (x, y)) in lanes.iter_mut().zip(pairs) {
        *lane = x * y;
    }
    add_by_halves(lanes)
}

/// `Σ row·x` as MKL's `sgemv` adds output `index` of `count` outputs, each a dot product
/// of a contiguous row with the vector.
///
/// The outputs go in blocks of four: an output in a block starts lane 0 with the first
/// product, fuses the next products into lanes 0 to 15 in turn, adds the lanes by halves
/// after every full round of 16 when more products follow, and adds them by halves at the
/// end. The one to three outputs after the last block go through a tail loop: see
/// `tail_dot`. Measured on PyTorch 2.13.0 (MKL on an AVX-512 Intel processor) for up to
/// 4099 outputs of up to 2049 products.
///
/// # Shapes
/// `row`: `[k]`, `x`: `[k]`.
#[inline(always)]
pub fn row_dot_sum(row: &[f32], x: &[f32], index: usize, count: usize) -> f32 {
    let blocked = count / 4 * 4;
    if index >= blocked {
        // The first and third outputs of the tail keep two sets of lanes, the second one.
        return tail_dot(row, x, index - blocked != 1);
    }
    let k = x.len();
    if k == 0 {
        return 0.0;
    }
    let mut lanes = first_lanes(row, x);
    let rounds = full_rounds(k);
    fused_rounds(&mut lanes, &row[1..1 + 16 * rounds], &x[1..1 + 16 * rounds]);
    finish_row_dot(lanes, row, x)
}

/// The 16 lanes of an output of [`row_dot_sum`] in a block of four before its rounds: the
/// first product in lane 0.
///
/// # Shapes
/// `row`, `x`: `[k]` with `k ≥ 1`.
#[inline(always)]
pub(super) fn first_lanes(row: &[f32], x: &[f32]) -> [f32; 16] {
    let mut lanes = [0.0f32; 16];
    lanes[0] = row[0] * x[0];
    lanes
}

/// How many full rounds of 16 products follow the first product of a dot product of `k ≥ 1`.
///
/// # Shapes
/// Numbers only.
#[inline(always)]
pub(super) fn full_rounds(k: usize) -> usize {
    (k - 1) / 16
}

/// The end of [`row_dot_sum`] for an output in a block of four, once its full rounds are in
/// `lanes`: when a partial round follows full ones, the lanes are added by halves into lane
/// 0 first; the partial round is fused into lanes 0, 1, ...; then the lanes are added by
/// halves.
///
/// # Shapes
/// `row`, `x`: `[k]` with `k ≥ 1`.
#[inline(always)]
pub(super) fn finish_row_dot(mut lanes: [f32; 16], row: &[f32], x: &[f32]) -> f32 {
    let k = x.len();
    let (rounds, rest) = (full_rounds(k), (k - 1) % 16);
    if rounds > 0 && rest > 0 {
        let sum = add_by_halves(lanes);
        lanes = [0.0; 16];
        lanes[0] = sum;
    }
    for (lane, e) in (1 + 16 * rounds..k).enumerate() {
        lanes[lane] = row[e].mul_add(x[e], lanes[lane]);
    }
    add_by_halves(lanes)
}

/// `lanes[l] = fma(row[16·r + l], x[16·r + l], lanes[l])` for each round `r` of 16, in order:
/// 16 independent fused chains, as two 8-lane vector registers where the processor has them
/// (the same operation lane by lane, so the same bits).
///
/// # Shapes
/// `row`, `x`: the same multiple of 16.
#[inline(always)]
fn fused_rounds(lanes: &mut [f32; 16], row: &[f32], x: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the processor has AVX2 and the FMA instructions.
        unsafe { fused_rounds_avx2(lanes, row, x) };
        return;
    }
    for (r, v) in row.chunks_exact(16).zip(x.chunks_exact(16)) {
        for lane in 0..16 {
            lanes[lane] = r[lane].mul_add(v[lane], lanes[lane]);
        }
    }
}

/// [`fused_rounds`] in two 8-lane registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fused_rounds_avx2(lanes: &mut [f32; 16], row: &[f32], x: &[f32]) {
    use std::arch::x86_64::{_mm256_fmadd_ps, _mm256_loadu_ps, _mm256_storeu_ps};
    let n = row.len().min(x.len()) / 16 * 16;
    // SAFETY: every load reads 8 floats inside `row[..n]`, `x[..n]` or `lanes`, every store
    // writes 8 floats inside `lanes`; unaligned loads and stores accept any address.
    unsafe {
        let mut low = _mm256_loadu_ps(lanes.as_ptr());
        let mut high = _mm256_loadu_ps(lanes.as_ptr().add(8));
        let (r, v) = (row.as_ptr(), x.as_ptr());
        let mut e = 0;
        while e < n {
            low = _mm256_fmadd_ps(
                _mm256_loadu_ps(r.add(e)),
                _mm256_loadu_ps(v.add(e)),
                low,
            );
            high = _mm256_fmadd_ps(
                _mm256_loadu_ps(r.add(e + 8)),
                _mm256_loadu_ps(v.add(e + 8)),
                high,
            );
            e += 16;
        }
        _mm256_storeu_ps(lanes.as_mut_ptr(), low);
        _mm256_storeu_ps(lanes.as_mut_ptr().add(8), high);
    }
}

/// The tail loop of [`row_dot_sum`]: the products after the first are fused into 16 lanes
/// (with `two_sets`, rounds of 32 go into two sets of 16 lanes first, added lane by lane),
/// the lanes are added by halves, and the first product is added last.
#[inline(always)]
fn tail_dot(row: &[f32], x: &[f32], two_sets: bool) -> f32 {
    let k = x.len();
    if k == 0 {
        return 0.0;
    }
    let mut lanes = [0.0f32; 16];
    let mut e = 1;
    if two_sets && k > 32 {
        let (mut low, mut high) = ([0.0f32; 16], [0.0f32; 16]);
        while e + 32 <= k {
            let (r, v) = (&row[e..][..32], &x[e..][..32]);
            for lane in 0..16 {
                low[lane] = r[lane].mul_add(v[lane], low[lane]);
                high[lane] = r[16 + lane].mul_add(v[16 + lane], high[lane]);
            }
            e += 32;
        }
        for lane in 0..16 {
            lanes[lane] = low[lane] + high[lane];
        }
    }
    for (t, e) in (e..k).enumerate() {
        lanes[t % 16] = row[e].mul_add(x[e], lanes[t % 16]);
    }
    row[0] * x[0] + add_by_halves(lanes)
}

/// `Σ column·x` as MKL's `sgemv` adds output `index` of `count` outputs when the matrix's
/// columns are contiguous: it sweeps over the vector's entries, updating a block of 16
/// outputs at a time.
///
/// Inside a block of 16 outputs, with at least 8 products, each group of 8 products
/// `p0..p7` is added to the running sum `y` as `(fma(p4, fma(p6, y)) + fma(p5, p7)) +
/// (fma(p0, p2) + fma(p1, p3))`, where `fma(p, s)` fuses product `p` into `s`; the last
/// `k mod 8` products are fused one by one. The outputs after the last block of 16 (and
/// every output when `k < 8`) are plain fused chains. Measured as [`row_dot_sum`].
///
/// # Shapes
/// `column`: `[k]` (the matrix entries of this output), `x`: `[k]`.
#[inline(always)]
pub fn column_sweep_sum(
    column: &[f32],
    x: &[f32],
    index: usize,
    count: usize,
) -> f32 {
    let k = x.len();
    let pairs = column.iter().copied().zip(x.iter().copied());
    if index >= count / 16 * 16 || k < 8 {
        return fused_sum(pairs);
    }
    let mut y = 0.0f32;
    let groups = k / 8;
    for g in 0..groups {
        let (b, v) = (&column[8 * g..8 * g + 8], &x[8 * g..8 * g + 8]);
        let even_high = b[4].mul_add(v[4], b[6].mul_add(v[6], y));
        let odd_high = b[5].mul_add(v[5], b[7] * v[7]);
        let even_low = b[0].mul_add(v[0], b[2] * v[2]);
        let odd_low = b[1].mul_add(v[1], b[3] * v[3]);
        y = (even_high + odd_high) + (even_low + odd_low);
    }
    pairs
        .skip(8 * groups)
        .fold(y, |acc, (b, v)| b.mul_add(v, acc))
}

/// Adds 16 lanes as a vector unit reduces them: lane `i` plus lane `i + 8`, then `i + 4`,
/// `i + 2`, `i + 1`.
#[inline(always)]
fn add_by_halves(mut lanes: [f32; 16]) -> f32 {
    let mut half = 8;
    while half > 0 {
        for i in 0..half {
            lanes[i] += lanes[i + half];
        }
        half /= 2;
    }
    lanes[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgemv_adds_a_tail_output_with_its_first_product_last() {
        let (row, x) = ([1.0f32, 1e8, -1e8], [1.0f32; 3]);
        // In a block of four, 16 lanes added by halves: (1 + -1e8) + 1e8 = 0.
        assert_eq!(row_dot_sum(&row, &x, 0, 5), 0.0);
        // The fifth of five outputs is in the tail: 1 + (1e8 + -1e8) = 1.
        assert_eq!(row_dot_sum(&row, &x, 4, 5), 1.0);
    }

    #[test]
    fn sgemv_sweeps_columns_in_groups_of_eight_inside_a_block_of_16() {
        let column = [1.0f32, 0.0, 0.0, 0.0, 1e8, 0.0, -1e8, 0.0];
        let x = [1.0f32; 8];
        // In a block: fma(p4, fma(p6, 0)) = 0, then + fma(p0, p2) = 1.
        assert_eq!(column_sweep_sum(&column, &x, 3, 16), 1.0);
        // After the last block, a fused chain in order: (1 + 1e8) - 1e8 = 0.
        assert_eq!(column_sweep_sum(&column, &x, 16, 17), 0.0);
    }

    /// How many of the other entries (all 1) `sdot_sum` adds into entry `i` or `j` (one
    /// `2^40`, the other `-2^40`) before the two meet and cancel: a picture of its tree.
    fn absorbed_before_meeting(k: usize, i: usize, j: usize) -> usize {
        let mut a = vec![1.0f32; k];
        (a[i], a[j]) = (2f32.powi(40), -(2f32.powi(40)));
        k - 2 - sdot_sum(&a, &vec![1.0; k]) as usize
    }

    #[test]
    fn sdot_adds_in_mkls_tree() {
        // Each case as MKL's AVX-512 `sdot` in libtorch 2.13.0 adds it (probed the same way).
        let cases = [
            // 16 lanes: the upper eight onto the lower, then four onto four, then neighbours.
            (16, 8, 0),
            (16, 4, 2),
            (16, 1, 6),
            (16, 2, 14),
            // A masked tail goes into the first accumulator, on top of the lanes' entries.
            (24, 16, 0),
            (24, 8, 1),
            // A round of 32 fills two accumulators, the next 16 the first again.
            (48, 32, 0),
            (48, 16, 1),
            // Rounds of 64 over four accumulators; a round of 32 after them into two.
            (96, 64, 0),
            (96, 16, 2),
            (96, 32, 4),
            (200, 128, 1),
            (200, 192, 2),
        ];
        for (k, j, absorbed) in cases {
            assert_eq!(
                absorbed_before_meeting(k, 0, j),
                absorbed,
                "k = {k}, entries 0 and {j}"
            );
        }
    }

    #[test]
    fn strided_sdot_adds_in_mkls_tree() {
        // `absorbed_before_meeting` for the strided path, as MKL adds it.
        let absorbed = |k: usize, i: usize, j: usize| {
            let mut a = vec![1.0f32; k];
            (a[i], a[j]) = (2f32.powi(40), -(2f32.powi(40)));
            let sum = strided_sdot_sum(
                a.iter().map(|&x| (x, 1.0)).collect::<Vec<_>>().into_iter(),
            );
            k - 2 - sum as usize
        };
        // Four accumulators in turn, then (0 + 2) and (1 + 3).
        assert_eq!(absorbed(8, 0, 4), 0);
        assert_eq!(absorbed(8, 0, 2), 2);
        assert_eq!(absorbed(8, 0, 1), 6);
        // Two more products go into the two halves, a third onto the sum.
        assert_eq!(absorbed(6, 4, 0), 1);
        assert_eq!(absorbed(6, 4, 5), 4);
        assert_eq!(absorbed(7, 6, 0), 5);
    }

    #[test]
    fn the_three_orders_differ_only_in_rounding() {
        let pairs = [(1.0f32, 1e8f32), (1.0, 1.0), (1.0, -1e8)];
        // Plain: (1e8 + 1) rounds to 1e8, minus 1e8 gives 0.
        assert_eq!(plain_sum(pairs.into_iter()), 0.0);
        // Lanes: (p0 + p2) + p1 = 0 + 1.
        assert_eq!(lane_sum(pairs.into_iter()), 1.0);
        assert_eq!(fused_sum([(2.0f32, 3.0f32), (4.0, 5.0)].into_iter()), 26.0);
    }
}
