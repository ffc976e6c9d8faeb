// Kernel 1, naive: one invocation per query row.
//
// Each invocation does what chapters 2 to 7 did for one query: the row's scores,
// written out to global memory, their maximum, the weights exp(s - max) and their
// sum, and the weighted sum of the values. Every invocation reads every key and every
// value from global memory on its own, and the scores of all rows, [heads, queries,
// keys], sit in global memory too.

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
// [heads, queries, keys]
@group(0) @binding(6) var<storage, read_write> scores: array<f32>;

// The lowest float: a maximum that any score replaces (WGSL has no infinity literal).
const LOWEST: f32 = -0x1.fffffep+127f; // -3.4028235e38, written exactly

// How many keys query i sees: all of them, or keys 0..=i under the causal mask.
fn visible_keys(i: u32) -> u32 {
    if shape.causal != 0u {
        return min(i + 1u, shape.keys);
    }
    return shape.keys;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
    let row = id.x; // head h, query i
    if row >= shape.heads * shape.queries {
        return;
    }
    let h = row / shape.queries;
    let i = row % shape.queries;
    let keys = visible_keys(i);
    let q_row = row * shape.d;
    let first_key = h * shape.keys;
    let s_row = row * shape.keys;

    // 1. The scores q·k_j / sqrt(d), and their maximum.
    var max_score = LOWEST;
    for (var j = 0u; j < keys; j++) {
        var s = 0.0;
        for (var c = 0u; c < shape.d; c++) {
            s += q[q_row + c] * k[(first_key + j) * shape.d + c];
        }
        s *= shape.scale;
        scores[s_row + j] = s;
        max_score = max(max_score, s);
    }

    // 2. The weights exp(s - max), not yet divided by their sum.
    var sum = 0.0;
    for (var j = 0u; j < keys; j++) {
        let w = exp(scores[s_row + j] - max_score);
        scores[s_row + j] = w;
        sum += w;
    }

    // 3. The output, one feature at a time: the weighted sum of the values.
    for (var c = 0u; c < shape.d_v; c++) {
        var o = 0.0;
        for (var j = 0u; j < keys; j++) {
            o += scores[s_row + j] * v[(first_key + j) * shape.d_v + c];
        }
        out[row * shape.d_v + c] = o / sum;
    }
    lse[row] = max_score + log(sum);
}
