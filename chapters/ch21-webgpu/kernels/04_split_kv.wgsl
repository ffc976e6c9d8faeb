// Kernel 4: split-KV decoding (Flash-Decoding).
//
// Decoding asks for one new query per head over a long cache of keys. Kernels 2 and 3
// would give that work to one workgroup per head and leave the rest of the GPU idle.
// Here the keys are cut into `splits` parts and every (head, part) gets a workgroup
// of its own: `partials` computes each part's attention unfinished (its maximum, its
// sum of exp(s - max) and its output not yet divided by that sum, chapter 9's
// `Partial`), and `merge` rescales the parts to their common maximum and adds them up
// (chapter 9's `merge_partials`), one invocation per head and output feature.

struct Shape {
    heads: u32,
    queries: u32,
    keys: u32,
    d: u32,
    d_v: u32,
    causal: u32,
    scale: f32, // 1 / sqrt(d)
    splits: u32,
}

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>; // [heads, queries, d]
@group(0) @binding(2) var<storage, read> k: array<f32>; // [heads, keys, d]
@group(0) @binding(3) var<storage, read> v: array<f32>; // [heads, keys, d_v]
// [heads, queries, d_v]
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>; // [heads, queries]
// Each part's maximum and sum, [heads, queries, splits], and output, [.., splits,
// d_v].
@group(0) @binding(6) var<storage, read_write> part_max: array<f32>;
@group(0) @binding(7) var<storage, read_write> part_sum: array<f32>;
@group(0) @binding(8) var<storage, read_write> part_out: array<f32>;

const LOWEST: f32 = -0x1.fffffep+127f; // -3.4028235e38, written exactly
const WORKGROUP: u32 = 64u;
// The most keys one part may hold (its scores stay in workgroup memory).
override PART_CAPACITY: u32 = 1024u;

var<workgroup> part_scores: array<f32, PART_CAPACITY>;
var<workgroup> partial: array<f32, WORKGROUP>;

fn tree_reduce(t: u32, take_max: bool) {
    for (var half = WORKGROUP / 2u; half > 0u; half /= 2u) {
        if t < half {
            let other = partial[t + half];
            partial[t] = select(partial[t] + other, max(partial[t], other), take_max);
        }
        workgroupBarrier();
    }
}

// Workgroup (part p, row): kernel 2's work over keys [p * part_len, (p + 1) *
// part_len).
@compute @workgroup_size(WORKGROUP)
fn partials(
    @builtin(workgroup_id) wg: vec3u,
    @builtin(local_invocation_index) t: u32,
) {
    let p = wg.x;
    let row = wg.y; // head h, query i
    let h = row / shape.queries;
    let part_len = (shape.keys + shape.splits - 1u) / shape.splits;
    let start = min(p * part_len, shape.keys);
    let len = min(part_len, shape.keys - start);
    let first_key = h * shape.keys + start;

    var m = LOWEST;
    for (var j = t; j < len; j += WORKGROUP) {
        var s = 0.0;
        for (var c = 0u; c < shape.d; c++) {
            s += q[row * shape.d + c] * k[(first_key + j) * shape.d + c];
        }
        s *= shape.scale;
        part_scores[j] = s;
        m = max(m, s);
    }
    partial[t] = m;
    workgroupBarrier();
    tree_reduce(t, true);
    let max_score = partial[0];
    workgroupBarrier();

    var sum = 0.0;
    for (var j = t; j < len; j += WORKGROUP) {
        let w = exp(part_scores[j] - max_score);
        part_scores[j] = w;
        sum += w;
    }
    partial[t] = sum;
    workgroupBarrier();
    tree_reduce(t, false);

    let slot = row * shape.splits + p;
    for (var c = t; c < shape.d_v; c += WORKGROUP) {
        var o = 0.0;
        for (var j = 0u; j < len; j++) {
            o += part_scores[j] * v[(first_key + j) * shape.d_v + c];
        }
        part_out[slot * shape.d_v + c] = o;
    }
    if t == 0u {
        part_max[row * shape.splits + p] = max_score;
        part_sum[row * shape.splits + p] = partial[0];
    }
}

// Invocation (row, feature c): the parts rescaled to their common maximum and added.
@compute @workgroup_size(64)
fn merge(@builtin(global_invocation_id) id: vec3u) {
    let row = id.y;
    let c = id.x;
    if c >= shape.d_v {
        return;
    }
    let first = row * shape.splits;
    var max_score = LOWEST;
    for (var p = 0u; p < shape.splits; p++) {
        max_score = max(max_score, part_max[first + p]);
    }
    var sum = 0.0;
    var o = 0.0;
    for (var p = 0u; p < shape.splits; p++) {
        // The part's terms were exp(s - its max); times exp(its max - max) they are
        // exp(s - max).
        let rescale = exp(part_max[first + p] - max_score);
        sum += rescale * part_sum[first + p];
        o += rescale * part_out[(first + p) * shape.d_v + c];
    }
    out[row * shape.d_v + c] = o / sum;
    if c == 0u {
        lse[row] = max_score + log(sum);
    }
}
