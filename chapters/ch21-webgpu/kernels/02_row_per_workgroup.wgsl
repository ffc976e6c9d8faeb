// Kernel 2: one workgroup per query row.
//
// The 64 invocations of a workgroup share one row: each scores every 64th key into
// workgroup memory, the row's maximum and sum are found by tree reductions (32 pairs,
// then 16, ..., then 1), with a barrier after every level so that no invocation reads
// a partial result before it is written, and each invocation then computes every 64th
// feature of the output. The scores never leave the workgroup.

struct Shape {
    heads: u32,
    queries: u32,
    keys: u32,
    d: u32,
    d_v: u32,
    causal: u32,
    scale: f32, // 1 / sqrt(d)
    splits: u32, // used by kernel 4 only
}

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>; // [heads, queries, d]
@group(0) @binding(2) var<storage, read> k: array<f32>; // [heads, keys, d]
@group(0) @binding(3) var<storage, read> v: array<f32>; // [heads, keys, d_v]
// [heads, queries, d_v]
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>; // [heads, queries]

const LOWEST: f32 = -0x1.fffffep+127f; // -3.4028235e38, written exactly
// Invocations per workgroup: a power of two, for the tree reductions.
const WORKGROUP: u32 = 64u;
// The longest row of scores the workgroup can hold; the host sets it from the
// adapter's workgroup memory.
override ROW_CAPACITY: u32 = 1024u;

var<workgroup> row_scores: array<f32, ROW_CAPACITY>;
var<workgroup> partial: array<f32, WORKGROUP>;

fn visible_keys(i: u32) -> u32 {
    if shape.causal != 0u {
        return min(i + 1u, shape.keys);
    }
    return shape.keys;
}

// Combines the 64 values in `partial` into partial[0], by maxima or by sums.
fn tree_reduce(t: u32, take_max: bool) {
    for (var half = WORKGROUP / 2u; half > 0u; half /= 2u) {
        if t < half {
            let other = partial[t + half];
            partial[t] = select(partial[t] + other, max(partial[t], other), take_max);
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wg: vec3u,
    @builtin(local_invocation_index) t: u32,
) {
    let i = wg.x; // the query
    let h = wg.y; // the head
    let row = h * shape.queries + i;
    let keys = visible_keys(i);
    let first_key = h * shape.keys;

    // 1. Scores of keys t, t + 64, ...; this invocation's largest one.
    var m = LOWEST;
    for (var j = t; j < keys; j += WORKGROUP) {
        var s = 0.0;
        for (var c = 0u; c < shape.d; c++) {
            s += q[row * shape.d + c] * k[(first_key + j) * shape.d + c];
        }
        s *= shape.scale;
        row_scores[j] = s;
        m = max(m, s);
    }
    partial[t] = m;
    workgroupBarrier();
    tree_reduce(t, true);
    let max_score = partial[0];
    workgroupBarrier(); // every invocation has read partial[0] before it changes

    // 2. The weights exp(s - max) in place, and their sum.
    var sum = 0.0;
    for (var j = t; j < keys; j += WORKGROUP) {
        let w = exp(row_scores[j] - max_score);
        row_scores[j] = w;
        sum += w;
    }
    partial[t] = sum;
    workgroupBarrier();
    tree_reduce(t, false);
    let total = partial[0];

    // 3. Features t, t + 64, ... of the output.
    for (var c = t; c < shape.d_v; c += WORKGROUP) {
        var o = 0.0;
        for (var j = 0u; j < keys; j++) {
            o += row_scores[j] * v[(first_key + j) * shape.d_v + c];
        }
        out[row * shape.d_v + c] = o / total;
    }
    if t == 0u {
        lse[row] = max_score + log(total);
    }
}
