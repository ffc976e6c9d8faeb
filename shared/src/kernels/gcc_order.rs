//! The order in which GCC's C++ library (libstdc++) selects and sorts, step for step.
//!
//! PyTorch's CPU `topk` puts `(value, index)` pairs in a vector and calls
//! `std::partial_sort`, or `std::nth_element` followed by `std::sort`, comparing the values
//! only. None of these is stable: when two values are equal, which index comes first depends
//! on every swap the algorithm makes. The PyTorch 2.13 wheel was compiled with GCC 13, so
//! these are libstdc++'s algorithms (`bits/stl_algo.h`, `bits/stl_heap.h`), transcribed with
//! the same index arithmetic so that equal values come out in the same order.
//!
//! `less(a, b)` is the comparison the C++ code is given ("`a` goes before `b`").

/// `std::__lg`: the floor of the base-2 logarithm, for `n > 0`.
fn lg(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// `std::__push_heap`: moves `value` up from `hole` towards `top`.
fn push_heap<T: Copy>(
    v: &mut [T],
    mut hole: usize,
    top: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[parent], &value) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = value;
}

/// `std::__adjust_heap`: sifts the hole at `hole` down to a leaf, then pushes `value` up.
fn adjust_heap<T: Copy>(
    v: &mut [T],
    mut hole: usize,
    len: usize,
    value: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while len >= 1 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    push_heap(v, hole, top, value, less);
}

/// `std::__make_heap` on the whole slice.
fn make_heap<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[parent];
        adjust_heap(v, parent, len, value, less);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// `std::__pop_heap(first, last, result)`: the heap is `v[..last]`; its top goes to
/// `v[result]` and the old `v[result]` is sifted into the heap.
fn pop_heap<T: Copy>(
    v: &mut [T],
    last: usize,
    result: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let value = v[result];
    v[result] = v[0];
    adjust_heap(v, 0, last, value, less);
}

/// `std::__heap_select(first, middle, last)`: the `middle` best elements end up in
/// `v[..middle]`, as a heap.
fn heap_select<T: Copy>(v: &mut [T], middle: usize, less: &impl Fn(&T, &T) -> bool) {
    make_heap(&mut v[..middle], less);
    for i in middle..v.len() {
        if less(&v[i], &v[0]) {
            pop_heap(v, middle, i, less);
        }
    }
}

/// `std::__sort_heap` on the whole slice.
fn sort_heap<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let mut last = v.len();
    while last > 1 {
        last -= 1;
        pop_heap(v, last, last, less);
    }
}

/// `std::partial_sort(first, first + middle, last)`: the `middle` best elements, sorted, in
/// `v[..middle]`; the rest in no particular (but determined) order.
pub(crate) fn partial_sort<T: Copy>(
    v: &mut [T],
    middle: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    heap_select(v, middle, less);
    sort_heap(&mut v[..middle], less);
}

/// `std::__move_median_to_first(result, a, b, c)`.
fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let median = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, median);
}

/// `std::__unguarded_partition(first, last, pivot)`, the pivot sitting at `v[pivot]`
/// outside `v[first..last]`.
fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

/// `std::__unguarded_partition_pivot`: the median of three moved to the front, then a
/// partition of the rest around it.
fn unguarded_partition_pivot<T: Copy>(
    v: &mut [T],
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    let last = v.len();
    let mid = last / 2;
    move_median_to_first(v, 0, 1, mid, last - 1, less);
    unguarded_partition(v, 1, last, 0, less)
}

/// `std::__unguarded_linear_insert(last)`: moves `v[last]` left to its place; something
/// not greater is known to stand before it.
fn unguarded_linear_insert<T: Copy>(
    v: &mut [T],
    mut last: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let value = v[last];
    let mut next = last - 1;
    while less(&value, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = value;
}

/// `std::__insertion_sort` on the whole slice.
fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let value = v[i];
            v.copy_within(0..i, 1);
            v[0] = value;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

/// Below this many elements, `std::sort` leaves a range to the final insertion sort.
const SORT_THRESHOLD: usize = 16;

/// `std::__introsort_loop`.
fn introsort_loop<T: Copy>(
    mut v: &mut [T],
    mut depth: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    while v.len() > SORT_THRESHOLD {
        if depth == 0 {
            let len = v.len();
            partial_sort(v, len, less);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, less);
        let (left, right) = v.split_at_mut(cut);
        introsort_loop(right, depth, less);
        v = left;
    }
}

/// `std::sort`: introsort, then one insertion sort over the nearly sorted whole.
pub(crate) fn sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.is_empty() {
        return;
    }
    introsort_loop(v, lg(v.len()) * 2, less);
    // `std::__final_insertion_sort`.
    if v.len() > SORT_THRESHOLD {
        insertion_sort(&mut v[..SORT_THRESHOLD], less);
        for i in SORT_THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

/// `std::nth_element(first, first + nth, last)`: `v[nth]` becomes the element a full sort
/// would put there, with nothing after it going before it and nothing before it after it.
pub(crate) fn nth_element<T: Copy>(
    v: &mut [T],
    nth: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    if nth >= v.len() {
        return;
    }
    // `std::__introselect`, on the window `v[first..last]`.
    let (mut first, mut last) = (0, v.len());
    let mut depth = lg(v.len()) * 2;
    while last - first > 3 {
        if depth == 0 {
            let window = &mut v[first..last];
            heap_select(window, nth - first + 1, less);
            window.swap(0, nth - first);
            return;
        }
        depth -= 1;
        let cut = first + unguarded_partition_pivot(&mut v[first..last], less);
        if cut <= nth {
            first = cut;
        } else {
            last = cut;
        }
    }
    insertion_sort(&mut v[first..last], less);
}
