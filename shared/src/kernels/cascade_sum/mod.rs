//! How PyTorch adds up float32 numbers on the CPU, reproduced so that `sum` and `mean` give
//! its exact bits.
//!
//! Float addition is not associative: `(a + b) + c` and `a + (b + c)` can differ in the last
//! bit, so a sum's result depends on the order of its additions. PyTorch's order has three
//! layers, each copied here:
//!
//! 1. **Which elements form a run.** PyTorch's `TensorIterator` reorders the dims by their
//!    strides in memory and merges dims that are contiguous with each other, so it walks
//!    memory, not the logical shape: the sum of a transposed matrix adds in the same order as
//!    the sum of the matrix. See [`Plan`].
//! 2. **How a run is added.** Not left to right (the error of that grows with the length)
//!    but as a *cascade*: 16 elements into a first accumulator, that accumulator into a second
//!    one every 16 elements, and so on up to four levels, a cheap cousin of pairwise
//!    summation. A contiguous run is also split into 8 lanes (AVX2 vectors) and, inside the
//!    cascade, into 4 interleaved accumulators. See [`row_sum`] and [`cascade`].
//! 3. **How threads split the work.** 32768 elements or more are cut into one piece per
//!    thread; the pieces' sums are added at the end. See [`sum`].
//!
//! Every PyTorch build sums with 8-lane vectors, the AVX-512 one included (PyTorch does not
//! register its AVX-512 sum kernel), so the capability does not matter here.
//!
//! Measured against PyTorch 2.13.0's `sum` and `mean` on one and several threads
//! (`tests/fixtures/ops_fixtures.json`, `norm_fixtures.json`), bit for bit.

use ndarray::IxDyn;

use super::parallel::GRAIN;
use crate::tensor::Tensor;

// The walk down the columns of a row-major matrix, every row added to all the columns'
// sums at once: part of this sum, in its order, so a module of it.
mod column_sums;

/// Floats per vector in PyTorch's sum kernel.
const LANES: usize = 8;

/// PyTorch's sum of a run of floats, as `t.sum()` of a 1-d tensor adds them.
pub(crate) fn run(xs: &[f32]) -> f32 {
    let n = xs.len();
    sum(&Tensor::from_vec(xs.to_vec(), &[n]), &[true])[0]
}

/// Sums `x` over the dims where `reduced` is true.
///
/// # Shapes
/// `reduced.len() == x.dim()`. Returns the sums in row-major order of the kept dims.
pub(crate) fn sum(x: &Tensor, reduced: &[bool]) -> Vec<f32> {
    let out_numel: usize = x
        .sizes()
        .iter()
        .zip(reduced)
        .filter(|&(_, r)| !r)
        .map(|(n, _)| n)
        .product();
    // The output starts at 0 and every piece's result is added to it, so a sum is never -0.
    let mut out = vec![0.0f32; out_numel];
    if x.numel() == 0 {
        return out;
    }
    let plan = Plan::new(x, reduced);
    if let Some(sums) = plan.column_sums(x) {
        return sums;
    }
    // The values in the order the plan walks them (no copy if they already are).
    let order: Vec<usize> = plan.order.iter().rev().copied().collect();
    let walked = x.array().permuted_axes(IxDyn(&order));
    let walked = walked.as_standard_layout();
    let values = walked.as_slice().expect("standard layout");

    let numel = x.numel();
    let threads = crate::cpu::get_num_threads();
    let at = Offsets { out: 0, read: 0 };
    if numel < GRAIN || threads == 1 {
        plan.for_each(values, &mut out, at, 0..numel);
    } else if out_numel == 1 {
        // One result: each thread sums a contiguous piece of the walk into its own slot, then
        // the slots are summed like any short run.
        let pieces = threads.min(numel.div_ceil(GRAIN));
        let piece = numel.div_ceil(pieces);
        let mut slots = vec![0.0f32; threads];
        for (t, slot) in slots.iter_mut().enumerate().take(pieces) {
            let range = t * piece..((t + 1) * piece).min(numel);
            plan.for_each(values, std::slice::from_mut(slot), at, range);
        }
        out[0] += if threads >= LANES {
            inner_run(|k| slots[k], threads)
        } else {
            row_sum(|k| slots[k], threads)
        };
    } else {
        plan.split_over_threads(values, &mut out, threads);
    }
    out
}

/// Where a loop starts, in the output and in the walked values.
#[derive(Clone, Copy)]
struct Offsets {
    out: isize,
    read: isize,
}

/// PyTorch's `TensorIterator` for a sum: dims in walking order (dim 0 is the fastest), with
/// the strides of the output, of the input as it lies in memory, and of our walked copy.
struct Plan {
    /// The logical dims, fastest first, before merging.
    order: Vec<usize>,
    shape: Vec<usize>,
    /// Output strides: 0 along the reduced dims.
    out: Vec<isize>,
    /// The input's strides in memory: they decide which loop PyTorch picks.
    input: Vec<isize>,
    /// Strides in the walked copy of the values, which is contiguous in walking order.
    read: Vec<isize>,
}

impl Plan {
    fn new(x: &Tensor, reduced: &[bool]) -> Plan {
        let shape = x.sizes().to_vec();
        let input: Vec<isize> = x.array().strides().to_vec();
        // The output is a fresh row-major tensor of the kept dims, seen with stride 0 along
        // the reduced dims.
        let mut out = vec![0isize; shape.len()];
        let mut stride = 1isize;
        for d in (0..shape.len()).rev() {
            if !reduced[d] {
                out[d] = stride;
                stride *= shape[d] as isize;
            }
        }
        let order = walking_order(&shape, &out, &input);
        let mut plan = Plan {
            shape: order.iter().map(|&d| shape[d]).collect(),
            out: order.iter().map(|&d| out[d]).collect(),
            input: order.iter().map(|&d| input[d]).collect(),
            read: Vec::with_capacity(order.len()),
            order,
        };
        let mut stride = 1isize;
        for &n in &plan.shape {
            plan.read.push(stride);
            stride *= n as isize;
        }
        if plan.shape.is_empty() {
            // A 0-d tensor: one element, walked as one dim of size 1.
            plan.shape.push(1);
            plan.out.push(0);
            plan.input.push(0);
            plan.read.push(1);
        }
        plan.merge_dims();
        plan
    }

    /// The sums down the columns of a row-major matrix, read in place by
    /// [`column_sums`](column_sums::column_sums), when the walk is one: a reduced dim
    /// of rows over a kept dim of at least [`LANES`] columns, the values contiguous. `None`
    /// for every other walk.
    fn column_sums(&self, x: &Tensor) -> Option<Vec<f32>> {
        let [rows, columns] = self.shape[..] else {
            return None;
        };
        let columns_across =
            self.out == [0, 1] && self.input == [columns as isize, 1];
        if !columns_across || columns < LANES {
            return None;
        }
        let values = x.array();
        let values = values.as_slice()?;
        Some(column_sums::column_sums(values, rows, columns))
    }

    /// Merges neighbouring dims that step through memory as one (for every operand), and
    /// drops dims of size 1, as `TensorIterator::coalesce_dimensions` does.
    fn merge_dims(&mut self) {
        if self.shape.len() <= 1 {
            return;
        }
        let mergeable = |p: &Plan, a: usize, b: usize| {
            p.shape[a] == 1
                || p.shape[b] == 1
                || (p.shape[a] as isize * p.out[a] == p.out[b]
                    && p.shape[a] as isize * p.input[a] == p.input[b])
        };
        let mut prev = 0;
        for d in 1..self.shape.len() {
            if mergeable(self, prev, d) {
                if self.shape[prev] == 1 {
                    self.out[prev] = self.out[d];
                    self.input[prev] = self.input[d];
                    self.read[prev] = self.read[d];
                }
                self.shape[prev] *= self.shape[d];
            } else {
                prev += 1;
                self.shape[prev] = self.shape[d];
                self.out[prev] = self.out[d];
                self.input[prev] = self.input[d];
                self.read[prev] = self.read[d];
            }
        }
        for v in [&mut self.out, &mut self.input, &mut self.read] {
            v.truncate(prev + 1);
        }
        self.shape.truncate(prev + 1);
    }

    /// Runs the sum loop over the elements `range` of the walk (PyTorch's `serial_for_each`):
    /// as many whole blocks of the first two dims as the range allows.
    fn for_each(
        &self,
        x: &[f32],
        out: &mut [f32],
        at: Offsets,
        range: std::ops::Range<usize>,
    ) {
        let strides = |v: &[isize]| [v[0], v.get(1).copied().unwrap_or(0)];
        let block = |at: Offsets, size: [usize; 2]| Block {
            at,
            out: strides(&self.out),
            input: strides(&self.input),
            read: strides(&self.read),
            size,
        };
        if self.shape.len() <= 1 {
            let start = Offsets {
                out: at.out + range.start as isize * self.out[0],
                read: at.read + range.start as isize * self.read[0],
            };
            return block(start, [range.len(), 1]).run(x, out);
        }
        // The multi-index of the next element, fastest dim first.
        let mut index = vec![0usize; self.shape.len()];
        let mut rest = range.start;
        for (i, &n) in index.iter_mut().zip(&self.shape) {
            *i = rest % n;
            rest /= n;
        }
        let mut offset = range.start;
        while offset < range.end {
            let step0 = (self.shape[0] - index[0]).min(range.end - offset);
            let step1 = if step0 == self.shape[0] {
                (self.shape[1] - index[1]).min((range.end - offset) / self.shape[0])
            } else {
                1
            };
            let position = |strides: &[isize], base: isize| {
                base + index
                    .iter()
                    .zip(strides)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>()
            };
            let start = Offsets {
                out: position(&self.out, at.out),
                read: position(&self.read, at.read),
            };
            block(start, [step0, step1]).run(x, out);
            offset += step0 * step1;
            // Advance the multi-index by the block just done, carrying into slower dims.
            let (mut dim, mut carry) =
                if step1 == 1 { (0, step0) } else { (1, step1) };
            while dim < index.len() && carry > 0 {
                index[dim] += carry;
                carry = usize::from(index[dim] >= self.shape[dim]);
                if carry == 1 {
                    index[dim] -= self.shape[dim];
                }
                dim += 1;
            }
        }
    }

    /// Several results and enough elements: PyTorch splits one kept dim into one piece per
    /// thread (`parallel_dim_reduction`). Pieces of a dim that is contiguous in memory start
    /// at multiples of 32 floats (128 bytes), so the blocks of 32 columns that the
    /// column-wise sum uses stay whole.
    fn split_over_threads(&self, x: &[f32], out: &mut [f32], threads: usize) {
        // The slowest kept dim with at least one element per thread, else the largest.
        let kept = |d: usize| self.out[d] != 0;
        let mut dim = self.shape.len() - 1;
        for d in (0..self.shape.len()).rev().take_while(|&d| kept(d)) {
            if self.shape[d] >= threads {
                dim = d;
                break;
            } else if self.shape[d] > self.shape[dim] {
                dim = d;
            }
        }
        let columns = self.shape[dim];
        let pieces = threads.min(columns);
        let piece = columns.div_ceil(pieces);
        let round = self.input[dim] == 1;
        for t in 0..pieces {
            let (mut begin, mut end) = (t * piece, ((t + 1) * piece).min(columns));
            if begin >= columns {
                break;
            }
            if round {
                begin -= begin % 32;
                if end != columns {
                    end -= end % 32;
                }
            }
            if begin == end {
                continue;
            }
            let mut narrowed = Plan {
                order: self.order.clone(),
                shape: self.shape.clone(),
                out: self.out.clone(),
                input: self.input.clone(),
                read: self.read.clone(),
            };
            narrowed.shape[dim] = end - begin;
            let at = Offsets {
                out: begin as isize * self.out[dim],
                read: begin as isize * self.read[dim],
            };
            let numel = narrowed.shape.iter().product();
            narrowed.for_each(x, out, at, 0..numel);
        }
    }
}

/// The dims from fastest to slowest as `TensorIterator::reorder_dimensions` sorts them:
/// reduced dims first, then by the output's strides, then by the input's, a tie going to
/// the smaller dim. Starts from the reversed logical order and sorts by insertion, as PyTorch
/// does (with ties left where they are).
fn walking_order(shape: &[usize], out: &[isize], input: &[isize]) -> Vec<usize> {
    let ndim = shape.len();
    let mut order: Vec<usize> = (0..ndim).rev().collect();
    if ndim <= 1 {
        return order;
    }
    // Some(true) when dim `a` must come after dim `b`, None when undecided.
    let after = |a: usize, b: usize| -> Option<bool> {
        if (out[a] == 0) != (out[b] == 0) {
            return Some(out[b] == 0);
        }
        for strides in [out, input] {
            let (sa, sb) = (strides[a], strides[b]);
            if sa == 0 || sb == 0 {
                continue;
            }
            if sa != sb {
                return Some(sa > sb);
            }
            if shape[a] > shape[b] {
                return Some(true);
            }
        }
        None
    };
    for i in 1..ndim {
        let mut moving = i;
        for j in (0..i).rev() {
            match after(order[j], order[moving]) {
                Some(true) => {
                    order.swap(j, moving);
                    moving = j;
                }
                Some(false) => break,
                None => {}
            }
        }
    }
    order
}

/// One call of PyTorch's sum loop: a block of `size[0] × size[1]` elements.
struct Block {
    at: Offsets,
    out: [isize; 2],
    input: [isize; 2],
    read: [isize; 2],
    size: [usize; 2],
}

impl Block {
    fn run(mut self, x: &[f32], out: &mut [f32]) {
        // The loop wants the reduced dim first.
        if self.out[0] != 0 && self.out[1] == 0 {
            for v in [&mut self.out, &mut self.input, &mut self.read] {
                v.swap(0, 1);
            }
            self.size.swap(0, 1);
        }
        let [n0, n1] = self.size;
        let value = |start: isize, stride: isize| {
            move |k: usize| x[(start + k as isize * stride) as usize]
        };
        let line =
            |j: usize| value(self.at.read + j as isize * self.read[1], self.read[0]);
        let target = |j: usize| (self.at.out + j as isize * self.out[1]) as usize;
        if self.out[0] != 0 {
            // Nothing reduced here (a dim of size 1 was summed): each element is one result.
            for j in 0..n1 {
                for i in 0..n0 {
                    let o = (self.at.out
                        + i as isize * self.out[0]
                        + j as isize * self.out[1])
                        as usize;
                    out[o] += line(j)(i);
                }
            }
        } else if self.input[0] == 1 && n0 >= LANES {
            // Each result is a contiguous run: 8 lanes.
            for j in 0..n1 {
                out[target(j)] += inner_run(line(j), n0);
            }
        } else if self.input[1] == 1 && n1 >= LANES {
            // The results lie side by side in memory: vectors across them. Columns in whole
            // groups of 32 (four vectors) take a plain cascade each, the others `row_sum`.
            let whole = n1 / 32 * 32;
            for j in 0..n1 {
                out[target(j)] += if j < whole {
                    cascade(line(j), n0)
                } else {
                    row_sum(line(j), n0)
                };
            }
        } else {
            // Scalar loops: one result at a time when its run is the faster dim, else four
            // results side by side (each a plain cascade), the last few with `row_sum`.
            let whole = if self.input[0] < self.input[1] {
                0
            } else {
                n1 / 4 * 4
            };
            for j in 0..n1 {
                out[target(j)] += if j < whole {
                    cascade(line(j), n0)
                } else {
                    row_sum(line(j), n0)
                };
            }
        }
    }
}

/// A contiguous run of `n ≥ 8` values, as PyTorch's `vectorized_inner_sum` adds it: lane `l`
/// sums elements `l, l + 8, l + 16, ...` with [`row_sum`]; then, starting from 0, the
/// elements after the last whole vector, then the 8 lanes in order.
fn inner_run(value: impl Fn(usize) -> f32, n: usize) -> f32 {
    let vectors = n / LANES;
    let mut total = 0.0f32;
    for k in vectors * LANES..n {
        total += value(k);
    }
    for lane in 0..LANES {
        total += row_sum(|g| value(g * LANES + lane), vectors);
    }
    total
}

/// `row_sum`: four interleaved accumulators (element `4g + j` goes to accumulator `j`), each a
/// [`cascade`]; the last `n mod 4` elements go to the first; then `((a0 + a1) + a2) + a3`.
fn row_sum(value: impl Fn(usize) -> f32, n: usize) -> f32 {
    let groups = n / 4;
    let mut acc = [0.0f32; 4];
    for (j, a) in acc.iter_mut().enumerate() {
        *a = cascade(|g| value(4 * g + j), groups);
    }
    for k in groups * 4..n {
        acc[0] += value(k);
    }
    ((acc[0] + acc[1]) + acc[2]) + acc[3]
}

/// PyTorch's cascade sum (`multi_row_sum`) of `n` values with four levels: level 0 takes
/// `step` values (16 for any n below 2^20), then moves into level 1; level 1 moves into level
/// 2 every `step` moves, and so on. Each accumulator only ever adds values of similar size,
/// so the rounding error grows like log n instead of n.
fn cascade(value: impl Fn(usize) -> f32, n: usize) -> f32 {
    let level_power = 4.max(ceil_log2(n) / 4);
    let step = 1usize << level_power;
    let mask = step - 1;
    let mut level = [0.0f32; 4];
    let mut i = 0;
    while i + step <= n {
        for _ in 0..step {
            level[0] += value(i);
            i += 1;
        }
        for j in 1..4 {
            level[j] += level[j - 1];
            level[j - 1] = 0.0;
            if i & (mask << (j * level_power)) != 0 {
                break;
            }
        }
    }
    while i < n {
        level[0] += value(i);
        i += 1;
    }
    ((level[0] + level[1]) + level[2]) + level[3]
}

/// ⌈log2 n⌉, and 1 for n ≤ 2 (PyTorch's `CeilLog2`).
pub(crate) fn ceil_log2(n: usize) -> usize {
    if n <= 2 {
        1
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}
